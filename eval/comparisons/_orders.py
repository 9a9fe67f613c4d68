"""Orders of systems compared: Kendall's tau-b, the orders a family's verdicts allow, and the joint resampling.

Everything here reads systems in one fixed order ``0..S-1`` and their pairs ``(i, j), i < j`` in
:func:`numpy.triu_indices` order. A *sign vector* holds one entry a pair: ``+1`` when system ``i`` is above
``j``, ``-1`` when below, ``0`` for a tie (estimates) or "not separable" (verdicts).

- :func:`tau_b_rows`: Kendall's tau-b of many pairs of score vectors at once (ties handled as
  :func:`scipy.stats.kendalltau` handles them; a vector with every pair tied gives nan).
- :func:`compatible_bounds`: the range of tau over every pair of strict orders compatible with two tasks'
  verdicts (a separable pair keeps its sign; the transitive closure of the separations is forced too); exact
  by enumerating the orders up to :data:`EXACT_MAX_SYSTEMS` systems, else the relaxation that lets every
  undetermined pair go either way (never narrower than the exact range).
- :func:`permutation_critical_tau`: the smallest tau that an exact test of "the two orders are independent"
  can call positive with ``S`` systems measured without error (Mahonian numbers).
- :func:`resampled_estimates`: each system's estimate on ``B`` cluster-bootstrap samples of one design
  (every system shares the draws), micro or macro, from cluster sums.
"""
from __future__ import annotations

import functools
import itertools
import math
from typing import Iterator

import numpy as np

from ragcov_data.eval.comparisons._family import cluster_sums, draw_weights

__all__ = ["pair_index", "signs", "tau_b_rows", "kendall_tau_b", "closure", "compatible_bounds",
           "relaxed_bounds", "permutation_critical_tau", "resampled_estimates", "EXACT_MAX_SYSTEMS", "TIE_EPS"]

#: Differences within this are ties (as the leaderboard reads per-query ties).
TIE_EPS = 1e-12
#: Up to this many systems the compatible range is computed exactly (8! = 40,320 orders a side).
EXACT_MAX_SYSTEMS = 8
#: Largest product of the two sides' order counts read exactly (beyond it: the relaxation).
_MAX_PRODUCT = 40_000_000


def pair_index(S: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(ia, ib)`` of every pair ``i < j`` of ``S`` systems (triu order)."""
    return np.triu_indices(S, 1)


def signs(x: np.ndarray) -> np.ndarray:
    """Sign vectors of the rows of ``x`` (``(..., S)`` -> ``(..., P)``): +1 where system i scores above j."""
    x = np.asarray(x, dtype=float)
    ia, ib = pair_index(x.shape[-1])
    d = x[..., ia] - x[..., ib]
    return np.where(d > TIE_EPS, 1, np.where(d < -TIE_EPS, -1, 0)).astype(np.int8)


def tau_b_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of row ``r`` of ``X`` against row ``r`` of ``Y`` (both ``(R, S)``), for every row.

    ``(concordant - discordant) / sqrt((P - ties_x) (P - ties_y))`` over the ``P`` pairs, a pair tied in both
    counted in both; nan where either row ties every pair (as :func:`scipy.stats.kendalltau`).
    """
    sx, sy = signs(np.atleast_2d(X)), signs(np.atleast_2d(Y))
    num = (sx.astype(np.int64) * sy).sum(-1)
    den = np.sqrt((sx != 0).sum(-1).astype(float) * (sy != 0).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b of two score vectors (one score a system, same order): :func:`tau_b_rows` of one row."""
    return float(tau_b_rows(np.asarray(x, float)[None], np.asarray(y, float)[None])[0])


def closure(sign: np.ndarray, S: int) -> np.ndarray:
    """The sign vector with every separation transitivity forces: i above j and j above k force i above k."""
    ia, ib = pair_index(S)
    above = np.zeros((S, S), dtype=bool)
    above[ia[sign > 0], ib[sign > 0]] = True
    above[ib[sign < 0], ia[sign < 0]] = True
    for k in range(S):  # Warshall
        above |= above[:, [k]] & above[[k], :]
    if (above & above.T).any():
        raise ValueError("the verdicts form a cycle (i above j above ... above i); they cannot come from one order")
    return np.where(above[ia, ib], 1, np.where(above[ib, ia], -1, 0)).astype(np.int8)


@functools.lru_cache(maxsize=EXACT_MAX_SYSTEMS + 1)
def _all_orders(S: int) -> np.ndarray:
    """Sign vectors of all ``S!`` strict orders (``(S!, P)`` int8)."""
    ranks = np.array(list(itertools.permutations(range(S))), dtype=np.int16)  # rank of each system
    return signs(-ranks.astype(float))


def _orders(forced: np.ndarray, S: int) -> np.ndarray:
    """Sign vectors of the strict orders that keep every forced sign."""
    allo = _all_orders(S)
    keep = forced != 0
    return allo[(allo[:, keep] == forced[keep]).all(1)]


def relaxed_bounds(sp: np.ndarray, sr: np.ndarray) -> tuple[float, float]:
    """``((A - D - U) / P, (A - D + U) / P)``: A pairs forced the same way on both sides, D forced opposite
    ways, U the rest (either way): the range when undetermined pairs are free of one another."""
    P = len(sp)
    both = (sp != 0) & (sr != 0)
    a = int((both & (sp == sr)).sum())
    d = int((both & (sp != sr)).sum())
    u = P - a - d
    return (a - d - u) / P, (a - d + u) / P


def compatible_bounds(sp: np.ndarray, sr: np.ndarray, S: int) -> tuple[float, float, bool]:
    """The smallest and largest tau between a strict order keeping the proxy's forced signs ``sp`` and one
    keeping the real task's ``sr`` (both closed under transitivity first); ``exact`` False when the
    relaxation (:func:`relaxed_bounds`) was used instead (more than :data:`EXACT_MAX_SYSTEMS` systems or too
    many orders), whose range contains the exact one.

    If both tasks' verdicts are right (every separable pair in its true direction), the true tau-b of the two
    tasks' true scores lies in this range (a truly tied pair is never separable when its verdict is right,
    and a tie counted as 0 keeps tau-b between the ranges of its two strict resolutions).
    """
    sp, sr = closure(np.asarray(sp), S), closure(np.asarray(sr), S)
    P = len(sp)
    if P == 0:
        return float("nan"), float("nan"), True
    if not sp.any() or not sr.any():  # one side allows any order: it can copy the other's, or reverse it
        return -1.0, 1.0, True
    if S > EXACT_MAX_SYSTEMS:
        return (*relaxed_bounds(sp, sr), False)
    X, Y = _orders(sp, S), _orders(sr, S)
    if len(X) * len(Y) > _MAX_PRODUCT:
        return (*relaxed_bounds(sp, sr), False)
    lo, hi = math.inf, -math.inf
    Yt = Y.T.astype(np.int32)
    for block in _blocks(X, max(1, _MAX_PRODUCT // 8 // max(len(Y), 1))):
        prod = block.astype(np.int32) @ Yt
        lo, hi = min(lo, int(prod.min())), max(hi, int(prod.max()))
    return lo / P, hi / P, True


def _blocks(X: np.ndarray, n: int) -> Iterator[np.ndarray]:
    for i in range(0, len(X), n):
        yield X[i:i + n]


@functools.lru_cache(maxsize=64)
def _mahonian(S: int) -> tuple[int, ...]:
    """Permutations of ``S`` items by number of inversions (k = 0 .. S(S-1)/2)."""
    counts = [1]
    for i in range(1, S + 1):  # multiply by 1 + x + ... + x^(i-1)
        nxt = [0] * (len(counts) + i - 1)
        for k, c in enumerate(counts):
            for j in range(i):
                nxt[k + j] += c
        counts = nxt
    return tuple(counts)


def permutation_critical_tau(S: int, alpha: float = 0.05) -> float | None:
    """The smallest tau whose exact one-sided permutation p-value ``P(tau' >= tau)`` is at most ``alpha``
    when two orders of ``S`` systems are independent (every order equally likely, no ties); None when even
    tau = 1 is not (``1 / S! > alpha``)."""
    if S < 2:
        return None
    counts = _mahonian(S)
    total = math.factorial(S)
    P = S * (S - 1) // 2
    tail = 0
    best = None
    for k, c in enumerate(counts):  # k inversions -> tau = 1 - 4k / (S (S - 1)); k ascending = tau descending
        tail += c
        if tail / total > alpha:
            break
        best = 1.0 - 2.0 * k / P
    return best


def resampled_estimates(V: np.ndarray, codes: np.ndarray, K: int, estimator: str, B: int,
                        rng: np.random.Generator) -> np.ndarray:
    """``(S, B)`` estimates of every system on ``B`` cluster-bootstrap samples (K clusters drawn with replacement,
    each drawn cluster bringing all its queries; one draw shared by every system): micro = sum of values over
    sum of queries, macro = mean of the drawn clusters' means."""
    n = np.bincount(codes, minlength=K).astype(float)
    s = cluster_sums(V, codes, K)
    X = s if estimator == "micro" else s / n
    out = np.empty((V.shape[0], B))
    lo = 0
    for W in draw_weights(K, B, rng):
        b = W.shape[1]
        out[:, lo:lo + b] = (X @ W) / (n @ W) if estimator == "micro" else (X @ W) / K
        lo += b
    return out
