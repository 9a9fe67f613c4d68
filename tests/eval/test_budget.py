"""Budgeted, span-level measures of cited questions against a from-scratch implementation (sets of non-space
characters, plain loops, the cut word found by a regular expression), by hand and on the shared IRPF questions."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.eval.comparisons.cited import per_query_values
from ragcov_data.eval.outcomes.budget import cited_values, context_size, parse_cited_metric
from ragcov_data.eval.outcomes.context import context_cut

BUDGET_METRICS = ("recall", "span_recall", "precision", "iou")
CURVE = ("covered_any", "covered_50", "covered_90", "covered_whole")


# --------------------------------------------------------------------------- the independent reference


def scratch_context(rows, chunk, doc_text, budget):
    """The context within ``budget`` words, written out: chunks read in order, the one crossing the budget cut
    after the word that reaches it (its end found with a regular expression over the act's text)."""
    ctx, left = [], budget
    for c in rows:
        if left <= 0:
            break
        d, s, e, text = chunk[c]
        w = len(text.split())
        if w <= left:
            ctx.append((d, s, e))
            left -= w
        else:
            m = [x for x in re.finditer(r"\S+", doc_text[d][s:e])][left - 1]
            ctx.append((d, s, s + m.end()))
            left = 0
    return ctx


def scratch(corpus: pd.DataFrame, citations: pd.DataFrame, run: pd.DataFrame, budget: int,
            granularity: str = "dispositivo", documents: pd.DataFrame | None = None) -> dict[str, dict[str, float]]:
    """The definition, written out: plain loops and sets of (act, character), text being the non-space
    characters (the acts here are in NFC, so a character of the act is a character of its NFC form)."""
    return scratch_budgets(corpus, citations, run, [budget], granularity, documents)[budget]


def scratch_budgets(corpus: pd.DataFrame, citations: pd.DataFrame, run: pd.DataFrame, budgets,
                    granularity: str = "dispositivo",
                    documents: pd.DataFrame | None = None) -> dict[int, dict[str, dict[str, float]]]:
    """:func:`scratch` at each of ``budgets``: the provisions and each span's characters found once for all."""
    doc_text = dict(zip(documents["doc_id"], documents["text"]))
    chunk = {str(i): (str(d), int(s), int(e), str(t))
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
    seen: dict[tuple, frozenset] = {}

    def text(spans):
        """The non-space characters of ``spans`` (each span's set made once, then reused)."""
        out: set = set()
        for d, s, e in spans:
            if (d, s, e) not in seen:
                seen[d, s, e] = frozenset((d, i) for i in range(s, e) if not doc_text[d][i].isspace())
            out |= seen[d, s, e]
        return out

    return {budget: _scratch_at(provs, by_query, chunk, doc_text, budget, text) for budget in budgets}


def _scratch_at(provs, by_query, chunk, doc_text, budget, text) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for q, ps in provs.items():
        rows = list(by_query.get(q, []))
        rows.sort(key=lambda x: x[0], reverse=True)  # id descending ...
        rows.sort(key=lambda x: -x[1])  # ... within score descending (stable)
        ctx = scratch_context([c for c, _ in rows], chunk, doc_text, budget)
        X, C = text(ctx), text(ps)
        found = [any(cd == d and cs < e and ce > s for cd, cs, ce in ctx) for d, s, e in ps]
        both = len(X & C)
        share = [len(text([p]) & X) / len(text([p])) for p in ps]
        out[q] = {"recall": sum(found) / len(found), "hit": float(any(found)),
                  "span_recall": both / len(C) if C else 0.0, "precision": both / len(X) if X else 0.0,
                  "iou": both / len(X | C) if X | C else 0.0,
                  "covered_any": sum(x > 0 for x in share) / len(ps),
                  "covered_50": sum(x >= 0.5 for x in share) / len(ps),
                  "covered_90": sum(x >= 0.9 - 1e-12 for x in share) / len(ps),
                  "covered_whole": sum(x == 1 for x in share) / len(ps)}
    return out


# --------------------------------------------------------------------------- a hand-built task
# Act A: 25 words "a00" .. "a24", act B: 20 words "b00" .. "b19"; word k spans [4k, 4k + 3).


def _act(prefix, n):
    return " ".join(f"{prefix}{k:02d}" for k in range(n))


def _chunk(cid, doc, first, last):
    words = [f"{doc.lower()}{k:02d}" for k in range(first, last + 1)]
    return {"_id": cid, "doc_id": doc, "start_char": 4 * first, "end_char": 4 * last + 3, "text": " ".join(words)}


@pytest.fixture()
def hand():
    # a0 (words 0-7) and a1 (5-14) overlap on words 5-7; a2 (15-24); b0 (0-11), b1 (12-19)
    corpus = pd.DataFrame([_chunk("a0", "A", 0, 7), _chunk("a1", "A", 5, 14), _chunk("a2", "A", 15, 24),
                           _chunk("b0", "B", 0, 11), _chunk("b1", "B", 12, 19)])
    documents = pd.DataFrame({"doc_id": ["A", "B"], "text": [_act("a", 25), _act("b", 20)]})
    citations = pd.DataFrame([
        {"query-id": "q1", "doc_id": "A", "status": "resolved", "chunks": ["a0", "a1"], "article_chunks": ["a0", "a1"],
         "start_char": 25, "end_char": 40, "article_start_char": 10, "article_end_char": 60},
        {"query-id": "q1", "doc_id": "B", "status": "resolved", "chunks": ["b1"], "article_chunks": ["b1"],
         "start_char": 55, "end_char": 70, "article_start_char": 48, "article_end_char": 79},
        {"query-id": "q1", "doc_id": "A", "status": "resolved", "chunks": ["a0", "a1"], "article_chunks": ["a0", "a1"],
         "start_char": 25, "end_char": 40, "article_start_char": 10, "article_end_char": 60},  # cited twice: once
        {"query-id": "q1", "doc_id": "A", "status": "dispositivo_not_found", "chunks": [], "article_chunks": ["a2"],
         "start_char": None, "end_char": None, "article_start_char": 60, "article_end_char": 99},
        {"query-id": "q2", "doc_id": "A", "status": "resolved", "chunks": ["a0"], "article_chunks": ["a0"],
         "start_char": 0, "end_char": 10, "article_start_char": 0, "article_end_char": 20},
    ])
    for c in ("start_char", "end_char", "article_start_char", "article_end_char"):
        citations[c] = citations[c].astype("Int64")
    queries = pd.DataFrame({"_id": ["q1", "q2"], "text": ["x", "y"]})
    # q1 trec order: b0 (12 words), a1 (10; tie with a0, id descending), a0 (8), b1 (8), a2 (10)
    run = pd.DataFrame({"query-id": ["q1"] * 5 + ["q2"], "corpus-id": ["a0", "a1", "b0", "b1", "a2", "a2"],
                        "score": [4.0, 4.0, 5.0, 3.0, 1.0, 2.0]})
    return {"corpus": corpus, "queries": queries, "citations": citations, "documents": documents}, run


def test_hand_built_values(hand):
    """The context is cut after exactly B words: the chunk that crosses the budget is truncated at its B-th word,
    the first chunk included (cited provisions: A [25, 40) and B [55, 70), 22 non-space characters: word k spans
    [4k, 4k + 3) and a space follows it)."""
    task, run = hand
    names = [f"{m}@{b}w" for b in (5, 12, 15, 22, 25, 30, 31, 38) for m in (*BUDGET_METRICS, *CURVE)]
    v = per_query_values(run, task, metrics=names).loc["q1"]
    # 5 words: b0 cut after its 5th word, B [0, 19): no cited character; 12 words: b0 whole, B [0, 47)
    assert [v[f"{m}@5w"] for m in BUDGET_METRICS] == [0.0, 0.0, 0.0, 0.0] == [v[f"{m}@12w"] for m in BUDGET_METRICS]
    # 15 words: b0 (36 non-space) + a1 cut after 3 words, A [20, 31) (9): 5 of A's 11 cited characters
    assert v["recall@15w"] == 0.5 and v["span_recall@15w"] == pytest.approx(5 / 22)
    assert v["precision@15w"] == pytest.approx(5 / 45) and v["iou@15w"] == pytest.approx(5 / 62)
    # 22 words: a1 whole, A [20, 59) (30): A's 11 cited characters
    assert v["span_recall@22w"] == 0.5 and v["precision@22w"] == pytest.approx(11 / 66)
    # 25 words: a0 cut after 3 words, A [0, 11) besides A [20, 59); 30 words: a0 whole, A [0, 59) counted once
    assert v["precision@25w"] == pytest.approx(11 / 75) and v["precision@30w"] == pytest.approx(11 / 81)
    # 31 words: b1 cut after 1 word, B [48, 51): no cited character; 38 words: b1 whole covers B [55, 70)
    assert v["precision@31w"] == pytest.approx(11 / 84) and v["recall@31w"] == 0.5
    assert v["recall@38w"] == 1.0 and v["span_recall@38w"] == 1.0 and v["precision@38w"] == pytest.approx(22 / 105)
    # the coverage curve: at 15 words A holds 5 of 11 (touched, under half), at 22 A whole, at 38 both whole
    curve = lambda b: [v[f"{m}@{b}w"] for m in CURVE]  # noqa: E731
    assert curve(15) == [0.5, 0.0, 0.0, 0.0] and curve(22) == [0.5] * 4 and curve(38) == [1.0] * 4
    assert context_cut(np.array([12, 10, 8, 8, 10]), 15) == (1, 3) and context_cut(np.array([8]), 1) == (0, 1)
    assert context_cut(np.array([4, 6]), 10) == (2, 0) and context_cut(np.array([], dtype=int), 100) == (0, 0)
    assert context_size(np.array([12, 10, 8]), 15) == 2 and context_size(np.array([40000]), 1000) == 1


def test_first_chunk_longer_than_the_budget_is_cut():
    """One chunk per act (as a chunker that returns each act whole) gives exactly B words of context, not the act."""
    words = [f"w{k}" for k in range(3000)]
    act = " ".join(words)
    corpus = pd.DataFrame([{"_id": "A#0", "doc_id": "A", "start_char": 0, "end_char": len(act), "text": act}])
    cited_at = act.index("w2500")
    citations = pd.DataFrame([{"query-id": "q", "doc_id": "A", "status": "resolved", "chunks": ["A#0"],
                               "article_chunks": ["A#0"], "start_char": cited_at, "end_char": cited_at + 5,
                               "article_start_char": cited_at, "article_end_char": cited_at + 5}])
    for c in ("start_char", "end_char", "article_start_char", "article_end_char"):
        citations[c] = citations[c].astype("Int64")
    task = {"corpus": corpus, "queries": pd.DataFrame({"_id": ["q"], "text": ["x"]}), "citations": citations,
            "documents": pd.DataFrame({"doc_id": ["A"], "text": [act]})}
    run = pd.DataFrame({"query-id": ["q"], "corpus-id": ["A#0"], "score": [1.0]})
    v = per_query_values(run, task, metrics=["recall@1000w", "recall@2600w", "precision@5w", "precision@100w",
                                             "recall@1"]).loc["q"]
    assert v["recall@1000w"] == 0.0 and v["recall@2600w"] == 1.0 and v["recall@1"] == 1.0
    assert v["precision@5w"] == 0.0 == v["precision@100w"]


def test_budget_needs_the_documents(hand):
    task, run = hand
    with pytest.raises(RagcovError, match="needs its `documents` split"):
        per_query_values(run, {k: v for k, v in task.items() if k != "documents"}, metrics=["recall@15w"])


@pytest.mark.parametrize("granularity", ["dispositivo", "article"])
def test_hand_built_equals_scratch(hand, granularity):
    task, run = hand
    for budget in (1, 5, 8, 12, 14, 15, 19, 21, 22, 23, 25, 30, 31, 38, 100):
        ref = scratch(task["corpus"], task["citations"], run, budget, granularity, task["documents"])
        ours = per_query_values(run, task, metrics=[f"{m}@{budget}w" for m in (*BUDGET_METRICS, *CURVE, "hit")],
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
        cited_values(bad, task["citations"], task["corpus"], ["recall@100w"], query_ids=["q1", "q2"],
                     documents=task["documents"])
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
        refs = scratch_budgets(task.corpus, task.citations, run, (500, 1000, 2000), documents=task.documents)
        ours = per_query_values(run, task, metrics=[f"{m}@{b}w" for b in refs for m in (*BUDGET_METRICS, *CURVE)])
        got = ours.to_dict("index")  # every budget at once, as a study asks (one budget alone: the hand-built tests)
        for budget, ref in refs.items():
            assert len(ours) == len(ref) == 174
            for q, row in ref.items():
                for m in (*BUDGET_METRICS, *CURVE):
                    assert abs(got[q][f"{m}@{budget}w"] - row[m]) <= 1e-9, (name, budget, q, m)
            assert ours[f"recall@{budget}w"].mean() > 0.2  # the run finds cited provisions: not all zeros


def test_irpf_budget_recall_is_the_rank_recall_of_its_context(irpf_runs):
    """recall@Bw (character spans) equals recall@k (the citations' chunk lists) with k = the context's size."""
    task, run = irpf_runs["words-50"]
    wide = per_query_values(run, task, metrics=["recall@60", "recall@100000w", "recall@500w"])
    assert len(wide) == 174
    assert np.allclose(wide["recall@60"], wide["recall@100000w"], atol=1e-12)
    assert not np.allclose(wide["recall@60"], wide["recall@500w"])


def test_one_chunk_per_act_no_longer_wins_within_a_budget(irpf_runs, data_dir):
    """A chunker that returns each act whole (about 40,000 words a chunk) reads only the first 1,000 words of its
    top act within 1,000 words: it falls behind whole artigos, where keeping the first chunk whole let it win."""
    from ragcov_data.baselines import BM25
    from ragcov_data.loaders.cited_questions import build_cited_task, irpf_dir

    folder = irpf_dir(data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = build_cited_task(folder / "laws.jsonl", folder / "questions.jsonl", chunker=lambda text: [text])
    assert len(whole.corpus) == 7 and whole.corpus["text"].str.split().str.len().max() > 40_000
    run = BM25(show_progress=False).index(whole.corpus).search(whole.queries[["_id", "text"]], k=7,
                                                               show_progress=False)
    acts = per_query_values(run, whole, metrics=["recall@1000w", "recall@10"])
    task, art = irpf_runs["article"]
    article = per_query_values(art, task, metrics=["recall@1000w"])
    assert acts["recall@10"].mean() > 0.9  # ten whole acts hold almost every cited provision ...
    assert acts["recall@1000w"].mean() < article["recall@1000w"].mean() - 0.1  # ... 1,000 of their words do not


def test_a_passages_words_and_its_first_words_are_str_splits():
    """The context's word counts are ``len(text.split())`` (each distinct passage counted once) and a cut item's
    first ``j`` words ``text.split()[:j]``, whatever the whitespace and however often a passage repeats."""
    from ragcov_data.eval.outcomes.passages import _word_counts

    texts = ["", "  a  b ", "a\u00a0b\nc\td", "x " * 3000, "  a  b ", "\u2003y\u2003z\u2003", "  a  b "]
    assert _word_counts(pd.Series(texts, dtype=object)).tolist() == [len(t.split()) for t in texts]
    for t in texts:
        for j in range(8):
            assert t.split(None, j)[:j] == t.split()[:j], (t[:20], j)
