"""RM3 pseudo-relevance feedback: expansion terms and weights against a hand computation, ties, exclude_self."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ragcov_data.baselines import BM25, RM3
from ragcov_data.errors import RagcovError

CORPUS = pd.DataFrame({
    "_id": ["a", "b", "c", "d", "e"],
    "text": ["tarifa energia energia solar", "tarifa energia eólica eólica eólica", "outorga hidrelétrica",
             "outorga portaria", "despacho portaria"],
})
QUERY = pd.DataFrame({"_id": ["q"], "text": ["tarifa"], "chunk_id": ["a"]})

# By hand (BM25 okapi, k1=1.5, b=0.75): N=5, avgdl=15/5=3; "tarifa" has df=2, idf=ln(3.5/2.5) (> 0);
# s_a = idf*2.5/(1+1.5*(0.25+0.75*4/3)), s_b = idf*2.5/(1+1.5*(0.25+0.75*5/3)).
IDF = math.log(3.5 / 2.5)
S_A, S_B = IDF * 2.5 / 2.875, IDF * 2.5 / 3.25


def _rm3(**kw) -> RM3:
    kw = {"fb_docs": 2, "fb_terms": 2, "max_df": 0.5, **kw}
    return RM3(BM25(show_progress=False, n_jobs=1), **kw).index(CORPUS)


def test_expansion_equals_hand_computation():
    # Eligible terms: df <= 0.5*5 -> every term here (df <= 2). Feedback docs a, b. Pruned to 2 terms each
    # (ties by term): a: energia 2, solar 1 (beats tarifa 1) -> 2/3, 1/3; b: eólica 3, energia 1 -> 3/4, 1/4.
    energia, solar, eolica = S_A * 2 / 3 + S_B / 4, S_A / 3, S_B * 3 / 4
    assert energia > eolica > solar  # the relevance model keeps energia and eólica
    z = energia + eolica
    want = {"tarifa": 0.5, "energia": 0.5 * energia / z, "eólica": 0.5 * eolica / z}
    got = _rm3().expansion(QUERY)["q"]
    assert list(got) == ["tarifa", "energia", "eólica"]  # largest first
    assert got == pytest.approx(want, rel=1e-12)
    # the literal numbers, for the record
    assert got["energia"] == pytest.approx(0.286158, abs=1e-6) and got["eólica"] == pytest.approx(0.213842, abs=1e-6)


def test_second_pass_is_weighted_bm25_and_keeps_trec_eval_order():
    rm3 = _rm3()
    w = rm3.expansion(QUERY)["q"]
    bm25 = rm3.base
    want = sum(weight * bm25.get_scores(term) for term, weight in w.items())
    run = rm3.search(QUERY, k=10)
    assert run.attrs["retriever"] == "bm25-rm3" and run.attrs["params"]["fb_docs"] == 2
    # b overtakes a (eólica); c, d, e share no expanded term: score 0, not retrieved
    assert want[1] > want[0] > 0 and (want[2:] == 0).all()
    assert run["corpus-id"].tolist() == ["b", "a"]
    np.testing.assert_allclose(run["score"], want[[1, 0]], rtol=1e-12)


def test_exclude_self_drops_own_chunk_from_feedback_and_run():
    rm3 = _rm3()
    got = rm3.expansion(QUERY, exclude_self=True)["q"]  # feedback = b only: eólica 3/4, energia 1/4
    assert got == pytest.approx({"tarifa": 0.5, "eólica": 0.375, "energia": 0.125}, rel=1e-12)
    run = rm3.search(QUERY, k=10, exclude_self=True)
    assert "a" not in set(run["corpus-id"]) and run["corpus-id"].tolist() == ["b"]


def test_default_filters_drop_frequent_and_short_terms():
    # default max_df=0.1: with 5 documents only df 0 terms would pass -> no expansion at all, query only
    got = RM3(BM25(show_progress=False), fb_docs=2, fb_terms=2).index(CORPUS).expansion(QUERY)["q"]
    assert got == {"tarifa": 1.0 * 0.5}
    corpus = pd.DataFrame({"_id": list("abcdefghijk"), "text": ["tarifa x1 é ab 1.000"] + [f"doc{i} outro" for i in range(10)]})
    rm3 = RM3(BM25(show_progress=False), fb_docs=1, fb_terms=10).index(corpus)
    got = rm3.expansion(pd.DataFrame({"_id": ["q"], "text": ["tarifa"]}))["q"]
    # "é" is 1 character, "1.000" not word characters; "tarifa", "x1", "ab" are eligible (df 1 of 11)
    assert set(got) == {"tarifa", "x1", "ab"}
    assert sum(got.values()) == pytest.approx(1.0)


def test_ties_exact_and_ordered_by_id_descending():
    corpus = pd.DataFrame({
        "_id": [f"d{i:02d}" for i in range(12)],
        "text": ["tarifa social energia"] * 3 + ["tarifa energia"] * 2 + [f"outro texto {i}" for i in range(7)],
    })
    rm3 = RM3(BM25(show_progress=False), original_query_weight=0.5, max_df=1.0).index(corpus)
    run = rm3.search(pd.DataFrame({"_id": ["q"], "text": ["tarifa"]}), k=10)
    assert run["corpus-id"].tolist() == ["d02", "d01", "d00", "d04", "d03"]
    s = run["score"].to_numpy()
    assert s[0] == s[1] == s[2] and s[3] == s[4] and s[2] > s[3]
    again = RM3(BM25(show_progress=False, n_jobs=2), max_df=1.0).index(corpus).search(
        pd.DataFrame({"_id": ["q"], "text": ["tarifa"]}), k=10)
    pd.testing.assert_frame_equal(run, again)


def test_weight_one_is_bm25_ranking(small_task):
    corpus, queries = small_task
    q = queries.iloc[:40]
    plain = BM25(show_progress=False).index(corpus).search(q, k=10, exclude_self=True)
    rm3 = RM3(BM25(show_progress=False), original_query_weight=1.0).index(corpus).search(q, k=10, exclude_self=True)
    assert plain[["query-id", "corpus-id", "rank"]].equals(rm3[["query-id", "corpus-id", "rank"]])
    assert rm3.attrs["exclude_self"] and not (rm3["corpus-id"] == q.set_index("_id").loc[rm3["query-id"], "chunk_id"].to_numpy()).any()


@pytest.mark.parametrize("kwargs, match", [
    ({"fb_docs": 0}, "`fb_docs` must be a positive integer"),
    ({"original_query_weight": 1.5}, r"`original_query_weight` must be a number in \[0, 1\]"),
    ({"base": "bm25"}, "`base` must be a ragcov_data.baselines.BM25"),
])
def test_rm3_iv(kwargs, match):
    with pytest.raises(RagcovError, match=match):
        RM3(**kwargs)
    with pytest.raises(RagcovError, match="call `index"):
        RM3().search(QUERY)
