"""A run that ranks each query's own chunk first scores the same in pytrec_eval as in ragcov after exclude_self."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

import ragcov_data
from ragcov_data.errors import RagcovError
from ragcov_data.eval import evaluate
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.interop.outside import REMOVED_KEY, exclude_self, identical_id_rows

K = 10


@pytest.fixture(scope="module")
def own_first_run(aneel_task) -> pd.DataFrame:
    """What a toolkit unaware of self-retrieval returns: the own chunk at rank 1 (it contains the query),
    then 10 candidates drawn (seeded) from the query's document and the rest of the corpus; distinct scores."""
    rng = np.random.default_rng(0)
    corpus = aneel_task.corpus
    ids = corpus["_id"].to_numpy()
    by_doc = corpus.groupby("doc_id", sort=False)["_id"].agg(list).to_dict()
    rows = []
    for qid, own, doc in zip(aneel_task.queries["_id"], aneel_task.queries["chunk_id"], aneel_task.queries["doc_id"]):
        same = [c for c in by_doc[doc] if c != own]
        picks = list(rng.choice(same, size=min(len(same), int(rng.integers(0, 4))), replace=False))
        while len(picks) < K:
            c = ids[rng.integers(len(ids))]
            if c != own and c not in picks:
                picks.append(c)
        rng.shuffle(picks)
        for rank, cid in enumerate([own, *picks], start=1):
            rows.append((qid, cid, rank, float(K + 2 - rank)))
    run = pd.DataFrame(rows, columns=["query-id", "corpus-id", "rank", "score"])
    run.attrs = {"retriever": "outside", "exclude_self": False}
    return run


def _pytrec(run: pd.DataFrame, qrels: pd.DataFrame, measures: set[str]) -> pd.DataFrame:
    qd: dict = {}
    for q, d, s in zip(qrels["query-id"], qrels["corpus-id"], qrels["score"]):
        qd.setdefault(q, {})[d] = int(s)
    rd: dict = {}
    for q, d, s in zip(run["query-id"], run["corpus-id"], run["score"]):
        rd.setdefault(q, {})[d] = float(s)
    return pd.DataFrame(pytrec_eval.RelevanceEvaluator(qd, measures).evaluate(rd)).T


def test_query_ids_are_own_chunk_ids(aneel_task):
    """The convention that makes BEIR's ignore_identical_ids drop exactly the own chunk."""
    q = aneel_task.queries
    assert (q["_id"] == q["chunk_id"]).all()
    assert set(q["chunk_id"]) == set(aneel_task.corpus["_id"])
    assert not (aneel_task.qrels["query-id"] == aneel_task.qrels["corpus-id"]).any()  # no judgment is dropped


def test_pytrec_eval_penalises_own_chunk_and_agrees_after_exclude_self(aneel_task, own_first_run):
    qrels = aneel_task.qrels
    measures = {"P_1", f"ndcg_cut_{K}", "recip_rank"}
    raw = _pytrec(own_first_run, qrels, measures)
    clean_run = exclude_self(own_first_run, aneel_task)
    clean = _pytrec(clean_run, qrels, measures)

    ragcov_hit1 = evaluate(own_first_run, aneel_task, metric="hit@1", methods="cr2")  # excludes self itself
    micro = float(ragcov_hit1.estimates.query("estimator == 'micro'")["estimate"].iloc[0])
    assert raw["P_1"].mean() == 0.0  # every own chunk at rank 1 counts as a miss outside ragcov
    assert micro > 0.05
    assert clean["P_1"].mean() == pytest.approx(micro, abs=1e-12)

    for ours, theirs in (("hit@1", "P_1"), (f"ndcg@{K}", f"ndcg_cut_{K}"), (f"mrr@{K}", "recip_rank")):
        want = per_query(clean_run, qrels, ours, query_ids=aneel_task.queries["_id"])
        got = clean[theirs].reindex(want.index.astype(str))
        np.testing.assert_allclose(got.to_numpy(), want.to_numpy(dtype=float), atol=1e-9, err_msg=ours)
        assert raw[theirs].mean() < clean[theirs].mean() - 0.01, theirs


def test_beir_rule_removes_the_same_rows(aneel_task, own_first_run):
    """BEIR's ignore_identical_ids pops results[qid][pid] where qid == pid: here the same rows as exclude_self."""
    beir_kept = own_first_run[own_first_run["query-id"] != own_first_run["corpus-id"]]
    ours = exclude_self(own_first_run, aneel_task)
    cols = ["query-id", "corpus-id", "score"]
    pd.testing.assert_frame_equal(ours[cols], beir_kept[cols])
    assert identical_id_rows(own_first_run) == len(aneel_task.queries)
    assert identical_id_rows(ours) == 0


def test_exclude_self_reranks_records_and_copies(aneel_task, own_first_run):
    before = own_first_run.copy()
    out = exclude_self(own_first_run, aneel_task)
    pd.testing.assert_frame_equal(own_first_run, before)  # input untouched
    assert own_first_run.attrs == {"retriever": "outside", "exclude_self": False}
    assert out.attrs == {"retriever": "outside", "exclude_self": True, REMOVED_KEY: len(aneel_task.queries)}
    assert len(out) == len(own_first_run) - len(aneel_task.queries)
    ranks = out.groupby("query-id", sort=False)["rank"].agg(list)
    assert all(r == list(range(1, K + 1)) for r in ranks)
    assert out["rank"].dtype == "int64"
    again = exclude_self(out, aneel_task)  # idempotent
    pd.testing.assert_frame_equal(again, out)
    assert again.attrs[REMOVED_KEY] == 0


def test_accepts_every_task_form(aneel_task, aneel_ds, own_first_run):
    want = exclude_self(own_first_run, aneel_task)
    for form in (aneel_task.queries, {"queries": aneel_task.queries}, aneel_ds, aneel_ds["queries"]):
        pd.testing.assert_frame_equal(exclude_self(own_first_run, form), want)
    assert ragcov_data.exclude_self is exclude_self


def test_own_chunk_not_first_is_removed_wherever_it_is(aneel_task):
    q = aneel_task.queries.iloc[0]
    other = aneel_task.corpus["_id"].iloc[-1]
    run = pd.DataFrame({"query-id": [q["_id"]] * 3, "corpus-id": [other, q["chunk_id"], "x#0000"],
                        "rank": [1, 2, 3], "score": [3.0, 2.0, 1.0]})
    out = exclude_self(run, aneel_task)
    assert out["corpus-id"].tolist() == [other, "x#0000"] and out["rank"].tolist() == [1, 2]
    no_rank = exclude_self(run.drop(columns="rank"), aneel_task)
    assert "rank" not in no_rank.columns and no_rank.attrs[REMOVED_KEY] == 1


def test_errors(aneel_task, juristcu_dir):
    from ragcov_data.loaders.juristcu import read_juristcu

    run = pd.DataFrame({"query-id": ["1"], "corpus-id": ["13"], "score": [1.0]})
    frames, _ = read_juristcu(juristcu_dir)
    with pytest.raises(RagcovError, match=r"the queries have no `chunk_id` column .*not a self-retrieval task.*"
                                          r"ignore_identical_ids=False"):
        exclude_self(run, frames)
    with pytest.raises(RagcovError, match=r"`run` lacks columns \['corpus-id'\]"):
        exclude_self(run.drop(columns="corpus-id"), aneel_task)
    with pytest.raises(RagcovError, match=r"`run` must be a DataFrame"):
        exclude_self("bm25.trec", aneel_task)
    with pytest.raises(RagcovError, match=r"has no 'queries' split"):
        exclude_self(run, {"corpus": aneel_task.corpus})


def test_juristcu_has_ids_shared_by_a_query_and_a_document(juristcu_dir):
    """Why BEIR needs ignore_identical_ids=False on JurisTCU (stated in the module docs and the report)."""
    from ragcov_data.loaders.juristcu import read_juristcu

    frames, _ = read_juristcu(juristcu_dir)
    shared = sorted(set(frames["queries"]["_id"]) & set(frames["corpus"]["_id"]), key=int)
    assert shared == ["13", "30", "32", "65", "83", "109", "115"]
