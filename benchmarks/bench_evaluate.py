"""Time ``evaluate`` with every interval method, B = 5,000, on a generated run of 33,500 queries in
~1,300 documents (heavy-tailed sizes, as in the ANEEL-TAESA corpus).

Run by hand:  python benchmarks/bench_evaluate.py [--n-resamples 5000] [--repeats 3] [--data-dir ../shared/data]

Each interval's verification (``ragcov_data.eval.estimates.verify``) is cached on disk: the first run on a design is
*cold* (it simulates), the next ones *warm* (they read the cache). The script times both, in a fresh cache
folder, on the generated task and, when ``--data-dir`` holds the ANEEL documents, on the ANEEL
self-retrieval task with a BM25 run (2,312 queries in 147 documents).
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ragcov_data.eval import evaluate


def make_task(n_docs: int = 1300, n_queries: int = 33_500, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = rng.lognormal(0.0, 1.3, n_docs)
    sizes = 2 + rng.multinomial(n_queries - 2 * n_docs, w / w.sum())
    doc = np.repeat([f"d{i:04d}" for i in range(n_docs)], sizes)
    idx = np.concatenate([np.arange(k) for k in sizes])
    qid = np.array([f"{d}#{i:04d}" for d, i in zip(doc, idx)])
    queries = pd.DataFrame({"_id": qid, "doc_id": doc, "chunk_id": qid, "chunk_index": idx})
    # one relevant sibling per query suffices for hit@1
    sib = np.array([f"{d}#{(i + 1) % k:04d}" for d, i, k in zip(doc, idx, np.repeat(sizes, sizes))])
    qrels = pd.DataFrame({"query-id": qid, "corpus-id": sib, "score": 1})
    rate = rng.beta(0.4, 1.6, n_docs)
    hit = rng.random(len(qid)) < np.repeat(rate, sizes)
    other = np.roll(qid, len(qid) // 2)  # a chunk of another document
    run = pd.DataFrame({"query-id": qid, "corpus-id": np.where(hit, sib, other), "rank": 1, "score": 1.0})
    return {"queries": queries, "qrels": qrels}, run


def _time(run, task, B: int, repeats: int) -> tuple[float, list[float], object]:
    """Cold time (fresh verification cache) and warm times of evaluate with every method."""
    with tempfile.TemporaryDirectory() as cache:
        os.environ["RAGCOV_VERIFY_CACHE_DIR"] = cache
        t0 = time.perf_counter()
        rep = evaluate(run, task, "hit@1", n_resamples=B)
        cold = time.perf_counter() - t0
        warm = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            rep = evaluate(run, task, "hit@1", n_resamples=B)
            warm.append(time.perf_counter() - t0)
    return cold, warm, rep


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-resamples", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data-dir", default=os.environ.get("RAGCOV_DATA_DIR", "../shared/data"))
    args = ap.parse_args()
    task, run = make_task()
    print(f"{len(task['queries'])} queries, {task['queries']['doc_id'].nunique()} documents, B={args.n_resamples}")
    cold, warm, rep = _time(run, task, args.n_resamples, args.repeats)
    print(rep.summary())
    print(f"evaluate, all methods + verification: cold {cold:.2f} s; warm best {min(warm):.2f} s, median "
          f"{np.median(warm):.2f} s over {args.repeats} runs")
    if (Path(args.data_dir) / "aneel").is_dir():
        import ragcov_data
        from ragcov_data.baselines import BM25

        a = ragcov_data.load_dataset("aneel_taesa", data_dir=args.data_dir, chunk_words=100, show_progress=False)
        from ragcov_data.execution.engine import run_task

        arun = run_task(BM25(show_progress=False), a, k=10, exclude_self=True)
        cold, warm, rep = _time(arun, a, args.n_resamples, args.repeats)
        print(f"ANEEL (BM25, {len(rep.per_query)} queries, {len(rep.per_document)} documents), all methods + "
              f"verification: cold {cold:.2f} s; warm best {min(warm):.2f} s, median {np.median(warm):.2f} s")


if __name__ == "__main__":
    main()
