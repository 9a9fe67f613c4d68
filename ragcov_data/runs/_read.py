"""Run files as written: format detection (suffix, content, compression, byte-order marks), column choice
and the whole-file readers (TREC, CSV/TSV, parquet, JSON). :func:`ragcov_data.runs.load_run` calls them;
the bounded reader (:mod:`._stream`) shares their checks."""
from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import re
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd

from ragcov_data.runs._mteb import is_mteb_predictions, mteb_predictions
from ragcov_data.runs._normal import _TREC_FIELDS, _normalise
from ragcov_data.errors import InputFileError, RagcovError, binary_kind

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
        binary = binary_kind(data[:8])
        if binary is not None:  # a PDF or an image named as a run: not text in another encoding
            raise InputFileError(f"{path}: this file is {binary[0]} (its first bytes are {data[:5]!r}), not a run; "
                                 "give the run file (TREC, CSV/TSV, JSON, parquet).") from None
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


def _read_json(data: bytes, fmt: str, colmap: Mapping[str, str], where: str,
               pick: tuple[str | None, str | None] = (None, None)) -> pd.DataFrame:
    """A JSON or JSON Lines run; an MTEB prediction file gives its (subset, split) ``pick``, its attrs in
    ``attrs["_mteb"]``."""
    text = data.decode("utf-8")
    if fmt == "json":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data":  # one object a line: JSON Lines
                return _read_json(data, "jsonl", colmap, where.replace("format json", "format jsonl"))
            raise InputFileError(f"{where}, line {exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno}).") from None
        if is_mteb_predictions(obj):
            run, attrs = mteb_predictions(obj, where, *pick)
            frame = _from_mapping(run, where)
            frame.attrs["_mteb"] = attrs
            return frame
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
