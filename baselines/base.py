"""The retriever protocol and the exact, memory-bounded top-k shared by every baseline.

A retriever indexes a corpus (``_id``, ``text``) and searches queries (``_id``, ``text`` and, for
``exclude_self=True``, ``chunk_id``), returning a *run*: a DataFrame with columns
``query-id, corpus-id, rank, score`` (see :mod:`ragcov_data.baselines.top_ties`).

Ordering and ties (the same for every retriever)
------------------------------------------------
Candidates are sorted by score descending, then by ``corpus-id`` *descending* (byte-wise), which is
trec_eval's own order for equal scores: a run saved as TREC and scored by trec_eval gives the per-query
values ragcov gives. Two scores *tie* when they are equal within :data:`ragcov_data.ties.TIE_TOL`
(relative); floating-point summation noise (1e-16) must never decide an order, so:

* every run of tied candidates (scores chained within the tolerance) is reported with one exact score,
  the run's maximum, and ordered by ``corpus-id`` descending — trec_eval, at full double precision,
  then sees the same tie and breaks it the same way;
* every member of the top group (the candidates tied with a query's best score) is kept, even beyond
  ``k`` (the tie policies need all of them); at the ``k``-th row, equal scores are cut by the same order.

Scores at or below ``min_score`` (``0.0`` for the lexical retrievers: no shared term) never enter a
run, so a query may have fewer than ``k`` rows, or none. With ``exclude_self=True`` a query's own chunk
(``chunk_id``) is never a candidate. Scoring goes in blocks of queries (at most ``max_block_floats``
scores at a time), never a full queries x corpus matrix.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from itertools import repeat
from typing import Any, Iterable, Iterator

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.runs.fingerprint import FINGERPRINT_KEY, corpus_hash
from ragcov_data.runs import RUN_COLUMNS, take_str as _take
from ragcov_data.ties import TIE_TOL, snap_ties, tie_keys, tied


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
        #: Per corpus position: 0 for the largest id; sorting it ascending gives ids descending.
        self._tiekey: np.ndarray = np.empty(0, dtype=np.int64)
        #: Default for the progress bars of ``index`` and ``search``.
        self.show_progress: bool = False
        self._show_index: bool = True

    # ---- to implement -------------------------------------------------------------------
    @abstractmethod
    def _fit(self, texts: list[str]) -> None:
        """Build the index from the corpus texts (in corpus order)."""

    @abstractmethod
    def _score_block(self, texts: list[str]) -> np.ndarray:
        """Scores, shape ``(len(texts), n_corpus)``, of a block of query texts.

        Return a fresh array: :meth:`search` modifies it in place (exclusions) to save memory.
        """

    def params(self) -> dict[str, Any]:
        """Parameters recorded with every run (override to add yours)."""
        return {}

    # ---- public API ---------------------------------------------------------------------
    def index(self, corpus: Any, *, show_progress: bool | None = None) -> "Retriever":
        """Index ``corpus`` (``datasets.Dataset`` or DataFrame with ``_id``, ``text``); returns self.

        ``show_progress=None`` follows the retriever's ``show_progress`` attribute.
        """
        df = as_frame(corpus, ["_id", "text"], "corpus")
        ids = df["_id"].astype(str).to_numpy(dtype=object)
        dup = pd.Index(ids)[pd.Index(ids).duplicated()]
        if len(dup):
            raise RagcovError(
                f"`corpus` has duplicate `_id` values (first: {list(dup[:3])}); ids must be unique."
            )
        self._show_index = self._progress_on(show_progress)
        self._fit(df["text"].astype(str).tolist())
        # what every run of this index was made on (checked by every reader against the task's corpus)
        self.corpus_fingerprint_ = {"corpus_sha256": corpus_hash(df), "chunks": int(len(df))}
        self.corpus_ids = ids
        self._pos = {cid: i for i, cid in enumerate(ids)}
        self._tiekey = tie_keys(ids)
        return self

    def _search_queries(self, queries: Any, k: Any, exclude_self: bool) -> pd.DataFrame:
        """The checks every ``search`` starts with (an index, a positive integer ``k``) and the queries as a
        DataFrame (``_id``, ``text``, and ``chunk_id`` when ``exclude_self``)."""
        if self.corpus_ids is None:
            raise RagcovError("call `index(corpus)` before `search(queries)`.")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise RagcovError(f"`k` must be a positive integer; got {k!r}.")
        return as_frame(queries, ["_id", "text"] + (["chunk_id"] if exclude_self else []), "queries")

    def search(
        self,
        queries: Any,
        k: int = 10,
        exclude_self: bool = False,
        *,
        show_progress: bool | None = None,
    ) -> pd.DataFrame:
        """Rank the corpus for every query; return a run (``query-id, corpus-id, rank, score``).

        Parameters
        ----------
        queries : Dataset or DataFrame
            Columns ``_id``, ``text`` (and ``chunk_id`` if ``exclude_self``); ``_id`` values unique.
        k : int, default: 10
            Rows per query; candidates tied with the top score are added beyond ``k``.
        exclude_self : bool, default: False
            Remove each query's own chunk (``chunk_id``) from its candidates (self-retrieval task).
        show_progress : bool or None, default: None
            Progress bar over query blocks; ``None`` follows the ``show_progress`` attribute.

        Returns
        -------
        pandas.DataFrame
            The run, ordered by query (input order) then rank; ``attrs`` holds ``retriever``,
            ``params`` and ``exclude_self``.
        """
        qdf = self._search_queries(queries, k, exclude_self)
        qids = qdf["_id"].astype(str).tolist()
        dup = pd.Index(qids)[pd.Index(qids).duplicated()]
        if len(dup):
            raise RagcovError(
                f"`queries` has duplicate `_id` values (first: {list(dup[:3])}); query ids must be unique."
            )
        texts = qdf["text"].astype(str).tolist()
        own = self._own_positions(qdf["chunk_id"]) if exclude_self else None
        n = len(self.corpus_ids)
        n_jobs = self._n_jobs()
        block = max(1, min(len(qids), self.max_block_floats // max(n, 1)))
        if n_jobs > 1:  # blocks of equal size, as many as a multiple of the threads
            n_blocks = -(-len(qids) // block)
            n_blocks = min(len(qids), -(-n_blocks // n_jobs) * n_jobs)
            block = -(-len(qids) // n_blocks)
        starts = range(0, len(qids), block)

        def one_block(start: int) -> tuple[np.ndarray, ...]:
            stop = min(start + block, len(qids))
            scores = np.array(self._score_block(texts[start:stop]), dtype=np.float64, copy=None)
            if scores.shape != (stop - start, n):
                raise RagcovError(
                    f"{type(self).__name__}._score_block returned shape {scores.shape}; "
                    f"expected {(stop - start, n)} (queries x corpus)."
                )
            rows, cols, vals, rank = self._topk_arrays(
                scores, qids[start:stop], k, None if own is None else own[start:stop])
            return rows + start, cols, vals, rank

        show = self._progress_on(show_progress)
        n_jobs = min(n_jobs, len(starts))
        try:
            if n_jobs <= 1:
                parts = [one_block(s) for s in _progress(starts, block, self.name, show)]
            else:
                # Blocks in threads (numpy, scipy and BLAS release the GIL); BLAS itself single-threaded
                # meanwhile, so the threads do not oversubscribe the cores.
                from concurrent.futures import ThreadPoolExecutor

                from threadpoolctl import threadpool_limits

                with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(n_jobs) as pool:
                    parts = list(_progress(pool.map(one_block, starts), block, self.name, show, total=len(starts)))
        finally:
            self._after_search()
        rows, cols, vals, rank = (np.concatenate(a) for a in zip(*parts))
        return self._stamp(self._run_frame(qids, rows, cols, vals, rank), exclude_self)

    def _stamp(self, run: pd.DataFrame, exclude_self: bool) -> pd.DataFrame:
        """Record in ``run.attrs`` the retriever, its parameters, ``exclude_self`` and the corpus it indexed
        (:mod:`ragcov_data.runs.fingerprint`)."""
        run.attrs["retriever"] = self.name
        run.attrs["params"] = self.params()
        run.attrs["exclude_self"] = bool(exclude_self)
        fp = getattr(self, "corpus_fingerprint_", None)
        if fp:
            run.attrs[FINGERPRINT_KEY] = dict(fp)
        return run

    # ---- internals ----------------------------------------------------------------------
    #: Threads scoring query blocks in parallel (``None``: one per CPU). Only for retrievers whose
    #: ``_score_block`` is thread-safe; the base default is 1.
    n_jobs: int | None = 1

    def _n_jobs(self) -> int:
        if self.n_jobs is None:
            import os

            return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
        return max(1, int(self.n_jobs))

    def _after_search(self) -> None:
        """Hook run when a search ends (e.g. to free scoring buffers)."""

    def _progress_on(self, show: bool | None) -> bool:
        return bool(getattr(self, "show_progress", False) if show is None else show)

    def _own_positions(self, chunk_ids: Iterable[Any]) -> np.ndarray:
        """Corpus position of each query's own chunk; every ``chunk_id`` must be in the corpus."""
        ids = pd.Series(chunk_ids).astype(str).tolist()
        own = np.fromiter(map(self._pos.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))
        missing = [c for c, p in zip(ids, own) if p < 0]
        if missing:
            raise RagcovError(
                f"`exclude_self=True` but {len(missing)} query `chunk_id` value(s) are not in the indexed corpus "
                f"(first: {missing[:3]}). Index the corpus these queries were made from, or pass "
                "`exclude_self=False`."
            )
        return own

    def _topk(
        self, scores: np.ndarray, qids: list[str], k: int, own: np.ndarray | None = None
    ) -> pd.DataFrame:
        """Exact top-k of each row of ``scores`` (modified in place), with the ordering and ties above."""
        return self._run_frame(qids, *self._topk_arrays(scores, qids, k, own))

    def _run_frame(
        self, qids: list[str], rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, rank: np.ndarray
    ) -> pd.DataFrame:
        """The run table of :meth:`_topk_arrays` rows (``rows`` index ``qids``)."""
        return pd.DataFrame(
            {
                "query-id": _take(qids, rows),
                "corpus-id": _take(self.corpus_ids, cols),
                "rank": rank.astype(np.int64, copy=False),
                "score": vals.astype(np.float64, copy=False),
            },
            columns=RUN_COLUMNS,
        )

    def _topk_arrays(
        self, scores: np.ndarray, qids: list[str], k: int, own: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_topk` as arrays: query row, corpus position, score and rank of every run row."""
        b, n = scores.shape
        rows_b = np.arange(b)
        if own is not None:
            scores[rows_b, own] = -np.inf
        kk = min(k, n)
        top = scores.max(axis=1)
        if np.isnan(top).any():
            bad = qids[int(np.flatnonzero(np.isnan(top))[0])]
            raise RagcovError(f"{type(self).__name__} produced NaN scores (query {bad!r}); check its inputs.")
        floor = -np.finfo(np.float64).max if self.min_score is None else np.nextafter(self.min_score, np.inf)
        # Candidates: at least the k-th score (less a tie tolerance, so scores tied with it are all seen,
        # and the cut follows corpus order) and the whole top group; finite; above min_score. A cheap
        # lower bound of the k-th score picks a superset; its exact value among those then trims it.
        rows, cols, vals = _at_least(scores, _window(_kth_lower_bound(scores, kk), top, floor))
        counts = np.bincount(rows, minlength=b)
        width = int(counts.max()) if len(rows) else 0
        if width > kk and b * width <= scores.size:
            padded = np.full((b, width), -np.inf)
            starts = np.zeros(b, dtype=np.int64)
            np.cumsum(counts[:-1], out=starts[1:])
            padded[rows, np.arange(len(rows)) - starts[rows]] = vals
            kth = np.partition(padded, width - kk, axis=1)[:, width - kk]  # exact: all above the bound
            keep = vals >= _window(kth, top, floor)[rows]
            rows, cols, vals = rows[keep], cols[keep], vals[keep]
        in_top = tied(vals, top[rows])
        vals = np.where(in_top, top[rows], vals)  # the top group reports one score
        order = np.lexsort((self._tiekey[cols], -vals, rows))
        rows, cols, vals, in_top = rows[order], cols[order], vals[order], in_top[order]
        vals, moved = snap_ties(rows, vals)
        if moved.any():  # a snapped run of near-ties: order it by id descending, as trec_eval will
            order = np.lexsort((self._tiekey[cols], -vals, rows))
            rows, cols, vals, in_top = rows[order], cols[order], vals[order], in_top[order]
        starts = np.searchsorted(rows, rows_b)
        rank = np.arange(len(rows)) - starts[rows] + 1
        keep = (rank <= kk) | in_top
        return rows[keep], cols[keep], vals[keep], rank[keep]


def _window(kth: np.ndarray, top: np.ndarray, floor: float) -> np.ndarray:
    """Lowest score a row keeps: its k-th score or its top group, whichever reaches lower, with a tie
    tolerance; never at or below ``floor``."""
    lo = np.minimum(kth - _tol(kth), top - 2 * _tol(top))
    return np.maximum(np.nan_to_num(lo, nan=floor, neginf=floor), floor)


def _at_least(scores: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row, column and value of every score at or above its row's ``lo``, in row-major order."""
    flat = np.flatnonzero(scores >= lo[:, None])  # cheaper than a 2-d nonzero
    rows = flat // scores.shape[1]
    return rows, flat - rows * scores.shape[1], scores.ravel()[flat]


def _kth_lower_bound(scores: np.ndarray, kk: int) -> np.ndarray:
    """A lower bound of each row's ``kk``-th largest score, cheap on wide rows.

    The ``kk``-th largest value of any subset of a row's columns is at most the row's ``kk``-th largest,
    so a strided column sample of about ``32 * kk`` columns gives a valid bound at a fraction of a full
    partition; only values above it (a few hundred a row) are then sorted exactly.
    """
    n = scores.shape[1]
    stride = max(1, n // (32 * kk))
    sample = scores[:, ::stride] if stride > 1 else scores
    m = sample.shape[1]
    return np.partition(sample, m - kk, axis=1)[:, m - kk]


def _tol(x: np.ndarray) -> np.ndarray:
    """Absolute tie tolerance at ``x`` (``inf`` stays ``inf``; used for candidate windows only)."""
    with np.errstate(invalid="ignore"):
        return TIE_TOL * np.maximum(1.0, np.abs(x))


def _progress(it: Iterable[Any], block: int, name: str, show: bool, total: int | None = None) -> Iterator[Any]:
    if not show:
        return iter(it)
    from tqdm.auto import tqdm

    total = len(it) if total is None else total  # type: ignore[arg-type]
    return iter(tqdm(it, total=total, desc=f"{name}: search", unit=f"×{block} queries", leave=False,
                     disable=None))  # a bar on a terminal only
