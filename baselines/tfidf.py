"""TF-IDF cosine retrieval: the shared analyzer's term counts, weighted by scikit-learn's ``TfidfTransformer``.

Terms are counted as BM25 counts them (:class:`~ragcov_data.baselines._counter.TermCounter`, the same
tokens as the analyzer); the vocabulary is pruned by ``min_df``/``max_df`` as ``TfidfVectorizer`` prunes
it, and the result equals ``TfidfVectorizer(analyzer=analyzer, ...)`` (tested). Weighting
(scikit-learn's definitions, defaults shown):

* term frequency ``tf`` = count of the term in the text; with ``sublinear_tf=True`` it is ``1 + log(tf)``;
* ``idf = log((1 + N) / (1 + df)) + 1`` with ``smooth_idf=True`` (else ``log(N / df) + 1``), fitted on
  the corpus only; query terms absent from the corpus are ignored;
* each vector (corpus and query) is scaled to unit length (``norm="l2"``), so the score, a dot product,
  is the cosine similarity. ``norm=None`` gives the raw dot product.

A chunk sharing no term with the query scores 0 and is not retrieved (``min_score = 0.0``).
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

from ragcov_data.baselines._lexical import LexicalRetriever
from ragcov_data.baselines._sparse import BlockScorer
from ragcov_data.baselines.analyzer import Analyzer
from ragcov_data.errors import RagcovError

_NORMS = ("l2", "l1", None)


class TfIdf(LexicalRetriever):
    """Cosine similarity of TF-IDF vectors.

    Parameters
    ----------
    sublinear_tf : bool, default: True
        Use ``1 + log(tf)`` instead of raw counts.
    smooth_idf : bool, default: True
        Add one to document frequencies (as if one extra document held every term).
    norm : {"l2", "l1", None}, default: "l2"
        Vector normalisation; ``"l2"`` makes the score the cosine similarity.
    min_df, max_df : int or float, default: 1, 1.0
        Vocabulary pruning, as in ``TfidfVectorizer`` (the defaults keep every term).
    analyzer : Analyzer, str or None, default: None
        Tokeniser for corpus and queries; ``None`` is ``Analyzer()``; a name is a preset of
        :data:`~ragcov_data.baselines.analyzer.ANALYZER_PRESETS` (``"pt"``: stop words, accent folding,
        Snowball Portuguese stemming).
    show_progress : bool, default: False
        Progress bars while indexing and searching.
    n_jobs : int or None, default: None
        Threads scoring query blocks in parallel; ``None`` uses every available CPU. Results do not
        depend on it.

    Examples
    --------
    >>> import pandas as pd
    >>> from ragcov_data.baselines import TfIdf
    >>> corpus = pd.DataFrame({"_id": ["a", "b"], "text": ["tarifa de energia", "outorga de geração"]})
    >>> tfidf = TfIdf(show_progress=False).index(corpus)
    >>> tfidf.search(pd.DataFrame({"_id": ["q"], "text": ["tarifa"]}))["corpus-id"].tolist()
    ['a']
    """

    name = "tfidf"

    def __init__(
        self,
        sublinear_tf: bool = True,
        smooth_idf: bool = True,
        norm: str | None = "l2",
        *,
        min_df: int | float = 1,
        max_df: int | float = 1.0,
        analyzer: Analyzer | str | None = None,
        show_progress: bool = False,
        n_jobs: int | None = None,
    ) -> None:
        super().__init__(analyzer=analyzer, show_progress=show_progress, n_jobs=n_jobs)
        if norm not in _NORMS:
            raise RagcovError(f"`norm` must be one of {list(_NORMS)}; got {norm!r}.")
        self.sublinear_tf = bool(sublinear_tf)
        self.smooth_idf = bool(smooth_idf)
        self.norm = norm
        for pname, value in (("min_df", min_df), ("max_df", max_df)):
            if isinstance(value, bool) or not (
                (isinstance(value, numbers.Integral) and value >= 0)
                or (isinstance(value, numbers.Real) and 0.0 <= value <= 1.0)
            ):
                raise RagcovError(
                    f"`{pname}` must be a document count (int >= 0) or a share of documents (float in [0, 1]); "
                    f"got {value!r}."
                )
        self.min_df = min_df
        self.max_df = max_df
        self.transformer: Any = None

    def params(self) -> dict[str, Any]:
        """Weighting options and the analyzer's parameters."""
        return {
            "sublinear_tf": self.sublinear_tf,
            "smooth_idf": self.smooth_idf,
            "norm": self.norm,
            "min_df": self.min_df,
            "max_df": self.max_df,
            "analyzer": self.analyzer.params(),
        }

    def __repr__(self) -> str:
        return f"TfIdf(sublinear_tf={self.sublinear_tf}, smooth_idf={self.smooth_idf}, norm={self.norm!r})"

    def _make_transformer(self) -> Any:
        from sklearn.feature_extraction.text import TfidfTransformer

        return TfidfTransformer(
            norm=self.norm, use_idf=True, smooth_idf=self.smooth_idf, sublinear_tf=self.sublinear_tf
        )

    def _prune(self, counts: sp.csr_matrix) -> np.ndarray:
        """Columns kept by ``min_df``/``max_df``, with ``TfidfVectorizer``'s rules and messages."""
        n = counts.shape[0]
        df = np.bincount(counts.indices, minlength=counts.shape[1])
        hi = self.max_df if isinstance(self.max_df, numbers.Integral) else self.max_df * n
        lo = self.min_df if isinstance(self.min_df, numbers.Integral) else self.min_df * n
        if hi < lo:
            raise RagcovError("TF-IDF: `max_df` corresponds to < documents than `min_df`.")
        keep = (df >= lo) & (df <= hi)
        if not keep.any():
            raise RagcovError(
                f"TF-IDF could not index `corpus` under {self.analyzer!r}: after pruning, no terms remain. "
                "Try a lower `min_df` or a higher `max_df`."
            )
        return np.flatnonzero(keep)

    # ---- Retriever hooks ----------------------------------------------------------------------
    def _fit(self, texts: list[str]) -> None:
        counts = self._count_corpus(texts)
        if counts.nnz == 0:
            raise RagcovError(
                f"TF-IDF could not index `corpus` under {self.analyzer!r}: empty vocabulary; "
                "the texts have no tokens."
            )
        kept = self._prune(counts)
        terms = list(self._counter.vocabulary_)
        if len(kept) == len(terms):
            kept = None  # the default: no pruning, no column slicing
        else:
            counts = counts[:, kept]
            terms = [terms[j] for j in kept.tolist()]
        transformer = self._make_transformer()
        matrix = transformer.fit_transform(counts)
        self._kept, self.transformer = kept, transformer
        self.vocabulary_ = {t: i for i, t in enumerate(terms)}
        self._scorer = BlockScorer(matrix)

    def _score_block(self, texts: list[str]) -> np.ndarray:
        counts = self._count_queries(texts)
        if self._kept is not None:
            counts = counts[:, self._kept]
        return self._scorer.scores(self.transformer.transform(counts), out=self._scorer.buffer(len(texts)))
