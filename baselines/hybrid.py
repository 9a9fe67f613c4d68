"""Fusion of runs: reciprocal-rank fusion and a normalised convex combination, as a function and a retriever.

:func:`fuse` merges given runs; :class:`Hybrid` indexes and searches two or more retrievers (e.g.
``Hybrid([BM25(analyzer="pt"), Dense("e5-small")])``) and fuses their runs. Each retriever searches
with its own analyzer or prompts (a dense e5 model encodes queries as ``"query: ..."`` and passages as
``"passage: ..."``).

Methods (per query; a document missing from a run contributes nothing from that run):

* ``"rrf"`` — reciprocal-rank fusion (Cormack, Clarke & Büttcher 2009): ``sum_i w_i / (k + rank_i(d))``,
  ``k = 60``, ``w_i = 1``. ``rank_i`` is the document's position in run ``i`` in trec_eval's order
  (score descending, document id descending), so equal scores get consecutive ranks exactly as
  trec_eval would rank them.
* ``"convex"`` — ``sum_i w_i (s_i(d) - min_i) / (max_i - min_i)``, each run's scores min-max normalised
  over the documents it returned for the query (all equal: each gets 1); ``w_i = 1/n`` by default.

The fused run follows the run contract: per query, score descending then document id descending
(trec_eval's order), near-equal scores (floating-point noise of the sums, within
:data:`ragcov_data.ties.TIE_TOL`) snapped to one exact value, ranks 1..n.

References
----------
Cormack, Clarke & Büttcher (2009), Reciprocal rank fusion outperforms Condorcet and individual rank
learning methods. SIGIR. Bruch, Gai & Ingber (2023), An analysis of fusion functions for hybrid
retrieval. ACM TOIS (min-max convex combination).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ragcov_data.baselines.base import Retriever
from ragcov_data.errors import RagcovError
from ragcov_data.runs import RUN_COLUMNS
from ragcov_data.ties import snap_ties, tie_keys

#: Fusion methods by name.
METHODS = ("rrf", "convex")


def _check(method: str, weights: Sequence[float] | None, n: int, k: float) -> np.ndarray:
    if method not in METHODS:
        raise RagcovError(f"`method` must be one of {list(METHODS)}; got {method!r}.")
    if isinstance(k, bool) or not isinstance(k, (int, float, np.number)) or not 0 <= k < np.inf:
        raise RagcovError(f"`k` must be a finite number >= 0; got {k!r}.")
    if weights is None:
        return np.full(n, 1.0 if method == "rrf" else 1.0 / n)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise RagcovError(
            f"`weights` must be {n} finite non-negative numbers, not all zero (one per run); got {list(weights)!r}."
        )
    return w


def _trec_order(run: pd.DataFrame) -> pd.DataFrame:
    """``run`` sorted per query by score descending, then corpus-id descending (trec_eval's order)."""
    return run.sort_values(["query-id", "score", "corpus-id"], ascending=[True, False, False], kind="stable")


def fuse(
    runs: Sequence[pd.DataFrame],
    method: str = "rrf",
    *,
    k: float = 60,
    weights: Sequence[float] | None = None,
) -> pd.DataFrame:
    """Fuse runs (``query-id, corpus-id, rank, score``) into one run; see the module notes.

    Parameters
    ----------
    runs : sequence of DataFrame
        Two or more runs (e.g. ``retriever.search(...)`` or :func:`~ragcov_data.baselines.load_run`).
        Only ``query-id``, ``corpus-id`` and ``score`` are read: ranks are recomputed in trec_eval order.
    method : {"rrf", "convex"}, default: "rrf"
    k : float, default: 60
        ``rrf`` only: the rank offset.
    weights : sequence of float, optional
        One per run; default 1 each for ``rrf``, ``1/len(runs)`` each for ``convex``.

    Returns
    -------
    DataFrame
        Every document any run returned for a query, fused; queries in order of first appearance.

    Examples
    --------
    >>> import pandas as pd
    >>> a = pd.DataFrame({"query-id": ["q", "q"], "corpus-id": ["x", "y"], "rank": [1, 2], "score": [2.0, 1.0]})
    >>> b = pd.DataFrame({"query-id": ["q", "q"], "corpus-id": ["y", "z"], "rank": [1, 2], "score": [0.9, 0.5]})
    >>> fuse([a, b], "rrf", k=60)[["corpus-id", "rank"]].values.tolist()
    [['y', 1], ['x', 2], ['z', 3]]
    """
    runs = list(runs)
    if len(runs) < 2:
        raise RagcovError(f"`runs` must hold at least two runs to fuse; got {len(runs)}.")
    w = _check(method, weights, len(runs), k)
    parts = []
    for i, run in enumerate(runs):
        missing = [c for c in ("query-id", "corpus-id", "score") if c not in getattr(run, "columns", ())]
        if missing:
            raise RagcovError(f"run {i} lacks column(s) {missing}; a run has columns {RUN_COLUMNS}.")
        r = _trec_order(run[["query-id", "corpus-id", "score"]].astype({"query-id": str, "corpus-id": str}))
        if r.duplicated(["query-id", "corpus-id"]).any():
            dup = r[r.duplicated(["query-id", "corpus-id"])].iloc[0]
            raise RagcovError(f"run {i} lists document {dup['corpus-id']!r} twice for query {dup['query-id']!r}.")
        if method == "rrf":
            pos = r.groupby("query-id", sort=False).cumcount().to_numpy() + 1
            contrib = w[i] / (k + pos)
        else:
            s = r["score"].to_numpy(dtype=np.float64)
            g = r.groupby("query-id", sort=False)["score"]
            lo, hi = g.transform("min").to_numpy(), g.transform("max").to_numpy()
            span = hi - lo
            norm = np.divide(s - lo, span, out=np.ones_like(s), where=span > 0)
            contrib = w[i] * norm
        parts.append(pd.DataFrame({"query-id": r["query-id"].to_numpy(), "corpus-id": r["corpus-id"].to_numpy(),
                                   "run": i, "score": contrib}))
    allp = pd.concat(parts, ignore_index=True)
    qorder = pd.unique(pd.concat([r["query-id"].astype(str) for r in runs], ignore_index=True))
    # sum in run order (a fixed order of the terms for every document)
    allp = allp.sort_values(["query-id", "corpus-id", "run"], kind="stable")
    fused = allp.groupby(["query-id", "corpus-id"], sort=False)["score"].sum().reset_index()
    return rank_run(fused, query_order=qorder)


def rank_run(run: pd.DataFrame, *, query_order: Sequence[str] | None = None) -> pd.DataFrame:
    """Order a scored run as every ragcov run: per query score descending, corpus-id descending, near-ties
    (within :data:`~ragcov_data.ties.TIE_TOL`) given one exact score, ranks 1..n."""
    qorder = pd.unique(run["query-id"]) if query_order is None else np.asarray(query_order, dtype=object)
    qpos = pd.Series(np.arange(len(qorder)), index=qorder)
    rows = qpos.reindex(run["query-id"].to_numpy()).to_numpy()
    ids = run["corpus-id"].to_numpy(dtype=object)
    vals = run["score"].to_numpy(dtype=np.float64)
    key = tie_keys(ids)  # ascending key = id descending
    order = np.lexsort((key, -vals, rows))
    rows, ids, vals, key = rows[order], ids[order], vals[order], key[order]
    vals, moved = snap_ties(rows, vals)
    if moved.any():
        order = np.lexsort((key, -vals, rows))
        rows, ids, vals = rows[order], ids[order], vals[order]
    rank = np.arange(len(rows)) - np.searchsorted(rows, rows) + 1
    return pd.DataFrame({"query-id": qorder[rows] if len(rows) else np.empty(0, dtype=object),
                         "corpus-id": ids, "rank": rank.astype(np.int64), "score": vals}, columns=RUN_COLUMNS)


class Hybrid(Retriever):
    """Search with two or more retrievers and fuse their runs (:func:`fuse`).

    Parameters
    ----------
    retrievers : sequence of Retriever
        E.g. ``[BM25(analyzer="pt"), Dense("e5-small")]``; each indexes the same corpus.
    method : {"rrf", "convex"}, default: "rrf"
    k : float, default: 60
        ``rrf`` rank offset.
    weights : sequence of float, optional
        One per retriever (see :func:`fuse`).
    depth : int, default: 1000
        Rows each retriever returns per query before fusion (the fused top ``k`` comes from these).
    name : str, optional
        Name recorded in the run; default ``"hybrid-<method>"``.

    Examples
    --------
    >>> from ragcov_data.baselines import BM25, Dense, Hybrid
    >>> hy = Hybrid([BM25(analyzer="pt"), Dense("e5-small")], method="rrf", k=60)   # doctest: +SKIP
    >>> run = hy.index(ds["corpus"]).search(ds["queries"], k=10)                    # doctest: +SKIP
    """

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        method: str = "rrf",
        *,
        k: float = 60,
        weights: Sequence[float] | None = None,
        depth: int = 1000,
        name: str | None = None,
    ) -> None:
        super().__init__()
        retrievers = list(retrievers)
        if len(retrievers) < 2 or not all(isinstance(r, Retriever) for r in retrievers):
            raise RagcovError("`retrievers` must be two or more ragcov_data.baselines retrievers.")
        self.weights = _check(method, weights, len(retrievers), k)
        if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
            raise RagcovError(f"`depth` must be a positive integer; got {depth!r}.")
        self.retrievers, self.method, self.k, self.depth = retrievers, method, float(k), int(depth)
        self.name = name or f"hybrid-{method}"
        self.show_progress = all(getattr(r, "show_progress", False) for r in retrievers)

    def params(self) -> dict[str, Any]:
        return {
            "fusion": self.method,
            **({"k": self.k} if self.method == "rrf" else {}),
            "weights": self.weights.tolist(),
            "depth": self.depth,
            "retrievers": [{"retriever": r.name, **r.params()} for r in self.retrievers],
        }

    def __repr__(self) -> str:
        return f"Hybrid({self.retrievers!r}, method={self.method!r}, weights={self.weights.tolist()})"

    def index(self, corpus: Any, *, show_progress: bool | None = None) -> "Hybrid":
        """Index ``corpus`` with every retriever; returns self."""
        for r in self.retrievers:
            r.index(corpus, show_progress=show_progress)
        first = self.retrievers[0]
        self.corpus_ids, self._pos, self._tiekey = first.corpus_ids, first._pos, first._tiekey
        self.corpus_fingerprint_ = getattr(first, "corpus_fingerprint_", None)
        return self

    def _fit(self, texts: list[str]) -> None:  # pragma: no cover - ``index`` is overridden
        raise NotImplementedError

    def _score_block(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - ``search`` is overridden
        raise NotImplementedError

    def search(
        self,
        queries: Any,
        k: int = 10,
        exclude_self: bool = False,
        *,
        show_progress: bool | None = None,
    ) -> pd.DataFrame:
        """Each retriever's run to ``depth``, fused, cut at ``k`` rows a query (plus ties with the top)."""
        qdf = self._search_queries(queries, k, exclude_self)
        depth = max(int(k), min(self.depth, len(self.corpus_ids)))
        runs = [r.search(qdf, k=depth, exclude_self=exclude_self, show_progress=show_progress) for r in self.retrievers]
        fused = fuse(runs, self.method, k=self.k, weights=self.weights)
        top = fused.groupby("query-id", sort=False)["score"].transform("max").to_numpy()
        fused = fused[(fused["rank"].to_numpy() <= k) | (fused["score"].to_numpy() == top)]
        # queries in input order (a query no retriever answered has no rows)
        qpos = pd.Series(np.arange(len(qdf)), index=qdf["_id"].astype(str).to_numpy())
        fused = fused.iloc[np.argsort(qpos.reindex(fused["query-id"].to_numpy()).to_numpy(), kind="stable")]
        return self._stamp(fused.reset_index(drop=True), exclude_self)
