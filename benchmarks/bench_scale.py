"""Scale run: BM25 and TF-IDF on >= 33,500 chunks of real ANEEL text, every chunk a query.

Corpus: the 15,528 ANEEL ementas plus the 151 full-text documents, chunked at the largest chunk size
(words) that yields at least ``--target`` chunks; each chunk's query is its first 20 words and its own
chunk is excluded (exclude_self), as in the self-retrieval task. No text is duplicated.

Usage::

    python benchmarks/bench_scale.py --data-dir ../shared/data [--target 33500] [--retrievers bm25 tfidf]
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import chunk_all, chunk_words_for_target, command_line, peak_rss_mb, read_jsonl, table  # noqa: E402

from ragcov_data.baselines import BM25, TfIdf  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("RAGCOV_DATA_DIR", "../shared/data"))
    ap.add_argument("--target", type=int, default=33_500, help="minimum number of chunks")
    ap.add_argument("--query-words", type=int, default=20)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--retrievers", nargs="+", default=["bm25", "tfidf"], choices=["bm25", "tfidf"])
    ap.add_argument("--n-jobs", type=int, default=None)
    args = ap.parse_args(argv)

    aneel = Path(args.data_dir) / "aneel"
    t0 = time.perf_counter()
    docs = read_jsonl(aneel / "aneel_ementas.jsonl") + read_jsonl(aneel / "aneel_fulltext.jsonl")
    lengths = [len(d["text"].split()) for d in docs]
    chunk_words = chunk_words_for_target(lengths, args.target, args.query_words)
    corpus, queries = chunk_all(docs, chunk_words, args.query_words)
    t_load = time.perf_counter() - t0
    print(f"{len(docs):,} documents, {sum(lengths):,} words -> {len(corpus):,} chunks of <= {chunk_words} words "
          f"(+ short-final merge), {len(queries):,} queries of {args.query_words} words; load+chunk {t_load:.1f} s")

    rows = []
    for name in args.retrievers:
        gc.collect()
        cls = {"bm25": BM25, "tfidf": TfIdf}[name]
        retriever = cls(show_progress=False, n_jobs=args.n_jobs)
        t0, c0 = time.perf_counter(), time.process_time()
        retriever.index(corpus)
        t_index = time.perf_counter() - t0
        t0 = time.perf_counter()
        run = retriever.search(queries, k=args.k, exclude_self=True)
        t_search = time.perf_counter() - t0
        cpu = time.process_time() - c0
        rows.append({
            "retriever": name,
            "chunks": f"{len(corpus):,}",
            "index s": f"{t_index:.1f}",
            "search s": f"{t_search:.1f}",
            "index+search s": f"{t_index + t_search:.1f}",
            "CPU s (all threads)": f"{cpu:.1f}",
            "run rows": f"{len(run):,}",
            "peak RSS MiB (process)": f"{peak_rss_mb():.0f}",
        })
        del retriever, run
    print(table(rows))
    print(f"\nCPUs available: {len(os.sched_getaffinity(0))}; load average at end: {os.getloadavg()[0]:.1f}")
    print(f"command: {command_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
