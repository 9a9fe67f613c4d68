"""Budgeted, span-level measures of cited questions against a from-scratch implementation (character sets,
plain loops), by hand and on the shared IRPF questions."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.eval.cited import per_query_values
from ragcov_data.eval.outcomes.budget import cited_values, context_size, parse_cited_metric

BUDGET_METRICS = ("recall", "span_recall", "precision", "iou")


# --------------------------------------------------------------------------- the independent reference


def scratch(corpus: pd.DataFrame, citations: pd.DataFrame, run: pd.DataFrame, budget: int,
            granularity: str = "dispositivo") -> dict[str, dict[str, float]]:
    """The definition, written out: plain loops and sets of (act, character)."""
    chunk = {str(i): (str(d), int(s), int(e), len(str(t).split()))
             for i, d, s, e, t in zip(corpus["_id"], corpus["doc_id"], corpus["start_char"], corpus["end_char"],
                                      corpus["text"])}
    by_query: dict[str, list] = {}
    for qq, c, s in zip(run["query-id"], run["corpus-id"], run["score"]):
        by_query.setdefault(str(qq), []).append((str(c), float(s)))
    ok = {"dispositivo": ("resolved",), "article": ("resolved", "dispositivo_not_found")}[granularity]
    s_col, e_col = ("start_char", "end_char") if granularity == "dispositivo" else ("article_start_char",
                                                                                     "article_end_char")
    provs: dict[str, set] = {}
    kept: set = set()
    for _, r in citations.iterrows():
        if r["status"] not in ok:
            continue
        p = (str(r["doc_id"]), int(r[s_col]), int(r[e_col]))
        if p in kept or any(d == p[0] and s < p[2] and e > p[1] for d, s, e, _ in chunk.values()):
            kept.add(p)
            provs.setdefault(str(r["query-id"]), set()).add(p)
    out: dict[str, dict[str, float]] = {}
    for q, ps in provs.items():
        rows = list(by_query.get(q, []))
        rows.sort(key=lambda x: x[0], reverse=True)  # id descending ...
        rows.sort(key=lambda x: -x[1])  # ... within score descending (stable)
        ctx, total = [], 0
        for c, _ in rows:
            w = chunk[c][3]
            if ctx and total + w > budget:
                break
            ctx.append(c)
            total += w
        X = {(chunk[c][0], i) for c in ctx for i in range(chunk[c][1], chunk[c][2])}
        C = {(d, i) for d, s, e in ps for i in range(s, e)}
        found = [any(chunk[c][0] == d and chunk[c][1] < e and chunk[c][2] > s for c in ctx) for d, s, e in ps]
        both = len(X & C)
        out[q] = {"recall": sum(found) / len(found), "hit": float(any(found)),
                  "span_recall": both / len(C) if C else 0.0, "precision": both / len(X) if X else 0.0,
                  "iou": both / len(X | C) if X | C else 0.0}
    return out


# --------------------------------------------------------------------------- a hand-built task


def _chunk(cid, doc, s, e, words):
    return {"_id": cid, "doc_id": doc, "start_char": s, "end_char": e, "text": " ".join(["w"] * words)}


@pytest.fixture()
def hand():
    # act A: a0 and a1 overlap on [20, 30); act B: b0, b1 adjacent
    corpus = pd.DataFrame([_chunk("a0", "A", 0, 30, 5), _chunk("a1", "A", 20, 60, 6), _chunk("a2", "A", 60, 100, 1),
                           _chunk("b0", "B", 0, 50, 8), _chunk("b1", "B", 50, 80, 3)])
    citations = pd.DataFrame([
        {"query-id": "q1", "doc_id": "A", "status": "resolved", "chunks": ["a0", "a1"], "article_chunks": ["a0", "a1"],
         "start_char": 25, "end_char": 40, "article_start_char": 10, "article_end_char": 60},
        {"query-id": "q1", "doc_id": "B", "status": "resolved", "chunks": ["b1"], "article_chunks": ["b1"],
         "start_char": 55, "end_char": 70, "article_start_char": 50, "article_end_char": 80},
        {"query-id": "q1", "doc_id": "A", "status": "resolved", "chunks": ["a0", "a1"], "article_chunks": ["a0", "a1"],
         "start_char": 25, "end_char": 40, "article_start_char": 10, "article_end_char": 60},  # cited twice: once
        {"query-id": "q1", "doc_id": "A", "status": "dispositivo_not_found", "chunks": [], "article_chunks": ["a2"],
         "start_char": None, "end_char": None, "article_start_char": 60, "article_end_char": 100},
        {"query-id": "q2", "doc_id": "A", "status": "resolved", "chunks": ["a0"], "article_chunks": ["a0"],
         "start_char": 0, "end_char": 10, "article_start_char": 0, "article_end_char": 20},
    ])
    for c in ("start_char", "end_char", "article_start_char", "article_end_char"):
        citations[c] = citations[c].astype("Int64")
    queries = pd.DataFrame({"_id": ["q1", "q2"], "text": ["x", "y"]})
    # q1 trec order: b0 (8 words), a1 (6; tie with a0, id descending), a0 (5), b1 (3), a2 (1)
    run = pd.DataFrame({"query-id": ["q1"] * 5 + ["q2"], "corpus-id": ["a0", "a1", "b0", "b1", "a2", "a2"],
                        "score": [4.0, 4.0, 5.0, 3.0, 1.0, 2.0]})
    return {"corpus": corpus, "queries": queries, "citations": citations}, run


def test_hand_built_values(hand):
    task, run = hand
    names = [f"{m}@{b}w" for b in (5, 14, 19, 21, 22, 23) for m in BUDGET_METRICS]
    v = per_query_values(run, task, metrics=names).loc["q1"]
    # 5 words: b0 alone (8 words, kept though over budget); it touches no cited provision
    assert [v[f"{m}@5w"] for m in BUDGET_METRICS] == [0.0, 0.0, 0.0, 0.0]
    # 14 words: b0 + a1; a1 overlaps A[25,40) (15 of the 30 cited characters); context 50 + 40 characters
    assert v["recall@14w"] == 0.5 and v["span_recall@14w"] == 0.5
    assert v["precision@14w"] == pytest.approx(15 / 90, abs=1e-12) and v["iou@14w"] == pytest.approx(15 / 105)
    # 19 words: + a0, whose [20, 30) it shares with a1 counts once: A [0, 60) + B [0, 50) = 110 characters
    assert v["precision@19w"] == pytest.approx(15 / 110) and v["iou@19w"] == pytest.approx(15 / 125)
    # 21 words: b1 (3 words) would make 22 > 21: the context stops there, a2 (1 word) is not taken instead
    assert v["precision@21w"] == v["precision@19w"]
    # 22 words: + b1 covers B [55, 70): every cited character; context A [0, 60) + B [0, 80)
    assert v["recall@22w"] == 1.0 and v["span_recall@22w"] == 1.0 and v["precision@22w"] == pytest.approx(30 / 140)
    # 23 words: + a2 (1 word): A [0, 100) + B [0, 80)
    assert v["precision@23w"] == pytest.approx(30 / 180) and v["iou@23w"] == pytest.approx(30 / 180)
    assert context_size(np.array([8, 6, 5, 3, 1]), 21) == 3 and context_size(np.array([8]), 1) == 1
    assert context_size(np.array([], dtype=int), 100) == 0


@pytest.mark.parametrize("granularity", ["dispositivo", "article"])
def test_hand_built_equals_scratch(hand, granularity):
    task, run = hand
    for budget in (1, 5, 8, 14, 19, 21, 22, 23, 100):
        ref = scratch(task["corpus"], task["citations"], run, budget, granularity)
        ours = per_query_values(run, task, metrics=[f"{m}@{budget}w" for m in (*BUDGET_METRICS, "hit")],
                                granularity=granularity)
        assert set(ours.index) == set(ref)
        for q, row in ref.items():
            for m, x in row.items():
                assert ours.loc[q, f"{m}@{budget}w"] == pytest.approx(x, abs=1e-9), (granularity, budget, q, m)


def test_unscored_question_and_bad_input(hand):
    task, run = hand
    v = per_query_values(run[run["query-id"] == "q1"], task, metrics=["iou@100w", "recall@100w"])
    assert v.loc["q2"].tolist() == [0.0, 0.0]  # not ranked by the run: empty context
    bad = pd.concat([run, pd.DataFrame({"query-id": ["q1"], "corpus-id": ["zz"], "score": [9.0]})])
    # the outcome stage refuses a run naming a document outside the task's corpus before any scoring ...
    with pytest.raises(RagcovError, match=r"name documents that are not in the task's corpus .*first: \['zz'\]"):
        per_query_values(bad, task, metrics=["recall@100w"])
    # ... and the budgeted measures, given such a run directly, name the row
    with pytest.raises(RagcovError, match="'zz' for question 'q1', which is not a chunk"):
        cited_values(bad, task["citations"], task["corpus"], ["recall@100w"], query_ids=["q1", "q2"])
    no_span = {**task, "citations": task["citations"].drop(columns=["start_char", "end_char"])}
    with pytest.raises(RagcovError, match="no character spans"):
        per_query_values(run, no_span, metrics=["recall@100w"])
    with pytest.raises(RagcovError, match="corpus lacks"):
        per_query_values(run, {**task, "corpus": task["corpus"].drop(columns=["text"])}, metrics=["iou@10w"])
    for bad_metric in ("ndcg@10w", "span_recall@10", "recall@0w", "map@10w"):
        with pytest.raises(RagcovError, match="cited-questions metrics must be"):
            parse_cited_metric(bad_metric)
    assert str(parse_cited_metric("R@1000W")) == "recall@1000w" and str(parse_cited_metric("p@50w")) == "precision@50w"


# --------------------------------------------------------------------------- the shared questions


@pytest.fixture(scope="module")
def irpf_runs(data_dir):
    from ragcov_data.baselines import BM25
    from ragcov_data.loaders.cited_questions import build_cited_task, irpf_dir

    folder = irpf_dir(data_dir)
    out = {}
    for name, kw in (("words-50", {"chunking": "words", "chunk_words": 50}),
                     ("words-100", {"chunking": "words", "chunk_words": 100}),
                     ("words-200", {"chunking": "words", "chunk_words": 200}),
                     ("dispositivo", {"chunking": "dispositivo"}), ("article", {"chunking": "article"})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            task = build_cited_task(folder / "laws.jsonl", folder / "questions.jsonl", **kw)
        run = BM25(show_progress=False).index(task.corpus).search(task.queries[["_id", "text"]], k=60,
                                                                  show_progress=False)
        out[name] = (task, run)
    return out


def test_irpf_equals_scratch(irpf_runs):
    """On the shared questions, under every chunking, every budgeted value equals the from-scratch definition
    to 1e-9."""
    for name, (task, run) in irpf_runs.items():
        for budget in (500, 1000, 2000):
            ref = scratch(task.corpus, task.citations, run, budget)
            ours = per_query_values(run, task, metrics=[f"{m}@{budget}w" for m in BUDGET_METRICS])
            assert len(ours) == len(ref) == 174
            for q, row in ref.items():
                for m in BUDGET_METRICS:
                    assert abs(ours.loc[q, f"{m}@{budget}w"] - row[m]) <= 1e-9, (name, budget, q, m)
            assert ours[f"recall@{budget}w"].mean() > 0.2  # the run finds cited provisions: not all zeros


def test_irpf_budget_recall_is_the_rank_recall_of_its_context(irpf_runs):
    """recall@Bw (character spans) equals recall@k (the citations' chunk lists) with k = the context's size."""
    task, run = irpf_runs["words-50"]
    wide = per_query_values(run, task, metrics=["recall@60", "recall@100000w", "recall@500w"])
    assert len(wide) == 174
    assert np.allclose(wide["recall@60"], wide["recall@100000w"], atol=1e-12)
    assert not np.allclose(wide["recall@60"], wide["recall@500w"])
