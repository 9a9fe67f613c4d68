"""Validation and preparation shared by every metric: a run and qrels become ranked, graded lists.

Ordering of a run (one rule for all metrics)
--------------------------------------------
Within a query, rows are ordered by ``rank`` ascending when the run has a ``rank`` column (ties in
``rank`` broken by ``score`` descending, then ``corpus-id`` ascending as strings); otherwise by
``score`` descending, then ``corpus-id`` ascending. Positions are then renumbered 1, 2, ... so gaps in
``rank`` do not matter. Retrievers in :mod:`ragcov_data.baselines` already emit runs in this order.
Note that trec_eval breaks score ties by document id *descending* and ignores ranks; on runs with
tied scores the two tools can differ, on tie-free runs they agree.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError

#: Conventions for run rows that name documents without a judgment for the query.
UNJUDGED_POLICIES = ("irrelevant", "skip")


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
    """

    ranked: pd.DataFrame
    judged: pd.DataFrame
    query_ids: pd.Index
    threshold: float

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


def prepare(
    run: Any,
    qrels: Any,
    *,
    relevance_threshold: float = 1,
    query_ids: Any = None,
    unjudged: str = "irrelevant",
    need_score: bool = False,
) -> RankedLists:
    """Validate ``run`` and ``qrels`` and join them into :class:`RankedLists`.

    ``query_ids`` defaults to every query id in ``qrels``; rows of other queries are left out.
    """
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
    if need_score and not has_score:
        raise RagcovError(
            "tie policies other than 'first' need the run's `score` column to find documents tied at rank 1; "
            f"found {list(run.columns)}. Pass a run with scores or use tie_policy='first'."
        )
    qrels = _frame(
        qrels, "qrels", ["query-id", "corpus-id", "score"],
        "Qrels need `query-id`, `corpus-id` and a graded `score` (e.g. ds['qrels'] from ragcov_data.load_dataset).",
    )

    # ---- qrels ---------------------------------------------------------------------------
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

    # ---- queries to score ----------------------------------------------------------------
    if query_ids is None:
        qids = pd.Index(pd.unique(q["query-id"].to_numpy(dtype=object)))
    else:
        if isinstance(query_ids, (str, bytes)):
            raise RagcovError("`query_ids` must be a list of query ids, not a single string.")
        qids = pd.Index([str(x) for x in query_ids])
        if qids.has_duplicates:
            raise RagcovError(
                f"`query_ids` has duplicates (first: {list(qids[qids.duplicated()][:3])}); list each query once."
            )
    qids = pd.Index(np.asarray(qids, dtype=object), dtype=object)
    q["qidx"] = qids.get_indexer(q["query-id"].to_numpy(dtype=object))
    q = q[q["qidx"] >= 0]

    # ---- run -----------------------------------------------------------------------------
    r = pd.DataFrame({
        "qidx": qids.get_indexer(run["query-id"].astype(str).to_numpy(dtype=object)),
        "corpus-id": run["corpus-id"].astype(str).to_numpy(),
    })
    if has_score:
        r["score"] = pd.to_numeric(run["score"], errors="coerce").astype(float).to_numpy()
        if r["score"].isna().any():
            i = int(np.flatnonzero(r["score"].isna().to_numpy())[0])
            raise RagcovError(f"`run` has a missing or non-numeric `score` at row {i}; every row needs a score.")
    else:
        r["score"] = np.nan
    if has_rank:
        r["rank"] = pd.to_numeric(run["rank"], errors="coerce").to_numpy()
        if r["rank"].isna().any():
            i = int(np.flatnonzero(r["rank"].isna().to_numpy())[0])
            raise RagcovError(f"`run` has a missing or non-numeric `rank` at row {i}; ranks are 1-based integers.")
    r = r[r["qidx"].to_numpy() >= 0]
    dup = r.duplicated(["qidx", "corpus-id"])
    if dup.any():
        x = r[dup].iloc[0]
        raise RagcovError(
            f"`run` lists the same document twice for a query ({int(dup.sum())} duplicate(s); first: "
            f"{qids[x['qidx']]!r}, {x['corpus-id']!r}); each (query-id, corpus-id) pair must appear once."
        )
    r = r.merge(q[["qidx", "corpus-id", "grade"]], on=["qidx", "corpus-id"], how="left")
    if unjudged == "skip":
        r = r[r["grade"].notna()]
    r = r.assign(_neg=-r["score"].fillna(0.0))
    keys = (["rank"] if has_rank else []) + ["_neg", "corpus-id"]
    r = r.sort_values(["qidx"] + keys, kind="mergesort")
    r["pos"] = r.groupby("qidx", sort=False).cumcount() + 1
    r["rel"] = r["grade"].fillna(-np.inf) >= relevance_threshold
    ranked = r[["qidx", "pos", "grade", "rel", "score"]].reset_index(drop=True)
    return RankedLists(
        ranked=ranked,
        judged=q[["qidx", "grade"]].reset_index(drop=True),
        query_ids=qids,
        threshold=float(relevance_threshold),
    )
