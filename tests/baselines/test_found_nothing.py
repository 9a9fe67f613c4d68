"""BM25 on tiny corpora keeps its matching rows; queries that find nothing are said, recorded and told apart."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ragcov_data.baselines.bm25 import IDF_FLOOR
from ragcov_data.baselines.registry import make_retriever
from ragcov_data.cli import main
from ragcov_data.runs import load_run

TEXTS = ["a lei do imposto de renda e proventos", "o decreto regulamenta a lei do imposto"]


@pytest.mark.parametrize("n_docs", [1, 2])
@pytest.mark.parametrize("variant", ["okapi", "robertson", "lucene", "bm25l", "bm25+"])
def test_bm25_on_one_or_two_documents_returns_the_matching_rows(n_docs, variant):
    corpus = pd.DataFrame({"_id": [f"d{i}" for i in range(n_docs)], "text": TEXTS[:n_docs]})
    queries = pd.DataFrame({"_id": ["renda", "lei", "none"], "text": ["renda", "lei imposto", "energia"]})
    bm = make_retriever("bm25", variant=variant, show_progress=False).index(corpus)
    tf = make_retriever("tfidf", show_progress=False).index(corpus)
    got = bm.search(queries, k=5)
    want = tf.search(queries, k=5)
    pairs = lambda r: set(zip(r["query-id"], r["corpus-id"]))  # noqa: E731
    assert pairs(got) == pairs(want) and {"renda", "lei"} <= set(got["query-id"])
    assert (got["score"] > 0).all()


def test_floor_leaves_rank_bm25_equal_where_its_idf_is_positive():
    rank_bm25 = pytest.importorskip("rank_bm25")
    corpus = ["imposto renda pessoa fisica", "lei energia tarifa", "decreto energia", "portaria tarifa renda",
              "imposto sobre energia"]
    bm = make_retriever("bm25", show_progress=False).index(pd.DataFrame({"_id": list("abcde"), "text": corpus}))
    ref = rank_bm25.BM25Okapi([c.split() for c in corpus])
    assert min(ref.idf.values()) > 0  # the case where rank-bm25 is defined
    for q in ("imposto renda", "energia tarifa", "lei"):
        np.testing.assert_allclose(bm.get_scores(q), ref.get_scores(q.split()), rtol=0, atol=1e-9)
    assert IDF_FLOOR <= 1e-12


@pytest.fixture()
def tables(tmp_path):
    """A folder of corpus/queries/qrels tables with an emoji-only and a Cyrillic query."""
    d = tmp_path / "t"
    d.mkdir()
    corpus = [{"_id": f"c{i}", "text": t} for i, t in enumerate(
        ["imposto de renda da pessoa física", "tarifa de energia elétrica", "lei do imposto sobre a renda",
         "decreto da energia", "portaria da tarifa"])]
    queries = [{"_id": "q1", "text": "imposto renda"}, {"_id": "q2", "text": "energia"},
               {"_id": "q3", "text": "🙂 🙂"}, {"_id": "q4", "text": "привет мир"}]
    qrels = [{"query-id": q, "corpus-id": c, "score": 1} for q, c in (("q1", "c0"), ("q2", "c1"), ("q3", "c2"),
                                                                      ("q4", "c3"))]
    for name, rows in (("corpus", corpus), ("queries", queries), ("qrels", qrels)):
        (d / f"{name}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                         encoding="utf-8")
    return d


def test_run_says_which_queries_found_nothing_and_eval_does_not_say_run_them(tables, tmp_path, capsys):
    out = tmp_path / "r.parquet"
    assert main(["run", "--retriever", "bm25", "--data-dir", str(tables), "--out", str(out), "--quiet"]) == 0
    said = capsys.readouterr().out
    assert "2 of 4 queries found nothing" in said
    assert "1 with no word left after the analyzer" in said and "1 whose words are all absent from the corpus" in said
    assert load_run(out).attrs["found_nothing"] == ["q3", "q4"]
    assert main(["eval", str(out), "--data-dir", str(tables)]) == 2
    err = capsys.readouterr().err
    assert "They were run and found nothing" in err and "run every query" not in err
    assert main(["eval", str(out), "--data-dir", str(tables), "--on-missing", "zero", "--n-resamples", "99"]) == 0


def test_every_query_finding_nothing_names_the_cause(tables, tmp_path, capsys):
    q = tables / "queries.jsonl"
    q.write_text('{"_id": "q3", "text": "🙂"}\n{"_id": "q4", "text": "привет"}\n', encoding="utf-8")
    (tables / "qrels.jsonl").write_text('{"query-id": "q3", "corpus-id": "c0", "score": 1}\n')
    assert main(["run", "--retriever", "bm25", "--data-dir", str(tables), "--out", str(tmp_path / "r.trec"),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no word left after the analyzer" in err and "shares a word" not in err
