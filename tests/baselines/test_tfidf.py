"""TF-IDF against a direct scikit-learn computation on real ANEEL chunks."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from ragcov_data.baselines import Analyzer, TfIdf
from ragcov_data.errors import RagcovError


@pytest.mark.parametrize("sublinear_tf, smooth_idf", [(True, True), (False, False)])
def test_tfidf_equals_sklearn_cosine(small_task, sublinear_tf, smooth_idf):
    corpus, queries = small_task
    q = queries.iloc[:60]
    ours = TfIdf(sublinear_tf=sublinear_tf, smooth_idf=smooth_idf, show_progress=False).index(corpus)
    vec = TfidfVectorizer(analyzer=Analyzer(), sublinear_tf=sublinear_tf, smooth_idf=smooth_idf)
    x = vec.fit_transform(corpus["text"])
    expected = cosine_similarity(vec.transform(q["text"]), x)
    got = ours._score_block(list(q["text"])).copy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # and the run: top-1 of each query (own chunk excluded) is sklearn's arg max, first in corpus order
    run = ours.search(q, k=3, exclude_self=True, show_progress=False)
    first = run[run["rank"] == 1].set_index("query-id")
    for i, (qid, own) in enumerate(zip(q["_id"], q["chunk_id"])):
        s = expected[i].copy()
        s[ours._pos[own]] = -np.inf
        best = np.flatnonzero(np.isclose(s, s.max(), rtol=1e-9, atol=1e-9))[0]
        assert first.loc[qid, "corpus-id"] == corpus["_id"][best]
        assert first.loc[qid, "score"] == pytest.approx(s.max(), abs=1e-12)
    assert run["score"].gt(0).all()


def test_tfidf_params_and_analyzer_options(small_task):
    corpus, queries = small_task
    an = Analyzer(fold_accents=True, stopwords="pt")
    t = TfIdf(analyzer=an, show_progress=False).index(corpus.iloc[:50])
    assert t.params()["analyzer"]["stopwords"] == "pt" and t.params()["norm"] == "l2"
    assert "de" not in t.vocabulary_ and "energia" in t.vocabulary_
    run = t.search(queries.iloc[:5], k=2, show_progress=False)
    assert run.attrs["retriever"] == "tfidf" and run.attrs["params"] == t.params()


def test_tfidf_iv():
    import pandas as pd

    with pytest.raises(RagcovError, match="`norm` must be one of"):
        TfIdf(norm="l3")
    with pytest.raises(RagcovError, match="could not index"):
        TfIdf(show_progress=False).index(pd.DataFrame({"_id": ["a"], "text": ["!!"]}))


@pytest.mark.parametrize("min_df, max_df", [(2, 0.5), (0.01, 40), (3, 1.0)])
def test_tfidf_pruning_equals_sklearn(small_task, min_df, max_df):
    corpus, queries = small_task
    q = queries.iloc[:40]
    ours = TfIdf(min_df=min_df, max_df=max_df, show_progress=False).index(corpus)
    vec = TfidfVectorizer(analyzer=Analyzer(), sublinear_tf=True, min_df=min_df, max_df=max_df)
    x = vec.fit_transform(corpus["text"])
    assert set(ours.vocabulary_) == set(vec.vocabulary_) and len(ours.vocabulary_) < x.shape[1] + 1
    expected = cosine_similarity(vec.transform(q["text"]), x)
    np.testing.assert_allclose(ours._score_block(list(q["text"])).copy(), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({"min_df": -1}, "`min_df` must be a document count"),
    ({"max_df": 1.5}, "`max_df` must be a document count"),
    ({"min_df": True}, "`min_df`"),
])
def test_tfidf_df_limits_iv(kwargs, match):
    with pytest.raises(RagcovError, match=match):
        TfIdf(**kwargs)


def test_tfidf_pruning_errors(small_task):
    corpus, _ = small_task
    with pytest.raises(RagcovError, match="no terms remain"):
        TfIdf(min_df=10_000, max_df=20_000, show_progress=False).index(corpus)
    with pytest.raises(RagcovError, match="`max_df` corresponds to < documents than `min_df`"):
        TfIdf(min_df=5, max_df=2, show_progress=False).index(corpus)
