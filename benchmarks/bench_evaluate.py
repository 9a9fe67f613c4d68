"""Time ``evaluate`` with every interval method, B = 5,000, on a generated run of 33,500 queries in
~1,300 documents (heavy-tailed sizes, as in the ANEEL-TAESA corpus).

Run by hand:  python benchmarks/bench_evaluate.py [--n-resamples 5000] [--repeats 3]
"""
from __future__ import annotations

import argparse
import time

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-resamples", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    task, run = make_task()
    print(f"{len(task['queries'])} queries, {task['queries']['doc_id'].nunique()} documents, B={args.n_resamples}")
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        rep = evaluate(run, task, "hit@1", n_resamples=args.n_resamples)
        times.append(time.perf_counter() - t0)
    print(rep.summary())
    print(f"evaluate, all methods: best {min(times):.2f} s, median {np.median(times):.2f} s over {args.repeats} runs")


if __name__ == "__main__":
    main()
