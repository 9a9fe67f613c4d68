"""``ragcov eval``: score a run with document-level intervals."""
from __future__ import annotations

import argparse

from ragcov_data.cli._evalcommon import add_common, load_task, methods_arg


def add_parser(sub) -> None:
    p = sub.add_parser(
        "eval",
        help="score a run; estimates and intervals clustered by document",
        description="Score RUN (TREC or parquet run file) on a task and print micro/macro estimates by every "
                    "interval method (naive methods marked) and the design diagnostics.",
        epilog="example: ragcov eval bm25.trec --data-dir data/aneel --metric hit@1 --json report.json",
    )
    p.add_argument("run", help="run file: TREC 'qid Q0 docid rank score tag' lines or parquet")
    add_common(p)
    p.add_argument("--on-missing", default="error", choices=["error", "zero"],
                   help="task queries absent from the run: error (default) or score 0")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ragcov_data.eval import evaluate

    task = load_task(args)
    rep = evaluate(args.run, task, args.metric, tie_policy=args.tie_policy,
                   relevance_threshold=args.relevance_threshold, cluster=args.cluster, by=args.by,
                   methods=methods_arg(args.methods), level=args.level, seed=args.seed,
                   n_resamples=args.n_resamples, on_missing=args.on_missing)
    print(rep.summary())
    if args.json_out:
        rep.to_json(args.json_out)
        print(f"wrote {args.json_out}")
    return 0
