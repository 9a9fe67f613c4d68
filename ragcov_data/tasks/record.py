"""The task record and its files: describe a task, write it, read and verify a task folder.

A :class:`Task` holds three pandas DataFrames in the BEIR/MTEB layout (``corpus``, ``queries``,
``qrels``) plus a JSON-able ``manifest`` (config, rules, sha256 of every source file, counts, package
version). Building one from an acervo is the loaders' job (:func:`ragcov_data.loaders.build.build_task`);
this module sits below them and imports nothing from :mod:`ragcov_data.loaders` or
:mod:`ragcov_data.tasks.sampling`.
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.legal.acervo import sha256_file
from ragcov_data.errors import ChecksumError, InputFileError, RagcovError
from ragcov_data._atomic import _umask, atomic_write
from ragcov_data.tasks.paths import check_writable

SPLITS = ("corpus", "queries", "qrels")
#: Files of a task folder written by :meth:`Task.to_parquet` (``ragcov build --out``).
TASK_FILES = {split: f"{split}.parquet" for split in SPLITS}
MANIFEST_FILE = "manifest.json"
#: Key of ``manifest.json`` mapping each split file to its sha256.
FILES_KEY = "files"
MANIFEST_KEY = "ragcov_manifest"
TASK_NAME = "chunked self-retrieval"


# --------------------------------------------------------------------------- schemas


#: Corpus columns a task builds itself (the rest are the acervo's metadata).
CORPUS_OWN_COLUMNS = ("_id", "doc_id", "chunk_index", "text", "unit", "continued", "articles", "in_force",
                      "units_not_in_force", "share_not_in_force")
#: Corpus columns holding a list of labels per chunk.
LIST_COLUMNS = ("articles", "units_not_in_force")


def _feature_of(col: pd.Series) -> Any:
    """The ``datasets`` feature of one column: int64, float64, bool, a list of strings or a string."""
    from datasets import List, Value

    if col.name in LIST_COLUMNS:
        return List(Value("string"))
    if pd.api.types.is_bool_dtype(col):
        return Value("bool")
    if pd.api.types.is_integer_dtype(col):
        return Value("int64")
    if pd.api.types.is_float_dtype(col):
        return Value("float64")
    return Value("string")


def task_features(metadata_columns: Sequence[str], units: bool = False) -> dict[str, Any]:
    """``datasets.Features`` of each split of a self-retrieval task with these metadata columns
    (``units``: the corpus has the ``unit``/``continued``/``articles`` columns of ``chunking="dispositivo"``)."""
    from datasets import Features, List, Value

    meta = {c: Value("string") for c in metadata_columns}
    unit = {"unit": Value("string"), "continued": Value("bool"), "articles": List(Value("string"))} if units else {}
    return {
        "corpus": Features({"_id": Value("string"), "doc_id": Value("string"), "chunk_index": Value("int64"),
                            "text": Value("string"), **unit, **meta}),
        "queries": Features({"_id": Value("string"), "text": Value("string"), "doc_id": Value("string"),
                             "chunk_id": Value("string"), **meta}),
        "qrels": Features({"query-id": Value("string"), "corpus-id": Value("string"), "score": Value("int64")}),
    }


def manifest_of(dataset_dict: Mapping[str, Any]) -> dict[str, Any] | None:
    """The manifest stored in a DatasetDict's ``info.description`` (None if absent)."""
    for split in SPLITS:
        ds = dataset_dict.get(split) if hasattr(dataset_dict, "get") else None
        info = getattr(ds, "info", None)
        desc = getattr(info, "description", None) or ""
        try:
            payload = json.loads(desc)
        except (TypeError, ValueError):
            continue
        if isinstance(payload, dict) and MANIFEST_KEY in payload:
            return payload[MANIFEST_KEY]
    return None


def manifest_description(manifest: Mapping[str, Any]) -> str:
    """``info.description`` carrying a manifest (sorted-key JSON, so it is deterministic)."""
    return json.dumps({MANIFEST_KEY: manifest}, ensure_ascii=False, sort_keys=True)


# --------------------------------------------------------------------------- description


@dataclass(frozen=True)
class TaskDescription:
    """What the study reports about a task's population.

    Attributes
    ----------
    documents_read, documents_eligible : int
        Documents in the source; documents with at least two chunks (the task's clusters).
    documents_excluded : dict of str to int
        Excluded documents by reason (``single_chunk``).
    chunks, queries, qrels : int
    chunks_per_document : dict
        ``median``, ``p90`` and ``max`` chunks per eligible document.
    top10_share : float
        Share of chunks held by the 10% largest eligible documents (ceil(10%) of them, at least one).
    per_type : pandas.DataFrame or None
        Per ``doc_type``: documents read, eligible, excluded, chunks, queries (None without ``doc_type``).
    """

    documents_read: int
    documents_eligible: int
    documents_excluded: dict[str, int]
    chunks: int
    queries: int
    qrels: int
    chunks_per_document: dict[str, float]
    top10_share: float
    per_type: pd.DataFrame | None = field(default=None, compare=False)
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (per-type table as a list of records)."""
        out = {k: getattr(self, k) for k in ("config", "documents_read", "documents_eligible", "documents_excluded",
                                             "chunks", "queries", "qrels", "chunks_per_document", "top10_share")}
        out["per_type"] = None if self.per_type is None else self.per_type.reset_index().to_dict("records")
        return out

    def __str__(self) -> str:
        cpd = self.chunks_per_document
        excl = ", ".join(f"{k}: {v}" for k, v in self.documents_excluded.items()) or "none"
        head = " ".join(f"{k}={v}" for k, v in self.config.items())
        lines = [
            f"Task{' (' + head + ')' if head else ''}",
            f"  documents read      {self.documents_read:>8,}",
            f"  documents eligible  {self.documents_eligible:>8,}",
            f"  documents excluded  {sum(self.documents_excluded.values()):>8,}   ({excl})",
            f"  chunks              {self.chunks:>8,}",
            f"  queries             {self.queries:>8,}",
            f"  qrels               {self.qrels:>8,}",
            f"  chunks per document  median {cpd['median']:g}, p90 {cpd['p90']:g}, max {cpd['max']:g}",
            f"  top 10% of documents hold {self.top10_share:.1%} of chunks",
        ]
        if self.per_type is not None:
            lines.append("  per doc_type:")
            table = self.per_type.to_string().splitlines()
            lines.extend("    " + row for row in table)
        return "\n".join(lines)

    def __repr__(self) -> str:
        cpd = self.chunks_per_document
        return (f"TaskDescription(documents_read={self.documents_read}, documents_eligible={self.documents_eligible}, "
                f"documents_excluded={self.documents_excluded}, chunks={self.chunks}, queries={self.queries}, "
                f"qrels={self.qrels}, chunks_per_document={cpd}, top10_share={self.top10_share:.4f})")


def _describe(corpus: pd.DataFrame, queries: pd.DataFrame, qrels: pd.DataFrame,
              manifest: Mapping[str, Any] | None, read_types: pd.Series | None) -> TaskDescription:
    sizes = corpus.groupby("doc_id", sort=False).size().to_numpy()
    counts = (manifest or {}).get("counts", {})
    eligible = int(len(sizes))
    excluded = dict(counts.get("documents_excluded", {}))
    read = int(counts.get("documents_read", eligible + sum(excluded.values())))
    if eligible:
        k = max(1, math.ceil(0.1 * eligible))
        top = float(np.sort(sizes)[::-1][:k].sum() / sizes.sum())
        cpd = {"median": float(np.median(sizes)), "p90": float(np.percentile(sizes, 90)), "max": float(sizes.max())}
    else:
        top, cpd = float("nan"), {"median": float("nan"), "p90": float("nan"), "max": float("nan")}
    per_type = None
    if "doc_type" in corpus.columns:
        docs = corpus.drop_duplicates("doc_id")
        elig = docs["doc_type"].fillna("(none)").value_counts()
        chunks = corpus["doc_type"].fillna("(none)").value_counts()
        q = queries["doc_type"].fillna("(none)").value_counts() if "doc_type" in queries else chunks * 0
        cols = {"eligible": elig, "chunks": chunks, "queries": q}
        if read_types is not None:
            cols = {"read": read_types.fillna("(none)").value_counts(), **cols}
        per_type = pd.DataFrame(cols).fillna(0).astype("int64")
        if "read" in per_type:
            per_type.insert(2, "excluded", per_type["read"] - per_type["eligible"])
        per_type = per_type.sort_values(["chunks", "eligible"], ascending=False, kind="mergesort")
        per_type.index.name = "doc_type"
    config = dict((manifest or {}).get("config", {}))
    return TaskDescription(read, eligible, excluded, int(len(corpus)), int(len(queries)), int(len(qrels)),
                           cpd, top, per_type, config)


# --------------------------------------------------------------------------- task


@dataclass
class Task:
    """A retrieval task as pandas DataFrames, with its manifest.

    Attributes
    ----------
    corpus, queries, qrels : pandas.DataFrame
        BEIR/MTEB layout (see the package README for the columns).
    manifest : dict
        Config, construction rules, sha256 of every source file, counts and package version.
    """

    corpus: pd.DataFrame
    queries: pd.DataFrame
    qrels: pd.DataFrame
    manifest: dict[str, Any] = field(default_factory=dict)
    _read_types: pd.Series | None = field(default=None, repr=False)

    def __getitem__(self, split: str) -> pd.DataFrame:
        if split not in SPLITS:
            raise KeyError(f"split must be one of {SPLITS}; got {split!r}")
        return getattr(self, split)

    def keys(self) -> tuple[str, ...]:
        return SPLITS

    def describe(self) -> TaskDescription:
        """Population summary: documents read/eligible/excluded, chunks, sizes, concentration, per type."""
        return _describe(self.corpus, self.queries, self.qrels, self.manifest, self._read_types)

    def to_dataset_dict(self) -> Any:
        """The task as a ``datasets.DatasetDict`` (manifest JSON in each split's ``info.description``)."""
        from datasets import Dataset, DatasetDict, DatasetInfo, Features, Value

        units = all(c in self.corpus.columns for c in ("unit", "continued", "articles"))
        meta = [c for c in self.corpus.columns if c not in CORPUS_OWN_COLUMNS]
        feats = task_features(meta, units=units)
        out = {}
        for split in SPLITS:
            df = self[split]
            f = feats[split] if list(df.columns) == list(feats[split]) else Features(
                {c: _feature_of(df[c]) for c in df.columns})
            info = DatasetInfo(description=manifest_description(self.manifest), features=f)
            out[split] = Dataset.from_pandas(df, features=f, info=info, preserve_index=False)
        return DatasetDict(out)

    @classmethod
    def from_dataset_dict(cls, dataset_dict: Mapping[str, Any]) -> "Task":
        """A Task from a DatasetDict (or dict of DataFrames) with corpus/queries/qrels."""
        frames = {}
        for split in SPLITS:
            if split not in dataset_dict:
                raise RagcovError(f"`dataset_dict` has no {split!r} split; expected {SPLITS}.")
            obj = dataset_dict[split]
            frames[split] = obj if isinstance(obj, pd.DataFrame) else obj.to_pandas()
        return cls(frames["corpus"], frames["queries"], frames["qrels"], manifest_of(dataset_dict) or {})

    def to_parquet(self, out_dir: str | os.PathLike) -> dict[str, Path]:
        """Write the task folder: ``corpus/queries/qrels.parquet`` and ``manifest.json``.

        The manifest gains ``files``: the sha256 of each split file, which :func:`read_task` verifies.
        The folder is written whole into a temporary sibling and renamed into place, replacing an
        existing task folder only once the new one is complete: an interrupted write leaves the old
        folder as it was, never new splits beside old ones. Same task ⇒ byte-identical files.

        Raises
        ------
        RagcovError
            ``out_dir`` is a file, or a folder holding files that are not a task's (see
            :func:`check_task_out`).
        """
        out = Path(os.path.abspath(check_task_out(out_dir)))  # "." has no name to make a sibling of
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
        try:
            files = {}
            for split, name in TASK_FILES.items():
                write_parquet(self[split], tmp / name)
                files[name] = sha256_file(tmp / name)
            manifest = {k: v for k, v in self.manifest.items() if k != FILES_KEY}
            write_json({**manifest, FILES_KEY: files}, tmp / MANIFEST_FILE)
            os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes it owner-only
            _swap_into_place(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        given = Path(out_dir)
        return {**{split: given / name for split, name in TASK_FILES.items()}, "manifest": given / MANIFEST_FILE}



def _swap_into_place(new: Path, out: Path) -> None:
    """Rename the complete folder ``new`` to ``out``; an existing ``out`` is moved aside first and
    restored if the rename fails, then deleted."""
    if not out.exists():
        os.rename(new, out)
        return
    old = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}.old")
    os.rename(out, old)
    try:
        os.rename(new, out)
    except BaseException:
        os.rename(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def check_task_out(out_dir: str | os.PathLike) -> Path:
    """Refuse a task-folder destination that cannot be written or replaced safely.

    A new or empty folder, or one holding only a task's files, is fine. A folder with anything else
    in it (or a device, a named pipe, a socket under a task file's name) is refused rather than replaced (its
    files would be lost). Also checks that the nearest
    existing parent is writable (:func:`ragcov_data.tasks.paths.check_writable`).
    """
    out = check_writable(out_dir, folder=True)
    if out.is_dir():
        from ragcov_data._atomic import file_kind

        special = next(((e.name, file_kind(e)) for e in sorted(out.iterdir()) if file_kind(e) and not e.is_dir()), None)
        if special:  # a device, a named pipe ... among the task's names: the swap would delete it
            raise RagcovError(f"cannot write {str(out_dir)}: the folder holds {special[0]!r}, {special[1]}, which "
                              "replacing the folder would delete; move it out, or choose a new or empty folder")
        foreign = sorted(e.name for e in out.iterdir() if e.name not in {*TASK_FILES.values(), MANIFEST_FILE})
        if foreign:
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
            raise RagcovError(f"cannot write {str(out_dir)}: the folder holds files that are not part of a task "
                              f"({shown}) and would be lost when it is replaced; choose a new or empty folder")
    return out


def is_task_folder(path: str | os.PathLike) -> bool:
    """True when ``path`` is a folder with a task ``manifest.json`` (not a ``ragcov publish`` index)."""
    p = Path(path)
    if not (p / MANIFEST_FILE).is_file():
        return False
    try:
        manifest = json.loads((p / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True  # read_task names the problem
    return not (isinstance(manifest, dict) and "configs" in manifest and "task" not in manifest)


def read_task(folder: str | os.PathLike) -> Task:
    """Read a task folder written by :meth:`Task.to_parquet` (``ragcov build --out``).

    Every split file is checked against the sha256 recorded in ``manifest.json`` before it is used, so
    a folder mixing files from two builds (or a file edited or truncated since) is refused instead of
    silently scored against the wrong qrels.

    Raises
    ------
    InputFileError
        No folder, no or unreadable ``manifest.json``, a missing split file.
    ChecksumError
        A split file whose sha256 differs from the manifest's, or a manifest without file hashes
        (written before they were recorded). The message names the file and says to rebuild.
    """
    d = Path(folder)
    rebuild = f"rebuild the folder with `ragcov build ... --out {str(d)}`"
    mpath = d / MANIFEST_FILE
    if not d.is_dir():
        raise InputFileError(f"task folder {str(d)!r} does not exist; pass a folder written by `ragcov build --out`.")
    if not mpath.is_file():
        raise InputFileError(f"{str(d)!r} has no {MANIFEST_FILE}, so it is not a task folder written by "
                             "`ragcov build --out`; pass one, or the source data with --data-dir/--data-files.")
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputFileError(f"{str(mpath)!r} cannot be read as JSON ({exc}); {rebuild}.") from None
    if not isinstance(manifest, dict):
        raise InputFileError(f"{str(mpath)!r} is not a task manifest (a JSON object); {rebuild}.")
    if "configs" in manifest and "task" not in manifest:
        raise InputFileError(f"{str(d)!r} is a folder written by `ragcov publish`, not a task folder; load it "
                             f"with datasets.load_dataset({str(d)!r}, 'queries'), or write one with `ragcov build --out`.")
    files = manifest.get(FILES_KEY)
    if not isinstance(files, dict) or any(name not in files for name in TASK_FILES.values()):
        raise ChecksumError(f"{str(mpath)!r} records no sha256 of the split files (written by an older ragcov), so "
                            f"the folder cannot be verified; {rebuild}.")
    frames = {}
    for split, name in TASK_FILES.items():
        path = d / name
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise InputFileError(f"task folder {str(d)!r} lacks {name}; {rebuild}.") from None
        except OSError as exc:
            raise InputFileError(f"cannot read {str(path)!r}: {exc.strerror or exc}.") from None
        digest = hashlib.sha256(data).hexdigest()
        if digest != files[name]:
            raise ChecksumError(
                f"task folder {str(d)!r}: {name} does not match {MANIFEST_FILE} (sha256 {digest[:12]}… found, "
                f"{str(files[name])[:12]}… recorded): the folder mixes files from different builds or was edited; "
                f"{rebuild}.")
        try:
            frames[split] = pd.read_parquet(io.BytesIO(data))
        except (OSError, ValueError) as exc:  # pragma: no cover - a verified file written by ragcov
            raise InputFileError(f"cannot read {str(path)!r} as parquet: {exc}; {rebuild}.") from None
    task_manifest = {k: v for k, v in manifest.items() if k != FILES_KEY}
    return Task(frames["corpus"], frames["queries"], frames["qrels"], task_manifest)


def write_parquet(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write a DataFrame as parquet deterministically and atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(df.reset_index(drop=True), preserve_index=False)
    # canonical schema whatever the DataFrame's origin: int64 numbers, string (not large_string) text;
    # no pandas metadata (it varies with pandas versions)
    schema = pa.schema([pa.field(f.name, pa.int64() if pa.types.is_integer(f.type) else
                                 pa.string() if pa.types.is_large_string(f.type) or pa.types.is_string(f.type)
                                 or pa.types.is_null(f.type) else f.type)
                        for f in table.schema])
    table = table.cast(schema).replace_schema_metadata(None).combine_chunks()  # page layout independent of chunking
    return atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def write_json(obj: Any, path: str | os.PathLike) -> Path:
    """Write JSON (sorted keys, UTF-8, trailing newline) atomically."""
    return atomic_write(path, json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


__all__ = ["Task", "TaskDescription", "task_features", "manifest_of", "write_parquet", "write_json",
           "read_task", "is_task_folder", "check_task_out"]
