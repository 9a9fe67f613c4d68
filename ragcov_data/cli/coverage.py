"""``ragcov coverage``: Monte-Carlo coverage of every interval method on a known population."""
from __future__ import annotations

import argparse

from ragcov_data.cli._common import int_list, str_list
from ragcov_data.cli._evalcommon import read_population_arg


def add_parser(sub) -> None:
    p = sub.add_parser(
        "coverage",
        help="coverage of every interval method when K documents are sampled from a known population",
        description=(
            "Repeat what an evaluator does (sample K documents, build an interval) REPS times on a population "
            "whose value is known, and count how often each method's interval contains it. The population is "
            "a census run's per-query outcomes (columns query-id, doc_id, value [, doc_type]), per-document "
            "counts (doc_id, n, hits [, doc_type]), the JSON of `ragcov eval --json` (its per-query values, "
            "sampled by the evaluation's cluster), or the built-in ANEEL-TAESA twin (--twin)."
        ),
        epilog="example: ragcov coverage --twin --k 5,10,20 --reps 2000 --out coverage.csv; "
               "ragcov coverage report.json --k 10,20 --fpc (report.json written by `ragcov eval --json`)",
    )
    p.add_argument("population", nargs="?",
                   help="population table (.parquet, .csv, .tsv, .jsonl) or an `eval --json` file (.json)")
    p.add_argument("--twin", action="store_true", help="use the simulated ANEEL-TAESA population instead of a file")
    p.add_argument("--k", type=int_list, default=[20], metavar="K[,K...]",
                   help="documents per sample; several sizes comma-separated (default: 20)")
    p.add_argument("--reps", type=int, default=5000, help="replicates per K (default: 5000)")
    p.add_argument("--methods", type=str_list, default=None, metavar="M[,M...]",
                   help="interval methods (default: every applicable one)")
    p.add_argument("--estimators", type=str_list, default=["micro", "macro"], metavar="E[,E...]",
                   help="micro and/or macro (default: both)")
    p.add_argument("--design", choices=["srs", "two-stage"], default="srs",
                   help="srs: K documents at random; two-stage: --n-types types, then K/n-types documents each")
    p.add_argument("--n-types", type=int, default=6, help="types drawn first in the two-stage design (default: 6)")
    p.add_argument("--level", type=float, default=0.95, help="nominal level (default: 0.95)")
    p.add_argument("--n-resamples", type=int, default=999, help="bootstrap resamples (default: 999)")
    p.add_argument("--fpc", action="store_true",
                   help="srs: apply the finite-population correction 1 - K/D to the analytic document-level "
                        "methods, as an evaluation told its population size would (two-stage always applies it)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--out", help="also write the table to this .csv or .json file")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # local: keeps `ragcov --help` from importing scipy.stats (the evaluator)
    from ragcov_data.eval.planning.coverage import coverage_study

    pop = read_population_arg(args.population, args.twin, args.seed)
    table = coverage_study(pop, k=args.k, reps=args.reps, methods=args.methods, estimators=args.estimators,
                           design=args.design, level=args.level, seed=args.seed, n_resamples=args.n_resamples,
                           show_progress=not args.no_progress, n_types=args.n_types, fpc=args.fpc)
    truth = ", ".join(f"{k} {v:.4f}" for k, v in table.attrs["truth"].items())
    fpc = ", finite-population correction" if table.attrs["fpc"] else ""
    print(f"population: {table.attrs['n_docs']} documents; truth: {truth}; {args.reps} replicates, "
          f"design {args.design}{fpc}")
    show = table.assign(coverage=(100 * table["coverage"]).round(1), mc_margin=(100 * table["mc_margin"]).round(1))
    show = show.rename(columns={"coverage": "coverage_%", "mc_margin": "±mc_%"})
    print(show.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    if args.out:
        from ragcov_data._atomic import atomic_write

        text = table.to_json(orient="records", indent=1) if args.out.endswith(".json") else table.to_csv(index=False)
        atomic_write(args.out, text)  # as every output: whole or not at all, never over a device or a pipe
        print(f"wrote {args.out}")
    return 0
