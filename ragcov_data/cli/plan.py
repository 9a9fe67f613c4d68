"""``ragcov plan``: documents needed for a target interval half-width, and the method to trust at a K."""
from __future__ import annotations

import argparse
import warnings

from ragcov_data.cli._common import read_population, str_list


def add_parser(sub) -> None:
    p = sub.add_parser(
        "plan",
        help="documents K needed for a target half-width; with --k, the interval method to trust at that K",
        description=(
            "From a pilot or a population (per-query outcomes: query-id, doc_id, value; per-document counts: "
            "doc_id, n, hits; or the JSON of `ragcov eval --json`), compute the number of documents K needed for a target interval half-width for the "
            "micro and macro averages (design effect / between-document variance), confirmed by simulation. "
            "With --k, also run the coverage study at that K and recommend the method whose verified coverage is "
            "closest to nominal without under-covering."
        ),
        epilog="example: ragcov plan --twin --halfwidth 0.05 --k 20",
    )
    p.add_argument("population", nargs="?",
                   help="pilot/population table (.parquet, .csv, .tsv, .jsonl) or an `eval --json` file (.json)")
    p.add_argument("--twin", action="store_true", help="use the simulated ANEEL-TAESA population")
    p.add_argument("--halfwidth", type=float, default=0.05, help="target half-width (default: 0.05 = ±5 points)")
    p.add_argument("--k", type=int, default=None, help="also recommend a method for samples of K documents")
    p.add_argument("--estimators", type=str_list, default=["micro", "macro"], metavar="E[,E...]",
                   help="micro and/or macro (default: both)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--reps", type=int, default=1000, help="replicates of the confirming simulation (default: 1000)")
    p.add_argument("--n-resamples", type=int, default=999,
                   help="bootstrap resamples of the simulations (default: 999; at least 2/(1-level)-1)")
    p.add_argument("--no-confirm", action="store_true", help="skip the confirming simulation")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ragcov_data.eval.planner import plan, recommend

    pop = read_population(args.population, args.twin, args.seed)
    res = plan(pop, args.halfwidth, level=args.level, estimators=args.estimators, confirm=not args.no_confirm,
               seed=args.seed, reps=args.reps, n_resamples=args.n_resamples)
    print(res)
    if args.k is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the repr states the warning plainly
            rec = recommend(pop, args.k, level=args.level, reps=args.reps, seed=args.seed,
                            estimators=args.estimators, n_resamples=args.n_resamples,
                            show_progress=not args.no_progress)
        print(rec)
        for est, c in rec.choices.items():
            print(f"  {est}: {c['reason']}")
    return 0
