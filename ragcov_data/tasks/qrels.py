"""Checks of relevance judgments (qrels) read from plain tables or files.

A qrels table has the columns ``query-id``, ``corpus-id`` and ``score`` (the grade), one row per judged
(query, document) pair. :func:`check_qrels` validates one before it is scored, so that a grade outside the
documented range, a grade that is not a number, or a judgment naming a document or query the task does not
have is said out loud (with the file, the row, the value and the fix) instead of being scored silently::

    from ragcov_data.tasks.qrels import check_qrels
    report = check_qrels(qrels, corpus_ids=corpus["_id"], query_ids=queries["_id"],
                         grade_range=(0, 3), source="task/qrels.parquet")
    report.unknown_documents        # {"rows": ..., "ids": ..., "examples": [...]}

:func:`grade_problems` is the grade rule alone (used by the JurisTCU loader, which names file lines).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ragcov_data.errors import InputFileError, RagcovError

QRELS_COLUMNS = ("query-id", "corpus-id", "score")
ON_UNKNOWN = ("warn", "error", "report")
#: Unknown ids shown in a message (the rest are counted).
N_EXAMPLES = 5


class UnknownQrelsWarning(UserWarning):
    """Qrels name documents or queries the task does not have (kept: they count as relevant)."""


@dataclass(frozen=True)
class QrelsCheck:
    """What :func:`check_qrels` found.

    Attributes
    ----------
    rows : int
        Judgments checked.
    grades : dict of int to int
        Rows per grade, ascending.
    unknown_documents, unknown_queries : dict
        ``{"rows": ..., "ids": ..., "examples": [...]}``: judgments naming a ``corpus-id`` (``query-id``)
        outside the given ids; zeros when no ids were given.
    messages : list of str
        One sentence per problem found (empty when the qrels are clean).
    """

    rows: int
    grades: dict[int, int]
    unknown_documents: dict[str, Any] = field(default_factory=dict)
    unknown_queries: dict[str, Any] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.messages


def grade_problems(values: Iterable[Any], grade_range: tuple[int, int] | None = None
                   ) -> tuple[np.ndarray, list[tuple[int, Any, str]]]:
    """Grades as ``int64`` and every invalid one as ``(position, value, reason)``.

    A grade must be a number with an integer value (``2`` or ``"2"``; ``2.0`` is accepted as 2) and, when
    ``grade_range=(low, high)`` is given, lie in ``low..high``. Empty cells, text (``"abc"``), fractions
    (``1.5``), booleans and out-of-range values (``4``, ``-1`` for 0..3) are problems. Use the returned
    array only when the problem list is empty (invalid positions hold placeholders).
    """
    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    raw = series.reset_index(drop=True)
    if pd.api.types.is_bool_dtype(raw.dtype):
        num = np.full(len(raw), np.nan)
    elif pd.api.types.is_numeric_dtype(raw.dtype):  # fast path: no per-value Python work
        num = raw.astype(float).to_numpy()
    else:
        text = raw.astype(object).map(lambda v: v.strip() if isinstance(v, str) else v)
        is_bool = text.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
        num = pd.to_numeric(text.where(~is_bool, None), errors="coerce").astype(float).to_numpy()
    problems: list[tuple[int, Any, str]] = []
    integral = np.isfinite(num) & (num == np.round(num))
    for i in np.flatnonzero(~integral):
        v = _scalar(raw.iloc[i])
        empty = (v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v))
                 or (isinstance(v, str) and not v.strip()))
        reason = ("empty" if empty else "not a number" if not np.isfinite(num[i]) else "not an integer")
        problems.append((int(i), v, reason))
    grades = np.where(integral, num, 0).astype(np.int64)
    if grade_range is not None:
        lo, hi = grade_range
        for i in np.flatnonzero(integral & ((num < lo) | (num > hi))):
            problems.append((int(i), _scalar(raw.iloc[i]), f"outside the documented range {lo}..{hi}"))
        problems.sort(key=lambda p: p[0])
    return grades, problems


def _scalar(v: Any) -> Any:
    """A numpy scalar as the Python value (so messages show ``4``, not ``np.int64(4)``)."""
    return v.item() if isinstance(v, np.generic) else v


def _where(i: int, first_line: int | None) -> str:
    return f"line {first_line + i}" if first_line is not None else f"row {i + 1}"


def _unknown(col: pd.Series, known: Iterable[Any] | None) -> dict[str, Any]:
    if known is None:
        return {"rows": 0, "ids": 0, "examples": []}
    miss = ~col.isin(set(map(str, known)))
    distinct = pd.unique(col[miss])
    return {"rows": int(miss.sum()), "ids": int(len(distinct)), "examples": [str(x) for x in distinct[:N_EXAMPLES]]}


def check_qrels(
    qrels: pd.DataFrame,
    corpus_ids: Iterable[Any] | None = None,
    query_ids: Iterable[Any] | None = None,
    grade_range: tuple[int, int] | None = None,
    *,
    source: str = "qrels",
    first_line: int | None = None,
    on_unknown: str = "warn",
) -> QrelsCheck:
    """Validate a qrels table; raise on what cannot be scored, report what can.

    Parameters
    ----------
    qrels : DataFrame
        Columns ``query-id``, ``corpus-id``, ``score`` (other columns are ignored).
    corpus_ids, query_ids : iterable, optional
        The task's document and query ids; judgments naming others are reported (not checked when None).
    grade_range : (int, int), optional
        Inclusive range of valid grades, e.g. ``(0, 3)`` for JurisTCU, ``(1, 1)`` for self-retrieval.
    source : str
        What the qrels are (a file name), for messages.
    first_line : int, optional
        File line of the first row (2 for a CSV with a header): messages then say "line N", else "row N".
    on_unknown : {'warn', 'error', 'report'}, default: 'warn'
        Unknown documents/queries: warn (:class:`UnknownQrelsWarning`), raise :class:`InputFileError`, or
        only return them in the report.

    Returns
    -------
    QrelsCheck
        Row and grade counts, unknown ids (count and first examples) and one message per problem.

    Raises
    ------
    InputFileError
        A missing column, an empty id, a grade that is not an integer or lies outside ``grade_range``, a
        (query, document) pair judged twice, or (``on_unknown='error'``) unknown ids. The message names
        ``source``, the row/line, the value and the fix.
    """
    if on_unknown not in ON_UNKNOWN:
        raise RagcovError(f"`on_unknown` must be one of {ON_UNKNOWN}; got {on_unknown!r}.")
    if not isinstance(qrels, pd.DataFrame):
        raise RagcovError(f"{source}: qrels must be a DataFrame with columns {list(QRELS_COLUMNS)}; "
                          f"got {type(qrels).__name__}.")
    missing = [c for c in QRELS_COLUMNS if c not in qrels.columns]
    if missing:
        raise InputFileError(f"{source}: qrels lack column(s) {missing} (found {list(map(str, qrels.columns))[:10]}); "
                             f"expected {list(QRELS_COLUMNS)}: rename the columns.")
    ids = _ids(qrels, source, first_line)
    grades, problems = grade_problems(qrels["score"], grade_range)
    if problems:
        i, value, reason = problems[0]
        rule = f"integers {grade_range[0]}..{grade_range[1]}" if grade_range else "integers"
        raise InputFileError(
            f"{source}: {_where(i, first_line)} has score {value!r} ({reason}; {len(problems)} invalid grade(s) in "
            f"all); grades must be {rule}. Fix the score column (or map the source's grades onto that range)."
        )
    dup = pd.DataFrame(ids).duplicated(["query-id", "corpus-id"]).to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise InputFileError(f"{source}: {_where(i, first_line)} judges the pair (query-id {ids['query-id'][i]!r}, "
                             f"corpus-id {ids['corpus-id'][i]!r}) again ({int(dup.sum())} repeated pairs); keep one "
                             "grade per pair.")
    unknown_docs = _unknown(ids["corpus-id"], corpus_ids)
    unknown_queries = _unknown(ids["query-id"], query_ids)
    messages = _report_unknown(unknown_docs, unknown_queries, source, on_unknown)
    counts = pd.Series(grades).value_counts().sort_index()
    return QrelsCheck(int(len(qrels)), {int(g): int(n) for g, n in counts.items()}, unknown_docs, unknown_queries,
                      messages)


def _ids(qrels: pd.DataFrame, source: str, first_line: int | None) -> dict[str, pd.Series]:
    """``query-id`` and ``corpus-id`` as strings; an empty one is an error naming its row."""
    ids = {}
    for col in ("query-id", "corpus-id"):
        vals = qrels[col]
        blank = vals.isna().to_numpy() | (vals.astype(str).str.strip() == "").to_numpy()
        if blank.any():
            i = int(np.flatnonzero(blank)[0])
            raise InputFileError(f"{source}: {_where(i, first_line)} has an empty {col} ({int(blank.sum())} rows "
                                 "in all); every judgment needs a query id and a document id.")
        ids[col] = vals.astype(str).reset_index(drop=True)
    return ids


def _report_unknown(unknown_docs: dict[str, Any], unknown_queries: dict[str, Any], source: str,
                    on_unknown: str) -> list[str]:
    """One message per kind of unknown id, warned about or raised as ``on_unknown`` says."""
    messages = [f"{u['rows']} judgments name {u['ids']} {what} not in the task (first: {u['examples']})"
                for u, what in ((unknown_docs, "documents"), (unknown_queries, "queries")) if u["rows"]]
    if messages:
        text = (f"{source}: {'; '.join(messages)}. They are kept (a judged document missing from the corpus still "
                "counts as relevant, so recall cannot reach 1): pass the matching corpus/queries, or drop them.")
        if on_unknown == "error":
            raise InputFileError(text)
        if on_unknown == "warn":
            warnings.warn(text, UnknownQrelsWarning, stacklevel=3)  # the caller of check_qrels
    return messages


__all__ = ["QrelsCheck", "UnknownQrelsWarning", "check_qrels", "grade_problems", "QRELS_COLUMNS"]
