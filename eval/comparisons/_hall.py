"""The leaderboard's macro family: simultaneous intervals from a cluster bootstrap of Hall's skewness-removing
transform of t, guarded where a pair's difference sits in few documents.

Input is ``X`` (P pairs x K clusters): every pair's per-cluster mean difference. Each replicate resamples the K
clusters (blocks of resampling counts shared by every pair) and recomputes every pair's statistic:

- **Hall pairs** (at least :data:`HALL_MIN_DOCUMENTS` clusters away from the pair's median difference): Hall's
  (1992) transform ``T = sqrt(K) (W + g W^2/3 + g^2 W^3/27 + g/(6K))`` with ``W = (mean - mu)/sd`` and ``g`` the
  sample skewness. Its distribution is free of the first skewness term of t, so a bootstrap of it reacts to the
  skew of per-document differences (which the superpopulation null needs) without the excess a
  replicate-studentized t shows when the differences are symmetric. ``T`` is monotone in ``W`` (its derivative
  is ``(1 + g W/3)^2``), so the interval is its inversion, in closed form and asymmetric where the differences
  are skewed.
- **Guarded pairs** (fewer such clusters): the replicate-studentized ``|mean* - mean| / se*``. With a handful of
  documents carrying the difference, the mean is far from the Edgeworth regime Hall's correction assumes; there
  Hall alone rejects 10% of null families with 10 ANEEL systems under the superpopulation null. The count is
  taken from the median, not from 0, so that it does not depend on the value tested and the interval is the
  inversion of one test.

The critical value of each group is the order statistic of its max over pairs at the level ``1 - alpha P_g / P``
(a Bonferroni split of alpha between the two groups), so a guarded pair's heavy bootstrap tail does not widen
every Hall pair's interval (with one shared max the 10-system superpopulation cell fell to 2.5%).

Why it replaced the hull of the t family and the replicate-studentized bootstrap: that hull rejected 0.6-1.6% of
ANEEL null families at 5% under the within-document permutation null (the studentized bootstrap reacts to the
chance sign pattern of the few documents carrying a difference), and it separated few pairs where one system is
better on some queries (per-document differences skewed in the direction of the effect, which Hall's transform
credits). ``benchmarks/bench_null_families.py`` measures the family-wise error and the power on both kinds of
shift, ``benchmarks/bench_coverage_sampled.py`` the simultaneous coverage on document samples
(docs/results/validity.md).

Hall, P. (1992). On the removal of skewness by transformation. JRSS B 54, 221-228. Westfall, P. H. & Young,
S. S. (1993). Resampling-Based Multiple Testing. Wiley (single-step max-T).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["HALL_MIN_DOCUMENTS", "hall_stat", "hall_inverse", "moments", "spread", "hall_family", "order_stat"]

#: A pair's difference must depart from its median in at least this many clusters for Hall's transform; fewer,
#: and the pair takes the replicate-studentized t (chosen on the null families of bench_null_families.py: 20
#: left ANEEL 3 systems at 6.6% under the superpopulation null, 30 brings every macro cell into 3-6%).
HALL_MIN_DOCUMENTS = 30
#: Differences within this of the median are "at the median".
_EPS = 1e-12
#: A replicate SD below this share of the observed one is rounding: the replicate's clusters are all equal.
_FLAT = 1e-9


def moments(S1: np.ndarray, S2: np.ndarray, S3: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, sample SD (ddof 1) and third central moment (over K) from the sums of x, x^2, x^3 over K values."""
    m = S1 / K
    s = np.sqrt(np.maximum(S2 / K - m * m, 0.0) * K / (K - 1))
    return m, s, S3 / K - 3 * m * S2 / K + 2 * m ** 3


def hall_stat(m: np.ndarray, s: np.ndarray, m3: np.ndarray, mu: Any, K: int) -> np.ndarray:
    """Hall's transform of the studentized mean at ``mu`` (0 where ``s = 0``); ``sqrt(K) W`` is the t statistic."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(s > 0, m3 / s ** 3, 0.0)
        W = np.where(s > 0, (m - mu) / s, 0.0)
    return np.where(s > 0, np.sqrt(K) * (W + g * W ** 2 / 3 + g ** 2 * W ** 3 / 27 + g / (6 * K)), 0.0)


def hall_inverse(y: np.ndarray, g: np.ndarray, K: int) -> np.ndarray:
    """``W`` with ``W + g W^2/3 + g^2 W^3/27 + g/(6K) = y``: since the cubic is ``((1 + gW/3)^3 - 1)/g``,
    ``W = 3z / (u^2 + u + 1)`` with ``z = y - g/(6K)`` and ``u`` the real cube root of ``1 + g z`` (the form that
    stays exact as ``g -> 0``, where ``W = z``)."""
    z = y - g / (6 * K)
    u = np.cbrt(1.0 + g * z)
    return 3.0 * z / (u * u + u + 1.0)


def spread(X: np.ndarray) -> np.ndarray:
    """Per pair (row), the number of clusters whose difference departs from the row's median."""
    return (np.abs(X - np.median(X, axis=1, keepdims=True)) > _EPS).sum(1)


def order_stat(M: np.ndarray, level: float) -> tuple[float, int]:
    """The ``level`` order statistic of the sorted ``M`` (no interpolation) and its 1-based index."""
    k = min(len(M), int(np.ceil(level * (len(M) + 1))))
    return float(M[k - 1]), k


def _replicates(X: np.ndarray, hall: np.ndarray, B: int, weights: Iterable[np.ndarray]) -> np.ndarray:
    """(P, B) bootstrap statistics at the observed mean: Hall's for the ``hall`` rows, the studentized t else."""
    P, K = X.shape
    d = X.mean(1)
    # a replicate whose clusters are all equal has no SD; the sums of powers leave rounding there, not 0
    floor = _FLAT * X.std(1, ddof=1)[:, None]
    R = np.empty((P, B))
    X2, X3 = X * X, X * X * X
    lo = 0
    for W in weights:
        b = W.shape[1]
        m, s, m3 = moments(X @ W, X2 @ W, X3 @ W, K)
        s = np.where(s > floor, s, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(s > 0, np.abs(m - d[:, None]) / (s / np.sqrt(K)), 0.0)
        R[:, lo:lo + b] = np.where(hall[:, None], np.abs(hall_stat(m, s, m3, d[:, None], K)), t)
        lo += b
    return R


def hall_family(X: np.ndarray, level: float, B: int, weights: Iterable[np.ndarray],
                min_documents: int = HALL_MIN_DOCUMENTS) -> dict[str, np.ndarray]:
    """Simultaneous intervals of the P pairs in ``X`` (every row with variation) at ``level``, from ``weights``:
    blocks ``(K, b)`` of cluster-resampling counts, ``B`` columns in all (:func:`._family.draw_weights`).
    ``min_documents`` is the guard (:data:`HALL_MIN_DOCUMENTS`; other values for the benchmark's comparison).

    Returns ``low, high``; ``p`` (each pair's own bootstrap p-value at 0); ``p_maxt`` (adjusted: the smallest
    family-wise level at which its interval excludes 0, ``(P / P_g)(1 + #{M_g >= T_0}) / (B + 1)``), ``p_hull``
    (the same value, strictly below alpha exactly where the interval excludes 0); ``hall`` (the pairs read with
    Hall's transform) and ``crit`` (each pair's critical value on its statistic's scale).
    """
    P, K = X.shape
    d = X.mean(1)
    sd = X.std(1, ddof=1)
    m3 = ((X - d[:, None]) ** 3).mean(1)
    g = m3 / sd ** 3  # every row has variation (the caller keeps the live pairs)
    hall = spread(X) >= min_documents
    R = _replicates(X, hall, B, weights)
    obs = np.where(hall, np.abs(hall_stat(d, sd, m3, 0.0, K)), np.abs(d) / (sd / np.sqrt(K)))
    p_one = (1.0 + (R >= obs[:, None]).sum(1)) / (B + 1.0)
    crit, p_adj, p_hull = np.empty(P), np.empty(P), np.empty(P)
    alpha = 1.0 - level
    for grp in (hall, ~hall):
        if not grp.any():
            continue
        share = P / grp.sum()
        M = np.sort(R[grp].max(0))
        crit[grp], _ = order_stat(M, 1.0 - alpha / share)
        # excluded iff T_0 > M[k-1] iff j = #{M < T_0} >= k = ceil((1 - alpha/share)(B + 1)) iff
        # alpha >= share (1 - j/(B + 1)); the largest float below that makes "<" exact
        j = np.searchsorted(M, obs[grp], side="left")
        p_adj[grp] = np.minimum(1.0, share * (1.0 + B - j) / (B + 1.0))
        p_hull[grp] = np.nextafter(np.minimum(1.0, share * (1.0 - j / (B + 1.0))), -np.inf)
    se = sd / np.sqrt(K)
    low, high = d - crit * se, d + crit * se
    y = crit / np.sqrt(K)
    w_lo, w_hi = hall_inverse(-y, g, K), hall_inverse(y, g, K)
    low = np.where(hall, d - w_hi * sd, low)
    high = np.where(hall, d - w_lo * sd, high)
    return {"low": low, "high": high, "p": p_one, "p_maxt": p_adj, "p_hull": p_hull, "hall": hall, "crit": crit}
