"""Handing ragcov runs to outside scorers (BEIR, ir_measures, pytrec_eval, trec_eval) without changing the score.

In the self-retrieval task a query is the first words of its own chunk, so a retriever that is not told
to skip that chunk ranks it first. ragcov's evaluator removes it (``exclude_self=True``); outside scorers
do not know it is special:

- BEIR's ``EvaluateRetrieval.evaluate(qrels, results, k_values, ignore_identical_ids=True)`` (the
  default) drops every hit whose document id equals the query id, before scoring with pytrec_eval; its
  exact dense search also asks for ``top_k + 1`` hits and skips that id. A ragcov query's ``_id`` *is*
  its chunk's id (``"<doc_id>#<chunk_index:04d>"``), so BEIR drops exactly the own chunk. MTEB's
  retrieval evaluator has the same switch, off by default (tasks such as ArguAna and Quora turn it on).
- ir_measures, pytrec_eval and trec_eval score every row they are given: the own chunk counts as an
  unjudged, non-relevant hit at rank 1 and every metric drops.

:func:`exclude_self` makes any run safe for every scorer: it removes the own-chunk rows and re-ranks.
Search one candidate deeper than the cutoff you score (``k + 1``), or cut-off metrics at ``k`` see only
``k - 1`` candidates. On JurisTCU there is no own chunk, and 7 of its document ids equal query ids
(13, 30, 32, 65, 83, 109, 115): pass ``ignore_identical_ids=False`` to BEIR there.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError

#: ``run.attrs`` key: own-chunk rows :func:`exclude_self` removed.
REMOVED_KEY = "self_rows_removed"


def _is_dataset(obj: Any) -> bool:
    """A ``datasets.Dataset`` (duck-typed: ``datasets`` is not imported for it)."""
    return hasattr(obj, "column_names") and hasattr(obj, "select_columns") and hasattr(obj, "to_pandas")


def _queries_frame(queries_or_task: Any) -> pd.DataFrame:
    """The queries table (``_id``, ``chunk_id``) of a DataFrame, Dataset, Task or DatasetDict."""
    obj = queries_or_task
    if isinstance(obj, pd.DataFrame) or _is_dataset(obj):
        pass
    elif isinstance(getattr(obj, "queries", None), pd.DataFrame):  # a Task
        obj = obj.queries
    elif isinstance(obj, Mapping) or hasattr(obj, "keys"):  # DatasetDict, dict of frames
        if "queries" not in obj.keys():
            raise RagcovError("`queries_or_task` has no 'queries' split; pass the task (DatasetDict, Task or "
                              "dict of DataFrames) or its queries table.")
        obj = obj["queries"]
    if _is_dataset(obj):
        obj = obj.select_columns([c for c in ("_id", "chunk_id") if c in obj.column_names]).to_pandas()
    if not isinstance(obj, pd.DataFrame):
        raise RagcovError(f"`queries_or_task` must be a task or a queries table; got {type(queries_or_task).__name__}.")
    if "_id" not in obj.columns or "chunk_id" not in obj.columns:
        raise RagcovError(
            f"the queries have no {'`chunk_id`' if '_id' in obj.columns else '`_id`/`chunk_id`'} column (columns: "
            f"{sorted(map(str, obj.columns))[:10]}): this is not a self-retrieval task, so a query has no own chunk "
            "to exclude. Score the run as it is (with BEIR, pass ignore_identical_ids=False)."
        )
    return obj


def identical_id_rows(run: pd.DataFrame) -> int:
    """Rows whose ``corpus-id`` equals their ``query-id``: in a ragcov self-retrieval run, the own chunks
    that an outside scorer other than BEIR would count as misses (a check for code that writes runs)."""
    if not {"query-id", "corpus-id"} <= set(run.columns):
        raise RagcovError("`run` needs 'query-id' and 'corpus-id' columns.")
    return int((run["query-id"].astype(str).to_numpy() == run["corpus-id"].astype(str).to_numpy()).sum())


def exclude_self(run: pd.DataFrame, queries_or_task: Any) -> pd.DataFrame:
    """A copy of ``run`` without each query's own chunk, re-ranked: what to hand to outside scorers.

    Use it before giving a self-retrieval run to ir_measures, pytrec_eval or trec_eval (or pass
    ``ignore_identical_ids=True`` to BEIR, which drops the same rows): they would otherwise count the own
    chunk, ranked first by most retrievers, as a non-relevant hit, and score the run lower than ragcov's
    evaluator does.

    Parameters
    ----------
    run : DataFrame
        ``query-id``, ``corpus-id`` and optionally ``rank``, ``score`` (a ragcov run or any toolkit's).
    queries_or_task : DatasetDict, Task, dict of DataFrames, Dataset or DataFrame
        The task, or its queries, with ``_id`` and ``chunk_id`` (the query's own chunk).

    Returns
    -------
    DataFrame
        The rows whose ``corpus-id`` is not the query's ``chunk_id``, in the run's order. ``rank`` (when
        present) is recomputed 1, 2, ... per query in the old rank order. ``attrs`` keeps the run's and adds
        ``exclude_self=True`` and ``self_rows_removed`` (rows removed). The input is not modified.

    Raises
    ------
    RagcovError
        The run lacks ``query-id``/``corpus-id``, or the queries have no ``chunk_id`` (not a
        self-retrieval task).

    Examples
    --------
    >>> clean = exclude_self(run, ds)                                    # doctest: +SKIP
    >>> ir_measures.calc_aggregate([nDCG@10], qrels, clean.rename(columns=...))  # doctest: +SKIP
    """
    if not isinstance(run, pd.DataFrame):
        raise RagcovError(f"`run` must be a DataFrame (load a run file with ragcov's load_run); got "
                          f"{type(run).__name__}.")
    missing = [c for c in ("query-id", "corpus-id") if c not in run.columns]
    if missing:
        raise RagcovError(f"`run` lacks columns {missing}; expected 'query-id, corpus-id [, rank, score]'.")
    queries = _queries_frame(queries_or_task)
    own = dict(zip(queries["_id"].astype(str), queries["chunk_id"].astype(str)))
    mask = run["query-id"].astype(str).map(own).to_numpy(dtype=object) == run["corpus-id"].astype(str).to_numpy()
    mask = np.asarray(mask, dtype=bool)
    out = run.loc[~mask].copy()
    if "rank" in out.columns and len(out):
        out["rank"] = out.groupby("query-id", sort=False)["rank"].rank(method="first").astype("int64")
    out.attrs = {**run.attrs, "exclude_self": True, REMOVED_KEY: int(mask.sum())}
    return out


__all__ = ["exclude_self", "identical_id_rows", "REMOVED_KEY"]
