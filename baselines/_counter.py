"""Term counts over a retriever's vocabulary, fitted on a corpus and reused for queries.

:class:`TermCounter` plays the part of scikit-learn's ``CountVectorizer`` for the lexical retrievers,
on top of :meth:`Analyzer.count_terms`'s batch path: texts are split into words in Arrow (C++), and
only distinct words are analysed. It also remembers every distinct corpus word with its terms, so a
query made of words the corpus has (nearly all of them: queries of the self-retrieval task are corpus
text) needs no Python work per word at all: its words are looked up in an Arrow hash table.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from ragcov_data.baselines._sparse import in_vocabulary
from ragcov_data.baselines.analyzer import Analyzer, text_word_matrix


class TermCounter:
    """Texts -> sparse term counts over a vocabulary grown on the corpus.

    Attributes
    ----------
    vocabulary_ : dict[str, int]
        Term -> column, in order of first occurrence in the corpus.
    """

    def __init__(self, analyzer: Analyzer) -> None:
        self.analyzer = analyzer
        self.vocabulary_: dict[str, int] = {}
        self._words = pa.array([], type=pa.large_string())  # distinct corpus words ...
        self._word_terms = sp.csr_matrix((0, 0))  # ... and their term counts (words x vocabulary)

    def fit_transform(self, batches: Iterable[Sequence[str]]) -> sp.csr_matrix:
        """Counts of the corpus given in ``batches`` of texts (texts x vocabulary), growing the
        vocabulary; one batch at a time keeps memory bounded and lets the caller show progress."""
        self.vocabulary_ = {}
        self._words = pa.array([], type=pa.large_string())
        self._word_terms = sp.csr_matrix((0, 0))
        parts = [self._count(self.analyzer._split_words(batch), grow=True) for batch in batches]
        v = len(self.vocabulary_)
        self._word_terms = _widen(self._word_terms, v)
        return sp.vstack([_widen(p, v) for p in parts], format="csr")

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Counts of ``texts`` (texts x vocabulary); terms the corpus lacks are dropped. Thread-safe."""
        return self._count(self.analyzer._split_words(texts), grow=False)

    def _count(self, split: tuple[np.ndarray, np.ndarray, pa.Array], *, grow: bool) -> sp.csr_matrix:
        """Counts of texts already split into words (:meth:`Analyzer._split_words`)."""
        n_words, word_ids, words = split
        known = self._words
        pos = (
            pc.index_in(words, value_set=known).fill_null(-1).to_numpy(zero_copy_only=False)
            if len(known) and len(words) else np.full(len(words), -1)
        )
        new = np.flatnonzero(pos < 0)
        new_words = words.take(pa.array(new, type=pa.int64()))
        terms, new_terms = self.analyzer._word_term_matrix(new_words.to_pylist())
        new_terms = in_vocabulary(terms, new_terms, self.vocabulary_, grow=grow)
        old = _widen(self._word_terms, len(self.vocabulary_))
        if grow and len(new):  # remember the corpus's new words (never a query's)
            self._words = pa.concat_arrays([known, new_words])
            self._word_terms = sp.vstack([old, new_terms], format="csr")
        # rows of this call's distinct words, in their order: known ones from memory, new ones fresh
        seen = np.flatnonzero(pos >= 0)
        if not len(seen):
            return sp.csr_matrix(text_word_matrix(n_words, word_ids, len(pos)) @ new_terms)
        stacked = sp.vstack([old[pos[seen]], new_terms], format="csr")
        inverse = np.empty(len(pos), dtype=np.int64)
        inverse[np.concatenate([seen, new])] = np.arange(len(pos))
        return sp.csr_matrix(text_word_matrix(n_words, word_ids, len(pos)) @ stacked[inverse])


def _widen(m: sp.csr_matrix, n_cols: int) -> sp.csr_matrix:
    """``m`` with more (empty) columns: earlier batches saw fewer terms."""
    m = sp.csr_matrix(m)
    return sp.csr_matrix((m.data, m.indices, m.indptr), shape=(m.shape[0], n_cols))

