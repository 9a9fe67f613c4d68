"""Provision-level metrics of cited questions, and the leaderboard entry point for per-query values."""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

from ragcov_data.baselines import BM25, TfIdf
from ragcov_data.errors import RagcovError
from ragcov_data.eval import leaderboard
from ragcov_data.eval.comparisons.cited import (cited_chunking_study, granularity_qrels, leaderboard_from_values,
                                                per_query_values, topic_of)
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.loaders.cited_questions import build_cited_task, irpf_dir


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
    with pytest.raises(RagcovError, match=r"'recall@k', 'hit@k', 'ndcg@k' \(k chunks\)"):
        per_query_values(run, task, metrics=["map@10"])
    with pytest.raises(RagcovError, match="no resolved provision"):
        per_query_values(run, task, query_ids=["q3"])


def test_leaderboard_from_values_equals_leaderboard():
    """Fed the per-query values leaderboard() computes itself, the entry point gives the same table."""
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


def _study_files(tmp_path):
    arts = [f"Art. {i}º O contribuinte {w} deve observar a regra número {i} sobre {w} e sobre o tributo devido "
            f"no ano, conforme o regulamento próprio da matéria {w}." for i, w in
            enumerate(["aluguel", "pensão", "doação", "herança", "salário", "juros", "dividendos", "poupança"], 1)]
    text = "LEI Nº 10, DE 1º DE JANEIRO DE 2000.\n" + "\n".join(arts) + "\n"
    acts = tmp_path / "acts.jsonl"
    acts.write_text(json.dumps({"doc_id": "lei-10-2000", "title": "Lei nº 10, de 2000", "text": text},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    words = ["aluguel", "pensão", "doação", "herança", "salário", "juros", "dividendos", "poupança"]
    qs = [{"qid": f"q{i}", "question": f"Como declarar {w}?", "question_summary": ("RENDIMENTOS - " if i < 4 else
          "BENS - ") + w.upper(), "references": [{"raw": f"Lei nº 10, de 2000, art. {i}º"}]}
          for i, w in enumerate(words, 1)]
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs), encoding="utf-8")
    return acts, questions


def _study(tmp_path):
    """The study's inputs on :func:`_study_files`: two chunkings (10-word windows, articles; 5-word queries) and
    two retrievers (bm25, tfidf)."""
    acts, questions = _study_files(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tasks = {"words-10": build_cited_task(acts, questions, chunking="words", chunk_words=10, query_words=5),
                 "article": build_cited_task(acts, questions, chunking="article", query_words=5)}
    makers = {"bm25": lambda: BM25(show_progress=False), "tfidf": lambda: TfIdf(show_progress=False)}
    return tasks, makers


def test_cited_chunking_study_pairs_by_question(tmp_path):
    tasks, makers = _study(tmp_path)
    res = cited_chunking_study(tasks, makers, cluster="query", n_resamples=199)
    assert list(res.values.index) == [f"q{i}" for i in range(1, 9)]
    assert set(res.values["recall@10"].columns) == {"words-10/bm25", "words-10/tfidf", "article/bm25", "article/tfidf"}
    lb = res.leaderboards["recall@10"]
    assert lb.n_queries == 8 and lb.n_clusters == 8 and res.cluster == "question"
    # every question names its own artigo: BM25 over one-artigo chunks finds each in the top 10
    assert res.values[("recall@10", "article/bm25")].tolist() == [1.0] * 8
    est = lb.systems.set_index("name")["estimate"]
    assert est["article/bm25"] == pytest.approx(res.values[("recall@10", "article/bm25")].mean())
    topic = cited_chunking_study(tasks, makers, cluster="topic", n_resamples=199)
    assert topic.leaderboards["recall@10"].n_clusters == 2 and topic.cluster == "topic"
    assert topic.icc["n_topics"] == 2 and topic.icc["decision"] == "topic"
    assert "Cited questions: 8 questions (all)" in res.summary()
    assert res.to_markdown().startswith("| system | span_recall@500w [95% CI] | rank | tier |")
    assert "| recall@10 (unequal context) [95% CI] |" in res.to_markdown()
    with pytest.raises(RagcovError, match="`cluster` must be one of"):
        cited_chunking_study(tasks, makers, cluster="doc")
    with pytest.raises(RagcovError, match="at least two systems"):
        cited_chunking_study({"article": tasks["article"]}, {"bm25": makers["bm25"]})


def test_ndcg_equals_pytrec_eval_on_irpf(data_dir):
    """nDCG@10 of a real run on the graded qrels of both granularities equals trec_eval's (pytrec_eval)."""
    folder = irpf_dir(data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(folder / "laws.jsonl", folder / "questions.jsonl", chunking="words", chunk_words=200)
    run = BM25(show_progress=False).index(task.corpus).search(task.queries[["_id", "text"]], k=10,
                                                              show_progress=False)
    trec_run = {}
    for q, d, s in zip(run["query-id"], run["corpus-id"], run["score"]):
        trec_run.setdefault(str(q), {})[str(d)] = float(s)
    for gran in ("dispositivo", "article"):
        qrels = granularity_qrels(task.citations, gran)
        trec_qrels = {}
        for q, d, g in zip(qrels["query-id"], qrels["corpus-id"], qrels["score"]):
            trec_qrels.setdefault(q, {})[d] = int(g)
        ref = pytrec_eval.RelevanceEvaluator(trec_qrels, {"ndcg_cut_10"}).evaluate(trec_run)
        ours = per_query_values(run, task, metrics=["ndcg@10"], granularity=gran)
        assert len(ours) == 174
        for q, v in ours["ndcg@10"].items():
            assert v == pytest.approx(ref[q]["ndcg_cut_10"], abs=1e-9)


def test_cited_chunking_study_one_family_per_budget(tmp_path):
    """Each budget is one family on span_recall@Bw (the headline) and one on recall@Bw (touched), paired by
    question, its values those of per_query_values; the JSON holds per budget the systems, pairs and family check
    of both; the headline names the budget and ranks by text share."""
    tasks, makers = _study(tmp_path)
    res = cited_chunking_study(tasks, makers, metrics=["recall@2"], budgets=[15, 40], cluster="query",
                               n_resamples=199)
    assert list(res.leaderboards) == ["span_recall@15w", "span_recall@40w", "recall@15w", "recall@40w", "recall@2"]
    assert res.headline_budget() == 15  # no 1,000: the middle of [15, 40]
    # the family's values are per_query_values of each system's own run, at the same budget
    run = BM25(show_progress=False).index(tasks["words-10"].corpus).search(tasks["words-10"].queries[["_id", "text"]],
                                                                           k=50, show_progress=False)
    ref = per_query_values(run, tasks["words-10"], metrics=["recall@15w", "iou@40w", "span_recall@15w"])
    assert np.allclose(res.values[("recall@15w", "words-10/bm25")].to_numpy(), ref["recall@15w"].to_numpy())
    assert np.allclose(res.values[("span_recall@15w", "words-10/bm25")].to_numpy(), ref["span_recall@15w"].to_numpy())
    assert np.allclose(res.values[("iou@40w", "words-10/bm25")].to_numpy(), ref["iou@40w"].to_numpy())
    est = res.leaderboards["span_recall@40w"].systems.set_index("name")["estimate"]
    assert est["article/tfidf"] == pytest.approx(res.values[("span_recall@40w", "article/tfidf")].mean())
    out = json.loads(res.to_json())
    assert set(out["budgets"]) == {"15", "40"}
    b = out["budgets"]["40"]
    assert b["metric"] == "span_recall@40w" and len(b["systems"]) == 4 and len(b["pairs"]) == 6
    assert b["family_check"] is not None and "fwer" in b["family_check"]
    assert b["touched"]["metric"] == "recall@40w" and len(b["touched"]["pairs"]) == 6
    assert b["touched"]["answer"] == res.touch_answer(40) and b["answer"]["reading"] == "text_share"
    ans = res.budget_answer(40)
    assert ans["leader"] == max(est.index, key=lambda n: (est[n], n == min(est.index)))
    assert ans["next"].split("/")[0] != ans["chunking"]
    assert ans["low"] <= ans["diff"] <= ans["high"]
    assert ans["diff"] == pytest.approx(est[ans["leader"]] - est[ans["next"]])
    head = res.summary().splitlines()[0]
    assert head.startswith("Within 15 words of context, the cut whose context holds the most of the cited provisions' "
                           "text is") and "simultaneous 95% interval" in head
    assert "recall@2: k chunks of whatever size each chunking makes — UNEQUAL CONTEXTS" in res.summary()
    assert out["headline"]["budget"] == 15 and out["leaderboards"]["recall@2"]["metric"] == "recall@2"
    with pytest.raises(RagcovError, match="`budgets` must be positive"):
        cited_chunking_study(tasks, makers, budgets=[0])


def test_cited_chunking_study_runs_through_the_runner_it_is_given(tmp_path):
    """The study never indexes or searches itself: its default runner (``engine.run_task``) gives the values
    that retrievers indexed and searched by hand give, and a runner passed in is called once a system, on the
    chunking's task, for the scored questions in order, deep enough for the largest budget."""
    from ragcov_data.eval.comparisons.cited import cited_chunking_study

    tasks, makers = _study(tmp_path)
    calls = []

    def by_hand(retriever, task, *, k, queries):
        calls.append((task, k, list(queries["_id"])))
        return retriever.index(task["corpus"]).search(queries, k=k)

    kw = dict(metrics=["recall@3"], budgets=[40], cluster="query", n_resamples=199)
    default = cited_chunking_study(tasks, makers, **kw)
    hand = cited_chunking_study(tasks, makers, runner=by_hand, **kw)
    pd.testing.assert_frame_equal(default.values, hand.values, check_exact=True)
    assert default.leaderboards["recall@40w"].systems.equals(hand.leaderboards["recall@40w"].systems)
    assert [c[0] for c in calls] == [tasks["words-10"]] * 2 + [tasks["article"]] * 2
    assert all(q == [f"q{i}" for i in range(1, 9)] for _, _, q in calls)
    assert calls[0][1] >= 4  # 40 words of 10-word windows: at least four chunks deep


def test_the_task_unit_is_the_default_and_an_undefined_icc_is_said(tmp_path):
    """The unit is read from the task's queries (here its ``topic`` column), not chosen by the ICC; where every
    topic holds one question the ICC is undefined and said so, never printed as ``+nan``."""
    tasks, makers = _study(tmp_path)
    res = cited_chunking_study(tasks, makers, budgets=[40], metrics=["recall@3"], n_resamples=199)
    assert res.cluster == "topic" and res.icc["unit"] == "topic" and res.icc["task_unit"] == "topic"
    assert res.leaderboards["recall@3"].n_clusters == 2 and "(the task's unit)" in res.icc["sentence"]
    q = res.icc["sentence"]
    assert "ICC by topic" in q and "2 topics" in q and "nan" not in q  # here every value is 1: undefined, said
    chosen = cited_chunking_study(tasks, makers, budgets=[40], metrics=["recall@3"], cluster="query",
                                  n_resamples=199)
    assert "the question (chosen, cluster='query'; the task's unit is the topic)" in chosen.icc["sentence"]
    # every question its own topic: the ICC by topic is undefined
    for t in tasks.values():
        t.queries = t.queries.assign(topic=t.queries["_id"])
    one = cited_chunking_study(tasks, makers, budgets=[40], metrics=["recall@3"], n_resamples=199)
    assert one.leaderboards["recall@3"].n_clusters == 8
    assert "ICC by topic undefined (every topic holds one question; 8 topics)" in one.icc["sentence"]
    assert "nan" not in one.icc["sentence"]
    with pytest.raises(RagcovError, match="no 'exam' column"):
        cited_chunking_study(tasks, makers, budgets=[40], metrics=["recall@3"], cluster="exam", n_resamples=199)
