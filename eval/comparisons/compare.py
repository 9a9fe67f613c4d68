"""``compare``: paired comparison of two runs on the same queries, clustered by document."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.estimates._bounds import clip_table, no_variation_text, value_range
from ragcov_data.eval.estimates.verify import is_sampled, verify_for_evaluate
from ragcov_data.ties import DEFAULT_TIE_POLICY

from ragcov_data.eval.estimates._kernels import check_level, check_resamples
from ragcov_data.eval.estimates.evaluator import _grouped_estimates, _methods_iv, with_size_methods
from ragcov_data.eval.outcomes.align import ON_MISMATCH
from ragcov_data.eval.outcomes.args import check_outcome_args
from ragcov_data.eval.outcomes.stage import outcomes_many
from ragcov_data.eval.outcomes.table import OutcomeSet, run_name
from ragcov_data.eval.estimates.results import ComparisonResult, mark_recommended, unit_of

__all__ = ["compare", "finish_difference"]



def difference_bounds(a: np.ndarray, b: np.ndarray) -> tuple[float, float] | None:
    """Range of a mean paired difference ``a - b``: ``(-1, 1)`` when both sides' values lie in [0, 1]
    (hit rates, MRR, nDCG, P/R), else the range of the differences themselves (or None)."""
    if value_range(a) == (0.0, 1.0) and value_range(b) == (0.0, 1.0):
        return (-1.0, 1.0)
    return value_range(np.asarray(a, float) - np.asarray(b, float))


def finish_difference(estimates: pd.DataFrame, a: np.ndarray, b: np.ndarray, clusters: np.ndarray, groups: Any,
                      population_sizes: Any, level: float, seed: int | None, unit: str | None = None) -> pd.DataFrame:
    """The estimates of a mean paired difference, finished as ``evaluate``'s are: each interval's measured
    coverage at this design (``verified_coverage``, ``verified_mc_se``, ``verified``; the design is the
    per-query differences and their clusters, :mod:`.verify`), the interval cut to [-1, 1] with the flag
    ``clipped`` (:mod:`._bounds`), and a ``no_variation`` text on zero-variance rows. ``unit`` names the
    cluster in the check's reasons."""
    d = np.asarray(a, float) - np.asarray(b, float)
    out = verify_for_evaluate(estimates, d, clusters, groups, population_sizes, None, level, seed, unit)
    out = mark_recommended(out, sampled=is_sampled(population_sizes))
    out = clip_table(out, difference_bounds(a, b))
    if "flags" in out.columns:
        texts = []
        for i, z in zip(out.index, out["flags"].str.contains("zero_variance", regex=False)):
            g = out.at[i, "group"] if "group" in out.columns else None
            v = d if groups is None or g is None or g == "__all__" else d[groups == g]
            texts.append(no_variation_text(v) if z else "")
        out["no_variation"] = texts
    return out


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
    tie_policy = check_outcome_args(on_missing, tie_policy, single=True)  # two runs, but no intersect: on_mismatch
    if on_mismatch not in ON_MISMATCH:
        raise RagcovError(f"`on_mismatch` must be one of {ON_MISMATCH}; got {on_mismatch!r}.")
    check_level(level)
    check_resamples(n_resamples, level, methods)  # the shared rule: positive, and the bootstrap minimum for level
    methods_t = _methods_iv(methods, False)
    # one outcome stage for both runs: the same queries, sample (and its correction), missing-query rules
    oc = outcomes_many({"run_a": run_a, "run_b": run_b}, task, metric, tie_policy=tie_policy,
                       relevance_threshold=relevance_threshold, on_missing=on_missing, on_mismatch=on_mismatch,
                       cluster=cluster, by=by, exclude_self=exclude_self)
    methods_t = with_size_methods(methods_t, methods, oc.population_sizes)
    res = _comparison(oc, methods_t, metric=metric, tie_policy=tie_policy, on_mismatch=on_mismatch, level=level,
                      seed=seed, n_resamples=int(n_resamples))
    names = [run_name(run_a), run_name(run_b)]
    res.info["name_a"], res.info["name_b"] = names if names[0] != names[1] else ("run_a", "run_b")
    return res


def _comparison(oc: OutcomeSet, methods_t: tuple[str, ...], *, metric: str, tie_policy: str, on_mismatch: str,
                level: float, seed: int | None, n_resamples: int) -> ComparisonResult:
    """``compare``'s result from the two runs' outcome set: estimates of the mean paired difference (finished
    as ``evaluate``'s), the per-query table, clusters tied, wins/losses/ties and ``info``."""
    a, b = oc.tables["run_a"].values, oc.tables["run_b"].values
    qids, clusters, groups = oc.query_ids, oc.clusters, oc.groups
    d = a - b
    estimates = _grouped_estimates(d, clusters, groups, methods_t, None, level=level, seed=seed,
                                   n_resamples=n_resamples, population_sizes=oc.population_sizes)
    estimates = finish_difference(estimates, a, b, clusters, groups, oc.population_sizes, level, seed,
                                  unit_of(oc.cluster))
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
        info={"n_queries": int(len(d)), "n_clusters": int(len(rates)),
              "n_dropped_mismatch": oc.info["n_dropped_mismatch"], "on_mismatch": on_mismatch, "cluster": oc.cluster, "by": oc.by, "seed": seed,
              "n_resamples": n_resamples, "mean_a": float(a.mean()), "mean_b": float(b.mean()),
              "tie_policy": tie_policy, **oc.result_info()},
    )
