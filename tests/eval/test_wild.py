"""Wild cluster restricted bootstrap: checked against wildboottest (an independent port of fwildclusterboot)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval import interval, null_family_rates
from ragcov_data.eval.comparisons._family import family
from ragcov_data.eval.estimates._wild import (WildStats, minp_counts, minp_level, wild_family, wild_interval, wild_pvalue,
                                             wild_weights)

wbt = pytest.importorskip("wildboottest.wildboottest")


def _data(K=10, seed=1, big=200):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 40, K)
    sizes[0] = big  # one dominant document, as on the ANEEL census
    cl = np.repeat(np.arange(K), sizes)
    y = (rng.random(len(cl)) < np.repeat(rng.random(K), sizes)).astype(float)
    return y, cl


def _dominant(rng, n_docs, big, low, high):
    """``(sizes, cluster of each query, hit probability of each query)``: ``n_docs`` documents of 2-11 queries
    but the first, of ``big`` (one dominant document), each with its own probability, uniform on [low, high)."""
    sizes = rng.integers(2, 12, n_docs)
    sizes[0] = big
    return sizes, np.repeat(np.arange(n_docs), sizes), np.repeat(rng.uniform(low, high, n_docs), sizes)


def _wbt(y, cl, v=None, weights="rademacher", B=99999):
    """wildboottest's WCR ('11', null imposed) of the intercept of y ~ 1; optionally with given weights."""
    X = np.ones((len(y), 1))
    wb = wbt.WildboottestCL(X=X, Y=y, cluster=cl, R=np.array([1.0]), B=B, seed=0, parallel=False)
    wb.get_scores(bootstrap_type="11", impose_null=True)
    wb.get_weights(weights_type=weights)
    if v is not None:
        wb.v, wb.B = v, v.shape[1]
    wb.get_numer()
    wb.get_denom()
    wb.get_tboot()
    wb.get_vcov()
    wb.get_tstat()
    wb.get_pvalue()
    return wb


@pytest.mark.parametrize("mu0", [0.0, 0.3, 0.55])
def test_full_enumeration_matches_wildboottest(mu0):
    """K = 10 clusters, Rademacher, B > 2^K: both enumerate all 1,024 sign vectors; t, t* equal to 1e-10."""
    y, cl = _data()
    wb = _wbt(y - mu0, cl)
    assert wb.B == 2 ** 10
    n = np.bincount(cl).astype(float)
    s = np.bincount(cl, weights=y)
    v = wild_weights(10, 99999, kind="rademacher")
    np.testing.assert_array_equal(v, wb.v)
    t, tb = WildStats(n, s, v).tstats(np.array([mu0]))
    assert abs(t[0] - float(np.ravel(wb.t_stat)[0])) < 1e-10
    np.testing.assert_allclose(tb[0], wb.t_boot, rtol=0, atol=1e-10)
    # p-value: wildboottest counts strict exceedances, ragcov counts ties too; away from ties they agree
    ties = np.abs(np.abs(wb.t_boot) - abs(t[0])) < 1e-9
    above = (np.abs(wb.t_boot) > abs(t[0]) + 1e-9).mean()
    p = wild_pvalue(n, s, mu0, v)[0]
    assert ties.sum() >= 2  # the all-equal sign vectors reproduce the observed |t|
    assert p == pytest.approx(above + ties.mean(), abs=1e-12)
    assert above - 1e-12 <= wb.pvalue <= p + 1e-12


def test_statsmodels_entry_point_agrees():
    """The public wildboottest(model, cluster=...) function on the same regression."""
    y, cl = _data(K=9, seed=4, big=120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = wbt.wildboottest(sm.OLS(pd.Series(y - 0.4), pd.DataFrame({"c": np.ones(len(y))})), B=9999,
                               cluster=cl, param="c", weights_type="rademacher", impose_null=True, show=False)
    n, s = np.bincount(cl).astype(float), np.bincount(cl, weights=y)
    w = WildStats(n, s, wild_weights(9, 9999, kind="rademacher"))
    t, tb = w.tstats(np.array([0.4]))
    assert abs(t[0] - float(np.ravel(res["statistic"].iloc[0])[0])) < 1e-10
    strict = float((np.abs(tb[0]) > abs(t[0]) * (1 + 1e-9)).mean())
    assert float(res["p-value"].iloc[0]) == pytest.approx(strict, abs=2 / 512)


def test_webb_weights_and_macro_regression():
    """Webb six-point weights (random draws, handed to both) and the document-level (macro) regression."""
    y, cl = _data(K=15, seed=2)
    v = wild_weights(15, 500, rng=3)  # auto: Webb for K <= 12? no: K = 15 -> Rademacher
    assert set(np.unique(v)) == {-1.0, 1.0}
    v = wild_weights(15, 500, rng=3, kind="webb")
    assert set(np.round(np.unique(v) ** 2, 12)) == {0.5, 1.0, 1.5}
    n, s = np.bincount(cl).astype(float), np.bincount(cl, weights=y)
    wb = _wbt(y - 0.2, cl, v=v, weights="webb")
    t, tb = WildStats(n, s, v).tstats(np.array([0.2]))
    np.testing.assert_allclose(tb[0], wb.t_boot, rtol=0, atol=1e-10)
    # macro: one row per document with its rate
    p = s / n
    wbm = _wbt(p - 0.2, np.arange(15), v=v, weights="webb")
    tm, tbm = WildStats(np.ones(15), p, v).tstats(np.array([0.2]))
    assert abs(tm[0] - float(np.ravel(wbm.t_stat)[0])) < 1e-10
    np.testing.assert_allclose(tbm[0], wbm.t_boot, rtol=0, atol=1e-10)


def test_interval_is_the_inverted_test():
    """Just inside each endpoint the test accepts, just outside it rejects."""
    y, cl = _data(K=30, seed=5, big=300)
    n, s = np.bincount(cl).astype(float), np.bincount(cl, weights=y)
    v = wild_weights(30, 1999, rng=0)
    est, se, lo, hi = wild_interval(n, s, 0.95, v)
    assert lo[0] < est[0] < hi[0]
    eps = 1e-5 * se[0]  # endpoints are found to 1e-6 se
    w = WildStats(n, s, v)
    assert w.pvalue(np.array([lo[0] + eps]))[0] > 0.05 >= w.pvalue(np.array([lo[0] - eps]))[0]
    assert w.pvalue(np.array([hi[0] - eps]))[0] > 0.05 >= w.pvalue(np.array([hi[0] + eps]))[0]


def test_null_rejection_is_exact_under_sign_symmetry():
    """Cluster sums symmetric about 0 (a two-system null made by swapping labels within documents):
    the WCR is a randomization test; its rejection rate stays within nominal + 3 MC SE."""
    rng = np.random.default_rng(11)
    K, R = 20, 1200
    n = rng.integers(1, 30, K).astype(float)
    n[0] = 250
    base = rng.normal(0, 1, K) * np.sqrt(n)
    S = base * rng.choice([-1.0, 1.0], size=(R, K))
    p = np.concatenate([WildStats(n, S[i:i + 20], wild_weights(K, 399, rng)).pvalue(np.zeros(20))
                        for i in range(0, R, 20)])
    rate = float(np.mean(p < 0.05))
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / R)
    assert rate > 0.01  # not a test that never rejects


def test_family_coherent_and_one_pair_is_the_single_test():
    rng = np.random.default_rng(2)
    K = 40
    n = rng.integers(1, 20, K).astype(float)
    sd = rng.normal(0, 1, (3, K)) * np.sqrt(n)
    sd[0] += 1.2 * n  # the first pair differs clearly, the others are null
    v = wild_weights(K, 1999, rng=1)
    f = wild_family(n, sd, 0.95, v)
    assert f["alpha_star"] == pytest.approx(0.05 / 3)
    excl = (f["low"] > 0) | (f["high"] < 0)
    # the interval inverts each pair's own test at alpha*: it excludes 0 iff p <= alpha*
    assert np.array_equal(excl, f["p"] <= f["alpha_star"])
    assert excl.any() and not excl.all()
    assert np.all(f["p_maxt"] >= np.minimum(1, 3 * f["p"]) - 1e-12)
    one = wild_family(n, sd[:1], 0.95, v)
    assert one["p"][0] == pytest.approx(wild_pvalue(n, sd[:1], 0.0, v)[0])
    _, _, lo, hi = wild_interval(n, sd[:1], 0.95, v)
    assert (one["low"][0], one["high"][0]) == pytest.approx((lo[0], hi[0]))


def test_method_in_registry_and_interval_api():
    y, cl = _data(K=25, seed=7)
    assert _kernels.applicable("micro", "wild_cluster") and _kernels.applicable("macro", "wild_cluster")
    a = interval(y, cl, estimator="micro", method="wild_cluster", seed=3, n_resamples=999)
    b = interval(y, cl, estimator="micro", method="wild_cluster", seed=3, n_resamples=999)
    assert (a.low, a.high) == (b.low, b.high)
    assert a.low < a.estimate < a.high
    cr1 = interval(y, cl, estimator="micro", method="cr1")
    assert a.se == pytest.approx(cr1.se)
    with pytest.raises(ValueError, match="n_resamples"):
        interval(y, cl, method="wild_cluster", n_resamples=10)


def _three_systems():
    """Three systems on 30 documents with a dominant one: ``(V, cl, rng, cr2 family, wild_cluster family)`` on the
    same seed."""
    rng = np.random.default_rng(5)
    y, cl = _data(K=30, seed=9, big=300)
    V = np.vstack([y, np.where(rng.random(len(y)) < 0.15, 1 - y, y), np.where(rng.random(len(y)) < 0.3, 1.0, y)])
    a = family(V, cl, 30, estimator="micro", level=0.95, n_resamples=499, rng=np.random.default_rng(1))
    b = family(V, cl, 30, estimator="micro", level=0.95, n_resamples=499, rng=np.random.default_rng(1),
               pair_test="wild_cluster")
    return V, cl, rng, a, b


def test_family_hull_contains_cr2_and_rejects_only_when_both_do():
    V, cl, rng, a, b = _three_systems()
    pa, pb = a["pairs"], b["pairs"]
    assert b["pair_method"] == "wild_cluster+cr2" and a["pair_method"] == "cr2"
    assert np.all(pb["low"] <= pa["low"]) and np.all(pb["high"] >= pa["high"])
    assert np.all(pb["p"] >= pa["p"]) and np.all(pb["p_adj"] >= pb["p"])
    assert ((pb["low"] > 0) | (pb["high"] < 0)).any()  # the clearly better third system is separated
    with pytest.raises(ValueError, match="pair_test"):
        family(V, cl, 30, estimator="micro", level=0.95, n_resamples=499, rng=rng, pair_test="holm")
    # without the inversion (the family check's path): the same decisions, read from p_hull
    c = family(V, cl, 30, estimator="micro", level=0.95, n_resamples=499, rng=np.random.default_rng(1),
               pair_test="wild_cluster", intervals=False)["pairs"]
    assert np.array_equal(c["p_hull"] < 0.05, (pb["low"] > 0) | (pb["high"] < 0))
    np.testing.assert_array_equal(c["p"], pb["p"])


def test_min_p_hull_holds_both_parts_at_its_level(monkeypatch):
    """The benchmark's alternative (``WILD_JOINT = "min_p"``): the hull holds each pair's CR2 interval and its WCR
    interval, both at the WCR family's min-p level (between Bonferroni's and alpha), and rejects only where both
    tests do; ``p_hull`` agrees with the interval."""
    from scipy import stats

    from ragcov_data.eval.comparisons import _family

    monkeypatch.setattr(_family, "WILD_JOINT", "min_p")
    V, cl, _, a, b = _three_systems()
    pa, pb = a["pairs"], b["pairs"]
    a_star = b["alpha_star"]
    assert 0.05 / 3 <= a_star <= 0.05
    half = stats.t.isf(a_star / 2, pa["df"]) * pa["se"]
    assert np.all(pb["low"] <= pa["diff"] - half + 1e-12) and np.all(pb["high"] >= pa["diff"] + half - 1e-12)
    n = np.bincount(cl).astype(float)
    ia, ib = np.triu_indices(3, 1)
    sd = np.array([np.bincount(cl, weights=V[i] - V[j]) for i, j in zip(ia, ib)])
    r = np.random.default_rng(1)  # the family's draws: the CR2 family's resampling counts, then the wild weights
    list(_family.draw_weights(30, 499, r))
    f = wild_family(n, sd, 0.95, wild_weights(30, 499, rng=r), joint="min_p")
    assert f["alpha_star"] == a_star
    assert np.all(pb["low"] <= f["low"]) and np.all(pb["high"] >= f["high"])
    assert np.all(pb["p"] >= pa["p"]) and np.all(pb["p"] >= f["p"] - 1e-15) and np.all(pb["p_adj"] >= pb["p"])
    excl = (pb["low"] > 0) | (pb["high"] < 0)
    assert np.array_equal(excl, (pa["p"] < a_star) & (f["p"] <= a_star))
    assert np.array_equal(excl, pb["p_hull"] < 0.05) and excl.any()


def test_minp_counts_and_level_match_plain_loops():
    rng = np.random.default_rng(11)
    abst = np.abs(rng.standard_t(4, (3, 60)))
    abst[1, :10] = abst[1, 10:20]  # ties
    ref = np.array([[np.mean(abst[r] >= abst[r, b] * (1 - 1e-10)) for b in range(60)] for r in range(3)])
    np.testing.assert_allclose(minp_counts(abst), ref, atol=1e-15)
    minp = ref.min(0)
    for alpha in (0.01, 0.05, 0.2):
        q = minp_level(minp, alpha)
        # the largest level on the 1/B grid (and just above it) whose share of minp at or below it is <= alpha
        grid = np.arange(0, 61) / 60
        ok = [g for g in grid if np.mean(minp <= g + 1e-12) <= alpha]
        assert max(ok) <= q < max(ok) + 1 / 60
        assert np.mean(minp <= q) <= alpha


def test_minp_level_between_independent_and_identical_pairs():
    """Against closed forms: pairs that are one pair repeated get alpha itself; independent pairs get Sidak's
    1 - (1 - alpha)^(1/P), above Bonferroni's alpha / P; the min-p adjusted p-value agrees with the interval."""
    rng = np.random.default_rng(4)
    K, P = 60, 6
    n = rng.integers(1, 8, K).astype(float)
    v = wild_weights(K, 9999, rng=2)
    same = np.tile(rng.normal(0, 1, K) * np.sqrt(n), (P, 1))
    f = wild_family(n, same, 0.95, v, joint="min_p", invert=False)
    assert 0.047 <= f["alpha_star"] <= 0.05
    indep = rng.normal(0, 1, (P, K)) * np.sqrt(n)
    g = wild_family(n, indep, 0.95, v, joint="min_p")
    sidak = 1 - 0.95 ** (1 / P)
    assert abs(g["alpha_star"] - sidak) < 0.0025 and g["alpha_star"] >= 0.05 / P
    excl = (g["low"] > 0) | (g["high"] < 0)
    assert np.array_equal(excl, g["p"] <= g["alpha_star"]) and np.array_equal(excl, g["p_maxt"] <= 0.05)
    assert np.all(g["p_maxt"] >= g["p"]) and np.isnan(f["low"]).all()
    with pytest.raises(ValueError, match="joint"):
        wild_family(n, indep, 0.95, v, joint="holm")


def test_null_pairs_with_a_dominant_document_hold_their_size():
    """Two systems exchanged within documents, one document holding 40% of the queries: the CR2-only
    family over-rejects; the wild_cluster family stays within nominal + 3 MC SE."""
    rng = np.random.default_rng(3)
    K = 25
    sizes, cl, p = _dominant(rng, K, 120, 0.2, 0.9)
    y1 = (rng.random(len(cl)) < p).astype(float)
    y2 = np.where(rng.random(len(cl)) < 0.35, (rng.random(len(cl)) < p).astype(float), y1)
    F = 400
    r = null_family_rates(np.vstack([y1, y2]), cl, n_families=F, n_resamples=199, seed=4, pair_test="wild_cluster")
    se = np.sqrt(0.05 * 0.95 / F)
    assert r["simultaneous"] <= 0.05 + 3 * se and r["holm"] <= 0.05 + 3 * se
    assert r["pair_test"] == "wild_cluster"


def test_simultaneous_coverage_sampling_documents_with_replacement():
    """A smaller bench_coverage_sampled part 2: three systems, K = 30 documents drawn with replacement from
    a population with a dominant document; the micro wild_cluster family covers all three differences."""
    rng = np.random.default_rng(8)
    D = 100
    sizes, cl, base = _dominant(rng, D, 150, 0.1, 0.9)
    V = np.vstack([(rng.random(len(cl)) < np.clip(base + dlt, 0, 1)).astype(float) for dlt in (0.0, 0.03, 0.1)])
    ia, ib = np.triu_indices(3, 1)
    truth = V.mean(1)[ia] - V.mean(1)[ib]
    members = [np.flatnonzero(cl == k) for k in range(D)]
    R, K, hit = 150, 30, 0
    for _ in range(R):
        pick = rng.integers(0, D, K)
        rows = np.concatenate([members[k] for k in pick])
        cc = np.repeat(np.arange(K), sizes[pick])
        pr = family(V[:, rows], cc, K, estimator="micro", level=0.95, n_resamples=199, rng=rng,
                    pair_test="wild_cluster")["pairs"]
        hit += bool(np.all((pr["low"] <= truth) & (truth <= pr["high"])))
    assert hit / R >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / R)
