"""Provision-level metrics of cited questions, and the leaderboard entry point for per-query values."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.eval.cited import granularity_qrels, leaderboard_from_values, per_query_values, topic_of


@pytest.fixture()
def task():
    queries = pd.DataFrame({"_id": ["q1", "q2", "q3"], "text": ["a", "b", "c"], "partial": [False, True, False]})
    citations = pd.DataFrame([
        # q1 cites two dispositivos of one artigo (chunks c1-c3) and one artigo of another act (c7)
        {"query-id": "q1", "article": "1", "status": "resolved", "chunks": ["c2"], "article_chunks": ["c1", "c2", "c3"]},
        {"query-id": "q1", "article": "1", "status": "resolved", "chunks": ["c3"], "article_chunks": ["c1", "c2", "c3"]},
        {"query-id": "q1", "article": "9", "status": "resolved", "chunks": ["c7"], "article_chunks": ["c7"]},
        # q2: a dispositivo not found in the text (its artigo only)
        {"query-id": "q2", "article": "4", "status": "dispositivo_not_found", "chunks": [], "article_chunks": ["c5"]},
        # q3: an act not in the corpus
        {"query-id": "q3", "article": "2", "status": "act_not_in_corpus", "chunks": [], "article_chunks": []},
    ])
    citations["doc_id"] = ["A", "A", "B", "A", "Z"]
    return {"queries": queries, "citations": citations}


def test_per_query_values_by_hand(task):
    run = pd.DataFrame({"query-id": ["q1"] * 4 + ["q2"] * 2,
                        "corpus-id": ["c9", "c3", "c1", "c7", "c5", "c6"],
                        "score": [4.0, 3.0, 3.0, 1.0, 2.0, 1.0]})
    # q1 trec order: c9, c3 (tie with c1: id descending), c1, c7
    v = per_query_values(run, task, metrics=["recall@2", "recall@4", "hit@1", "ndcg@3"])
    assert list(v.index) == ["q1"]  # q2 has no resolved dispositivo, q3 none at all
    assert v.attrs["excluded"] == ["q2", "q3"]
    assert v.loc["q1", "recall@2"] == pytest.approx(1 / 3)  # c3 covers one of three provisions
    assert v.loc["q1", "recall@4"] == pytest.approx(2 / 3)  # + c7; c2 never retrieved
    assert v.loc["q1", "hit@1"] == 0.0
    # nDCG@3, grades c2=2, c3=2, c7=2, c1=1: ranked c9 (0), c3 (2), c1 (1); ideal 2, 2, 2
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    idcg = 2 + 2 / math.log2(3) + 2 / math.log2(4)
    assert v.loc["q1", "ndcg@3"] == pytest.approx(dcg / idcg)
    art = per_query_values(run, task, metrics=["recall@2", "hit@2"], granularity="article")
    assert list(art.index) == ["q1", "q2"]
    assert art.loc["q1", "recall@2"] == pytest.approx(1 / 2)  # artigo 1 found (c3), artigo 9 not
    assert art.loc["q2", "hit@2"] == 1.0


def test_granularity_qrels(task):
    d = granularity_qrels(task["citations"], "dispositivo").set_index(["query-id", "corpus-id"])["score"].to_dict()
    assert d == {("q1", "c1"): 1, ("q1", "c2"): 2, ("q1", "c3"): 2, ("q1", "c7"): 2, ("q2", "c5"): 1}
    a = granularity_qrels(task["citations"], "article")
    assert set(a["score"]) == {1} and len(a) == 5
    with pytest.raises(RagcovError, match="`granularity` must be one of"):
        granularity_qrels(task["citations"], "paragraph")


def test_bad_metric_and_query_ids(task):
    run = pd.DataFrame({"query-id": ["q1"], "corpus-id": ["c1"], "score": [1.0]})
    with pytest.raises(RagcovError, match="'recall@k', 'hit@k' or 'ndcg@k'"):
        per_query_values(run, task, metrics=["map@10"])
    with pytest.raises(RagcovError, match="no resolved provision"):
        per_query_values(run, task, query_ids=["q3"])


def test_leaderboard_from_values_equals_leaderboard():
    """Fed the per-query values leaderboard() computes itself, the entry point gives the same table."""
    from ragcov_data.eval import leaderboard
    from ragcov_data.eval.metrics import per_query

    rng = np.random.default_rng(3)
    qids = [f"q{i}" for i in range(40)]
    docs = [f"d{j}" for j in range(30)]
    qrels = pd.DataFrame([(q, d, int(rng.integers(1, 3))) for q in qids for d in rng.choice(docs, 3, replace=False)],
                         columns=["query-id", "corpus-id", "score"])
    task = {"corpus": pd.DataFrame({"_id": docs, "text": docs}), "queries": pd.DataFrame({"_id": qids, "text": qids}),
            "qrels": qrels}
    runs = {}
    for s in range(3):
        rows = [(q, d, float(rng.random())) for q in qids for d in rng.choice(docs, 10, replace=False)]
        runs[f"s{s}"] = pd.DataFrame(rows, columns=["query-id", "corpus-id", "score"])
    ref = leaderboard(runs, task, metric="ndcg@10", n_resamples=999, seed=5)
    values = pd.DataFrame({n: per_query(r, qrels, "ndcg@10", query_ids=qids).to_numpy() for n, r in runs.items()},
                          index=qids)
    got = leaderboard_from_values(values, metric="ndcg@10", n_resamples=999, seed=5)
    cols = ["name", "estimate", "low", "high", "rank", "rank_low", "rank_high", "tier"]
    pd.testing.assert_frame_equal(got.systems[cols].reset_index(drop=True), ref.systems[cols].reset_index(drop=True))
    pcols = ["a", "b", "diff", "low", "high", "p", "p_adj", "p_adj_maxt"]
    pd.testing.assert_frame_equal(got.pairs[pcols].reset_index(drop=True), ref.pairs[pcols].reset_index(drop=True))
    with pytest.raises(RagcovError, match="missing values"):
        leaderboard_from_values(values.assign(s0=np.nan), metric="x")
    with pytest.raises(RagcovError, match="at least 2 systems"):
        leaderboard_from_values(values[["s0"]], metric="x")


def test_topic_of():
    assert topic_of("DOENÇA GRAVE - PENSÃO") == "DOENÇA GRAVE"
    assert topic_of("PREJUÍZO NA ATIVIDADE RURAL — DESCONTO SIMPLIFICADO") == "PREJUÍZO NA ATIVIDADE RURAL"
    assert topic_of(None) is None
