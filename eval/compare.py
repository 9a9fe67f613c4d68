"""``compare``: paired comparison of two runs on the same queries, clustered by document."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import QrelsRunMismatchError, RagcovError
from ragcov_data.ties import DEFAULT_TIE_POLICY, check_tie_policy

from .evaluator import (_known_subset_note, check_run_documents, check_task_qrels, judged_queries,
                        DEFAULT_CLUSTERS, _check_run, _exclude_self, _grouped_estimates, _methods_iv,
                        _missing_queries, _query_column, default_cluster, load_task_frames, read_run)
from .results import ComparisonResult

__all__ = ["compare"]

ON_MISMATCH = ("error", "intersect")


def compare(
    run_a: Any,
    run_b: Any,
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
    on_mismatch: str = "error",
    on_missing: str = "error",
    exclude_self: bool = True,
) -> ComparisonResult:
    """Interval for the mean paired difference ``A - B`` of a metric, inferring at the document level.

    Parameters
    ----------
    run_a, run_b : DataFrame or path
        Two runs on the same task (see :func:`ragcov_data.eval.evaluate`).
    task, metric, tie_policy, relevance_threshold, cluster, by, methods, level, seed, n_resamples
        As in :func:`ragcov_data.eval.evaluate`; the per-query differences ``d_i = a_i - b_i``
        (values in [-1, 1]) go through the same estimators and methods.
    on_mismatch : {"error", "intersect"}, default: "error"
        Runs covering different query sets are an error, or (``"intersect"``) only the queries both
        runs cover are compared (count recorded in ``info``).
    on_missing : {"error", "zero"}, default: "error"
        Task queries absent from both runs (after intersecting): error, or score 0.
    exclude_self : bool, default: True

    Returns
    -------
    ComparisonResult
        ``estimates`` (estimator x method of the mean difference), ``share_docs_tied`` (clusters —
        documents, sources — whose mean is identical in both runs; also ``share_clusters_tied`` in
        JSON), per-query ``wins``/``losses``/``ties``, ``cluster`` and ``n_clusters`` in ``info``.
    """
    tie_policy = check_tie_policy(tie_policy)
    if on_mismatch not in ON_MISMATCH:
        raise RagcovError(f"`on_mismatch` must be one of {ON_MISMATCH}; got {on_mismatch!r}.")
    if not 0 < level < 1:
        raise RagcovError(f"`level` must be in (0, 1); got {level!r}.")
    from ._core import check_resamples  # the shared rule: positive, and the bootstrap minimum for level

    check_resamples(n_resamples, level, methods)
    methods_t = _methods_iv(methods, False)
    frames = load_task_frames(task, [c for c in (cluster, by) if c] + ([] if cluster else list(DEFAULT_CLUSTERS)))
    queries, qrels = frames["queries"], frames["qrels"]
    ra, rb = read_run(run_a), read_run(run_b)
    _check_run(ra, "run_a")
    _check_run(rb, "run_b")
    notices: list[str] = []
    check_task_qrels(qrels, frames["corpus"], queries, notices)
    subset = _known_subset_note(task)
    for r, name in ((ra, "run_a"), (rb, "run_b")):
        check_run_documents(r, frames["corpus"], subset, notices, name)
    queries = queries.loc[judged_queries(queries, qrels, notices)].reset_index(drop=True)
    ra, _ = _exclude_self(ra, queries, exclude_self)
    rb, _ = _exclude_self(rb, queries, exclude_self)
    qa, qb = set(ra["query-id"].astype(str)), set(rb["query-id"].astype(str))
    n_dropped = 0
    qids_all = queries["_id"].astype(str).to_numpy()
    keep = np.ones(len(qids_all), dtype=bool)
    if qa != qb:
        only_a, only_b = sorted(qa - qb), sorted(qb - qa)
        if on_mismatch == "error":
            raise QrelsRunMismatchError(
                f"`run_a` and `run_b` cover different queries: {len(only_a)} only in run_a (first 3: {only_a[:3]}), "
                f"{len(only_b)} only in run_b (first 3: {only_b[:3]}). Pass `on_mismatch='intersect'` to compare "
                "the shared queries only."
            )
        shared = qa & qb
        keep = np.array([q in shared for q in qids_all])
        n_dropped = int((~keep).sum())
        if not keep.any():
            raise QrelsRunMismatchError("`run_a` and `run_b` share no query of the task; nothing to compare.")
    queries = queries.loc[keep].reset_index(drop=True)
    qids = qids_all[keep]
    _missing_queries(qa | qb if on_mismatch == "error" else qa & qb, qids, on_missing)

    cluster_name = cluster or default_cluster(queries.columns)
    clusters = _query_column(queries, cluster_name, "cluster")
    groups = _query_column(queries, by, "by") if by else None

    from ragcov_data.eval.metrics import per_query

    kw = dict(relevance_threshold=relevance_threshold, tie_policy=tie_policy, query_ids=qids)
    a = per_query(ra, qrels, metric, **kw).to_numpy(dtype=float)
    b = per_query(rb, qrels, metric, **kw).to_numpy(dtype=float)
    d = a - b
    estimates = _grouped_estimates(d, clusters, groups, methods_t, None, level=level, seed=seed,
                                   n_resamples=int(n_resamples), population_sizes=None)
    pq = pd.DataFrame({"query-id": qids, "cluster": clusters, "value_a": a, "value_b": b, "diff": d})
    if groups is not None:
        pq["group"] = groups
    rates = pq.groupby("cluster", sort=False)[["value_a", "value_b"]].mean()
    tied = np.isclose(rates["value_a"].to_numpy(), rates["value_b"].to_numpy(), rtol=0, atol=1e-12)
    eps = 1e-12
    return ComparisonResult(
        per_query=pq, estimates=estimates, share_docs_tied=float(tied.mean()),
        wins=int((d > eps).sum()), losses=int((d < -eps).sum()), ties=int((np.abs(d) <= eps).sum()),
        metric=metric, tie_policy=tie_policy, level=level,
        info={"n_queries": int(len(d)), "n_clusters": int(len(rates)), "n_dropped_mismatch": n_dropped,
              "on_mismatch": on_mismatch, "cluster": cluster_name, "by": by, "seed": seed,
              "n_resamples": int(n_resamples), "mean_a": float(a.mean()), "mean_b": float(b.mean()),
              "tie_policy": tie_policy, "notices": notices},
    )
