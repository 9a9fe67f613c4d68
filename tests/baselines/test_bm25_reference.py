"""BM25 against rank-bm25 (and an independent loop implementation) on real ANEEL chunks."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import rank_bm25

from ragcov_data.baselines import BM25, VARIANTS
from ragcov_data.baselines._sparse import BlockScorer
from ragcov_data.errors import RagcovError

N_QUERIES = 80


def _queries(small_task):
    corpus, queries = small_task
    # chunk prefixes (the task's queries) plus some whole chunks (long queries with repeated terms)
    return list(queries["text"][:N_QUERIES]) + list(corpus["text"][::40])


def _first_max(scores: np.ndarray) -> int:
    top = scores.max()
    return int(np.flatnonzero(np.abs(scores - top) <= 1e-9 * max(1.0, abs(top)))[0])


@pytest.fixture(scope="module")
def okapi(small_task):
    corpus, _ = small_task
    bm = BM25(show_progress=False).index(corpus)
    ref = rank_bm25.BM25Okapi([bm.analyzer(t) for t in corpus["text"]])
    return bm, ref


def test_okapi_scores_equal_rank_bm25(okapi, small_task):
    bm, ref = okapi
    for q in _queries(small_task):
        expected = ref.get_scores(bm.analyzer(q))
        got = bm.get_scores(q)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
        assert _first_max(got) == _first_max(expected)


def test_okapi_idf_floor_is_exercised(okapi):
    """The corpus has terms in more than half the chunks, so the epsilon floor really is compared."""
    bm, ref = okapi
    floored = [w for w, i in bm.vocabulary_.items() if ref.idf[w] == ref.epsilon * ref.average_idf]
    assert floored, "no term with negative idf: the floor would go untested"
    for w in floored:
        assert bm.idf_[bm.vocabulary_[w]] == pytest.approx(ref.idf[w], abs=1e-12)
    assert bm.avgdl_ == pytest.approx(ref.avgdl)


def test_okapi_search_top1_equals_rank_bm25(okapi, small_task):
    bm, ref = okapi
    _, queries = small_task
    q = queries.iloc[:N_QUERIES]
    run = bm.search(q, k=1, exclude_self=True, show_progress=False)
    first = run[run["rank"] == 1].set_index("query-id")
    ids = bm.corpus_ids
    for qid, text, own in zip(q["_id"], q["text"], q["chunk_id"]):
        s = ref.get_scores(bm.analyzer(text))
        s[bm._pos[own]] = -np.inf
        s[s <= 0] = -np.inf
        if not np.isfinite(s.max()):
            assert qid not in first.index
            continue
        assert first.loc[qid, "corpus-id"] == ids[_first_max(s)]
        assert first.loc[qid, "score"] == pytest.approx(s.max(), abs=1e-9)


def test_bm25plus_equals_rank_bm25_without_delta_terms(small_task):
    """rank-bm25 adds delta * idf for *every* query token to every document (so delta cannot change its
    ranking); Lv & Zhai's BM25+ adds it for the query tokens a document contains. Removing the delta
    terms from both leaves identical scores."""
    corpus, _ = small_task
    bm = BM25(variant="bm25+", show_progress=False).index(corpus)
    tokens = [bm.analyzer(t) for t in corpus["text"]]
    ref = rank_bm25.BM25Plus(tokens)
    tf = [Counter(t) for t in tokens]
    for q in _queries(small_task):
        toks = bm.analyzer(q)
        ours_delta = np.array([sum(ref.delta * ref.idf.get(t, 0.0) for t in toks if c[t] > 0) for c in tf])
        ref_delta = sum(ref.delta * ref.idf.get(t, 0.0) for t in toks)
        np.testing.assert_allclose(
            bm.get_scores(q) - ours_delta, ref.get_scores(toks) - ref_delta, rtol=0, atol=1e-9
        )


def test_bm25l_equals_rank_bm25_term_by_term(small_task):
    """rank-bm25's BM25L multiplies each term score by tf once more; per term the two are exact."""
    corpus, _ = small_task
    bm = BM25(variant="bm25l", show_progress=False).index(corpus)
    tokens = [bm.analyzer(t) for t in corpus["text"]]
    ref = rank_bm25.BM25L(tokens)
    tf = [Counter(t) for t in tokens]
    terms = sorted(bm.vocabulary_, key=lambda w: -np.count_nonzero([w in c for c in tf[:50]]))[:25]
    for term in terms:
        counts = np.array([c.get(term, 0) for c in tf], dtype=float)
        ours = bm.get_scores(term)
        assert (ours[counts == 0] == 0).all()
        np.testing.assert_allclose(ours * counts, ref.get_scores([term]), rtol=0, atol=1e-9)
    # and a query is the sum of its tokens' single-term scores
    q = " ".join(terms[:6] + terms[:2])
    total = sum(bm.get_scores(t) for t in bm.analyzer(q))
    np.testing.assert_allclose(bm.get_scores(q), total, rtol=0, atol=1e-9)
    tf1 = [t for t in terms if max(c.get(t, 0) for c in tf) == 1]
    for t in tf1:  # tf = 1 everywhere: identical
        np.testing.assert_allclose(bm.get_scores(t), ref.get_scores([t]), rtol=0, atol=1e-9)


def _loop_scores(tokens, query, variant, k1=1.5, b=0.75):
    """Independent textbook implementation: plain Python loops over dict counts."""
    n = len(tokens)
    avgdl = sum(map(len, tokens)) / n
    df = Counter(w for doc in tokens for w in set(doc))
    out = []
    for doc in tokens:
        tf, total = Counter(doc), 0.0
        for w in query:
            if tf[w] == 0:
                continue
            if variant == "robertson":
                idf = max(math.log((n - df[w] + 0.5) / (df[w] + 0.5)), 0.0)
            else:  # lucene
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            total += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(doc) / avgdl))
        out.append(total)
    return np.array(out)


@pytest.mark.parametrize("variant", ["robertson", "lucene"])
def test_other_variants_equal_loop_reference(small_task, variant):
    corpus, queries = small_task
    corpus = corpus.iloc[:150]
    bm = BM25(variant=variant, k1=1.2, b=0.6, show_progress=False).index(corpus)
    tokens = [bm.analyzer(t) for t in corpus["text"]]
    for q in list(queries["text"][:10]):
        np.testing.assert_allclose(
            bm.get_scores(q), _loop_scores(tokens, bm.analyzer(q), variant, 1.2, 0.6), rtol=0, atol=1e-9
        )


def test_dense_and_sparse_paths_agree(okapi, small_task):
    """The hybrid product gives the same scores whichever terms go dense."""
    bm, _ = okapi
    weights = bm._scorer._wst.T.tocsr()
    n_dense = len(bm._scorer.dense_terms)
    assert n_dense > 0 and len(bm._scorer.sparse_terms) > 0  # both paths run in the tests above
    _, queries = small_task
    counts = bm._counter.transform(list(queries["text"][:30]))
    full = bm._scorer.scores(counts)
    # rebuild W with every term sparse / every term dense
    import scipy.sparse as sp

    w = sp.lil_matrix(bm._scorer.shape)
    w[:, bm._scorer.dense_terms] = bm._scorer._wdt.T
    w[:, bm._scorer.sparse_terms] = weights
    for dense_df in (0.0, 2.0):
        other = BlockScorer(w.tocsr(), dense_df=dense_df).scores(counts)
        np.testing.assert_allclose(other, full, rtol=1e-12, atol=1e-12)


def test_params_and_names():
    bm = BM25(k1=1.2, b=0.5, variant="bm25+", delta=0.7)
    p = bm.params()
    assert p["variant"] == "bm25+" and p["k1"] == 1.2 and p["b"] == 0.5 and p["delta"] == 0.7
    assert "epsilon" not in p and p["analyzer"]["stopwords"] is None
    assert BM25().params()["epsilon"] == 0.25
    assert BM25(variant="bm25l").delta == 0.5 and BM25(variant="bm25+").delta == 1.0
    assert "variant='okapi'" in repr(BM25())


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"variant": "okpai"}, r"`variant` must be one of \['okapi', 'robertson', 'lucene', 'bm25l', 'bm25\+'\].*okapi"),
        ({"k1": -1}, "`k1` must be a finite number >= 0"),
        ({"b": 1.5}, r"`b` must be a number in \[0, 1\]"),
        ({"epsilon": float("nan")}, "`epsilon`"),
        ({"analyzer": str.split}, "`analyzer` must be"),
        ({"n_jobs": 0}, "`n_jobs`"),
    ],
)
def test_bm25_iv(kwargs, match):
    with pytest.raises(RagcovError, match=match):
        BM25(**kwargs)


def test_variant_error_lists_the_dict_keys():
    with pytest.raises(RagcovError) as exc:
        BM25(variant="nope")
    assert all(repr(name) in str(exc.value) for name in VARIANTS)


def test_empty_corpus_tokens_error():
    import pandas as pd

    with pytest.raises(RagcovError, match="no tokens"):
        BM25(show_progress=False).index(pd.DataFrame({"_id": ["a"], "text": ["— ;"]}))


def test_in_vocabulary_renumbers_grows_and_drops():
    import scipy.sparse as sp

    from ragcov_data.baselines._sparse import in_vocabulary

    def counts(rows):
        return sp.csr_matrix(np.array(rows, dtype=float))

    vocab: dict[str, int] = {}
    m = in_vocabulary(["a", "b", "c"], counts([[2, 1, 0], [0, 0, 0], [0, 1, 1]]), vocab, grow=True)
    assert vocab == {"a": 0, "b": 1, "c": 2}
    assert m.toarray().tolist() == [[2, 1, 0], [0, 0, 0], [0, 1, 1]]
    # unknown terms are dropped when searching; columns follow the vocabulary, not the input order
    m = in_vocabulary(["c", "zz", "a"], counts([[2, 5, 0], [0, 1, 1]]), vocab, grow=False)
    assert m.shape == (2, 3) and m.toarray().tolist() == [[0, 0, 2], [1, 0, 0]]
    m = in_vocabulary(["d", "a", "e"], counts([[2, 1, 1]]), vocab, grow=True)
    assert vocab == {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4} and m.toarray().tolist() == [[1, 0, 0, 2, 1]]
    assert in_vocabulary([], sp.csr_matrix((1, 0)), vocab, grow=False).nnz == 0


def test_index_in_batches_equals_one_batch(small_task):
    """Indexing in several analyzer batches (one progress step each) builds the same index."""
    corpus, queries = small_task
    one = BM25(show_progress=False).index(corpus)
    many = BM25(show_progress=False)
    many.index_batch = 37
    many.index(corpus)
    assert many.vocabulary_ == one.vocabulary_
    np.testing.assert_array_equal(many.doc_len_, one.doc_len_)
    np.testing.assert_array_equal(many.idf_, one.idf_)
    for q in list(queries["text"][:5]):
        np.testing.assert_allclose(many.get_scores(q), one.get_scores(q), rtol=1e-13, atol=0)
