"""The retriever protocol and the exact, memory-bounded top-k shared by every baseline.

A retriever indexes a corpus (``_id``, ``text``) and searches queries (``_id``, ``text`` and, for
``exclude_self=True``, ``chunk_id``), returning a *run*: a DataFrame with columns
``query-id, corpus-id, rank, score``.

Ordering and ties (the same for every retriever)
------------------------------------------------
Candidates are sorted by score descending, then by corpus position (the order of ``index``), so runs
are deterministic. Beyond the ``k`` requested rows, every candidate tied with the top score (see
:mod:`ragcov_data.ties`) is also kept, so tie policies for hit@1 can be applied exactly later.
Scoring goes in blocks of queries, never a full queries x corpus matrix.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.ties import tied

RUN_COLUMNS = ["query-id", "corpus-id", "rank", "score"]


def as_frame(data: Any, required: list[str], name: str) -> pd.DataFrame:
    """Accept a ``datasets.Dataset``, a DataFrame or a list of dicts; check ``required`` columns."""
    if hasattr(data, "to_pandas") and not isinstance(data, pd.DataFrame):
        data = data.to_pandas()
    elif not isinstance(data, pd.DataFrame):
        data = pd.DataFrame(list(data))
    missing = [c for c in required if c not in data.columns]
    if missing:
        raise RagcovError(
            f"`{name}` lacks column(s) {missing}; found {list(data.columns)}. "
            f"Pass a table with columns {required} (e.g. ds[{name!r}] from ragcov_data.load_dataset)."
        )
    if data.empty:
        raise RagcovError(f"`{name}` is empty; pass at least one row.")
    return data


class Retriever(ABC):
    """Index a corpus once, then search any number of query sets.

    Subclasses implement :meth:`_fit` (build the index from texts) and :meth:`_score_block`
    (dense scores of a block of queries against the whole corpus); this class handles ids,
    ``exclude_self``, exact top-k, ties, ordering and memory bounds.
    """

    #: Short name recorded in run metadata, e.g. ``"bm25"``.
    name: str = "retriever"
    #: Scores at or below this are "not retrieved" and never enter a run (lexical retrievers use 0.0:
    #: a chunk sharing no term with the query is not a candidate). ``None`` keeps every score.
    min_score: float | None = None
    #: Max floats in one score block (queries x corpus); bounds memory (~256 MB of float64).
    max_block_floats: int = 32_000_000

    def __init__(self) -> None:
        self.corpus_ids: np.ndarray | None = None
        self._pos: dict[str, int] = {}

    # ---- to implement -------------------------------------------------------------------
    @abstractmethod
    def _fit(self, texts: list[str]) -> None:
        """Build the index from the corpus texts (in corpus order)."""

    @abstractmethod
    def _score_block(self, texts: list[str]) -> np.ndarray:
        """Scores, shape ``(len(texts), n_corpus)``, of a block of query texts."""

    def params(self) -> dict[str, Any]:
        """Parameters recorded with every run (override to add yours)."""
        return {}

    # ---- public API ---------------------------------------------------------------------
    def index(self, corpus: Any) -> "Retriever":
        """Index ``corpus`` (``datasets.Dataset`` or DataFrame with ``_id``, ``text``); returns self."""
        df = as_frame(corpus, ["_id", "text"], "corpus")
        ids = df["_id"].astype(str).to_numpy()
        dup = pd.Index(ids)[pd.Index(ids).duplicated()]
        if len(dup):
            raise RagcovError(f"`corpus` has duplicate `_id` values (first: {list(dup[:3])}); ids must be unique.")
        self.corpus_ids = ids
        self._pos = {cid: i for i, cid in enumerate(ids)}
        self._fit(df["text"].astype(str).tolist())
        return self

    def search(
        self,
        queries: Any,
        k: int = 10,
        exclude_self: bool = False,
        *,
        show_progress: bool = True,
    ) -> pd.DataFrame:
        """Rank the corpus for every query; return a run (``query-id, corpus-id, rank, score``).

        Parameters
        ----------
        queries : Dataset or DataFrame with ``_id``, ``text`` (and ``chunk_id`` if ``exclude_self``).
        k : int, default: 10
            Rows per query; candidates tied with the top score are added beyond ``k``.
        exclude_self : bool, default: False
            Remove each query's own chunk (``chunk_id``) from its candidates (self-retrieval task).
        """
        if self.corpus_ids is None:
            raise RagcovError("call `index(corpus)` before `search(queries)`.")
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise RagcovError(f"`k` must be a positive integer; got {k!r}.")
        req = ["_id", "text"] + (["chunk_id"] if exclude_self else [])
        qdf = as_frame(queries, req, "queries")
        qids = qdf["_id"].astype(str).tolist()
        texts = qdf["text"].astype(str).tolist()
        own = None
        if exclude_self:
            own = np.array([self._pos.get(str(c), -1) for c in qdf["chunk_id"]])
        n = len(self.corpus_ids)
        block = max(1, min(len(qids), self.max_block_floats // max(n, 1)))
        parts = []
        for start in _progress(range(0, len(qids), block), len(qids), block, self.name, show_progress):
            stop = min(start + block, len(qids))
            scores = np.asarray(self._score_block(texts[start:stop]), dtype=float)
            if self.min_score is not None:
                scores[scores <= self.min_score] = -np.inf
            if own is not None:
                rows = np.arange(stop - start)
                sel = own[start:stop] >= 0
                scores[rows[sel], own[start:stop][sel]] = -np.inf
            parts.append(self._topk(scores, qids[start:stop], k))
        run = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=RUN_COLUMNS)
        run.attrs["retriever"] = self.name
        run.attrs["params"] = self.params()
        run.attrs["exclude_self"] = bool(exclude_self)
        return run

    # ---- internals ----------------------------------------------------------------------
    def _topk(self, scores: np.ndarray, qids: list[str], k: int) -> pd.DataFrame:
        """Exact top-k of each row, sorted by (-score, corpus position), ties with the top kept.

        All candidates tied with the k-th score are considered before cutting, so the cut at the
        boundary follows corpus order (deterministic ``first`` policy), never argpartition's whim.
        """
        b, n = scores.shape
        kk = min(k, n)
        kth = -np.partition(-scores, kk - 1, axis=1)[:, kk - 1]
        top = scores.max(axis=1)
        lo = np.where(np.isfinite(kth), kth - _tol(kth), kth)
        mask = (scores >= lo[:, None]) & np.isfinite(scores)
        rows, cols = np.nonzero(mask)
        vals = scores[rows, cols]
        order = np.lexsort((cols, -vals, rows))
        rows, cols, vals = rows[order], cols[order], vals[order]
        # rank within row
        starts = np.searchsorted(rows, np.arange(b))
        rank = np.arange(len(rows)) - starts[rows] + 1
        keep = (rank <= kk) | tied(vals, top[rows])
        rows, cols, vals, rank = rows[keep], cols[keep], vals[keep], rank[keep]
        return pd.DataFrame(
            {
                "query-id": np.asarray(qids, dtype=object)[rows],
                "corpus-id": self.corpus_ids[cols],
                "rank": rank.astype(np.int64),
                "score": vals,
            }
        )


def _tol(x: np.ndarray) -> np.ndarray:
    from ragcov_data.ties import TIE_TOL

    return TIE_TOL * np.maximum(1.0, np.abs(x))


def _progress(it: range, total: int, block: int, name: str, show: bool) -> Iterator[int]:
    if not show:
        return iter(it)
    from tqdm.auto import tqdm

    return iter(tqdm(it, total=len(it), desc=f"{name}: search", unit=f"×{block} queries", leave=False))
