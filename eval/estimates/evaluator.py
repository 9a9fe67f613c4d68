"""``evaluate``: score a run on a task and infer at the document level.

The per-query values come from the outcome stage, :func:`ragcov_data.eval.outcomes.outcomes`, as for
``compare``, ``leaderboard`` and ``misses``: the same sample restriction and correction, missing-query
accounting (``info["missing_queries"]``: the ids scored 0) and tie notices (``info["all_tied_share"]``).
A ragcov run recording other task parameters than the task's (``chunk_words``...) is refused.

Queries without any judgment are left out of every mean (as trec_eval), and documents outside a
known-subset corpus (JurisTCU's shipped 3,022 documents) are scored as non-relevant: both are said in
``info["notices"]`` and printed by :meth:`EvaluationResult.summary`.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.estimates.verify import finish_estimates  # + intervals cut to the values' range
from ragcov_data.ties import DEFAULT_TIE_POLICY

from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval.outcomes.args import ON_MISSING as ON_MISSING_ALL, check_outcome_args
from ragcov_data.eval.outcomes.table import OutcomeTable, _manifest
from ragcov_data.eval.estimates.design import design_effect
from ragcov_data.eval.estimates.interval import _population, _strata_codes, sufficient_stats
from ragcov_data.eval.estimates.results import EvaluationResult, per_cluster, unit_of

__all__ = ["evaluate", "load_task_frames", "read_run", "estimates_table", "default_cluster", "ALL_GROUP",
           "SINGLETON_ESTIMATOR"]

ON_MISSING = ON_MISSING_ALL[:2]


# ----------------------------------------------------------------------------------------- inputs
# The task + run -> per-query outcome step lives in :mod:`.outcomes`; these names stay importable here.
from ragcov_data.eval.outcomes.table import (ALL_GROUP, DEFAULT_CLUSTERS, _split_frame, check_run_documents, check_task_qrels,  # noqa: E402
                       default_cluster, judged_queries, load_task_frames, read_run)
from ragcov_data.eval.outcomes.stage import outcomes  # noqa: E402
from ragcov_data.eval.outcomes.table import check_run as _check_run  # noqa: E402
from ragcov_data.eval.outcomes.table import exclude_self_rows as _exclude_self  # noqa: E402
from ragcov_data.eval.outcomes.table import query_column as _query_column  # noqa: E402


def _methods_iv(methods: Any, stratified: bool) -> tuple[str, ...]:
    if methods is None:  # every method; those needing the population's sizes join where they are known
        return _kernels.STRATIFIED_METHODS if stratified else tuple(m for m in _kernels.METHODS
                                                                  if m not in _kernels.SIZE_METHODS)
    if isinstance(methods, str):
        methods = (methods,)
    methods = tuple(methods)
    bad = [m for m in methods if m not in _kernels.METHODS]
    if bad:
        raise RagcovError(f"unknown method(s) {bad} in `methods`; valid: {tuple(_kernels.METHODS)}.")
    if not methods:
        raise RagcovError("`methods` is empty; give at least one method or None for all.")
    if stratified:
        bad = [m for m in methods if m not in _kernels.STRATIFIED_METHODS]
        if bad:
            raise RagcovError(f"methods {bad} do not apply to a stratified design; valid: {_kernels.STRATIFIED_METHODS}.")
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
    keep = [m for m in methods if _kernels.applicable("macro", m)]
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
    estimators: Sequence[str] = _kernels.ESTIMATORS,
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
    if not stratified and K >= 2 and any(_kernels.METHODS[m]["kind"] == "bootstrap" and m != "chunk_bootstrap"
                                         for m in methods):
        counts = _kernels._counts_chunk(1, K, n_resamples, np.random.default_rng(seed))
    rows = []
    for est in estimators:
        core_est = "macro" if est == SINGLETON_ESTIMATOR else est
        for m in methods:
            if not _kernels.applicable(core_est, m, stratified, sizes=kw["population"].get("sizes") is not None):
                continue
            extra: dict[str, Any] = {}
            if m == "chunk_bootstrap":
                extra["rng"] = None if seed is None else np.random.default_rng([int(seed), 1])
                if not np.allclose(q, s):
                    lv, cnt = np.unique(values, return_counts=True)
                    extra["value_counts"] = (lv, cnt[None, :])
            elif _kernels.METHODS[m]["kind"] == "bootstrap" and counts is not None:
                extra["boot_counts"] = counts
            elif _kernels.METHODS[m]["kind"] == "wild":  # wild cluster bootstrap: its own seeded weights
                extra["rng"] = None if seed is None else np.random.default_rng([int(seed), 2])
            out = _kernels.interval_batch(n, s, q, estimator=core_est, method=m, level=level,
                                       n_resamples=n_resamples, **kw, **extra)
            r = {k: float(v[0]) for k, v in out.items() if k != "flags"}
            rows.append({"estimator": est, "method": m, **{k: r[k] for k in ("estimate", "se", "df", "low", "high")},
                         "width": r["high"] - r["low"], "flags": ",".join(_kernels.decode_flags(out["flags"][0])),
                         "naive": bool(_kernels.METHODS[m]["naive"]), "n_clusters": K, "n_obs": int(n.sum())})
    return pd.DataFrame(rows)


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


def _task_record(task: Any) -> dict[str, Any] | None:
    """The task parameters an evaluation records (``config``: chunk size, chunking; the chunking's fallback
    counts), so results built on it (the chunking comparison) can say what was compared."""
    man = _manifest(task)
    if not man:
        return None
    config = dict(man.get("config") or {})
    counts = man.get("counts") or {}
    out = {k: config.get(k) for k in ("name", "chunk_words", "query_words", "chunking") if config.get(k) is not None}
    for k in ("documents_read", "documents_eligible", "documents_structured", "documents_fallback"):
        if counts.get(k) is not None:
            out[k] = counts[k]
    return out or None


def with_size_methods(methods_t: tuple[str, ...], requested: Any, population_sizes: Any, *, fpc: bool = True,
                      given: Any = None, sampled: bool = False) -> tuple[str, ...]:
    """``methods_t`` plus :data:`._core.SIZE_METHODS` when every population document's size is known and
    no method list was given; a size method asked for without the sizes is an error that says why, naming
    the option that took the sizes away (``fpc=False`` / ``--no-fpc``, ``population_sizes`` /
    ``--population-size``) when one did."""
    known = getattr(population_sizes, "sizes", None) is not None
    if requested is None:
        return methods_t + (_kernels.SIZE_METHODS if known else ())
    asked = [m for m in methods_t if m in _kernels.SIZE_METHODS]
    if asked and not known:
        m = asked[0]
        if sampled and not fpc:
            raise RagcovError(f"method {m!r} is the document sample's finite-population correction with every "
                              "document's size, which --no-fpc (fpc=False) turns off: drop --no-fpc, or drop "
                              f"{m!r} (--methods cr2 or bootstrap_t) to score the sample without the correction.")
        if given is not None:
            raise RagcovError(f"method {m!r} needs every population document's size; --population-size "
                              "(population_sizes=N) gives only their number. " + (
                                  "This task's sample records every size: drop --population-size." if sampled else
                                  "Use 'bootstrap_t' or 'cr2' with --population-size, or evaluate a task drawn "
                                  "with --sample-docs K (it records every size)."))
        raise RagcovError(f"method {m!r} needs every population document's size, which a document-sampled "
                          "task records (ragcov build/run --sample-docs K, evaluated with its finite-population "
                          "correction); on this task use 'bootstrap_t' or 'cr2'.")
    return methods_t


def _grouped_estimates(values, clusters, groups, methods, strata, **kw) -> pd.DataFrame:
    parts = []
    overall = estimates_table(values, clusters, methods, strata=strata, **kw)
    if groups is None:
        return overall
    overall.insert(0, "group", ALL_GROUP)
    parts.append(overall)
    # a group's documents are not the population whose sizes are known: no size method within groups
    pop = kw.get("population_sizes")
    if getattr(pop, "sizes", None) is not None:
        kw = {**kw, "population_sizes": float(pop)}
    methods = tuple(m for m in methods if m not in _kernels.SIZE_METHODS)
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
        Anything :func:`ragcov_data.runs.load_run` reads: a TREC, CSV/TSV, parquet or JSON run file (compressed
        too), a DataFrame (``query-id, corpus-id`` and ``score`` and/or ``rank``) or a ``{qid: {docid: score}}``.
    task : DatasetDict or dict of DataFrames
        Splits ``queries`` and ``qrels`` (``corpus`` optional: chunk order, and every run document checked).
    metric : str, default: "hit@1"
        ``hit@k``, ``ndcg@k``, ``p@k``, ``r@k``, ``mrr@k`` (``ragcov_data.eval.outcomes.metrics``).
    tie_policy : {"trec_eval", "run", "pessimistic", "optimistic", "expected"}, default: "trec_eval"
        Order of equal scores (:mod:`ragcov_data.ties`); the default (document id descending) gives trec_eval's values.
    relevance_threshold : int, default: 1
        Minimum qrels grade counted as relevant.
    cluster : str, optional
        Queries column of the sampled unit (default :func:`default_cluster`: ``source_key``, else ``doc_id``,
        else the query id). Where every cluster holds one query the estimator is ``mean`` (micro = macro).
    by : str, optional
        Queries column (e.g. ``"group"``): estimates per group plus the overall (``group == "__all__"``).
    methods : sequence of str, optional
        Interval methods (default: all; each is computed for the estimators it applies to).
    level, seed, n_resamples : confidence level, seed of the bootstraps (reproducible), their B.
    on_missing : {"error", "zero"}, default: "error"
        A task query without run rows is an error, or scores 0 (``info["n_missing_queries"]``, ``missing_queries``).
    strata : str, optional
        Queries column of strata for a two-stage / stratified design (method ``t`` only, mean over strata).
    population_sizes : float or mapping, optional
        Finite population sizes (see :func:`ragcov_data.eval.interval`). Default: those of the document sample
        the task or the run records (:mod:`ragcov_data.tasks.sampling`), whose queries alone are scored.
    fpc : bool, default: True
        Apply that sample's finite-population correction (``False``: infer as from an infinite population).
    exclude_self : bool, default: True
        Drop run rows retrieving the query's own chunk (self-retrieval; ``info["n_self_rows_removed"]``).

    Returns
    -------
    EvaluationResult
        ``per_query``, ``per_document``, ``estimates``, ``diagnostics`` and the recorded settings.

    Raises
    ------
    RagcovError
        Empty run, missing columns, unknown method/metric/column, queries missing from the run, run documents
        outside a complete corpus, qrels grades that are not integers (see the module docstring).
    """
    tie_policy = check_outcome_args(on_missing, tie_policy, single=True)
    _kernels.check_level(level)
    _kernels.check_resamples(n_resamples, level, methods, stratified=strata is not None)  # minimum for level
    methods_t = _methods_iv(methods, strata is not None)
    table = outcomes(run, task, metric, tie_policy=tie_policy, relevance_threshold=relevance_threshold,
                     on_missing=on_missing, cluster=cluster, by=by, strata=strata, exclude_self=exclude_self,
                     fpc=fpc, population_sizes=population_sizes)
    methods_t = with_size_methods(methods_t, methods, table.population_sizes, fpc=fpc, given=population_sizes,
                                  sampled=table.sample is not None)
    return _evaluation(table, task, methods_t, level=level, seed=seed, n_resamples=int(n_resamples))


def _evaluation(table: OutcomeTable, task: Any, methods_t: tuple[str, ...], *, level: float, seed: int | None,
                n_resamples: int) -> EvaluationResult:
    """``evaluate``'s result from the run's outcome table: estimates of every method (per group with ``by``),
    each interval's measured coverage at this design, the per-cluster table, diagnostics and ``info``."""
    values, clusters, groups = table.values, table.clusters, table.groups
    kw = dict(level=level, seed=seed, n_resamples=n_resamples, population_sizes=table.population_sizes)
    estimates = _grouped_estimates(values, clusters, groups, methods_t, table.strata_values, **kw)
    pq = table.per_query.drop(columns=[c for c in ("stratum",) if c in table.per_query.columns])
    pdoc = per_cluster(pq)
    diagnostics = _diagnostics(values, clusters, table.info["order"], pdoc, table.cluster)
    info = {**table.result_info(), "n_resamples": n_resamples, "seed": seed, "by": table.by, "strata": table.strata,
            "task": _task_record(task)}
    # each interval's measured coverage at this design, kept in bounds (ragcov_data.eval.estimates.verify)
    estimates = finish_estimates(estimates, values, clusters, groups, table.population_sizes, table.strata_values,
                                 level, seed, unit=unit_of(table.cluster))
    return EvaluationResult(per_query=pq, per_document=pdoc, estimates=estimates, diagnostics=diagnostics,
                            metric=table.metric, tie_policy=table.tie_policy,
                            relevance_threshold=table.relevance_threshold, level=level, cluster=table.cluster,
                            info=info)
