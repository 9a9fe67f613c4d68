"""The leaderboard's verdicts come from the printed simultaneous intervals; best_set follows them."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ragcov_data.eval import leaderboard


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGCOV_VERIFY_CACHE_DIR", str(tmp_path / "vcache"))


def _task(seed=0, nq=120):
    rng = np.random.default_rng(seed)
    qids = [f"q{i:03d}" for i in range(nq)]
    src = [f"s{min(i // 3, 30)}" for i in range(nq)]  # the last source holds many queries
    qrels = pd.DataFrame({"query-id": qids, "corpus-id": [f"r{i}" for i in range(nq)], "score": 1})
    runs = {}
    for name, p in (("best", 0.8), ("close", 0.75), ("mid", 0.5), ("low", 0.2)):
        hit = rng.random(nq) < p
        runs[name] = pd.DataFrame({"query-id": qids, "corpus-id": np.where(hit, [f"r{i}" for i in range(nq)], "x"),
                                   "score": 1.0})
    return {"queries": pd.DataFrame({"_id": qids, "source_key": src}), "qrels": qrels}, runs


def test_verdict_is_the_interval_and_best_set_follows():
    task, runs = _task()
    board = leaderboard(runs, task, metric="hit@1", n_resamples=499, estimator="micro")  # the micro hull
    pr = board.pairs
    excl = (pr["low"] > 0) | (pr["high"] < 0)
    assert (pr["significant"] == excl).all()
    assert pr["significant"].any() and not pr["significant"].all()
    assert {"significant_holm", "p_family"} <= set(pr.columns)
    assert (pr["p_family"] >= pr["p"] - 1e-12).all()  # the hull test rejects only where CR2 does
    info = board.groups["__all__"]
    sy = board.systems
    assert info["best_set"] == list(sy.loc[sy["rank_low"] == 1, "name"])
    assert "best" in info["best_set"] and "low" not in info["best_set"]
    assert info["pair_method"] == "wild_cluster+cr2"
    d = json.loads(board.to_json())
    assert "best_set" in json.dumps(d)
