"""Validity of the leaderboard's family-wise error, shown on null families built from real data.

A *null family* keeps the real per-query values of ``S`` systems but makes the systems exchangeable
within each cluster: every cluster receives the values of a random permutation of the system labels
(cluster ``c`` gets system ``perm_c[s]``'s values as system ``s``). Within a cluster the queries keep
their joint outcomes (the clustering and the pairing are untouched), but no system is better than
another in expectation, so any pair declared different is a false positive. Over many families the
share with at least one false positive is the family-wise error rate (FWER): it should be at most
``1 - level`` for the Holm-adjusted p-values, the max-|t| adjusted p-values and the simultaneous
intervals, while the unadjusted per-pair tests exceed it.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError

from ragcov_data.eval.comparisons._family import family

__all__ = ["null_family_rates", "permute_within_clusters"]


def permute_within_clusters(V: np.ndarray, codes: np.ndarray, K: int, rng: np.random.Generator) -> np.ndarray:
    """``V`` (S x N) with the system labels permuted independently in each cluster."""
    S, N = V.shape
    perms = np.argsort(rng.random((K, S)), axis=1)  # (K, S): cluster c gives system s the row perms[c, s]
    return V[perms[codes].T, np.arange(N)[None, :]]


def null_family_rates(values: Any, clusters: Any, *, n_families: int = 300, level: float = 0.95,
                      n_resamples: int = 199, estimator: str = "micro", seed: int = 0,
                      pair_test: str = "wild_cluster") -> dict[str, Any]:
    """Family-wise false-positive rates of the leaderboard's pair machinery on null families.

    Parameters
    ----------
    values : array_like (S, N) or DataFrame
        Real per-query values of ``S >= 2`` systems (rows; a DataFrame's columns are the systems) on the
        same ``N`` queries.
    clusters : array_like (N,)
        Cluster label of every query (the sampled unit: document, source).
    n_families : int
        Null families (each one permutation per cluster, then the full family machinery).
    level, n_resamples, estimator
        As in :func:`ragcov_data.eval.leaderboard` (``n_resamples`` is the B of each family).
    seed : int
    pair_test : {"wild_cluster", "cr2"}, default: "wild_cluster"
        Micro pair test of the family (:func:`._family.family`): ``wild_cluster`` (the leaderboard's) widens
        each micro pair's interval to the hull with the wild cluster restricted bootstrap interval; ``cr2``
        is the CR2-only family, for comparison.

    Returns
    -------
    dict
        ``holm``, ``simultaneous``, ``maxt``, ``unadjusted``: share of families with at least one pair
        declared different (adjusted p < 1 - level, interval excluding 0, max-|t| p < 1 - level,
        unadjusted p < 1 - level), each with its Monte-Carlo SE (``*_se``); ``nominal`` (1 - level),
        ``n_families``, ``n_systems``, ``n_pairs``, ``n_clusters``, ``n_queries``.
    """
    if isinstance(values, pd.DataFrame):
        values = values.to_numpy(dtype=float).T
    V = np.asarray(values, dtype=float)
    c = np.asarray(clusters)
    if V.ndim != 2 or V.shape[0] < 2:
        raise RagcovError(f"`values` must be (systems, queries) with at least 2 systems; got shape {V.shape}.")
    if c.shape != (V.shape[1],):
        raise RagcovError(f"`clusters` needs one label per query ({V.shape[1]}); got shape {c.shape}.")
    if not isinstance(n_families, (int, np.integer)) or n_families < 1:
        raise RagcovError(f"`n_families` must be a positive integer; got {n_families!r}.")
    codes, labels = pd.factorize(pd.Series(c), sort=False)
    K = len(labels)
    alpha = 1.0 - level
    rng = np.random.default_rng(seed)
    hits = {"holm": 0, "simultaneous": 0, "maxt": 0, "unadjusted": 0}
    for _ in range(int(n_families)):
        Vp = permute_within_clusters(V, codes, K, rng)
        f = family(Vp, codes, K, estimator=estimator, level=level, n_resamples=n_resamples, rng=rng,
                   pair_test=pair_test)
        pr = f["pairs"]
        hits["holm"] += bool((pr["p_adj"] < alpha).any())
        hits["unadjusted"] += bool((pr["p"] < alpha).any())
        hits["maxt"] += bool((pr["p_maxt"] < alpha).any())
        hits["simultaneous"] += bool(((pr["low"] > 0) | (pr["high"] < 0)).any())
    out: dict[str, Any] = {"nominal": alpha, "level": level, "n_families": int(n_families),
                           "n_systems": int(V.shape[0]), "n_pairs": int(V.shape[0] * (V.shape[0] - 1) // 2),
                           "n_clusters": K, "n_queries": int(V.shape[1]), "n_resamples": int(n_resamples),
                           "estimator": estimator, "pair_test": pair_test}
    for k, h in hits.items():
        r = h / n_families
        out[k] = r
        out[k + "_se"] = math.sqrt(r * (1 - r) / n_families)
    return out
