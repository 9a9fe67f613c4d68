"""``ragcov chunking``: word windows against dispositivos on the same acervo, compared paired by document.

    ragcov chunking --data-dir ../shared/data --retriever bm25 --json chunking.json
    ragcov chunking --data-files acervo.jsonl --chunk-words 200 --max-words 300
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ragcov_data.cli._task_options import add_task_source, source_kwargs
from ragcov_data.cli.chunking_cited import dispatch, extend_parser  # --dataset irpf / cited_questions
from ragcov_data.cli.run import RETRIEVERS, make_retriever
from ragcov_data.errors import RagcovError
from ragcov_data.tasks.paths import check_writable
from ragcov_data.tasks.sources import task_folder


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "chunking",
        help="compare word-window and dispositivo chunking of one acervo, paired by document",
        description="Build the self-retrieval task twice from the same acervo (--chunk-words windows, and "
                    "dispositivos: artigos, parágrafos, incisos; --min-words/--max-words), run the retriever on "
                    "each and compare them. The queries differ between chunkings, so the comparison pairs "
                    "documents: the per-document hit rate under each, the difference over the documents present "
                    "in both (macro: t over documents; micro: its own weights, document bootstrap), beside each "
                    "chunking's own estimates.",
        epilog="example: ragcov chunking --data-dir ../shared/data --retriever bm25 --json chunking.json",
    )
    p.add_argument("--retriever", default=None, choices=RETRIEVERS,
                   help="baseline retriever (default: bm25-pt on --dataset irpf / cited_questions, else bm25)")
    p.add_argument("--model", help="dense only: sentence-transformers name or path, or a packaged encoder")
    p.add_argument("--variant", default="okapi", help="bm25 only: okapi, robertson, lucene, bm25l, bm25+")
    add_task_source(p)
    extend_parser(p)
    p.add_argument("--metric", default="hit@1", help="metric of both tasks (default: hit@1)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--n-resamples", type=int, default=5000, help="document bootstrap replicates (default: 5000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="also write the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run)
    return p


def _tasks(args: argparse.Namespace) -> dict[str, Any]:
    """The two tasks, built from the same acervo: word windows, then dispositivos."""
    built = _built_task(args.data_dir)
    if built:  # the user gave a built task, not --chunking: say that, not "drop --chunking"
        raise RagcovError(f"--data-dir {args.data_dir!r} holds {built}, whose chunks are already cut; `ragcov "
                          "chunking` cuts one acervo twice (word windows and dispositivos): give the acervo with "
                          "--data-files ACERVO, or the aneel_taesa source data with --data-dir.")
    if getattr(args, "chunking", None) is not None:
        raise RagcovError("`ragcov chunking` builds both chunkings itself; drop --chunking.")
    if getattr(args, "task", None) or (args.dataset not in (None, "aneel_taesa")):
        raise RagcovError("`ragcov chunking` builds tasks from an acervo: give --data-dir (the aneel_taesa source "
                          "data) or --data-files, not a task folder or another dataset.")
    # local: keeps `ragcov --help` from importing datasets and scipy.stats (the studies)
    from ragcov_data.jobs.studies import acervo_chunkings

    return acervo_chunkings(source_kwargs(args), show_progress=not args.quiet)


def _built_task(data_dir: Any) -> str | None:
    """What a --data-dir holding an already built task is ("a task folder", "queries/qrels tables"), else None."""
    from pathlib import Path

    if not data_dir or not Path(data_dir).is_dir():
        return None
    if task_folder(data_dir) is not None:
        return "a task folder (manifest.json)"
    d = Path(data_dir)
    has = lambda split: any((d / f"{split}{s}").is_file() for s in (".parquet", ".jsonl", ".csv", ".tsv"))  # noqa: E731
    return "queries/qrels tables" if has("queries") and has("qrels") else None


def run(args: argparse.Namespace) -> int:
    # local: keeps `ragcov --help` from importing datasets and scipy.stats (the studies)
    from ragcov_data.jobs.studies import chunking_comparison

    code = dispatch(args)  # cited questions (--dataset irpf / cited_questions): their own comparison
    if code is not None:
        return code
    if args.json_out:
        check_writable(args.json_out)
    res, _, _ = chunking_comparison(_tasks(args), lambda: make_retriever(args), metric=args.metric, level=args.level,
                                    seed=args.seed, n_resamples=args.n_resamples)
    print(res.summary(), file=sys.stdout)
    if args.json_out:
        res.to_json(args.json_out)
        print(f"wrote {args.json_out}")
    return 0
