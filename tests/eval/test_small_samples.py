"""Guards for fragile settings: too few bootstrap replicates, few documents, negative ICC, K = census."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ragcov_data.errors import RagcovError
from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval import compare, coverage_study, design_effect, evaluate, interval
from ragcov_data.eval.planning.planner import plan, recommend


def _sample(K=12, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 9, K)
    c = np.repeat(np.arange(K), sizes)
    return (rng.random(len(c)) < rng.beta(1, 2, K)[c]).astype(float), c


def _task(hits: dict[str, list[int]]):
    """Self-retrieval task whose documents have the given per-chunk hit@1 outcomes (1 = sibling at rank 1)."""
    rows = [(f"{d}#{i:04d}", d) for d, h in hits.items() for i in range(len(h))]
    queries = pd.DataFrame(rows, columns=["_id", "doc_id"])
    queries["chunk_id"] = queries["_id"]
    qrels = pd.DataFrame([(q, c, 1) for q, d in rows for c, d2 in rows if d2 == d and c != q],
                         columns=["query-id", "corpus-id", "score"])
    run = []
    for q, d in rows:
        sib = next(c for c, d2 in rows if d2 == d and c != q)
        other = next(c for c, d2 in rows if d2 != d)
        hit = hits[d][int(q[-4:])]
        first, second = (sib, other) if hit else (other, sib)
        run += [(q, first, 1, 2.0), (q, second, 2, 1.0)]
    task = {"corpus": queries[["_id", "doc_id"]], "queries": queries, "qrels": qrels}
    return task, pd.DataFrame(run, columns=["query-id", "corpus-id", "rank", "score"])


# --------------------------------------------------------------------------- bootstrap replicates
@pytest.mark.parametrize("level, need", [(0.95, 39), (0.9, 19), (0.99, 199), (0.8, 9)])
def test_minimum_replicates_follow_the_one_per_tail_rule(level, need):
    # (B + 1) * (1 - level) / 2 >= 1, worked by hand: 0.95 -> 40 * 0.025 = 1 -> B = 39
    assert _kernels.min_resamples(level) == need
    v, c = _sample()
    for method in ("cluster_bootstrap", "bootstrap_t", "chunk_bootstrap"):
        r = interval(v, c, "micro", method, level=level, n_resamples=need)
        assert r.low < r.high
        with pytest.raises(RagcovError, match=rf"`n_resamples`={need - 1} is too few .* at least {need} are needed"):
            interval(v, c, "micro", method, level=level, n_resamples=need - 1)


def test_one_replicate_is_refused_everywhere_bootstraps_run():
    v, c = _sample()
    msg = "at least 39 are needed"
    with pytest.raises(RagcovError, match=msg):
        interval(v, c, "macro", "cluster_bootstrap", n_resamples=1)
    labels_n = np.bincount(c).astype(float)
    s = np.bincount(c, weights=v)
    with pytest.raises(RagcovError, match=msg):  # the core itself, also through shared counts
        _kernels.interval_batch(labels_n, s, s, estimator="micro", method="cluster_bootstrap", n_resamples=1)
    with pytest.raises(RagcovError, match=msg):
        _kernels.interval_batch(labels_n, s, s, estimator="micro", method="bootstrap_t",
                             boot_counts=_kernels.bootstrap_counts(1, len(s), 1, 0))
    pop = pd.DataFrame({"doc_id": c, "value": v})
    with pytest.raises(RagcovError, match=msg):
        coverage_study(pop, k=5, reps=20, n_resamples=1, show_progress=False)
    with pytest.raises(RagcovError, match=msg):
        recommend(pop, k=5, reps=20, n_resamples=5, show_progress=False)
    with pytest.raises(RagcovError, match=msg):
        plan(pop, 0.2, methods={"micro": "cluster_bootstrap"}, estimators="micro", n_resamples=1, reps=20)
    task, run = _task({"A": [1, 0, 1], "B": [0, 0, 1, 1], "C": [1, 1]})
    with pytest.raises(RagcovError, match=msg):
        evaluate(run, task, n_resamples=1)
    with pytest.raises(RagcovError, match=msg):
        compare(run, run, task, n_resamples=1)


def test_few_replicates_are_fine_for_methods_that_do_not_resample():
    v, c = _sample()
    assert np.isfinite(interval(v, c, "micro", "cr2", n_resamples=1).high)
    pop = pd.DataFrame({"doc_id": c, "value": v})
    tab = coverage_study(pop, k=5, reps=20, n_resamples=1, methods=["cr2", "t"], show_progress=False)
    assert len(tab) == 3
    task, run = _task({"A": [1, 0, 1], "B": [0, 0, 1, 1], "C": [1, 1]})
    rep = evaluate(run, task, n_resamples=1, methods=["cr2", "t"])
    assert set(rep.estimates["method"]) == {"cr2", "t"}
    with pytest.raises(RagcovError, match="positive integer"):
        evaluate(run, task, n_resamples=0, methods=["cr2"])
    with pytest.raises(RagcovError, match="positive integer"):
        coverage_study(pop, k=5, reps=20, n_resamples=2.5, methods=["cr2"], show_progress=False)


# --------------------------------------------------------------------------- few documents
def test_few_clusters_flag_on_bootstraps_and_deff_wald_below_ten_documents():
    for K, flagged in ((2, True), (9, True), (10, False)):
        v, c = _sample(K=K, seed=K)
        for m in ("cluster_bootstrap", "bootstrap_t", "deff_wald", "cr2", "cr1", "wald_iid"):
            r = interval(v, c, "micro", m, n_resamples=199)
            expect = flagged and m in ("cluster_bootstrap", "bootstrap_t", "deff_wald")
            assert ("few_clusters" in r.flags) == expect, (K, m, r.flags)
        assert ("few_clusters" in interval(v, c, "macro", "t").flags) is False


def test_two_documents_flag_reaches_evaluate_estimates():
    task, run = _task({"A": [1, 1, 0, 1, 1], "B": [0, 0, 1, 0]})
    rep = evaluate(run, task, n_resamples=999)
    e = rep.estimates.set_index(["estimator", "method"])
    for est in ("micro", "macro"):
        for m in ("cluster_bootstrap", "bootstrap_t"):
            assert "few_clusters" in e.loc[(est, m), "flags"].split(","), (est, m)
        assert "few_clusters" not in e.loc[(est, "cr2"), "flags"]
    assert "few_clusters" in e.loc[("micro", "deff_wald"), "flags"]
    # the reason for the flag: the two-document bootstrap is far narrower than CR2
    assert e.loc[("micro", "cluster_bootstrap"), "width"] < e.loc[("micro", "cr2"), "width"] / 5


# --------------------------------------------------------------------------- negative ICC
def test_negative_icc_is_flagged_and_deff_truncated_not_nan():
    # every document holds one hit and one miss: documents less alike inside than across
    c = np.repeat(np.arange(8), 2)
    v = np.tile([0.0, 1.0], 8)
    v[4:6] = [1.0, 0.0]
    d = design_effect(v, c)
    F = stats.f_oneway(*[v[c == k] for k in range(8)]).statistic  # 0: no between-document variation
    assert d.icc == pytest.approx((F - 1) / (F - 1 + 2)) and d.icc < 0
    assert 1 + (2 - 1) * d.icc <= 0  # the untruncated DEFF, which made N_eff nan before
    assert d.flags == ("negative_icc",) and d.deff == 1.0 and d.n_eff == 16.0
    # unequal sizes, mildly negative
    c2 = np.repeat(np.arange(6), [3, 3, 4, 4, 3, 3])
    v2 = np.array([0, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 1, 1], dtype=float)
    d2 = design_effect(v2, c2)
    groups = [v2[c2 == k] for k in range(6)]
    F2 = stats.f_oneway(*groups).statistic
    N, sizes = 20, np.array([3, 3, 4, 4, 3, 3])
    n0 = (N - (sizes**2).sum() / N) / 5
    assert d2.icc == pytest.approx((F2 - 1) / (F2 - 1 + n0), rel=1e-10) and d2.icc < 0
    assert d2.flags == ("negative_icc",) and d2.deff == 1.0 and d2.n_eff == N
    assert "negative_icc" in repr(d2) and json.loads(d2.to_json())["flags"] == ["negative_icc"]
    assert design_effect(*_sample()).flags == ()


def test_undefined_icc_cases_say_why():
    single = design_effect([0, 1, 1, 0], ["a", "b", "c", "d"])  # one query per document
    assert np.isnan(single.icc) and single.deff == 1.0 and single.n_eff == 4.0 and single.flags == ("icc_undefined",)
    flat = design_effect([1, 1, 1, 1], ["a", "a", "b", "b"])
    assert np.isnan(flat.deff) and np.isnan(flat.n_eff) and flat.flags == ("zero_variance",)
    one = design_effect([0, 1, 1], ["a", "a", "a"])
    assert np.isnan(one.n_eff) and one.flags == ("k_lt_2",)


def test_negative_icc_reaches_evaluate_diagnostics():
    task, run = _task({"A": [1, 0, 1, 0], "B": [0, 1, 0, 1], "C": [1, 0]})
    rep = evaluate(run, task, n_resamples=199)
    assert rep.diagnostics["icc"] < 0 and rep.diagnostics["deff"] == 1.0
    assert list(rep.diagnostics["flags"]) == ["negative_icc"]
    assert "flags=negative_icc" in rep.summary()
    assert json.loads(rep.to_json())["diagnostics"]["flags"] == ["negative_icc"]


# --------------------------------------------------------------------------- K = the census
def test_coverage_refuses_k_equal_to_the_population():
    v, c = _sample(K=12)
    pop = pd.DataFrame({"doc_id": c, "value": v})
    for fpc in (False, True):
        with pytest.raises(RagcovError, match=r"`k`=12 equals the population \(12 documents\).*Pick K < 12"):
            coverage_study(pop, k=[5, 12], reps=20, methods=["cr2"], fpc=fpc, show_progress=False)
    tab = coverage_study(pop, k=11, reps=20, methods=["cr2"], fpc=True, show_progress=False)
    assert tab.attrs["fpc"] is True and tab["coverage"].between(0, 1).all()


def test_two_stage_census_is_refused():
    types = np.repeat(["a", "b", "c"], 4)
    pop = pd.DataFrame({"doc_id": np.arange(12), "doc_type": types, "n": 3, "hits": np.arange(12) % 4})
    with pytest.raises(RagcovError, match="draws all 3 eligible types and every document of each"):
        coverage_study(pop, k=12, reps=20, design="two-stage", n_types=3, show_progress=False)
    tab = coverage_study(pop, k=9, reps=20, design="two-stage", n_types=3, show_progress=False)
    assert len(tab) == 2


def test_fpc_scales_macro_analytic_widths_by_sqrt_one_minus_k_over_d():
    v, c = _sample(K=40, seed=3)
    pop = pd.DataFrame({"doc_id": c, "value": v})
    kw = dict(k=10, reps=50, methods=["cr2", "t", "wald_iid", "cluster_bootstrap"], n_resamples=99,
              show_progress=False)
    plain = coverage_study(pop, **kw).set_index(["estimator", "method"])
    fpc = coverage_study(pop, fpc=True, **kw).set_index(["estimator", "method"])
    for key in [("macro", "cr2"), ("macro", "t")]:
        assert fpc.loc[key, "mean_width"] == pytest.approx(plain.loc[key, "mean_width"] * np.sqrt(1 - 10 / 40))
    for key in [("micro", "cr2"), ("micro", "wald_iid"), ("micro", "cluster_bootstrap")]:  # not corrected
        assert fpc.loc[key, "mean_width"] == plain.loc[key, "mean_width"]
    assert plain.attrs["fpc"] is False and fpc.attrs["fpc"] is True


def test_plan_does_not_simulate_a_census():
    v, c = _sample(K=12, seed=4)
    pop = pd.DataFrame({"doc_id": c, "value": v})
    rates = pd.Series(v).groupby(c).mean().to_numpy()
    var = rates.var(ddof=1)
    hw = lambda k: stats.t.ppf(0.975, k - 1) * np.sqrt(var / k)  # noqa: E731
    res = plan(pop, (hw(12) + hw(11)) / 2, estimators="macro", reps=20)
    row = res.rows[0]
    assert row["k"] == 12 and row["feasible"] and row["achieved_halfwidth"] is None
    assert "a census): not confirmed" in repr(res)
