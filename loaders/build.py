"""Build the chunked self-retrieval task from an acervo: the one implementation of its construction rules.

:func:`build_task` reads an acervo (:func:`ragcov_data.read_acervo`), cuts every document into chunks
(:mod:`.chunking` word windows, or :mod:`.dispositivos` units), makes each chunk's first words a query
and every other chunk of its document a relevant passage, and returns a :class:`ragcov_data.tasks.record.Task`.
The ``aneel_taesa`` ``datasets`` builder (:mod:`.self_retrieval`) and ``ragcov build`` call it.

The arrows point down the flow: this module imports the task record (:mod:`ragcov_data.tasks.record`) and the
document sampler (:mod:`ragcov_data.tasks.sampling`); neither imports the loaders.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ragcov_data import __version__
from ragcov_data.legal.acervo import Acervo, read_acervo
from ragcov_data.errors import RagcovError
from ragcov_data.legal.vigencia import annotate_task
from ragcov_data.loaders import chunking as ch
from ragcov_data.loaders import dispositivos as dvm
from ragcov_data.tasks.sampling import sample_task
from ragcov_data.tasks.record import TASK_NAME, Task

__all__ = ["build_task"]


def build_task(
    source: Acervo | str | os.PathLike | Sequence[str | os.PathLike],
    *,
    chunk_words: int = 100,
    query_words: int = 20,
    id_column: str = "doc_id",
    text_column: str = "text",
    dataset: str = "aneel_taesa",
    config_name: str | None = None,
    chunking: str = "words",
    min_words: int | None = None,
    max_words: int | None = None,
    sample_docs: int | None = None,
    sample_seed: int = 0,
    sample_strata: str | None = None,
    keep_superseded: bool = False,
) -> Task:
    """Build the chunked self-retrieval task from an acervo.

    Parameters
    ----------
    source : Acervo, path or list of paths
        An acervo already read, or what :func:`ragcov_data.read_acervo` accepts.
    chunk_words : int, default: 100
        Words a chunk (the last chunk may hold up to ``chunk_words + query_words - 1``).
    query_words : int, default: 20
        Words a query: the first ``query_words`` words of its chunk.
    id_column, text_column : str
        Column mapping for table sources.
    dataset, config_name : str
        Recorded in the manifest (``config_name`` defaults to ``chunks-<chunk_words>``, or ``dispositivo``).
    chunking : {"words", "dispositivo"}, default: "words"
        ``"words"``: windows of ``chunk_words`` words. ``"dispositivo"``: cut at the act's own artigos,
        parágrafos, incisos ... (:mod:`.dispositivos`); documents with no artigo fall
        back to ``chunk_words`` windows; the corpus gains ``unit``, ``continued`` and ``articles`` (the
        artigos each chunk holds).
    min_words, max_words : int, optional
        ``chunking="dispositivo"`` only: a unit shorter than ``min_words`` (default ``query_words``) joins
        the next one; a unit longer than ``max_words`` (default 400) is split.
    sample_docs, sample_seed, sample_strata : int, int, str, optional
        Keep the queries and qrels of ``sample_docs`` documents drawn without replacement (seeded; within
        the strata of a document column such as ``doc_type``, proportional quotas rounded at random from
        the seed, so every document's inclusion probability is K/N); the corpus keeps every eligible
        document, and ``manifest["sample"]`` records the population, the design and the sample
        (see :mod:`ragcov_data.tasks.sampling`).
    keep_superseded : bool, default: False
        Keep superseded wording of text files in the index (see :func:`read_acervo`); the corpus columns
        ``in_force``, ``units_not_in_force`` and ``share_not_in_force`` mark it, per dispositivo unit
        (:mod:`ragcov_data.legal.vigencia`).

    Returns
    -------
    Task

    Raises
    ------
    RagcovError
        ``chunk_words < query_words``, or no document yields two chunks; plus every
        :func:`read_acervo` error.

    Notes
    -----
    Words are whitespace tokens; chunks are consecutive and non-overlapping; a final chunk shorter than
    ``query_words`` words is merged into the previous one; documents with a single chunk are excluded
    (counted in the manifest). Corpus and query ids are ``"<doc_id>#<chunk_index:04d>"``; rows keep
    source order, so the same input and config give byte-identical parquet.
    """
    ch.validate_sizes(chunk_words, query_words)
    dv = dvm.settings(chunking, min_words, max_words, query_words)  # None for chunking="words"
    acervo = source if isinstance(source, Acervo) else read_acervo(
        source, id_column=id_column, text_column=text_column, keep_superseded=keep_superseded)
    cut = _cut(acervo, dv, chunk_words, query_words)
    corpus, queries, qrels = _tables(acervo, cut, dv, query_words)
    if dv is None:
        name = config_name or ch.config_name(chunk_words, query_words)
    else:
        name = config_name or dvm.config_name(dv[1], dv[0], chunk_words, query_words)
    task = _task(acervo, cut, dv, corpus, queries, qrels,
                 _manifest(dataset, name, chunk_words, query_words, acervo, cut, (corpus, queries, qrels)))
    return task if sample_docs is None else sample_task(task, sample_docs, sample_seed, sample_strata)


@dataclass
class _Cut:
    """Every eligible document cut into chunks: one entry a chunk (ids, documents, indexes, texts,
    metadata; ``units``, ``continued``, ``articles`` for dispositivo chunks), chunks a document, and counts."""

    ids: list = field(default_factory=list)
    docs: list = field(default_factory=list)
    idx: list = field(default_factory=list)
    text: list = field(default_factory=list)
    meta: list = field(default_factory=list)
    doc_sizes: list[int] = field(default_factory=list)
    units: list[str | None] = field(default_factory=list)
    continued: list[bool] = field(default_factory=list)
    articles: list[list[str]] = field(default_factory=list)
    n_single: int = 0
    n_words: int = 0
    n_structured: int = 0


def _cut(acervo: Acervo, dv: tuple | None, chunk_words: int, query_words: int) -> _Cut:
    """Cut every document (word windows, or dispositivo units when ``dv`` holds their sizes); documents
    with a single chunk are counted and left out. Raises when no document yields two chunks."""
    meta_cols = acervo.metadata_columns
    cut = _Cut()
    for doc in acervo.documents:
        if dv is None:
            words = ch.split_words(doc.text)
            spans = ch.chunk_spans(len(words), chunk_words, query_words)
        else:
            words, starts = dvm.words_and_line_starts(doc.text)
            parts, structured = dvm.dispositivo_spans(words, starts, min_words=dv[0], max_words=dv[1],
                                                  chunk_words=chunk_words, query_words=query_words)
            cut.n_structured += structured
            spans = [(p.start, p.stop) for p in parts]
        cut.n_words += len(words)
        if len(spans) < 2:
            cut.n_single += 1
            continue
        cut.doc_sizes.append(len(spans))
        meta = tuple(doc.metadata.get(c) for c in meta_cols)
        for i, (a, b) in enumerate(spans):
            cut.ids.append(ch.chunk_id(doc.doc_id, i))
            cut.docs.append(doc.doc_id)
            cut.idx.append(i)
            cut.text.append(" ".join(words[a:b]))
            cut.meta.append(meta)
        if dv is not None:
            cut.units.extend(p.unit for p in parts)
            cut.continued.extend(p.continued for p in parts)
            cut.articles.extend(list(p.articles) for p in parts)
    if not cut.doc_sizes:
        names = [s.name for s in acervo.sources] or ["(source)"]
        raise RagcovError(
            f"{', '.join(names[:3])}: none of the {len(acervo.documents)} documents yields two chunks of "
            f"chunk_words={chunk_words} (the task needs at least one); " + _too_short_why(acervo, chunk_words))
    return cut


def _too_short_why(acervo: Acervo, chunk_words: int) -> str:
    """The fix when no document yields two chunks: an act whose wording is mostly superseded (struck through,
    revoked), taken out by default, is said to be one, with ``--keep-superseded``; else a smaller chunk."""
    cut_out = [d for d in acervo.documents if d.removed_words]
    if not cut_out:
        return "lower `chunk_words` or add longer documents."
    d = max(cut_out, key=lambda d: d.removed_words)
    left = len(d.text.split())
    more = f" ({len(cut_out)} documents are)" if len(cut_out) > 1 else ""
    return (f"{d.where} is mostly superseded wording{more}: {d.removed_words:,} of its {d.removed_words + left:,} "
            f"words are struck through or revoked, taken out of the index by default, and the {left:,} words left "
            "are too few. Keep that wording, marked out of force, with --keep-superseded (keep_superseded=True); "
            "else lower `chunk_words` or add longer documents.")


def _tables(acervo: Acervo, cut: _Cut, dv: tuple | None, query_words: int
            ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The corpus, queries and qrels tables of the chunks, object columns as pandas' default string dtype."""
    meta_df = pd.DataFrame(cut.meta, columns=acervo.metadata_columns, dtype=object)
    corpus = pd.concat([pd.DataFrame({"_id": cut.ids, "doc_id": cut.docs,
                                      "chunk_index": np.asarray(cut.idx, dtype="int64"), "text": cut.text,
                                      **({} if dv is None else {"unit": pd.Series(cut.units, dtype=object),
                                                                "continued": np.asarray(cut.continued, dtype=bool),
                                                                "articles": pd.Series(cut.articles, dtype=object)})}),
                        meta_df], axis=1)
    queries = pd.concat([pd.DataFrame({"_id": cut.ids, "text": [ch.query_of(t, query_words) for t in cut.text],
                                       "doc_id": cut.docs, "chunk_id": cut.ids}), meta_df], axis=1)
    qrels = _qrels(cut.ids, cut.doc_sizes)
    for df in (corpus, queries, qrels):  # pandas' default string dtype, as ``Dataset.to_pandas()`` gives
        for c in df.columns:
            if df[c].dtype == object and c != "articles":  # articles: a list per chunk
                df[c] = df[c].astype("str")
    return corpus, queries, qrels


def _qrels(c_ids: list[str], doc_sizes: list[int]) -> pd.DataFrame:
    """For each query, every other chunk of its document, in corpus order (counted, and warned about when
    huge, before they are materialised: they grow with the square of chunk counts)."""
    # stacklevel 5: the warning names the caller of build_task (through _tables and this function)
    ch.warn_qrels_size(doc_sizes, mean_id_chars=sum(map(len, c_ids)) / len(c_ids), stacklevel=5)
    ids = np.asarray(c_ids, dtype=object)
    sizes = np.asarray(doc_sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    q_parts, c_parts = [], []
    for s, n in zip(starts, sizes):
        block = ids[s:s + n]
        qi, ci = np.nonzero(~np.eye(n, dtype=bool))
        q_parts.append(block[qi])
        c_parts.append(block[ci])
    q_col, c_col = np.concatenate(q_parts), np.concatenate(c_parts)
    return pd.DataFrame({"query-id": q_col, "corpus-id": c_col, "score": np.ones(len(q_col), dtype="int64")})


def _manifest(dataset: str, name: str, chunk_words: int, query_words: int, acervo: Acervo, cut: _Cut,
              tables: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]) -> dict:
    """The task's manifest: config, construction rules, sources and counts."""
    corpus, queries, qrels = tables
    return {
        "dataset": dataset,
        "task": TASK_NAME,
        "config": {"name": name, "chunk_words": chunk_words, "query_words": query_words},
        "rules": {"words": ch.WORD_RULE, "short_final_chunk": ch.SHORT_FINAL_CHUNK_RULE, "query": ch.QUERY_RULE,
                  "qrels": ch.QRELS_RULE, "exclusion": ch.EXCLUSION_RULE,
                  "ids": "corpus and query _id = '<doc_id>#<chunk_index:04d>'"},
        "sources": [s.to_dict() for s in acervo.sources],
        "metadata_columns": list(acervo.metadata_columns),
        "counts": {
            "documents_read": len(acervo.documents),
            "documents_eligible": len(cut.doc_sizes),
            "documents_excluded": {"single_chunk": cut.n_single},
            "files_skipped": len(acervo.skipped_files),
            "words": cut.n_words,
            "chunks": len(corpus),
            "queries": len(queries),
            "qrels": len(qrels),
        },
        "skipped_files": list(acervo.skipped_files),
        "ragcov_version": __version__,
    }


def _task(acervo: Acervo, cut: _Cut, dv: tuple | None, corpus: pd.DataFrame, queries: pd.DataFrame,
          qrels: pd.DataFrame, manifest: dict) -> Task:
    """The task, its manifest completed with the dispositivo settings and the acervo's vigência."""
    if dv is not None:
        dvm.annotate_manifest(manifest, dv, cut.n_structured, corpus)
    # corpus `in_force`, `units_not_in_force`, `share_not_in_force` when the acervo carries vigência
    annotate_task(corpus, acervo, manifest, units_of=dvm.vigencia_units)
    read_types = None
    if "doc_type" in acervo.metadata_columns:
        read_types = pd.Series([d.metadata.get("doc_type") for d in acervo.documents], dtype=object)
    return Task(corpus, queries, qrels, manifest, read_types)
