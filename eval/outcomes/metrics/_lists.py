"""Validation and preparation shared by every metric: a run and qrels become ranked, graded lists.

Ordering of a run (one rule for all metrics, chosen by the tie policy)
----------------------------------------------------------------------
- ``trec_eval`` (default): score descending, then ``corpus-id`` descending (byte-wise), ignoring the
  rank column — trec_eval 10's own order, so every value equals trec_eval's on the same run file;
- ``run``: the run's ``rank`` ascending (ties in rank by the trec_eval order);
- ``pessimistic`` / ``optimistic``: score descending, and within equal scores the less (more) relevant
  documents first, so a tie never helps (always helps) the run;
- ``expected``: the trec_eval order, plus each document's *tie group* (documents of the query with the
  same score): metrics then average exactly over every order of each group (McSherry & Najork 2008).

Equal scores means equal doubles; ragcov's retrievers report near-ties (summation noise) as one exact
score. A run without scores (rank-only) is scored with ``score = -rank``, so equal ranks tie. Positions
are then renumbered 1, 2, ... so gaps in ``rank`` do not matter.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.ties import DEFAULT_TIE_POLICY, check_tie_policy

#: Conventions for run rows that name documents without a judgment for the query.
UNJUDGED_POLICIES = ("irrelevant", "skip", "relevant")


@dataclass(frozen=True)
class RankedLists:
    """A run joined with graded qrels, ready for any metric.

    Attributes
    ----------
    ranked : DataFrame
        ``qidx`` (int: position of the query in ``query_ids``), ``pos`` (1-based position after ordering and, for
        ``unjudged="skip"``, condensation), ``grade`` (float, NaN when unjudged), ``rel`` (bool:
        ``grade >= threshold``), ``score`` (float, NaN when the run has no score). Only scored queries.
    judged : DataFrame
        The qrels of the scored queries: ``qidx`` (int), ``grade`` (float).
    query_ids : Index
        The queries to score, in output order.
    threshold : float
        Minimum grade counted as relevant by binary metrics.
    tie_policy : str
        How rows were ordered; with ``"expected"``, ``ranked`` also has ``gstart`` (positions before
        the row's tie group) and ``gsize`` (documents in it).
    """

    ranked: pd.DataFrame
    judged: pd.DataFrame
    query_ids: pd.Index
    threshold: float
    tie_policy: str = DEFAULT_TIE_POLICY

    @property
    def expected(self) -> bool:
        """Do metrics average over the orders of tied documents?"""
        return self.tie_policy == "expected"

    def n_relevant(self) -> np.ndarray:
        """Number of judged documents with ``grade >= threshold``, per query (0 included)."""
        rel = (self.judged["grade"] >= self.threshold).to_numpy()
        return np.bincount(self.judged["qidx"].to_numpy()[rel], minlength=len(self.query_ids))

    def top(self, k: int) -> pd.DataFrame:
        """Rows at positions ``1..k``."""
        return self.ranked[self.ranked["pos"] <= k]


def _frame(data: Any, name: str, required: list[str], hint: str) -> pd.DataFrame:
    if name == "qrels" and not isinstance(data, pd.DataFrame) and hasattr(data, "keys") and "qrels" in data.keys():
        data = data["qrels"]  # a task (DatasetDict or dict of DataFrames)
    if hasattr(data, "to_pandas") and not isinstance(data, pd.DataFrame):
        data = data.to_pandas()
    if not isinstance(data, pd.DataFrame):
        raise RagcovError(f"`{name}` must be a pandas DataFrame (or datasets.Dataset); got {type(data).__name__}.")
    missing = [c for c in required if c not in data.columns]
    if missing:
        raise RagcovError(
            f"`{name}` lacks column(s) {missing}; found {list(data.columns)}. {hint}"
        )
    return data


@dataclass(frozen=True, eq=False)
class PreparedQrels:
    """Qrels validated once and kept in the form :func:`prepare` joins on.

    Built by :func:`prepare_qrels`; pass it wherever ``qrels`` is taken (``prepare``, ``per_query``) to
    score many runs against one large qrels (a leaderboard) without re-validating and re-converting it
    for each run. ``frame`` has ``query-id`` (object str), ``corpus-id`` (str) and ``grade`` (float).
    """

    frame: pd.DataFrame
    _indexed: dict = field(default_factory=dict, repr=False)

    def for_queries(self, qids: pd.Index) -> pd.DataFrame:
        """The rows of the queries in ``qids`` with ``qidx`` (their position), cached for the last ``qids``."""
        key = tuple(qids)
        hit = self._indexed.get(key)
        if hit is None:
            qidx = qids.get_indexer(self.frame["query-id"].to_numpy(dtype=object))
            hit = self.frame.assign(qidx=qidx)[qidx >= 0]
            self._indexed.clear()  # one entry: callers score many runs on one query list
            self._indexed[key] = hit
        return hit


def prepare_qrels(qrels: Any) -> PreparedQrels:
    """Validate ``qrels`` (a DataFrame, datasets.Dataset or task; ``query-id, corpus-id, score``) once.

    Raises the errors :func:`prepare` raises on bad qrels (missing columns, non-numeric grades,
    duplicate pairs). Returns a :class:`PreparedQrels`, accepted as ``qrels`` by ``prepare``/``per_query``.
    """
    if isinstance(qrels, PreparedQrels):
        return qrels
    qrels = _frame(
        qrels, "qrels", ["query-id", "corpus-id", "score"],
        "Qrels need `query-id`, `corpus-id` and a graded `score` (e.g. ds['qrels'] from ragcov_data.load_dataset).",
    )
    q = pd.DataFrame({
        "query-id": qrels["query-id"].astype(str).to_numpy(dtype=object),
        "corpus-id": qrels["corpus-id"].astype(str).to_numpy(),
        "grade": pd.to_numeric(qrels["score"], errors="coerce").astype(float).to_numpy(),
    })
    bad = q["grade"].isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise RagcovError(
            f"`qrels` has {int(bad.sum())} non-numeric or missing `score` value(s) (first at row {i}: "
            f"{qrels['score'].iloc[i]!r}); grades must be numbers (0 = irrelevant)."
        )
    dup = q.duplicated(["query-id", "corpus-id"])
    if dup.any():
        r = q[dup].iloc[0]
        raise RagcovError(
            f"`qrels` judges the same (query-id, corpus-id) pair more than once ({int(dup.sum())} duplicate(s); "
            f"first: {r['query-id']!r}, {r['corpus-id']!r}); keep one grade per pair."
        )
    return PreparedQrels(q)


def lowest_relevant_grade(qrels: Any, relevance_threshold: float = 1) -> float:
    """The grade an unjudged document takes when read as relevant: the lowest positive grade of the qrels,
    raised to ``relevance_threshold`` so that binary metrics count it (1 where no grade is positive)."""
    pq = prepare_qrels(qrels)
    g = pq.frame["grade"].to_numpy(dtype=float)
    pos = g[g > 0]
    return float(max(pos.min() if pos.size else 1.0, relevance_threshold))


def prepare(
    run: Any,
    qrels: Any,
    *,
    relevance_threshold: float = 1,
    query_ids: Any = None,
    unjudged: str = "irrelevant",
    tie_policy: str = DEFAULT_TIE_POLICY,
    unjudged_grade: float | None = None,
) -> RankedLists:
    """Validate ``run`` and ``qrels`` and join them into :class:`RankedLists` ordered by ``tie_policy``.

    ``query_ids`` defaults to every query id in ``qrels``; rows of other queries are left out. ``qrels``
    may be a :class:`PreparedQrels` (from :func:`prepare_qrels`) to skip re-validating it for each run.
    With ``unjudged="relevant"`` a retrieved unjudged document takes ``unjudged_grade`` (default:
    :func:`lowest_relevant_grade`); the judged documents, hence the ideal ranking and the number of
    relevant documents, are left as judged.
    """
    tie_policy = check_tie_policy(tie_policy)
    if unjudged not in UNJUDGED_POLICIES:
        raise RagcovError(f"`unjudged` must be one of {UNJUDGED_POLICIES}; got {unjudged!r}.")
    if isinstance(relevance_threshold, bool) or not isinstance(relevance_threshold, (int, float, np.number)) \
            or not np.isfinite(relevance_threshold):
        raise RagcovError(f"`relevance_threshold` must be a finite number (e.g. 1); got {relevance_threshold!r}.")
    run = _frame(
        run, "run", ["query-id", "corpus-id"],
        "A run needs `query-id`, `corpus-id` and `rank` and/or `score` (as returned by Retriever.search).",
    )
    has_rank, has_score = "rank" in run.columns, "score" in run.columns
    if not (has_rank or has_score):
        raise RagcovError(
            f"`run` needs a `rank` or a `score` column to order documents; found {list(run.columns)}."
        )
    pq = prepare_qrels(qrels)  # a PreparedQrels passes through: validated once for many runs
    qids = _scored_ids(pq, query_ids)
    q = pq.for_queries(qids)
    r = _run_rows(run, qids, has_rank, has_score)
    r = r.merge(q[["qidx", "corpus-id", "grade"]], on=["qidx", "corpus-id"], how="left")
    if unjudged == "skip":
        r = r[r["grade"].notna()]
    elif unjudged == "relevant":
        g = lowest_relevant_grade(pq, relevance_threshold) if unjudged_grade is None else unjudged_grade
        if isinstance(g, bool) or not isinstance(g, (int, float, np.number)) or not np.isfinite(g) or g <= 0:
            raise RagcovError(f"`unjudged_grade` must be a positive number (e.g. 1); got {g!r}.")
        r["grade"] = r["grade"].fillna(float(g))
    r["rel"] = r["grade"].fillna(-np.inf) >= relevance_threshold
    r = _order(r, tie_policy, has_rank)
    r["pos"] = r.groupby("qidx", sort=False).cumcount() + 1
    cols = ["qidx", "pos", "grade", "rel", "score"]
    if tie_policy == "expected":
        r = _tie_groups(r)
        cols += ["gstart", "gsize"]
    ranked = r[cols].reset_index(drop=True)
    return RankedLists(
        ranked=ranked,
        judged=q[["qidx", "grade"]].reset_index(drop=True),
        query_ids=qids,
        threshold=float(relevance_threshold),
        tie_policy=tie_policy,
    )


def _scored_ids(pq: "PreparedQrels", query_ids: Any) -> pd.Index:
    """The queries to score, as an object Index of str: ``query_ids`` (each once), else every qrels query."""
    if query_ids is None:
        qids = pd.Index(pd.unique(pq.frame["query-id"].to_numpy(dtype=object)))
    else:
        if isinstance(query_ids, (str, bytes)):
            raise RagcovError("`query_ids` must be a list of query ids, not a single string.")
        qids = pd.Index([str(x) for x in query_ids])
        if qids.has_duplicates:
            raise RagcovError(
                f"`query_ids` has duplicates (first: {list(qids[qids.duplicated()][:3])}); list each query once."
            )
    return pd.Index(np.asarray(qids, dtype=object), dtype=object)


def _run_rows(run: pd.DataFrame, qids: pd.Index, has_rank: bool, has_score: bool) -> pd.DataFrame:
    """The run's rows of the scored queries: ``qidx`` (position in ``qids``), ``corpus-id``, ``rank``
    (when given) and ``score`` (``-rank`` for a rank-only run: equal ranks tie); missing or non-numeric
    ranks and scores, and a document listed twice for a query, are errors naming the row."""
    r = pd.DataFrame({
        "qidx": qids.get_indexer(run["query-id"].astype(str).to_numpy(dtype=object)),
        "corpus-id": run["corpus-id"].astype(str).to_numpy(),
    })
    if has_rank:
        r["rank"] = pd.to_numeric(run["rank"], errors="coerce").to_numpy()
        if r["rank"].isna().any():
            i = int(np.flatnonzero(r["rank"].isna().to_numpy())[0])
            raise RagcovError(f"`run` has a missing or non-numeric `rank` at row {i}; ranks are integers.")
    if has_score:
        r["score"] = pd.to_numeric(run["score"], errors="coerce").astype(float).to_numpy()
        if r["score"].isna().any():
            i = int(np.flatnonzero(r["score"].isna().to_numpy())[0])
            raise RagcovError(f"`run` has a missing or non-numeric `score` at row {i}; every row needs a score.")
    else:
        r["score"] = -r["rank"].astype(float)  # rank-only: equal ranks tie
    r = r[r["qidx"].to_numpy() >= 0]
    dup = r.duplicated(["qidx", "corpus-id"])
    if dup.any():
        x = r[dup].iloc[0]
        raise RagcovError(
            f"`run` lists the same document twice for a query ({int(dup.sum())} duplicate(s); first: "
            f"{qids[x['qidx']]!r}, {x['corpus-id']!r}); each (query-id, corpus-id) pair must appear once."
        )
    return r


def _order(r: pd.DataFrame, policy: str, has_rank: bool) -> pd.DataFrame:
    """Rows sorted by query, then the policy's order (see the module docstring)."""
    did = pd.factorize(r["corpus-id"], sort=True)[0]  # ascending id order (byte-wise for UTF-8)
    keys: list[np.ndarray] = [-did]  # last key: id descending
    if policy in ("pessimistic", "optimistic"):
        gain = np.clip(np.nan_to_num(r["grade"].to_numpy(dtype=float), nan=0.0), 0.0, None)
        rel = r["rel"].to_numpy().astype(np.int8)
        sign = -1 if policy == "optimistic" else 1  # optimistic: most relevant first within a tie
        keys += [sign * gain, sign * rel]
    keys.append(-r["score"].to_numpy(dtype=float))
    if policy == "run" and has_rank:
        keys.append(r["rank"].to_numpy(dtype=float))
    keys.append(r["qidx"].to_numpy())
    return r.iloc[np.lexsort(keys)]


def _tie_groups(r: pd.DataFrame) -> pd.DataFrame:
    """``gstart`` (positions before the row's group of equal scores) and ``gsize``, on sorted rows."""
    q, sc = r["qidx"].to_numpy(), r["score"].to_numpy()
    new = np.ones(len(r), dtype=bool)
    new[1:] = (q[1:] != q[:-1]) | (sc[1:] != sc[:-1])
    gid = np.cumsum(new) - 1
    first = np.flatnonzero(new)
    size = np.diff(np.append(first, len(r)))
    return r.assign(gstart=r["pos"].to_numpy()[first][gid] - 1, gsize=size[gid])
