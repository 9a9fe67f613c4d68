"""The task-source options every verb accepts, mapped onto :func:`ragcov_data.tasks.sources.resolve_task`.

    --dataset NAME            a registered benchmark, built from --data-dir (or $RAGCOV_DATA_DIR)
    --data-dir DIR            the source data of --dataset, or a task folder written by `ragcov build --out`
                              (recognised by its manifest.json), or a folder of queries/qrels tables
    --data-files PATH...      a bring-your-own acervo, chunked with --chunk-words/--query-words
                              (or --chunking dispositivo [--min-words N] [--max-words N])
    --task DIR                a task folder written by `ragcov build --out`, said explicitly

The resolution (which source wins, what conflicts, how a task folder is verified) is the library's
:func:`ragcov_data.tasks.sources.resolve_task`; this module only declares the options and passes them on.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ragcov_data.tasks import sources
from ragcov_data.tasks.sources import DEFAULT_DATASET, TaskSource, _chunking, _sample, read_table, sample_line

__all__ = ["add_task_source", "add_sample_options", "load_task_source", "sample_kwargs", "chunking_kwargs",
           "task_folder", "sample_line", "read_table", "TaskSource", "DEFAULT_DATASET"]


def add_task_source(p: argparse.ArgumentParser, *, cache: bool = True, table_columns: bool = True) -> None:
    """Add ``--dataset``, ``--data-dir``, ``--data-files``, ``--task`` and the chunking options to ``p``."""
    g = p.add_argument_group("task source (one of)")
    g.add_argument("--dataset", default=None,
                   help=f"registered dataset (default: {DEFAULT_DATASET}; also juristcu)")
    g.add_argument("--data-dir", metavar="DIR",
                   help="source data of --dataset (default: $RAGCOV_DATA_DIR), or a task folder written by "
                        "`ragcov build --out`, or a folder of queries/qrels tables (.parquet/.jsonl/.csv/.tsv)")
    g.add_argument("--data-files", nargs="+", metavar="PATH",
                   help="bring-your-own acervo: JSONL, CSV, parquet files or folders of .txt/.md/.html, read in order")
    g.add_argument("--task", metavar="DIR", help="task folder written by `ragcov build --out`")
    g.add_argument("--chunk-words", type=int, default=None,
                   help="aneel_taesa / --data-files: words a chunk (default: 100)")
    g.add_argument("--query-words", type=int, default=None,
                   help="aneel_taesa / --data-files: words a query (default: 20)")
    g.add_argument("--chunking", choices=("words", "dispositivo"), default=None,
                   help="aneel_taesa / --data-files: 'words' (windows of --chunk-words, the default) or "
                        "'dispositivo' (cut at the act's artigos, parágrafos, incisos...; documents with no "
                        "artigo keep --chunk-words windows)")
    g.add_argument("--min-words", type=int, default=None,
                   help="--chunking dispositivo: a unit shorter than this joins the next (default: --query-words)")
    g.add_argument("--max-words", type=int, default=None,
                   help="--chunking dispositivo: a unit longer than this is split (default: 400)")
    g.add_argument("--keep-superseded", action="store_true", default=None,
                   help="--data-files .html/.md/.txt: keep superseded (struck, revoked) wording in the index, "
                        "marked by the corpus column in_force (default: taken out)")
    if table_columns:
        g.add_argument("--id-column", default="doc_id", help="--data-files tables: id column (default: doc_id)")
        g.add_argument("--text-column", default="text", help="--data-files tables: text column (default: text)")
    if cache:
        g.add_argument("--cache-dir", help="datasets cache folder for --dataset")


def add_sample_options(p: argparse.ArgumentParser) -> None:
    """``--sample-docs K --seed S [--strata COL]``: queries from K documents, the index over all (build, run)."""
    g = p.add_argument_group("document sample (queries of K documents drawn without replacement; the index "
                             "keeps every document; `ragcov eval` then applies the finite-population correction)")
    g.add_argument("--sample-docs", type=int, default=None, metavar="K",
                   help="documents whose chunks become queries (e.g. the K that `ragcov plan` prints)")
    g.add_argument("--seed", type=int, default=None, metavar="S", help="seed of the document draw (default: 0)")
    g.add_argument("--strata", default=None, metavar="COL",
                   help="draw within strata of this document column (e.g. doc_type): proportional quotas rounded at "
                        "random from the seed, so every stratum can be drawn and every document has probability K/N")


def _sample_args(args: argparse.Namespace) -> dict[str, Any]:
    """``sample_docs``/``seed``/``strata`` of a verb with the sample options ({} for a verb without them:
    its ``--seed``/``--strata`` are its own, e.g. the bootstrap seed of ``ragcov eval``)."""
    if not hasattr(args, "sample_docs"):
        return {}
    return {"sample_docs": args.sample_docs, "seed": args.seed, "strata": args.strata}


def sample_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``sample_docs``/``sample_seed``/``sample_strata`` for build_task / load_dataset ({} without a sample)."""
    given = _sample_args(args)
    return _sample(given["sample_docs"], given["seed"], given["strata"]) if given else {}


def chunking_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``chunking``/``min_words``/``max_words`` for build_task / load_dataset ({} for word windows)."""
    return _chunking(getattr(args, "chunking", None), getattr(args, "min_words", None),
                     getattr(args, "max_words", None), bool(getattr(args, "keep_superseded", None)))


def _chunking_given(args: argparse.Namespace) -> dict[str, Any]:
    return {"--chunking": getattr(args, "chunking", None), "--min-words": getattr(args, "min_words", None),
            "--max-words": getattr(args, "max_words", None)}


def task_folder(args: argparse.Namespace) -> Path | None:
    """The task folder named by ``--task``, or by ``--data-dir`` when it holds a task manifest."""
    return sources.task_folder(getattr(args, "data_dir", None), getattr(args, "task", None))


def source_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The task-source options as :func:`ragcov_data.tasks.sources.resolve_task` keywords."""
    return dict(dataset=args.dataset, data_dir=args.data_dir, data_files=getattr(args, "data_files", None),
                task=getattr(args, "task", None), chunk_words=args.chunk_words, query_words=args.query_words,
                chunking=getattr(args, "chunking", None), min_words=getattr(args, "min_words", None),
                max_words=getattr(args, "max_words", None),
                keep_superseded=bool(getattr(args, "keep_superseded", None)),
                id_column=getattr(args, "id_column", "doc_id"),
                text_column=getattr(args, "text_column", "text"), cache_dir=getattr(args, "cache_dir", None),
                **_sample_args(args))


def load_task_source(args: argparse.Namespace, *, show_progress: bool = False) -> TaskSource:
    """Load the task the options name: one call of :func:`ragcov_data.tasks.sources.resolve_task`."""
    return sources.resolve_task(**source_kwargs(args), show_progress=show_progress)
