"""``ragcov compare``: paired comparison of two runs, clustered by document."""
from __future__ import annotations

import argparse

from ragcov_data.cli._evalcommon import add_common, load_task, methods_arg, metric_depth, read_run_arg


def add_parser(sub) -> None:
    p = sub.add_parser(
        "compare",
        help="paired difference of two runs with intervals clustered by the sampled unit",
        description="Interval for the mean per-query difference RUN_A - RUN_B on the same queries (the "
                    "recommended method per estimator; --methods all: every method), plus per-query "
                    "wins/losses/ties and the share of clusters (documents, sources) where both runs tie.",
        epilog="example: ragcov compare bm25.trec tfidf.trec --data-dir data/aneel",
    )
    p.add_argument("run_a", help="first run file (TREC, CSV/TSV, parquet or JSON)")
    p.add_argument("run_b", help="second run file (same formats)")
    add_common(p)
    p.add_argument("--intersect", action="store_true",
                   help="compare only the queries both runs cover (default: differing query sets are an error)")
    p.add_argument("--on-missing", default="error", choices=["error", "zero"],
                   help="task queries absent from both runs: error (default) or score 0 (counted per run)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # local: keeps `ragcov --help` from importing scipy.stats (the evaluator)
    from ragcov_data.eval import compare

    task = load_task(args)
    depth = metric_depth(args.metric)
    res = compare(read_run_arg(args.run_a, args, depth), read_run_arg(args.run_b, args, depth), task, args.metric,
                  tie_policy=args.tie_policy,
                  relevance_threshold=args.relevance_threshold, cluster=args.cluster, by=args.by,
                  methods=methods_arg(args.methods), level=args.level, seed=args.seed,
                  n_resamples=args.n_resamples, on_mismatch="intersect" if args.intersect else "error",
                  on_missing=args.on_missing)
    # default: one row per estimator (its recommended method); --methods all / a list: every computed row
    print(res.summary("recommended" if args.methods is None else "all"))
    if args.json_out:
        res.to_json(args.json_out)
        print(f"wrote {args.json_out}")
    return 0
