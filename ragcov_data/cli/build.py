"""``ragcov build``: build the chunked self-retrieval task from an acervo and print its summary.

    ragcov build --data-dir ../shared/data
    ragcov build --data-files acervo.jsonl more/ --chunk-words 400 --out task/ --json
    ragcov build --dataset juristcu --data-dir ../shared/data
    ragcov build --task task/            # describe (and verify) a folder written by --out
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from ragcov_data.tasks import sources
from ragcov_data.tasks.load import load_dataset
from ragcov_data.cli._task_options import (DEFAULT_DATASET, _chunking_given, add_sample_options, add_task_source,
                                   sample_kwargs, sample_line, source_kwargs, task_folder)
from ragcov_data.errors import RagcovError
from ragcov_data.tasks.record import Task, check_task_out, manifest_of


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "build",
        help="build the chunked self-retrieval task from an acervo and print its summary",
        description="Build the chunked self-retrieval task (corpus, queries, qrels) from a document collection "
                    "and print what the study reports about it. Sources: --data-files (JSONL, CSV, parquet, or "
                    "folders of .txt/.md/.html), else aneel/aneel_fulltext.jsonl in --data-dir or "
                    "$RAGCOV_DATA_DIR. Given a task folder (--task, or a --data-dir holding the manifest.json "
                    "that --out writes), verify its files and print its summary.",
    )
    add_task_source(p, cache=False)
    add_sample_options(p)
    p.add_argument("--config", help="builder config of --dataset other than aneel_taesa (juristcu: enunciado, "
                                    "excerto, both)")
    p.add_argument("--out", metavar="DIR",
                   help="write corpus/queries/qrels parquet and manifest.json (with their sha256) here; the folder "
                        "is replaced whole once the new one is complete")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)
    return p


def _build_registered(args: argparse.Namespace) -> int:
    """Any other registered benchmark: load it through its builder and print its manifest counts."""
    ds = load_dataset(args.dataset, args.config, data_dir=args.data_dir, show_progress=False)
    manifest = manifest_of(ds)
    summary = {"dataset": args.dataset, "config": manifest.get("config", {}).get("name"),
               "rows": {split: ds[split].num_rows for split in ds}, "counts": manifest.get("counts", {})}
    if manifest.get("corpus_note"):
        summary["note"] = manifest["corpus_note"]
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2, default=str))
    else:
        print(f"{args.dataset} (config {summary['config']})")
        for split, n in summary["rows"].items():
            print(f"  {split:<8} {n:>9,}")
        for key, value in summary["counts"].items():
            print(f"  {key}: {value}")
        if "note" in summary:
            print(f"  note: {summary['note']}")
    if args.out:
        paths = Task.from_dataset_dict(ds).to_parquet(args.out)  # checked writable before the build
        if not args.json:
            print(f"\nwrote {', '.join(p.name for p in paths.values())} to {Path(args.out)}")
    return 0


_UNIT_COUNTS = ("documents_structured", "documents_fallback", "chunks_continued", "chunks_fallback")


def _units_line(manifest: dict) -> str | None:
    """What chunking="dispositivo" did (None for word windows)."""
    c = (manifest or {}).get("counts", {})
    if "documents_structured" not in c:
        return None
    return (f"  dispositivos: {c['documents_structured']} documents cut at their artigos, {c['documents_fallback']} "
            f"with no artigo in word windows; {c['chunks_continued']} chunks continue a longer unit, "
            f"{c['chunks_fallback']} are word windows")


def run(args: argparse.Namespace) -> int:
    if args.out:
        check_task_out(args.out)  # before the work: an unwritable or unsafe folder fails at once
    if task_folder(args) is not None and args.config is not None:
        raise RagcovError(f"--config does not apply to the task folder {str(task_folder(args))!r}; drop it (its "
                          "task is already built; its settings are in its manifest.json).")
    if task_folder(args) is None and (args.dataset or DEFAULT_DATASET) != DEFAULT_DATASET:
        sample = sample_kwargs(args)
        chunk_opts = [o for o, v in _chunking_given(args).items() if v is not None]
        if args.data_files or args.chunk_words is not None or args.query_words is not None or sample or chunk_opts:
            opt = ("--data-files" if args.data_files else "--chunk-words" if args.chunk_words is not None
                   else "--query-words" if args.query_words is not None else "--sample-docs" if sample
                   else chunk_opts[0])
            raise RagcovError(f"{opt} applies to the chunked self-retrieval task ({DEFAULT_DATASET}), not to "
                              f"--dataset {args.dataset}; drop it.")
        return _build_registered(args)
    with warnings.catch_warnings(record=True) as caught:  # skipped files, huge qrels: one plain line each
        warnings.simplefilter("always")
        source = sources.resolve_task(**source_kwargs(args), as_task=True)
    for w in caught:
        print(f"ragcov build: warning: {w.message}", file=sys.stderr)
    if source.kind == "tables":
        raise RagcovError(f"--data-dir {args.data_dir!r} holds queries/qrels tables, which are already a task; "
                          "`ragcov build` builds one from an acervo: pass --data-files ACERVO, or a data folder.")
    task = source.task
    _print_summary(task, as_json=args.json)
    if args.out:
        paths = task.to_parquet(args.out)
        if not args.json:
            print(f"\nwrote {', '.join(p.name for p in paths.values())} to {Path(args.out)}")
    return 0


def _print_summary(task: Any, *, as_json: bool) -> None:
    """The task's summary (:meth:`Task.describe`) as text, with its sample and units lines, or as JSON."""
    summary = task.describe()
    if as_json:
        out = summary.to_dict()
        if task.manifest.get("sample"):
            out["sample"] = {k: v for k, v in task.manifest["sample"].items() if k != "documents"}
        if _units_line(task.manifest):
            out["units"] = {k: task.manifest["counts"][k] for k in _UNIT_COUNTS}
        print(json.dumps(out, ensure_ascii=False, indent=2, default=str))
        return
    print(summary)
    if sample_line(task.manifest):
        print(sample_line(task.manifest))
    if _units_line(task.manifest):
        print(_units_line(task.manifest))
