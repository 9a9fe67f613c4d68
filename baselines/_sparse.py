"""Sparse building blocks of the lexical retrievers: term counting and fast block scoring.

:func:`in_vocabulary` maps term counts onto a retriever's vocabulary. :class:`BlockScorer` computes
``Q @ W.T`` (queries x corpus) for a block of sparse query vectors ``Q`` against precomputed sparse
document-term weights ``W``, as a dense block.

Why a hybrid product
--------------------
A plain sparse x sparse product costs one multiply-add per (query term, posting) pair, i.e. roughly
``sum_t qdf(t) * df(t)``: dominated by the handful of very frequent terms ("de", "da", "que" ...), whose
postings cover most of the corpus and whose score block is dense anyway. Those terms (document
frequency at least ``dense_df`` of the corpus) are scored by one dense matrix product (BLAS); the long
tail of rarer terms by the sparse product, whose result is added in. Both are exact sums of the same
terms, so the result equals the plain product up to floating-point summation order (~1e-15 relative).
"""
from __future__ import annotations

import threading
from itertools import repeat
from typing import Sequence

import numpy as np
import scipy.sparse as sp


def in_vocabulary(terms: Sequence[str], counts: sp.csr_matrix, vocabulary: dict[str, int], *, grow: bool) -> sp.csr_matrix:
    """``counts`` (texts x ``terms``, e.g. :meth:`Analyzer.count_terms`) with columns renumbered to
    ``vocabulary`` ids: shape ``(n_texts, len(vocabulary))``.

    With ``grow=True`` new terms are added to ``vocabulary`` (indexing); with ``grow=False`` terms not
    in it are dropped (searching: a term absent from the corpus scores nothing).
    """
    if grow and not vocabulary:  # the first batch of a corpus: ids in order
        vocabulary.update(zip(terms, range(len(terms))))
        ids = np.arange(len(terms))
    else:
        ids = np.fromiter(map(vocabulary.get, terms, repeat(-1)), dtype=np.int64, count=len(terms))
    if grow and (new := np.flatnonzero(ids < 0)).size:  # ``terms`` are distinct: new ids in their order
        ids[new] = np.arange(len(vocabulary), len(vocabulary) + len(new))
        vocabulary.update(zip([terms[i] for i in new], ids[new].tolist()))
    counts = sp.csr_matrix(counts)
    cols = ids[counts.indices]
    data, indptr = counts.data, counts.indptr
    keep = cols >= 0
    if not keep.all():
        rows = np.repeat(np.arange(counts.shape[0]), np.diff(indptr))[keep]
        cols, data = cols[keep], data[keep]
        indptr = np.zeros(counts.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=counts.shape[0]), out=indptr[1:])
    return sp.csr_matrix((data, cols, indptr), shape=(counts.shape[0], len(vocabulary)))


class BlockScorer:
    """Dense score blocks ``Q @ W.T`` for sparse queries ``Q`` against sparse document weights ``W``.

    Parameters
    ----------
    weights : scipy.sparse matrix, shape (n_corpus, n_terms)
        Document-term weights (float64).
    dense_df : float, default: 0.1
        Terms in at least this share of the documents are kept as dense rows of ``W.T`` and added as
        whole rows (one ``axpy`` of length ``n_corpus`` per query term occurrence); rarer terms go
        through the sparse product (see module notes). ``1.0`` or more disables the dense part, ``0.0``
        makes every term dense (for tests). The result does not depend on it beyond rounding.
    """

    def __init__(self, weights: sp.spmatrix, *, dense_df: float = 0.1) -> None:
        w = sp.csc_matrix(weights, dtype=np.float64)
        n, v = w.shape
        df = np.diff(w.indptr)
        self.dense_terms = np.flatnonzero(df >= dense_df * n) if dense_df > 0 else np.arange(v)
        is_dense = np.zeros(v, dtype=bool)
        is_dense[self.dense_terms] = True
        self.sparse_terms = np.flatnonzero(~is_dense)
        self._is_dense = is_dense
        # column of each term in its part (dense rows or sparse rows)
        self._part_col = np.empty(v, dtype=np.int32)
        self._part_col[self.dense_terms] = np.arange(len(self.dense_terms), dtype=np.int32)
        self._part_col[self.sparse_terms] = np.arange(len(self.sparse_terms), dtype=np.int32)
        # Dense part: W.T rows of the frequent terms, (n_dense x n_corpus), C order (contiguous rows).
        self._wdt = np.ascontiguousarray(w[:, self.dense_terms].T.toarray())
        # Sparse part, transposed: (n_sparse_terms x n_corpus) CSR, ready for ``Qs @ WsT``.
        self._wst = w[:, self.sparse_terms].T.tocsr()
        self.shape = (n, v)
        self._buffers: dict[int, np.ndarray] = {}  # per-thread score buffers (see ``buffer``)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_buffers"] = {}
        return state

    def buffer(self, b: int) -> np.ndarray:
        """A reusable ``(b, n_corpus)`` float64 buffer owned by the calling thread.

        Reusing one buffer per thread avoids the page faults of a fresh large array per block; the
        caller must be done with the previous block's scores before asking again.
        """
        key = threading.get_ident()
        buf = self._buffers.get(key)
        if buf is None or buf.shape[0] < b:
            buf = self._buffers[key] = np.empty((b, self.shape[0]))
        return buf[:b]

    def scores(self, queries: sp.spmatrix, out: np.ndarray | None = None) -> np.ndarray:
        """Scores of each query row against every document, shape ``(n_queries, n_corpus)``, float64.

        ``out``: optional C-contiguous float64 buffer of that shape to write into.
        """
        q = sp.csr_matrix(queries, dtype=np.float64)
        q.sum_duplicates()
        b = q.shape[0]
        n = self.shape[0]
        if q.shape[1] != self.shape[1]:
            raise ValueError(f"`queries` must have {self.shape[1]} columns; got {q.shape[1]}")
        if out is None:
            out = np.empty((b, n))
        if out.shape != (b, n) or out.dtype != np.float64 or not out.flags.c_contiguous:
            raise ValueError(f"`out` must be a C-contiguous float64 array of shape {(b, n)}")
        out[...] = 0.0
        # split the query rows by part, keeping row order (so no re-sorting)
        dense = self._is_dense[q.indices]
        cols = self._part_col[q.indices]
        rows = np.repeat(np.arange(b), np.diff(q.indptr))

        def part(mask: np.ndarray, m: int) -> sp.csr_matrix:
            indptr = np.zeros(b + 1, dtype=np.int32)
            np.cumsum(np.bincount(rows[mask], minlength=b), out=indptr[1:])
            return sp.csr_matrix((q.data[mask], cols[mask], indptr), shape=(b, m))

        if dense.any():
            _accumulate_rows(part(dense, len(self.dense_terms)), self._wdt, out)
        sparse = ~dense
        if sparse.any():
            _accumulate_sparse((part(sparse, len(self.sparse_terms)) @ self._wst).tocsr(), out)
        return out


try:  # scipy's C kernels, which add into an existing dense array (no temporary b x n arrays)
    from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs
    from scipy.sparse._sparsetools import csr_todense as _csr_todense
except ImportError:  # pragma: no cover - other scipy layouts
    _csr_matvecs = _csr_todense = None


def _accumulate_rows(q: sp.csr_matrix, dense_rows: np.ndarray, out: np.ndarray) -> None:
    """``out += q @ dense_rows`` (``q``: b x m CSR, ``dense_rows``: m x n C-contiguous)."""
    if _csr_matvecs is not None:
        b, m = q.shape
        _csr_matvecs(b, m, dense_rows.shape[1], q.indptr, q.indices, q.data, dense_rows.ravel(), out.ravel())
    else:  # pragma: no cover
        out += q @ dense_rows


def _accumulate_sparse(s: sp.csr_matrix, out: np.ndarray) -> None:
    """``out += s`` for a CSR matrix ``s`` without duplicate entries."""
    if _csr_todense is not None:
        _csr_todense(s.shape[0], s.shape[1], s.indptr, s.indices, s.data, out)
    else:  # pragma: no cover
        flat = np.repeat(np.arange(s.shape[0], dtype=np.int64) * s.shape[1], np.diff(s.indptr)) + s.indices
        out.ravel()[flat] += s.data
