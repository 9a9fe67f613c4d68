"""``ragcov build``: build the chunked self-retrieval task from an acervo and print its summary.

    ragcov build --data-dir ../shared/data
    ragcov build --data-files acervo.jsonl more/ --chunk-words 400 --out task/ --json
    ragcov build --dataset juristcu --data-dir ../shared/data
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "build",
        help="build the chunked self-retrieval task from an acervo and print its summary",
        description="Build the chunked self-retrieval task (corpus, queries, qrels) from a document collection "
                    "and print what the study reports about it. Sources: --data-files (JSONL, CSV, parquet, or "
                    "folders of .txt/.md/.html), else aneel/aneel_fulltext.jsonl in --data-dir or "
                    "$RAGCOV_DATA_DIR.",
    )
    p.add_argument("--dataset", default="aneel_taesa",
                   help="registered benchmark (default: aneel_taesa; also juristcu, built from DATA_DIR/juristcu)")
    p.add_argument("--config", help="builder config of --dataset other than aneel_taesa (juristcu: enunciado, "
                                    "excerto, both)")
    p.add_argument("--data-dir", help="data folder laid out like the shared data folder (aneel/, juristcu/)")
    p.add_argument("--data-files", nargs="+", metavar="PATH", help="acervo files or folders, read in order")
    p.add_argument("--chunk-words", type=int, default=100, help="words a chunk (default: 100)")
    p.add_argument("--query-words", type=int, default=20, help="words a query (default: 20)")
    p.add_argument("--id-column", default="doc_id", help="id column of table sources (default: doc_id)")
    p.add_argument("--text-column", default="text", help="text column of table sources (default: text)")
    p.add_argument("--out", metavar="DIR", help="write corpus/queries/qrels parquet and manifest.json here")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)
    return p


def sources(data_dir: str | None, data_files: list[str] | None) -> list[str]:
    """The acervo to read: ``data_files``, else the ANEEL sample of the data folder."""
    if data_files:
        return list(data_files)
    from ragcov_data.paths import default_source

    return [str(default_source("aneel_fulltext", data_dir))]


def _build_registered(args: argparse.Namespace) -> int:
    """Any other registered benchmark: load it through its builder and print its manifest counts."""
    from ragcov_data.api import load_dataset
    from ragcov_data.task import Task, manifest_of

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
        paths = Task.from_dataset_dict(ds).to_parquet(args.out)
        if not args.json:
            print(f"\nwrote {', '.join(p.name for p in paths.values())} to {Path(args.out)}")
    return 0


def run(args: argparse.Namespace) -> int:
    from ragcov_data.task import build_task

    if args.dataset != "aneel_taesa":
        return _build_registered(args)

    task = build_task(sources(args.data_dir, args.data_files), chunk_words=args.chunk_words,
                      query_words=args.query_words, id_column=args.id_column, text_column=args.text_column)
    summary = task.describe()
    if args.json:
        print(json.dumps(summary.to_dict(), ensure_ascii=False, indent=2, default=str))
    else:
        print(summary)
    if args.out:
        paths = task.to_parquet(args.out)
        if not args.json:
            print(f"\nwrote {', '.join(p.name for p in paths.values())} to {Path(args.out)}")
    return 0
