"""Ray engine: wall time of one process against a local Ray cluster with 1 and 2 workers, on the scale corpus.

Corpus and queries as ``bench_scale.py`` (15,528 ANEEL ementas + 151 full texts, >= 33,500 chunks, every
chunk a query, own chunk excluded). For BM25 and TF-IDF: index once here, then search every query
locally (``n_jobs=1``: one core, as one Ray worker; and the default threads) and through
:func:`ragcov_data.execution.engine.search` with 1 and 2 workers. Each Ray run is checked equal to the local run,
row for row. Printed: wall seconds (best of ``--repeat``), the per-shard throughput each worker reached
(queries/s, measured on the worker) and the cost of sharing the index (``ray.put`` size and time).
The local Ray cluster is started once, on 127.0.0.1, before timing (its start-up is reported apart).

Usage::

    python benchmarks/bench_ray.py --data-dir ../shared/data [--target 33500] [--repeat 2]
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import chunk_all, chunk_words_for_target, command_line, read_jsonl, table  # noqa: E402

import pandas as pd  # noqa: E402

from ragcov_data.execution import engine  # noqa: E402
from ragcov_data.baselines import BM25, TfIdf  # noqa: E402


def _best(fn, repeat: int):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("RAGCOV_DATA_DIR", "../shared/data"))
    ap.add_argument("--target", type=int, default=33_500, help="minimum number of chunks")
    ap.add_argument("--query-words", type=int, default=20)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2, help="runs of each setting (best reported)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--retrievers", nargs="+", default=["bm25", "tfidf"], choices=["bm25", "tfidf"])
    args = ap.parse_args(argv)

    aneel = Path(args.data_dir) / "aneel"
    docs = read_jsonl(aneel / "aneel_ementas.jsonl") + read_jsonl(aneel / "aneel_fulltext.jsonl")
    cw = chunk_words_for_target([len(d["text"].split()) for d in docs], args.target, args.query_words)
    corpus, queries = chunk_all(docs, cw, args.query_words)
    print(f"{len(docs):,} documents -> {len(corpus):,} chunks of <= {cw} words, {len(queries):,} queries")

    t0 = time.perf_counter()
    ray = engine.ensure_ray(max(args.workers))
    print(f"local Ray cluster ({int(ray.cluster_resources().get('CPU', 0))} CPUs, "
          f"{ray.get_runtime_context().gcs_address}) up in {time.perf_counter() - t0:.1f} s")

    rows, shard_rows = [], []
    for name in args.retrievers:
        cls = {"bm25": BM25, "tfidf": TfIdf}[name]
        r = cls(show_progress=False)
        t0 = time.perf_counter()
        r.index(corpus)
        t_index = time.perf_counter() - t0
        size_mb = len(pickle.dumps(r, protocol=5)) / 2**20
        t0 = time.perf_counter()
        ray.put(r)
        t_put = time.perf_counter() - t0
        settings = [("local, 1 thread", 1, None), ("local, default threads", None, None)]
        settings += [(f"ray, {w} worker{'s' * (w > 1)}", None, w) for w in args.workers]
        local_run = None
        for label, n_jobs, workers in settings:
            stats: dict = {}
            if workers is None:
                r.n_jobs = n_jobs
                secs, run = _best(lambda: r.search(queries, k=args.k, exclude_self=True), args.repeat)
                r.n_jobs = None
                local_run = run if local_run is None else local_run
            else:
                secs, run = _best(lambda: engine.search(r, queries, k=args.k, exclude_self=True, engine="ray",
                                                        workers=workers, show_progress=False, stats=stats),
                                  args.repeat)
                pd.testing.assert_frame_equal(run, local_run, check_exact=True)
                for i, s in enumerate(stats["shards"]):
                    shard_rows.append({"retriever": name, "workers": workers, "shard": i,
                                       "queries": f"{s['queries']:,}", "seconds on worker": f"{s['seconds']:.1f}",
                                       "queries/s": f"{s['queries_per_s']:,.0f}"})
            rows.append({"retriever": name, "setting": label, "search s (best)": f"{secs:.1f}",
                         "queries/s": f"{len(queries) / secs:,.0f}",
                         "same run": "reference" if workers is None and n_jobs == 1 else "yes"})
        rows.append({"retriever": name, "setting": f"index {t_index:.1f} s; pickled {size_mb:.0f} MiB, "
                                                   f"ray.put {t_put:.2f} s", "search s (best)": "",
                     "queries/s": "", "same run": ""})
    engine.shutdown()
    print(table(rows))
    print()
    print(table(shard_rows))
    print(f"\nCPUs available: {len(os.sched_getaffinity(0))}; load average at end: {os.getloadavg()[0]:.1f}")
    print(f"command: {command_line()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
