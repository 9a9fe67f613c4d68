"""``ragcov plan``: documents needed for a target interval half-width, and the method to trust at a K;
with ``--difference``, documents needed to detect a paired difference among N systems, family-wise."""
from __future__ import annotations

import argparse
import warnings

import pandas as pd

from ragcov_data.cli._common import add_run_options, str_list
from ragcov_data.cli._evalcommon import load_task, read_population_arg, read_run_arg
from ragcov_data.cli._task_options import add_task_source
from ragcov_data.errors import RagcovError
from ragcov_data.tasks.paths import check_writable
from ragcov_data.ties import DEFAULT_TIE_POLICY, TIE_POLICIES, TIE_POLICY_ALIASES


def add_parser(sub) -> None:
    p = sub.add_parser(
        "plan",
        help="documents K needed for a target half-width; with --k, the interval method to trust at that K",
        description=(
            "From a pilot or a population (per-query outcomes: query-id, doc_id, value; per-document counts: "
            "doc_id, n, hits; or the JSON of `ragcov eval --json`), compute the number of documents K needed for a target interval half-width for the "
            "micro and macro averages (design effect / between-document variance), confirmed by simulation. "
            "With --k, also run the coverage study at that K and recommend the method whose verified coverage is "
            "closest to nominal without under-covering. "
            "With --difference D: the documents K needed to detect a paired difference D between two of --systems "
            "N systems with --power, every pair tested at (1 - level) / (N(N-1)/2) (Bonferroni, and Holm's first "
            "step), from the paired variance and design effect of a pilot — the JSON of `ragcov compare --json`, a "
            "table of query-id, cluster (or doc_id), diff, or two runs (--runs A B) on a task source — checked by "
            "re-sampling the pilot's documents with the differences shifted to mean D."
        ),
        epilog="example: ragcov plan --twin --halfwidth 0.05 --k 20; "
               "ragcov plan --difference 0.02 --systems 5 --runs bm25.trec tfidf.trec --data-dir data",
    )
    p.add_argument("population", nargs="?",
                   help="pilot/population table (.parquet, .csv, .tsv, .jsonl) or an `eval --json` file (.json); "
                        "with --difference: a `compare --json` file or a table of paired differences")
    p.add_argument("--twin", action="store_true", help="use the simulated ANEEL-TAESA population")
    p.add_argument("--halfwidth", type=float, default=None, help="target half-width (default: 0.05 = ±5 points)")
    p.add_argument("--k", type=int, default=None, help="also recommend a method for samples of K documents")
    p.add_argument("--estimators", type=str_list, default=["micro", "macro"], metavar="E[,E...]",
                   help="micro and/or macro (default: both)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--reps", type=int, default=None,
                   help="replicates of the confirming simulation (default: 1000; --difference: 2000)")
    p.add_argument("--n-resamples", type=int, default=999,
                   help="bootstrap resamples of the simulations (default: 999; at least 2/(1-level)-1)")
    p.add_argument("--no-confirm", action="store_true", help="skip the confirming simulation")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    _add_difference(p)
    p.set_defaults(func=run)


def _add_difference(p: argparse.ArgumentParser) -> None:
    """Options of the power plan (``--difference``) and its pilot of two runs on a task."""
    g = p.add_argument_group("power plan (--difference)")
    g.add_argument("--difference", type=float, default=None, metavar="D",
                   help="paired difference A - B to detect, in metric units (e.g. 0.02 = 2 points)")
    g.add_argument("--systems", type=int, default=2, metavar="N",
                   help="systems to be compared pairwise: N(N-1)/2 pairs share the family-wise level (default: 2)")
    g.add_argument("--power", type=float, default=0.8, help="target power (default: 0.8)")
    g.add_argument("--family", default="holm", choices=["holm", "bonferroni"],
                   help="adjustment the comparison will use; the plan is the same for both (default: holm)")
    g.add_argument("--runs", nargs=2, metavar=("RUN_A", "RUN_B"), default=None,
                   help="pilot from two run files scored on the task source below (instead of a pilot file)")
    g.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="also write the power plan as JSON")
    g.add_argument("--metric", default=None, help="with --runs: hit@k, ndcg@k, p@k, r@k, mrr@k (default: hit@1)")
    g.add_argument("--cluster", default=None,
                   help="with --runs: queries column of the sampled unit (default: source_key, else doc_id, else the "
                        "query)")
    g.add_argument("--tie-policy", default=None, choices=[*TIE_POLICIES, *TIE_POLICY_ALIASES],
                   help=f"with --runs: order of candidates with equal scores (default: {DEFAULT_TIE_POLICY})")
    add_run_options(g, note="with --runs: ")
    add_task_source(p)


#: Options of the half-width plan and of the power plan that the other one does not take.
_HALFWIDTH_ONLY = {"--halfwidth": "halfwidth", "--k": "k", "--twin": "twin"}
_TASK_SOURCE = {"--data-dir": "data_dir", "--dataset": "dataset", "--data-files": "data_files", "--task": "task",
                "--metric": "metric", "--cluster": "cluster", "--tie-policy": "tie_policy", "--columns": "columns",
                "--run-format": "run_format", "--order": "order", "--subset": "subset", "--split": "split"}


def run(args: argparse.Namespace) -> int:
    # local: keeps `ragcov --help` from importing scipy.stats (the evaluator)
    from ragcov_data.eval.planning.planner import plan, recommend

    if args.difference is not None:
        return _run_difference(args)
    for flag, dest in {"--runs": "runs", "--json": "json_out", **_TASK_SOURCE}.items():
        if getattr(args, dest, None) is not None:
            raise RagcovError(f"{flag} applies to the power plan; add --difference D (or drop {flag}).")
    pop = read_population_arg(args.population, args.twin, args.seed)
    res = plan(pop, 0.05 if args.halfwidth is None else args.halfwidth, level=args.level,
               estimators=args.estimators, confirm=not args.no_confirm, seed=args.seed,
               reps=1000 if args.reps is None else args.reps, n_resamples=args.n_resamples)
    print(res)
    if args.k is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the repr states the warning plainly
            rec = recommend(pop, args.k, level=args.level, reps=1000 if args.reps is None else args.reps,
                            seed=args.seed,
                            estimators=args.estimators, n_resamples=args.n_resamples,
                            show_progress=not args.no_progress)
        print(rec)
        for est, c in rec.choices.items():
            print(f"  {est}: {c['reason']}")
    return 0


def _run_difference(args: argparse.Namespace) -> int:
    """``--difference``: the power plan from a pilot file or two runs on a task source."""
    # local: keeps `ragcov --help` from importing scipy.stats (the evaluator)
    from ragcov_data.eval.planning.power import plan_difference

    for flag, dest in _HALFWIDTH_ONLY.items():
        if getattr(args, dest, None) not in (None, False):
            raise RagcovError(f"{flag} applies to the half-width plan, not to --difference; drop it.")
    if args.runs and args.population:
        raise RagcovError(f"give a pilot file ({args.population!r}) or --runs A B, not both.")
    if args.json_out:
        check_writable(args.json_out)
    kw = dict(n_systems=args.systems, power=args.power, level=args.level, family=args.family,
              estimators=args.estimators, simulate=not args.no_confirm,
              reps=2000 if args.reps is None else args.reps, seed=args.seed)
    if args.runs:
        task = load_task(argparse.Namespace(**{**vars(args), "json_out": None}))
        pilot = (read_run_arg(args.runs[0], args), read_run_arg(args.runs[1], args))
        res = plan_difference(pilot, args.difference, task=task, metric=args.metric, cluster=args.cluster,
                              tie_policy=args.tie_policy, **kw)
    else:
        given = [f for f, d in _TASK_SOURCE.items() if getattr(args, d, None)]
        if given:
            raise RagcovError(f"{given[0]} applies to --runs A B (scoring two runs on a task); a pilot file "
                              "already holds its differences. Drop it, or give --runs.")
        if args.population is None:
            raise RagcovError("--difference needs a pilot: the JSON of `ragcov compare --json`, a table of "
                              "query-id, cluster, diff, or --runs A B with a task source.")
        res = plan_difference(read_pilot(args.population), args.difference, **kw)
    print(res)
    if args.json_out:
        res.to_json(args.json_out)
        print(f"wrote {args.json_out}")
    return 0


def read_pilot(path: str) -> pd.DataFrame:
    """Paired differences of a pilot: :func:`ragcov_data.jobs.studies.read_pilot`."""
    # local: keeps `ragcov --help` from importing datasets and scipy.stats (the studies)
    from ragcov_data.jobs.studies import read_pilot as read

    return read(path)
