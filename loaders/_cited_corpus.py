"""The corpus of the cited-questions task: acts cut into chunks, with each chunk's character span.

:func:`chunk_corpus` is the corpus step of :func:`ragcov_data.loaders.cited_questions.build_cited_task`:
built-in chunkings (word windows, dispositivos, artigos) or an external chunker, every chunk located in
its act so citations are graded by span overlap.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from ragcov_data.loaders import chunkers, chunking as ch
from ragcov_data.loaders.articles import article_spans, locate, word_starts
from ragcov_data.loaders.dispositivos import DEFAULT_MAX_WORDS, artigo_of, dispositivo_spans, words_and_line_starts

__all__ = ["chunk_act", "chunk_corpus"]

_ROW_COLUMNS = ("_id", "doc_id", "chunk_index", "text", "unit", "continued", "start_char", "end_char", "articles")


def chunk_act(text: str, chunking: str, *, chunk_words: int, query_words: int, min_words: int | None,
              max_words: int | None, with_articles: bool = False) -> tuple[list[tuple], list[str]]:
    """Word spans ``(start, stop, unit, continued)`` of one act under ``chunking``, and its words; with
    ``with_articles`` each span also carries the artigos it holds (a list: the corpus column ``articles``)."""
    if chunking == "words":
        words = ch.split_words(text)
        return [(a, b, None, False, *([[]] if with_articles else [])) for a, b in
                ch.chunk_spans(len(words), chunk_words, query_words)], words
    words, starts = words_and_line_starts(text)
    if chunking == "dispositivo":
        parts, _ = dispositivo_spans(words, starts, min_words=min_words or query_words,
                                     max_words=max_words or DEFAULT_MAX_WORDS, chunk_words=chunk_words,
                                     query_words=query_words)
    else:
        parts, _ = article_spans(words, starts, chunk_words=chunk_words, query_words=query_words)
    if with_articles and chunking != "dispositivo":  # one chunk per artigo: the artigo it is
        parts = [p.__class__(p.start, p.stop, p.unit, p.continued, artigo_of(p.unit)) for p in parts]
    return [(p.start, p.stop, p.unit, p.continued, *([list(p.articles)] if with_articles else []))
            for p in parts], words


@functools.lru_cache(maxsize=16)
def _located(text: str) -> Any:
    return locate(text), word_starts(text)


def _pieces(doc: Any, spec: Any, ws: Any, cut: dict, uncovered: dict[str, int]) -> list[tuple]:
    """``(start_char, end_char, text, unit, continued, articles)`` of every chunk of one act; an external
    chunker's characters left out of every chunk are counted in ``uncovered``."""
    if spec is None:
        spans, words = chunk_act(doc.text, with_articles=True, **cut)
        return [(int(ws[a]), int(ws[b - 1]) + len(words[b - 1]), " ".join(words[a:b]), unit, cont, arts)
                for a, b, unit, cont, arts in spans]
    # an external chunker: its spans, the act's text over each (no artigo labels)
    pieces = [(a, b, doc.text[a:b], None, False, []) for a, b in chunkers.spans(spec, doc.text, doc.doc_id)]
    if n_out := chunkers.uncovered_characters(doc.text, [p[:2] for p in pieces]):
        uncovered[doc.doc_id] = n_out  # text in no chunk: listed in the manifest and warned about
    return pieces


def chunk_corpus(acervo: Any, spec: Any, cut: dict) -> tuple[pd.DataFrame, dict, dict, dict[str, int]]:
    """Cut every act of ``acervo`` (``spec``: an external chunker, or None for the built-in ``cut``:
    ``chunking, chunk_words, query_words, min_words, max_words``).

    Returns the corpus (chunk columns, then the acts' metadata as strings), the chunk character spans by
    act (``doc -> (starts, ends, first row)``), each act's located provisions, and the non-space
    characters an external chunker left out, by act."""
    rows: dict[str, list] = {k: [] for k in _ROW_COLUMNS}
    meta_cols = list(acervo.metadata_columns)
    meta_rows: list[tuple] = []
    bounds: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}  # doc -> chunk char starts, ends, first row
    index: dict[str, Any] = {}
    uncovered: dict[str, int] = {}
    for doc in acervo.documents:
        located, ws = _located(doc.text)
        index[doc.doc_id] = located
        pieces = _pieces(doc, spec, ws, cut, uncovered)
        first = len(rows["_id"])
        for i, (s_char, e_char, chunk_text, unit, cont, arts) in enumerate(pieces):
            for k, v in zip(_ROW_COLUMNS, (ch.chunk_id(doc.doc_id, i), doc.doc_id, i, chunk_text, unit, bool(cont),
                                           s_char, e_char, arts)):
                rows[k].append(v)
            meta_rows.append(tuple(doc.metadata.get(c) for c in meta_cols))
        bounds[doc.doc_id] = (np.asarray([p[0] for p in pieces], dtype=np.int64),
                              np.asarray([p[1] for p in pieces], dtype=np.int64), first)
    return _corpus_frame(rows, meta_rows, meta_cols), bounds, index, uncovered


def _corpus_frame(rows: dict[str, list], meta_rows: list[tuple], meta_cols: list[str]) -> pd.DataFrame:
    """The corpus table: typed chunk columns, then the metadata columns (``None`` kept, others ``str``)."""
    corpus = pd.DataFrame(rows)
    for col in ("chunk_index", "start_char", "end_char"):
        corpus[col] = corpus[col].astype("int64")
    corpus["continued"] = corpus["continued"].astype(bool)
    meta = pd.DataFrame(meta_rows, columns=meta_cols, dtype=object)
    for c in meta_cols:
        meta[c] = meta[c].map(lambda v: None if v is None else str(v))
    return pd.concat([corpus, meta], axis=1)
