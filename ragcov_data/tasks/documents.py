"""A task's documents: what a pipeline ingests, and the text its returned passages are located in.

A team scoring its own pipeline on a ragcov task indexes the task's *documents* with its own splitter, not
ragcov's chunks, and returns passages of text (:mod:`ragcov_data.runs.passages`). :func:`task_documents` gives
those documents, one row each (``doc_id``, ``text``, then the task's document metadata), for every task:

- **cited questions** (``irpf``, ``lgpd``, ``cited_questions``): the acts as chunked, from the task's ``documents`` split; every
  chunk span and cited-provision span of the task is on this character line.
- **self-retrieval** (``aneel_taesa``, ``data_files=``): each document's chunks joined with one space, in chunk
  order: the document's words as the task reads them (a word is a whitespace token; chunks are consecutive word
  windows or dispositivo units). Documents the task excludes (a single chunk) are not part of it.
- **JurisTCU** and tables of ``queries``/``qrels``/``corpus``: every corpus row is a document (``doc_id`` = its
  ``_id``).

:func:`chunk_spans_in_documents` gives each self-retrieval chunk's character span in its document on that
line, so a passage overlapping a query's own chunk can be told apart (``exclude_self``).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError

__all__ = ["task_documents", "task_kind", "chunk_spans_in_documents", "DOCUMENT_RULES", "TASK_KINDS"]

#: The kinds of task a passage run can be scored on (:func:`task_kind`).
TASK_KINDS = ("cited", "self_retrieval", "documents")

#: How each kind of task's documents are made, recorded with every passage run scored.
DOCUMENT_RULES = {
    "cited": "the acts' text as chunked (the task's documents split)",
    "self_retrieval": "each document's chunks in chunk order, joined with one space (its words as the task reads "
                      "them)",
    "documents": "each corpus row is a document (doc_id = the corpus _id)",
}

_CORPUS_COLUMNS = ["_id", "doc_id", "chunk_index", "text"]


def _split(task: Any, name: str) -> pd.DataFrame | None:
    """A split of ``task`` (DatasetDict, Task or dict of DataFrames) as a DataFrame, or None when it has none."""
    if isinstance(task, Mapping):
        obj = task.get(name)
    else:
        try:
            obj = task[name]
        except (KeyError, TypeError, IndexError, AttributeError):
            obj = None
    if obj is None:
        return None
    frame = obj if isinstance(obj, pd.DataFrame) else obj.to_pandas()
    return None if name == "documents" and frame.empty and not len(frame.columns) else frame


def task_kind(task: Any) -> str:
    """``"cited"`` (a ``citations`` split), ``"self_retrieval"`` (a chunked corpus, ``doc_id`` and ``chunk_index``,
    whose queries name their own chunk, ``chunk_id``) or ``"documents"`` (each corpus row a document: JurisTCU,
    tables)."""
    if _split(task, "citations") is not None:
        return "cited"
    corpus = _split(task, "corpus")
    if corpus is None:
        raise RagcovError("the task has no corpus split; a pipeline needs the task's documents (pass a task from "
                          "ragcov_data.load_dataset(...)).")
    queries = _split(task, "queries")
    if {"doc_id", "chunk_index"} <= set(corpus.columns) and queries is not None and "chunk_id" in queries.columns:
        return "self_retrieval"
    return "documents"


def task_documents(task: Any) -> pd.DataFrame:
    """The task's documents, one row each: ``doc_id``, ``text``, then the task's document metadata (see the module
    docstring for how each kind of task makes them). ``attrs["kind"]`` and ``attrs["rule"]`` say which.

    Raises
    ------
    RagcovError
        A cited-questions task built before it recorded its acts (no ``documents`` split), or a corpus without
        ``_id``/``text``; each says how to rebuild or what the task lacks.
    """
    kind = task_kind(task)
    if kind == "cited":
        docs = _split(task, "documents")
        if docs is None or not {"doc_id", "text"} <= set(docs.columns):
            raise RagcovError("this cited-questions task has no `documents` split (the acts' text); it was built by an "
                              "older ragcov: rebuild it with ragcov_data.load_dataset('irpf', ...) or "
                              "build_cited_task(...).")
        out = docs.reset_index(drop=True).copy()
    elif kind == "self_retrieval":
        out = _joined(_split(task, "corpus"))
    else:
        corpus = _split(task, "corpus")
        if not {"_id", "text"} <= set(corpus.columns):
            raise RagcovError(f"the task's corpus lacks {sorted({'_id', 'text'} - set(corpus.columns))}; its documents "
                              "are its corpus rows (`_id`, `text`).")
        out = corpus.drop(columns=[c for c in ("doc_id", "chunk_index") if c in corpus.columns])
        out = out.rename(columns={"_id": "doc_id"}).reset_index(drop=True)
        out = out[["doc_id", "text", *[c for c in out.columns if c not in ("doc_id", "text")]]].copy()
    out["doc_id"] = out["doc_id"].astype(str)
    out["text"] = out["text"].astype(str)
    if out["doc_id"].duplicated().any():
        dup = out.loc[out["doc_id"].duplicated(), "doc_id"].iloc[0]
        raise RagcovError(f"the task's documents repeat the id {dup!r}; document ids must be unique.")
    out.attrs = {"kind": kind, "rule": DOCUMENT_RULES[kind]}
    return out


def _ordered(corpus: pd.DataFrame) -> pd.DataFrame:
    miss = [c for c in _CORPUS_COLUMNS if c not in corpus.columns]
    if miss:
        raise RagcovError(f"the self-retrieval corpus lacks {miss}; its documents are its chunks in order.")
    order = np.lexsort((corpus["chunk_index"].to_numpy(dtype=np.int64),
                        pd.factorize(corpus["doc_id"].astype(str))[0]))
    return corpus.iloc[order]


def _joined(corpus: pd.DataFrame) -> pd.DataFrame:
    """Self-retrieval documents: chunks in chunk order joined with one space, then the first chunk's metadata."""
    ordered = _ordered(corpus)
    meta = [c for c in corpus.columns if c not in (*_CORPUS_COLUMNS, "unit", "continued", "articles", "in_force",
                                                   "units_not_in_force", "share_not_in_force")]
    text = ordered.groupby("doc_id", sort=False)["text"].agg(lambda t: " ".join(map(str, t)))
    first = ordered.groupby("doc_id", sort=False)[meta].first() if meta else pd.DataFrame(index=text.index)
    out = pd.concat([text, first], axis=1).reset_index()
    return out[["doc_id", "text", *meta]]


def chunk_spans_in_documents(corpus: pd.DataFrame) -> pd.DataFrame:
    """Each self-retrieval chunk's ``doc_id``, ``start_char`` and ``end_char`` on its document's line of
    :func:`task_documents` (chunks joined with one space), indexed by the chunk's ``_id``."""
    ordered = _ordered(corpus)
    lengths = ordered["text"].astype(str).str.len().to_numpy(dtype=np.int64)
    docs = ordered["doc_id"].astype(str).to_numpy(dtype=object)
    first = np.r_[True, docs[1:] != docs[:-1]]
    step = lengths + 1  # one space after each chunk
    csum = np.cumsum(step) - step  # start on a line where every chunk is followed by a space
    doc_start = np.maximum.accumulate(np.where(first, csum, 0))
    start = csum - doc_start
    return pd.DataFrame({"doc_id": docs, "start_char": start, "end_char": start + lengths},
                        index=pd.Index(ordered["_id"].astype(str).to_numpy(), name="_id"))
