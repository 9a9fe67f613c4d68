"""Bounded quantities: intervals cut to [0, 1] / [-1, 1] with a visible mark; zero variance said in words."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval import evaluate
from ragcov_data.eval.estimates._bounds import clip_table, no_variation_text, value_range


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGCOV_VERIFY_CACHE_DIR", str(tmp_path / "vcache"))


def test_value_range():
    assert value_range([0, 0.5, 1]) == (0.0, 1.0)
    assert value_range([-1, 0, 0.5]) == (-1.0, 1.0)
    assert value_range([0, 2]) is None and value_range([]) is None and value_range([np.nan]) is None


def test_clip_keeps_raw_and_marks_the_cut():
    t = pd.DataFrame({"estimator": ["micro", "macro"], "method": ["cr2", "t"], "low": [-0.07, 0.2],
                      "high": [1.01, 0.4], "flags": ["", ""]})
    out = clip_table(t, (0.0, 1.0))
    assert out["low_bounded"].tolist() == [0.0, 0.2] and out["high_bounded"].tolist() == [1.0, 0.4]
    assert out["clipped"].tolist() == [True, False]
    assert out["low"].tolist() == [-0.07, 0.2]  # the method's raw endpoints stay
    same = clip_table(t, None)
    assert not same["clipped"].any() and same["low_bounded"].equals(same["low"])


def test_clipping_never_changes_coverage_near_the_bound():
    """Rates near 1 (hit@1 ~ 0.97): raw Wald-type intervals cross 1 often; cutting them at 1 gives the
    same coverage, replicate by replicate, and never a wider interval."""
    rng = np.random.default_rng(0)
    K, R = 15, 3000
    n = rng.integers(2, 10, (R, K)).astype(float)
    p = rng.beta(30, 1, (R, K))
    s = rng.binomial(n.astype(int), p).astype(float)
    truth = 30 / 31
    o = _kernels.interval_batch(n, s, s, estimator="macro", method="t")
    t = pd.DataFrame({"low": o["low"], "high": o["high"]})
    c = clip_table(t, (0.0, 1.0))
    assert c["clipped"].mean() > 0.2  # the situation arises
    raw = (t["low"] <= truth) & (truth <= t["high"])
    cut = (c["low_bounded"] <= truth) & (truth <= c["high_bounded"])
    assert (raw == cut).all()
    assert ((c["high_bounded"] - c["low_bounded"]) <= (t["high"] - t["low"]) + 1e-15).all()
    assert c["low_bounded"].min() >= 0 and c["high_bounded"].max() <= 1


def _task(y, docs):
    qids = [f"q{i}" for i in range(len(y))]
    queries = pd.DataFrame({"_id": qids, "doc_id": docs})
    qrels = pd.DataFrame({"query-id": qids, "corpus-id": "rel", "score": 1})
    run = pd.DataFrame({"query-id": qids, "corpus-id": np.where(np.asarray(y) == 1, "rel", "other"), "score": 1.0})
    return run, {"queries": queries, "qrels": qrels}


def test_evaluate_prints_bounded_intervals_and_no_variation():
    docs = [f"d{i // 4}" for i in range(40)]
    run, task = _task(np.zeros(40), docs)
    res = evaluate(run, task, methods=["cr2", "t"], n_resamples=199)
    e = res.estimates
    assert (e["no_variation"] == "no variation: all 40 values 0").all()
    text = res.summary("all")
    assert "no variation: all 40 values 0" in text and "zero_variance" in text
    y = np.ones(40)
    y[[0, 5]] = 0  # hit rate 0.95, a few documents below 1
    run, task = _task(y, docs)
    e = evaluate(run, task, methods=["cr2", "t", "cr1"], n_resamples=199).estimates
    assert (e["high_bounded"] <= 1).all() and (e["low_bounded"] >= 0).all()
    assert e["clipped"].any() and (e.loc[e["clipped"], "high"] > 1).all()


def test_no_variation_text():
    assert no_variation_text([1, 1, 1]) == "no variation: all 3 values 1"
    assert no_variation_text([0, 1, 0, 1]).startswith("no variation between clusters")
