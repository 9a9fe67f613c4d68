"""Cluster-size concentration: the diagnostics against hand computations and independent formulas, the rule's
decisions on the ANEEL acts, an LGPD-like exam design and equal sizes, and the census check that reads it."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ragcov_data.eval.estimates import concentration as C
from ragcov_data.eval.estimates import verify as V

#: LGPD-like: 696 exam questions in 489 exams, most of one question, the largest exam 16 (2.3%).
LGPD_LIKE = np.r_[16, 12, 10, 8, 8, np.full(6, 6), np.full(12, 4), np.full(25, 3), np.full(42, 2), np.full(399, 1)]


def _aneel_like() -> np.ndarray:
    """147 documents, 2,312 queries, the largest 426 (18.4%): the ANEEL acts' shape (a seeded lognormal rest)."""
    rng = np.random.default_rng(0)
    rest = np.maximum(1, np.round(np.exp(rng.normal(2.0, 1.0, 146)))).astype(int)
    rest = np.maximum(1, np.round(rest * (2312 - 426) / rest.sum())).astype(int)
    rest[np.argmax(rest)] += 2312 - 426 - rest.sum()  # exactly 2,312 queries
    return np.r_[426, rest]


def test_lgpd_like_sizes_are_the_described_design():
    assert len(LGPD_LIKE) == 489 and LGPD_LIKE.sum() == 696 and LGPD_LIKE.max() == 16
    assert V.size_cv(LGPD_LIKE) > V.NEAR_EQUAL_CV  # the old rule's misfire: CV above 0.5


def test_diagnostics_by_hand():
    n = [1, 1, 2]
    assert C.largest_share(n) == pytest.approx(0.5)
    assert C.effective_clusters(n) == pytest.approx(16 / 6)  # N^2 / sum n^2
    assert C.effective_clusters(n, rho=1.0) == pytest.approx(36 / 18)  # (sum n^2)^2 / sum n^4
    assert C.concentration(n) == pytest.approx(0.5 * 3 ** C.CONCENTRATION_POWER)
    assert C.concentration(n, power=0.5) == pytest.approx(0.5 * math.sqrt(3))
    assert C.largest_share([0, 0, 3, 1]) == pytest.approx(0.75) and C.effective_clusters([0, 3, 1]) == \
        pytest.approx(16 / 10)  # clusters without queries take no part
    assert C.largest_share([]) == 0.0 and C.effective_clusters([]) == 0.0
    with pytest.raises(ValueError):
        C.effective_clusters(n, rho=1.5)


@pytest.mark.parametrize("rho", [0.0, 0.3, 1.0])
def test_effective_clusters_is_carter_schnepel_steigerwald(rho):
    # independent: G / (1 + Gamma), Gamma the squared CV of gamma_j = e'(X'X)^-1 X_j' Omega_j X_j (X'X)^-1 e for
    # the intercept-only regression with equicorrelated errors (unit variance, correlation rho) in cluster j
    n = np.array([1, 3, 3, 7, 20])
    N = n.sum()
    gam = []
    for nj in n:
        omega = rho * np.ones((nj, nj)) + (1 - rho) * np.eye(nj)
        x = np.ones(nj) / N
        gam.append(x @ omega @ x)
    gam = np.array(gam)
    want = len(n) / (1 + gam.var() / gam.mean() ** 2)
    assert C.effective_clusters(n, rho) == pytest.approx(want)
    if rho == 0.0:
        assert C.effective_clusters(n) == pytest.approx(len(n) / (1 + V.size_cv(n) ** 2))


def test_equal_sizes_are_never_concentrated():
    for G in (2, 3, 5, 13, 20, 150, 5000):
        n = np.full(G, 7)
        assert C.effective_clusters(n) == pytest.approx(G) and C.effective_clusters(n, 1.0) == pytest.approx(G)
        assert C.concentration(n) == pytest.approx(G ** (C.CONCENTRATION_POWER - 1))
        assert C.is_concentrated(n) == (False, "")
    assert C.is_concentrated([5]) == (False, "")  # one cluster: nothing to check
    assert C.is_concentrated([1, 1, 1, 4])[0]  # 4 of 7 queries: past c / 4^b and 2 / 4
    assert 2 / 5 * 4 ** C.CONCENTRATION_POWER > C.CONCENTRATION_C
    assert not C.is_concentrated([1, 1, 1, 2])[0]  # 2 of 5: past c / 4^b, not past 2 / 4


def test_the_rule_on_the_aneel_acts(data_dir):
    import ragcov_data

    q = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), show_progress=False,
                                 chunk_words=100)["queries"].to_pandas()
    n = q["doc_id"].astype(str).value_counts().to_numpy()
    blind, why = C.is_concentrated(n)
    assert blind and len(n) == 147
    b = C.CONCENTRATION_C / 147 ** C.CONCENTRATION_POWER
    assert why == f"one document holds {n.max() / n.sum():.1%} of the queries, more than {C.CONCENTRATION_C:g} / " \
                  f"147^{C.CONCENTRATION_POWER:g} = {b:.1%} for 147 documents"
    assert n.max() / n.sum() > 3 * b  # far past the bound, not at its edge
    second = np.sort(n)[-2]  # a draw of the acts without the largest is still concentrated
    assert C.is_concentrated(np.sort(n)[:-1])[0] and second / (n.sum() - n.max()) > b
    assert "18.4%" in why


def test_the_rule_on_synthetic_designs():
    assert C.is_concentrated(_aneel_like())[0]
    assert not C.is_concentrated(LGPD_LIKE)[0]
    G = 489  # the same exams, one of them holding 5% of the queries: past c / G^b = 3.0%
    big = np.r_[37, LGPD_LIKE[1:]]
    assert C.largest_share(big) > C.CONCENTRATION_C / G ** C.CONCENTRATION_POWER and C.is_concentrated(big)[0]
    c = C.concentration(LGPD_LIKE)
    assert C.is_concentrated(LGPD_LIKE, c=c * 0.99)[0] and not C.is_concentrated(LGPD_LIKE, c=c)[0]


def _census(sizes: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    cl = np.repeat(np.arange(len(sizes)), sizes)
    y = (rng.random(len(cl)) < np.repeat(rng.beta(2, 2, len(sizes)), sizes)).astype(float)
    return y, cl


def test_verify_marks_census_micro_unverifiable_only_where_concentrated(tmp_path):
    pairs = [("micro", "cr2"), ("micro", "cr1"), ("macro", "t")]
    y, cl = _census(_aneel_like(), 0)  # a seed whose CR2 passes the check (0.936 + 2 SE >= 0.95)
    res = V.verify_design(V.design_of(y, cl), pairs, cache_dir=tmp_path)
    for m in ("cr2", "cr1"):
        r = res[f"micro/{m}"]
        assert r["verified_status"] in ("unverifiable", "not_verified") and r["verified"] is False
        if r["verified_status"] == "unverifiable":
            assert r["verified_reason"] == V.unequal_sizes_reason(np.bincount(cl))
            assert r["verified_reason"].startswith("one document holds 18.4% of the queries, more than")
    assert res["micro/cr2"]["verified_status"] == "unverifiable"
    assert "verified_reason" not in res["macro/t"]
    y, cl = _census(LGPD_LIKE, 2)  # benign: the check's own verdict stands, micro included
    res = V.verify_design(V.design_of(y, cl), pairs, cache_dir=tmp_path)
    for key in ("micro/cr2", "micro/cr1", "macro/t"):
        r = res[key]
        assert "verified_reason" not in r
        passes = r["verified_coverage"] + 2 * r["verified_mc_se"] >= 0.95
        assert r["verified_status"] == ("verified" if passes else "not_verified") and r["verified"] is passes
    assert res["micro/cr2"]["verified_status"] == "verified"


@pytest.mark.parametrize("task, unit", [("juristcu", "source_key"), ("irpf", "topic"), ("lgpd", "exam")])
def test_the_other_tasks_are_checked(data_dir, task, unit):
    # the rule was not chosen on these tasks: their micro rows stay checked (JurisTCU, IRPF) or become so (LGPD,
    # which the CV rule marked: CV 0.68 in the shared sample)
    import warnings

    import ragcov_data

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = ragcov_data.load_dataset(task, data_dir=str(data_dir), show_progress=False)["queries"].to_pandas()
    n = q[unit].astype(str).value_counts().to_numpy()
    assert len(n) >= 100 and C.is_concentrated(n) == (False, "")
    assert C.concentration(n) < 0.7 * C.CONCENTRATION_C  # well inside the bound


def test_a_cached_check_is_never_read_under_another_rule(monkeypatch):
    # the cache folder is shared between checkouts: a check made under another census rule has another key
    d = V.design_of(*_census(LGPD_LIKE, 3))
    k = V._key(d, 100, 99)
    assert V._key(d, 100, 99) == k
    monkeypatch.setattr(V, "CONCENTRATION_C", 0.5)
    assert V._key(d, 100, 99) != k


def test_the_reason_names_the_tasks_unit():
    # the unit may be an exam (LGPD), a topic (IRPF) or a source summary (JurisTCU): the reason says which
    n = _aneel_like()
    doc = C.concentration_text(n)
    assert doc.startswith("one document holds 18.4% of the queries, more than 0.19 / 147^0.3 = ")
    assert doc.endswith("for 147 documents") and C.is_concentrated(n) == (True, doc)  # the default wording
    exam = C.concentration_text(n, unit="exam")
    assert exam == doc.replace("one document", "one exam").replace("147 documents", "147 exams")
    assert C.is_concentrated(n, unit="exam") == (True, exam)
    assert C.concentration_text(n, unit="query").endswith("for 147 queries")
    why = V.unequal_sizes_reason(n, "exam")
    assert why.startswith(exam) and "these exams cannot see" in why and "document" not in why
    assert V.unequal_sizes_reason(n) == V.unequal_sizes_reason(n, "document") and "these documents" in \
        V.unequal_sizes_reason(n)


def _exam_task() -> tuple[np.ndarray, np.ndarray, dict, dict]:
    """The ANEEL-like census as an exam task (its default cluster ``exam``), a run scoring ``y``, and one missing
    everything (a paired difference equal to ``y``)."""
    import pandas as pd

    y, cl = _census(_aneel_like(), 0)  # seed 0: CR2 passes the check, so the rule marks it (as above)
    qids = [f"q{i:04d}" for i in range(len(y))]
    queries = pd.DataFrame({"_id": qids, "exam": [f"e{c:03d}" for c in cl]})
    qrels = pd.DataFrame({"query-id": qids, "corpus-id": "rel", "score": 1})
    runs = {name: pd.DataFrame({"query-id": qids, "corpus-id": np.where(hit, "rel", "other"), "score": 1.0})
            for name, hit in (("a", y == 1), ("none", np.zeros(len(y), bool)))}
    return y, cl, {"queries": queries, "qrels": qrels}, runs


def _says_exams(reasons) -> None:
    reasons = [r for r in reasons if r]
    assert reasons
    for why in reasons:
        assert why.startswith("one exam holds 18.4% of the queries") and "for 147 exams" in why
        assert "these exams cannot see" in why and "document" not in why


def test_a_concentrated_exam_census_says_exams_not_documents(tmp_path, monkeypatch):
    # through evaluate, compare and leaderboard on a task whose unit is the exam: every unverifiable micro row's
    # reason names exams; the same design checked without a unit keeps the document's words
    from ragcov_data.eval.comparisons.compare import compare
    from ragcov_data.eval.comparisons.leaderboard import leaderboard
    from ragcov_data.eval.estimates.evaluator import evaluate

    monkeypatch.setenv(V.ENV_VAR, str(tmp_path))
    y, cl, task, runs = _exam_task()
    e = evaluate(runs["a"], task, methods=["cr2", "cr1", "t"], n_resamples=199).estimates
    blind = e[e["verified_status"] == "unverifiable"]
    assert set(blind["estimator"]) == {"micro"} and "cr2" in set(blind["method"])
    _says_exams(blind["verified_reason"])
    d = compare(runs["a"], runs["none"], task, methods=["cr2", "t"], n_resamples=199).estimates
    _says_exams(d.loc[d["verified_status"] == "unverifiable", "verified_reason"])
    lb = leaderboard(runs, task, estimator="micro", n_resamples=199).systems
    _says_exams(lb.loc[lb["verified_status"] == "unverifiable", "verified_reason"])
    # one check a design whatever its unit's name: one cache entry, its reason worded for each unit on reading
    d_exam = V.design_of(y, cl, unit="exam")
    assert V._key(d_exam, 100, 99) == V._key(V.design_of(y, cl), 100, 99)
    pairs = [("micro", "cr2")]
    as_exams = V.verify_design(d_exam, pairs, reps=100, n_resamples=99)["micro/cr2"]
    as_documents = V.verify_design(V.design_of(y, cl), pairs, reps=100, n_resamples=99)["micro/cr2"]
    _says_exams([as_exams["verified_reason"]])
    assert as_documents["verified_reason"].startswith("one document holds 18.4%")
    assert {k: v for k, v in as_exams.items() if k != "verified_reason"} == \
        {k: v for k, v in as_documents.items() if k != "verified_reason"}


def test_a_sample_of_exams_without_sizes_says_exams_not_documents(tmp_path, monkeypatch):
    """A sample of 147 of 400 exams without their sizes: the unverifiable micro row says the unseen exams' sizes are
    unknown, in exams' words and without the --sample-docs hint (which records documents); the same check's entry,
    read for documents, keeps the document wording."""
    from ragcov_data.eval.estimates.evaluator import evaluate

    monkeypatch.setenv(V.ENV_VAR, str(tmp_path))
    y, cl, task, runs = _exam_task()
    e = evaluate(runs["a"], task, methods=["cr2", "t"], population_sizes=400, n_resamples=199).estimates
    why = e.loc[(e["estimator"] == "micro") & (e["method"] == "cr2"), "verified_reason"].iloc[0]
    assert why == V.unseen_sizes_reason("exam") != V.UNSEEN_SIZES
    assert why.startswith("the sizes of the exams the sample did not draw") and "every population exam's size" in why
    assert "document" not in why and "--sample-docs" not in why
    assert V.unseen_sizes_reason() == V.unseen_sizes_reason("document") == V.UNSEEN_SIZES
    entry = V.verify_design(V.design_of(y, cl, population=400), [("micro", "cr2")], reps=100, n_resamples=99)
    assert entry["micro/cr2"]["verified_reason"] == V.UNSEEN_SIZES
