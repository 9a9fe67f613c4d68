"""The shared top-k: exclude_self, ties kept at the top, ordering, min_score, blocks, errors."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragcov_data.baselines import BM25, Retriever, TfIdf
from ragcov_data.errors import RagcovError
from ragcov_data.ties import tied


class Fixed(Retriever):
    """A retriever whose scores are a given matrix (row = query index in the text)."""

    name = "fixed"

    def __init__(self, matrix, min_score=None, block=None):
        super().__init__()
        self.matrix = np.asarray(matrix, dtype=float)
        self.min_score = min_score
        if block:
            self.max_block_floats = block * self.matrix.shape[1]

    def _fit(self, texts):
        pass

    def _score_block(self, texts):
        return self.matrix[[int(t) for t in texts]].copy()


def _index(ret, n):
    return ret.index(pd.DataFrame({"_id": [f"d{i}" for i in range(n)], "text": ["x"] * n}), show_progress=False)


def _queries(m, own=None):
    q = pd.DataFrame({"_id": [f"q{i}" for i in range(m)], "text": [str(i) for i in range(m)]})
    if own is not None:
        q["chunk_id"] = [f"d{j}" for j in own]
    return q


def reference_run(matrix, k, own=None, min_score=None):
    """Brute force: the documented ordering and tie rules, row by row, in plain Python.

    The top group takes the top score; below it, runs of consecutive near-tied scores take their first
    (largest) score; rows are ordered by (score descending, corpus-id descending), trec_eval's order.
    """
    rows = []
    for i, row in enumerate(np.asarray(matrix, dtype=float)):
        cands = [(s, f"d{j}") for j, s in enumerate(row)
                 if (own is None or j != own[i]) and np.isfinite(s) and (min_score is None or s > min_score)]
        if not cands:
            continue
        top = max(s for s, _ in cands)
        in_top = {d for s, d in cands if tied(s, top)}
        cands = sorted(((top if d in in_top else s), d) for s, d in cands)[::-1]  # score desc, id desc
        snapped = []
        for s, d in cands:
            if snapped and tied(s, snapped[-1][0]):
                s = snapped[-1][0]
            snapped.append((s, d))
        ordered = sorted(snapped, key=lambda x: (x[0], x[1]), reverse=True)
        keep = max(k, len(in_top))
        rows += [(f"q{i}", d, r + 1, s) for r, (s, d) in enumerate(ordered[:keep])]
    return pd.DataFrame(rows, columns=["query-id", "corpus-id", "rank", "score"])


def _cmp(run, ref):
    got = run.reset_index(drop=True)
    assert list(got.columns) == ["query-id", "corpus-id", "rank", "score"]
    assert got[["query-id", "corpus-id"]].values.tolist() == ref[["query-id", "corpus-id"]].values.tolist()
    assert got["rank"].tolist() == ref["rank"].tolist()
    np.testing.assert_array_equal(got["score"].to_numpy(), ref["score"].to_numpy())


def test_hand_made_ties():
    m = [[1.0, 3.0, 2.0, 3.0, 3.0, 0.5],      # three-way tie at the top, beyond k=2
         [2.0, 2.0, 2.0, 2.0, 1.0, 0.0],      # tie at the k-th score: all tied with the top
         [5.0, 5.0 + 1e-13, 1.0, 5.0 - 1e-13, 0.0, 0.0]]  # float-noise tie: one exact score, id descending
    ret = _index(Fixed(m), 6)
    run = ret.search(_queries(3), k=2, show_progress=False)
    q0 = run[run["query-id"] == "q0"]
    assert q0["corpus-id"].tolist() == ["d4", "d3", "d1"] and q0["rank"].tolist() == [1, 2, 3]
    q1 = run[run["query-id"] == "q1"]
    assert q1["corpus-id"].tolist() == ["d3", "d2", "d1", "d0"]  # all tied with the top
    q2 = run[run["query-id"] == "q2"]
    assert q2["corpus-id"].tolist() == ["d3", "d1", "d0"]
    assert q2["score"].nunique() == 1 and q2["score"].iat[0] == 5.0 + 1e-13
    _cmp(run, reference_run(m, 2))


def test_kth_boundary_tie_cut_by_id_descending():
    m = [[9.0, 1.0, 4.0, 4.0, 4.0, 0.0]]
    run = _index(Fixed(m), 6).search(_queries(1), k=3, show_progress=False)
    assert run["corpus-id"].tolist() == ["d0", "d4", "d3"]  # trec_eval keeps the same two of the three


def test_near_ties_below_the_top_are_one_exact_score():
    m = [[9.0, 4.0, 4.0 + 1e-14, 4.0 - 1e-14, 1.0]]
    run = _index(Fixed(m), 5).search(_queries(1), k=5, show_progress=False)
    assert run["corpus-id"].tolist() == ["d0", "d3", "d2", "d1", "d4"]
    assert run["score"].tolist()[1:4] == [4.0 + 1e-14] * 3
    _cmp(run, reference_run(m, 5))


def test_ids_compare_bytewise_like_strcmp():
    # "d10" < "d9" as bytes, so among equal scores d9 comes first; a non-ASCII id sorts after ASCII
    ids = ["d9", "d10", "dé", "d1"]
    ret = Fixed([[1.0, 1.0, 1.0, 1.0]]).index(pd.DataFrame({"_id": ids, "text": ["x"] * 4}), show_progress=False)
    run = ret.search(_queries(1), k=4, show_progress=False)
    assert run["corpus-id"].tolist() == sorted(ids, key=lambda x: x.encode("utf-8"), reverse=True)
    assert run["corpus-id"].tolist() == ["dé", "d9", "d10", "d1"]


def test_exclude_self_and_min_score():
    m = [[5.0, 1.0, 0.0, -1.0], [2.0, 9.0, 0.0, 0.0]]
    ret = _index(Fixed(m, min_score=0.0), 4)
    run = ret.search(_queries(2, own=[0, 1]), k=10, exclude_self=True, show_progress=False)
    assert run[run["query-id"] == "q0"]["corpus-id"].tolist() == ["d1"]
    assert run[run["query-id"] == "q1"]["corpus-id"].tolist() == ["d0"]
    fp = run.attrs.pop("task_fingerprint")  # the corpus indexed: 4 chunks, and its hash
    assert fp["chunks"] == 4 and len(fp["corpus_sha256"]) == 64
    assert run.attrs == {"retriever": "fixed", "params": {}, "exclude_self": True}


def test_no_candidate_gives_no_row():
    run = _index(Fixed([[0.0, 0.0], [1.0, 0.0]], min_score=0.0), 2).search(_queries(2), show_progress=False)
    assert run["query-id"].tolist() == ["q1"]


def test_negative_scores_without_min_score():
    m = [[-0.5, -0.2, -0.2 - 1e-15, -0.9]]
    run = _index(Fixed(m), 4).search(_queries(1), k=1, show_progress=False)
    assert run["corpus-id"].tolist() == ["d2", "d1"]
    _cmp(run, reference_run(m, 1))


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 40),
    m=st.integers(1, 12),
    k=st.integers(1, 12),
    block=st.integers(1, 5),
)
def test_topk_matches_brute_force(data, n, m, k, block):
    """Integer-valued scores (many exact ties), random exclusions, any block size."""
    vals = data.draw(st.lists(st.integers(-2, 6), min_size=n * m, max_size=n * m))
    matrix = np.array(vals, dtype=float).reshape(m, n) / 2
    own = data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    min_score = data.draw(st.sampled_from([None, 0.0]))
    ret = _index(Fixed(matrix, min_score=min_score, block=block), n)
    run = ret.search(_queries(m, own), k=k, exclude_self=True, show_progress=False)
    _cmp(run, reference_run(matrix, k, own, min_score))


def test_wide_rows_use_the_sampled_bound_exactly():
    """Rows wider than 128 * k take the sampled k-th bound; the result is still the exact top-k."""
    rng = np.random.default_rng(0)
    matrix = np.round(rng.gamma(2.0, size=(7, 3000)), 1)  # many exact ties
    matrix[3, ::7] = matrix[3].max() + 1  # a big top group
    ret = _index(Fixed(matrix, min_score=0.0), 3000)
    own = [0, 5, 10, 3, 4, 2999, 7]
    run = ret.search(_queries(7, own), k=5, exclude_self=True, show_progress=False)
    _cmp(run, reference_run(matrix, 5, own, 0.0))
    assert (run["query-id"] == "q3").sum() == len(range(0, 3000, 7))


def test_exclude_self_on_real_task_and_blocks(small_task):
    corpus, queries = small_task
    bm = BM25(show_progress=False, n_jobs=1).index(corpus)
    run = bm.search(queries, k=5, exclude_self=True, show_progress=False)
    own = dict(zip(queries["_id"], queries["chunk_id"]))
    assert not (run["corpus-id"] == run["query-id"].map(own)).any()
    assert (run["score"] > 0).all() and run["query-id"].nunique() >= 390
    # ties at the top are kept: every query has >= 5 rows unless it ran out of candidates
    sizes = run.groupby("query-id").size()
    assert sizes.min() >= 1 and sizes.max() >= 5
    # block boundaries and threads change nothing
    bm2 = BM25(show_progress=False, n_jobs=2).index(corpus)
    bm2.max_block_floats = 7 * len(corpus)  # blocks of 7 queries, the last one shorter
    run2 = bm2.search(queries, k=5, exclude_self=True, show_progress=False)
    pd.testing.assert_frame_equal(run, run2)
    assert run.attrs == run2.attrs


def test_self_retrieval_without_exclusion_finds_own_chunk_first(small_task):
    """Sanity: a chunk's own text, as a query, ranks the chunk first (TF-IDF cosine 1)."""
    corpus, _ = small_task
    t = TfIdf(show_progress=False).index(corpus)
    q = corpus.iloc[10:20][["_id", "text"]]
    run = t.search(q, k=1, show_progress=False)
    first = run[run["rank"] == 1]
    # duplicates of a chunk's text elsewhere would tie; the own chunk is always in the top group
    for qid in q["_id"]:
        assert qid in set(run[run["query-id"] == qid]["corpus-id"])
    assert np.allclose(first["score"], 1.0)


def test_search_iv(small_task):
    corpus, queries = small_task
    bm = BM25(show_progress=False)
    with pytest.raises(RagcovError, match="call `index"):
        bm.search(queries)
    bm.index(corpus.iloc[:20])
    with pytest.raises(RagcovError, match="`k` must be a positive integer"):
        bm.search(queries, k=0)
    with pytest.raises(RagcovError, match=r"`queries` lacks column\(s\) \['chunk_id'\]"):
        bm.search(queries[["_id", "text"]], exclude_self=True)
    with pytest.raises(RagcovError, match="not in the indexed corpus"):
        bm.search(queries.iloc[:30], exclude_self=True)
    with pytest.raises(RagcovError, match="duplicate `_id`"):
        bm.search(pd.concat([queries.iloc[:2], queries.iloc[:1]]))
    with pytest.raises(RagcovError, match="`corpus` has duplicate `_id`"):
        BM25().index(pd.concat([corpus.iloc[:2], corpus.iloc[:1]]))
    with pytest.raises(RagcovError, match="`corpus` is empty"):
        BM25().index(corpus.iloc[:0])


def test_nan_scores_are_an_error():
    with pytest.raises(RagcovError, match="NaN scores"):
        _index(Fixed([[1.0, np.nan]]), 2).search(_queries(1), show_progress=False)


def test_datasets_input(small_task):
    import datasets
    corpus, queries = small_task
    bm = BM25(show_progress=False).index(datasets.Dataset.from_pandas(corpus.iloc[:50]))
    run = bm.search(datasets.Dataset.from_pandas(queries.iloc[:5]), k=3, exclude_self=True, show_progress=False)
    ref = BM25(show_progress=False).index(corpus.iloc[:50]).search(queries.iloc[:5], k=3, exclude_self=True,
                                                                   show_progress=False)
    pd.testing.assert_frame_equal(run, ref)
