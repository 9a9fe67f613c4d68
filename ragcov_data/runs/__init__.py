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
* **Passage runs** (a pipeline's returned text: a ``text`` column instead of a document id, or a ragas-style
  table) are read by :func:`ragcov_data.runs.passages.load_passage_run` and returned in its normal form
  (``attrs["kind"] == "passages"``); the outcome stage locates them in the task's documents.
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

import io
import json
import os
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from ragcov_data._atomic import atomic_write
from ragcov_data._json import to_jsonable
from ragcov_data.runs._normal import _TREC_FIELDS, ORDERS, _check_order, _normalise, take_str  # noqa: F401
from ragcov_data.runs._read import (_META_KEY, COLUMN_NAMES, COMPRESSION, FORMATS,  # noqa: F401
                                    PARQUET_SUFFIXES, RUN_COLUMNS, _column_map, _format_by_content, _format_by_suffix, _from_mapping,
                                    _pick_columns, _read_bytes, _read_delimited, _read_json, _read_parquet,
                                    _read_trec)
from ragcov_data.runs._stream import _check_depth, _head, _keep_depth, _lines_of, _read_streamed
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.runs._mteb import is_mteb_predictions, mteb_predictions
from ragcov_data.runs.fingerprint import tag_with_fingerprint
from ragcov_data.runs.passages import is_passage_columns, load_passage_run, sniff_passage_file, validate_passage_run

__all__ = ["load_run", "save_run", "validate_run", "OwnChunkWarning", "RUN_COLUMNS", "FORMATS", "COLUMN_NAMES", "ORDERS"]


# ==================================================================================== public API
def load_run(
    source: str | os.PathLike | pd.DataFrame | Mapping[str, Any],
    *,
    columns: Mapping[str, str] | str | None = None,
    format: str | None = None,
    order: str | None = None,
    depth: int | None = None,
    subset: str | None = None,
    split: str | None = None,
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
    subset, split : str, optional
        Of an MTEB prediction file (``{task}_predictions.json``, recognised by its ``mteb_model_meta``), the
        subset and split to read; needed only where it holds several. The run's ``tag`` is the model name.

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
    passages = _passage_run(source, format)
    if passages is not None:
        return passages
    colmap = _column_map(columns)
    depth = _check_depth(depth)
    if isinstance(source, pd.DataFrame):
        out = _normalise(_pick_columns(source, colmap, "run", "DataFrame"), source="run", fmt="DataFrame",
                         attrs=dict(source.attrs), order=order)
        return _keep_depth(_kept_provenance(out, source.attrs), depth)
    if isinstance(source, Mapping):
        attrs: dict[str, Any] = {}
        if is_mteb_predictions(source):
            source, attrs = mteb_predictions(source, "run", subset, split)
        return _keep_depth(_normalise(_from_mapping(source, "run"), source="run", fmt="dict", attrs=attrs,
                                      order=order), depth)
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
    return _keep_depth(_read_whole(path, opener, fmt, how, colmap, order, (subset, split)), depth)


def _passage_run(source: Any, format: str | None) -> pd.DataFrame | None:
    """A passage run (a pipeline's text: :mod:`ragcov_data.runs.passages`) when ``source`` is one, else None."""
    if isinstance(source, pd.DataFrame):
        if source.attrs.get("kind") == "passages":
            return source  # read before: already in normal form
        return validate_passage_run(source, source="DataFrame") if is_passage_columns(source.columns) else None
    if isinstance(source, (str, os.PathLike)) and Path(source).is_file() and format in (None, "jsonl", "json", "csv",
                                                                                        "tsv", "parquet"):
        fmt = sniff_passage_file(Path(source))
        return load_passage_run(source, format=format or fmt) if fmt is not None else None
    return None


def _read_whole(path: Path, opener: Any, fmt: str | None, how: str, colmap: Mapping[str, str],
                order: str | None, pick: tuple[str | None, str | None] = (None, None)) -> pd.DataFrame:
    """A TREC, CSV, TSV or JSON run file read at once (its format found from its content when ``fmt`` is
    None), in normal form."""
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
        frame = _read_json(data, fmt, colmap, where, pick)
        attrs = frame.attrs.pop("_mteb", {})
    if fmt in ("trec", "csv", "tsv"):  # name lines by reading the file again, only if an error needs it,
        header = 0 if fmt == "trec" else _first_line(data)  # so the file's bytes are freed before the checks
        frame.attrs["_row_label"] = _file_labels(path, opener, header)
    del data
    return _normalise(frame, source=where, fmt=fmt, attrs=attrs, path=str(path), order=order)


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
    :mod:`ragcov_data.runs.fingerprint`) so every reader can check the run against its task.
    A ``.gz``/``.bz2``/``.xz`` suffix compresses the TREC file.
    """
    path = Path(path)
    run = validate_run(run, source="`run`")
    if path.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow as pa
        import pyarrow.parquet as pq

        clean = to_jsonable(run.attrs)
        frame = run.copy(deep=False)
        frame.attrs = clean  # pyarrow writes a frame's attrs too: cleaned, so numpy scalars neither warn nor drop
        table = pa.Table.from_pandas(frame, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[_META_KEY] = json.dumps(clean, sort_keys=True).encode()
        table = table.replace_schema_metadata(meta)
        atomic_write(path, lambda tmp: pq.write_table(table, tmp))
        return path
    _warn_own_chunks(run, path)
    default_tag = run.attrs.get("retriever") or (run.attrs.get("tag") if isinstance(run.attrs.get("tag"), str) else None)
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
