"""The JurisTCU section of a benchmark report: graded metrics by query group, with intervals and paired
comparisons of retrievers, through the same :func:`~ragcov_data.eval.evaluate` / :func:`~ragcov_data.eval.leaderboard`.

Inference design
----------------
JurisTCU's 150 queries are the sampled units (there is no document clustering of queries), so:

- per group (``G1``, ``G2``, ``G3``; 50 queries each) the query is the unit: a t interval on
  ``n - 1`` df (method ``t``) and a percentile bootstrap of queries (``bootstrap``);
- ``overall`` (all 150 queries, mean over queries) clusters by ``source_key``: G2 query ``i`` and G3
  query ``i + 50`` were written from the same source summary, so they are not independent. The
  intervals are the cluster-robust CR2 interval (``cr2``) and a bootstrap of source keys
  (``bootstrap``); 100 clusters (50 G1 singletons + 50 G2/G3 pairs);
- paired comparisons (``A - B`` per query) use the same units per group and overall, and are
  family-wise: they come from :func:`~ragcov_data.eval.leaderboard` (``by="group"``), so each group's
  pairs form one family with a simultaneous interval at ``level`` (the leaderboard's hull) and the
  adjusted p-value of that interval's own test (``p_adj``: below ``1 - level`` exactly when the interval
  excludes 0). With two retrievers the family is one pair.

These are exactly what :func:`~ragcov_data.eval.evaluate` does by default on a JurisTCU task with
``by="group"`` (its default cluster is ``source_key``; within a group every source holds one query, so
the group tables have the single estimator ``mean``), and so what ``ragcov eval --dataset juristcu``
prints: the API, the CLI and the report agree.

Every table records the relevance threshold (binary metrics count grade ``>= threshold`` as relevant;
nDCG uses the 0-3 grades with linear gain, as trec_eval) and carries :data:`SUBSET_NOTE` when the
corpus is the 3,022-document subset.
"""
from __future__ import annotations

from itertools import combinations
from typing import Any, Mapping, Sequence

import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval import evaluate, leaderboard
from ragcov_data.eval.estimates import marks
from ragcov_data.eval.estimates.evaluator import ALL_GROUP
from ragcov_data.eval.outcomes.metrics import parse_metric
from ragcov_data.loaders.juristcu import FULL_CORPUS_DOCS, SUBSET_NOTE
from ragcov_data.tasks.record import manifest_of

__all__ = ["juristcu_section", "SUBSET_NOTE", "GROUP_ORDER", "DEFAULT_METRICS"]

DEFAULT_METRICS = ("ndcg@10", "p@10", "r@10", "mrr@10")
GROUP_ORDER = ("G1", "G2", "G3", "overall")
OVERALL = "overall"

#: Rows of the section: per slot, candidate (estimator, method, label) rows of the evaluator, first found
#: wins. Per group every cluster is one query (estimator ``mean``); overall clusters by source (micro).
#: The fallbacks serve a task whose sources repeat within a group, or never pair across groups.
_GROUP_METHODS = ((("mean", "t", "t"), ("macro", "t", "t")),
                  (("mean", "cluster_bootstrap", "bootstrap"), ("micro", "cluster_bootstrap", "bootstrap")))
_OVERALL_METHODS = ((("micro", "cr2", "cr2"), ("mean", "t", "t")),
                    (("micro", "cluster_bootstrap", "bootstrap"), ("mean", "cluster_bootstrap", "bootstrap")))
_METHODS = ("t", "cr2", "cluster_bootstrap")
_COLS = ["estimate", "se", "df", "low", "high"]
_CHECK = ["verified_coverage", "verified_mc_se", "verified"]


def _frames(task: Any) -> tuple[pd.DataFrame, int | None, str | None]:
    """Queries (with ``group`` and ``source_key``), corpus size and the manifest's corpus note."""
    try:
        q = task["queries"]
    except (KeyError, TypeError):
        raise RagcovError("`task` must have a 'queries' split (a JurisTCU DatasetDict or dict of DataFrames).") from None
    q = q if isinstance(q, pd.DataFrame) else q.to_pandas()
    missing = [c for c in ("_id", "group", "source_key") if c not in q.columns]
    if missing:
        raise RagcovError(f"`task['queries']` lacks {missing}; load it with ragcov_data.load_dataset('juristcu', ...).")
    n_docs = None
    try:
        n_docs = len(task["corpus"])
    except (KeyError, TypeError):
        pass
    man = manifest_of(task) if not isinstance(task, Mapping) or not all(
        isinstance(task[k], pd.DataFrame) for k in task) else None
    note = (man or {}).get("corpus_note")
    if note is None and n_docs is not None and n_docs < FULL_CORPUS_DOCS:
        note = SUBSET_NOTE
    return q, n_docs, note


def _section_iv(runs: Any, metrics: Any, level: float) -> tuple[dict[str, pd.DataFrame], tuple[str, ...]]:
    if not isinstance(runs, Mapping) or not runs:
        raise RagcovError("`runs` must be a non-empty dict of retriever name -> run DataFrame.")
    bad = [k for k, v in runs.items() if not isinstance(v, pd.DataFrame)]
    if bad:
        raise RagcovError(f"`runs` values must be DataFrames (query-id, corpus-id, rank, score); not for {bad}.")
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    if not metrics:
        raise RagcovError("`metrics` is empty; pass e.g. ('ndcg@10', 'p@10', 'r@10', 'mrr@10').")
    for m in metrics:
        parse_metric(m)
    if not 0 < level < 1:
        raise RagcovError(f"`level` must be in (0, 1); got {level!r}.")
    return {str(k): v for k, v in runs.items()}, metrics


def _pick(est: pd.DataFrame, keep: tuple[tuple[tuple[str, str, str], ...], ...], group: str) -> pd.DataFrame:
    """The section's rows of one group (``ALL_GROUP`` for overall), each labelled and with its unit."""
    est = est[est["group"] == group]
    rows = []
    for candidates in keep:
        for estimator, method, label in candidates:
            m = (est["estimator"] == estimator) & (est["method"] == method)
            if m.any():
                r = est[m].iloc[0]
                rows.append({"method": label, **{c: float(r[c]) for c in _COLS}, "n_clusters": int(r["n_clusters"]),
                             "n_queries": int(r["n_obs"]),
                             "unit": "query" if int(r["n_clusters"]) == int(r["n_obs"]) else "source_key",
                             # the row's check, as every output marks it (eval/estimates/marks.py)
                             **{k: r.get(k) for k in _CHECK}, **marks.record(r)})
                break
    return pd.DataFrame(rows)


def juristcu_section(
    task: Any,
    runs: Mapping[str, pd.DataFrame],
    metrics: Sequence[str] = DEFAULT_METRICS,
    level: float = 0.95,
    seed: int = 0,
    *,
    relevance_threshold: int = 1,
    n_resamples: int = 5000,
) -> dict[str, Any]:
    """Estimates by group with intervals, and family-wise paired comparisons of retrievers, for JurisTCU.

    Parameters
    ----------
    task : DatasetDict or dict of DataFrames
        A JurisTCU task (``ragcov_data.load_dataset("juristcu", ...)``): queries with ``group`` and
        ``source_key``, graded qrels.
    runs : dict of str to DataFrame
        Retriever name -> run (``query-id, corpus-id, rank, score``); every run must cover every query.
    metrics : sequence of str, default: ("ndcg@10", "p@10", "r@10", "mrr@10")
    level : float, default: 0.95
    seed : int, default: 0
        Seed of the bootstraps (same seed, same tables).
    relevance_threshold : int, default: 1
        Minimum grade counted relevant by P, R and MRR (recorded in every row).
    n_resamples : int, default: 5000

    Returns
    -------
    dict
        ``"estimates"``: one row per retriever x metric x group (``G1``, ``G2``, ``G3``, ``overall``) x
        method: ``retriever, metric, group, unit, method, estimate, se, df, low, high, n_queries,
        n_clusters, relevance_threshold, level``.
        ``"comparisons"``: one row per retriever pair (A, B in ``runs`` order) x metric x group, from
        the leaderboard of the metric (each group one family): ``retriever_a, retriever_b, metric, group,
        unit, method`` (``"simultaneous"``), ``mean_a, mean_b, estimate`` (mean of A - B), ``se, df, low,
        high`` (simultaneous max-|t| interval at ``level`` over the group's pairs), ``p``, ``p_adj``
        (the interval's own test, see :mod:`ragcov_data.eval.leaderboard`), ``family``, ``wins, losses, ties, n_queries, n_clusters, relevance_threshold, level``.
        Empty with a single retriever.
        ``"leaderboards"``: metric -> :class:`~ragcov_data.eval.comparisons.leaderboard.LeaderboardResult` (``by="group"``;
        ranks, tiers, judged@k, ``.separable(group)``); empty with a single retriever.
        Both carry ``attrs`` with ``level``, ``seed``, ``relevance_threshold`` and ``corpus_note``.

    Examples
    --------
    >>> import ragcov_data                                             # doctest: +SKIP
    >>> from ragcov_data.baselines import BM25, TfIdf                  # doctest: +SKIP
    >>> ds = ragcov_data.load_dataset("juristcu", data_dir="../shared/data")   # doctest: +SKIP
    >>> runs = {n: r.index(ds["corpus"]).search(ds["queries"], k=10)
    ...         for n, r in {"bm25": BM25(), "tfidf": TfIdf()}.items()}      # doctest: +SKIP
    >>> tables = juristcu_section(ds, runs)                            # doctest: +SKIP
    >>> tables["estimates"].query("metric == 'ndcg@10' and method == 't'")    # doctest: +SKIP
    """
    runs, metrics = _section_iv(runs, metrics, level)
    queries, _n_docs, note = _frames(task)
    if "doc_id" in queries.columns:
        raise RagcovError("`task['queries']` has a doc_id column: not a JurisTCU task (queries are the unit here).")
    groups = [g for g in GROUP_ORDER[:-1] if g in set(queries["group"])]
    # the evaluator's defaults: cluster = source_key (overall), one query a source within a group
    common = dict(relevance_threshold=relevance_threshold, level=level, seed=seed, n_resamples=n_resamples,
                  by="group", methods=_METHODS)
    estimates = _estimates(runs, task, metrics, groups, common)

    leaderboards = _leaderboards(runs, task, metrics, common) if len(runs) >= 2 else {}
    cmp_rows = [_pair_row(leaderboards[m], a, b, m, g)
                for a, b in combinations(runs, 2) for m in metrics for g in (*groups, OVERALL)]
    comparisons = pd.DataFrame(cmp_rows, columns=_CMP_COLS)
    comparisons = comparisons.assign(relevance_threshold=relevance_threshold, level=level)[_CMP_COLS]
    attrs = _section_attrs(level, seed, relevance_threshold, note)
    for df in (estimates, comparisons):
        df.attrs.update(attrs)
    return {"estimates": estimates, "comparisons": comparisons, "leaderboards": leaderboards}


def _estimates(runs: Mapping[str, pd.DataFrame], task: Any, metrics: Sequence[str], groups: Sequence[str],
               common: dict[str, Any]) -> pd.DataFrame:
    """One row per retriever x metric x group (the group's methods) and overall (the overall methods)."""
    est_rows = []
    for name, run in runs.items():
        for metric in metrics:
            res = evaluate(run, task, metric, **common)
            for g in groups:
                est_rows.append(_pick(res.estimates, _GROUP_METHODS, g).assign(retriever=name, metric=metric, group=g))
            t = _pick(res.estimates, _OVERALL_METHODS, ALL_GROUP)
            est_rows.append(t.assign(retriever=name, metric=metric, group=OVERALL))
    estimates = pd.concat(est_rows, ignore_index=True)
    return estimates.assign(relevance_threshold=common["relevance_threshold"], level=common["level"])[
        ["retriever", "metric", "group", "unit", "method", *_COLS, "n_queries", "n_clusters",
         "relevance_threshold", "level", *_CHECK, *marks.MARK_FIELDS]]


def _section_attrs(level: float, seed: int, relevance_threshold: int, note: str) -> dict[str, Any]:
    """The ``attrs`` of both tables: settings, the corpus note and the sampled unit of each row kind."""
    return {"level": level, "seed": seed, "relevance_threshold": relevance_threshold, "corpus_note": note,
            "units": {"group": "query (one query a cluster: t interval on n - 1 df; bootstrap of queries)",
                      OVERALL: "source (CR2; bootstrap of sources): G2 query i and G3 query i+50 were written "
                               "from one source summary"}}


def _leaderboards(runs: Mapping[str, pd.DataFrame], task: Any, metrics: Sequence[str],
                  common: Mapping[str, Any]) -> dict[str, Any]:
    """One leaderboard per metric, by group: each group's pairs are one family (simultaneous intervals)."""
    return {m: leaderboard(runs, task, metric=m, by="group", level=common["level"], seed=common["seed"],
                           n_resamples=common["n_resamples"], relevance_threshold=common["relevance_threshold"])
            for m in metrics}


def _pair_row(lb: Any, a: str, b: str, metric: str, group: str) -> dict[str, Any]:
    """The pair (a, b) of one group of a leaderboard, as ``A - B`` in ``runs`` order (the leaderboard
    orients pairs by rank; here every row of a pair has the same sign convention)."""
    g = ALL_GROUP if group == OVERALL else group
    pr = lb.pairs[lb.pairs["group"] == g]
    hit = pr[((pr["a"] == a) & (pr["b"] == b)) | ((pr["a"] == b) & (pr["b"] == a))].iloc[0]
    flip = hit["a"] != a
    sgn = -1.0 if flip else 1.0
    lo, hi = sorted((sgn * float(hit["low"]), sgn * float(hit["high"])))
    sy = lb.systems[lb.systems["group"] == g].set_index("name")
    n_q, n_c = int(sy["n_queries"].iloc[0]), int(sy["n_clusters"].iloc[0])
    n_pairs = len(pr)
    return {"retriever_a": a, "retriever_b": b, "metric": metric, "group": group,
            "unit": "query" if n_c == n_q else "source_key", "method": "simultaneous",
            "mean_a": float(sy.loc[a, "estimate"]), "mean_b": float(sy.loc[b, "estimate"]),
            "estimate": sgn * float(hit["diff"]), "se": float(hit["se"]), "df": float(hit["df"]), "low": lo,
            "high": hi, "p": float(hit["p"]), "p_adj": float(hit["p_adj"]),
            "family": f"simultaneous hull + its adjusted p, {n_pairs} pair{'s' if n_pairs != 1 else ''}",
            "wins": int(hit["losses"] if flip else hit["wins"]), "losses": int(hit["wins"] if flip else hit["losses"]),
            "ties": int(hit["ties"]), "n_queries": n_q, "n_clusters": n_c}


_CMP_COLS = ["retriever_a", "retriever_b", "metric", "group", "unit", "method", "mean_a", "mean_b", *_COLS, "p",
             "p_adj", "family", "wins", "losses", "ties", "n_queries", "n_clusters", "relevance_threshold", "level"]
