"""``ragcov benchmark``: the main job, from the default acervo to a report."""
from __future__ import annotations

import argparse
import sys

from ragcov_data.execution import engine
from ragcov_data._atomic import atomic_write
from ragcov_data.baselines.registry import RETRIEVER_NAMES
from ragcov_data.cli._common import int_list, log_line, str_list
from ragcov_data.cli.run import add_engine_options, engine_kwargs
from ragcov_data.errors import RagcovError
from ragcov_data.tasks.paths import check_writable
from ragcov_data.jobs.benchmark import DEFAULT_RETRIEVERS, run_benchmark
from ragcov_data.reporting import write_report
from ragcov_data.tasks.record import is_task_folder

#: Measured wall time of the default set (stated in --help).
DEFAULT_TIMING = ("Wall time on the shared data and 2 cores: see the README (cold embedding cache; the encoders take "
                  "most of it; a second run reads them from the cache).")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "benchmark",
        help="build the tasks, run the baselines, evaluate, compare, study coverage, write a report",
        description=(
            "The main job. Builds the self-retrieval task from the default acervo (aneel/aneel_fulltext.jsonl in "
            "the data folder), runs the default baselines (the lexical ones and, when the dense extra is installed, "
            "the fast packaged encoders; --retrievers names any of the registry, or all), evaluates each on hit@1 "
            "with every interval method, ranks them on a leaderboard whose pairwise "
            "comparisons are family-wise (simultaneous intervals and their own adjusted p), runs BM25 on the dispositivo "
            "chunking too and compares the two chunkings paired by document, flags where BM25's hit@1 misses go, "
            "runs the coverage study on BM25's own per-query outcomes as the census, adds the JurisTCU section "
            "when DIR/juristcu exists and the real-questions section (IRPF: every baseline on recall@10 of the cited "
            "provisions, and chunkings x bm25/tfidf as one family) when DIR/irpf exists, and writes report.html "
            "(self-contained), summary.md, results.json and "
            "misses.csv (one row per miss)."
        ),
        epilog="example: ragcov benchmark --data-dir ../shared/data --out reports/ --quick",
    )
    p.add_argument("--data-dir", help="data folder (default: $RAGCOV_DATA_DIR)")
    p.add_argument("--out", default="reports", help="output folder (default: reports/)")
    p.add_argument("--chunk-words", type=int, default=100, help="words a chunk (default: 100)")
    p.add_argument("--retrievers", type=str_list, default=None, metavar="R[,R...]",
                   help="baselines to run, any of " + ", ".join(RETRIEVER_NAMES) + "; or 'all' (every installed "
                        "one). Default: the installed ones of " + ",".join(DEFAULT_RETRIEVERS) + " (dense = "
                        "use-multilingual): the lexical baselines and the fast packaged encoders. "
                        + DEFAULT_TIMING + " e5-small, minilm and the hybrids (hybrid-bm25pt-e5, "
                        "hybrid-bm25pt-use) are slower and run only when named or with 'all'.")
    p.add_argument("--reps", type=int, default=None, help="coverage replicates per K (default: 2000; --quick: 300)")
    p.add_argument("--k", type=int_list, default=None, metavar="K[,K...]",
                   help="documents per coverage sample (default: 5,10,20,40; --quick: 5,10,20)")
    p.add_argument("--n-resamples", type=int, default=None,
                   help="bootstrap resamples (default: 999; --quick: 199)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--quick", action="store_true", help="small settings for a fast look (fewer replicates, K and resamples)")
    p.add_argument("--no-progress", action="store_true",
                   help="hide progress bars (they show only on a terminal, on stderr, in any case)")
    p.add_argument("--latex", dest="latex_out", default=None, metavar="OUT",
                   help="also write the summary tables (every task's systems) as LaTeX booktabs tables")
    add_engine_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_writable(args.out, folder=True)  # before minutes of work, not after
    if args.latex_out:
        check_writable(args.latex_out)
    eng = engine_kwargs(args)
    if args.data_dir and is_task_folder(args.data_dir):
        raise RagcovError(f"--data-dir {args.data_dir!r} is a task folder; the benchmark builds its tasks from the "
                          "data folder (aneel/, juristcu/). Run a retriever on the folder with `ragcov run --task "
                          "DIR` and score it with `ragcov eval --task DIR`.")
    reps, ks, nres = _settings(args)
    try:
        results = run_benchmark(args.data_dir, chunk_words=args.chunk_words, retrievers=args.retrievers, reps=reps,
                                ks=ks, n_resamples=nres, seed=args.seed,
                                show_progress=not args.no_progress and sys.stderr.isatty(),
                                log=lambda m: print("\n".join(log_line(m)), file=sys.stderr),
                                engine=eng if eng["engine"] == "ray" else None)
    finally:
        engine.shutdown()  # a local cluster started for this job
    paths = write_report(results, args.out)
    print(_summary(results))
    print(f"report:  {paths['html']}\nsummary: {paths['markdown']}\nresults: {paths['json']}")
    if "misses" in paths:
        print(f"misses:  {paths['misses']}")
    if args.latex_out:
        _write_latex(results, args.latex_out)
    return 0


def _settings(args: argparse.Namespace) -> tuple[int, list[int], int]:
    """Coverage replicates, sample sizes K and bootstrap resamples: as given, else the --quick or full defaults."""
    reps = args.reps if args.reps is not None else (300 if args.quick else 2000)
    ks = args.k if args.k is not None else ([5, 10, 20] if args.quick else [5, 10, 20, 40])
    nres = args.n_resamples if args.n_resamples is not None else (199 if args.quick else 999)
    return reps, ks, nres


def _write_latex(results: dict, path: str) -> None:
    """The LaTeX summary table (:func:`ragcov_data.reporting.console.latex_summary`), written atomically."""
    # local: keeps `ragcov --help` from importing matplotlib and scipy.stats
    from ragcov_data.reporting.console import latex_summary

    atomic_write(path, latex_summary(results))
    print(f"latex:   {path}")


def _summary(results) -> str:
    """One compact table and one short sentence per task (:func:`ragcov_data.reporting.console.summary`)."""
    # local: keeps `ragcov --help` from importing matplotlib and scipy.stats
    from ragcov_data.reporting.console import summary

    return summary(results)
