"""Validity of the leaderboard's family-wise error, shown on null families built from real data.

A *null family* keeps the real per-query values of ``S`` systems but makes the systems exchangeable
within each cluster: every cluster receives the values of a random permutation of the system labels
(cluster ``c`` gets system ``perm_c[s]``'s values as system ``s``). Within a cluster the queries keep
their joint outcomes (the clustering and the pairing are untouched), but no system is better than
another in expectation, so any pair declared different is a false positive. Over many families the
share with at least one false positive is the family-wise error rate (FWER): it should be at most
``1 - level`` for the Holm-adjusted p-values, the max-|t| adjusted p-values and the simultaneous
intervals, while the unadjusted per-pair tests exceed it.

A *superpopulation* null (``null="superpopulation"``) instead keeps every system's own per-query values,
shifted so that their census means (micro, or macro for ``estimator="macro"``) are equal, and redraws the
K clusters with replacement in every family: the systems are not exchangeable within a cluster (their
difference varies from cluster to cluster, a dominant cluster included or not), only equal on average.
``shift`` adds a known difference to system 0 in every family (its pairs are then true differences): the
share of them declared is the power, the rest of the pairs still measure the family-wise error.
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


NULLS = ("permutation", "superpopulation")
#: How ``shift`` is given to system 0 (:func:`null_family_rates`).
SHIFTS = ("every_query", "some_queries")
#: Family-wise rates (and, with ``shift``, powers) reported, by the column or decision they read.
RATES = ("holm", "simultaneous", "maxt", "unadjusted", "p_adj", "holm_cr2")


def gain_on_queries(v: np.ndarray, shift: float, rng: np.random.Generator) -> np.ndarray:
    """``v`` (values in [0, 1]) with queries below 1, in random order, set to 1 until the mean has risen by at least
    ``shift`` (all of them if that is not enough)."""
    below = rng.permutation(np.flatnonzero(v < 1))
    k = int(np.searchsorted(np.cumsum(1.0 - v[below]), shift * len(v))) + 1
    out = v.copy()
    out[below[:k]] = 1.0
    return out


def shifted(v: np.ndarray, shift: float, shift_on: str, rng: np.random.Generator) -> np.ndarray:
    """System 0's values ``v`` given the known difference ``shift`` the way ``shift_on`` says
    (:func:`null_family_rates`): added to every query, or by :func:`gain_on_queries`."""
    return v + shift if shift_on == "every_query" else gain_on_queries(v, shift, rng)


def _centered(V: np.ndarray, codes: np.ndarray, K: int, estimator: str) -> np.ndarray:
    """``V`` with every system shifted to the same census mean (micro: over queries; macro: of cluster means)."""
    if estimator == "macro":
        n = np.bincount(codes, minlength=K)
        means = np.array([(np.bincount(codes, weights=v, minlength=K) / n).mean() for v in V])
    else:
        means = V.mean(1)
    return V - (means - means.mean())[:, None]


def _redraw(Vc: np.ndarray, members: list[np.ndarray], K: int, rng: np.random.Generator):
    """K clusters drawn with replacement: the values of their queries and new codes 0..K-1."""
    pick = rng.integers(0, K, K)
    rows = np.concatenate([members[c] for c in pick])
    codes = np.repeat(np.arange(K), [len(members[c]) for c in pick])
    return Vc[:, rows], codes


def null_family_rates(values: Any, clusters: Any, *, n_families: int = 300, level: float = 0.95,
                      n_resamples: int = 199, estimator: str = "micro", seed: Any = 0,
                      pair_test: str = "wild_cluster", null: str = "permutation",
                      shift: float = 0.0, shift_on: str = "every_query") -> dict[str, Any]:
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
    null : {"permutation", "superpopulation"}
        Within-cluster permutation of the system labels (default), or equal census means with the clusters
        redrawn with replacement (see the module docstring).
    shift : float
        Known difference given to system 0 (0: every pair null), in its mean over queries.
    shift_on : {"every_query", "some_queries"}, default: "every_query"
        ``every_query`` adds ``shift`` to each of system 0's per-query values (a difference that varies no more
        than the null's). ``some_queries`` makes system 0 better on some queries, as a better retriever is:
        queries where its value is below 1, in random order, are set to 1 until its mean over queries has
        risen by at least ``shift`` (values must lie in [0, 1], as hit@1, recall and nDCG do).

    Returns
    -------
    dict
        ``holm``, ``simultaneous``, ``maxt``, ``unadjusted``: share of families with at least one pair
        declared different (adjusted p < 1 - level, interval excluding 0, max-|t| p < 1 - level,
        unadjusted p < 1 - level), each with its Monte-Carlo SE (``*_se``); ``p_adj`` (the leaderboard's
        ``p_adj`` column, the hull's adjusted p-value: the same decision as ``simultaneous``) and
        ``holm_cr2`` (Holm over the CR2/t tests alone: the leaderboard's ``p_adj`` column of earlier
        versions); ``nominal`` (1 - level), ``n_families``, ``n_systems``, ``n_pairs``, ``n_clusters``,
        ``n_queries``, ``null``, ``shift``. With ``shift``, the rates count the null pairs only (those
        without system 0; None with two systems) and ``power_<rate>`` is the share of system 0's pairs
        declared different (with its ``_se`` over every such pair of every family).
    """
    V, codes, K = _checked(values, clusters, n_families, null)
    if shift_on not in SHIFTS:
        raise RagcovError(f"`shift_on` must be one of {SHIFTS}; got {shift_on!r}.")
    if shift and shift_on == "some_queries" and (V.min() < 0 or V.max() > 1):
        raise RagcovError("`shift_on='some_queries'` sets queries to 1: the values must lie in [0, 1]; got "
                          f"[{V.min():g}, {V.max():g}]. Use shift_on='every_query' for other metrics.")
    alpha = 1.0 - level
    S = V.shape[0]
    ia, ib = np.triu_indices(S, 1)
    true = (ia == 0) if shift else np.zeros(len(ia), bool)  # pairs with system 0 carry the shift
    hits, found = _count(V, codes, K, true, null=null, n_families=int(n_families), level=level,
                         n_resamples=n_resamples, estimator=estimator, rng=np.random.default_rng(seed),
                         pair_test=pair_test, shift=shift, shift_on=shift_on)
    out: dict[str, Any] = {"nominal": alpha, "level": level, "n_families": int(n_families),
                           "n_systems": int(S), "n_pairs": int(S * (S - 1) // 2),
                           "n_clusters": K, "n_queries": int(V.shape[1]), "n_resamples": int(n_resamples),
                           "estimator": estimator, "pair_test": pair_test, "null": null, "shift": float(shift),
                           "shift_on": shift_on}
    any_null = bool((~true).any())
    n_true = int(true.sum()) * int(n_families)
    for k in RATES:
        r = hits[k] / n_families if any_null else None
        out[k] = r
        out[k + "_se"] = None if r is None else math.sqrt(r * (1 - r) / n_families)
        if shift:
            pw = found[k] / n_true
            out["power_" + k] = pw
            out["power_" + k + "_se"] = math.sqrt(pw * (1 - pw) / n_true)
    return out


def _checked(values: Any, clusters: Any, n_families: Any, null: str) -> tuple[np.ndarray, np.ndarray, int]:
    """``(V, codes, K)`` from the inputs of :func:`null_family_rates`, or a :class:`RagcovError` saying what is
    wrong with them."""
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
    if null not in NULLS:
        raise RagcovError(f"`null` must be one of {NULLS}; got {null!r}.")
    codes, labels = pd.factorize(pd.Series(c), sort=False)
    return V, codes, len(labels)


def _count(V: np.ndarray, codes: np.ndarray, K: int, true: np.ndarray, *, null: str, n_families: int,
           level: float, n_resamples: int, estimator: str, rng: np.random.Generator, pair_test: str,
           shift: float, shift_on: str) -> tuple[dict[str, int], dict[str, int]]:
    """Over ``n_families`` null families: per rate, the families with at least one null pair declared
    different (``hits``) and the shifted pairs declared different (``found``)."""
    alpha = 1.0 - level
    hits = dict.fromkeys(RATES, 0)
    found = dict.fromkeys(RATES, 0)
    if null == "superpopulation":
        Vc = _centered(V, codes, K, estimator)
        members = [np.flatnonzero(codes == c) for c in range(K)]
    for _ in range(n_families):
        if null == "permutation":
            Vp, cp = permute_within_clusters(V, codes, K, rng), codes
        else:
            Vp, cp = _redraw(Vc, members, K, rng)
        if shift:
            Vp = Vp.copy()
            Vp[0] = shifted(Vp[0], shift, shift_on, rng)
        pr = family(Vp, cp, K, estimator=estimator, level=level, n_resamples=n_resamples, rng=rng,
                    pair_test=pair_test)["pairs"]
        excl = (pr["low"] > 0) | (pr["high"] < 0)
        decided = {"holm": pr["p_adj"] < alpha, "unadjusted": pr["p"] < alpha, "maxt": pr["p_maxt"] < alpha,
                   "simultaneous": excl,
                   "p_adj": np.where(np.isfinite(pr["p_hull"]), pr["p_hull"] < alpha, excl),
                   "holm_cr2": pr["p_adj_cr2"] < alpha}
        for k, d in decided.items():
            hits[k] += bool(d[~true].any())
            found[k] += int(d[true].sum())
    return hits, found
