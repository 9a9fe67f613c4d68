"""design_effect() diagnostics and the stratified / two-stage ``t`` interval."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ragcov_data.errors import RagcovError
from ragcov_data.eval import design_effect, interval


def _sample(seed=0, K=25):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 60, K)
    c = np.repeat(np.arange(K), sizes)
    p = rng.beta(0.5, 1.5, K)[c]
    return (rng.random(len(c)) < p).astype(float), c, sizes


def test_icc_deff_match_anova_via_scipy():
    v, c, sizes = _sample()
    d = design_effect(v, c)
    groups = [v[c == k] for k in range(len(sizes))]
    F = stats.f_oneway(*groups).statistic
    N, K = len(v), len(sizes)
    n0 = (N - (sizes**2).sum() / N) / (K - 1)
    icc = (F - 1) / (F - 1 + n0)
    assert d.icc == pytest.approx(icc, rel=1e-10)
    cv = sizes.std() / sizes.mean()
    assert d.cv == pytest.approx(cv, rel=1e-12)
    assert d.deff == pytest.approx(1 + ((cv**2 + 1) * sizes.mean() - 1) * icc, rel=1e-12)
    assert d.deff == pytest.approx(1 + ((sizes**2).sum() / N - 1) * icc, rel=1e-10)
    assert d.n_eff == pytest.approx(N / d.deff)
    assert d.share_never_hit == pytest.approx(np.mean([g.sum() == 0 for g in groups]))
    rates = np.array([g.mean() for g in groups])
    assert d.quantiles["q50"] == pytest.approx(np.median(rates))
    assert d.quantiles["q00"] == rates.min() and d.quantiles["q100"] == rates.max()


def test_balanced_deff_reduces_to_classic_formula():
    rng = np.random.default_rng(1)
    c = np.repeat(np.arange(10), 30)
    v = (rng.random(300) < np.repeat(rng.random(10), 30)).astype(float)
    d = design_effect(v, c)
    assert d.cv == 0 and d.deff == pytest.approx(1 + 29 * d.icc)


def test_lag1_autocorr_matches_loop_and_uses_order():
    rng = np.random.default_rng(2)
    c = np.repeat(np.arange(6), 20)
    v = rng.random(120)
    order = np.tile(np.arange(20)[::-1], 6)  # chunk index runs backwards in the input
    num = den = 0.0
    for k in range(6):
        y = v[c == k][::-1]  # in chunk order
        r = y - y.mean()
        num += (r[1:] * r[:-1]).sum()
        den += (r * r).sum()
    assert design_effect(v, c, order=order).lag1_autocorr == pytest.approx(num / den, rel=1e-12)
    # alternating pattern inside documents: strongly negative
    alt = np.tile([1.0, 0.0], 60)
    assert design_effect(alt, c).lag1_autocorr < -0.9


def test_worked_example_diagnostics():
    v = np.r_[np.zeros(5000), np.tile(np.r_[np.ones(200), np.zeros(300)], 10)]
    c = np.repeat(np.arange(20), 500)
    d = design_effect(v, c)
    assert d.share_never_hit == 0.5 and d.mean_size == 500 and d.n_clusters == 20
    assert "icc=" in repr(d) and '"deff"' in d.to_json()


# ---------------------------------------------------------------------------- stratified design
def _two_stage(seed=3, H=4, k=5):
    rng = np.random.default_rng(seed)
    vals, docs, types = [], [], []
    for h in range(H):
        for j in range(k):
            n = int(rng.integers(2, 30))
            vals.append((rng.random(n) < rng.beta(1 + h, 4)).astype(float))
            docs += [f"t{h}d{j}"] * n
            types += [f"type{h}"] * n
    return np.concatenate(vals), np.array(docs), np.array(types)


def _by_hand(v, c, t, estimator, H_pop=None, M=None):
    thetas, within = [], []
    for h in np.unique(t):
        m = t == h
        docs = np.unique(c[m])
        n = np.array([np.sum(c == d) for d in docs])
        s = np.array([v[c == d].sum() for d in docs])
        if estimator == "micro":
            th = s.sum() / n.sum()
            z = (s - th * n) / n.mean()
        else:
            p = s / n
            th = p.mean()
            z = p - th
        f2 = 0.0 if M is None else len(docs) / M[h]
        thetas.append(th)
        within.append((1 - f2) * (z**2).sum() / (len(docs) - 1) / len(docs))
    thetas = np.array(thetas)
    H = len(thetas)
    f1 = 0.0 if H_pop is None else H / H_pop
    a = (1 - f1) * thetas.var(ddof=1) / H
    cs = f1 * np.array(within) / H**2
    var = a + cs.sum()
    ks = np.array([len(np.unique(c[t == h])) for h in np.unique(t)])
    den = (a**2 / (H - 1) if f1 < 1 else 0.0) + (cs**2 / (ks - 1)).sum()
    return thetas.mean(), np.sqrt(var), var**2 / den


@pytest.mark.parametrize("estimator", ["micro", "macro"])
@pytest.mark.parametrize("pop", [None, {"strata": 10}, {"strata": 4}, {"strata": 12, "documents": "M"}])
def test_two_stage_t_matches_hand_computation(estimator, pop):
    v, c, t = _two_stage()
    M = {f"type{h}": 20 + 5 * h for h in range(4)}
    popd = None if pop is None else {k: (M if val == "M" else val) for k, val in pop.items()}
    r = interval(v, c, estimator, "t", strata=t, population_sizes=popd)
    est, se, df = _by_hand(v, c, t, estimator, H_pop=(popd or {}).get("strata"), M=(popd or {}).get("documents"))
    assert r.estimate == pytest.approx(est, rel=1e-12)
    assert r.se == pytest.approx(se, rel=1e-10)
    assert r.df == pytest.approx(df, rel=1e-10)
    q = stats.t.ppf(0.975, df)
    assert (r.low, r.high) == pytest.approx((est - q * se, est + q * se), rel=1e-10)


def test_two_stage_without_population_is_ultimate_cluster_t_on_type_means():
    v, c, t = _two_stage()
    r = interval(v, c, "macro", "t", strata=t)
    assert r.df == pytest.approx(3)


def test_stratified_validation():
    v, c, t = _two_stage()
    with pytest.raises(RagcovError, match="valid: .*'t'|valid methods: .*'t'"):
        interval(v, c, "micro", "cr2", strata=t)
    with pytest.raises(RagcovError, match="lacks strata"):
        interval(v, c, "micro", "t", strata=t, population_sizes={"documents": {"type0": 50}})
    with pytest.raises(RagcovError, match="smaller than the number of sampled strata"):
        interval(v, c, "micro", "t", strata=t, population_sizes={"strata": 2})


def test_srs_fpc_shrinks_the_macro_variance_and_leaves_micro_alone():
    v, c, _ = _sample(4, K=10)
    a = interval(v, c, "macro", "t")
    b = interval(v, c, "macro", "t", population_sizes=40)
    assert b.se == pytest.approx(a.se * np.sqrt(1 - 10 / 40), rel=1e-12)
    m0, m1 = interval(v, c, "micro", "cr2"), interval(v, c, "micro", "cr2", population_sizes=40)
    assert m1.se == m0.se and "fpc_ignored" in m1.flags  # measured to under-cover with it
    bt = interval(v, c, "micro", "cluster_bootstrap", population_sizes=40, n_resamples=100)
    assert "fpc_ignored" in bt.flags


def test_autocorrelation_at_every_lag_matches_a_loop_and_is_the_one_lag1():
    from ragcov_data.eval.estimates.design import autocorrelation, lag1_autocorr

    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 15, 12)
    c = np.repeat([f"d{i}" for i in range(12)], sizes)
    v = (rng.random(len(c)) < 0.4).astype(float)
    order = np.concatenate([rng.permutation(n) for n in sizes])  # chunk index, shuffled within each document
    got = autocorrelation(v, c, order, max_lag=4)
    num, den = np.zeros(4), 0.0
    for d in np.unique(c):
        y = v[c == d][np.argsort(order[c == d])]
        r = y - y.mean()
        den += (r * r).sum()
        for lag in range(1, 5):
            num[lag - 1] += (r[lag:] * r[:-lag]).sum()
    np.testing.assert_allclose(got, num / den, rtol=1e-12)
    assert lag1_autocorr(v, c, order) == got[0]
    assert np.isnan(autocorrelation(np.ones(6), list("aabbcc"), max_lag=2)).all()  # no within variation
    with pytest.raises(ValueError, match="max_lag"):
        autocorrelation(v, c, max_lag=0)


def test_twin_uses_the_one_icc_and_autocorrelation():
    from ragcov_data.eval.estimates import _kernels
    from ragcov_data.eval.estimates.design import autocorrelation
    import pandas as pd

    from ragcov_data.eval.planning.twin import population_figures

    rng = np.random.default_rng(6)
    sizes = rng.integers(2, 9, 30)
    doc = np.repeat([f"d{i:02d}" for i in range(30)], sizes)
    value = (rng.random(len(doc)) < np.repeat(rng.random(30), sizes)).astype(float)
    pop = pd.DataFrame({"doc_id": doc, "value": value, "chunk_index": np.concatenate([np.arange(n) for n in sizes])})
    f = population_figures(pop)
    # hand one-way ANOVA with the n0 adjustment (Snedecor-Cochran), written out
    groups = [value[doc == d] for d in np.unique(doc)]
    N, K, mean = len(value), len(groups), value.mean()
    msb = sum(len(g) * (g.mean() - mean) ** 2 for g in groups) / (K - 1)
    msw = sum(((g - g.mean()) ** 2).sum() for g in groups) / (N - K)
    n0 = (N - sum(len(g) ** 2 for g in groups) / N) / (K - 1)
    assert f["icc"] == pytest.approx((msb - msw) / (msb + (n0 - 1) * msw), rel=1e-12)
    n = np.array([len(g) for g in groups], float)
    s = np.array([g.sum() for g in groups])
    assert f["icc"] == pytest.approx(float(_kernels.anova_icc(n, s, s)[0]), rel=1e-12)
    assert f["lag1"] == pytest.approx(autocorrelation(value, doc, pop["chunk_index"].to_numpy())[0], rel=1e-12)


def test_autocorrelation_equals_the_benchmark_report_correlogram():
    """The report's correlogram (written separately) gives the same numbers: it can call the one function."""
    from ragcov_data.eval.estimates.design import autocorrelation
    from ragcov_data.jobs.benchmark import within_doc_acf

    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 30, 20)
    docs = np.repeat(np.arange(20), sizes)
    order = np.concatenate([rng.permutation(n) for n in sizes])
    v = (rng.random(len(docs)) < 0.3).astype(float)
    np.testing.assert_allclose(autocorrelation(v, docs, order, max_lag=10), within_doc_acf(v, docs, order, 10),
                               rtol=1e-12, atol=1e-15)
