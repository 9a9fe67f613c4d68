"""``ragcov eval``: score a run with document-level intervals."""
from __future__ import annotations

import argparse

from ragcov_data.cli._evalcommon import (add_common, add_design, design_kwargs, load_task, methods_arg, metric_depth,
                                         read_run_arg)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "eval",
        help="score a run; estimates and intervals clustered by the sampled unit",
        description="Score RUN (any run file: TREC, CSV/TSV, parquet, JSON) on a task and print the estimates (micro/macro, or "
                    "one mean when every cluster holds one query) with the recommended interval method of each "
                    "(--methods all: every method, naive ones marked) and the design diagnostics. The unit is "
                    "--cluster, by default the task's own: source_key (JurisTCU), doc_id (self-retrieval), exam "
                    "(lgpd), topic (irpf), else the query.",
        epilog="example: ragcov eval bm25.trec --data-dir data/aneel --metric hit@1 --json report.json",
    )
    p.add_argument("run", help="run file: TREC, CSV/TSV with a header, parquet or JSON ({qid: {docid: score}}); "
                               ".gz/.bz2/.xz too")
    add_common(p)
    p.add_argument("--on-missing", default="error", choices=["error", "zero"],
                   help="task queries absent from the run: error (default) or score 0")
    add_design(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # local: keeps `ragcov --help` from importing scipy.stats (the evaluator)
    from ragcov_data.eval import evaluate

    design = design_kwargs(args)
    task = load_task(args)
    rep = evaluate(read_run_arg(args.run, args, metric_depth(args.metric)), task, args.metric, tie_policy=args.tie_policy,
                   relevance_threshold=args.relevance_threshold, cluster=args.cluster, by=args.by,
                   methods=methods_arg(args.methods), level=args.level, seed=args.seed,
                   n_resamples=args.n_resamples, on_missing=args.on_missing, **design)
    # default: one row per estimator (its recommended method); --methods all / a list: every computed row
    print(rep.summary("recommended" if args.methods is None else "all"))
    if args.json_out:
        rep.to_json(args.json_out)
        print(f"wrote {args.json_out}")
    return 0
