"""The task sources every verb accepts, in one place.

    --dataset NAME            a registered benchmark, built from --data-dir (or $RAGCOV_DATA_DIR)
    --data-dir DIR            the source data of --dataset, or a task folder written by `ragcov build --out`
                              (recognised by its manifest.json), or a folder of queries/qrels tables
    --data-files PATH...      a bring-your-own acervo, chunked with --chunk-words/--query-words
                              (or --chunking dispositivo [--min-words N] [--max-words N])
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
                   help="draw within strata of this document column (e.g. doc_type), allocated proportionally")


def sample_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``sample_docs``/``sample_seed``/``sample_strata`` for build_task / load_dataset ({} without a sample)."""
    if not hasattr(args, "sample_docs"):  # a verb without the sample options (its --seed/--strata are its own)
        return {}
    k = args.sample_docs
    if k is None:
        for opt, value in (("--seed", getattr(args, "seed", None)), ("--strata", getattr(args, "strata", None))):
            if value is not None:
                raise RagcovError(f"{opt} describes the document sample; give --sample-docs K too (or drop {opt}).")
        return {}
    return {"sample_docs": k, "sample_seed": 0 if args.seed is None else args.seed, "sample_strata": args.strata}


def sample_line(manifest: dict[str, Any]) -> str | None:
    """One line saying what a sampled task holds (None for a census)."""
    rec = (manifest or {}).get("sample")
    if not rec:
        return None
    within = f", within {rec['strata']}" if rec.get("strata") else ""
    return (f"sample: {rec['k']} of {rec['population']['documents']} documents (seed {rec['seed']}{within}) -> "
            f"{rec.get('queries')} queries; the corpus keeps every document")


def chunking_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``chunking``/``min_words``/``max_words`` for build_task / load_dataset ({} for word windows)."""
    chunking = getattr(args, "chunking", None)
    sizes = {"min_words": getattr(args, "min_words", None), "max_words": getattr(args, "max_words", None)}
    vig = {"keep_superseded": True} if getattr(args, "keep_superseded", None) else {}
    if chunking != "dispositivo":
        for name, value in sizes.items():
            if value is not None:
                raise RagcovError(f"--{name.replace('_', '-')} applies to --chunking dispositivo; add it or drop "
                                  f"--{name.replace('_', '-')}.")
        return vig
    return {"chunking": "dispositivo", **{k: v for k, v in sizes.items() if v is not None}, **vig}


def _chunking_given(args: argparse.Namespace) -> dict[str, Any]:
    return {"--chunking": getattr(args, "chunking", None), "--min-words": getattr(args, "min_words", None),
            "--max-words": getattr(args, "max_words", None)}


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
                      "--query-words": args.query_words, **_chunking_given(args)},
                     " (the folder's task is already built; its settings are in its manifest.json)")
        from ragcov_data.task import read_task

        task = read_task(folder)
        sample = sample_kwargs(args)
        if sample:  # a document sample of a census task folder
            from ragcov_data.sampling import sample_task

            task = sample_task(task, sample["sample_docs"], sample["sample_seed"], sample["sample_strata"])
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
                          text_column=getattr(args, "text_column", "text"), **sample_kwargs(args),
                          **chunking_kwargs(args))
        return TaskSource(task, "data_files", _attrs(task.manifest))
    if args.data_dir:
        tables = _tables(Path(args.data_dir))
        if tables is not None:
            _refuse_with(f"the queries/qrels tables in {args.data_dir!r}",
                         {"--dataset": args.dataset, "--chunk-words": args.chunk_words,
                          "--query-words": args.query_words, "--sample-docs": getattr(args, "sample_docs", None),
                          **_chunking_given(args)})
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
        config.update(sample_kwargs(args))
        config.update(chunking_kwargs(args))
    else:
        _refuse_with(f"--dataset {name}", {"--chunk-words": args.chunk_words, "--query-words": args.query_words,
                                           "--sample-docs": getattr(args, "sample_docs", None),
                                           **_chunking_given(args)})
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
    if (manifest.get("config") or {}).get("chunking"):
        out["chunking"] = manifest["config"]["chunking"]
    if source is not None:
        out["task_folder"] = source
    if manifest.get("sample"):  # the population and the sample travel with the run (parquet metadata)
        out["sample"] = manifest["sample"]
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
