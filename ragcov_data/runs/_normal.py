"""The normal form of a run: ids checked, scores and ranks validated, rows in trec_eval's order.

Every run source ends here (:func:`ragcov_data.runs.load_run`): a file, a DataFrame or a dict becomes
``query-id, corpus-id, rank, score`` with one row per pair, grouped by query, ordered by score descending
then document id descending.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from ragcov_data.errors import InputFileError, RagcovError

_TREC_FIELDS = "'qid Q0 docid rank score tag'"


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
