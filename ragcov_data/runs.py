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
from ragcov_data._runs_normal import _TREC_FIELDS, ORDERS, _check_order, _normalise, take_str  # noqa: F401
from ragcov_data.errors import InputFileError, RagcovError

RUN_COLUMNS = ["query-id", "corpus-id", "rank", "score"]
FORMATS = ("trec", "csv", "tsv", "parquet", "json", "jsonl")
PARQUET_SUFFIXES = (".parquet", ".pq")
COMPRESSION = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_SUFFIX_FORMAT = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
                  ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".trec": "trec", ".run": "trec"}
_META_KEY = b"ragcov.run"

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
    # bounded reading (``depth=``) lives in its own module, which reads this one's format helpers
    from ragcov_data._runs_stream import _check_depth, _head, _keep_depth, _read_streamed

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
    from ragcov_data._runs_stream import _lines_of

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
    for other in (";", "|"):  # European-locale spreadsheets write ';': its header is one column to a CSV reader
        if first.count(other) >= 2:
            raise InputFileError(
                f"{name} has {other!r}-separated lines (header {first[:60]!r}); ragcov reads runs separated by "
                f"commas (.csv) or tabs (.tsv), so --columns cannot find its columns either: re-save it with "
                f"commas (e.g. pandas.read_csv(path, sep={other!r}).to_csv(new_path, index=False)) or as a "
                "TREC run.")


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
