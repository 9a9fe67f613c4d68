"""Wild cluster restricted bootstrap (WCR) for a mean clustered by document: test, interval, family.

Why: the CR-type ``t`` test of a ratio (micro) mean over-rejects when a few documents hold a large share
of the queries (one ANEEL document holds 18%): its reference ``t`` distribution assumes a variance
estimate that is nearly chi-square, which a sum dominated by one or two clusters is not. The wild cluster
bootstrap with the null imposed keeps its size there (MacKinnon & Webb 2017).

Model. The micro mean is the OLS intercept of ``y_i = mu + e_i`` (one row per query) clustered by
document; the macro mean is the intercept of ``p_d = mu + e_d`` (one row per document, ``n_d = 1``). Both
are handled from cluster sums ``n_g`` (rows in cluster ``g``) and ``s_g`` (sum of ``y`` over the cluster):
``mu_hat = S / N``, cluster scores ``u_g = s_g - mu_hat n_g`` and the CR1 variance
``se^2 = K/(K-1) sum u_g^2 / N^2`` (the factor ``(N-1)/(N-k)`` of statsmodels / wildboottest is 1 for an
intercept-only model).

Test of ``H0: mu = mu0`` (WCR, bootstrap type "11" of Roodman et al. 2019). Restricted residuals
``y_i - mu0`` give cluster sums ``E_g = s_g - mu0 n_g``. Bootstrap sample ``b`` multiplies every cluster's
residuals by one weight ``v_gb`` (Rademacher ``+-1``, or Webb's six points ``+-sqrt(1/2), +-1,
+-sqrt(3/2)``): ``y*_i = mu0 + v_gb (y_i - mu0)``. Its estimate is ``mu*_b = mu0 + A_b / N`` with
``A_b = sum_g v_gb E_g``; its cluster scores ``U_gb = v_gb E_g - n_g A_b / N``; its statistic
``t*_b = A_b / sqrt(K/(K-1) sum_g U_gb^2)``, against the observed ``t = (S - mu0 N) / sqrt(K/(K-1) sum u_g^2)``.
The p-value is the share of ``|t*_b| >= |t|`` (ties count as exceeding, so that under full enumeration
the test is exact for symmetric errors; wildboottest counts strict exceedances only). Every sum over
clusters is one matrix product with the ``(K, B)`` weights, precomputed once, so ``t*`` at any ``mu0``
costs ``O(B)``: ``sum_g v^2 E^2 = ss2 - 2 mu0 sn2 + mu0^2 nn2`` and ``sum_g v E n = sn1 - mu0 nn1``.

Interval by test inversion: ``{mu0 : p(mu0) > 1 - level}`` with the same weights at every ``mu0``; each
endpoint is found by doubling a bracket outward from ``mu_hat`` (where ``p = 1``) and bisecting
(fwildclusterboot's approach: grid then root search). ``p`` is a step function, so endpoints are
determined to ``1e-6 * se`` (far below printed precision).

Weights. Rademacher weights give ``2^K`` distinct samples; when ``2^K <= B`` all of them are enumerated
(deterministic, as wildboottest and fwildclusterboot do). With few clusters (``K <= 12``) Rademacher
p-values take few values, so Webb's six-point weights are the default there (MacKinnon & Webb 2017,
Webb 2023).

Family (many pairs, one set of weights): every pair's statistic ``t*_pb`` is computed with the null
``d_p = 0`` imposed for all pairs at once and the *same* cluster weights, so the bootstrap carries the
dependence between pairs; ``M_b = max_p |t*_pb|``, the critical value ``c`` is the ``level`` quantile of
``M``, the simultaneous interval of pair ``p`` is ``d_p +- c se_p`` (CR1 se), and the single-step
adjusted p-value is the share of ``M_b >= |t_p|``. A pair is separable exactly when its interval
excludes 0 (``|t_p| > c``).

References
----------
MacKinnon, J. G. & Webb, M. D. (2017). Wild bootstrap inference for wildly different cluster sizes.
J. Applied Econometrics 32(2), 233-254.
Roodman, D., Nielsen, M. O., MacKinnon, J. G. & Webb, M. D. (2019). Fast and wild: bootstrap inference in
Stata using boottest. Stata Journal 19(1), 4-60.
Webb, M. D. (2023). Reworking wild bootstrap-based inference for clustered errors. Canadian J. Economics
56(3), 839-858.
Westfall, P. H. & Young, S. S. (1993). Resampling-Based Multiple Testing. Wiley (single-step max-T).
"""
from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np

__all__ = ["wild_weights", "WildStats", "wild_pvalue", "wild_interval", "wild_family", "minp_counts", "minp_level",
           "WEBB_MAX_K"]

#: Up to this many clusters the default weights are Webb's six-point distribution.
WEBB_MAX_K = 12
_WEBB = np.concatenate([-np.sqrt(np.array([3.0, 2.0, 1.0]) / 2), np.sqrt(np.array([1.0, 2.0, 3.0]) / 2)])
#: Relative tolerance under which ``|t*| = |t|`` counts as a tie (exceeding).
_TIE = 1e-10


def wild_weights(K: int, B: int, rng: Any = None, kind: str = "auto") -> np.ndarray:
    """``(K, B')`` cluster weights: Rademacher (enumerated when ``2^K <= B``) or Webb six-point.

    ``kind="auto"`` picks Webb for ``K <=`` :data:`WEBB_MAX_K`, Rademacher otherwise. With enumeration
    ``B' = 2^K`` (columns in the order of ``itertools.product([-1, 1], repeat=K)``, as wildboottest).
    """
    if kind == "auto":
        kind = "webb" if K <= WEBB_MAX_K else "rademacher"
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    if kind == "rademacher":
        if K <= 20 and 2 ** K <= B:
            return np.array(list(product([-1.0, 1.0], repeat=K))).T
        return gen.integers(0, 2, size=(K, B)).astype(np.float64) * 2.0 - 1.0
    if kind == "webb":
        return _WEBB[gen.integers(0, 6, size=(K, B))]
    raise ValueError(f"`kind` must be 'auto', 'rademacher' or 'webb'; got {kind!r}.")


class WildStats:
    """Precomputed products of a batch of samples with one set of weights (see the module docstring).

    Parameters
    ----------
    n, s : ndarray (R, K)
        Rows (queries) and sum of values per cluster; ``n = 1`` and ``s`` = cluster means for macro.
    v : ndarray (K, B)
        Cluster weights (:func:`wild_weights`).
    """

    def __init__(self, n: np.ndarray, s: np.ndarray, v: np.ndarray) -> None:
        n = np.atleast_2d(np.asarray(n, dtype=float))
        s = np.atleast_2d(np.asarray(s, dtype=float))
        s = np.ascontiguousarray(s)
        n = np.ascontiguousarray(np.broadcast_to(n, s.shape))  # BLAS needs real strides (not a broadcast view)
        v = np.ascontiguousarray(v, dtype=float)
        self.K = s.shape[1]
        self.N = n.sum(1)
        self.S = s.sum(1)
        self.est = self.S / self.N
        self.NN = (n * n).sum(1)
        u = s - self.est[:, None] * n
        self.uu = (u * u).sum(1)
        sn = s * n
        self.a1, self.c1 = s @ v, n @ v
        self.sn1, self.nn1 = sn @ v, (n * n) @ v
        if np.all(np.abs(v) == 1.0):  # Rademacher: v^2 = 1, the squared sums do not depend on b
            self.ss2 = (s * s).sum(1)[:, None]
            self.sn2 = sn.sum(1)[:, None]
            self.nn2 = self.NN[:, None]
        else:
            v2 = v * v
            self.ss2, self.sn2, self.nn2 = (s * s) @ v2, sn @ v2, (n * n) @ v2
        self.ck = self.K / (self.K - 1.0) if self.K > 1 else np.nan

    @property
    def se(self) -> np.ndarray:
        """CR1 standard error of the mean, shape (R,)."""
        return np.sqrt(self.ck * self.uu) / self.N

    def tstats(self, mu0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Observed ``t`` (R,) and bootstrap ``t*`` (R, B) of ``H0: mu = mu0`` (``mu0`` of shape (R,))."""
        mu0 = np.broadcast_to(np.asarray(mu0, dtype=float), self.N.shape)[:, None]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            A = self.a1 - mu0 * self.c1
            d = A / self.N[:, None]
            su = (self.ss2 - 2.0 * mu0 * self.sn2 + mu0 * mu0 * self.nn2) - 2.0 * d * (self.sn1 - mu0 * self.nn1) \
                + d * d * self.NN[:, None]
            su = np.maximum(su, 0.0)
            tb = A / np.sqrt(self.ck * su)
            tb = np.where(su > 0, tb, np.where(A == 0, 0.0, np.copysign(np.inf, A)))
            t = (self.S - mu0[:, 0] * self.N) / np.sqrt(self.ck * self.uu)
        return t, tb

    def _poly(self) -> tuple[np.ndarray, ...]:
        """Coefficients in ``mu0`` of ``A_b^2`` and ``sum_g U_gb^2`` (each a quadratic), computed once."""
        if not hasattr(self, "_coef"):
            N = self.N[:, None]
            NN = self.NN[:, None]
            a, c = self.a1, self.c1
            b0, b1, b2 = a * a, -2.0 * a * c, c * c
            s0 = self.ss2 - 2.0 * a * self.sn1 / N + NN * b0 / (N * N)
            s1 = -2.0 * self.sn2 + 2.0 * (a * self.nn1 + c * self.sn1) / N + NN * b1 / (N * N)
            s2 = self.nn2 - 2.0 * c * self.nn1 / N + NN * b2 / (N * N)
            self._coef = (b0, b1, b2, s0, s1, s2)
        return self._coef

    def pvalue(self, mu0: np.ndarray) -> np.ndarray:
        """Symmetric WCR p-value ``mean_b(|t*_b| >= |t|)`` (ties count), shape (R,).

        Evaluated without square roots: ``|t*_b| >= |t|`` iff ``A_b^2 >= t^2 (K/(K-1)) sum_g U_gb^2``, both
        sides quadratics in ``mu0`` whose coefficients are computed once (:meth:`_poly`), so each ``mu0``
        costs a few passes over the ``(R, B)`` arrays (the interval's root search calls this often).
        """
        mu0 = np.broadcast_to(np.asarray(mu0, dtype=float), self.N.shape)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            t = (self.S - mu0 * self.N) / np.sqrt(self.ck * self.uu)
            k = (t * t * self.ck * (1.0 - _TIE) ** 2)[:, None]
            m = mu0[:, None]
            b0, b1, b2, s0, s1, s2 = self._poly()
            lhs = (b2 - k * s2) * m
            lhs += b1 - k * s1
            lhs *= m
            lhs += b0 - k * s0
            hit = lhs >= 0.0  # ties (within _TIE) count as exceeding
        return hit.mean(1)


def wild_pvalue(n: Any, s: Any, mu0: Any, v: np.ndarray) -> np.ndarray:
    """WCR p-values of ``H0: mu = mu0`` for a batch (see :class:`WildStats`)."""
    return WildStats(n, s, v).pvalue(np.asarray(mu0, dtype=float))


def wild_interval(n: Any, s: Any, level: float, v: Any, *, chunk: int = 32,
                  tol: float = 1e-6) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Test-inversion WCR interval ``{mu0: p(mu0) > 1 - level}`` for a batch.

    ``v`` is a ``(K, B)`` weight matrix, or a callable returning a fresh one for every ``chunk`` of
    samples: one weight matrix shared by many samples makes their tests dependent (the test is exact
    on average over weight draws, not given one draw), so a simulation over many samples should give
    each small chunk its own draw.

    Returns ``(estimate, se, low, high)``, each of shape (R,). ``se`` is the CR1 standard error; samples
    whose CR1 variance is 0 get the point interval ``[est, est]``; an endpoint the doubling never brackets
    (p never falls to ``1 - level``, e.g. too few distinct weights) is ``-inf`` / ``+inf``.
    """
    n = np.atleast_2d(np.asarray(n, dtype=float))
    s = np.atleast_2d(np.asarray(s, dtype=float))
    n = np.broadcast_to(n, s.shape)
    R = s.shape[0]
    alpha = 1.0 - level
    est, se = np.empty(R), np.empty(R)
    low, high = np.empty(R), np.empty(R)
    for lo in range(0, R, chunk):
        hi = min(R, lo + chunk)
        w = WildStats(n[lo:hi], s[lo:hi], v() if callable(v) else v)
        e, sd = w.est, w.se
        est[lo:hi], se[lo:hi] = e, sd
        for sign, out in ((-1.0, low), (1.0, high)):
            out[lo:hi] = _endpoint(w, e, sd, sign, alpha, tol)
    return est, se, low, high


def _endpoint(w: WildStats, est: np.ndarray, se: np.ndarray, sign: float, alpha: float, tol: float) -> np.ndarray:
    """One endpoint per sample: double ``m`` until ``p(est + sign m se) <= alpha``, then bisect in ``m``."""
    live = np.isfinite(se) & (se > 0)
    scale = np.where(live, se, 1.0)
    inside = np.zeros_like(est)  # m with p > alpha (accepted)
    outside = np.full_like(est, np.inf)
    m = np.full_like(est, 1.0)
    todo = live.copy()
    for _ in range(40):  # up to 2^40 se
        if not todo.any():
            break
        p = w.pvalue(est + sign * m * scale)
        acc = p > alpha
        inside = np.where(todo & acc, m, inside)
        outside = np.where(todo & ~acc, m, outside)
        todo = todo & acc
        m = np.where(todo, 2.0 * m, m)
    fin = live & np.isfinite(outside)
    for _ in range(200):
        if not fin.any() or np.all((outside - inside)[fin] <= tol * np.maximum(1.0, inside[fin])):
            break
        mid = 0.5 * (inside + outside)
        acc = w.pvalue(est + sign * mid * scale) > alpha
        inside = np.where(fin & acc, mid, inside)
        outside = np.where(fin & ~acc, mid, outside)
    # the endpoint is the last accepted mu0 (the boundary of the acceptance region, within tol)
    res = est + sign * 0.5 * (inside + outside) * scale
    res = np.where(live & ~np.isfinite(outside), sign * np.inf, res)
    return np.where(live, res, est)


def minp_counts(abst: np.ndarray) -> np.ndarray:
    """``(P, B)`` marginal bootstrap p-values of the replicates themselves: ``p*_pb = mean_b'(|t*_pb'| >= |t*_pb|)``
    (ties within :data:`_TIE` count, as for the observed p-value), every value a multiple of ``1 / B``."""
    P, B = abst.shape
    out = np.empty((P, B))
    for r in range(P):
        srt = np.sort(abst[r])
        out[r] = (B - np.searchsorted(srt, abst[r] * (1.0 - _TIE), side="left")) / B
    return out


def minp_level(minp: np.ndarray, alpha: float) -> float:
    """The single-step min-p per-comparison level (Westfall & Young 1993): the largest ``q`` with
    ``mean_b(minp_b <= q) <= alpha``, for ``minp`` (B,) the replicates' smallest marginal p-value. Every p-value
    is a multiple of ``1 / B``, so ``q`` sits half a step below the first value that would exceed ``alpha``."""
    mp = np.sort(minp)
    B = len(mp)
    k = int(np.floor(alpha * B + 1e-9))
    return float(mp[k] - 0.5 / B) if k < B else 1.0


def wild_family(n: Any, sd: Any, level: float, v: np.ndarray, joint: str = "bonferroni",
                invert: bool = True) -> dict[str, np.ndarray]:
    """Family of ``P`` paired differences tested by the WCR with one set of cluster weights.

    Every pair's test imposes its own null ``d_p = 0``; all pairs use the same weights, so the bootstrap
    carries their dependence. ``M_b = max_p |t*_pb|``, ``c`` = its ``level`` quantile, and the single-step
    max-|t| adjusted p-value is ``P*(M >= |t_p|)`` (reported, never below ``min(1, P p)``). Each pair's
    simultaneous interval inverts its own WCR test at the per-comparison level ``alpha*`` (null imposed at
    every candidate value), so it excludes 0 exactly when ``p_p <= alpha*``. ``joint`` sets ``alpha*``:

    - ``"bonferroni"``: ``(1 - level) / P``. The union bound keeps the family-wise error at most
      ``1 - level`` whenever the per-pair tests hold, whatever the dependence, but it spends alpha as if
      the pairs were independent events, and pairs sharing systems are not (10 systems: 45 pairs).
    - ``"min_p"``: the single-step min-p level of Westfall & Young (1993): every replicate's marginal p-value
      in every pair (:func:`minp_counts`, each pair against its own bootstrap distribution, so a pair whose
      ``t*`` is bounded, few clusters differing, is read on its own scale), ``minp_b`` their smallest over the
      pairs, and ``alpha*`` the largest level at which at most ``1 - level`` of the replicates have
      ``minp_b <= alpha*`` (:func:`minp_level`), never below Bonferroni's nor above ``1 - level``. The adjusted
      p-value ``p_maxt`` is then ``max(p_p, min(P*(minp <= p_p), P p_p))``: at most ``1 - level`` exactly where
      the interval excludes 0.

    Parameters
    ----------
    n : array_like (K,)
        Rows per cluster (1 for macro).
    sd : ndarray (P, K)
        Cluster sums of each pair's per-row difference (cluster means for macro).
    level : float
    v : ndarray (K, B)
    joint : {"bonferroni", "min_p"}
    invert : bool
        False skips the intervals (``low, high`` nan): the decisions at 0 alone (``p <= alpha_star``), for
        the family's check, which needs no interval.

    Returns
    -------
    dict
        ``diff, se, t`` (CR1), ``p`` (per-pair WCR p-value at 0), ``p_maxt`` (adjusted p-value, see
        ``joint``), ``low, high`` (simultaneous intervals), ``crit`` (``c``), ``alpha_star`` and ``minp``
        (the sorted replicate minima under ``min_p``; None under ``bonferroni``).
    """
    if joint not in ("bonferroni", "min_p"):
        raise ValueError(f"`joint` must be 'bonferroni' or 'min_p'; got {joint!r}.")
    n = np.asarray(n, dtype=float)
    sd = np.atleast_2d(np.asarray(sd, dtype=float))
    P = sd.shape[0]
    nn = np.broadcast_to(n, sd.shape)
    w = WildStats(nn, sd, v)
    t, tb = w.tstats(np.zeros(P))
    abst = np.abs(tb)
    live = np.isfinite(t) & (w.uu > 0)
    M = np.sort(abst[live].max(0)) if live.any() else np.zeros(tb.shape[1])
    B = len(M)
    alpha = 1.0 - level
    crit = float(M[min(max(int(np.ceil(level * B)) - 1, 0), B - 1)])
    thr = np.abs(t) * (1.0 - _TIE)
    p = (abst >= thr[:, None]).mean(1)
    bonf = np.minimum(1.0, P * p)
    minp = None
    if joint == "min_p" and live.any():
        minp = np.sort(minp_counts(abst[live]).min(0))
        alpha_star = min(alpha, max(minp_level(minp, alpha), alpha / P))
        # the share of replicates whose smallest p-value reaches the pair's: p <= alpha* iff it is <= alpha
        p_maxt = np.maximum(p, np.minimum(np.searchsorted(minp, p * (1.0 + 1e-9), side="right") / B, bonf))
    else:
        alpha_star = alpha / P
        p_boot = (B - np.searchsorted(M, thr, side="left")) / B
        p_maxt = np.maximum(p_boot, bonf)
    if invert:
        _, _, low, high = wild_interval(nn, sd, 1.0 - alpha_star, v, chunk=max(P, 1))
    else:
        low = high = np.full(P, np.nan)
    dead = ~live
    p = np.where(dead, np.where(np.abs(w.est) > 0, 0.0, 1.0), p)
    p_maxt = np.where(dead, p, p_maxt)
    low, high = np.where(dead, w.est, low), np.where(dead, w.est, high)
    return {"diff": w.est, "se": w.se, "t": t, "p": p, "p_maxt": p_maxt, "low": low, "high": high,
            "crit": crit, "alpha_star": alpha_star, "minp": minp}
