"""Candidate micro (ratio) interval methods for documents of wildly unequal size, for ``bench_micro_heavy.py``.

Every function takes a batch of ``R`` samples of ``K`` documents as cluster sums: ``n`` (queries per document)
and ``s`` (sum of the per-query values), each ``(R, K)``, and returns ``(R,)`` arrays. The target is the ratio
``r = sum(s) / sum(n)``; ``e_k = s_k - r n_k`` are the linearised residuals. None of these is a ragcov method:
they are candidates measured against CR2 (``eval/estimates/_kernels.py``).

- :func:`cr3` — leave-one-document-out (cluster jackknife) variance of the ratio, ``(K-1)/K sum_k (r_(k) - r)^2``
  with ``r_(k) = (S - s_k) / (N - n_k)`` (CV3 of MacKinnon, Nielsen & Webb 2023; equal to the intercept-only
  CR3 ``sum_k e_k^2 / (1 - f_k)^2 / N^2`` times ``(K-1)/K``), t on ``K - 1`` df.
- :func:`fieller` — the set ``{theta : (S - theta N)^2 <= t^2 V(theta)}``, ``V(theta) = V_SS - 2 theta V_SN +
  theta^2 V_NN`` from the cluster-robust variances of the two totals (``K`` times the sample covariance of the
  ``(s_k, n_k)``), t on ``K - 1`` df; a quadratic in ``theta``. When its leading coefficient is not positive the
  set is unbounded (two rays or the whole line): :func:`fieller_contains` tests membership exactly, the interval
  endpoints are then ``-inf, +inf``.
- :func:`boot_stats` — one cluster bootstrap of a batch giving what the two bootstrap candidates need:
  :func:`hall_ratio` (studentized bootstrap of Hall's 1992 skewness-removing transform of the CR1 ``t`` of the
  ratio, skewness of the ``e_k``) and :func:`calibrated_cr2` (the CR2 ``t`` interval whose nominal level is
  calibrated so that it covers ``r`` in the share ``level`` of the sample's own bootstrap replicates; the CR2
  interval is closed-form, so the inner level of a double bootstrap is exact and only one level of resampling
  is needed).
- :func:`el_ratio` — empirical likelihood for the estimating equation ``sum_k (s_k - theta n_k) = 0`` over
  documents (Owen 2001, ch. 3), calibrated by ``F(1, K-1)``.

References: Fieller, E. C. (1954). Some problems in interval estimation. JRSS B 16, 175-185. Hall, P. (1992). On
the removal of skewness by transformation. JRSS B 54, 221-228. Beran, R. (1987). Prepivoting to reduce level
error of confidence sets. Biometrika 74, 457-468. Owen, A. B. (2001). Empirical Likelihood. Chapman & Hall.
MacKinnon, J. G., Nielsen, M. O. & Webb, M. D. (2023). Cluster-robust inference: a guide to empirical practice.
J. Econometrics 232, 272-299.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from ragcov_data.eval.comparisons._hall import hall_inverse
from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval.estimates._wild import wild_interval, wild_weights

__all__ = ["cr3", "fieller", "fieller_contains", "boot_stats", "hall_ratio", "calibrated_cr2", "el_ratio",
           "el_stat", "wild_webb", "cr2", "cr2_at_level", "hall_t", "tune_cr2_level"]


def _2d(a: Any) -> np.ndarray:
    return np.atleast_2d(np.asarray(a, dtype=float))


def cr2(n: Any, s: Any, level: float = 0.95) -> dict[str, np.ndarray]:
    """ragcov's micro CR2 interval (the reference every candidate is read against)."""
    n, s = _2d(n), _2d(s)
    o = _kernels.interval_batch(n, s, s, estimator="micro", method="cr2", level=level)
    return {"low": o["low"], "high": o["high"], "se": o["se"], "df": o["df"], "estimate": o["estimate"]}


def cr2_at_level(n: Any, s: Any, level: np.ndarray | float) -> dict[str, np.ndarray]:
    """The CR2 interval at a per-sample nominal ``level`` (the calibrated and the tuned CR2)."""
    o = cr2(n, s)
    with np.errstate(invalid="ignore"):
        c = stats.t.ppf(0.5 + np.asarray(level) / 2.0, o["df"])
    return {"low": o["estimate"] - c * o["se"], "high": o["estimate"] + c * o["se"]}


def cr3(n: Any, s: Any, level: float = 0.95) -> dict[str, np.ndarray]:
    """Cluster jackknife (CV3) interval of the ratio: ``r +- t(K-1) se``, ``se^2 = (K-1)/K sum (r_(k) - r)^2``."""
    n, s = _2d(n), _2d(s)
    K = n.shape[1]
    N, S = n.sum(1, keepdims=True), s.sum(1, keepdims=True)
    r = S / N
    loo = (S - s) / (N - n)  # r_(k): every document but k
    se = np.sqrt((K - 1) / K * ((loo - r) ** 2).sum(1))
    c = stats.t.ppf(0.5 + level / 2.0, K - 1)
    return {"estimate": r[:, 0], "se": se, "low": r[:, 0] - c * se, "high": r[:, 0] + c * se}


def fieller(n: Any, s: Any, level: float = 0.95) -> dict[str, np.ndarray]:
    """Fieller set of ``sum(s) / sum(n)`` with cluster-robust variances of the totals, t on ``K - 1`` df.

    Returns the quadratic ``a theta^2 + b theta + c <= 0`` (``a, b, c``), ``low, high`` (the roots when the set
    is an interval, ``-inf, +inf`` otherwise) and ``bounded``.
    """
    n, s = _2d(n), _2d(s)
    K = n.shape[1]
    N, S = n.sum(1), s.sum(1)
    dn, ds = n - n.mean(1, keepdims=True), s - s.mean(1, keepdims=True)
    f = K / (K - 1.0)  # K * sample covariance of the cluster values = variance of the total
    vss, vsn, vnn = f * (ds * ds).sum(1), f * (ds * dn).sum(1), f * (dn * dn).sum(1)
    t2 = stats.t.ppf(0.5 + level / 2.0, K - 1) ** 2
    a, b, c = N * N - t2 * vnn, -2.0 * (S * N - t2 * vsn), S * S - t2 * vss
    disc = b * b - 4.0 * a * c
    bounded = (a > 0) & (disc >= 0)
    root = np.sqrt(np.where(bounded, disc, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        # the numerically stable pair of roots: q = -(b + sign(b) root) / 2, roots q / a and c / q
        qq = -0.5 * (b + np.copysign(root, b))
        r1, r2 = qq / a, np.where(qq != 0, c / qq, qq / a)
    low = np.where(bounded, np.minimum(r1, r2), -np.inf)
    high = np.where(bounded, np.maximum(r1, r2), np.inf)
    return {"a": a, "b": b, "c": c, "low": low, "high": high, "bounded": bounded}


def fieller_contains(f: dict[str, np.ndarray], theta: Any) -> np.ndarray:
    """Whether ``theta`` lies in the Fieller set (exact for bounded and unbounded sets alike)."""
    th = np.asarray(theta, dtype=float)
    val = f["a"] * th * th + f["b"] * th + f["c"]
    return val <= 1e-12 * (np.abs(f["a"] * th * th) + np.abs(f["c"]) + 1.0)


def boot_stats(n: Any, s: Any, counts: np.ndarray) -> dict[str, np.ndarray]:
    """Per replicate ``(R, B)`` of a cluster bootstrap (``counts`` (R, K, B): times each document is drawn):
    the ratio ``r*``, the CR1 and CR2 standard errors, CR2's Satterthwaite df and the skewness ``g*`` of the
    replicate's residuals ``e*_k = s_k - r* n_k`` (each copy of a drawn document its own cluster)."""
    n, s = _2d(n), _2d(s)
    K = n.shape[1]
    w = counts.astype(np.float64)
    N = np.einsum("rk,rkb->rb", n, w)
    r = np.einsum("rk,rkb->rb", s, w) / N
    e = s[:, :, None] - r[:, None, :] * n[:, :, None]  # (R, K, B)
    e2 = w * e * e
    E2, E3 = e2.sum(1), (e2 * e).sum(1)
    f = n[:, :, None] / N[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        cr2v = (e2 / (1.0 - f)).sum(1) / (N * N)
        tt = f * f / (1.0 - f)
        st, st2, sf2 = (w * tt).sum(1), (w * tt * tt).sum(1), (w * f * f).sum(1)
        df = 1.0 / (sf2 + st * st - st2)  # _kernels.cr2_df with each copy a cluster
        sd = np.sqrt(E2 / (K - 1))
        g = np.where(sd > 0, (E3 / K) / sd ** 3, 0.0)
    return {"r": r, "se1": np.sqrt(K / (K - 1) * E2) / N, "se2": np.sqrt(cr2v), "df2": df, "g": g}


def _skew(n: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ratio, CR1 standard error and the skewness of the residuals ``e_k`` of each sample."""
    K = n.shape[1]
    N = n.sum(1)
    r = s.sum(1) / N
    e = s - r[:, None] * n
    sd = np.sqrt((e * e).sum(1) / (K - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(sd > 0, (e ** 3).mean(1) / sd ** 3, 0.0)
    return r, np.sqrt(K / (K - 1) * (e * e).sum(1)) / N, g


def hall_t(r_b: np.ndarray, r: np.ndarray, se_b: np.ndarray, g_b: np.ndarray, K: int) -> np.ndarray:
    """Hall's transform ``sqrt(K) (W + g W^2/3 + g^2 W^3/27 + g/(6K))`` of ``W = (r_b - r) / (sqrt(K) se_b)``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        W = (r_b - r) / (np.sqrt(K) * se_b)
        return np.sqrt(K) * (W + g_b * W ** 2 / 3 + g_b ** 2 * W ** 3 / 27 + g_b / (6 * K))


def hall_ratio(n: Any, s: Any, boot: dict[str, np.ndarray], level: float = 0.95) -> dict[str, np.ndarray]:
    """Bootstrap of Hall's transformed CR1 ``t`` of the ratio, inverted in closed form (:func:`hall_inverse`):
    ``equal`` reads the two tails of ``T*``, ``symmetric`` the ``level`` quantile of ``|T*|``. Replicates with a
    zero SE (every drawn document the same rate) are dropped."""
    n, s = _2d(n), _2d(s)
    K = n.shape[1]
    r, se, g = _skew(n, s)
    T = hall_t(boot["r"], r[:, None], boot["se1"], boot["g"], K)
    T = np.where(boot["se1"] > 1e-12, T, np.nan)
    a = (1.0 - level) / 2.0
    lo_q, hi_q = np.nanquantile(T, [a, 1.0 - a], axis=1)
    c = np.nanquantile(np.abs(T), level, axis=1)
    sd = np.sqrt(K) * se  # W = (r - theta) / sd
    out = {}
    for name, (ql, qh) in {"equal": (lo_q, hi_q), "symmetric": (-c, c)}.items():
        w_lo, w_hi = hall_inverse(ql / np.sqrt(K), g, K), hall_inverse(qh / np.sqrt(K), g, K)
        out[name] = {"low": r - w_hi * sd, "high": r - w_lo * sd}
    return out


def calibrated_cr2(n: Any, s: Any, boot: dict[str, np.ndarray], level: float = 0.95
                   ) -> dict[str, np.ndarray]:
    """CR2 interval at the nominal level ``lam`` that covers the sample's ratio in the share ``level`` of its
    bootstrap replicates: replicate ``b`` covers at level ``2 F_df*(|t*_b|) - 1`` and ``lam`` is the ``level``
    order statistic of those (Beran's prepivoting of the CR2 t)."""
    n, s = _2d(n), _2d(s)
    r = s.sum(1) / n.sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(boot["r"] - r[:, None]) / boot["se2"]
        need = np.where(boot["se2"] > 1e-12, 2.0 * stats.t.cdf(t, boot["df2"]) - 1.0, np.nan)
        need = np.where((boot["se2"] > 1e-12) | (np.abs(boot["r"] - r[:, None]) > 1e-12), need, 0.0)
    need = np.sort(np.nan_to_num(need, nan=1.0), axis=1)
    B = need.shape[1]
    lam = need[:, min(B, int(np.ceil(level * (B + 1)))) - 1]
    out = cr2_at_level(n, s, lam)
    out["lam"] = lam
    return out


def tune_cr2_level(n: Any, s: Any, truth: float, level: float = 0.95) -> float:
    """The one nominal CR2 level that covers ``truth`` in the share ``level`` of the samples given (a population
    tuned critical value, to be used on other populations only)."""
    o = cr2(n, s)
    need = 2.0 * stats.t.cdf(np.abs(o["estimate"] - truth) / o["se"], o["df"]) - 1.0
    return float(np.quantile(need, level))


def el_stat(n: Any, s: Any, theta: Any, iters: int = 64) -> np.ndarray:
    """``-2 log`` empirical likelihood ratio of ``sum_k (s_k - theta n_k) = 0`` per sample (``inf`` outside the
    convex hull). The Lagrange multiplier solves ``sum d_k / (1 + lam d_k) = 0`` (decreasing in ``lam``) by
    bisection on its open domain ``1 + lam d_k > 0``."""
    n, s = _2d(n), _2d(s)
    d = s - np.asarray(theta, dtype=float).reshape(-1, 1) * n
    scale = np.abs(d).max(1, keepdims=True)
    d = d / np.where(scale > 0, scale, 1.0)
    dmax, dmin = d.max(1), d.min(1)
    inside = (dmax > 0) & (dmin < 0)
    with np.errstate(divide="ignore"):
        lo = np.where(inside, -1.0 / dmax, 0.0)
        hi = np.where(inside, -1.0 / dmin, 0.0)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        gsum = (d / (1.0 + mid[:, None] * d)).sum(1)
        lo, hi = np.where(gsum > 0, mid, lo), np.where(gsum > 0, hi, mid)
    lam = 0.5 * (lo + hi)
    with np.errstate(invalid="ignore", divide="ignore"):
        val = 2.0 * np.log1p(lam[:, None] * d).sum(1)
    zero = (dmax == 0) & (dmin == 0)
    return np.where(inside, val, np.where(zero, 0.0, np.inf))


def el_ratio(n: Any, s: Any, level: float = 0.95, iters: int = 48) -> dict[str, np.ndarray]:
    """Empirical-likelihood interval ``{theta : el_stat <= F(1, K-1) quantile}`` (an interval: the statistic
    rises monotonically from 0 at the ratio to ``inf`` at the extreme document rates), endpoints by bisection."""
    n, s = _2d(n), _2d(s)
    K = n.shape[1]
    crit = stats.f.ppf(level, 1, K - 1)
    r = s.sum(1) / n.sum(1)
    p = s / n
    out = {}
    for name, edge in (("low", p.min(1)), ("high", p.max(1))):
        ok, bad = r.copy(), edge.copy()  # ok: inside the set, bad: outside (the hull edge)
        for _ in range(iters):
            mid = 0.5 * (ok + bad)
            acc = el_stat(n, s, mid) <= crit
            ok, bad = np.where(acc, mid, ok), np.where(acc, bad, mid)
        out[name] = 0.5 * (ok + bad)
    return out


def wild_webb(n: Any, s: Any, level: float, B: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """ragcov's wild cluster restricted bootstrap (:mod:`._wild`, test inversion) with Webb's six-point weights
    at every K (ragcov uses them only up to 12 documents), a fresh weight draw for every 32 samples."""
    n, s = _2d(n), _2d(s)
    K = n.shape[1]
    _, _, low, high = wild_interval(n, s, level, lambda: wild_weights(K, B, rng, kind="webb"))
    return {"low": low, "high": high}
