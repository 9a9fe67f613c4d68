"""Runs: validation, save/load (parquet and TREC), runs from other toolkits, and top-score ties.

A *run* is a DataFrame with columns ``query-id`` (str), ``corpus-id`` (str), ``rank`` (int, 1-based) and
``score`` (float), one row per (query, candidate) pair, ordered by query then rank. ``run.attrs`` carries
``retriever``, ``params`` and ``exclude_self`` when the run comes from a ragcov retriever.

Ordering (the documented one, used whenever ranks are recomputed): score descending, then corpus
position when a ``corpus_order`` is given (ragcov retrievers' order), else ``corpus-id`` ascending.

Formats
-------
* parquet (``.parquet``/``.pq``): the four columns plus ``run.attrs`` as JSON in the file metadata.
* TREC run (any other suffix, e.g. ``.trec``, ``.run``, ``.txt``): one line a row,
  ``qid Q0 docid rank score tag``, whitespace-separated; scores written with Python's shortest
  round-trip repr, so a save/load cycle is exact. ``tag`` (default: the retriever's name) is the only
  metadata kept.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from ragcov_data.baselines.base import RUN_COLUMNS
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.ties import TIE_TOL, tied
from ragcov_data._atomic import atomic_write

PARQUET_SUFFIXES = (".parquet", ".pq")
_META_KEY = b"ragcov.run"


# ---- validation ---------------------------------------------------------------------------------
def validate_run(
    run: pd.DataFrame,
    *,
    source: str = "run",
    corpus_order: Sequence[str] | None = None,
    recompute_rank: bool | None = None,
) -> pd.DataFrame:
    """Check a run and return it normalised (column types, row order); raise :class:`RagcovError` if bad.

    Parameters
    ----------
    run : pandas.DataFrame
        Columns ``query-id``, ``corpus-id``, ``score`` and optionally ``rank``; other columns are dropped.
    source : str, default: "run"
        How to name the input in error messages (e.g. a file name).
    corpus_order : sequence of str, optional
        Corpus ids in corpus order, used to break score ties when ranks are (re)computed.
    recompute_rank : bool or None, default: None
        ``None`` recomputes ranks only when the ``rank`` column is absent; ``True`` always;
        ``False`` requires a ``rank`` column.

    Returns
    -------
    pandas.DataFrame
        Columns ``query-id, corpus-id, rank, score``; queries in order of first appearance, then rank.

    Raises
    ------
    RagcovError
        Missing columns, empty ids, non-numeric or NaN scores, duplicate (query-id, corpus-id) pairs,
        ranks that are not positive integers, repeat within a query, or contradict the scores.
    """
    if not isinstance(run, pd.DataFrame):
        raise RagcovError(f"{source}: a run must be a pandas DataFrame; got {type(run).__name__}.")
    need = ["query-id", "corpus-id", "score"]
    missing = [c for c in need if c not in run.columns]
    has_rank = "rank" in run.columns
    if recompute_rank is False and not has_rank:
        missing.append("rank")
    if missing:
        raise RagcovError(
            f"{source}: run lacks column(s) {missing}; found {list(run.columns)}. A run needs "
            f"{need} (+ optional 'rank'); rename yours, e.g. df.rename(columns={{'qid': 'query-id', "
            f"'docid': 'corpus-id'}})."
        )
    attrs = dict(run.attrs)
    out = pd.DataFrame(
        {
            "query-id": _ids(run["query-id"], "query-id", source),
            "corpus-id": _ids(run["corpus-id"], "corpus-id", source),
            "score": _scores(run["score"], source),
        }
    )
    dup = out.duplicated(["query-id", "corpus-id"], keep=False)
    if dup.any():
        rows = np.flatnonzero(dup.to_numpy())
        q, d = out["query-id"].iat[rows[0]], out["corpus-id"].iat[rows[0]]
        raise RagcovError(
            f"{source}: duplicate (query-id, corpus-id) pair ({q!r}, {d!r}) at rows {_rows(rows[:5])}"
            f"{' ...' if len(rows) > 5 else ''} ({len(rows)} rows in duplicate pairs); keep one row per pair."
        )
    if recompute_rank or not has_rank:
        out["rank"] = _recomputed_ranks(out, corpus_order, source)
    else:
        out["rank"] = _ranks(run["rank"], source)
        _check_ranks(out, source)
    qorder = pd.Index(pd.unique(out["query-id"]))
    out["_q"] = qorder.get_indexer(out["query-id"])
    out = out.sort_values(["_q", "rank"], kind="stable").drop(columns="_q").reset_index(drop=True)
    out = out[RUN_COLUMNS]
    out.attrs.update(attrs)
    return out


def _rows(rows: Iterable[int]) -> str:
    return ", ".join(str(int(r)) for r in rows)


def _ids(col: pd.Series, name: str, source: str) -> np.ndarray:
    bad = col.isna().to_numpy().copy()
    vals = col.astype(str).to_numpy(dtype=object)
    bad |= np.array([not isinstance(v, str) or not v.strip() for v in vals], dtype=bool)
    if bad.any():
        rows = np.flatnonzero(bad)
        raise RagcovError(f"{source}: empty or missing `{name}` at rows {_rows(rows[:5])}; every row needs one.")
    return vals


def _scores(col: pd.Series, source: str) -> np.ndarray:
    num = pd.to_numeric(col, errors="coerce")
    bad = (num.isna() | ~np.isfinite(num.astype(float))).to_numpy()
    if bad.any():
        rows = np.flatnonzero(bad)
        raise RagcovError(
            f"{source}: non-numeric, NaN or infinite `score` at rows {_rows(rows[:5])} "
            f"(first value: {col.iat[rows[0]]!r}); scores must be finite numbers."
        )
    return num.to_numpy(dtype=np.float64)


def _ranks(col: pd.Series, source: str) -> np.ndarray:
    num = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(num) | (num < 1) | (num != np.round(num))
    if bad.any():
        rows = np.flatnonzero(bad)
        raise RagcovError(
            f"{source}: `rank` must be a positive integer; bad at rows {_rows(rows[:5])} "
            f"(first value: {col.iat[rows[0]]!r}). Drop the column to have ranks recomputed from scores."
        )
    return num.astype(np.int64)


def _check_ranks(run: pd.DataFrame, source: str) -> None:
    """Ranks must be unique within a query, and a better rank never has a (non-tied) lower score."""
    dup = run.duplicated(["query-id", "rank"], keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)
        raise RagcovError(
            f"{source}: rank {int(run['rank'].iat[rows[0]])} repeats within query "
            f"{run['query-id'].iat[rows[0]]!r} (rows {_rows(rows[:5])}); ranks must be unique per query. "
            "Drop the `rank` column to have ranks recomputed from scores."
        )
    s = run.sort_values(["query-id", "rank"], kind="stable")
    same_q = s["query-id"].to_numpy()[1:] == s["query-id"].to_numpy()[:-1]
    sc = s["score"].to_numpy()
    rises = same_q & (sc[1:] > sc[:-1]) & ~tied(sc[1:], sc[:-1])
    if rises.any():
        i = int(np.flatnonzero(rises)[0])
        rows = s.index.to_numpy()[[i, i + 1]]
        raise RagcovError(
            f"{source}: ranks contradict scores in query {s['query-id'].iat[i]!r}: rank "
            f"{int(s['rank'].iat[i])} has score {sc[i]!r} but rank {int(s['rank'].iat[i + 1])} has {sc[i + 1]!r} "
            f"(rows {_rows(rows)}). Drop the `rank` column to have ranks recomputed from scores."
        )


def _recomputed_ranks(run: pd.DataFrame, corpus_order: Sequence[str] | None, source: str) -> np.ndarray:
    """1-based ranks by (score descending, corpus position or corpus-id)."""
    if corpus_order is not None:
        pos = pd.Index([str(c) for c in corpus_order])
        if pos.has_duplicates:
            raise RagcovError("`corpus_order` has duplicate ids; pass the corpus ids in corpus order.")
        tie = pos.get_indexer(run["corpus-id"])
        if (tie < 0).any():
            rows = np.flatnonzero(tie < 0)
            raise RagcovError(
                f"{source}: corpus-id {run['corpus-id'].iat[rows[0]]!r} (rows {_rows(rows[:5])}) is not in "
                "`corpus_order`; pass the ids of the corpus the run was made on, or corpus_order=None."
            )
    else:
        tie = pd.Index(run["corpus-id"]).argsort(kind="stable").argsort()  # corpus-id ascending
    qcode = pd.factorize(run["query-id"])[0]
    order = np.lexsort((tie, -run["score"].to_numpy(), qcode))
    q_sorted = qcode[order]
    starts = np.searchsorted(q_sorted, q_sorted, side="left")
    rank = np.empty(len(run), dtype=np.int64)
    rank[order] = np.arange(len(run)) - starts + 1
    return rank


# ---- save / load --------------------------------------------------------------------------------
def save_run(run: pd.DataFrame, path: str | os.PathLike, *, tag: str | None = None) -> Path:
    """Write ``run`` to ``path`` (parquet if the suffix is ``.parquet``/``.pq``, else TREC), atomically.

    Parameters
    ----------
    run : pandas.DataFrame
        A run (validated first; ``rank`` is required).
    path : str or path-like
        Destination; the folder must exist.
    tag : str, optional
        TREC run tag (no whitespace); default ``run.attrs["retriever"]`` or ``"ragcov"``.

    Returns
    -------
    pathlib.Path
        The written file.
    """
    path = Path(path)
    run = validate_run(run, source="`run`", recompute_rank=False)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(run, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[_META_KEY] = json.dumps(_jsonable(run.attrs), sort_keys=True).encode()
        table = table.replace_schema_metadata(meta)
        atomic_write(path, lambda tmp: pq.write_table(table, tmp))
    else:
        tag = str(tag if tag is not None else run.attrs.get("retriever") or "ragcov")
        if not tag or any(ch.isspace() for ch in tag):
            raise RagcovError(f"`tag` must be a non-empty string without whitespace; got {tag!r}.")
        for col in ("query-id", "corpus-id"):
            bad = np.array([any(ch.isspace() for ch in v) for v in run[col]], dtype=bool)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise RagcovError(
                    f"cannot write TREC run {path}: `{col}` {run[col].iat[i]!r} (row {i}) contains whitespace; "
                    "save as .parquet instead."
                )
        lines = [
            f"{q} Q0 {d} {r} {s!r} {tag}\n"
            for q, d, r, s in zip(run["query-id"], run["corpus-id"], run["rank"].tolist(), run["score"].tolist())
        ]
        atomic_write(path, "".join(lines))
    return path


def load_run(
    source: str | os.PathLike | pd.DataFrame,
    *,
    corpus_order: Sequence[str] | None = None,
    recompute_rank: bool | None = None,
) -> pd.DataFrame:
    """Read a run from a parquet or TREC file, or normalise a DataFrame from another toolkit.

    Parameters
    ----------
    source : path or pandas.DataFrame
        A ``.parquet``/``.pq`` file written by :func:`save_run` or any parquet/DataFrame with columns
        ``query-id, corpus-id, score`` (``rank`` optional), or a TREC run file
        (``qid Q0 docid rank score tag``).
    corpus_order : sequence of str, optional
        Corpus ids in corpus order (e.g. ``ds["corpus"]["_id"]``) to break score ties when ranks are
        recomputed; by default ties go by ``corpus-id``.
    recompute_rank : bool or None, default: None
        ``None``: recompute ranks only if absent. TREC files always carry ranks; pass ``True`` to
        ignore them (trec_eval ignores them too).

    Returns
    -------
    pandas.DataFrame
        A validated run (see :func:`validate_run`); ``attrs`` restored from ragcov parquet files,
        ``{"tag": ...}`` from TREC files.
    """
    if isinstance(source, pd.DataFrame):
        return validate_run(source, source="run", corpus_order=corpus_order, recompute_rank=recompute_rank)
    path = Path(source)
    if not path.is_file():
        raise InputFileError(f"run file {str(path)!r} does not exist (or is not a file).")
    if path.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises several types
            raise InputFileError(f"{path}: not a readable parquet file ({exc}).") from exc
        df = table.to_pandas()
        meta = (table.schema.metadata or {}).get(_META_KEY)
        df.attrs.clear()
        if meta:
            df.attrs.update(json.loads(meta))
    else:
        df = _read_trec(path)
    return validate_run(df, source=str(path), corpus_order=corpus_order, recompute_rank=recompute_rank)


def _read_trec(path: Path) -> pd.DataFrame:
    q, d, r, s, tags, lines = [], [], [], [], set(), []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{path}: not UTF-8 ({exc}).") from exc
    for no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        f = line.split()
        if len(f) != 6:
            raise InputFileError(
                f"{path}, line {no}: expected 6 fields 'qid Q0 docid rank score tag', got {len(f)}: {line!r}."
            )
        try:
            rank = int(f[3])
            score = float(f[4])
        except ValueError:
            raise InputFileError(
                f"{path}, line {no}: rank {f[3]!r} must be an integer and score {f[4]!r} a number."
            ) from None
        if not math.isfinite(score):
            raise InputFileError(f"{path}, line {no}: score {f[4]!r} is not finite.")
        q.append(f[0]); d.append(f[2]); r.append(rank); s.append(score); tags.add(f[5]); lines.append(no)
    if not q:
        raise InputFileError(f"{path}: no run lines found; expected 'qid Q0 docid rank score tag' lines.")
    df = pd.DataFrame({"query-id": q, "corpus-id": d, "rank": r, "score": s})
    dup = df.duplicated(["query-id", "corpus-id"], keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)
        raise InputFileError(
            f"{path}: duplicate (query-id, corpus-id) pair ({q[rows[0]]!r}, {d[rows[0]]!r}) on lines "
            f"{_rows(np.asarray(lines)[rows[:5]])}; keep one line per pair."
        )
    df.attrs["tag"] = sorted(tags)[0] if len(tags) == 1 else sorted(tags)
    return df




def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


# ---- ties ---------------------------------------------------------------------------------------
def top_tie_sizes(run: pd.DataFrame) -> pd.Series:
    """Number of candidates tied with each query's best score (1 = no tie), indexed by query-id.

    Ties use :func:`ragcov_data.ties.tied` (relative tolerance ``TIE_TOL``). Queries with no row in
    the run do not appear.
    """
    run = validate_run(run, recompute_rank=False) if "rank" in run.columns else validate_run(run)
    top = run.groupby("query-id", sort=False)["score"].transform("max").to_numpy()
    in_top = tied(run["score"].to_numpy(), top)
    return (
        pd.Series(in_top.astype(np.int64), index=run["query-id"].to_numpy())
        .groupby(level=0, sort=False)
        .sum()
        .rename("top_tie_size")
        .rename_axis("query-id")
    )


def top_tie_share(run: pd.DataFrame) -> float:
    """Share of the run's queries whose best score is tied by two or more candidates.

    Examples
    --------
    >>> import pandas as pd
    >>> run = pd.DataFrame({"query-id": ["q1", "q1", "q1", "q2", "q2"],
    ...                     "corpus-id": ["a", "b", "c", "a", "b"],
    ...                     "score": [2.0, 2.0, 1.0, 3.0, 1.0]})
    >>> top_tie_share(run)
    0.5
    """
    sizes = top_tie_sizes(run)
    return float((sizes > 1).mean()) if len(sizes) else 0.0


__all__ = ["validate_run", "save_run", "load_run", "top_tie_sizes", "top_tie_share", "TIE_TOL"]
