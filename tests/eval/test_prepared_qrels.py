"""``prepare_qrels``: qrels validated once and reused across runs give exactly ``per_query``'s values."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.eval.outcomes.metrics._lists import PreparedQrels, prepare_qrels

QRELS = pd.DataFrame({"query-id": ["q1", "q1", "q2", "q2", "q3"], "corpus-id": ["a", "b", "c", "d", "e"],
                      "score": [2, 0, 1, 3, 1]})


def _run(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for q in ("q1", "q2", "q3", "q9"):
        for d in rng.permutation(list("abcdexyz"))[:5]:
            rows.append((q, d, float(rng.integers(0, 3))))  # integer scores: many ties
    return pd.DataFrame(rows, columns=["query-id", "corpus-id", "score"])


@pytest.mark.parametrize("metric", ["hit@1", "ndcg@3", "p@2", "r@3", "mrr@5"])
@pytest.mark.parametrize("tie_policy", ["trec_eval", "pessimistic", "optimistic", "expected"])
@pytest.mark.parametrize("unjudged", ["irrelevant", "skip"])
def test_prepared_qrels_match_raw_qrels(metric, tie_policy, unjudged):
    pq = prepare_qrels(QRELS)
    for seed in range(4):  # several runs against one PreparedQrels
        run = _run(seed)
        for qids in (None, ["q2", "q1"], ["q3", "q1", "q2", "q7"]):  # query lists change: the cache follows
            kw = dict(tie_policy=tie_policy, unjudged=unjudged, query_ids=qids)
            want = per_query(run, QRELS, metric, **kw)
            got = per_query(run, pq, metric, **kw)
            pd.testing.assert_series_equal(got, want)
            assert got.attrs == want.attrs


def test_prepare_qrels_accepts_a_task_and_passes_prepared_through():
    pq = prepare_qrels({"qrels": QRELS})
    assert isinstance(pq, PreparedQrels)
    assert prepare_qrels(pq) is pq
    assert list(pq.frame.columns) == ["query-id", "corpus-id", "grade"]


def test_prepare_qrels_rejects_bad_grades_and_duplicates_with_the_prepare_messages():
    bad = QRELS.assign(score=["2", "x", 1, 3, 1])
    with pytest.raises(RagcovError, match=r"`qrels` has 1 non-numeric or missing `score` value\(s\) \(first at row 1"):
        prepare_qrels(bad)
    dup = pd.concat([QRELS, QRELS.iloc[[2]]], ignore_index=True)
    with pytest.raises(RagcovError, match=r"judges the same \(query-id, corpus-id\) pair more than once \(1 "):
        prepare_qrels(dup)
    with pytest.raises(RagcovError, match=r"`qrels` lacks column\(s\) \['score'\]"):
        prepare_qrels(QRELS.drop(columns="score"))
