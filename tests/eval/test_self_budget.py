"""Self-retrieval measures of the proxy study: hit@k equals trec_eval's on the task's qrels, span_recall@Bw
equals a brute-force reading of the context, and a hand-built case gives the hand-computed value."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ragcov_data.baselines import BM25
from ragcov_data.errors import RagcovError
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.eval.outcomes.self_budget import budget_depth, self_values, sibling_span_recall
from ragcov_data.loaders.build import build_task


@pytest.fixture(scope="module")
def small(aneel_fulltext, tmp_path_factory):
    src = tmp_path_factory.mktemp("sb") / "acts.jsonl"
    src.write_text("".join(aneel_fulltext.read_text(encoding="utf-8").splitlines(True)[:15]), encoding="utf-8")
    task = build_task(src, chunk_words=50)
    run = BM25(show_progress=False).index(task.corpus).search(task.queries, k=40, exclude_self=True,
                                                               show_progress=False)
    return task, run


def test_hit_at_k_equals_trec_eval_on_the_qrels(small):
    task, run = small
    got = self_values(run, task, ["hit@1", "hit@5"])
    for k in (1, 5):
        ref = per_query(run, task.qrels, f"hit@{k}", query_ids=list(got.index))
        assert np.array_equal(got[f"hit@{k}"].to_numpy(), ref.reindex(got.index).to_numpy(float))


def _brute_span(run, task, qid, budget):
    """The context's words laid out one by one, each kept with its chunk's document; sibling letters counted."""
    corpus = task.corpus.set_index("_id")
    q = task.queries.set_index("_id").loc[qid]
    rows = run[run["query-id"] == qid].sort_values(["score", "corpus-id"], ascending=[False, False])
    kept = []
    for cid in rows["corpus-id"]:
        if cid == q["chunk_id"]:
            continue
        for w in corpus.at[cid, "text"].split():
            if len(kept) < budget:
                kept.append((corpus.at[cid, "doc_id"], w))
    inside = sum(len(w) for d, w in kept if d == q["doc_id"])
    sib = corpus[(corpus["doc_id"] == q["doc_id"]) & (corpus.index != q["chunk_id"])]
    total = sum(len("".join(t.split())) for t in sib["text"])
    return inside / total


@pytest.mark.parametrize("budget", [30, 200, 1000])
def test_span_recall_equals_a_brute_force_reading(small, budget):
    task, run = small
    qids = list(task.queries["_id"][::7])
    got = sibling_span_recall(run, task, budget, qids)
    assert 0 <= got.attrs["n_short_context"] <= len(qids) and got.attrs["context_words"] <= budget
    for q in qids:
        assert got[q] == pytest.approx(_brute_span(run, task, q, budget), abs=1e-12)


def test_a_hand_built_case():
    corpus = pd.DataFrame({"_id": ["a#0", "a#1", "a#2", "b#0", "b#1"], "doc_id": ["a", "a", "a", "b", "b"],
                           "text": ["um dois tres", "quatro cinco", "seis", "sete oito", "nove dez onze"]})
    queries = pd.DataFrame({"_id": ["a#0"], "doc_id": ["a"], "chunk_id": ["a#0"], "text": ["um"]})
    task = {"corpus": corpus, "queries": queries}
    run = pd.DataFrame({"query-id": ["a#0"] * 3, "corpus-id": ["b#0", "a#1", "a#2"], "score": [3.0, 2.0, 1.0]})
    # context of 3 words: "sete oito" (b) then "quatro" of a#1 (cut at the 3rd word): 6 of a's 15 sibling letters
    got = self_values(run, task, ["hit@1", "hit@2", "span_recall@3w"])
    assert got.loc["a#0"].tolist() == [0.0, 1.0, pytest.approx(6 / 15)]
    assert budget_depth(corpus, 3) == 2  # the two smallest chunks (1 and 2 words) already hold 3 words


def test_bad_metric_and_task_are_named(small):
    task, run = small
    with pytest.raises(RagcovError, match="hit@k .* span_recall@Bw"):
        self_values(run, task, ["recall@10"])
    with pytest.raises(RagcovError, match="hit@k .* span_recall@Bw"):
        self_values(run, task, ["hit@10w"])
    with pytest.raises(RagcovError, match="self-retrieval task"):
        self_values(run, {"corpus": task.corpus, "queries": task.queries.drop(columns="chunk_id")}, ["hit@1"])
