"""Pure chunking functions of the chunked self-retrieval task.

A *word* is a whitespace token of the text (``str.split()``). A document is cut into consecutive,
non-overlapping chunks of ``chunk_words`` words; a final chunk shorter than ``query_words`` words is
merged into the previous chunk (:data:`SHORT_FINAL_CHUNK_RULE`), so every chunk of a document with two or
more chunks holds at least ``query_words`` words and at most ``chunk_words + query_words - 1``.
The query of a chunk is its first ``query_words`` words.
"""
from __future__ import annotations

import warnings
from typing import Iterable

from ragcov_data._format import num
from ragcov_data.errors import RagcovError

#: Self-retrieval qrels rows above which building warns first (see :func:`warn_qrels_size`).
QRELS_WARN_ROWS = 20_000_000
#: Bytes a qrels row takes in memory besides its two ids' characters (two string offsets/pointers, the
#: int64 score); peak memory while building is a few times the estimate.
_QRELS_ROW_OVERHEAD = 24

#: How words are defined, recorded in every manifest.
WORD_RULE = "words are the whitespace tokens of the text (Python str.split()); chunk text joins them with one space"

#: What happens to a short final chunk, recorded in every manifest.
SHORT_FINAL_CHUNK_RULE = (
    "a final chunk with fewer than query_words words is merged into the previous chunk, "
    "so a chunk holds between query_words and chunk_words + query_words - 1 words"
)

#: How queries are made, recorded in every manifest.
QUERY_RULE = "the query of a chunk is its first query_words words; its own chunk is excluded from retrieval"

#: Which chunks are relevant, recorded in every manifest.
QRELS_RULE = "the relevant items of a query are all other chunks of the same document (score 1)"

#: Which documents are excluded, recorded in every manifest.
EXCLUSION_RULE = (
    "documents that yield a single chunk are excluded from corpus, queries and qrels (no query could hit); "
    "they are counted under counts.documents_excluded.single_chunk"
)


def validate_sizes(chunk_words: int, query_words: int) -> None:
    """Check ``chunk_words`` and ``query_words``; raise :class:`RagcovError` naming the fix."""
    for name, value in (("chunk_words", chunk_words), ("query_words", query_words)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise RagcovError(f"`{name}` must be a positive integer; got {value!r}.")
    if chunk_words < query_words:
        raise RagcovError(
            f"`chunk_words` ({chunk_words}) must be >= `query_words` ({query_words}): a query is the first "
            f"query_words words of its chunk. Raise chunk_words or lower query_words."
        )


def split_words(text: str) -> list[str]:
    """Words of ``text``: its whitespace tokens."""
    return text.split()


def chunk_spans(n_words: int, chunk_words: int, query_words: int) -> list[tuple[int, int]]:
    """Half-open word spans ``(start, stop)`` of the chunks of a document with ``n_words`` words.

    Consecutive, non-overlapping spans of ``chunk_words`` words; a final span shorter than
    ``query_words`` is merged into the previous one. A document of 0 words has no chunks.

    Examples
    --------
    >>> chunk_spans(250, 100, 20)
    [(0, 100), (100, 200), (200, 250)]
    >>> chunk_spans(210, 100, 20)
    [(0, 100), (100, 210)]
    """
    validate_sizes(chunk_words, query_words)
    spans = [(start, min(start + chunk_words, n_words)) for start in range(0, n_words, chunk_words)]
    if len(spans) >= 2 and spans[-1][1] - spans[-1][0] < query_words:
        last = spans.pop()
        spans[-1] = (spans[-1][0], last[1])
    return spans


def chunk_id(doc_id: str, chunk_index: int) -> str:
    """Id of chunk ``chunk_index`` of ``doc_id``: ``"<doc_id>#<chunk_index:04d>"``."""
    return f"{doc_id}#{chunk_index:04d}"


def chunk_document(text: str, chunk_words: int, query_words: int) -> list[str]:
    """Chunk texts of one document (words joined by one space)."""
    words = split_words(text)
    return [" ".join(words[a:b]) for a, b in chunk_spans(len(words), chunk_words, query_words)]


def query_of(chunk_text: str, query_words: int) -> str:
    """The query of a chunk: its first ``query_words`` words."""
    return " ".join(chunk_text.split()[:query_words])


def config_name(chunk_words: int, query_words: int, default_query_words: int = 20) -> str:
    """Config name for a chunk size: ``chunks-100``, or ``chunks-100-q30`` for a non-default query length."""
    return f"chunks-{chunk_words}" if query_words == default_query_words else f"chunks-{chunk_words}-q{query_words}"


class QrelsSizeWarning(UserWarning):
    """The self-retrieval qrels about to be built are very large (they grow with the square of chunk counts)."""


def qrels_rows(chunks_per_document: Iterable[int]) -> int:
    """Rows of the self-retrieval qrels: every ordered pair of distinct chunks of one document,
    ``sum(n * (n - 1))`` over documents with ``n`` chunks."""
    return int(sum(int(n) * (int(n) - 1) for n in chunks_per_document))


def warn_qrels_size(chunks_per_document: Iterable[int], mean_id_chars: float = 20.0,
                    threshold: int | None = None, stacklevel: int = 3) -> int:
    """Count the qrels rows before they are materialised; warn when above ``threshold``.

    Relevance in self-retrieval is "same document", so qrels grow with the square of a document's chunk
    count: one 1M-word document cut into 100-word chunks alone gives ~100M rows (GBs of memory). The
    warning (:class:`QrelsSizeWarning`) gives the rows, an estimate of the memory, the largest document's
    share and the fixes (larger ``chunk_words``, fewer or shorter documents).

    Parameters
    ----------
    chunks_per_document : iterable of int
        Chunk count of each eligible document.
    mean_id_chars : float
        Mean length of a chunk id, for the memory estimate.
    threshold : int, optional
        Rows above which to warn; default :data:`QRELS_WARN_ROWS` (read at call time).

    Returns
    -------
    int
        The number of qrels rows.
    """
    sizes = [int(n) for n in chunks_per_document]
    rows = qrels_rows(sizes)
    limit = QRELS_WARN_ROWS if threshold is None else threshold
    if rows > limit:
        est = rows * (2 * mean_id_chars + _QRELS_ROW_OVERHEAD)
        biggest = max(sizes)
        share = biggest * (biggest - 1) / rows
        warnings.warn(
            f"the self-retrieval qrels will hold {rows:,} rows (about {num(est / 1e9, 1)} GB in memory, more while "
            f"building; warning threshold {limit:,}): qrels grow with the square of a document's chunk count, and "
            f"the largest document ({biggest:,} chunks) alone gives {share:.0%} of them. Use larger chunks "
            "(`chunk_words`), split or sample the long documents, or build a subset of the documents.",
            QrelsSizeWarning, stacklevel=stacklevel)
    return rows
