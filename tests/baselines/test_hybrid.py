"""Fusion: reciprocal-rank fusion and min-max convex combination against hand computations; tie order."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragcov_data.baselines import BM25, Hybrid, TfIdf, fuse
from ragcov_data.errors import RagcovError


def _run(rows):
    return pd.DataFrame(rows, columns=["query-id", "corpus-id", "rank", "score"])


A = _run([("q1", "d1", 1, 9.0), ("q1", "d2", 2, 7.0), ("q1", "d3", 3, 7.0), ("q2", "d4", 1, 1.0)])
B = _run([("q1", "d3", 1, 0.8), ("q1", "d4", 2, 0.5), ("q1", "d1", 3, 0.1), ("q2", "d1", 1, 0.3), ("q2", "d4", 2, 0.2)])


def test_rrf_equals_hand_computation():
    # A, q1 in trec_eval order: d1 (9), then d3, d2 tied at 7 -> id descending: d3 rank 2, d2 rank 3
    # B, q1: d3 1, d4 2, d1 3.   B, q2: d1 1, d4 2.   A, q2: d4 1.
    want = {
        ("q1", "d1"): 1 / 61 + 1 / 63,
        ("q1", "d3"): 1 / 62 + 1 / 61,
        ("q1", "d2"): 1 / 63,
        ("q1", "d4"): 1 / 62,
        ("q2", "d4"): 1 / 61 + 1 / 62,
        ("q2", "d1"): 1 / 61,
    }
    got = fuse([A, B], "rrf", k=60)
    assert list(got.columns) == ["query-id", "corpus-id", "rank", "score"]
    # d3 (1/62 + 1/61) beats d1 (1/61 + 1/63)
    assert got[["query-id", "corpus-id"]].values.tolist() == [
        ["q1", "d3"], ["q1", "d1"], ["q1", "d4"], ["q1", "d2"], ["q2", "d4"], ["q2", "d1"]]
    assert got["rank"].tolist() == [1, 2, 3, 4, 1, 2]
    for q, d, s in got[["query-id", "corpus-id", "score"]].itertuples(index=False):
        assert s == pytest.approx(want[(q, d)], rel=1e-15)


def test_rrf_exact_ties_ordered_by_id_descending():
    a = _run([("q", "x", 1, 3.0), ("q", "y", 2, 2.0)])
    b = _run([("q", "y", 1, 5.0), ("q", "x", 2, 4.0)])
    got = fuse([a, b])  # x: 1/61 + 1/62, y: 1/62 + 1/61 -> an exact tie, y before x
    assert got["corpus-id"].tolist() == ["y", "x"] and got["score"].iloc[0] == got["score"].iloc[1]
    w = fuse([a, b], weights=[2.0, 1.0])  # weighted RRF: x 2/61 + 1/62 > y 2/62 + 1/61
    assert w["corpus-id"].tolist() == ["x", "y"]
    assert w["score"].iloc[0] == pytest.approx(2 / 61 + 1 / 62, rel=1e-15)


def test_convex_minmax_equals_hand_computation():
    got = fuse([A, B], "convex", weights=[0.3, 0.7])
    # A q1: min 7 max 9 -> d1 1, d2 0, d3 0; B q1: min .1 max .8 -> d3 1, d4 4/7, d1 0
    # A q2: one document -> 1; B q2: d1 1, d4 0
    want = {("q1", "d1"): 0.3, ("q1", "d2"): 0.0, ("q1", "d3"): 0.7, ("q1", "d4"): 0.7 * 0.4 / 0.7,
            ("q2", "d4"): 0.3, ("q2", "d1"): 0.7}
    assert got[["query-id", "corpus-id"]].values.tolist() == [
        ["q1", "d3"], ["q1", "d4"], ["q1", "d1"], ["q1", "d2"], ["q2", "d1"], ["q2", "d4"]]
    for q, d, s in got[["query-id", "corpus-id", "score"]].itertuples(index=False):
        assert s == pytest.approx(want[(q, d)], abs=1e-15)
    eq = fuse([A, B], "convex")  # default weights 1/2 each
    assert eq.set_index(["query-id", "corpus-id"])["score"][("q1", "d3")] == pytest.approx(0.5)


def test_hybrid_retriever_equals_fusing_its_runs(small_task):
    corpus, queries = small_task
    q = queries.iloc[:30]
    bm25, tfidf = BM25(analyzer="pt", show_progress=False), TfIdf(show_progress=False)
    hy = Hybrid([bm25, tfidf], method="rrf", k=60, depth=50, name="hy").index(corpus)
    run = hy.search(q, k=10, exclude_self=True)
    assert run.attrs["retriever"] == "hy" and run.attrs["exclude_self"]
    assert [r["retriever"] for r in run.attrs["params"]["retrievers"]] == ["bm25", "tfidf"]
    want = fuse([bm25.search(q, k=50, exclude_self=True), tfidf.search(q, k=50, exclude_self=True)], "rrf")
    want = want[want["rank"] <= 10].reset_index(drop=True)
    pd.testing.assert_frame_equal(run, want)
    assert run["query-id"].unique().tolist() == [x for x in q["_id"] if x in set(run["query-id"])]
    own = dict(zip(q["_id"], q["chunk_id"]))
    assert not (run["corpus-id"] == run["query-id"].map(own)).any()
    # trec_eval order within each query: score descending, id descending
    for _, g in run.groupby("query-id"):
        key = list(zip(-g["score"], [tuple(-b for b in s.encode()) for s in g["corpus-id"]]))
        assert key == sorted(key)


@pytest.mark.parametrize("call, match", [
    (lambda: fuse([A]), "at least two runs"),
    (lambda: fuse([A, B], "borda"), r"`method` must be one of \['rrf', 'convex'\]"),
    (lambda: fuse([A, B], weights=[1.0]), "`weights` must be 2 finite non-negative numbers"),
    (lambda: fuse([A, pd.concat([B, B])]), "run 1 lists document"),
    (lambda: fuse([A, B.drop(columns="score")]), r"run 1 lacks column\(s\) \['score'\]"),
    (lambda: Hybrid([BM25()]), "two or more"),
])
def test_fusion_iv(call, match):
    with pytest.raises(RagcovError, match=match):
        call()


def test_doctests():
    import doctest

    from ragcov_data.baselines import hybrid, prf

    for mod in (hybrid, prf):
        result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0
    assert doctest.testmod(hybrid).attempted > 0
