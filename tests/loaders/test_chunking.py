"""Pure chunking rules: spans, the short-final-chunk merge, ids, queries, size validation."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragcov_data import RagcovError
from ragcov_data.loaders import chunking as ch


def test_spans_examples():
    assert ch.chunk_spans(250, 100, 20) == [(0, 100), (100, 200), (200, 250)]
    assert ch.chunk_spans(219, 100, 20) == [(0, 100), (100, 219)]  # 19-word tail merged
    assert ch.chunk_spans(220, 100, 20) == [(0, 100), (100, 200), (200, 220)]  # 20-word tail kept
    assert ch.chunk_spans(119, 100, 20) == [(0, 119)]  # merges into a single chunk
    assert ch.chunk_spans(50, 100, 20) == [(0, 50)]
    assert ch.chunk_spans(0, 100, 20) == []


@given(n=st.integers(0, 3000), cw=st.integers(1, 400), qw=st.integers(1, 400))
def test_spans_properties(n, cw, qw):
    if cw < qw:
        with pytest.raises(RagcovError, match="chunk_words"):
            ch.chunk_spans(n, cw, qw)
        return
    spans = ch.chunk_spans(n, cw, qw)
    # consecutive, non-overlapping, covering every word
    assert [a for a, _ in spans] == ([0] + [b for _, b in spans[:-1]] if spans else [])
    assert (spans[-1][1] if spans else 0) == n
    sizes = [b - a for a, b in spans]
    assert all(s == cw for s in sizes[:-1])
    if len(spans) >= 2:
        assert qw <= sizes[-1] <= cw + qw - 1
    # single chunk exactly when the document is shorter than chunk_words + query_words
    assert (len(spans) == 1) == (0 < n < cw + qw)


def test_ids_and_queries():
    assert ch.chunk_id("2022_01491_pdf1", 7) == "2022_01491_pdf1#0007"
    assert ch.chunk_id("a/b.txt", 12345) == "a/b.txt#12345"
    assert ch.query_of("a b  c\n d e", 3) == "a b c"
    assert ch.chunk_document("x " * 5 + "\n y", 3, 1) == ["x x x", "x x y"]
    assert ch.config_name(100, 20) == "chunks-100"
    assert ch.config_name(75, 30) == "chunks-75-q30"


@pytest.mark.parametrize("cw, qw, match", [
    (10, 20, r"`chunk_words` \(10\) must be >= `query_words` \(20\)"),
    (0, 0, "`chunk_words` must be a positive integer"),
    (100, -1, "`query_words` must be a positive integer"),
    (100.0, 20, "`chunk_words` must be a positive integer"),
    (True, 1, "`chunk_words` must be a positive integer"),
])
def test_validate_sizes_iv(cw, qw, match):
    with pytest.raises(RagcovError, match=match):
        ch.validate_sizes(cw, qw)
