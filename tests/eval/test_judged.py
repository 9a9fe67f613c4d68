"""judged@k of the leaderboard equals ir_measures' Judged@k per query, short runs included."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragcov_data.eval import leaderboard

ir_measures = pytest.importorskip("ir_measures")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGCOV_VERIFY_CACHE_DIR", str(tmp_path / "vcache"))


def _task_and_runs(seed=0):
    rng = np.random.default_rng(seed)
    nq, nd = 30, 60
    qids = [f"q{i:02d}" for i in range(nq)]
    docs = [f"d{j:02d}" for j in range(nd)]
    qrels = pd.DataFrame([(q, d, int(rng.integers(0, 3))) for q in qids for d in rng.choice(docs, 8, replace=False)],
                         columns=["query-id", "corpus-id", "score"])
    queries = pd.DataFrame({"_id": qids, "source_key": [f"s{i // 2}" for i in range(nq)]})
    runs = {}
    for name in ("a", "b", "c"):
        rows = []
        for q in qids:
            m = int(rng.integers(1, 15))  # many queries retrieve fewer than 10 documents
            picked = rng.choice(docs, m, replace=False)
            scores = rng.permutation(m).astype(float) + 1.0  # distinct scores: no tie-policy difference
            rows += [(q, d, s) for d, s in zip(picked, scores)]
        runs[name] = pd.DataFrame(rows, columns=["query-id", "corpus-id", "score"])
    return {"queries": queries, "qrels": qrels}, runs


def test_judged_equals_ir_measures_on_short_runs():
    task, runs = _task_and_runs()
    board = leaderboard(runs, task, metric="ndcg@10", n_resamples=199)
    qrels = task["qrels"].rename(columns={"query-id": "query_id", "corpus-id": "doc_id", "score": "relevance"})
    for name, run in runs.items():
        r = run.rename(columns={"query-id": "query_id", "corpus-id": "doc_id"})
        per_q = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.Judged @ 10], qrels, r)}
        want = np.mean([per_q.get(q, 0.0) for q in task["queries"]["_id"]])
        got = board.systems.set_index(["name", "group"]).loc[(name, "__all__"), "judged"]
        assert got == pytest.approx(want, abs=1e-12)
    short = (runs["a"].groupby("query-id").size() < 10).mean()
    assert short > 0.3  # the case where dividing by k and by the retrieved count differ
