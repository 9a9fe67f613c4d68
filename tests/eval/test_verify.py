"""Per-design verification of interval coverage (eval/verify.py)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ragcov_data.eval.estimates import verify as V


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


def test_verify_intervals_adds_the_fields_per_group():
    y, cl = _clustered(seed=3)
    g = np.where(cl % 2 == 0, "a", "b")
    table = pd.DataFrame({"group": ["__all__", "a", "b"], "estimator": ["macro"] * 3, "method": ["t"] * 3})
    designs = {"__all__": V.design_of(y, cl), "a": V.design_of(y[g == "a"], cl[g == "a"]),
               "b": V.design_of(y[g == "b"], cl[g == "b"])}
    out = V.verify_intervals(table, designs)
    assert list(out.columns[-len(V.VERIFY_FIELDS):]) == list(V.VERIFY_FIELDS)
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
