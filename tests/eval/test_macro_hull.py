"""The leaderboard's macro family, the guarded Hall cluster bootstrap (eval/comparisons/_hall.py): the replicate
arithmetic and the group critical values against a plain loop with scipy's skewness, the interval as the inversion
of the test (against a root finder), the verdict against the interval, the family as the leaderboard calls it, and
its simultaneous coverage on skewed per-document differences."""
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, stats

from ragcov_data.eval.comparisons._family import draw_weights, family
from ragcov_data.eval.comparisons._hall import HALL_MIN_DOCUMENTS, hall_family, hall_inverse, hall_stat, spread

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_null_families import candidate_stat, macro_crits  # noqa: E402


def _skewed_population(rng: np.random.Generator, D: int = 150, S: int = 4):
    """Per-query hit@1-like outcomes of S systems whose per-document differences are mostly 0 and, in a few
    documents, large: the shape of the ANEEL census where the t family read at Bonferroni's level is short."""
    sizes = rng.integers(3, 25, D)
    cl = np.repeat(np.arange(D), sizes)
    base = np.repeat(rng.uniform(0.2, 0.95, D), sizes)
    V = [(rng.random(len(cl)) < base).astype(float)]
    for s in range(1, S):
        hot = np.repeat(rng.random(D) < 0.25, sizes)  # a quarter of the documents move, by a lot
        flip = hot & (rng.random(len(cl)) < 0.6 + 0.1 * s)
        V.append(np.where(flip, 1.0 - V[0], V[0]))
    return np.vstack(V), cl, sizes


def _pairs_x(K: int = 60, seed: int = 3) -> np.ndarray:
    """Four pairs over K clusters: two spread skewed rows (Hall) and two with few non-median clusters (guarded)."""
    rng = np.random.default_rng(seed)
    X = rng.exponential(size=(4, K)) - 0.8
    X[1] = -(rng.gamma(2.0, size=K) - 1.5)
    X[2, 8:] = 0.0
    X[3, :] = 0.01
    X[3, :5] = rng.normal(0.4, 0.2, 5)
    return X


def _loop_statistic(x: np.ndarray, mu: float, hall: bool, sd_obs: float) -> float:
    """One pair's statistic from its resampled values, computed directly (scipy's skewness, numpy's SD); 0 where
    the values are all equal (an SD that is rounding next to the observed one)."""
    K = len(x)
    s = x.std(ddof=1)
    if s <= 1e-9 * sd_obs:
        return 0.0
    if not hall:
        return abs(x.mean() - mu) / (s / np.sqrt(K))
    g = stats.skew(x, bias=True) * (x.std() / s) ** 3  # m3 / s^3 with s the ddof-1 SD
    w = (x.mean() - mu) / s
    return abs(np.sqrt(K) * (w + g * w ** 2 / 3 + g ** 2 * w ** 3 / 27 + g / (6 * K)))


def test_family_equals_a_plain_loop():
    X = _pairs_x()
    P, K = X.shape
    B = 199
    f = hall_family(X, 0.95, B, draw_weights(K, B, np.random.default_rng(5)))
    hall = spread(X) >= HALL_MIN_DOCUMENTS
    np.testing.assert_array_equal(f["hall"], hall)
    assert hall.tolist() == [True, True, False, False]
    d = X.mean(1)
    R = []
    for W in draw_weights(K, B, np.random.default_rng(5)):
        for b in range(W.shape[1]):
            idx = np.repeat(np.arange(K), W[:, b].astype(int))
            R.append([_loop_statistic(X[k, idx], d[k], hall[k], X[k].std(ddof=1)) for k in range(P)])
    R = np.array(R).T
    obs = np.array([_loop_statistic(X[k], 0.0, hall[k], 0.0) for k in range(P)])

    def p_of(o):  # counts bracketed by 1e-9: the loop and the sums of powers round differently at ties
        return (1 + (R >= o[:, None]).sum(1)) / (B + 1)
    assert np.all((p_of(obs + 1e-9) <= f["p"]) & (f["p"] <= p_of(obs - 1e-9)))
    for grp in (hall, ~hall):  # Bonferroni split: each group's max at level 1 - alpha * P_g / P
        M = np.sort(R[grp].max(0))
        c = M[int(np.ceil((1 - 0.05 * grp.sum() / P) * (B + 1))) - 1]
        np.testing.assert_allclose(f["crit"][grp], c, rtol=1e-10)
        share = P / grp.sum()
        adj = [np.minimum(1, share * (1 + (M[:, None] >= obs[grp] + e).sum(0)) / (B + 1)) for e in (1e-9, -1e-9)]
        assert np.all((adj[0] <= f["p_maxt"][grp]) & (f["p_maxt"][grp] <= adj[1]))


def test_interval_is_the_inversion_of_the_test():
    """At each end of a Hall pair's interval its statistic equals the critical value (a root finder on the
    statistic itself); a guarded pair's interval is d +- c se; the adjusted p-value agrees with the interval."""
    X = _pairs_x()
    K = X.shape[1]
    f = hall_family(X, 0.95, 499, draw_weights(K, 499, np.random.default_rng(1)))
    d, sd = X.mean(1), X.std(1, ddof=1)
    m3 = ((X - d[:, None]) ** 3).mean(1)
    for k in np.flatnonzero(f["hall"]):
        def excess(mu, k=k):
            return hall_stat(d[k], sd[k], m3[k], mu, K) ** 2 - f["crit"][k] ** 2
        for end, side in ((f["low"][k], -1), (f["high"][k], 1)):
            root = optimize.brentq(excess, d[k] + side * 1e-9, d[k] + side * 10 * sd[k], xtol=1e-14)
            assert end == pytest.approx(root, abs=1e-10)
    se = sd / np.sqrt(K)
    for k in np.flatnonzero(~f["hall"]):
        assert f["low"][k] == pytest.approx(d[k] - f["crit"][k] * se[k])
        assert f["high"][k] == pytest.approx(d[k] + f["crit"][k] * se[k])
    np.testing.assert_array_equal(f["p_hull"] < 0.05, (f["low"] > 0) | (f["high"] < 0))
    # the benchmark's coverage rule (statistic at the value within c) is the same interval
    for mu in (f["low"] - 1e-6, f["low"] + 1e-6, f["high"] - 1e-6, f["high"] + 1e-6):
        inside = candidate_stat(X, mu, "guarded Hall (leaderboard)") <= f["crit"] * (1 + 1e-12)
        np.testing.assert_array_equal(inside, (f["low"] <= mu) & (mu <= f["high"]))


@pytest.mark.parametrize("g", [-4.0, -0.3, 0.0, 1e-9, 0.8, 5.0])
def test_hall_inverse_against_a_root_finder(g):
    K = 40
    for y in (-0.9, -0.2, 0.0, 0.35, 1.4):
        w = hall_inverse(np.array(y), np.array(g), K)
        ref = optimize.brentq(lambda v: v + g * v ** 2 / 3 + g ** 2 * v ** 3 / 27 + g / (6 * K) - y, -50, 50,
                              xtol=1e-14)
        assert float(w) == pytest.approx(ref, abs=1e-9)


def test_candidate_keeps_the_other_candidates_draws():
    """The guarded family reuses the studentized bootstrap's counts (it draws nothing of its own): its critical
    values equal hall_family on the first B counts of the same generator, and the sign-flip draws that follow are
    unchanged between calls."""
    X = _pairs_x()
    c = macro_crits(X, 0.95, 199, np.random.default_rng(0))
    blocks = list(draw_weights(X.shape[1], 199, np.random.default_rng(0)))
    np.testing.assert_allclose(c["guarded Hall (leaderboard)"], hall_family(X, 0.95, 199, blocks)["crit"])
    again = macro_crits(X, 0.95, 199, np.random.default_rng(0))
    assert again["sign-flip Webb"] == c["sign-flip Webb"]


def test_leaderboard_family_takes_the_hall_family_for_macro_pairs():
    rng = np.random.default_rng(11)
    V, cl, _ = _skewed_population(rng, D=60)
    V[3] = V[2]  # a pair without variation keeps its point and its p
    t = family(V, cl, 60, estimator="macro", level=0.95, n_resamples=499, rng=np.random.default_rng(1),
               pair_test="cr2")
    h = family(V, cl, 60, estimator="macro", level=0.95, n_resamples=499, rng=np.random.default_rng(1),
               pair_test="wild_cluster")
    assert h["pair_method"] == "guarded_hall_max_t" and t["pair_method"] == "t"
    np.testing.assert_allclose(h["systems"]["low"], t["systems"]["low"])  # systems keep their t intervals
    dead = ~(t["pairs"]["se"] > 0)
    assert dead.sum() == 1
    assert h["pairs"]["low"][dead] == h["pairs"]["high"][dead] == h["pairs"]["diff"][dead]
    pr = h["pairs"]
    np.testing.assert_array_equal(pr["p_hull"] < 0.05, (pr["low"] > 0) | (pr["high"] < 0))
    # the p columns are the bootstrap family's; p_cr2 keeps the t test's
    live = ~dead
    assert not np.allclose(pr["p"][live], t["pairs"]["p"][live])
    np.testing.assert_allclose(pr["p_cr2"], t["pairs"]["p"])
    # the same pairs, one draw: the family's live rows are hall_family's on the cluster means
    n = np.bincount(cl).astype(float)
    means = np.vstack([np.bincount(cl, weights=v) / n for v in V])
    ia, ib = np.triu_indices(len(V), 1)
    X = (means[ia] - means[ib])[live]
    rng = np.random.default_rng(1)
    list(draw_weights(60, 499, rng))  # the t family's max-|t| bootstrap draws first
    f = hall_family(X, 0.95, 499, draw_weights(60, 499, rng))
    np.testing.assert_allclose(pr["low"][live], f["low"], atol=1e-12)
    np.testing.assert_allclose(pr["high"][live], f["high"], atol=1e-12)


@pytest.mark.parametrize("K", [20])
def test_simultaneous_coverage_on_skewed_documents(K):
    """A smaller bench_coverage_sampled part 2 for macro: K documents drawn with replacement; the family covers
    all six differences at the nominal level (within 3 MC SE), where the t family read at Bonferroni's level
    falls short (about 89% here)."""
    rng = np.random.default_rng(21)
    V, cl, sizes = _skewed_population(rng)
    D = len(sizes)
    means = np.vstack([np.bincount(cl, weights=v) / sizes for v in V])
    ia, ib = np.triu_indices(len(V), 1)
    truth = means.mean(1)[ia] - means.mean(1)[ib]
    members = [np.flatnonzero(cl == k) for k in range(D)]
    R, hit = 200, {"cr2": 0, "wild_cluster": 0}
    for r in range(R):
        pick = rng.integers(0, D, K)
        rows = np.concatenate([members[k] for k in pick])
        cc = np.repeat(np.arange(K), sizes[pick])
        for pt in hit:
            pr = family(V[:, rows], cc, K, estimator="macro", level=0.95, n_resamples=199,
                        rng=np.random.default_rng([r, 1]), pair_test=pt)["pairs"]
            hit[pt] += bool(np.all((pr["low"] <= truth + 1e-12) & (truth - 1e-12 <= pr["high"])))
    assert hit["wild_cluster"] / R >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / R)
    assert hit["cr2"] / R < 0.95 - 2 * np.sqrt(0.05 * 0.95 / R)  # the case the family is for
