"""Run I/O: one reader for every common run format, one writer, one normal form.

A *run* is what a retriever returns for a set of queries. ragcov's normal form is a DataFrame with
columns ``query-id`` (str), ``corpus-id`` (str), ``rank`` (int) and ``score`` (float), one row per
(query, document) pair, rows ordered by query (first appearance) then trec_eval's order (score
descending, document id descending). Every verb and API call reads runs through :func:`load_run`; the
baselines write them with :func:`save_run`.

Formats read (``format=None`` detects: by suffix, else by content; errors say which was detected)
------------------------------------------------------------------------------------------------
* **TREC** ``qid Q0 docid rank score tag``, spaces or tabs, read as trec_eval reads it: the rank column
  is informational (0, repeated or inconsistent ranks are fine; order comes from the score). Kept as
  ``rank`` for the ``run`` tie policy.
* **CSV / TSV** with a header, any column order, extra columns ignored; names recognised
  case-insensitively (``query-id``/``query_id``/``qid``, ``corpus-id``/``doc_id``/``docid``/``docno``,
  ``rank``, ``score``); ``columns=`` maps other names.
* **parquet** (ragcov's own, with its metadata, or any table with those columns).
* **JSON**: the pytrec_eval / ranx layout ``{qid: {docid: score}}``; ``{qid: [docid, ...]}`` (ranked
  lists, rank-only); or a list of records / JSON Lines with the column names above.
* In Python: a DataFrame (same column names) or a dict in the JSON layouts.
* ``.gz``, ``.bz2``, ``.xz`` by suffix (compressed content under another name is refused with the suffix it
  needs). A UTF-8 byte-order mark is tolerated at the start of the file only: one further on (two files
  concatenated) is an error naming its line.

**Rank-only runs** (no score, any format): ordered by rank; ragcov sets ``score = -rank`` so equal ranks
tie and every tie policy applies (``attrs["score_from"] == "rank"``). A run without ranks gets ranks in
trec_eval's order (``attrs["rank_from"] == "score"``).

**Rank against score.** A run with both orders by score, as trec_eval does, when they agree. One whose
scores *rise* with rank in most queries (a distance written as the score) is refused unless the caller
names the order: ``order="rank"`` (``--order rank``) orders by the file's ranks, ``order="score"``
by score, higher = better.

Rejected, with the file, the line and what was expected: missing columns, empty ids, ids that are JSON
objects or lists, non-numeric or non-finite scores, non-integer ranks, ranks of magnitude 2**53 or more
(beyond it float64 merges distinct ranks; past 2**63 int64 overflows), rank and score columns that look
swapped, a delimiter other than the suffix's, and a document listed twice for one query (trec_eval
rejects it too). Large TREC and CSV files are parsed by Arrow's CSV reader, not a Python loop;
``depth=k`` reads them in blocks and keeps k rows a query plus ties, so memory follows the rows kept.
"""
from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import re
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from ragcov_data._json import to_jsonable
from ragcov_data.errors import InputFileError, RagcovError

RUN_COLUMNS = ["query-id", "corpus-id", "rank", "score"]
FORMATS = ("trec", "csv", "tsv", "parquet", "json", "jsonl")
PARQUET_SUFFIXES = (".parquet", ".pq")
COMPRESSION = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_SUFFIX_FORMAT = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
                  ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".trec": "trec", ".run": "trec"}
_META_KEY = b"ragcov.run"
_TREC_FIELDS = "'qid Q0 docid rank score tag'"

#: Recognised column names (lower-cased), by ragcov column, in order of preference.
COLUMN_NAMES: dict[str, tuple[str, ...]] = {
    "query-id": ("query-id", "query_id", "qid", "queryid", "query-id", "topic_id", "topicid"),
    "corpus-id": ("corpus-id", "corpus_id", "doc_id", "docid", "docno", "doc-id", "document_id", "document-id",
                  "pid", "passage_id"),
    "rank": ("rank",),
    "score": ("score", "sim", "similarity"),
}
__all__ = ["load_run", "save_run", "validate_run", "OwnChunkWarning", "RUN_COLUMNS", "FORMATS", "COLUMN_NAMES", "ORDERS"]


# ==================================================================================== public API
def load_run(
    source: str | os.PathLike | pd.DataFrame | Mapping[str, Any],
    *,
    columns: Mapping[str, str] | str | None = None,
    format: str | None = None,
    order: str | None = None,
    depth: int | None = None,
) -> pd.DataFrame:
    """Read a run from a file (TREC, CSV, TSV, parquet, JSON; optionally compressed), a DataFrame or a dict.

    Parameters
    ----------
    source : path, DataFrame or dict
        A run file, a DataFrame with recognised column names, or ``{qid: {docid: score}}`` /
        ``{qid: [docid, ...]}``.
    columns : mapping or str, optional
        ragcov column -> the source's column, for names not recognised automatically, e.g.
        ``{"query-id": "QUERY", "corpus-id": "DOC"}`` or ``"query-id=QUERY,corpus-id=DOC"``.
    format : {"trec", "csv", "tsv", "parquet", "json", "jsonl"}, optional
        Skip detection. By default the suffix decides (after ``.gz``/``.bz2``/``.xz``), else the content.
    order : {"score", "rank"}, optional
        For a run with both ranks and scores: ``"score"`` orders by score, higher = better (trec_eval's
        rule, the default); ``"rank"`` orders by the file's ranks (``score = -rank``, so equal ranks tie),
        e.g. for a run scored by a distance. Left unset, a run whose scores rise with rank in most queries
        is refused, since ordering it by score would reverse it silently. Recorded in ``attrs["order"]``.
    depth : int, optional
        Keep, per query, the first ``depth`` rows in trec_eval's order and every row tied with the
        ``depth``-th row's score (so every tie policy still sees the whole tie), e.g. a metric's ``k``.
        TREC, CSV and TSV files are then read in blocks of typed columns and pruned as they are read, so
        memory follows the rows kept rather than the file; every row is still checked (ids, numbers,
        repeated pairs, byte-order marks). ``attrs["depth"]`` and ``attrs["rows_read"]`` record it.
        Default: every row.

    Returns
    -------
    pandas.DataFrame
        The run in normal form (see the module docstring); ``attrs`` holds ``format``, ``source``,
        ``rank_from`` / ``score_from`` (``"file"``, ``"score"``, ``"rank"``), the TREC ``tag`` and, for
        ragcov parquet files, the retriever's recorded attributes.

    Raises
    ------
    InputFileError
        Missing or unreadable file, undetectable or malformed content: the message names the file,
        the line and the expected layout, and the format detected.
    """
    colmap = _column_map(columns)
    depth = _check_depth(depth)
    if isinstance(source, pd.DataFrame):
        out = _normalise(_pick_columns(source, colmap, "run", "DataFrame"), source="run", fmt="DataFrame",
                         attrs=dict(source.attrs), order=order)
        return _keep_depth(_kept_provenance(out, source.attrs), depth)
    if isinstance(source, Mapping):
        return _keep_depth(_normalise(_from_mapping(source, "run"), source="run", fmt="dict", order=order), depth)
    if not isinstance(source, (str, os.PathLike)):
        raise RagcovError(f"`run` must be a path, a DataFrame or a dict; got {type(source).__name__}.")
    path = Path(source)
    if not path.is_file():
        raise InputFileError(f"run file {str(path)!r} does not exist (or is not a file); check the path.")
    if format is not None and format not in FORMATS:
        raise RagcovError(f"`format` must be one of {FORMATS}; got {format!r}.")
    opener = COMPRESSION.get(path.suffix.lower())
    inner = Path(path.stem) if opener else path
    fmt, how = (format, "given") if format else _format_by_suffix(inner)
    _check_order(order)
    if fmt == "parquet":
        return _keep_depth(_read_parquet(path, colmap, order), depth)
    if depth is not None:
        if fmt is None:
            fmt, how = _format_by_content(_head(path, opener)), "by content"
        if fmt in ("trec", "csv", "tsv"):
            where = f"{path} (format {fmt}, {how})"
            return _read_streamed(path, opener, fmt, colmap, where, depth, order)
    data = _read_bytes(path, opener)
    if fmt is None:
        fmt, how = _format_by_content(data), "by content"
    where = f"{path} (format {fmt}, {how})"
    if fmt == "trec":
        frame, attrs = _read_trec(data, where), {}
        attrs["tag"] = frame.attrs.pop("tag")
    elif fmt in ("csv", "tsv"):
        frame, attrs = _read_delimited(data, "," if fmt == "csv" else "\t", colmap, where), {}
    else:
        frame, attrs = _read_json(data, fmt, colmap, where), {}
    if fmt in ("trec", "csv", "tsv"):  # name lines by reading the file again, only if an error needs it,
        header = 0 if fmt == "trec" else _first_line(data)  # so the file's bytes are freed before the checks
        frame.attrs["_row_label"] = _file_labels(path, opener, header)
    del data
    return _keep_depth(_normalise(frame, source=where, fmt=fmt, attrs=attrs, path=str(path), order=order), depth)


def _kept_provenance(run: pd.DataFrame, attrs: Mapping[str, Any]) -> pd.DataFrame:
    """A run read before (e.g. by the command line) keeps what its first reading said of its file: scores
    made from ranks (a rank-only run) and ranks made from scores, as long as its columns still say so. A
    second reading would otherwise call both "from the file" and change the notices of one run."""
    if attrs.get("score_from") == "rank" and np.array_equal(run["score"].to_numpy(), -run["rank"].to_numpy(float)):
        run.attrs["score_from"] = "rank"
    if attrs.get("rank_from") == "score":
        q = run["query-id"].to_numpy()
        starts = np.r_[True, q[1:] != q[:-1]]  # rows are grouped by query in normal form
        pos = np.arange(len(q)) - np.maximum.accumulate(np.where(starts, np.arange(len(q)), 0)) + 1
        if np.array_equal(pos, run["rank"].to_numpy()):
            run.attrs["rank_from"] = "score"
    return run


def _first_line(data: bytes) -> int:
    """Number of the first non-empty line (a table's header)."""
    pos, no = 0, 1
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        if data[pos:end].strip():
            return no
        pos, no = end + 1, no + 1
    return 0


def _file_labels(path: Path, opener: Callable[..., Any] | None, header_line: int) -> Callable[[int], str]:
    return lambda row: _lines_of(path, opener, [int(row)], header_line)[0]


def validate_run(run: pd.DataFrame, *, source: str = "run", columns: Mapping[str, str] | str | None = None,
                 order: str | None = None) -> pd.DataFrame:
    """Check a run DataFrame and return it in normal form (see :func:`load_run`, also for ``order``);
    raise if bad."""
    if not isinstance(run, pd.DataFrame):
        raise RagcovError(f"{source}: a run must be a pandas DataFrame; got {type(run).__name__}.")
    frame = _pick_columns(run, _column_map(columns), source, "DataFrame")
    return _normalise(frame, source=source, fmt=run.attrs.get("format", "DataFrame"), attrs=dict(run.attrs),
                      order=order)


def save_run(run: pd.DataFrame, path: str | os.PathLike, *, tag: str | None = None) -> Path:
    """Write ``run`` to ``path`` atomically: parquet for ``.parquet``/``.pq``, else a TREC run file.

    TREC lines are ``qid Q0 docid rank score tag`` with scores in Python's shortest round-trip form, so a
    save/load cycle is exact and trec_eval reads the same doubles. Rows are written in trec_eval's
    order; ``tag`` defaults to the retriever's name (``run.attrs["retriever"]``) or ``"ragcov"``, and carries
    the task fingerprint of ``run.attrs["task_fingerprint"]`` (``|rc:<hash>@<task>``,
    :mod:`ragcov_data.run_fingerprint`) so every reader can check the run against its task.
    A ``.gz``/``.bz2``/``.xz`` suffix compresses the TREC file.
    """
    from ragcov_data._atomic import atomic_write

    path = Path(path)
    run = validate_run(run, source="`run`")
    if path.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(run, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[_META_KEY] = json.dumps(to_jsonable(run.attrs), sort_keys=True).encode()
        table = table.replace_schema_metadata(meta)
        atomic_write(path, lambda tmp: pq.write_table(table, tmp))
        return path
    _warn_own_chunks(run, path)
    default_tag = run.attrs.get("retriever") or (run.attrs.get("tag") if isinstance(run.attrs.get("tag"), str) else None)
    from ragcov_data.run_fingerprint import tag_with_fingerprint

    tag = tag_with_fingerprint(str(tag if tag is not None else default_tag or "ragcov"), run.attrs)
    if not tag or any(ch.isspace() for ch in tag):
        raise RagcovError(f"`tag` must be a non-empty string without whitespace; got {tag!r}.")
    for col in ("query-id", "corpus-id"):
        bad = run[col].str.contains(r"\s", regex=True).to_numpy(dtype=bool)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise RagcovError(
                f"cannot write TREC run {path}: `{col}` {run[col].iat[i]!r} (row {i}) contains whitespace; "
                "save as .parquet instead."
            )
    text = "".join(
        f"{q} Q0 {d} {r} {s!r} {tag}\n"
        for q, d, r, s in zip(run["query-id"], run["corpus-id"], run["rank"].tolist(), run["score"].tolist())
    )
    opener = COMPRESSION.get(path.suffix.lower())
    if opener is None:
        atomic_write(path, text)
    else:
        buf = io.BytesIO()
        with opener(buf, "wb") as fh:
            fh.write(text.encode("utf-8"))
        atomic_write(path, buf.getvalue())
    return path


class OwnChunkWarning(UserWarning):
    """A run saved for outside scorers still ranks queries' own chunks."""


def _warn_own_chunks(run: pd.DataFrame, path: Path) -> None:
    """Warn when rows pair a query with a chunk of the same id (a self-retrieval query's own chunk)
    and the run does not say its own chunks were excluded: trec_eval, pytrec_eval and ir_measures would
    count those rows as misses, where ragcov and BEIR (``ignore_identical_ids``) drop them."""
    if run.attrs.get("exclude_self") is True:
        return
    same = run["query-id"].to_numpy() == run["corpus-id"].to_numpy()
    # only chunk ids ("<doc_id>#<chunk>"): a JurisTCU document may share its number with a query
    n = int((same & run["query-id"].str.contains("#", regex=False).to_numpy(dtype=bool)).sum())
    if n:
        import warnings

        warnings.warn(
            f"{path}: {n} rows rank a query's own chunk (corpus-id == query-id); trec_eval, pytrec_eval and "
            "ir_measures will count them as misses. Save ragcov_data.exclude_self(run, task) instead, or score "
            "with BEIR's ignore_identical_ids=True.", OwnChunkWarning, stacklevel=3)


# ==================================================================================== detection
def _column_map(columns: Mapping[str, str] | str | None) -> dict[str, str]:
    if columns is None:
        return {}
    if isinstance(columns, str):
        pairs = [p.strip() for p in columns.split(",") if p.strip()]
        out = {}
        for p in pairs:
            if "=" not in p:
                raise RagcovError(f"`columns` entries look like 'query-id=QUERY'; got {p!r} in {columns!r}.")
            ours, theirs = (x.strip() for x in p.split("=", 1))
            out[ours] = theirs
        columns = out
    if not isinstance(columns, Mapping):
        raise RagcovError(f"`columns` must map ragcov columns to yours, e.g. {{'query-id': 'QID'}}; got {columns!r}.")
    bad = [k for k in columns if k not in RUN_COLUMNS]
    if bad:
        raise RagcovError(f"`columns` keys must be among {RUN_COLUMNS}; got {bad}.")
    return {str(k): str(v) for k, v in columns.items()}


def _format_by_suffix(path: Path) -> tuple[str | None, str]:
    fmt = _SUFFIX_FORMAT.get(path.suffix.lower())
    return (fmt, "by suffix") if fmt else (None, "by content")


def _format_by_content(data: bytes) -> str:
    head = data.lstrip()[:4096]
    if head[:1] in (b"{", b"["):
        return "json"
    first = head.split(b"\n", 1)[0].decode("utf-8", errors="replace")
    fields = first.split()
    if len(fields) == 6 and _is_number(fields[3]) and _is_number(fields[4]):
        return "trec"
    if "\t" in first and len(first.split("\t")) >= 2:
        return "tsv"
    if "," in first and len(first.split(",")) >= 2:
        return "csv"
    return "trec"


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


#: Leading bytes of compressed and binary files -> (what it is, the suffix it needs).
_MAGIC = ((b"\x1f\x8b", "gzip-compressed", ".gz"), (b"BZh", "bzip2-compressed", ".bz2"),
          (b"\xfd7zXZ\x00", "xz-compressed", ".xz"), (b"PAR1", "a parquet file", ".parquet"))
_COMPRESSION_NAME = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}
_BOM = b"\xef\xbb\xbf"


def _check_magic(path: Path, head: bytes) -> None:
    """A compressed or parquet file whose name does not say so: name what it is, not "not UTF-8"."""
    for magic, what, suffix in _MAGIC:
        if head.startswith(magic):
            hint = "or pass --run-format parquet (format='parquet')" if suffix == ".parquet" else "or decompress it"
            raise InputFileError(f"{path}: this file is {what}: name it {path.name}{suffix} {hint}.")


def _read_error(path: Path, exc: BaseException) -> InputFileError:
    """A failed read of a (compressed) run file, said as what the user can do."""
    kind = _COMPRESSION_NAME.get(path.suffix.lower())
    text = str(exc) or type(exc).__name__
    if kind is None or (isinstance(exc, OSError) and exc.errno is not None):  # permissions, missing, ...
        return InputFileError(f"{path}: cannot read ({text}).")
    magic = {"gzip": b"\x1f\x8b", "bzip2": b"BZh", "xz": b"\xfd7zXZ\x00"}[kind]
    try:
        with open(path, "rb") as fh:
            is_kind = fh.read(len(magic)) == magic
    except OSError:
        is_kind = False
    if not is_kind:
        return InputFileError(f"{path}: cannot read it as {kind} ({text}): is it really {path.suffix} compressed? "
                              f"Rename it without {path.suffix} if it is plain text.")
    lib = {"gzip": "zlib", "bzip2": "bz2", "xz": "lzma"}[kind]
    return InputFileError(f"{path}: the {kind} stream is corrupt or truncated ({lib}: {text}); re-create or "
                          "re-download it.")


def _read_bytes(path: Path, opener: Callable[..., Any] | None) -> bytes:
    import zlib

    try:
        if opener is None:
            data = path.read_bytes()
            _check_magic(path, data[:8])
        else:
            with opener(path, "rb") as fh:
                data = fh.read()
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise _read_error(path, exc) from None
    if data.startswith(_BOM):
        data = data[3:]
    _check_bom(data, path)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputFileError(
            f"{path}, line {line}: bytes that are not UTF-8 ({data[exc.start:exc.start + 4]!r}); "
            "re-save the run file as UTF-8."
        ) from None
    return data


def _check_bom(data: bytes, path: Any, offset_lines: int = 0) -> None:
    """A byte-order mark after the file's first bytes (e.g. two files concatenated) would become part of an
    id: refuse it, naming the line (``offset_lines`` lines precede ``data`` in the file)."""
    at = data.find(_BOM)
    if at < 0:
        return
    line = offset_lines + data[:at].count(b"\n") + 1
    start = at == 0 or data[at - 1:at] == b"\n"
    where = "starts with" if start else "holds"
    raise InputFileError(f"{path}, line {line} {where} a byte-order mark (U+FEFF): files were concatenated? strip "
                         "it (only the file's first bytes may carry one).")


def _choose(names: list[Any], colmap: Mapping[str, str], source: str) -> dict[str, Any]:
    """ragcov column -> the source's column, from ``colmap`` or the recognised names; raise if lacking."""
    lower: dict[str, Any] = {}
    for c in names:
        lower.setdefault(str(c).strip().lower(), c)
    chosen: dict[str, Any] = {}
    for ours, known in COLUMN_NAMES.items():
        if ours in colmap:
            if colmap[ours] not in names:
                raise InputFileError(f"{source}: `columns` maps {ours!r} to {colmap[ours]!r}, which is not a column; "
                                     f"found {[str(c) for c in names]}.")
            chosen[ours] = colmap[ours]
            continue
        for n in known:
            if n in lower:
                chosen[ours] = lower[n]
                break
    missing = [c for c in ("query-id", "corpus-id") if c not in chosen]
    if not ("rank" in chosen or "score" in chosen):
        missing.append("score or rank")
    if missing:
        raise InputFileError(
            f"{source}: no column for {missing}; found {[str(c) for c in names]}. A run needs a query id "
            f"({'/'.join(COLUMN_NAMES['query-id'][:3])}), a document id ({'/'.join(COLUMN_NAMES['corpus-id'][:4])}) "
            "and a score and/or rank; map other names with columns='query-id=QCOL,corpus-id=DCOL' (--columns)."
        )
    return chosen


def _pick_columns(df: pd.DataFrame, colmap: Mapping[str, str], source: str, fmt: str,
                  row_label: Callable[[int], str] | None = None) -> pd.DataFrame:
    """Rename recognised (or mapped) columns to ragcov's names; keep only those."""
    chosen = _choose(list(df.columns), colmap, source)
    out = pd.DataFrame({ours: df[theirs] for ours, theirs in chosen.items()})
    out.attrs["_row_label"] = row_label
    return out


# ==================================================================================== readers
def _read_parquet(path: Path, colmap: Mapping[str, str], order: str | None = None) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types
        raise InputFileError(f"{path}: not a readable parquet file ({exc}).") from exc
    meta = (table.schema.metadata or {}).get(_META_KEY)
    attrs = json.loads(meta) if meta else {}
    where = f"{path} (format parquet)"
    frame = _pick_columns(table.to_pandas(), colmap, where, "parquet", lambda i: f"row {i}")
    return _normalise(frame, source=where, fmt="parquet", attrs=attrs, path=str(path), order=order)


def _read_trec(data: bytes, where: str) -> pd.DataFrame:
    """TREC lines through Arrow's CSV reader; any irregular file goes to the line-by-line reader,
    which names the offending line."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    clean = _clean_trec(data)
    names = ["qid", "q0", "docid", "rank", "score", "tag"]
    try:
        table = pacsv.read_csv(
            io.BytesIO(clean),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                                             newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={"qid": pa.string(), "q0": pa.string(), "docid": pa.string(), "rank": pa.float64(),
                              "score": pa.float64(), "tag": pa.string()},
                strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[]),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return _read_trec_lines(data, where)  # raises with the line
    if table.num_rows == 0:
        raise InputFileError(f"{where}: no run lines found; expected {_TREC_FIELDS} lines.")
    tags = table.column("tag").unique().to_pylist()
    frame = pd.DataFrame({
        "query-id": table.column("qid").to_pandas(),
        "corpus-id": table.column("docid").to_pandas(),
        "rank": table.column("rank").to_numpy(),
        "score": table.column("score").to_numpy(),
    })
    frame.attrs["tag"] = tags[0] if len(tags) == 1 else sorted(tags)
    frame.attrs["_row_label"] = _line_labels(data)
    return frame


def _clean_trec(data: bytes) -> bytes:
    """TREC lines with single spaces between fields and none around them, for Arrow's CSV reader."""
    clean = data.replace(b"\r\n", b"\n") if b"\r" in data else data
    if b"\t" in clean:
        clean = clean.replace(b"\t", b" ")
    if b"  " in clean:
        clean = re.sub(rb" {2,}", b" ", clean)
    if clean[:1] == b" " or b"\n " in clean or b" \n" in clean or clean.endswith(b" "):
        clean = re.sub(rb"(?m)^ +| +$", b"", clean)
    return clean


def _line_labels(data: bytes, skip: int = 0, first_line: int = 1) -> Callable[[int], str]:
    """Row -> "line N" for files whose empty lines were skipped, after ``skip`` non-empty lines (a
    header); computed only when an error needs it."""
    def label(row: int) -> str:
        n = -1 - skip
        for no, ln in enumerate(data.split(b"\n"), start=first_line):
            if ln.strip():
                n += 1
                if n == row:
                    return f"line {no}"
        return f"row {row}"
    return label


def _read_trec_lines(data: bytes, where: str, first_line: int = 1) -> pd.DataFrame:
    q, d, r, s, tags = [], [], [], [], set()
    lines: list[int] = []
    for no, raw in enumerate(data.decode("utf-8").split("\n"), start=first_line):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        f = line.split()
        if len(f) != 6:
            hint = ""
            if len(f) < 6 and line.count(",") >= 2:
                name = where.split(" (format", 1)[0]
                hint = (f" {name} has comma-separated lines: rename it .csv or pass --run-format csv "
                        "(format='csv').")
            raise InputFileError(f"{where}, line {no}: expected 6 fields {_TREC_FIELDS}, got {len(f)}: {line!r}."
                                 + hint)
        try:
            rank = float(f[3])
        except ValueError:
            raise InputFileError(f"{where}, line {no}: rank {f[3]!r} is not a number ({_TREC_FIELDS}).") from None
        try:
            score = float(f[4])
        except ValueError:
            raise InputFileError(f"{where}, line {no}: score {f[4]!r} is not a number ({_TREC_FIELDS}).") from None
        q.append(f[0]); d.append(f[2]); r.append(rank); s.append(score); tags.add(f[5]); lines.append(no)
    if not q:
        raise InputFileError(f"{where}: no run lines found; expected {_TREC_FIELDS} lines.")
    frame = pd.DataFrame({"query-id": q, "corpus-id": d, "rank": r, "score": s})
    frame.attrs["tag"] = sorted(tags)[0] if len(tags) == 1 else sorted(tags)
    frame.attrs["_row_label"] = lambda i: f"line {lines[i]}"
    return frame


def _read_delimited(data: bytes, sep: str, colmap: Mapping[str, str], where: str) -> pd.DataFrame:
    import csv

    import pyarrow as pa
    import pyarrow.csv as pacsv

    first = next((ln for ln in data.split(b"\n", 64) if ln.strip()), b"").decode("utf-8").rstrip("\r")
    header = next(csv.reader([first], delimiter=sep), [])
    if len(header) < 2:
        _refuse_delimiter(first, sep, where)
    chosen = _choose(header, colmap, where)
    ids = {chosen["query-id"], chosen["corpus-id"]}  # ids stay text ("007" is not 7)
    try:
        table = pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=sep, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={c: pa.string() for c in ids}, include_columns=list(chosen.values()),
                strings_can_be_null=False, null_values=[""], auto_dict_encode=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        msg = str(exc).split("\n")[0]
        raise InputFileError(
            f"{where}: not a {'CSV' if sep == ',' else 'TSV'} table with a header ({msg}); every line needs the "
            "header's number of fields."
        ) from None
    if table.num_rows == 0:
        raise InputFileError(f"{where}: no rows under the header {header}.")
    df = pd.DataFrame({ours: table.column(theirs).to_pandas() for ours, theirs in chosen.items()})
    df.attrs["_row_label"] = _line_labels(data, skip=1)  # the header, and blank lines, are not rows
    return df


def _refuse_delimiter(first: str, sep: str, where: str) -> None:
    """A one-column header: the lines are split by another delimiter than the suffix (or format) says."""
    name = where.split(" (format", 1)[0]
    if "\t" in first and sep != "\t":
        raise InputFileError(f"{name} has tab-separated lines: rename it .tsv or pass --run-format tsv "
                             "(format='tsv').")
    if "," in first and sep != ",":
        raise InputFileError(f"{name} has comma-separated lines: rename it .csv or pass --run-format csv "
                             "(format='csv').")
    if len(first.split()) == 6:
        raise InputFileError(f"{name} has space-separated lines of 6 fields (a TREC run, {_TREC_FIELDS}): rename it "
                             ".trec or pass --run-format trec (format='trec').")


def _read_json(data: bytes, fmt: str, colmap: Mapping[str, str], where: str) -> pd.DataFrame:
    text = data.decode("utf-8")
    if fmt == "json":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data":  # one object a line: JSON Lines
                return _read_json(data, "jsonl", colmap, where.replace("format json", "format jsonl"))
            raise InputFileError(f"{where}, line {exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno}).") from None
        if isinstance(obj, Mapping):
            return _from_mapping(obj, where)
        if isinstance(obj, list) and all(isinstance(r, Mapping) for r in obj):
            return _pick_columns(pd.DataFrame(obj), colmap, where, "json", lambda i: f"record {i + 1}")
        raise InputFileError(
            f"{where}: expected {{qid: {{docid: score}}}}, {{qid: [docid, ...]}} or a list of records; "
            f"got a JSON {type(obj).__name__}."
        )
    records, lines = [], []
    for no, line in enumerate(text.split("\n"), start=1):  # JSON Lines: records end at \n only
        line = line.rstrip("\r")
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFileError(f"{where}, line {no}: not valid JSON ({exc.msg}, column {exc.colno}).") from None
        if not isinstance(rec, Mapping):
            raise InputFileError(f"{where}, line {no}: expected a JSON object with run columns, got "
                                 f"{type(rec).__name__}.")
        records.append(rec)
        lines.append(no)
    if not records:
        raise InputFileError(f"{where}: no records found.")
    return _pick_columns(pd.DataFrame(records), colmap, where, "jsonl", lambda i: f"line {lines[i]}")


def _from_mapping(obj: Mapping[str, Any], where: str) -> pd.DataFrame:
    """``{qid: {docid: score}}`` (pytrec_eval / ranx) or ``{qid: [docid, ...]}`` (ranked, rank-only)."""
    q, d, v = [], [], []
    by_rank = None
    for qid, docs in obj.items():
        if isinstance(docs, Mapping):
            kind = False
            items = docs.items()
        elif isinstance(docs, (list, tuple)):
            kind = True
            items = ((doc, i) for i, doc in enumerate(docs, start=1))
        else:
            raise InputFileError(f"{where}: query {qid!r} maps to a {type(docs).__name__}; expected "
                                 "{docid: score} or [docid, ...].")
        if by_rank is not None and kind != by_rank:
            raise InputFileError(f"{where}: query {qid!r} mixes the {{docid: score}} and [docid, ...] layouts; "
                                 "use one for every query.")
        by_rank = kind
        for doc, val in items:
            q.append(str(qid)); d.append(doc); v.append(val)
    if not q:
        raise InputFileError(f"{where}: the run has no (query, document) entries.")
    frame = pd.DataFrame({"query-id": q, "corpus-id": d, ("rank" if by_rank else "score"): v})
    frame.attrs["_row_label"] = lambda i: f"entry ({q[i]!r}, {d[i]!r})"
    return frame


# ==================================================================================== bounded reading
#: Bytes of text parsed at a time by the bounded reader (``load_run(depth=...)``).
BLOCK_BYTES = 1 << 24


def _check_depth(depth: int | None) -> int | None:
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise RagcovError(f"`depth` must be a positive integer (rows kept a query) or None; got {depth!r}.")
    return int(depth)


def _top_mask(qcode: np.ndarray, key: np.ndarray, depth: int) -> np.ndarray:
    """Rows among their query's first ``depth`` by ``key`` (descending), or tied with its ``depth``-th."""
    from ragcov_data.ties import TIE_TOL

    n = len(qcode)
    if n == 0:
        return np.zeros(0, dtype=bool)
    idx = np.argsort(-key)  # by key, then stably by query (a radix sort when the codes fit 16 bits)
    qs = qcode[idx]
    if qcode.max() < 2**16:
        qs = qs.astype(np.uint16)
    idx = idx[np.argsort(qs, kind="stable")]
    qs = qcode[idx]
    starts = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]])
    sizes = np.diff(np.r_[starts, n])
    big = sizes >= depth
    if not big.any():
        return np.ones(n, dtype=bool)
    kth = np.full(int(qcode.max()) + 1, -np.inf)
    kth[qs[starts[big]]] = key[idx[starts[big] + depth - 1]]
    bound = kth[qcode]
    # ``ties.tied`` with some room: a row the tie policies could group with the depth-th is kept
    return key >= bound - 4 * TIE_TOL * np.maximum(1.0, np.abs(bound))


def _keep_depth(run: pd.DataFrame, depth: int | None) -> pd.DataFrame:
    """A run in normal form cut to ``depth`` rows a query plus ties (see :func:`load_run`)."""
    if depth is None:
        return run
    qcode = pd.factorize(run["query-id"])[0]
    mask = _top_mask(qcode, run["score"].to_numpy(dtype=np.float64), depth)
    out = run if mask.all() else run[mask].reset_index(drop=True)
    out.attrs = {**run.attrs, "depth": depth, "rows_read": len(run)}
    return out


def _head(path: Path, opener: Callable[..., Any] | None, size: int = 1 << 16) -> bytes:
    import zlib

    try:
        with (opener(path, "rb") if opener else open(path, "rb")) as fh:
            head = fh.read(size)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise _read_error(path, exc) from None
    if opener is None:
        _check_magic(path, head)
    return head[3:] if head.startswith(_BOM) else head


def _iter_blocks(path: Path, opener: Callable[..., Any] | None, size: int | None = None):
    """``(bytes, first line number)`` blocks of whole lines; the byte-order mark, compression and UTF-8
    checks of :func:`_read_bytes`, block by block."""
    import zlib

    size = size or BLOCK_BYTES
    carry, line, first = b"", 1, True
    try:
        fh = opener(path, "rb") if opener else open(path, "rb")
    except OSError as exc:
        raise _read_error(path, exc) from None
    with fh:
        while True:
            try:
                chunk = fh.read(size)
            except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
                raise _read_error(path, exc) from None
            if first:
                if opener is None:
                    _check_magic(path, chunk[:8])
                if chunk.startswith(_BOM):
                    chunk = chunk[3:]
                first = False
            if not chunk:
                if carry:
                    _check_text(carry, path, line)
                    yield carry, line
                return
            buf = carry + chunk if carry else chunk
            del chunk
            cut = buf.rfind(b"\n")
            if cut < 0:
                carry = buf
                continue
            if cut == len(buf) - 1:
                block, carry = buf, b""
            else:
                block, carry = buf[: cut + 1], buf[cut + 1:]
            del buf
            _check_text(block, path, line)
            n_lines = block.count(b"\n")
            yield block, line
            del block
            line += n_lines


def _check_text(block: bytes, path: Path, line: int) -> None:
    _check_bom(block, path, offset_lines=line - 1)
    try:
        block.decode("utf-8")
    except UnicodeDecodeError as exc:
        no = line + block[: exc.start].count(b"\n")
        raise InputFileError(f"{path}, line {no}: bytes that are not UTF-8 ({block[exc.start:exc.start + 4]!r}); "
                             "re-save the run file as UTF-8.") from None


def _read_streamed(path: Path, opener: Callable[..., Any] | None, fmt: str, colmap: Mapping[str, str], where: str,
                   depth: int, order: str | None) -> pd.DataFrame:
    """TREC / CSV / TSV read block by block into typed columns (ids dictionary-encoded, numbers float64),
    every row checked, each block cut to ``depth`` rows a query plus ties; then the kept rows are cut
    again across blocks and put in normal form. Peak memory: one block, a 64-bit key of every row's
    (query, document) pair (8 bytes a row, for the repeated-pair check) and the rows kept."""
    import pyarrow as pa

    q_seen: list[Any] = []  # each block's query ids, in order of first appearance
    pair_keys: list[np.ndarray] = []  # a 64-bit hash of every row's (query, document): 8 bytes a row
    kept: list[pd.DataFrame] = []
    tags: set[str] = set()
    chosen: dict[str, Any] | None = None
    n_rows, header_line = 0, 0
    for data, first_line in _iter_blocks(path, opener):
        if not data.strip():
            continue
        if fmt == "trec":
            table = _trec_block(data, where, first_line)
            tags.update(table.column("tag").chunk(0).dictionary.to_pylist() if table.num_rows else [])
            cols = {"query-id": "qid", "corpus-id": "docid", "rank": "rank", "score": "score"}
            skip = 0
        else:
            if chosen is None:
                data, first_line, header_line, chosen = _split_header(data, first_line, fmt, colmap, where)
                if chosen is None:
                    continue  # blank lines before the header
            if not data.strip():
                continue
            table = _delimited_block(data, first_line, fmt, chosen, where)
            cols, skip = chosen, 0
        if table.num_rows == 0:
            continue
        labels = _line_labels(data, skip=skip, first_line=first_line)
        q = table.column(cols["query-id"]).chunk(0)
        d = table.column(cols["corpus-id"]).chunk(0)
        for name, arr in (("query-id", q), ("corpus-id", d)):
            if arr.null_count:
                i = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
                raise InputFileError(f"{where}, {labels(i)}: empty `{name}`; every row needs one.")
        score = rank = None
        if "score" in cols:
            score = _number_column(pd.Series(table.column(cols["score"]).to_numpy()), "score", where, labels)
        if "rank" in cols:
            raw = table.column(cols["rank"]).to_numpy()
            try:
                rank = _number_column(pd.Series(raw), "rank", where, labels, integer=True)
            except InputFileError:
                if score is not None:
                    qid = pd.Series(q.dictionary.to_numpy(zero_copy_only=False)[q.indices.to_numpy()])
                    _refuse_swapped(pd.Series(raw), score, qid, fmt, where, labels)
                raise
        key = -rank.astype(np.float64) if score is None or (order == "rank" and rank is not None) else score
        rows = np.flatnonzero(_top_mask(q.indices.to_numpy().astype(np.int64), key, depth))
        take = pa.array(rows)
        part = {"query-id": q.take(take).dictionary_decode().to_pandas(),
                "corpus-id": d.take(take).dictionary_decode().to_pandas()}
        if rank is not None:
            part["rank"] = rank[rows]
        if score is not None:
            part["score"] = score[rows]
        part["_row"] = n_rows + rows
        kept.append(pd.DataFrame(part))
        q_seen.append(q.dictionary)
        pair_keys.append(_pair_keys(q, d))
        n_rows += table.num_rows
        del data, table, part, key, score, rank, labels
    if n_rows == 0:
        raise InputFileError(f"{where}: no run lines found; expected {_TREC_FIELDS} lines." if fmt == "trec"
                             else f"{where}: no rows under the header.")
    _check_pairs(np.concatenate(pair_keys), path, opener, where, header_line, fmt, chosen)
    del pair_keys
    frame = pd.concat(kept, ignore_index=True)
    # queries in order of first appearance in the file (as without depth), rows in file order within each
    queries = pd.unique(np.concatenate([a.to_numpy(zero_copy_only=False) for a in q_seen]))
    first_seen = pd.Index(queries).get_indexer(frame["query-id"])
    frame = frame.iloc[np.argsort(first_seen, kind="stable")].reset_index(drop=True)
    by_rank = "rank" in frame and ("score" not in frame or order == "rank")
    key = -frame["rank"].to_numpy(np.float64) if by_rank else frame["score"].to_numpy()
    frame = frame[_top_mask(pd.factorize(frame["query-id"])[0], key, depth)].reset_index(drop=True)
    rows = frame.pop("_row").to_numpy()
    frame.attrs["_row_label"] = lambda i: _lines_of(path, opener, [int(rows[i])], header_line)[0]
    attrs: dict[str, Any] = {"depth": depth, "rows_read": n_rows}
    if fmt == "trec":
        attrs["tag"] = sorted(tags)[0] if len(tags) == 1 else sorted(tags)
    return _normalise(frame, source=where, fmt=fmt, attrs=attrs, path=str(path), order=order)


def _dict_type() -> Any:
    import pyarrow as pa

    return pa.dictionary(pa.int32(), pa.string())


def _trec_block(data: bytes, where: str, first_line: int) -> Any:
    """One block of TREC lines as a table (ids and tag dictionary-encoded); a malformed line is named."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = ["qid", "q0", "docid", "rank", "score", "tag"]
    try:
        table = pacsv.read_csv(
            io.BytesIO(_clean_trec(data)),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                                             newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={"qid": _dict_type(), "docid": _dict_type(), "rank": pa.float64(),
                              "score": pa.float64(), "tag": _dict_type()},
                include_columns=["qid", "docid", "rank", "score", "tag"],
                strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[]),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        _read_trec_lines(data, where, first_line)  # raises with the line
        raise InputFileError(f"{where}: unreadable TREC lines near line {first_line} ({exc}).") from None
    return table.unify_dictionaries().combine_chunks()


def _split_header(data: bytes, first_line: int, fmt: str, colmap: Mapping[str, str], where: str
                  ) -> tuple[bytes, int, int, dict[str, Any] | None]:
    """The header of a CSV/TSV file: (rows after it, their first line, the header's line, columns)."""
    import csv

    sep = "," if fmt == "csv" else "\t"
    lines = data.split(b"\n")
    for i, ln in enumerate(lines):
        if ln.strip():
            first = ln.decode("utf-8").rstrip("\r")
            header = next(csv.reader([first], delimiter=sep), [])
            if len(header) < 2:
                _refuse_delimiter(first, sep, where)
            chosen = {**_choose(header, colmap, where), "_names": header}
            return b"\n".join(lines[i + 1:]), first_line + i + 1, first_line + i, chosen
    return b"", first_line + len(lines) - 1, 0, None


def _delimited_block(data: bytes, first_line: int, fmt: str, chosen: Mapping[str, Any], where: str) -> Any:
    """One block of CSV/TSV rows (no header) as a table: ids dictionary-encoded, numbers float64."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    sep = "," if fmt == "csv" else "\t"
    names = [str(c) for c in chosen["_names"]]
    ours = {k: str(v) for k, v in chosen.items() if k != "_names"}
    types = {ours["query-id"]: _dict_type(), ours["corpus-id"]: _dict_type()}
    for col in ("rank", "score"):
        if col in ours:
            types[ours[col]] = pa.float64()

    def read(column_types):
        return pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(delimiter=sep, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(column_types=column_types, include_columns=list(ours.values()),
                                                 strings_can_be_null=False, null_values=[""],
                                                 auto_dict_encode=False))

    try:
        return read(types).unify_dictionaries().combine_chunks()
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        msg = str(exc).split("\n")[0]
    try:  # numbers as text: the number checks name the row
        table = read({c: (pa.string() if t == pa.float64() else t) for c, t in types.items()})
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        raise InputFileError(
            f"{where}: not a {'CSV' if sep == ',' else 'TSV'} table with a header ({msg}) near line {first_line}; "
            "every line needs the header's number of fields."
        ) from None
    labels = _line_labels(data, first_line=first_line)
    for col in ("score", "rank"):
        if col in ours:
            _number_column(table.column(ours[col]).to_pandas(), col, where, labels, integer=col == "rank")
    raise InputFileError(f"{where}: unreadable rows near line {first_line} ({msg}).")


def _hash_strings(values: Any) -> np.ndarray:
    """64-bit hashes of an Arrow string array (pandas' SipHash, fixed key: the same string, the same hash)."""
    return pd.util.hash_array(values.to_numpy(zero_copy_only=False), categorize=False)


def _pair_keys(q: Any, d: Any) -> np.ndarray:
    """A 64-bit key of each row's (query id, document id), from the hashes of the block's dictionaries."""
    hq = _hash_strings(q.dictionary)[q.indices.to_numpy()]
    hd = _hash_strings(d.dictionary)[d.indices.to_numpy()]
    hq *= np.uint64(0x9E3779B97F4A7C15)  # wraps mod 2**64: mixes the query's hash before the document's joins
    hq ^= hd
    return hq


def _check_pairs(keys: np.ndarray, path: Path, opener: Callable[..., Any] | None, where: str, header_line: int,
                 fmt: str, chosen: Mapping[str, Any] | None) -> None:
    """A document listed twice for one query, over every row read (not only the rows kept): equal keys
    are confirmed on the rows' text, so a hash collision never refuses a run."""
    ordered = np.sort(keys)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return
    rows = np.flatnonzero(np.isin(keys, ordered[1:][same]))
    del ordered, same
    text = _rows_text(path, opener, [int(r) for r in rows], header_line)
    seen: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        seen.setdefault(_ids_of(text[int(r)][1], fmt, chosen), []).append(int(r))
    repeated = [v for v in seen.values() if len(v) > 1]
    if not repeated:
        return
    first = min(repeated, key=lambda v: v[1])  # the first repetition in file order, as without depth
    q, d = _ids_of(text[first[0]][1], fmt, chosen)
    n_dup = sum(len(v) - 1 for v in repeated)
    raise InputFileError(
        f"{where}: document {d!r} is listed {len(first)} times for query {q!r} (line {text[first[0]][0]} and line "
        f"{text[first[1]][0]}; {n_dup} repeated pair(s) in all); keep one line per (query, document) pair. A file "
        "holding several systems' runs (e.g. an ENGINE column) must be split into one run each."
    )


def _ids_of(line: str, fmt: str, chosen: Mapping[str, Any] | None) -> tuple[str, str]:
    """(query id, document id) of one data line, as the block reader parses it."""
    if fmt == "trec":
        f = line.split()
        return f[0], f[2]
    import csv

    assert chosen is not None
    names = [str(c) for c in chosen["_names"]]
    f = next(csv.reader([line], delimiter="," if fmt == "csv" else "\t"))
    return f[names.index(str(chosen["query-id"]))], f[names.index(str(chosen["corpus-id"]))]


def _rows_text(path: Path, opener: Callable[..., Any] | None, rows: list[int], header_line: int
               ) -> dict[int, tuple[int, str]]:
    """``{row: (line number, text)}`` of data rows (0-based; blank lines and the header not counted)."""
    want, out, n = set(rows), {}, -1
    for data, first_line in _iter_blocks(path, opener):
        for no, ln in enumerate(data.split(b"\n"), start=first_line):
            if no <= header_line or not ln.strip():
                continue
            n += 1
            if n in want:
                out[n] = (no, ln.decode("utf-8").rstrip("\r"))
        if n >= max(rows):
            break
    return out


def _lines_of(path: Path, opener: Callable[..., Any] | None, rows: list[int], header_line: int) -> list[str]:
    """``"line N"`` of data rows (0-based, blank lines and the header not counted), by reading the file again."""
    text = _rows_text(path, opener, rows, header_line)
    return [f"line {text[r][0]}" if r in text else f"row {r}" for r in rows]


# ==================================================================================== normal form
def _normalise(frame: pd.DataFrame, *, source: str, fmt: str, attrs: Mapping[str, Any] | None = None,
               path: str | None = None, order: str | None = None) -> pd.DataFrame:
    """Validate ids, scores, ranks and pairs; fill a missing score or rank; order rows."""
    label = frame.attrs.get("_row_label") or (lambda i: f"row {i}")
    by = _check_order(order if order is not None else (attrs or {}).get("order"))
    n = len(frame)
    if n == 0:
        raise InputFileError(f"{source}: the run has no rows; nothing to evaluate.")
    qid = _id_column(frame["query-id"], "query-id", source, label)
    did = _id_column(frame["corpus-id"], "corpus-id", source, label)
    has_score, has_rank = "score" in frame.columns, "rank" in frame.columns
    score = _number_column(frame["score"], "score", source, label) if has_score else None
    rank = None
    if has_rank:
        try:
            rank = _number_column(frame["rank"], "rank", source, label, integer=True)
        except InputFileError:
            if score is not None:
                _refuse_swapped(frame["rank"], score, qid, fmt, source, label)
            raise

    qcode, quniq = pd.factorize(qid)
    dcode, duniq = pd.factorize(did, sort=True)  # codes ascending in id order (byte-wise for UTF-8)
    pair = qcode.astype(np.int64) * np.int64(len(duniq)) + dcode
    dup = pd.Series(pair).duplicated().to_numpy()  # hashing: cheaper than sorting 5M pairs
    if dup.any():
        first = pair[dup][0]
        rows = np.flatnonzero(pair == first)
        q, d = quniq[first // len(duniq)], duniq[first % len(duniq)]
        raise InputFileError(
            f"{source}: document {d!r} is listed {len(rows)} times for query {q!r} ({label(int(rows[0]))} and "
            f"{label(int(rows[1]))}; {int(dup.sum())} repeated pair(s) in all); keep one line per (query, document) "
            "pair. A file holding several systems' runs (e.g. an ENGINE column) must be split into one run each."
        )
    score_from = "file" if has_score else "rank"
    if has_score and has_rank:
        if by == "rank":  # the user says the file's ranks are the order (e.g. scores are distances)
            score, score_from = None, "rank"
        elif by is None:
            _check_rank_agrees(qcode, rank, score, source)
    if score is None:
        score = -rank.astype(np.float64)  # rank-only: equal ranks tie
    order = _trec_order(qcode, score, dcode)
    if rank is None:
        q_sorted = qcode[order]
        starts = np.searchsorted(q_sorted, q_sorted, side="left")
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n) - starts + 1
    out = pd.DataFrame({
        "query-id": take_str(qid, order),
        "corpus-id": take_str(did, order),
        "rank": np.asarray(rank, dtype=np.int64)[order],
        "score": np.asarray(score, dtype=np.float64)[order],
    })
    out.attrs.update({k: v for k, v in (attrs or {}).items() if not str(k).startswith("_")})
    out.attrs.setdefault("format", fmt)
    if path is not None:
        out.attrs["source"] = path
    out.attrs["rank_from"] = "file" if has_rank else "score"
    out.attrs["score_from"] = score_from
    if by is not None:
        out.attrs["order"] = by
    return out


#: Orders a run with both ranks and scores can be read in (``None``: trec_eval's, by score, checked).
ORDERS = ("score", "rank")


def _check_order(order: str | None) -> str | None:
    if order is not None and order not in ORDERS:
        raise RagcovError(f"`order` must be 'score' (higher = better, trec_eval's), 'rank' (the file's ranks) or "
                          f"None; got {order!r}.")
    return order


def _check_rank_agrees(qcode: np.ndarray, rank: np.ndarray, score: np.ndarray, source: str) -> None:
    """Refuse a run whose scores rise with its ranks in most queries (a distance read as a similarity
    would be silently reversed). A query *rises* when, in rank order, its score never falls and rises at
    least once; queries whose ranks or scores are all equal say nothing."""
    n = len(qcode)
    if n < 2:
        return
    same_q = qcode[1:] == qcode[:-1]
    if not ((qcode[1:] >= qcode[:-1]) & (~same_q | (rank[1:] >= rank[:-1]))).all():
        idx = np.lexsort((rank, qcode))  # stable: rows in rank order within each query
        qcode, rank, score = qcode[idx], rank[idx], score[idx]
        same_q = qcode[1:] == qcode[:-1]
    step = same_q & (rank[1:] > rank[:-1])
    dscore = score[1:] - score[:-1]
    nq = int(qcode.max()) + 1
    up = np.bincount(qcode[1:][step & (dscore > 0)], minlength=nq)
    down = np.bincount(qcode[1:][step & (dscore < 0)], minlength=nq)
    informative = (up + down) > 0
    m = int(informative.sum())
    rising = int(((up > 0) & (down == 0)).sum())
    if m and rising * 2 > m:
        pct = int(100 * rising / m)
        raise InputFileError(
            f"{source}: scores rise with rank in {pct}% of queries ({rising:,} of {m:,}; a distance?): pass "
            "--order rank (order='rank') to order by the file's ranks, or --order score (order='score') to order "
            "by score (higher = better)."
        )


def _refuse_swapped(rank_col: pd.Series, score: np.ndarray, qid: pd.Series, fmt: str, source: str,
                    label: Callable[[int], str]) -> None:
    """Non-integer ranks beside scores that are each query's integers 1..n: the two columns are swapped."""
    r = pd.to_numeric(rank_col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    nonint = np.isfinite(r) & (r != np.round(r))
    if not nonint.any() or not np.all(np.isfinite(score) & (score == np.round(score))):
        return
    g = pd.Series(score).groupby(pd.factorize(qid)[0])
    if not ((g.size() > 1).any() and (g.min() == 1).all() and (g.max() == g.size()).all()
            and (g.nunique() == g.size()).all()):
        return
    i = int(np.flatnonzero(nonint)[0])
    cols = "columns 4 and 5" if fmt == "trec" else "columns `rank` and `score`"
    layout = f" (a TREC line is {_TREC_FIELDS})" if fmt == "trec" else ""
    raise InputFileError(
        f"{source}: {cols} look swapped (rank, score): ranks are non-integers such as {_plain(rank_col.iloc[i])!r} "
        f"({label(i)}) while scores are each query's integers 1..n{layout}; swap the two columns."
    )


#: The dtype pandas gives a column of str (Arrow-backed from pandas 3 on; else ``object``).
_STR_DTYPE = pd.Series(["x"]).dtype


def _trec_order(qcode: np.ndarray, score: np.ndarray, dcode: np.ndarray) -> np.ndarray:
    """Row order: query (first appearance), score descending, id descending (trec_eval). A file already
    in that order (the usual case for a run written by a retriever) costs one pass, not a sort."""
    same_q = qcode[1:] == qcode[:-1]
    ok = (qcode[1:] >= qcode[:-1]) & (~same_q | (score[1:] < score[:-1])
                                      | ((score[1:] == score[:-1]) & (dcode[1:] < dcode[:-1])))
    if ok.all():
        return np.arange(len(qcode))
    return np.lexsort((-dcode, -score, qcode))


def take_str(values: Any, idx: np.ndarray) -> Any:
    """``values[idx]`` as a column of pandas' own str dtype; with Arrow-backed strings, gathered in
    Arrow (no Python string objects for the many rows of a run)."""
    if getattr(_STR_DTYPE, "storage", None) == "pyarrow":
        import pyarrow as pa

        return pd.array(pa.array(values, type=pa.large_string()).take(idx), dtype=_STR_DTYPE)
    return np.asarray(values, dtype=object)[idx]


def _id_column(col: pd.Series, name: str, source: str, label: Callable[[int], str]) -> pd.Series:
    s = col if isinstance(col, pd.Series) else pd.Series(col)
    if s.dtype == object:  # JSON: an object or list would be stringified and never match the task's ids
        nested = np.fromiter((isinstance(x, (dict, list, tuple)) for x in s.tolist()), dtype=bool, count=len(s))
        if nested.any():
            i = int(np.flatnonzero(nested)[0])
            kind = "object" if isinstance(s.iloc[i], dict) else "list"
            what = "query id" if name == "query-id" else "document id"
            raise InputFileError(f"{source}, {label(i)}: {what} is a JSON {kind} ({_short(s.iloc[i])}), expected a "
                                 f"string or number ({int(nested.sum())} such row(s)).")
    if s.isna().any():
        i = int(np.flatnonzero(s.isna().to_numpy())[0])
        raise InputFileError(f"{source}, {label(i)}: empty `{name}`; every row needs one.")
    if s.dtype.kind == "f":  # numeric ids read from parquet/JSON: as text, integers without ".0"
        s = pd.Series([_num_id(x) for x in s.tolist()], dtype=object)
    s = s.astype(str)
    empty = s.str.strip().str.len().to_numpy() == 0
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise InputFileError(f"{source}, {label(i)}: empty `{name}`; every row needs one.")
    return s.reset_index(drop=True)


def _short(x: Any, n: int = 40) -> str:
    text = json.dumps(x, ensure_ascii=False, default=str)
    return text if len(text) <= n else text[: n - 3] + "..."


def _num_id(x: Any) -> str:
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def _number_column(col: pd.Series, name: str, source: str, label: Callable[[int], str],
                   integer: bool = False) -> np.ndarray:
    num = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(num)
    if integer:
        bad |= np.where(np.isfinite(num), num != np.round(num), False)
    if integer and not bad.any():
        huge = np.abs(num) >= _MAX_RANK
        if huge.any():
            i = int(np.flatnonzero(huge)[0])
            raise InputFileError(
                f"{source}, {label(i)}: `{name}` {_int_text(col.iloc[i])} is too large: ranks must be integers of "
                f"magnitude below 2**53 = {_MAX_RANK:,} (beyond it distinct ranks merge, and past 2**63 they "
                f"overflow); renumber the ranks 1..n ({int(huge.sum())} such row(s))."
            )
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = "an integer" if integer else "a finite number"
        hint = (" Drop the column to have ranks computed from the scores." if integer
                else " Drop the column to have a rank-only run ordered by rank.")
        raise InputFileError(
            f"{source}, {label(i)}: `{name}` {_plain(col.iloc[i])!r} is not {what} ({int(bad.sum())} such row(s)).{hint}"
        )
    return num.astype(np.int64) if integer else num


#: Ranks are kept as int64 and compared as float64 (``score = -rank``): exact below 2**53.
_MAX_RANK = 2**53


def _int_text(v: Any) -> str:
    v = _plain(v)
    return str(int(v)) if isinstance(v, float) and v.is_integer() else repr(v)


def _plain(v: Any) -> Any:
    """A numpy scalar as the Python value, so messages show ``1.5``, not ``np.float64(1.5)``."""
    return v.item() if isinstance(v, np.generic) else v
