"""Where a task comes from, resolved in one library call: :func:`resolve_task`.

A task is named by one of

    dataset      a registered benchmark (default ``aneel_taesa``), built from ``data_dir`` (or
                 ``$RAGCOV_DATA_DIR``) through :func:`ragcov_data.load_dataset`;
    data_dir     the source data of ``dataset``, or a task folder written by ``ragcov build --out``
                 (recognised by its ``manifest.json``), or a folder of queries/qrels tables;
    data_files   a bring-your-own acervo, chunked with ``chunk_words``/``query_words`` (or
                 ``chunking="dispositivo"`` with ``min_words``/``max_words``);
    task         a task folder written by ``ragcov build --out``, said explicitly.

The CLI's task-source options (``--dataset``, ``--data-dir``, ``--data-files``, ``--task``, ``--chunk-words``,
``--sample-docs`` ...) map one to one onto the parameters, and every conflict is one error naming the
option by its command-line spelling. A task folder is read with :func:`ragcov_data.tasks.record.read_task`,
which verifies every file against the sha256 in its manifest.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from ragcov_data.tasks.load import load_dataset
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.loaders.build import build_task
from ragcov_data.tasks.paths import default_source
from ragcov_data.tasks.qrels import check_qrels
from ragcov_data.tasks.sampling import sample_task
from ragcov_data.tasks.record import is_task_folder, manifest_of, read_task

DEFAULT_DATASET = "aneel_taesa"
DEFAULT_CHUNK_WORDS = 100
DEFAULT_QUERY_WORDS = 20
_SUFFIXES = (".parquet", ".jsonl", ".csv", ".tsv")

__all__ = ["TaskSource", "resolve_task", "task_folder", "read_table", "sample_line", "DEFAULT_DATASET"]


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
        ``dataset`` and, for chunked tasks, ``chunk_words`` (recorded in run files); ``task_folder``;
        ``sample`` (the document sample, when there is one).
    """

    task: Any
    kind: str
    attrs: dict[str, Any] = field(default_factory=dict)


def task_folder(data_dir: str | os.PathLike | None = None, task: str | os.PathLike | None = None) -> Path | None:
    """The task folder named by ``task``, or by ``data_dir`` when it holds a task manifest (else None)."""
    if task:
        return Path(task)
    if data_dir and is_task_folder(data_dir):
        return Path(data_dir)
    return None


def _refuse_with(what: str, options: Mapping[str, Any], hint: str = "") -> None:
    """One-line error for the first of ``options`` that was given but does not apply to ``what``."""
    given = [name for name, value in options.items() if value is not None]
    if given:
        raise RagcovError(f"{given[0]} does not apply to {what}; drop it{hint}.")


def _sample(sample_docs: int | None, seed: int | None, strata: str | None) -> dict[str, Any]:
    """``sample_docs``/``sample_seed``/``sample_strata`` ({} without a sample; seed/strata alone refused)."""
    if sample_docs is None:
        for opt, value in (("--seed", seed), ("--strata", strata)):
            if value is not None:
                raise RagcovError(f"{opt} describes the document sample; give --sample-docs K too (or drop {opt}).")
        return {}
    return {"sample_docs": sample_docs, "sample_seed": 0 if seed is None else seed, "sample_strata": strata}


def _chunking(chunking: str | None, min_words: int | None, max_words: int | None,
              keep_superseded: bool = False) -> dict[str, Any]:
    """``chunking``/``min_words``/``max_words``/``keep_superseded`` for build_task / load_dataset ({} for word
    windows of text in force)."""
    sizes = {"min_words": min_words, "max_words": max_words}
    vig = {"keep_superseded": True} if keep_superseded else {}
    if chunking != "dispositivo":
        for name, value in sizes.items():
            if value is not None:
                opt = "--" + name.replace("_", "-")
                raise RagcovError(f"{opt} applies to --chunking dispositivo; add it or drop {opt}.")
        return vig
    return {"chunking": "dispositivo", **{k: v for k, v in sizes.items() if v is not None}, **vig}


def resolve_task(
    dataset: str | None = None,
    data_dir: str | os.PathLike | None = None,
    data_files: Sequence[str | os.PathLike] | None = None,
    task: str | os.PathLike | None = None,
    *,
    chunk_words: int | None = None,
    query_words: int | None = None,
    chunking: str | None = None,
    min_words: int | None = None,
    max_words: int | None = None,
    keep_superseded: bool = False,
    sample_docs: int | None = None,
    seed: int | None = None,
    strata: str | None = None,
    id_column: str = "doc_id",
    text_column: str = "text",
    cache_dir: str | os.PathLike | None = None,
    as_task: bool = False,
    show_progress: bool = False,
) -> TaskSource:
    """Load the task these sources name; every conflict between them is a one-line error.

    Parameters
    ----------
    dataset : str, optional
        A registered benchmark (default: ``aneel_taesa``).
    data_dir : path, optional
        Source data of ``dataset`` (default: ``$RAGCOV_DATA_DIR``), a task folder, or a folder of
        ``queries``/``qrels`` (and ``corpus``) tables (.parquet/.jsonl/.csv/.tsv).
    data_files : list of paths, optional
        A bring-your-own acervo (JSONL, CSV, parquet files or folders of .txt/.md/.html), read in order.
    task : path, optional
        A task folder written by ``ragcov build --out`` (``data_dir`` also accepts one).
    chunk_words, query_words : int, optional
        ``aneel_taesa`` / ``data_files``: words a chunk and a query (defaults 100 and 20); None means
        "not given", so a task folder or another dataset can refuse them.
    chunking, min_words, max_words : optional
        ``"words"`` (default) or ``"dispositivo"`` with its unit sizes (:func:`ragcov_data.build_task`).
    keep_superseded : bool
        Keep superseded wording of compiled acts in the index (corpus column ``in_force``).
    sample_docs, seed, strata : optional
        Queries of ``sample_docs`` documents drawn with ``seed`` (default 0), within the strata of the
        document column ``strata`` (:mod:`ragcov_data.tasks.sampling`); a task folder holding the census is
        sampled after it is read.
    id_column, text_column : str
        ``data_files`` tables: the id and text columns.
    cache_dir : path, optional
        ``datasets`` cache of a registered dataset.
    as_task : bool, default: False
        ``aneel_taesa`` from its data folder as a :class:`ragcov_data.Task` built in this process (what
        ``ragcov build`` prints and writes) rather than a cached ``datasets.DatasetDict``.
    show_progress : bool, default: False
        Progress bars while a registered dataset is built.

    Returns
    -------
    TaskSource

    Raises
    ------
    RagcovError
        Two sources at once, or an option that does not apply to the source (named by its
        command-line spelling, e.g. ``--chunk-words``), plus every error of the reader it reaches.
    """
    folder = task_folder(data_dir, task)
    sample = _sample(sample_docs, seed, strata)
    opts = {"--data-files": data_files, "--dataset": dataset, "--chunk-words": chunk_words, "--query-words": query_words,
            "--sample-docs": sample_docs, "--chunking": chunking, "--min-words": min_words, "--max-words": max_words}
    if task and data_dir:
        raise RagcovError("give --task or --data-dir, not both (--data-dir also accepts a task folder).")
    if folder is not None:
        return _from_folder(folder, sample, opts)
    build = _Build(chunk_words, query_words, id_column, text_column, sample, chunking, min_words, max_words,
                   keep_superseded)
    if data_files:
        return _from_files(list(data_files), dataset, data_dir, build)
    if data_dir and (tables := _tables(Path(data_dir))) is not None:
        return _from_tables(tables, data_dir, opts)
    return _from_dataset(dataset or DEFAULT_DATASET, data_dir, build, opts, cache_dir, as_task, show_progress)


#: The options each source refuses, in the order they are named (the first one given is the error).
_CHUNKING_OPTIONS = ("--chunking", "--min-words", "--max-words")
_FOLDER_REFUSES = ("--data-files", "--dataset", "--chunk-words", "--query-words", *_CHUNKING_OPTIONS)
_TABLES_REFUSES = ("--dataset", "--chunk-words", "--query-words", "--sample-docs", *_CHUNKING_OPTIONS)
_DATASET_REFUSES = ("--chunk-words", "--query-words", "--sample-docs", *_CHUNKING_OPTIONS)


def _options(opts: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    return {name: opts[name] for name in names}


@dataclass
class _Build:
    """The options of a chunked self-retrieval task built in this process (``data_files``, or
    ``aneel_taesa`` with ``as_task``), and of the registered ``aneel_taesa`` dataset."""

    chunk_words: int | None
    query_words: int | None
    id_column: str
    text_column: str
    sample: dict[str, Any]
    chunking: str | None
    min_words: int | None
    max_words: int | None
    keep_superseded: bool

    def cut(self) -> dict[str, Any]:
        """The chunking options for build_task / load_dataset (errors name the command-line option)."""
        return _chunking(self.chunking, self.min_words, self.max_words, self.keep_superseded)

    def source(self, paths: list) -> TaskSource:
        """The task built from the acervo files ``paths``."""
        t = _build(paths, self.chunk_words, self.query_words, self.id_column, self.text_column, self.sample,
                   self.cut())
        return TaskSource(t, "data_files", task_attrs(t.manifest))


def _from_folder(folder: Path, sample: dict[str, Any], opts: Mapping[str, Any]) -> TaskSource:
    """A task folder, read (every file verified) as it was built; only a document sample applies to it."""
    _refuse_with(f"the task folder {str(folder)!r}", _options(opts, _FOLDER_REFUSES),
                 " (the folder's task is already built; its settings are in its manifest.json)")
    t = read_task(folder)
    if sample:  # a document sample of a census task folder
        t = sample_task(t, sample["sample_docs"], sample["sample_seed"], sample["sample_strata"])
    return TaskSource(t, "task", task_attrs(t.manifest, source=str(folder)))


def _from_files(paths: list, dataset: str | None, data_dir: Any, build: _Build) -> TaskSource:
    """A bring-your-own acervo: the whole acervo, so neither another dataset nor a data folder applies."""
    if dataset not in (None, DEFAULT_DATASET):  # said first: the dataset would otherwise be built without them
        raise RagcovError(f"--data-files builds the chunked self-retrieval task ({DEFAULT_DATASET}); "
                          f"--dataset {dataset} reads its own files from --data-dir. Drop one of them.")
    if data_dir:
        raise RagcovError("give --data-files or --data-dir, not both: --data-files is the whole acervo.")
    return build.source(paths)


def _from_tables(tables: dict[str, pd.DataFrame], data_dir: Any, opts: Mapping[str, Any]) -> TaskSource:
    """A folder of queries/qrels (and corpus) tables: taken as they are, so no build option applies."""
    _refuse_with(f"the queries/qrels tables in {str(data_dir)!r}", _options(opts, _TABLES_REFUSES))
    return TaskSource(tables, "tables", {})


def _from_dataset(name: str, data_dir: Any, build: _Build, opts: Mapping[str, Any], cache_dir: Any, as_task: bool,
                  show_progress: bool) -> TaskSource:
    """A registered dataset; only ``aneel_taesa`` takes the build options (built here with ``as_task``)."""
    if name != DEFAULT_DATASET:
        _refuse_with(f"--dataset {name}", _options(opts, _DATASET_REFUSES))
    elif as_task:
        return build.source([str(default_source("aneel_fulltext", data_dir))])
    cut = build.cut() if name == DEFAULT_DATASET else {}
    return _registered(name, data_dir, build.chunk_words, build.query_words, build.sample, cut, cache_dir,
                       show_progress)


def _build(paths: list, chunk_words: int | None, query_words: int | None, id_column: str, text_column: str,
           sample: dict[str, Any], cut: dict[str, Any]) -> Any:
    return build_task(paths, chunk_words=chunk_words or DEFAULT_CHUNK_WORDS,
                      query_words=query_words or DEFAULT_QUERY_WORDS, id_column=id_column, text_column=text_column,
                      **sample, **cut)


def _registered(name: str, data_dir: Any, chunk_words: int | None, query_words: int | None,
                sample: dict[str, Any], cut: dict[str, Any], cache_dir: Any, show_progress: bool) -> TaskSource:
    config: dict[str, Any] = {}
    if data_dir:
        config["data_dir"] = data_dir
    if name == DEFAULT_DATASET:
        config["chunk_words"] = chunk_words or DEFAULT_CHUNK_WORDS
        if query_words is not None:
            config["query_words"] = query_words
        config.update(sample)
        config.update(cut)
    ds = load_dataset(name, cache_dir=cache_dir, show_progress=show_progress, **config)
    attrs = task_attrs(manifest_of(ds) or {})
    attrs.setdefault("dataset", name)
    return TaskSource(ds, "dataset", attrs)


def task_attrs(manifest: Mapping[str, Any], source: str | None = None) -> dict[str, Any]:
    """What a run made on this task records of it: dataset, chunk_words, chunking, task folder, sample."""
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


def sample_line(manifest: Mapping[str, Any] | None) -> str | None:
    """One line saying what a sampled task holds (None for a census)."""
    rec = (manifest or {}).get("sample")
    if not rec:
        return None
    within = f", within {rec['strata']}" if rec.get("strata") else ""
    return (f"sample: {rec['k']} of {rec['population']['documents']} documents (seed {rec['seed']}{within}) -> "
            f"{rec.get('queries')} queries; the corpus keeps every document")


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
    text formats. Qrels (a file named ``qrels.*``) go through :func:`ragcov_data.tasks.qrels.check_qrels`, so
    a grade that is not an integer is an error naming the line.
    """
    path = Path(path)
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
        check_qrels(df, source=str(path), first_line=2 if suffix in (".csv", ".tsv", ".tab") else None,
                    on_unknown="report")
        df["score"] = pd.to_numeric(df["score"])
    if "chunk_index" in df.columns:
        try:
            df["chunk_index"] = pd.to_numeric(df["chunk_index"])
        except ValueError as exc:
            raise InputFileError(f"{str(path)!r}: {exc}; chunk_index must be a whole number.") from None
    return df
