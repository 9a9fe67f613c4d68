"""Pseudo-relevance feedback for BM25: RM3 (relevance model 3), as Anserini and Pyserini compute it.

RM3 (Lavrenko & Croft 2001; Abdul-Jaleel et al. 2004) expands a query with the terms of its top-ranked
documents. For each query:

1. **First pass.** BM25 ranks the corpus; the top ``fb_docs`` documents (trec_eval order, the query's
   own chunk excluded with ``exclude_self``) are the feedback documents, each with its BM25 score ``s_d``.
2. **Document vectors.** Each feedback document's term counts, keeping only *eligible* terms: 2 to 20
   characters long, made of word characters only (Anserini keeps ``[a-z0-9]+``, for English; ragcov keeps
   Unicode letters and digits, so accented Portuguese terms and plain numbers stay, ``"1.000"`` does not),
   and in at most ``max_df`` (10 %) of the corpus's documents — Anserini's guard against stop words. Each
   vector is pruned to its ``fb_terms`` largest counts, then divided by its sum (``P(t|d)``).
3. **Relevance model.** ``rm(t) = sum_d s_d P(t|d)``, pruned to the ``fb_terms`` largest weights and
   scaled to sum 1.
4. **Interpolation.** With the query's own term distribution ``q(t)`` (its analyzer tokens, counted,
   scaled to sum 1): ``w(t) = original_query_weight * q(t) + (1 - original_query_weight) * rm(t)``.
5. **Second pass.** BM25 with each term's score multiplied by ``w(t)`` (Lucene's boosted term queries):
   ``score(d) = sum_t w(t) bm25(t, d)``, over the whole corpus, ranked like every run (exact top-k,
   trec_eval tie order, ``exclude_self``).

Defaults are Anserini's and Pyserini's (``fb_docs=10, fb_terms=10, original_query_weight=0.5``). Ties in
the two prunings (equal counts, equal weights) are broken by term, in code-point order, so the expansion
is deterministic (Anserini's order there depends on a hash map). Everything is computed on the sparse
BM25 index: no document is re-read or re-tokenised.

References
----------
Lavrenko & Croft (2001), Relevance-based language models. SIGIR.
Abdul-Jaleel et al. (2004), UMass at TREC 2004: Novelty and HARD.
Lin et al. (2021), Pyserini: a Python toolkit for reproducible IR research (``set_rm3``).
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ragcov_data.baselines.base import Retriever, as_frame
from ragcov_data.baselines.bm25 import BM25
from ragcov_data.errors import RagcovError

_WORD = re.compile(r"\w+")


class RM3(Retriever):
    """BM25 with RM3 pseudo-relevance feedback (see the module notes for the computation).

    Parameters
    ----------
    base : BM25, optional
        The first- and second-pass retriever; default ``BM25()``. ``BM25(analyzer="pt")`` gives the
        stemmed Portuguese variant.
    fb_docs : int, default: 10
        Feedback documents per query.
    fb_terms : int, default: 10
        Terms kept per feedback document and in the relevance model.
    original_query_weight : float, default: 0.5
        Weight of the original query in the interpolation, in [0, 1] (1 = plain BM25 ranking).
    max_df : float, default: 0.1
        Terms in more than this share of the corpus's documents are never expansion terms.
    min_term_len, max_term_len : int, default: 2, 20
        Lengths (characters) of eligible expansion terms.

    Examples
    --------
    >>> from ragcov_data.baselines import BM25, RM3
    >>> rm3 = RM3(BM25(analyzer="pt"), fb_docs=10, fb_terms=10, original_query_weight=0.5)   # doctest: +SKIP
    >>> run = rm3.index(ds["corpus"]).search(ds["queries"], k=10)                             # doctest: +SKIP
    >>> rm3.expansion(ds["queries"])["1"]        # term -> weight of query "1"                 # doctest: +SKIP
    """

    name = "bm25-rm3"
    min_score = 0.0

    def __init__(
        self,
        base: BM25 | None = None,
        fb_docs: int = 10,
        fb_terms: int = 10,
        original_query_weight: float = 0.5,
        *,
        max_df: float = 0.1,
        min_term_len: int = 2,
        max_term_len: int = 20,
    ) -> None:
        super().__init__()
        base = BM25() if base is None else base
        if not isinstance(base, BM25):
            raise RagcovError(f"`base` must be a ragcov_data.baselines.BM25; got {type(base).__name__}.")
        for pname, value in (("fb_docs", fb_docs), ("fb_terms", fb_terms), ("min_term_len", min_term_len),
                             ("max_term_len", max_term_len)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise RagcovError(f"`{pname}` must be a positive integer; got {value!r}.")
        for pname, value in (("original_query_weight", original_query_weight), ("max_df", max_df)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not 0 <= value <= 1:
                raise RagcovError(f"`{pname}` must be a number in [0, 1]; got {value!r}.")
        self.base = base
        self.fb_docs, self.fb_terms = int(fb_docs), int(fb_terms)
        self.original_query_weight = float(original_query_weight)
        self.max_df = float(max_df)
        self.min_term_len, self.max_term_len = int(min_term_len), int(max_term_len)
        self.show_progress = base.show_progress
        self.n_jobs = base.n_jobs
        self._fb_counts: sp.csr_matrix | None = None  # eligible-term counts of every document
        self._terms: np.ndarray | None = None  # vocabulary, by column
        self._term_order: np.ndarray | None = None  # rank of each term in code-point order (tie-break)
        self._pruned: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._queries: sp.csr_matrix | None = None

    @property
    def analyzer(self) -> Any:
        return self.base.analyzer

    def params(self) -> dict[str, Any]:
        return {
            "prf": "rm3",
            "fb_docs": self.fb_docs,
            "fb_terms": self.fb_terms,
            "original_query_weight": self.original_query_weight,
            "max_df": self.max_df,
            "term_len": [self.min_term_len, self.max_term_len],
            "base": {"retriever": self.base.name, **self.base.params()},
        }

    def __repr__(self) -> str:
        return (f"RM3({self.base!r}, fb_docs={self.fb_docs}, fb_terms={self.fb_terms}, "
                f"original_query_weight={self.original_query_weight})")

    # ---- indexing -------------------------------------------------------------------------------
    def index(self, corpus: Any, *, show_progress: bool | None = None) -> "RM3":
        """Index ``corpus`` with the base BM25 (keeping its term counts for feedback); returns self."""
        self.base.keep_counts = True
        self.base.index(corpus, show_progress=show_progress)
        counts = self.base.counts_
        self.base.counts_ = None  # held here, filtered
        self.corpus_ids, self._pos, self._tiekey = self.base.corpus_ids, self.base._pos, self.base._tiekey
        self.corpus_fingerprint_ = getattr(self.base, "corpus_fingerprint_", None)
        terms = np.empty(len(self.base.vocabulary_), dtype=object)
        terms[list(self.base.vocabulary_.values())] = list(self.base.vocabulary_)
        n_docs = counts.shape[0]
        df = np.bincount(counts.indices, minlength=counts.shape[1])
        eligible = np.fromiter(
            (self.min_term_len <= len(t) <= self.max_term_len and _WORD.fullmatch(t) is not None for t in terms),
            dtype=bool, count=len(terms),
        ) & (df <= self.max_df * n_docs)
        keep = eligible[counts.indices]
        rows = np.repeat(np.arange(n_docs), np.diff(counts.indptr))[keep]
        self._fb_counts = sp.csr_matrix((counts.data[keep], (rows, counts.indices[keep])), shape=counts.shape)
        self._fb_counts.sort_indices()
        self._terms = terms
        order = np.argsort(terms.astype(str), kind="stable") if len(terms) else np.empty(0, dtype=np.int64)
        self._term_order = np.empty(len(terms), dtype=np.int64)
        self._term_order[order] = np.arange(len(terms))
        self._pruned = {}
        return self

    def _fit(self, texts: list[str]) -> None:  # pragma: no cover - ``index`` is overridden
        raise NotImplementedError

    # ---- feedback -------------------------------------------------------------------------------
    def _doc_vector(self, pos: int) -> tuple[np.ndarray, np.ndarray]:
        """Columns and ``P(t|d)`` of feedback document ``pos`` (pruned to ``fb_terms``, then scaled)."""
        got = self._pruned.get(pos)
        if got is None:
            c = self._fb_counts
            cols = c.indices[c.indptr[pos]:c.indptr[pos + 1]]
            vals = c.data[c.indptr[pos]:c.indptr[pos + 1]]
            top = np.lexsort((self._term_order[cols], -vals))[: self.fb_terms]
            cols, vals = cols[top], vals[top]
            total = vals.sum()
            got = (cols, vals / total) if total > 0 else (cols[:0], vals[:0])
            self._pruned[pos] = got
        return got

    def _weights(self, tokens: list[str], feedback: list[tuple[int, float]]) -> dict[int, float]:
        """Interpolated term weights (column -> weight) of one query."""
        vocab = self.base.vocabulary_
        q: dict[int, float] = {}
        for t in tokens:  # q(t): every analyzer token counts, those the corpus lacks included (they score 0)
            j = vocab.get(t, -1)
            q[j] = q.get(j, 0.0) + 1.0
        rm: dict[int, float] = {}
        for pos, score in feedback:  # in rank order: a fixed summation order
            for j, p in zip(*self._doc_vector(pos)):
                rm[int(j)] = rm.get(int(j), 0.0) + float(p) * score
        if rm:
            cols = np.fromiter(rm, dtype=np.int64, count=len(rm))
            vals = np.fromiter(rm.values(), dtype=np.float64, count=len(rm))
            top = np.lexsort((self._term_order[cols], -vals))[: self.fb_terms]
            cols, vals = cols[top], vals[top]
            total = vals.sum()
            rm = dict(zip(cols.tolist(), (vals / total).tolist())) if total > 0 else {}
        a = self.original_query_weight
        n_q = sum(q.values())
        out = {j: a * c / n_q for j, c in q.items()} if n_q else {}
        for j, w in rm.items():
            out[j] = out.get(j, 0.0) + (1.0 - a) * w
        out.pop(-1, None)
        return out

    def _expand(self, qdf: pd.DataFrame, exclude_self: bool) -> list[dict[int, float]]:
        """First pass and the expanded query (column -> weight) of every row of ``qdf``."""
        if self._fb_counts is None:
            raise RagcovError("call `index(corpus)` before searching.")
        first = self.base.search(qdf, k=self.fb_docs, exclude_self=exclude_self, show_progress=False)
        first = first[first["rank"] <= self.fb_docs]
        pos = first["corpus-id"].map(self._pos).to_numpy()
        fb: dict[str, list[tuple[int, float]]] = {}
        for qid, p, s in zip(first["query-id"].tolist(), pos.tolist(), first["score"].tolist()):
            fb.setdefault(qid, []).append((p, s))
        analyzer = self.base.analyzer
        return [
            self._weights(analyzer(text), fb.get(qid, []))
            for qid, text in zip(qdf["_id"].astype(str).tolist(), qdf["text"].astype(str).tolist())
        ]

    def expansion(self, queries: Any, exclude_self: bool = False) -> dict[str, dict[str, float]]:
        """The expanded query of each query: ``{query-id: {term: weight}}``, weights summing to 1 (less
        the share of query terms the corpus lacks), largest first."""
        qdf = as_frame(queries, ["_id", "text"] + (["chunk_id"] if exclude_self else []), "queries")
        out = {}
        for qid, w in zip(qdf["_id"].astype(str).tolist(), self._expand(qdf, exclude_self)):
            items = sorted(w.items(), key=lambda kv: (-kv[1], self._term_order[kv[0]]))
            out[qid] = {str(self._terms[j]): v for j, v in items}
        return out

    # ---- search ---------------------------------------------------------------------------------
    def search(
        self,
        queries: Any,
        k: int = 10,
        exclude_self: bool = False,
        *,
        show_progress: bool | None = None,
    ) -> pd.DataFrame:
        """Rank the corpus for every query with the expanded query; see :meth:`Retriever.search`."""
        qdf = self._search_queries(queries, k, exclude_self)
        expanded = self._expand(qdf, exclude_self)
        v = len(self.base.vocabulary_)
        indptr = np.zeros(len(expanded) + 1, dtype=np.int64)
        np.cumsum([len(w) for w in expanded], out=indptr[1:])
        cols = np.fromiter((j for w in expanded for j in w), dtype=np.int64, count=int(indptr[-1]))
        vals = np.fromiter((x for w in expanded for x in w.values()), dtype=np.float64, count=int(indptr[-1]))
        self._queries = sp.csr_matrix((vals, cols, indptr), shape=(len(expanded), v))
        # The base search machinery hands ``_score_block`` query texts; here each "text" is the row of
        # the query's expanded vector, so duplicate texts with different feedback stay apart.
        keyed = qdf.copy()
        keyed["text"] = [str(i) for i in range(len(qdf))]
        try:
            return super().search(keyed, k=k, exclude_self=exclude_self, show_progress=show_progress)
        finally:
            self._queries = None

    def _score_block(self, texts: list[str]) -> np.ndarray:
        rows = np.fromiter(map(int, texts), dtype=np.int64, count=len(texts))
        scorer = self.base._scorer
        return scorer.scores(self._queries[rows], out=scorer.buffer(len(rows)))

    def _after_search(self) -> None:
        self.base._after_search()
