"""The task sources every verb accepts, in one place.

    --dataset NAME            a registered benchmark, built from --data-dir (or $RAGCOV_DATA_DIR)
    --data-dir DIR            the source data of --dataset, or a task folder written by `ragcov build --out`
                              (recognised by its manifest.json), or a folder of queries/qrels tables
    --data-files PATH...      a bring-your-own acervo, chunked with --chunk-words/--query-words
    --task DIR                a task folder written by `ragcov build --out`, said explicitly

A task folder is read with :func:`ragcov_data.task.read_task`, which verifies every file against the
sha256 in its manifest.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ragcov_data.errors import InputFileError, RagcovError

DEFAULT_DATASET = "aneel_taesa"
_SUFFIXES = (".parquet", ".jsonl", ".csv", ".tsv")


@dataclass
class TaskSource:
    """A loaded task and where it came from.

    Attributes
    ----------
    task : Task, datasets.DatasetDict or dict of DataFrames
        Splits ``corpus`` (absent for a tables folder without one), ``queries``, ``qrels``.
    kind : str
        ``"task"`` (task folder), ``"data_files"``, ``"tables"`` or ``"dataset"``.
    attrs : dict
        ``dataset`` and, for chunked tasks, ``chunk_words`` (recorded in run files).
    """

    task: Any
    kind: str
    attrs: dict[str, Any] = field(default_factory=dict)


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
    if table_columns:
        g.add_argument("--id-column", default="doc_id", help="--data-files tables: id column (default: doc_id)")
        g.add_argument("--text-column", default="text", help="--data-files tables: text column (default: text)")
    if cache:
        g.add_argument("--cache-dir", help="datasets cache folder for --dataset")


def task_folder(args: argparse.Namespace) -> Path | None:
    """The task folder named by ``--task``, or by ``--data-dir`` when it holds a task manifest."""
    from ragcov_data.task import is_task_folder

    if getattr(args, "task", None):
        return Path(args.task)
    if args.data_dir and is_task_folder(args.data_dir):
        return Path(args.data_dir)
    return None


def _refuse_with(what: str, options: dict[str, Any], hint: str = "") -> None:
    """One-line error for the first of ``options`` that was given but does not apply to ``what``."""
    given = [name for name, value in options.items() if value is not None]
    if given:
        raise RagcovError(f"{given[0]} does not apply to {what}; drop it{hint}.")


def load_task_source(args: argparse.Namespace, *, show_progress: bool = False) -> TaskSource:
    """Load the task the options name (see the module docstring); every conflict is a one-line error."""
    folder = task_folder(args)
    data_files = getattr(args, "data_files", None)
    if getattr(args, "task", None) and args.data_dir:
        raise RagcovError("give --task or --data-dir, not both (--data-dir also accepts a task folder).")
    if folder is not None:
        _refuse_with(f"the task folder {str(folder)!r}",
                     {"--data-files": data_files, "--dataset": args.dataset, "--chunk-words": args.chunk_words,
                      "--query-words": args.query_words},
                     " (the folder's task is already built; its settings are in its manifest.json)")
        from ragcov_data.task import read_task

        task = read_task(folder)
        return TaskSource(task, "task", _attrs(task.manifest, source=str(folder)))
    if data_files:
        if args.data_dir:
            raise RagcovError("give --data-files or --data-dir, not both: --data-files is the whole acervo.")
        if args.dataset not in (None, DEFAULT_DATASET):
            raise RagcovError(f"--data-files builds the chunked self-retrieval task ({DEFAULT_DATASET}); "
                              f"--dataset {args.dataset} reads its own files from --data-dir. Drop one of them.")
        from ragcov_data.task import build_task

        task = build_task(list(data_files), chunk_words=args.chunk_words or 100,
                          query_words=args.query_words or 20, id_column=getattr(args, "id_column", "doc_id"),
                          text_column=getattr(args, "text_column", "text"))
        return TaskSource(task, "data_files", _attrs(task.manifest))
    if args.data_dir:
        tables = _tables(Path(args.data_dir))
        if tables is not None:
            _refuse_with(f"the queries/qrels tables in {args.data_dir!r}",
                         {"--dataset": args.dataset, "--chunk-words": args.chunk_words,
                          "--query-words": args.query_words})
            return TaskSource(tables, "tables", {})
    return _registered(args, show_progress)


def _registered(args: argparse.Namespace, show_progress: bool) -> TaskSource:
    from ragcov_data import load_dataset
    from ragcov_data.task import manifest_of

    name = args.dataset or DEFAULT_DATASET
    config: dict[str, Any] = {}
    if args.data_dir:
        config["data_dir"] = args.data_dir
    if name == DEFAULT_DATASET:
        config["chunk_words"] = args.chunk_words or 100
        if args.query_words is not None:
            config["query_words"] = args.query_words
    else:
        _refuse_with(f"--dataset {name}", {"--chunk-words": args.chunk_words, "--query-words": args.query_words})
    ds = load_dataset(name, cache_dir=getattr(args, "cache_dir", None), show_progress=show_progress, **config)
    attrs = _attrs(manifest_of(ds) or {})
    attrs.setdefault("dataset", name)
    return TaskSource(ds, "dataset", attrs)


def _attrs(manifest: dict[str, Any], source: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if manifest.get("dataset"):
        out["dataset"] = manifest["dataset"]
    cw = (manifest.get("config") or {}).get("chunk_words")
    if cw is not None:
        out["chunk_words"] = cw
    if source is not None:
        out["task_folder"] = source
    return out


# --------------------------------------------------------------------------- a folder of plain tables


def _tables(d: Path) -> dict[str, pd.DataFrame] | None:
    """``corpus``/``queries``/``qrels`` tables found in ``d`` (None unless queries and qrels are there)."""
    if not d.is_dir():
        raise InputFileError(f"--data-dir {str(d)!r} is not a folder; pass an existing folder.")
    found = {}
    for split in ("corpus", "queries", "qrels"):
        for suf in _SUFFIXES:
            if (d / f"{split}{suf}").is_file():
                found[split] = d / f"{split}{suf}"
                break
    if "queries" in found and "qrels" in found:
        return {split: read_table(p) for split, p in found.items()}
    return None


def read_table(path: Path, id_columns: tuple[str, ...] = ("_id", "doc_id", "chunk_id", "query-id", "corpus-id")
               ) -> pd.DataFrame:
    """A queries/qrels/corpus (or population) table — parquet, JSON Lines, CSV, TSV — with ids as strings.

    JSON Lines records end at ``\\n`` only (pandas' reader), and a UTF-8 byte-order mark is tolerated in
    text formats. Qrels (a file named ``qrels.*``) go through :func:`ragcov_data.qrels.check_qrels`, so
    a grade that is not an integer is an error naming the line.
    """
    import io

    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            df = pd.read_parquet(path)
        else:
            try:
                text = path.read_bytes().decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise InputFileError(f"{path}: bytes that are not UTF-8 at byte {exc.start}; re-save the file as "
                                     "UTF-8.") from None
            if suffix == ".jsonl":
                df = pd.read_json(io.StringIO(text), lines=True, dtype=False)
            else:
                sep = "\t" if suffix in (".tsv", ".tab") else ","
                df = pd.read_csv(io.StringIO(text), sep=sep, dtype={c: str for c in id_columns})
    except (ValueError, OSError) as exc:
        raise InputFileError(f"cannot read {str(path)!r}: {exc}") from exc
    for col in id_columns:
        if col in df.columns:
            df[col] = df[col].astype(str)
    if "score" in df.columns and path.name.startswith("qrels"):
        from ragcov_data.qrels import check_qrels

        check_qrels(df, source=str(path), first_line=2 if suffix in (".csv", ".tsv", ".tab") else None,
                    on_unknown="report")
        df["score"] = pd.to_numeric(df["score"])
    if "chunk_index" in df.columns:
        try:
            df["chunk_index"] = pd.to_numeric(df["chunk_index"])
        except ValueError as exc:
            raise InputFileError(f"{str(path)!r}: {exc}; chunk_index must be a whole number.") from None
    return df
