"""Fixtures of the baseline tests: real ANEEL chunks, built by a tiny local chunker.

The chunker is deliberately independent of the task loader: consecutive 100-word chunks of each
document (whitespace words), queries = the first 20 words of each chunk, own chunk in ``chunk_id``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest


def chunk_docs(path: Path, chunk_words: int = 100, query_words: int = 20) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids, doc_ids, texts = [], [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            words = doc["text"].split()
            for i, start in enumerate(range(0, len(words), chunk_words)):
                ids.append(f"{doc['doc_id']}#{i:04d}")
                doc_ids.append(doc["doc_id"])
                texts.append(" ".join(words[start:start + chunk_words]))
    corpus = pd.DataFrame({"_id": ids, "doc_id": doc_ids, "text": texts})
    queries = pd.DataFrame({
        "_id": ids,
        "text": [" ".join(t.split()[:query_words]) for t in texts],
        "doc_id": doc_ids,
        "chunk_id": ids,
    })
    return corpus, queries


@pytest.fixture(scope="session")
def aneel_chunks(aneel_fulltext: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """All 100-word chunks of the ANEEL full-text sample (corpus, queries)."""
    return chunk_docs(aneel_fulltext)


@pytest.fixture(scope="session")
def small_task(aneel_chunks) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The first 400 real chunks and their queries: a few hundred, as the reference tests need."""
    corpus, queries = aneel_chunks
    return corpus.iloc[:400].reset_index(drop=True), queries.iloc[:400].reset_index(drop=True)
