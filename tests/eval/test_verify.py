"""Per-design verification of interval coverage (eval/verify.py)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ragcov_data.eval.estimates import verify as V
from ragcov_data.eval.estimates.concentration import is_concentrated


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv(V.ENV_VAR, str(tmp_path / "vcache"))
    return tmp_path / "vcache"


def _clustered(K=30, seed=0, big=None):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 15, K)
    if big:
        sizes[0] = big
    cl = np.repeat(np.arange(K), sizes)
    y = (rng.random(len(cl)) < np.repeat(rng.beta(0.5, 1.5, K), sizes)).astype(float)
    return y, cl


def test_naive_method_fails_and_document_method_passes():
    y, cl = _clustered()
    res = V.verify_design(V.design_of(y, cl), [("micro", "wald_iid"), ("macro", "t")])
    assert res["micro/wald_iid"]["verified"] is False and res["micro/wald_iid"]["verified_coverage"] < 0.85
    t = res["macro/t"]
    assert t["verified"] is True and 0.9 < t["verified_coverage"] < 0.99
    c = t["verified_coverage"]
    assert t["verified_mc_se"] == pytest.approx(np.sqrt(c * (1 - c) / t["reps"]))


def test_cached_by_content_and_written_once(_cache, monkeypatch):
    y, cl = _clustered(seed=1)
    d = V.design_of(y, cl)
    a = V.verify_design(d, [("macro", "t")])
    files = list(_cache.glob("*.json"))
    assert len(files) == 1 and "macro/t" in json.loads(files[0].read_text())
    monkeypatch.setattr(V, "_simulate", lambda *a, **k: (_ for _ in ()).throw(AssertionError("recomputed")))
    assert V.verify_design(d, [("macro", "t")]) == a  # read back, not simulated
    y2 = y.copy()
    y2[0] = 1 - y2[0]
    with pytest.raises(AssertionError, match="recomputed"):  # another design, another key
        V.verify_design(V.design_of(y2, cl), [("macro", "t")])


def test_sampled_design_uses_a_finite_population_twin():
    rng = np.random.default_rng(0)
    n = np.array([3.0, 5, 7, 2])
    n2, s2, q2 = V._twin_population(n, n, n, 10, rng)
    assert len(n2) == 10 and sorted(np.unique(n2)) == sorted(n)
    counts = pd.Series(n2).value_counts()
    assert counts.min() >= 2 and counts.max() <= 3
    y, cl = _clustered(K=40, seed=2)
    res = V.verify_design(V.design_of(y, cl, population=60), [("macro", "t"), ("micro", "cr2")])
    assert res["macro/t"]["verified_coverage"] > 0.9


@pytest.mark.parametrize("population", [None, 60, 40 * 60])  # census; a twin of 60; one too large to build
def test_micro_checked_without_sizes_passes_only_on_a_census_of_unconcentrated_documents(population):
    # concentrated documents (the largest holds 15.7% of 40 documents' queries, past 0.19 / 40^0.3 = 6.3%): micro
    # covers in the bootstrap world, yet that world holds only documents shaped like these, so the row is
    # unverifiable (with the reason), never verified; equal documents (all 8 queries) are checked as before;
    # macro is checked either way
    rng = np.random.default_rng(4)
    unequal = np.maximum(1, np.round(np.exp(rng.normal(2, 1.0, 40)))).astype(int)  # lognormal sizes, CV 1.2
    for sizes, blind in ((unequal, True), (np.full(40, 8), False)):
        cl = np.repeat(np.arange(40), sizes)
        y = (rng.random(len(cl)) < np.repeat(rng.beta(2, 2, 40), sizes)).astype(float)  # documents differ
        assert is_concentrated(sizes)[0] is blind
        res = V.verify_design(V.design_of(y, cl, population=population),
                              [("macro", "t"), ("micro", "cr2"), ("micro", "wald_iid")])
        cr2, wald = res["micro/cr2"], res["micro/wald_iid"]
        if blind:
            assert cr2["verified_status"] == "unverifiable" and cr2["verified"] is False
            assert cr2["verified_reason"] == (V.unequal_sizes_reason(sizes) if population is None else V.UNSEEN_SIZES)
            # a method shown to fall short stays not_verified: what the data cannot show does not excuse it
            if wald["verified_coverage"] + 2 * wald["verified_mc_se"] < 0.95:
                assert wald["verified_status"] == "not_verified"
            assert population is not None or wald["verified_status"] == "not_verified"
        elif population is None:  # a census of equal documents: the pass stands
            assert cr2["verified_status"] == "verified" and "verified_reason" not in cr2
        else:  # a sample cannot show the sizes it missed, however equal the ones it drew
            assert cr2["verified_status"] == "unverifiable" and cr2["verified_reason"] == V.UNSEEN_SIZES
        assert res["macro/t"]["verified_status"] == "verified" and "verified_reason" not in res["macro/t"]


def test_size_cv_is_the_coefficient_of_variation():  # kept importable: the leaderboard's headline prints it
    assert V.size_cv([5, 5, 5]) == 0.0 and V.size_cv([3]) == 0.0
    assert V.size_cv([1, 3]) == pytest.approx(np.std([1, 3]) / 2)


def test_evaluate_says_why_micro_is_unverifiable_on_a_sample_without_sizes():
    from ragcov_data.eval import evaluate

    rng = np.random.default_rng(5)
    cl = np.repeat(np.arange(30), np.r_[rng.integers(2, 10, 26), 40, 50, 60, 45])  # unequal documents
    y = (rng.random(len(cl)) < 0.6).astype(float)
    qrels = pd.DataFrame({"query-id": [f"q{i}" for i in range(len(cl))], "corpus-id": "d", "score": 1})
    run = pd.DataFrame({"query-id": qrels["query-id"], "corpus-id": np.where(y > 0, "d", "x"), "rank": 1,
                        "score": 1.0})
    queries = pd.DataFrame({"_id": qrels["query-id"], "doc_id": [f"doc{c}" for c in cl]})
    r = evaluate(run, {"queries": queries, "qrels": qrels}, metric="hit@1", population_sizes=90,
                 methods=["wald_iid", "cr2", "cr1", "t"])
    micro = r.estimates[(r.estimates["estimator"] == "micro") & ~r.estimates["naive"].astype(bool)]
    assert set(micro["verified_status"]) <= {"unverifiable", "not_verified"} and (micro["verified_status"] ==
                                                                                  "unverifiable").any()
    assert not micro["verified"].astype(bool).any()
    text = r.summary("all")
    assert "UNVERIFIABLE: micro" in text and text.count("did not draw are unknown") == 1  # said once


def test_verify_intervals_adds_the_fields_per_group():
    y, cl = _clustered(seed=3)
    g = np.where(cl % 2 == 0, "a", "b")
    table = pd.DataFrame({"group": ["__all__", "a", "b"], "estimator": ["macro"] * 3, "method": ["t"] * 3})
    designs = {"__all__": V.design_of(y, cl), "a": V.design_of(y[g == "a"], cl[g == "a"]),
               "b": V.design_of(y[g == "b"], cl[g == "b"])}
    out = V.verify_intervals(table, designs)
    assert list(out.columns[-len(V.VERIFY_FIELDS) - 1:]) == [*V.VERIFY_FIELDS, "verified_reason"]
    assert (out["verified_reason"] == "").all()  # a census design: every row checked, none blind
    assert out["verified_coverage"].notna().all() and out["verified"].map(lambda x: isinstance(x, bool)).all()
    assert len(set(out["verified_coverage"])) > 1  # three designs, three measurements
    empty = V.verify_intervals(table, None)
    assert empty["verified"].isna().all()


def test_evaluate_reports_verification_and_prints_unverified():
    from ragcov_data.eval import evaluate

    y, cl = _clustered(K=12, seed=4, big=200)  # one dominant document, few documents
    qids = [f"q{i}" for i in range(len(y))]
    queries = pd.DataFrame({"_id": qids, "doc_id": [f"d{c}" for c in cl]})
    qrels = pd.DataFrame({"query-id": qids, "corpus-id": "rel", "score": 1})
    run = pd.DataFrame({"query-id": qids, "corpus-id": np.where(y == 1, "rel", "other"), "score": 1.0})
    res = evaluate(run, {"queries": queries, "qrels": qrels}, methods=["wald_iid", "cr2", "t"], n_resamples=199)
    e = res.estimates
    assert set(V.VERIFY_FIELDS) <= set(e.columns) and e["verified_coverage"].between(0, 1).all()
    naive = e[e["method"] == "wald_iid"].iloc[0]
    assert naive["verified"] is False or naive["verified"] == False  # noqa: E712
    assert "NOT VERIFIED: micro wald_iid" in res.summary("all")


# ------------------------------------------------------------------ a document sample cannot fool its check
def _dominated_population(seed=0, M=120):
    """M documents of 3-14 queries at rates near 0.3, and one document of 500 queries at 0.95 (a fifth of the
    queries): a sample-only interval under-covers on samples that miss it."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 15, M)
    sizes[0] = 500
    rates = np.clip(rng.beta(2, 4, M), 0, 1)
    rates[0] = 0.95
    cl = np.repeat(np.arange(M), sizes)
    y = (rng.random(len(cl)) < rates[cl]).astype(float)
    return y, cl, sizes.astype(float)


def _sample(y, cl, docs):
    keep = np.isin(cl, docs)
    return y[keep], cl[keep]


def test_sized_check_does_not_verify_cr2_on_a_sample_that_missed_the_large_document():
    y, cl, sizes = _dominated_population()
    M = len(sizes)
    truth = y.mean()
    pairs = [("micro", "cr2"), ("micro", "known_sizes")]
    rng = np.random.default_rng(3)
    missed = rng.choice(np.arange(1, M), 40, replace=False)
    ys, cs = _sample(y, cl, missed)
    # the sample alone (no sizes) cannot see the document: its twin covers, so the row is unverifiable
    blind = V.verify_design(V.design_of(ys, cs, population=M), pairs)
    assert blind["micro/cr2"]["verified_coverage"] >= 0.93 and blind["micro/cr2"]["verified"] is False
    assert blind["micro/cr2"]["verified_status"] == "unverifiable"
    # and that CR2 interval misses the census value: a verified flag would have been wrong
    from ragcov_data.eval import interval
    r = interval(ys, cs, "micro", "cr2")
    assert not (r.low <= truth <= r.high)
    res = V.verify_design(V.design_of(ys, cs, population=M, sizes=sizes), pairs)
    for k in ("micro/cr2", "micro/known_sizes"):
        assert res[k]["verified_status"] in V.STATUSES
        assert res[k]["verified"] is (res[k]["verified_status"] == "verified")
    assert res["micro/cr2"]["verified_status"] != "verified"
    assert res["micro/cr2"]["verified"] is False
    # every method of the design on the same replicates
    assert res["micro/cr2"]["reps"] == res["micro/known_sizes"]["reps"] == V.VERIFY_REPS


def test_sized_check_verifies_cr2_on_a_sample_that_holds_the_large_document():
    y, cl, sizes = _dominated_population()
    M = len(sizes)
    rng = np.random.default_rng(4)
    held = np.concatenate([[0], rng.choice(np.arange(1, M), 39, replace=False)])
    ys, cs = _sample(y, cl, held)
    res = V.verify_design(V.design_of(ys, cs, population=M, sizes=sizes), [("micro", "cr2")])
    assert res["micro/cr2"]["verified_status"] == "verified" and res["micro/cr2"]["verified"] is True


def test_unseen_sizes_are_the_population_less_the_sample():
    got = V._unseen_sizes(np.array([3.0, 5.0, 5.0]), np.array([5.0, 3.0, 9.0, 5.0, 5.0, 0.0, 2.0]))
    np.testing.assert_array_equal(np.sort(got), [2.0, 5.0, 9.0])  # the document without queries left out
    assert V.large_documents(np.array([1.0, 1.0, 30.0, 2.0])).tolist() == [False, False, True, False]


def test_status_rule_from_the_twins():
    assert V._status(np.full(20, 0.97), 50, 0.95)[0] == "verified"
    assert V._status(np.full(20, 0.70), 50, 0.95)[0] == "not_verified"
    mixed = np.r_[np.full(10, 1.0), np.full(10, 0.6)]  # depends on the twin: cannot tell
    st, c, se = V._status(mixed, 50, 0.95)
    assert st == "unverifiable" and c == pytest.approx(0.8) and se == pytest.approx(np.sqrt(0.8 * 0.2 / 1000))


def test_recommended_is_the_narrowest_that_passes_and_never_an_unverifiable_row():
    from ragcov_data.eval.estimates.results import mark_recommended

    t = pd.DataFrame({"estimator": ["micro"] * 3, "method": ["known_sizes", "bootstrap_t", "cr2"],
                      "low": [0.3, 0.35, 0.4], "high": [0.7, 0.6, 0.5],
                      "verified": [True, True, False],
                      "verified_status": ["verified", "verified", "unverifiable"]})
    rec = mark_recommended(t, sampled=True)
    assert rec.loc[rec["recommended"], "method"].tolist() == ["bootstrap_t"]  # narrowest verified, cr2 is not
    t["verified"] = False
    t["verified_status"] = ["not_verified", "unverifiable", "unverifiable"]
    rec = mark_recommended(t, sampled=True)
    assert rec.loc[rec["recommended"], "method"].tolist() == ["bootstrap_t"]  # first not shown to fall short


def test_sized_check_of_a_pair_does_not_depend_on_the_other_pairs():
    y, cl, sizes = _dominated_population(seed=2)
    ys, cs = _sample(y, cl, np.arange(1, 41))
    d = V.design_of(ys, cs, population=len(sizes), sizes=sizes)
    alone = V.verify_design(d, [("micro", "bootstrap_t")], use_cache=False)
    both = V.verify_design(d, [("micro", "cr2"), ("micro", "bootstrap_t")], use_cache=False)
    assert alone["micro/bootstrap_t"] == both["micro/bootstrap_t"]
