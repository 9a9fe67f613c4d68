"""Helpers shared by the benchmark scripts (run by hand, never by the test suite)."""
from __future__ import annotations

import json
import os
import resource
import shlex
import sys
from pathlib import Path

import pandas as pd

from ragcov_data.loaders.chunking import chunk_document, chunk_spans, query_of


def command_line() -> str:
    """The exact command that ran this script."""
    return " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv])


def default_data_dir() -> str:
    """``$RAGCOV_DATA_DIR``, else the shared data folder beside the repository (``../shared/data``)."""
    return os.environ.get("RAGCOV_DATA_DIR") or str(Path(__file__).resolve().parents[2] / "shared" / "data")


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def chunk_words_for_target(lengths: list[int], target: int, query_words: int) -> int:
    """Largest chunk size (words) whose windows give at least ``target`` chunks over documents of ``lengths``
    words (the count falls as the size grows, so a bisection finds it)."""
    def n_chunks(cw: int) -> int:
        return sum(len(chunk_spans(n, cw, query_words)) for n in lengths)

    lo, hi = query_words, 2000
    if n_chunks(lo) < target:
        raise SystemExit(f"even {lo}-word chunks give fewer than {target:,} chunks")
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if n_chunks(mid) >= target else (lo, mid - 1)
    return lo


def chunk_all(docs: list[dict], chunk_words: int, query_words: int = 20) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every chunk of every document as corpus and as a query (its first ``query_words`` words).

    Unlike the self-retrieval task, single-chunk documents are kept: this is a speed/scale run.
    """
    ids, texts = [], []
    for d in docs:
        for i, text in enumerate(chunk_document(d["text"], chunk_words, min(query_words, chunk_words))):
            ids.append(f"{d['doc_id']}#{i:04d}")
            texts.append(text)
    corpus = pd.DataFrame({"_id": ids, "text": texts})
    queries = pd.DataFrame({"_id": ids, "text": [query_of(t, query_words) for t in texts], "chunk_id": ids})
    return corpus, queries


def table(rows: list[dict]) -> str:
    """A small Markdown table."""
    cols = list(rows[0])
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    out += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(out)
