"""Pure chunking functions of the chunked self-retrieval task.

A *word* is a whitespace token of the text (``str.split()``). A document is cut into consecutive,
non-overlapping chunks of ``chunk_words`` words; a final chunk shorter than ``query_words`` words is
merged into the previous chunk (:data:`SHORT_FINAL_CHUNK_RULE`), so every chunk of a document with two or
more chunks holds at least ``query_words`` words and at most ``chunk_words + query_words - 1``.
The query of a chunk is its first ``query_words`` words.
"""
from __future__ import annotations

from ragcov_data.errors import RagcovError

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
