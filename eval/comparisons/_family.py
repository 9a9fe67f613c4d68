"""Vectorised family machinery of the leaderboard: many systems, every pair, one cluster bootstrap.

Input is a matrix ``V`` of per-query values (``S`` systems x ``N`` queries) and one cluster code per
query (``K`` clusters). Everything is computed from cluster-level sums and one matrix ``W`` (``K x B``)
of cluster-resampling counts shared by every system and every pair, so the bootstrap estimates of all
systems are one matrix product and those of all ``S (S - 1) / 2`` pairs are row differences of it (the
difference of means is linear in the cluster sums, for micro and macro alike). No Python loop runs
over replicates or pairs.

Per system: the estimate and the design's recommended interval through :func:`_kernels.interval_batch`
(CR2 for micro, t for macro and for one-query clusters), so the numbers equal ``evaluate``'s.

Per pair ``(a, b)``: ``d = est_a - est_b`` (= the mean of per-query differences); its CR2 (micro) or
t (macro) SE, df and two-sided p-value (``compare``'s recommended test); the Holm step-down adjusted
p-value over the family; a simultaneous interval and a single-step max-|t| adjusted p-value:

1. bootstrap deviations ``e_pb = d*_pb - d_p`` are standardised by their own bootstrap sd, and
   ``M_b = max_p |e_pb| / sd*_p`` (pairs with zero variance are left out of the max);
2. ``c`` = the ``level`` quantile of ``M``: the bootstrap carries the *dependence* between pairs
   (they share systems and clusters), not the scale;
3. ``c`` is turned into a per-comparison level ``alpha_boot = 2 (1 - Phi(c))``, which is never allowed
   above Bonferroni's ``(1 - level) / m`` (``m`` pairs): ``alpha* = min(alpha_boot, (1 - level) / m)``.
   Every pair gets ``d +- t_{df}^{-1}(1 - alpha*/2) * se`` with its CR2/t SE and df: with one pair this
   is the ordinary CR2/t interval, and few clusters keep the t-tail penalty a normal max-|t| would lose;
4. the adjusted p-value of a pair reads its p-value on the same scale:
   ``z_p = Phi^{-1}(1 - p/2)``, ``p_maxt = max((1 + #{b: M_b >= z_p}) / (B + 1), min(1, m p))``. A
   simultaneous interval excludes 0 exactly when ``p < alpha*``, i.e. (up to the resolution of ``B``)
   when ``p_maxt < 1 - level``.

Resampling families (``pair_test="wild_cluster"``, the leaderboard's): micro pairs are widened to the hull
with the wild cluster restricted bootstrap family (:func:`_wild_hull`; the hull excludes 0 only where both of
its families do); macro pairs of families with two or more pairs take the guarded Hall cluster-bootstrap family
instead of the t family (:func:`_macro_family`, :mod:`._hall`).

Why the Bonferroni bound: the union bound holds whatever the dependence between pairs, given valid
per-pair tests, and the family's intervals are then never narrower than Bonferroni's on the same tests;
the bootstrap widens them further where it finds heavier joint tails. Without the bound (pure max-|t|,
narrower when pairs are dependent) the family-wise rate ran 1-2 points above nominal for the micro
estimate on the ANEEL census (one document holds 18% of the queries), because a bootstrap of the ratio
estimator inherits the per-pair CR2 test's own excess there; with it, the rate is at most Holm's. The
micro hull keeps Bonferroni's level too: a single-step min-p level for both of its parts (:func:`_wild_hull`,
``joint="min_p"``) rejected 3.1-5.5% of null families where Bonferroni's rejects 2.4-3.5%, but its intervals
covered all ten differences of five systems on 20 sampled ANEEL documents 89.4% of the time (Bonferroni's:
95.7%): the level is calibrated at 0, and a sample with few documents differing needs the wider CR2 part
(``benchmarks/bench_null_families.py``, docs/results/validity.md).

References: Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Stat. 6,
65-70. Westfall, P. H. & Young, S. S. (1993). Resampling-Based Multiple Testing. Wiley (single-step
max-T). Romano, J. P. & Wolf, M. (2005). Exact and approximate stepdown methods for multiple hypothesis
testing. JASA 100, 94-108. Piepho, H.-P. (2004). An algorithm for a letter-based representation of
all-pairwise comparisons. J. Comput. Graph. Stat. 13, 456-466.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from scipy import sparse, stats

from ragcov_data.eval.comparisons._hall import hall_family
from ragcov_data.eval.estimates import _kernels

__all__ = ["family", "holm", "letters", "rank_bounds", "cluster_sums", "draw_weights", "EPS"]

#: The pair test of the leaderboard's micro families: the hull with the wild cluster restricted bootstrap
#: (the one whose family-wise error was measured within 5% + 2 MC SE; see ``benchmarks/bench_null_families.py``).
LEADERBOARD_PAIR_TEST = "wild_cluster"
#: How the micro hull sets its per-comparison level (:func:`_wild_hull`): ``"bonferroni"`` (the leaderboard's) or
#: ``"min_p"`` (the WCR family's single-step min-p, measured and not adopted; ``benchmarks/bench_null_families.py``
#: compares them).
WILD_JOINT = "bonferroni"
#: Per-query differences within this are ties (wins/losses/ties), as in ``compare``.
EPS = 1e-12
#: How far a hull-adjusted p-value may sit from alpha on the wrong side of its interval (rounding only).
_BOUNDARY = 1e-9
#: Bound on elements of one block of resampling counts (K x b) held at once.
_BLOCK = 1 << 22


def cluster_sums(V: np.ndarray, codes: np.ndarray, K: int) -> np.ndarray:
    """``(R, K)`` sums of the rows of ``V`` (``R x N``) by cluster code (sparse product, any K)."""
    key = np.ascontiguousarray(codes, dtype=np.int64).tobytes()
    return np.asarray((_membership(key, int(K)).T @ V.T).T)


@lru_cache(maxsize=16)
def _membership(codes: bytes, K: int) -> sparse.csr_matrix:
    """The ``N x K`` 0/1 matrix of the cluster each query is in (its transpose times values is their cluster sums),
    kept for the last 16 codes: building it took most of a small family's cluster sums, and a family check asks for
    the same one in each of its 200 null families."""
    c = np.frombuffer(codes, dtype=np.int64)
    return sparse.csr_matrix((np.ones(len(c)), (np.arange(len(c)), c)), shape=(len(c), K))


def draw_weights(K: int, B: int, rng: np.random.Generator):
    """Yield blocks ``(K, b)`` of cluster-resampling counts (each column: K draws with replacement),
    through the evaluator's generator (:func:`_kernels._counts_chunk`); B split to bound memory."""
    step = max(1, _BLOCK // max(K, 1))
    for lo in range(0, B, step):
        yield _kernels._counts_chunk(1, K, min(step, B - lo), rng)[0]


def holm(p: np.ndarray) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values (monotone, capped at 1; nan stays nan)."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    m = int(ok.sum())
    if m == 0:
        return out
    pv = p[ok]
    order = np.argsort(pv, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * pv[order])
    res = np.empty(m)
    res[order] = np.minimum(adj, 1.0)
    out[ok] = res
    return out


def family(V: np.ndarray, codes: np.ndarray, K: int, *, estimator: str, level: float, n_resamples: int,
           rng: np.random.Generator, bootstrap: bool = True, pair_test: str = "cr2",
           intervals: bool = True) -> dict[str, Any]:
    """Systems and pairs of one family (see the module docstring).

    Parameters
    ----------
    V : ndarray (S, N)
        Per-query values of ``S`` systems on the same ``N`` queries.
    codes : ndarray (N,)
        Cluster code 0..K-1 of every query.
    estimator : {"micro", "macro"}
        ``macro`` is the mean of cluster means; when every cluster holds one query both are the mean.
    bootstrap : bool
        False skips the simultaneous interval and ``p_maxt`` (nan): the fast path of the validity study
        for Holm alone.
    pair_test : {"cr2", "wild_cluster"}, default: "cr2"
        Micro pairs only. ``cr2``: the CR2 tests with the Bonferroni-bounded cluster-bootstrap max-|t|
        below (the micro CR2 test over-rejects when one document holds a large share of the queries:
        8% at 5% on null pairs of the ANEEL census). ``wild_cluster``: each pair's interval is the hull
        of that CR2 interval and the wild cluster restricted bootstrap interval at Bonferroni's level
        (:func:`._wild.wild_family`, one set of cluster weights for all pairs), and ``p`` the larger of
        the two p-values (:func:`_wild_hull`): separable only where both tests reject. Macro pairs (and
        one-query clusters) under ``wild_cluster``: the guarded Hall cluster-bootstrap family
        (:func:`_macro_family`), which covers where the t family read at Bonferroni's level is too short for
        skewed per-document differences, and rejects 2.7-5.6% of null families at 5% where the earlier hull of
        the t family and a studentized bootstrap rejected 0.6-1.6% on ANEEL (families of two or more pairs: a
        single pair keeps ``compare``'s t interval, which holds at 5%).
    intervals : bool
        False skips the inversion of the wild cluster test (micro ``wild_cluster`` pairs get ``low, high``
        nan): the decisions alone, read from ``p_hull < 1 - level`` (the family's check, which needs no
        interval; half the time at 45 to 190 pairs).

    Returns
    -------
    dict
        ``method`` (of the system intervals), ``systems`` (dict of arrays ``estimate, se, df, low, high``),
        ``ia, ib`` (pair indices, ``a < b``), ``pairs`` (dict of arrays ``diff, se, df, p, p_adj, low, high,
        p_maxt, p_cr2, p_adj_cr2, wins, losses, ties``; ``p_cr2``/``p_adj_cr2`` are the CR2/t test and its Holm
        adjustment, equal to ``p``/``p_adj`` unless ``pair_test="wild_cluster"``), ``crit`` (``c``),
        ``alpha_star``, ``pair_method``.
    """
    if pair_test not in ("cr2", "wild_cluster"):
        raise ValueError(f"`pair_test` must be 'cr2' or 'wild_cluster'; got {pair_test!r}.")
    S, N = V.shape
    n = np.bincount(codes, minlength=K).astype(float)
    s = cluster_sums(V, codes, K)
    singleton = bool((n == 1).all())
    core_est = "macro" if singleton else estimator
    method = "t" if core_est == "macro" else "cr2"
    sys_out = _kernels.interval_batch(np.broadcast_to(n, s.shape), s, cluster_sums(V * V, codes, K),
                                   estimator=core_est, method=method, level=level)
    ia, ib = np.triu_indices(S, 1)
    D = V[ia] - V[ib]
    sd = s[ia] - s[ib]
    pr = _pair_tests(n, sd, cluster_sums(D * D, codes, K), core_est, method, level)
    pr.update(_simultaneous(n, sd, pr, core_est, level, n_resamples, rng, bootstrap, K))
    pr["p_cr2"], pr["p_adj_cr2"] = pr["p"], np.minimum(pr["p_adj"], 1.0)
    pair_method = method
    hull_args = (level, n_resamples, rng, pr["p"], pr["low"], pr["high"], pr["p_maxt"], pr["p_hull"])
    if core_est == "micro" and bootstrap and K >= 2 and pair_test == "wild_cluster" and pr["live"].any():
        *res, pr["alpha_star"] = _wild_hull(n, sd, pr, level, n_resamples, rng, intervals=intervals)
        pair_method = "wild_cluster+cr2"
    elif (core_est == "macro" and bootstrap and K >= 3 and pair_test == "wild_cluster" and len(ia) >= 2
          and pr["live"].any()):
        res = _macro_family(sd / n, pr["live"], *hull_args)
        pair_method = "guarded_hall_max_t"
    else:
        res = (pr["p"], pr["p_adj"], pr["low"], pr["high"], pr["p_maxt"], pr["p_hull"])
    pr["p"], pr["p_adj"], pr["low"], pr["high"], pr["p_maxt"], pr["p_hull"] = res
    if bootstrap and intervals:
        pr["p_hull"] = _on_verdict_side(pr["p_hull"], pr["low"], pr["high"], 1.0 - level)
    pr["p_adj"] = np.minimum(pr["p_adj"], 1.0)
    pairs = {k: pr[k] for k in ("diff", "se", "df", "p", "p_adj", "low", "high", "p_maxt", "p_cr2", "p_adj_cr2",
                                "p_hull")}
    pairs.update(wins=(D > EPS).sum(1), losses=(D < -EPS).sum(1), ties=(np.abs(D) <= EPS).sum(1))
    return {
        "method": method, "pair_method": pair_method, "estimator": "mean" if singleton else estimator,
        "singleton": singleton,
        "systems": {k: sys_out[k] for k in ("estimate", "se", "df", "low", "high")},
        "ia": ia, "ib": ib, "crit": pr["crit"], "alpha_star": pr["alpha_star"], "pairs": pairs,
    }


def _pair_tests(n: np.ndarray, sd: np.ndarray, qd: np.ndarray, core_est: str, method: str,
                level: float) -> dict[str, np.ndarray]:
    """Per pair: ``diff, se, df`` of the CR2 (micro) or t (macro) interval, its two-sided ``p``, Holm's
    ``p_adj``, and ``live`` (pairs with variation: the only ones a bootstrap can say anything about)."""
    pr = _kernels.interval_batch(np.broadcast_to(n, sd.shape), sd, qd, estimator=core_est, method=method,
                              level=level)
    diff, se, df = pr["estimate"], pr["se"], pr["df"]
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = np.where(se > 0, diff / se, np.where(np.abs(diff) > EPS, np.inf, 0.0))
    p = np.where(np.isfinite(df), 2.0 * stats.t.sf(np.abs(tstat), df), np.nan)
    live = se > EPS * np.maximum(1.0, np.abs(diff))
    return {"diff": diff, "se": se, "df": df, "p": p, "p_adj": holm(p), "live": live}


def _simultaneous(n: np.ndarray, sd: np.ndarray, pr: dict, core_est: str, level: float, B: int,
                  rng: np.random.Generator, bootstrap: bool, K: int) -> dict[str, Any]:
    """The Bonferroni-bounded max-|t| family of the CR2/t tests (steps 1-4 of the module docstring):
    ``low, high, p_maxt, p_hull, crit, alpha_star``. Pairs without variation get the point as interval and
    ``p`` as ``p_maxt``; ``bootstrap=False`` leaves every one of them nan."""
    P = len(pr["diff"])
    out: dict[str, Any] = {k: np.full(P, np.nan) for k in ("low", "high", "p_maxt", "p_hull")}
    out["crit"] = out["alpha_star"] = float("nan")
    live, diff, p = pr["live"], pr["diff"], pr["p"]
    if not bootstrap:
        return out
    if live.any() and K >= 2:
        _kernels.check_resamples(B, level, ("cluster_bootstrap",))
        X = sd[live] if core_est == "micro" else sd[live] / n  # cluster sums (micro) or cluster means (macro)
        crit, alpha_star, lo_, hi_, pm, ph = _max_t(X, n, core_est, diff[live], pr["se"][live], pr["df"][live],
                                                    p[live], K, level, B, rng)
        out["crit"], out["alpha_star"] = crit, alpha_star
        for k, v in zip(("low", "high", "p_maxt", "p_hull"), (lo_, hi_, pm, ph)):
            out[k][live] = v
    # pairs without variation: the interval is the point, p_maxt is p (0 or 1)
    out["low"], out["high"] = np.where(live, out["low"], diff), np.where(live, out["high"], diff)
    out["p_maxt"], out["p_hull"] = np.where(live, out["p_maxt"], p), np.where(live, out["p_hull"], p)
    return out


def _wild_hull(n, sd, pr, level, B, rng, joint: str | None = None, intervals: bool = True):
    """Micro pairs: the hull of each pair's CR2 interval and its wild cluster restricted bootstrap (WCR) interval.

    The WCR test of ``d = 0`` keeps its size where CR2's does not (a document holding a large share of
    the queries); the CR2 interval covers where the inverted WCR does not (few documents with any
    difference: the WCR's bootstrap distribution is then bounded and its interval collapses onto 0).
    The hull ``[min(lows), max(highs)]`` covers whenever either covers, and excludes 0 only when both
    tests reject, so its family-wise error is at most the WCR family's. ``p = max(p_cr2, p_wcr)``
    (a pair rejects iff both do), Holm over it, ``p_maxt`` the larger of the two adjusted p-values,
    ``p_hull`` the smallest family level at which the hull excludes 0.

    ``joint`` (default :data:`WILD_JOINT`) sets the level of the two parts. ``"bonferroni"`` (the leaderboard's):
    the CR2 family above (:func:`_simultaneous`) and the WCR intervals at ``(1 - level) / P``. ``"min_p"``: both
    parts at the WCR family's single-step min-p level (:func:`._wild.wild_family`; between Bonferroni's and
    ``1 - level``), kept for the benchmark's comparison (its level and coverage are in the module docstring).
    Returns ``p, p_adj, low, high, p_maxt, p_hull, alpha_star``.
    """
    from ragcov_data.eval.estimates._wild import wild_family, wild_weights

    _kernels.check_resamples(B, level, ("wild_cluster",))
    joint = joint or WILD_JOINT
    live = pr["live"]
    P = int(live.sum())
    f = wild_family(n, sd[live], level, wild_weights(len(n), B, rng), joint=joint, invert=intervals)
    if joint == "bonferroni":
        return _bonferroni_hull(f, pr)
    a_star = f["alpha_star"]
    p, low, high = pr["p"].copy(), pr["low"].copy(), pr["high"].copy()
    p_maxt, p_hull = pr["p_maxt"].copy(), pr["p_hull"].copy()
    # the CR2 part at the same per-comparison level
    half = stats.t.isf(a_star / 2.0, pr["df"][live]) * pr["se"][live]
    d = pr["diff"][live]
    p_cr2 = pr["p"][live]
    minp = f["minp"] if f["minp"] is not None else np.array([np.inf])  # no live WCR pair: no min-p rejection
    Bw = len(minp)
    # CR2 excludes 0 iff p_cr2 < alpha*(a) = min(a, max(minp[floor(a B)] - 1/(2B), a / P)): iff a > p_cr2 and
    # (a >= j / B, j = the replicates with minp <= p_cr2 + 1/(2B), or a > P p_cr2); the largest float below
    # j / B makes "<" exact
    j = np.searchsorted(minp, p_cr2 + 0.5 / Bw, side="right")
    h_cr2 = np.maximum(p_cr2, np.minimum(np.nextafter(j / Bw, -np.inf), np.minimum(1.0, P * p_cr2)))
    # WCR excludes 0 iff p_wcr <= alpha*(a): iff a >= its min-p adjusted p-value (f["p_maxt"])
    h_wcr = np.nextafter(f["p_maxt"], -np.inf)
    p[live] = np.maximum(p_cr2, f["p"])
    low[live] = np.minimum(d - half, f["low"])
    high[live] = np.maximum(d + half, f["high"])
    p_maxt[live] = np.maximum(np.maximum(p_cr2, np.minimum(j / Bw, np.minimum(1.0, P * p_cr2))), f["p_maxt"])
    p_hull[live] = np.clip(np.maximum(h_cr2, h_wcr), 0.0, 1.0)
    return p, np.minimum(holm(p), 1.0), low, high, p_maxt, p_hull, a_star


def _bonferroni_hull(f: dict, pr: dict):
    """The leaderboard's micro hull (:func:`_wild_hull`, ``joint="bonferroni"``): the CR2 family's own
    Bonferroni-bounded max-|t| intervals and the WCR intervals at Bonferroni's level."""
    live = pr["live"]
    p, low, high, p_maxt = pr["p"].copy(), pr["low"].copy(), pr["high"].copy(), pr["p_maxt"].copy()
    p[live] = np.maximum(p[live], f["p"])
    low[live] = np.minimum(low[live], f["low"])
    high[live] = np.maximum(high[live], f["high"])
    p_maxt[live] = np.maximum(p_maxt[live], f["p_maxt"])
    p_hull = pr["p_hull"].copy()
    p_hull[live] = np.maximum(p_hull[live], np.nextafter(np.minimum(1.0, live.sum() * f["p"]), -np.inf))
    return p, np.minimum(holm(p), 1.0), low, high, p_maxt, p_hull, pr["alpha_star"]


def _macro_family(X, live, level, B, rng, p, low, high, p_maxt, p_hull):
    """Macro pairs: the guarded Hall cluster-bootstrap family (:func:`._hall.hall_family`) replaces the t family
    for the live pairs (a pair without variation keeps its point and ``p``). ``X`` (P, K) holds every pair's
    per-cluster mean difference. Every p column is the bootstrap family's: ``p`` the pair's own bootstrap p-value,
    ``p_maxt``/``p_hull`` the adjusted one its interval agrees with, Holm over ``p`` as ``p_adj``. ``B`` was checked
    by :func:`_simultaneous`, which runs first on the same pairs."""
    f = hall_family(X[live], level, B, draw_weights(X.shape[1], B, rng))
    p, low, high, p_maxt, p_hull = p.copy(), low.copy(), high.copy(), p_maxt.copy(), p_hull.copy()
    p[live], low[live], high[live], p_maxt[live], p_hull[live] = f["p"], f["low"], f["high"], f["p_maxt"], f["p_hull"]
    return p, np.minimum(holm(p), 1.0), low, high, p_maxt, p_hull


def _on_verdict_side(p_hull: np.ndarray, low: np.ndarray, high: np.ndarray, alpha: float) -> np.ndarray:
    """``p_hull`` such that, where it is a number, ``p_hull < alpha`` exactly when the interval excludes 0.

    Where the two differ by rounding only (within :data:`_BOUNDARY`: a quantile in floating point) the value is
    read on the interval's side. Where they differ by more (the wild test inverted on a grid of candidate
    values can exclude 0 by a hair while its p-value at 0 sits above its level, or the reverse) the
    adjusted p-value is not one number the interval agrees with: it is left out (nan; ``null`` in JSON) and
    the verdict is the interval's."""
    excl = (low > 0) | (high < 0)
    ok = np.isfinite(p_hull)
    wrong = ok & (excl != (p_hull < alpha))
    near = wrong & (np.abs(p_hull - alpha) <= _BOUNDARY)
    out = p_hull.copy()
    out[near & excl] = np.nextafter(alpha, -np.inf)
    out[near & ~excl] = alpha
    out[wrong & ~near] = np.nan
    return out


def rank_bounds(better: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank interval of each system from a significance matrix ``better[i, j]`` (i significantly above j):
    ``low = 1 + #{j significantly above i}``, ``high = S - #{j significantly below i}``."""
    S = better.shape[0]
    return 1 + better.sum(0), S - better.sum(1)


def letters(order: list[int], separated: np.ndarray) -> list[str]:
    """Compact letter display (Piepho 2004, insert-absorb): systems sharing a letter are not separated.

    ``order`` lists system indices best first; ``separated[i, j]`` is True when i and j differ
    significantly. Letters run a, b, c, ... by the best system of each group.
    """
    groups: list[set[int]] = [set(order)]
    S = len(order)
    for x in range(S):
        for y in range(x + 1, S):
            i, j = order[x], order[y]
            if not separated[i, j]:
                continue
            new: list[set[int]] = []
            for g in groups:
                if i in g and j in g:
                    new += [g - {i}, g - {j}]
                else:
                    new.append(g)
            # absorb: drop groups contained in another (keep one copy of equal groups)
            uniq = [g for k, g in enumerate(new) if g and g not in new[:k]]
            groups = [g for g in uniq if not any(g < h for h in uniq)]
    rank = {sys: k for k, sys in enumerate(order)}
    groups.sort(key=lambda g: sorted(rank[m] for m in g))
    names = [_letter(k) for k in range(len(groups))]
    return ["".join(nm for nm, g in zip(names, groups) if sys in g) for sys in range(S)]


def _letter(k: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    return alphabet[k] if k < 26 else alphabet[k // 26 - 1] + alphabet[k % 26]


def _max_t(X: np.ndarray, n: np.ndarray, estimator: str, diff, se, df, p, K: int, level: float, B: int,
           rng: np.random.Generator):
    """Steps 1-4 of the module docstring for the pairs whose cluster statistics are ``X`` (P, K): one block
    of resampling counts at a time, every pair's replicate in one product ``X @ W``."""
    dev = np.empty((len(diff), B))
    lo = 0
    for W in draw_weights(K, B, rng):
        b = W.shape[1]
        G = X @ W
        dev[:, lo:lo + b] = (G / (n @ W) if estimator == "micro" else G / K) - diff[:, None]
        lo += b
    sdb = dev.std(1, ddof=1)
    use = sdb > EPS * np.maximum(1.0, np.abs(diff))
    M = np.sort((np.abs(dev[use]) / sdb[use, None]).max(0))
    crit = float(np.quantile(M, level))
    m = len(diff)
    alpha_star = min(float(2.0 * stats.norm.sf(crit)), (1.0 - level) / m)  # never above Bonferroni's
    half = stats.t.isf(alpha_star / 2.0, df) * se
    with np.errstate(divide="ignore"):
        z = stats.norm.isf(p / 2.0)
    p_boot = (1.0 + len(M) - np.searchsorted(M, z, side="left")) / (len(M) + 1.0)
    p_maxt = np.maximum(p_boot, np.minimum(1.0, m * p))
    # the interval excludes 0 iff p < alpha* = min(2 (1 - Phi(quantile(M, 1 - a))), a / m), i.e. iff a exceeds both
    # m p and 1 - L(z), L(z) the largest level whose quantile of M lies below z: its exact adjusted p-value
    p_hull = np.maximum(np.minimum(1.0, m * p), 1.0 - _quantile_level(M, z))
    return crit, alpha_star, diff - half, diff + half, p_maxt, p_hull


def _quantile_level(M: np.ndarray, z: np.ndarray) -> np.ndarray:
    """For sorted ``M`` (B,) and each ``z``: ``sup{L in [0, 1]: np.quantile(M, L) < z}`` (0 if none), so that
    ``z > np.quantile(M, L)`` exactly when ``L < _quantile_level(M, z)`` (linear interpolation, B - 1 steps)."""
    z = np.asarray(z, float)
    B = len(M)
    if B == 0:
        return np.zeros(z.shape)
    if B == 1:
        return np.where(z > M[0], 1.0, 0.0)
    i = np.searchsorted(M, z, side="left") - 1  # last index with M[i] < z
    out = np.zeros(z.shape)
    top = i >= B - 1
    out[top] = 1.0
    mid = (i >= 0) & ~top
    ii = i[mid]
    gap = M[ii + 1] - M[ii]
    frac = np.where(gap > 0, (z[mid] - M[ii]) / np.where(gap > 0, gap, 1.0), 0.0)
    out[mid] = (ii + frac) / (B - 1)
    return np.clip(out, 0.0, 1.0)
