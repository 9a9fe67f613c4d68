"""The candidate micro intervals of benchmarks/micro_heavy.py against direct computations: the cluster jackknife
against a leave-one-out loop, Fieller against the quadratic built from numpy's covariance and solved by np.roots,
the bootstrap replicate statistics against each replicate expanded into its clusters (ragcov's CR2, statsmodels'
cluster-robust SE, scipy's skewness), Hall's inversion and the calibrated level against the replicates, and the
empirical likelihood against scipy's constrained optimiser."""
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, stats

from ragcov_data.eval.estimates import _kernels

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import micro_heavy as H  # noqa: E402


def _sample(seed: int, K: int = 25):
    """Cluster sums of a sample with one dominant document and 0/1 outcomes."""
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 12, K).astype(float)
    n[0] = 60.0
    s = rng.binomial(n.astype(int), rng.uniform(0.2, 0.9, K)).astype(float)
    return n, s


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cr3_is_the_leave_one_document_out_variance(seed):
    n, s = _sample(seed)
    K = len(n)
    r = s.sum() / n.sum()
    loo = [np.delete(s, k).sum() / np.delete(n, k).sum() for k in range(K)]
    se = np.sqrt((K - 1) / K * sum((x - r) ** 2 for x in loo))
    o = H.cr3(n, s)
    assert o["se"][0] == pytest.approx(se, rel=1e-12)
    c = stats.t.ppf(0.975, K - 1)
    assert (o["low"][0], o["high"][0]) == pytest.approx((r - c * se, r + c * se), rel=1e-12)
    # CR3 of the intercept-only regression: (K-1)/K sum e_k^2 / (1 - f_k)^2 / N^2
    e, f = s - r * n, n / n.sum()
    assert o["se"][0] ** 2 == pytest.approx((K - 1) / K * (e * e / (1 - f) ** 2).sum() / n.sum() ** 2, rel=1e-10)


def _fieller_direct(n, s, level=0.95):
    K = len(n)
    C = np.cov(np.vstack([s, n]))  # sample covariance (ddof 1); the totals' variances are K times it
    t2 = stats.t.ppf(0.5 + level / 2, K - 1) ** 2
    S, N = s.sum(), n.sum()
    coef = [N * N - t2 * K * C[1, 1], -2 * (S * N - t2 * K * C[0, 1]), S * S - t2 * K * C[0, 0]]
    return coef, t2


@pytest.mark.parametrize("seed", [0, 3, 5])
def test_fieller_roots_match_the_quadratic_solved_directly(seed):
    n, s = _sample(seed)
    coef, t2 = _fieller_direct(n, s)
    o = H.fieller(n, s)
    assert o["bounded"][0]
    roots = np.sort(np.roots(coef).real)
    assert (o["low"][0], o["high"][0]) == pytest.approx(tuple(roots), rel=1e-9)
    # at each endpoint the null-imposed t statistic of S - theta N is exactly the t quantile
    for th in roots:
        d = s - th * n
        t = d.sum() / np.sqrt(len(n) * d.var(ddof=1))
        assert t * t == pytest.approx(t2, rel=1e-7)
    assert H.fieller_contains(o, s.sum() / n.sum())[0]


def test_fieller_unbounded_set_membership_is_exact():
    """A few documents of wildly different sizes: N^2 < t^2 V_NN, the set is unbounded, membership still exact."""
    n = np.array([200.0, 1, 1, 2, 1])
    s = np.array([20.0, 1, 1, 2, 1])
    coef, _ = _fieller_direct(n, s)
    o = H.fieller(n, s)
    assert coef[0] < 0 and not o["bounded"][0]
    assert np.isinf(o["low"][0]) and np.isinf(o["high"][0])
    grid = np.linspace(-3, 3, 601)
    direct = np.polyval(coef, grid) <= 0
    got = np.array([H.fieller_contains(o, g)[0] for g in grid])
    assert direct.any() and not direct.all()
    assert np.array_equal(got, direct)


def test_boot_stats_match_each_replicate_expanded_into_clusters():
    import statsmodels.api as sm

    n, s = _sample(7, K=15)
    K, B = len(n), 6
    counts = _kernels._counts_chunk(1, K, B, np.random.default_rng(1))
    b = H.boot_stats(n, s, counts)
    for j in range(B):
        rep = np.repeat(np.arange(K), counts[0, :, j].astype(int))
        nn, ss = n[rep], s[rep]
        r = ss.sum() / nn.sum()
        assert b["r"][0, j] == pytest.approx(r, rel=1e-12)
        ref = _kernels.interval_batch(nn, ss, ss, estimator="micro", method="cr2")
        assert b["se2"][0, j] == pytest.approx(ref["se"][0], rel=1e-9)
        assert b["df2"][0, j] == pytest.approx(ref["df"][0], rel=1e-9)
        y = np.concatenate([np.r_[np.ones(int(a)), np.zeros(int(m - a))] for a, m in zip(ss, nn)])
        groups = np.repeat(np.arange(len(nn)), nn.astype(int))
        fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
        assert b["se1"][0, j] == pytest.approx(fit.bse[0], rel=1e-8)
        e = ss - r * nn
        g = stats.skew(e, bias=True) * (e.std(ddof=0) / e.std(ddof=1)) ** 3
        assert b["g"][0, j] == pytest.approx(g, rel=1e-8)


def test_hall_interval_inverts_the_transformed_statistic_at_the_bootstrap_quantiles():
    n, s = _sample(11, K=30)
    K, B = len(n), 399
    counts = _kernels._counts_chunk(1, K, B, np.random.default_rng(3))
    boot = H.boot_stats(n, s, counts)
    out = H.hall_ratio(n, s, boot)
    r, se, g = H._skew(n[None], s[None])
    T = H.hall_t(boot["r"], r[:, None], boot["se1"], boot["g"], K)[0]
    lo_q, hi_q = np.quantile(T, [0.025, 0.975])

    def T_obs(theta):  # the observed statistic at theta: Hall's transform with the sample's skewness
        return H.hall_t(r, theta, se, g, K)[0]

    # T_obs decreases in theta: the low endpoint is where it reaches the upper quantile, and vice versa
    assert T_obs(out["equal"]["low"][0]) == pytest.approx(hi_q, rel=1e-8)
    assert T_obs(out["equal"]["high"][0]) == pytest.approx(lo_q, rel=1e-8)
    c = np.quantile(np.abs(T), 0.95)
    assert T_obs(out["symmetric"]["low"][0]) == pytest.approx(c, rel=1e-8)
    assert T_obs(out["symmetric"]["high"][0]) == pytest.approx(-c, rel=1e-8)


def test_calibrated_cr2_level_covers_the_sample_ratio_in_the_nominal_share_of_replicates():
    n, s = _sample(13, K=30)
    K, B = len(n), 199
    counts = _kernels._counts_chunk(1, K, B, np.random.default_rng(4))
    o = H.calibrated_cr2(n, s, H.boot_stats(n, s, counts))
    lam = float(o["lam"][0])
    r = s.sum() / n.sum()
    need = int(np.ceil(0.95 * (B + 1)))

    def covered(level):
        k = 0
        for j in range(B):
            rep = np.repeat(np.arange(K), counts[0, :, j].astype(int))
            ci = _kernels.interval_batch(n[rep], s[rep], s[rep], estimator="micro", method="cr2", level=level)
            k += ci["low"][0] <= r <= ci["high"][0]
        return k

    assert covered(min(lam * (1 + 1e-9), 1 - 1e-12)) >= need
    assert covered(lam * (1 - 1e-6)) < need
    ref = _kernels.interval_batch(n, s, s, estimator="micro", method="cr2", level=lam)
    assert (o["low"][0], o["high"][0]) == pytest.approx((ref["low"][0], ref["high"][0]), rel=1e-10)


@pytest.mark.parametrize("shift", [-0.04, 0.03])
def test_empirical_likelihood_matches_a_constrained_optimiser(shift):
    n, s = _sample(17, K=12)
    theta = s.sum() / n.sum() + shift
    d = s - theta * n
    K = len(n)
    res = optimize.minimize(lambda w: -np.log(w).sum(), np.full(K, 1 / K), method="SLSQP",
                            bounds=[(1e-9, 1)] * K, options={"ftol": 1e-14, "maxiter": 500},
                            constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1},
                                         {"type": "eq", "fun": lambda w: w @ d / np.abs(d).max()}])
    ref = -2 * np.log(K * res.x).sum()
    assert H.el_stat(n, s, theta)[0] == pytest.approx(ref, rel=1e-5)


def test_empirical_likelihood_interval_endpoints_sit_at_the_f_quantile():
    n, s = _sample(19, K=20)
    o = H.el_ratio(n, s)
    crit = stats.f.ppf(0.95, 1, len(n) - 1)
    for th in (o["low"][0], o["high"][0]):
        assert H.el_stat(n, s, th)[0] == pytest.approx(crit, rel=1e-6)
    assert o["low"][0] < s.sum() / n.sum() < o["high"][0]
