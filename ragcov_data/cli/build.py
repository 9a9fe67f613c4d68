"""``ragcov build``: build the chunked self-retrieval task from an acervo and print its summary.

    ragcov build --data-dir ../shared/data
    ragcov build --data-files acervo.jsonl more/ --chunk-words 400 --out task/ --json
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


def run(args: argparse.Namespace) -> int:
    from ragcov_data.task import build_task

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
