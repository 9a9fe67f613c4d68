"""Passage runs: what a pipeline returns (passages of text), not ragcov's chunk ids.

A *passage run* has one row per returned passage: ``query-id``, ``rank`` (1 = first), ``text``, optionally
``score`` and the hints a pipeline may report: ``doc_id`` (the task's document id), ``start_char`` and
``end_char`` (the passage's offsets in that document). It is read from JSON Lines, JSON (a list of records),
CSV/TSV, parquet, a DataFrame, or a ragas-style table (``user_input``: the question; ``retrieved_contexts``: the
list of passages, in rank order). A question whose pipeline call failed is a row ``{"query-id": q, "error":
"..."}`` with no passage: it is kept in ``attrs["failures"]`` and scored as a question with no context. A question
the pipeline answered with no passage at all is a row ``{"query-id": q, "empty": true}`` (or an empty
``retrieved_contexts`` list): it is kept in ``attrs["empty"]`` and scored as answered, with no context.

The normal form is a DataFrame with columns :data:`PASSAGE_COLUMNS` (``doc_id`` None and ``start_char``/``end_char``
<NA> where not given), rows grouped by query (first appearance) in rank order, ``attrs["kind"] == "passages"``.
Where the passages sit in the task's documents is decided when the run is scored
(:mod:`ragcov_data.runs.locate`), since only the task knows its documents.

Told apart from id runs by its columns: a table with a ``text`` column (or ragas' two) and no document-id column
other than ``doc_id`` is a passage run (``doc_id`` is then a hint, not the retrieved item). Refused, naming the
file, the row and the fix: no text column, an empty passage, a rank that is not a whole number >= 1, a query
with the same rank twice, a non-finite score, no row at all, and no passage at all (every question failed or was
answered with nothing: each would score 0, which says nothing of retrieval). A JSON Lines file whose first line is
ragcov's header (:data:`META_KEY`) is a passage run even when no line has a ``text`` (no question got a passage).
"""
from __future__ import annotations

import json
import lzma
import os
import zlib
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ragcov_data.errors import InputFileError, RagcovError, binary_kind

__all__ = ["META_KEY", "PASSAGE_COLUMNS", "PASSAGE_NAMES", "RAGAS_COLUMNS", "is_passage_columns", "load_passage_run",
           "validate_passage_run", "is_passage_run", "sniff_passage_file"]

PASSAGE_COLUMNS = ["query-id", "rank", "text", "score", "doc_id", "start_char", "end_char"]
#: Key of the first line of a passage run ragcov wrote (``run_pipeline``): what made it; kept in ``attrs["meta"]``.
META_KEY = "ragcov_passage_run"
#: Recognised column names (lower-cased), by passage-run column, in order of preference.
PASSAGE_NAMES: dict[str, tuple[str, ...]] = {
    "query-id": ("query-id", "query_id", "qid", "queryid", "topic_id", "question_id"),
    "rank": ("rank", "position"),
    "text": ("text", "passage", "page_content", "content", "chunk_text"),
    "score": ("score", "sim", "similarity"),
    "doc_id": ("doc_id", "doc-id", "document_id", "ref_doc_id", "source"),
    "start_char": ("start_char", "start_index", "start_char_idx"),
    "end_char": ("end_char", "end_char_idx"),
    "error": ("error",),
    "empty": ("empty",),
}
#: A ragas-style evaluation table: the question and its retrieved passages (a list, in rank order).
RAGAS_COLUMNS = ("user_input", "retrieved_contexts")
#: Document-id columns that make a table an id run even when it also has a ``text`` column.
_ID_RUN_COLUMNS = ("corpus-id", "corpus_id", "docid", "docno", "pid", "passage_id")
_SUFFIX = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
           ".parquet": "parquet", ".pq": "parquet"}


def is_passage_columns(columns: Any) -> bool:
    """Whether a table with these columns is a passage run (see the module docstring)."""
    lower = {str(c).strip().lower() for c in columns}
    if set(RAGAS_COLUMNS) <= lower:
        return True
    return any(n in lower for n in PASSAGE_NAMES["text"]) and not any(n in lower for n in _ID_RUN_COLUMNS)


def is_passage_run(run: Any) -> bool:
    """Whether ``run`` (a DataFrame read before, or a path) is a passage run."""
    if isinstance(run, pd.DataFrame):
        return run.attrs.get("kind") == "passages" or is_passage_columns(run.columns)
    if isinstance(run, (str, os.PathLike)) and Path(run).is_file():
        return sniff_passage_file(Path(run)) is not None
    return False


def _format(path: Path) -> tuple[str | None, str | None]:
    """(format, compression) from the file's suffixes."""
    suffixes = [s.lower() for s in path.suffixes]
    comp = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}.get(suffixes[-1]) if suffixes else None
    inner = suffixes[-2] if comp and len(suffixes) >= 2 else (suffixes[-1] if suffixes else "")
    return _SUFFIX.get(inner), comp


def sniff_passage_file(path: Path) -> str | None:
    """The format of ``path`` when it holds a passage run (by its columns or first record), else None."""
    fmt, comp = _format(path)
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return fmt if is_passage_columns(pq.read_schema(path).names) else None
        if fmt in ("csv", "tsv"):
            head = pd.read_csv(path, sep="," if fmt == "csv" else "\t", nrows=0, compression=comp)
            return fmt if is_passage_columns(head.columns) else None
        if fmt in ("jsonl", "json"):
            first = _first_record(path, fmt, comp)
            ok = isinstance(first, Mapping) and (META_KEY in first or is_passage_columns(first.keys()))
            return fmt if ok else None
    except Exception:  # noqa: BLE001 - not readable as a passage run: the id-run reader says why
        return None
    return None


def _first_record(path: Path, fmt: str, comp: str | None) -> Any:
    import bz2
    import gzip
    import lzma

    opener = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}.get(comp or "", open)
    with opener(path, "rt", encoding="utf-8-sig") as fh:
        if fmt == "jsonl":
            for line in fh:
                if line.strip():
                    return json.loads(line)
            return None
        head = fh.read(1 << 16).lstrip()
    if not head.startswith("["):
        return None
    dec = json.JSONDecoder()
    try:
        obj, _ = dec.raw_decode(head[1:].lstrip())
    except json.JSONDecodeError:
        return None
    return obj


# ==================================================================================== reading
def load_passage_run(source: str | os.PathLike | pd.DataFrame, *, format: str | None = None) -> pd.DataFrame:
    """Read a passage run (see the module docstring) into its normal form.

    Parameters
    ----------
    source : path or DataFrame
        JSON Lines, JSON, CSV/TSV or parquet (optionally ``.gz``/``.bz2``/``.xz``), or a DataFrame.
    format : {"jsonl", "json", "csv", "tsv", "parquet"}, optional
        Skip detection by suffix.

    Returns
    -------
    DataFrame
        Columns :data:`PASSAGE_COLUMNS`; ``attrs``: ``kind`` ("passages"), ``format``, ``source``,
        ``failures`` (query id -> error message), ``layout`` ("passages" or "ragas").

    Raises
    ------
    InputFileError
        Naming the file, the row and the fix.
    """
    if isinstance(source, pd.DataFrame):
        return validate_passage_run(source, source="DataFrame", fmt="DataFrame")
    path = Path(source)
    if not path.is_file():
        raise InputFileError(f"passage run {str(path)!r} does not exist (or is not a file); check the path.")
    fmt, comp = _format(path)
    fmt = format or fmt
    if fmt is None:
        raise InputFileError(f"{path}: cannot tell the passage run's format from its name; use .jsonl, .json, .csv, "
                             ".tsv or .parquet (optionally compressed), or pass format=.")
    try:
        if fmt == "parquet":
            frame = pd.read_parquet(path)
            line_of = lambda i: f"row {i + 1}"  # noqa: E731
        elif fmt in ("csv", "tsv"):
            frame = pd.read_csv(path, sep="," if fmt == "csv" else "\t", dtype=str, keep_default_na=False,
                                compression=comp)
            line_of = lambda i: f"line {i + 2}"  # noqa: E731 - after the header
        elif fmt == "jsonl":
            frame, line_of = _read_jsonl(path, comp)
        else:
            frame = pd.DataFrame(json.loads(_text(path, comp)))
            line_of = lambda i: f"record {i + 1}"  # noqa: E731
    except (ValueError, OSError, UnicodeDecodeError, EOFError, lzma.LZMAError, zlib.error) as exc:
        if isinstance(exc, RagcovError):
            raise
        if comp is not None and not isinstance(exc, UnicodeDecodeError):
            raise _stream_error(path, exc) from None
        raise InputFileError(f"{path}: cannot read it as a {fmt} passage run ({type(exc).__name__}: {exc}); a passage "
                             "run has one row per passage: query-id, rank, text (optional score, doc_id, "
                             "start_char, end_char).") from None
    out = validate_passage_run(frame, source=str(path), fmt=fmt, row_label=line_of)
    if frame.attrs.get("meta") is not None:
        out.attrs["meta"] = frame.attrs["meta"]
    return out


def _stream_error(path: Path, exc: BaseException) -> InputFileError:
    """A compressed passage run that cannot be read: the id-run reader's words, and how to get the run back."""
    from ragcov_data.runs._read import _read_error

    said = str(_read_error(path, exc))
    if "corrupt or truncated" not in said:
        return InputFileError(said)
    return InputFileError(said + " A passage run need not be made again: re-running the pipeline with --out on the "
                          "uncompressed .jsonl it wrote resumes (only the questions not answered yet are asked); then "
                          "compress that file again.")


def _text(path: Path, comp: str | None) -> str:
    import bz2
    import gzip
    import lzma

    opener = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}.get(comp or "")
    data = opener(path, "rb").read() if opener else path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        binary = binary_kind(data[:8])
        if binary is not None:  # a PDF named .jsonl is a PDF, not text in another encoding
            raise InputFileError(f"{path}: this file is {binary[0]} (its first bytes are {data[:5]!r}), not a "
                                 "passage run; give the JSON Lines, CSV or parquet file of the pipeline's passages.") \
                from None
        line = data[:exc.start].count(b"\n") + 1
        raise InputFileError(f"{path}, line {line}: bytes that are not UTF-8; re-save the passage run as UTF-8 "
                             "(e.g. iconv -f latin1 -t utf-8).") from None


def _read_jsonl(path: Path, comp: str | None) -> tuple[pd.DataFrame, Any]:
    """JSON Lines records, every line that is not one named (:mod:`ragcov_data.runs._passage_lines`). A file with
    ragcov's header but no passage text (every question failed or got nothing) is still a passage run: its
    ``text`` column is added, empty, so the reader refuses it as one with no passage, not as a run of ids."""
    from ragcov_data.runs._passage_lines import read_passage_lines

    frame, label = read_passage_lines(path, _text(path, comp), META_KEY, PASSAGE_NAMES, _ID_RUN_COLUMNS)
    if frame.attrs.get("meta") is not None and not any(str(c).lower() in PASSAGE_NAMES["text"] for c in frame.columns):
        meta = frame.attrs["meta"]
        frame["text"] = None
        frame.attrs["meta"] = meta
    return frame, label


def _pick(columns: Any, source: str) -> dict[str, Any]:
    lower: dict[str, Any] = {}
    for c in columns:
        lower.setdefault(str(c).strip().lower(), c)
    chosen = {}
    for ours, names in PASSAGE_NAMES.items():
        for n in names:
            if n in lower:
                chosen[ours] = lower[n]
                break
    if "text" not in chosen:
        raise InputFileError(f"{source}: a passage run needs a `text` column (the passage returned); found "
                             f"{[str(c) for c in columns]}. A run of chunk ids needs `corpus-id` instead.")
    if "query-id" not in chosen:
        raise InputFileError(f"{source}: no query id column ({'/'.join(PASSAGE_NAMES['query-id'][:3])}); found "
                             f"{[str(c) for c in columns]}.")
    return chosen


def _from_ragas(frame: pd.DataFrame) -> pd.DataFrame:
    """A ragas-style table (one row per question) as passage rows; the question text stands in for its id."""
    qcol = next((c for c in frame.columns if str(c).lower() in PASSAGE_NAMES["query-id"]), None)
    rows = []
    for i, (q, ctx) in enumerate(zip(frame["user_input"], frame["retrieved_contexts"])):
        qid = frame[qcol].iat[i] if qcol is not None else q
        if isinstance(ctx, str):
            ctx = [ctx]
        ctx = list(ctx) if ctx is not None and not (isinstance(ctx, float) and np.isnan(ctx)) else []
        for r, t in enumerate(ctx, start=1):
            rows.append({"query-id": qid, "rank": r, "text": t, "_row": i, "empty": False})
        if not ctx:  # answered with no passage: scored as answered, with no context
            rows.append({"query-id": qid, "rank": None, "text": None, "_row": i, "empty": True})
    out = pd.DataFrame(rows, columns=["query-id", "rank", "text", "_row", "empty"])
    out.attrs["by_question_text"] = qcol is None
    return out


def validate_passage_run(frame: pd.DataFrame, *, source: str = "passage run", fmt: str = "DataFrame",
                         row_label: Any = None) -> pd.DataFrame:
    """Check a passage-run table and return its normal form (see :func:`load_passage_run`)."""
    if not isinstance(frame, pd.DataFrame):
        raise RagcovError(f"{source}: a passage run must be a DataFrame; got {type(frame).__name__}.")
    label = row_label or (lambda i: f"row {i}")
    layout = "passages"
    by_text = False
    if set(RAGAS_COLUMNS) <= {str(c).lower() for c in frame.columns} and "text" not in frame.columns:
        frame = frame.rename(columns={c: str(c).lower() for c in frame.columns})
        ragas = _from_ragas(frame)
        by_text, layout = ragas.attrs["by_question_text"], "ragas"
        rows_of = ragas.pop("_row").to_numpy()
        frame, label = ragas, (lambda i, _l=label, _r=rows_of: _l(int(_r[i])))
    if frame.empty:
        raise InputFileError(f"{source}: the passage run has no rows; nothing to evaluate.")
    chosen = _pick(frame.columns, source)
    n = len(frame)
    err = frame[chosen["error"]] if "error" in chosen else pd.Series([None] * n, index=frame.index)
    failed = err.notna().to_numpy() & (err.astype(str).str.strip() != "").to_numpy()
    qid = frame[chosen["query-id"]]
    if qid.isna().any():
        i = int(np.flatnonzero(qid.isna().to_numpy())[0])
        raise InputFileError(f"{source}, {label(i)}: no query id; every passage names its question.")
    qid = qid.map(_as_id)
    failures = {str(q): str(e) for q, e, f in zip(qid, err, failed) if f}
    empty = _empty_answers(frame, chosen, failed)
    keep = ~failed & ~empty
    text = frame[chosen["text"]]
    out = pd.DataFrame({"query-id": qid.to_numpy(dtype=object)})
    out["text"] = text.to_numpy(dtype=object)
    out["rank"] = _ranks(frame[chosen["rank"]] if "rank" in chosen else None, out["query-id"], keep, source, label)
    out["score"] = _numbers(frame, chosen.get("score"), source, label, "score", finite=True)
    out["doc_id"] = frame[chosen["doc_id"]].map(lambda v: None if _missing(v) else _as_id(v)).to_numpy(dtype=object) \
        if "doc_id" in chosen else None
    for col in ("start_char", "end_char"):
        out[col] = _offsets(frame[chosen[col]]) if col in chosen else pd.array([pd.NA] * n, dtype="Int64")
    rows = out[keep].copy()
    bad_text = ~rows["text"].map(lambda t: isinstance(t, str) and bool(t.strip())).to_numpy(dtype=bool)
    if bad_text.any():
        i = int(rows.index[np.flatnonzero(bad_text)[0]])
        raise InputFileError(f"{source}, {label(i)}: the passage text is empty or not a string ({out['text'].iat[i]!r}); "
                             "every passage needs its text (drop the row, or record the question's failure in an "
                             "`error` field).")
    dup = rows.duplicated(["query-id", "rank"], keep="first").to_numpy()
    if dup.any():
        i = int(rows.index[np.flatnonzero(dup)[0]])
        raise InputFileError(f"{source}, {label(i)}: query {rows.at[i, 'query-id']!r} has rank {rows.at[i, 'rank']} "
                             "twice; ranks must be distinct within a query (1 = the first passage).")
    qorder = pd.factorize(rows["query-id"])[0]
    rows = rows.iloc[np.lexsort((rows["rank"].to_numpy(), qorder))].reset_index(drop=True)
    rows = rows[PASSAGE_COLUMNS]
    rows.attrs = {"kind": "passages", "format": fmt, "source": source, "layout": layout,
                  "failures": {q: e for q, e in failures.items() if q not in set(rows["query-id"])},
                  "empty": sorted({str(q) for q in qid[empty]} - set(rows["query-id"])),
                  "by_question_text": by_text}
    if rows.empty:
        raise InputFileError(f"{source}: the passage run has no passage; nothing to evaluate" + _none_answered(rows))
    return rows


def _none_answered(rows: pd.DataFrame) -> str:
    """Why a passage run holds no passage: every question failed, or was answered with nothing."""
    failures, empty = rows.attrs["failures"], rows.attrs["empty"]
    if not failures and not empty:
        return "."
    said = []
    if failures:
        q, e = next(iter(failures.items()))
        said.append(f"{len(failures)} question(s) failed in the pipeline (first: {q!r}: {e[:160]})")
    if empty:
        said.append(f"{len(empty)} answered with no passage (first: {empty[0]!r})")
    again = ("`ragcov run --pipeline ... --out` on this file asks the failed questions again" if failures and
             not empty else "delete the file (or give another --out) so that every question is asked again")
    return (f": {' and '.join(said)}, so every question would score 0 and the scores would say nothing of "
            f"retrieval. A run with no passage is refused, not scored; fix the pipeline and run it again ({again}).")


def _empty_answers(frame: pd.DataFrame, chosen: dict[str, Any], failed: np.ndarray) -> np.ndarray:
    """Rows that say a question was answered with no passage (``empty`` true and no text)."""
    if "empty" not in chosen:
        return np.zeros(len(frame), dtype=bool)
    flag = frame[chosen["empty"]].map(lambda v: v is True or (isinstance(v, (int, np.integer, np.bool_)) and bool(v)))
    no_text = frame[chosen["text"]].map(lambda t: not isinstance(t, str) or not t.strip())
    return flag.to_numpy(dtype=bool) & no_text.to_numpy(dtype=bool) & ~failed


def _as_id(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v.strip())


def _ranks(col: pd.Series | None, qid: pd.Series, keep: np.ndarray, source: str, label: Any) -> np.ndarray:
    """Whole ranks >= 1 (a run without ranks: its rows' order within each query)."""
    n = len(qid)
    if col is None:
        return (qid.groupby(qid, sort=False).cumcount() + 1).to_numpy(dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    for i, v in enumerate(col.tolist()):
        if not keep[i]:
            continue
        try:
            f = float(v)
        except (TypeError, ValueError):
            f = float("nan")
        if not np.isfinite(f) or f != int(f) or f < 1:
            raise InputFileError(f"{source}, {label(i)}: rank {v!r} is not a whole number >= 1; rank the passages "
                                 "1, 2, 3 ... within each question.")
        out[i] = int(f)
    return out


def _numbers(frame: pd.DataFrame, col: Any, source: str, label: Any, name: str, finite: bool) -> np.ndarray:
    if col is None:
        return np.full(len(frame), np.nan)
    vals = pd.to_numeric(frame[col].replace("", np.nan), errors="coerce").to_numpy(dtype=float)
    given = ~frame[col].map(_missing).to_numpy(dtype=bool)
    bad = given & ~np.isfinite(vals)
    if finite and bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputFileError(f"{source}, {label(i)}: {name} {frame[col].iat[i]!r} is not a finite number.")
    return vals


def _offsets(col: pd.Series) -> Any:
    """Character offsets as nullable integers; anything not a whole number >= 0 (e.g. LangChain's -1) is no hint."""
    def one(v: Any) -> Any:
        try:
            f = float(v)
        except (TypeError, ValueError):
            return pd.NA
        return int(f) if np.isfinite(f) and f == int(f) and f >= 0 else pd.NA
    return pd.array([one(v) for v in col.tolist()], dtype="Int64")
