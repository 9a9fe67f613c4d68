"""TF-IDF cosine retrieval with scikit-learn's ``TfidfVectorizer`` over the shared analyzer.

Weighting (scikit-learn's definitions, defaults shown):

* term frequency ``tf`` = count of the term in the text; with ``sublinear_tf=True`` it is ``1 + log(tf)``;
* ``idf = log((1 + N) / (1 + df)) + 1`` with ``smooth_idf=True`` (else ``log(N / df) + 1``), fitted on
  the corpus only; query terms absent from the corpus are ignored;
* each vector (corpus and query) is scaled to unit length (``norm="l2"``), so the score, a dot product,
  is the cosine similarity. ``norm=None`` gives the raw dot product.

A chunk sharing no term with the query scores 0 and is not retrieved (``min_score = 0.0``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ragcov_data.baselines._sparse import BlockScorer
from ragcov_data.baselines.analyzer import Analyzer
from ragcov_data.baselines.base import Retriever
from ragcov_data.errors import RagcovError

_NORMS = ("l2", "l1", None)


class TfIdf(Retriever):
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
    analyzer : Analyzer or None, default: None
        Tokeniser for corpus and queries; ``None`` is ``Analyzer()``.
    show_progress : bool, default: True
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
    min_score = 0.0
    max_block_floats = 4_000_000

    def __init__(
        self,
        sublinear_tf: bool = True,
        smooth_idf: bool = True,
        norm: str | None = "l2",
        *,
        min_df: int | float = 1,
        max_df: int | float = 1.0,
        analyzer: Analyzer | None = None,
        show_progress: bool = True,
        n_jobs: int | None = None,
    ) -> None:
        super().__init__()
        if norm not in _NORMS:
            raise RagcovError(f"`norm` must be one of {list(_NORMS)}; got {norm!r}.")
        if analyzer is not None and not isinstance(analyzer, Analyzer):
            raise RagcovError(f"`analyzer` must be a ragcov_data.baselines.Analyzer or None; got {type(analyzer)!r}.")
        self.sublinear_tf = bool(sublinear_tf)
        self.smooth_idf = bool(smooth_idf)
        self.norm = norm
        self.min_df = min_df
        self.max_df = max_df
        self.analyzer = analyzer if analyzer is not None else Analyzer()
        self.show_progress = bool(show_progress)
        if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1):
            raise RagcovError(f"`n_jobs` must be a positive integer or None; got {n_jobs!r}.")
        self.n_jobs = n_jobs
        self.vectorizer: Any = None
        self._scorer: BlockScorer | None = None

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

    def _make_vectorizer(self) -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(
            analyzer=self.analyzer,
            sublinear_tf=self.sublinear_tf,
            smooth_idf=self.smooth_idf,
            norm=self.norm,
            use_idf=True,
            min_df=self.min_df,
            max_df=self.max_df,
            dtype=np.float64,
        )

    # ---- Retriever hooks ----------------------------------------------------------------------
    def _after_search(self) -> None:
        if self._scorer is not None:
            self._scorer._buffers.clear()

    def _fit(self, texts: list[str]) -> None:
        vec = self._make_vectorizer()
        it: Any = texts
        if self._show_index:
            from tqdm.auto import tqdm

            it = tqdm(texts, desc=f"{self.name}: index", unit="text", leave=False)
        try:
            matrix = vec.fit_transform(it)
        except ValueError as exc:  # e.g. "empty vocabulary"
            raise RagcovError(f"TF-IDF could not index `corpus` under {self.analyzer!r}: {exc}") from exc
        self.vectorizer = vec
        self._scorer = BlockScorer(matrix)

    def _score_block(self, texts: list[str]) -> np.ndarray:
        return self._scorer.scores(self.vectorizer.transform(texts), out=self._scorer.buffer(len(texts)))
