"""``evaluate``: score a run on a task and infer at the document level."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import QrelsRunMismatchError, RagcovError
from ragcov_data.ties import DEFAULT_TIE_POLICY, check_tie_policy, tied

from . import _core
from .design import design_effect
from .interval import _population, _strata_codes, sufficient_stats
from .results import EvaluationResult

__all__ = ["evaluate", "load_task_frames", "read_run", "estimates_table", "default_cluster", "ALL_GROUP",
           "SINGLETON_ESTIMATOR"]

#: Label of the overall row group in ``estimates`` when ``by=`` is used.
ALL_GROUP = "__all__"
ON_MISSING = ("error", "zero")


# ----------------------------------------------------------------------------------------- inputs
def _split_frame(task: Any, split: str, columns: Sequence[str] | None = None) -> pd.DataFrame | None:
    try:
        part = task[split]
    except (KeyError, TypeError):
        return None
    if isinstance(part, pd.DataFrame):
        return part if columns is None else part[[c for c in columns if c in part.columns]]
    names = getattr(part, "column_names", None)
    if names is not None:  # datasets.Dataset: convert only the columns needed
        keep = [c for c in (columns or names) if c in names]
        return part.select_columns(keep).to_pandas()
    return pd.DataFrame(part)


def _top_tie_share(run: pd.DataFrame, n_queries: int) -> float:
    """Share of the task's queries whose top score is tied (see :func:`ragcov_data.ties.tied`)."""
    if run.empty or "score" not in run.columns or n_queries == 0:
        return 0.0
    top = run.groupby("query-id", sort=False)["score"].transform("max").to_numpy(dtype=float)
    in_top = tied(run["score"].to_numpy(dtype=float), top)
    sizes = pd.Series(in_top, index=run["query-id"].to_numpy()).groupby(level=0, sort=False).sum()
    return float((sizes > 1).sum() / n_queries)


def load_task_frames(task: Any, query_columns: Iterable[str] = ()) -> dict[str, pd.DataFrame | None]:
    """``queries``, ``qrels`` (and corpus ``_id, chunk_index`` when present) as DataFrames."""
    if not isinstance(task, Mapping) and not hasattr(task, "keys"):
        raise RagcovError(f"`task` must be a DatasetDict or a dict of DataFrames with 'queries' and 'qrels'; "
                          f"got {type(task).__name__}.")
    qcols = list(dict.fromkeys(["_id", "doc_id", "chunk_id", "chunk_index", *query_columns]))
    queries = _split_frame(task, "queries", qcols)
    qrels = _split_frame(task, "qrels")
    for name, frame in (("queries", queries), ("qrels", qrels)):
        if frame is None:
            raise RagcovError(f"`task` has no '{name}' split; expected splits 'corpus', 'queries', 'qrels'.")
    if "_id" not in queries.columns:
        raise RagcovError("`task['queries']` needs an '_id' column (the query id).")
    corpus = _split_frame(task, "corpus", ["_id", "chunk_index"])
    return {"queries": queries, "qrels": qrels, "corpus": corpus}


def read_run(run: Any) -> pd.DataFrame:
    """A run in normal form, through the one run reader (:func:`ragcov_data.runs.load_run`): a path
    (TREC, CSV/TSV, parquet, JSON; compressed or not), a DataFrame or a ``{qid: {docid: score}}`` dict."""
    from ragcov_data.runs import load_run

    return load_run(run)


def _known_subset_note(task: Any) -> str | None:
    """The manifest's note when the shipped corpus is a known subset of the real one (JurisTCU), else None."""
    from ragcov_data.task import manifest_of

    try:
        man = manifest_of(task) if hasattr(task, "get") else None
    except Exception:  # a plain dict of DataFrames has no manifest
        man = None
    return (man or {}).get("corpus_note")


def check_run_documents(run: pd.DataFrame, corpus: pd.DataFrame | None, subset_note: str | None,
                        notices: list[str], name: str = "run") -> int:
    """Run rows naming documents outside the task's corpus: an error where the corpus is complete (the run
    was made on another task, e.g. another chunk size), a notice where the corpus is a known subset (those
    documents are unjudged: scored as non-relevant). Returns the number of such rows."""
    if corpus is None or "_id" not in corpus.columns:
        return 0
    ids = run["corpus-id"]
    unknown = ~ids.isin(pd.Index(corpus["_id"].astype(str)))
    n = int(unknown.sum())
    if not n:
        return 0
    first = list(pd.unique(ids[unknown.to_numpy()])[:5])
    where = run.attrs.get("source") or f"`{name}`"
    if subset_note is None:
        raise QrelsRunMismatchError(
            f"{where}: {n:,} of {len(run):,} rows name documents that are not in the task's corpus "
            f"({len(corpus):,} documents; first: {first}). The run was made on another task (another chunk size, "
            "acervo or dataset): evaluate it on the task it was made on, or rebuild the run."
        )
    notices.append(f"{n:,} run rows name documents outside the shipped corpus (first: {first}); {subset_note} "
                   "They are unjudged and scored as non-relevant.")
    return n


def judged_queries(queries: pd.DataFrame, qrels: pd.DataFrame, notices: list[str]) -> np.ndarray:
    """Mask of the task's queries that have at least one judgment. The others are left out of every mean,
    as trec_eval leaves them out, and said in a notice."""
    qids = queries["_id"].astype(str)
    judged = pd.unique(qrels["query-id"].astype(str).to_numpy(dtype=object))  # few distinct ids: isin is cheap
    has = qids.isin(judged).to_numpy()
    if not has.all():
        miss = list(qids[~has][:5])
        notices.append(f"{int((~has).sum())} of {len(qids)} queries have no judgment at all (first: {miss}); they "
                       "are left out of the mean, as trec_eval does.")
    return has


def check_task_qrels(qrels: pd.DataFrame, corpus: pd.DataFrame | None, queries: pd.DataFrame,
                     notices: list[str], source: str = "task qrels") -> None:
    """Grades must be integers; judgments naming documents or queries the task lacks become a notice."""
    from ragcov_data.qrels import check_qrels

    rep = check_qrels(qrels, corpus_ids=None if corpus is None else corpus["_id"], query_ids=queries["_id"],
                      source=source, on_unknown="report")
    notices.extend(rep.messages)


def _check_run(run: pd.DataFrame, name: str = "run") -> None:
    missing = [c for c in ("query-id", "corpus-id") if c not in run.columns]
    if missing:
        raise RagcovError(f"`{name}` lacks columns {missing}; expected 'query-id, corpus-id, score [, rank]'.")
    if len(run) == 0:
        raise RagcovError(f"`{name}` is empty (no rows); nothing to evaluate.")


def _query_column(queries: pd.DataFrame, col: str, param: str) -> np.ndarray:
    if col not in queries.columns:
        raise RagcovError(f"`{param}={col!r}` is not a column of the task's queries; "
                          f"available: {sorted(map(str, queries.columns))}.")
    vals = queries[col]
    if vals.isna().any():
        raise RagcovError(f"`{param}={col!r}` is missing for {int(vals.isna().sum())} queries "
                          f"(first: {queries['_id'][vals.isna()].iloc[0]!r}).")
    return vals.astype(str).to_numpy()


def _order(queries: pd.DataFrame, corpus: pd.DataFrame | None) -> np.ndarray | None:
    """Position of each query inside its document (chunk index), for the lag-1 autocorrelation."""
    if "chunk_index" in queries.columns:
        return queries["chunk_index"].to_numpy()
    if corpus is not None and "chunk_id" in queries.columns and "chunk_index" in corpus.columns:
        m = corpus.set_index(corpus["_id"].astype(str))["chunk_index"]
        return queries["chunk_id"].astype(str).map(m).to_numpy()
    return None


def _missing_queries(run_ids: set, task_ids: np.ndarray, on_missing: str) -> int:
    if on_missing not in ON_MISSING:
        raise RagcovError(f"`on_missing` must be one of {ON_MISSING}; got {on_missing!r}.")
    miss = [q for q in task_ids if q not in run_ids]
    if miss and on_missing == "error":
        raise QrelsRunMismatchError(
            f"`run` has no rows for {len(miss)} of the task's {len(task_ids)} queries (first 3: {miss[:3]}). "
            "Pass `on_missing='zero'` to score them 0 (stated in the result), or run every query."
        )
    return len(miss)


def _exclude_self(run: pd.DataFrame, queries: pd.DataFrame, exclude_self: bool) -> tuple[pd.DataFrame, int]:
    """Drop rows where a query retrieves its own chunk (self-retrieval); return the run and the count."""
    if not exclude_self or "chunk_id" not in queries.columns:
        return run, 0
    own = dict(zip(queries["_id"].astype(str), queries["chunk_id"].astype(str)))
    mask = run["query-id"].astype(str).map(own).to_numpy() == run["corpus-id"].astype(str).to_numpy()
    if not mask.any():
        return run, 0
    kept = run.loc[~mask].copy()
    if "rank" in kept.columns:  # re-rank so rank 1 is the best remaining candidate
        kept["rank"] = kept.groupby("query-id", sort=False)["rank"].rank(method="first").astype(int)
    kept.attrs = dict(run.attrs)
    return kept, int(mask.sum())


def _methods_iv(methods: Any, stratified: bool) -> tuple[str, ...]:
    if methods is None:
        return _core.STRATIFIED_METHODS if stratified else tuple(_core.METHODS)
    if isinstance(methods, str):
        methods = (methods,)
    methods = tuple(methods)
    bad = [m for m in methods if m not in _core.METHODS]
    if bad:
        raise RagcovError(f"unknown method(s) {bad} in `methods`; valid: {tuple(_core.METHODS)}.")
    if not methods:
        raise RagcovError("`methods` is empty; give at least one method or None for all.")
    if stratified:
        bad = [m for m in methods if m not in _core.STRATIFIED_METHODS]
        if bad:
            raise RagcovError(f"methods {bad} do not apply to a stratified design; valid: {_core.STRATIFIED_METHODS}.")
    return methods


# ----------------------------------------------------------------------------------------- estimates
#: Estimator label when every cluster holds one query (micro = macro = the mean over queries).
SINGLETON_ESTIMATOR = "mean"


def singleton_methods(methods: Sequence[str], n_clusters: int) -> tuple[str, ...]:
    """The requested methods that mean something when every cluster holds one query.

    Naive methods (queries as independent: here they *are* the design, with a biased SE) and
    ``deff_wald`` (its ICC needs clusters of two or more) are left out; ``cr2`` and ``cr1`` equal ``t``
    exactly here, so only the first of ``t``, ``cr2``, ``cr1`` requested is kept. Nothing left is an error.
    """
    keep = [m for m in methods if _core.applicable("macro", m)]
    same_as_t = [m for m in keep if m in ("t", "cr2", "cr1")]
    first = min(same_as_t, key=("t", "cr2", "cr1").index) if same_as_t else None
    keep = [m for m in keep if m not in same_as_t or m == first]
    if not keep:
        raise RagcovError(
            f"methods {list(methods)} do not apply when every cluster holds one query ({n_clusters} clusters): "
            "the estimate is the mean over queries; use 't', 'cluster_bootstrap' or 'bootstrap_t'.")
    return tuple(keep)


def estimates_table(
    values: np.ndarray,
    clusters: np.ndarray,
    methods: Sequence[str],
    *,
    level: float,
    seed: int | None,
    n_resamples: int,
    strata: np.ndarray | None = None,
    population_sizes: Any = None,
    estimators: Sequence[str] = _core.ESTIMATORS,
) -> pd.DataFrame:
    """Rows ``estimator, method, estimate, se, df, low, high, width, flags, naive`` for one sample.

    Every applicable (estimator, method) pair is computed; document bootstraps of both estimators
    share one set of resampling counts drawn from ``seed`` (the chunk bootstrap uses ``seed + 1``).

    When every cluster holds exactly one query (a *singleton design*: JurisTCU per group, or
    ``cluster="_id"``) micro and macro are the same number, so one estimator ``mean`` is computed, by
    the methods that apply to it (see :func:`singleton_methods`).
    """
    labels, n, s, q = sufficient_stats(values, clusters)
    K = len(labels)
    singleton = K > 0 and bool((n == 1).all())
    if singleton:  # one estimator, computed as the macro mean (equal to micro here)
        methods = singleton_methods(methods, K)
        estimators = (SINGLETON_ESTIMATOR,)
    stratified = strata is not None
    kw: dict[str, Any] = {}
    if stratified:
        codes, hlabels = _strata_codes(strata, clusters, labels)
        kw["strata"] = codes[None, :]
        kw["population"] = _population(population_sizes, True, hlabels)
    else:
        kw["population"] = _population(population_sizes, False, None)
    counts = None
    if not stratified and K >= 2 and any(_core.METHODS[m]["kind"] == "bootstrap" and m != "chunk_bootstrap"
                                         for m in methods):
        counts = _core._counts_chunk(1, K, n_resamples, np.random.default_rng(seed))
    rows = []
    for est in estimators:
        core_est = "macro" if est == SINGLETON_ESTIMATOR else est
        for m in methods:
            if not _core.applicable(core_est, m, stratified):
                continue
            extra: dict[str, Any] = {}
            if m == "chunk_bootstrap":
                extra["rng"] = None if seed is None else np.random.default_rng([int(seed), 1])
                if not np.allclose(q, s):
                    lv, cnt = np.unique(values, return_counts=True)
                    extra["value_counts"] = (lv, cnt[None, :])
            elif _core.METHODS[m]["kind"] == "bootstrap" and counts is not None:
                extra["boot_counts"] = counts
            elif _core.METHODS[m]["kind"] == "wild":  # wild cluster bootstrap: its own seeded weights
                extra["rng"] = None if seed is None else np.random.default_rng([int(seed), 2])
            out = _core.interval_batch(n, s, q, estimator=core_est, method=m, level=level,
                                       n_resamples=n_resamples, **kw, **extra)
            r = {k: float(v[0]) for k, v in out.items() if k != "flags"}
            rows.append({"estimator": est, "method": m, **{k: r[k] for k in ("estimate", "se", "df", "low", "high")},
                         "width": r["high"] - r["low"], "flags": ",".join(_core.decode_flags(out["flags"][0])),
                         "naive": bool(_core.METHODS[m]["naive"]), "n_clusters": K, "n_obs": int(n.sum())})
    return pd.DataFrame(rows)


#: Queries columns tried, in order, as the sampled unit when ``cluster`` is not given (then the query id).
DEFAULT_CLUSTERS = ("source_key", "doc_id")


def default_cluster(columns: Iterable[str]) -> str:
    """The default sampled unit: ``source_key`` (JurisTCU: queries written from one source summary move
    together), else ``doc_id`` (self-retrieval: chunks of one document move together), else ``_id``."""
    cols = set(columns)
    return next((c for c in DEFAULT_CLUSTERS if c in cols), "_id")


def _diagnostics(values: np.ndarray, clusters: np.ndarray, order: np.ndarray | None, pdoc: pd.DataFrame,
                 cluster_name: str) -> dict[str, Any]:
    """Design diagnostics that are defined for this design, named by its unit.

    Every cluster one query: only the mean and the per-query quantiles (ICC, DEFF, N_eff, lag-1 and
    the share of clusters never hit have no meaning). Lag-1 needs a within-cluster order (chunk index).
    ``share_never_hit`` keeps its name for documents; for other units it is ``share_all_zero``.
    """
    de = design_effect(values, clusters, order=order).to_dict()
    if bool((pdoc["n"] == 1).all()):
        return {"mean": float(values.mean()), "quantiles": de["quantiles"]}
    out = {k: v for k, v in de.items() if k not in ("n_obs", "n_clusters")}
    if order is None:
        out.pop("lag1_autocorr")
    if cluster_name != "doc_id":
        out = {("share_all_zero" if k == "share_never_hit" else k): v for k, v in out.items()}
    out["micro"] = float(values.mean())
    out["macro"] = float(pdoc["rate"].mean())
    return out


def _grouped_estimates(values, clusters, groups, methods, strata, **kw) -> pd.DataFrame:
    parts = []
    overall = estimates_table(values, clusters, methods, strata=strata, **kw)
    if groups is None:
        return overall
    overall.insert(0, "group", ALL_GROUP)
    parts.append(overall)
    for g in pd.unique(groups):
        m = groups == g
        t = estimates_table(values[m], clusters[m], methods, strata=None if strata is None else strata[m], **kw)
        t.insert(0, "group", str(g))
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


# ----------------------------------------------------------------------------------------- evaluate
def evaluate(
    run: Any,
    task: Any,
    metric: str = "hit@1",
    *,
    tie_policy: str = DEFAULT_TIE_POLICY,
    relevance_threshold: int = 1,
    cluster: str | None = None,
    by: str | None = None,
    methods: Sequence[str] | str | None = None,
    level: float = 0.95,
    seed: int | None = 0,
    n_resamples: int = 5000,
    on_missing: str = "error",
    strata: str | None = None,
    population_sizes: Any = None,
    exclude_self: bool = True,
    fpc: bool = True,
) -> EvaluationResult:
    """Score ``run`` on ``task`` and report estimates and intervals that respect the sampled unit.

    Parameters
    ----------
    run : path, DataFrame or dict
        Anything :func:`ragcov_data.runs.load_run` reads: a TREC, CSV/TSV, parquet or JSON run file
        (``.gz``/``.bz2``/``.xz`` too), a DataFrame (``query-id, corpus-id`` and ``score`` and/or ``rank``)
        or a ``{qid: {docid: score}}`` dict.
    task : DatasetDict or dict of DataFrames
        Splits ``queries`` and ``qrels`` (``corpus`` optional: chunk order, and the check that every run
        document belongs to the task).
    metric : str, default: "hit@1"
        ``hit@k``, ``ndcg@k``, ``p@k``, ``r@k``, ``mrr@k`` (``ragcov_data.eval.metrics``).
    tie_policy : {"trec_eval", "run", "pessimistic", "optimistic", "expected"}, default: "trec_eval"
        Order of documents with equal scores, for every metric (see :mod:`ragcov_data.ties`): the
        default is trec_eval's (document id descending), so values equal trec_eval's on the run file.
    relevance_threshold : int, default: 1
        Minimum qrels grade counted as relevant.
    cluster : str, optional
        Queries column naming the sampled unit. Default (:func:`default_cluster`): ``source_key``
        when present (JurisTCU: G2 query i and G3 query i+50 share a source summary), else ``doc_id``
        (self-retrieval: chunks of one document move together), else the query id itself. Where every
        cluster holds one query (e.g. JurisTCU per group) the estimator is ``mean`` (micro = macro).
    by : str, optional
        Queries column (e.g. ``"group"``): estimates per group plus the overall (``group == "__all__"``).
    methods : sequence of str, optional
        Interval methods (default: all; each is computed for the estimators it applies to).
    level : float, default: 0.95
    seed : int, default: 0
        Seed of the bootstraps (reproducible).
    n_resamples : int, default: 5000
    on_missing : {"error", "zero"}, default: "error"
        A task query without run rows is an error, or (``"zero"``) scores 0; the count is recorded in
        ``info["n_missing_queries"]``.
    strata : str, optional
        Queries column of strata (e.g. ``"doc_type"``) for a two-stage / stratified design (method
        ``t`` only, target = mean over strata).
    population_sizes : float or mapping, optional
        Finite population sizes (see :func:`ragcov_data.eval.interval`). Default: from the document
        sample the task (``manifest["sample"]``) or the run (``attrs["sample"]``, a TREC tag) records,
        when there is one (:mod:`ragcov_data.sampling`): only the sampled documents' queries are scored,
        and ``info["population_clusters"]`` is the population's number of documents.
    fpc : bool, default: True
        Apply that sample's finite-population correction (``False``: score the sample, infer as from
        an infinite population).
    exclude_self : bool, default: True
        When queries have a ``chunk_id`` (self-retrieval), drop run rows retrieving the query's own
        chunk before scoring (a no-op for ragcov baselines, which already exclude it; needed for runs
        from other toolkits). The count is recorded in ``info["n_self_rows_removed"]``.

    Returns
    -------
    EvaluationResult
        ``per_query``, ``per_document``, ``estimates``, ``diagnostics`` and the recorded settings.

    Raises
    ------
    RagcovError
        Empty run, missing columns, unknown method/metric/column, queries missing from the run, run
        documents outside a complete corpus, qrels grades that are not integers.

    Notes
    -----
    Queries without any judgment are left out of every mean (as trec_eval), and documents outside a
    known-subset corpus (JurisTCU's shipped 3,022 documents) are scored as non-relevant: both are said
    in ``info["notices"]`` and printed by :meth:`EvaluationResult.summary`.
    """
    tie_policy = check_tie_policy(tie_policy)
    if not 0 < level < 1:
        raise RagcovError(f"`level` must be in (0, 1); got {level!r}.")
    _core.check_resamples(n_resamples, level, methods, stratified=strata is not None)  # minimum for level
    methods_t = _methods_iv(methods, strata is not None)
    extra_cols = [c for c in (cluster, by, strata) if c] + ([] if cluster else list(DEFAULT_CLUSTERS))
    frames = load_task_frames(task, extra_cols)
    queries, qrels = frames["queries"], frames["qrels"]
    run_df = read_run(run)
    _check_run(run_df)
    from ragcov_data.sampling import eval_info, population_for_eval, restrict_frames

    frames, sample = restrict_frames(task, run_df.attrs, frames)  # a document-sampled task: its queries only
    queries, qrels = frames["queries"], frames["qrels"]
    notices: list[str] = []
    check_task_qrels(qrels, frames["corpus"], queries, notices)
    n_unknown_docs = check_run_documents(run_df, frames["corpus"], _known_subset_note(task), notices)
    queries = queries.loc[judged_queries(queries, qrels, notices)].reset_index(drop=True)
    if queries.empty:
        raise RagcovError("no query of the task has a judgment (qrels name none of its queries); check the task.")

    qids = queries["_id"].astype(str).to_numpy()
    cluster_name = cluster or default_cluster(queries.columns)
    clusters = _query_column(queries, cluster_name, "cluster")
    groups = _query_column(queries, by, "by") if by else None
    strata_arr = _query_column(queries, strata, "strata") if strata else None
    if sample is not None and fpc and population_sizes is None:
        population_sizes = population_for_eval(sample, cluster_name, strata, notices)
    applied = population_sizes is not None

    run_df, n_self = _exclude_self(run_df, queries, exclude_self)
    n_missing = _missing_queries(set(run_df["query-id"].astype(str).unique()), qids, on_missing)
    from ragcov_data.eval.metrics import per_query

    scores = per_query(run_df, qrels, metric, relevance_threshold=relevance_threshold,
                       tie_policy=tie_policy, query_ids=qids)
    values = scores.to_numpy(dtype=float)

    kw = dict(level=level, seed=seed, n_resamples=int(n_resamples), population_sizes=population_sizes)
    estimates = _grouped_estimates(values, clusters, groups, methods_t, strata_arr, **kw)

    pq = pd.DataFrame({"query-id": qids, "cluster": clusters, "value": values})
    if groups is not None:
        pq["group"] = groups
    pdoc = (pq.groupby("cluster", sort=False)["value"].agg(n="size", sum="sum").reset_index())
    pdoc["n"] = pdoc["n"].astype(int)
    pdoc["rate"] = pdoc["sum"] / pdoc["n"]
    diagnostics = _diagnostics(values, clusters, _order(queries, frames["corpus"]), pdoc, cluster_name)
    info = {
        "n_missing_queries": n_missing, "on_missing": on_missing, "n_resamples": int(n_resamples), "seed": seed,
        "run_attrs": {k: (v if isinstance(v, (str, int, float, bool, type(None))) else str(v))
                      for k, v in getattr(run_df, "attrs", {}).items()},
        "n_no_relevant": scores.attrs.get("n_no_relevant"), "n_run_only": scores.attrs.get("n_run_only"),
        "by": by, "strata": strata, "n_self_rows_removed": n_self, "n_unknown_document_rows": n_unknown_docs,
        "n_unjudged_queries": int(len(frames["queries"]) - len(queries)), "notices": notices,
        # how often the tie policy mattered: queries whose best score is shared by 2+ candidates
        "top_tie_share": _top_tie_share(run_df, len(qids)),
        **eval_info(sample, population_sizes, applied),
    }
    # -- each interval's measured coverage at this design, kept in bounds (ragcov_data.eval.verify) --
    from .verify import finish_estimates  # + intervals cut to the values' range, zero-variance text

    estimates = finish_estimates(estimates, values, clusters, groups, population_sizes, strata_arr, level, seed)
    return EvaluationResult(per_query=pq, per_document=pdoc, estimates=estimates, diagnostics=diagnostics,
                            metric=scores.attrs.get("metric", metric), tie_policy=tie_policy,
                            relevance_threshold=relevance_threshold, level=level, cluster=cluster_name, info=info)
