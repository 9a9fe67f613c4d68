"""BM25 and its common variants, computed with sparse matrices.

At index time every (document, term) pair gets its weight ``idf(t) * tf_part(tf, dl)``, stored in a
sparse document-term matrix ``W``; a block of queries is then scored as ``Q @ W.T`` where ``Q`` holds
query term *counts* (a term repeated in the query counts as often as it appears, as in rank-bm25).

Variants (``variant=``), each a pair of small pure functions looked up by name in :data:`VARIANTS`,
with ``N`` documents, ``df`` the document frequency of a term, ``tf`` its count in a document, ``dl`` the
document length in tokens and ``avgdl`` the mean length. For every variant a document scores only on the
query terms it contains (``tf > 0``).

=============  ===========================================================  ==================================
variant        idf                                                          tf part
=============  ===========================================================  ==================================
``okapi``      ``log(N - df + 0.5) - log(df + 0.5)``; negative values are   ``tf (k1+1) / (tf + k1 L)``
               replaced by ``epsilon * mean(idf over the vocabulary)``
``robertson``  ``log((N - df + 0.5) / (df + 0.5))``, floored at 0           ``tf (k1+1) / (tf + k1 L)``
``lucene``     ``log(1 + (N - df + 0.5) / (df + 0.5))``                     ``tf (k1+1) / (tf + k1 L)``
``bm25l``      ``log((N + 1) / (df + 0.5))``                                ``(k1+1)(c + delta) / (k1 + c + delta)``,
                                                                            ``c = tf / L``, delta default 0.5
``bm25+``      ``log((N + 1) / df)``                                        ``tf (k1+1) / (tf + k1 L) + delta``,
                                                                            delta default 1.0
=============  ===========================================================  ==================================

where ``L = 1 - b + b dl / avgdl``.

Notes
-----
* ``okapi`` is ``rank_bm25.BM25Okapi`` exactly (k1=1.5, b=0.75, epsilon=0.25 by default), including its
  floor for negative idf (terms in more than half the documents).
* ``bm25+`` follows Lv & Zhai (2011): the ``delta`` bonus applies to the query terms a document contains.
  ``rank_bm25.BM25Plus`` adds ``delta * idf`` for every query term to every document, a per-query
  constant that leaves its ranking equal to plain BM25 with that idf; without the delta terms the two
  agree exactly (tested).
* ``bm25l`` follows Lv & Zhai (2011) and Trotman et al. (2014). ``rank_bm25.BM25L`` multiplies that
  term score by ``tf`` once more; both agree whenever ``tf = 1``.
* **idf floor.** A term's idf is at least :data:`IDF_FLOOR` (1e-12): where a formula gives 0 or less — every
  term of a one-document corpus, a term in one of two documents (``okapi``: ``log(1.5) - log(1.5) = 0``), a
  term in half or more of the documents under ``robertson`` — a document containing a query term still
  scores above 0 and is retrieved, instead of vanishing from the run (TF-IDF finds it). Elsewhere the
  floor changes nothing: ``okapi`` equals rank-bm25 wherever rank-bm25's idf is positive (any corpus
  where its mean idf is), and every score moves by at most 1e-12 per query term.
* ``lucene`` uses Lucene's idf with the classic ``(k1+1)`` numerator; Lucene 8+ drops that constant factor
  (same ranking) and stores document lengths lossily, so its scores differ slightly.

References
----------
Robertson & Zaragoza (2009), The Probabilistic Relevance Framework: BM25 and Beyond.
Lv & Zhai (2011), Lower-bounding term frequency normalization (BM25+); When documents are very long,
BM25 fails! (BM25L). Trotman, Puurula & Burgess (2014), Improvements to BM25 and Language Models Examined.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from ragcov_data.baselines._lexical import LexicalRetriever
from ragcov_data.baselines._sparse import BlockScorer
from ragcov_data.baselines.analyzer import Analyzer
from ragcov_data.errors import RagcovError


#: Smallest idf a term found in the corpus gets (see the module notes: no matching document scores 0).
IDF_FLOOR = 1e-12


class BM25Params(NamedTuple):
    """Parameters passed to the variant functions."""

    k1: float
    b: float
    epsilon: float
    delta: float


# ---- idf functions: (df, N, params) -> idf per term ----------------------------------------------
def idf_okapi(df: np.ndarray, n: int, p: BM25Params) -> np.ndarray:
    """rank-bm25's BM25Okapi idf: negative values become ``epsilon * mean(idf)``."""
    idf = np.log(n - df + 0.5) - np.log(df + 0.5)
    floor = p.epsilon * idf.mean() if len(idf) else 0.0
    return np.where(idf < 0, floor, idf)


def idf_robertson(df: np.ndarray, n: int, p: BM25Params) -> np.ndarray:
    """Robertson-Sparck Jones idf, floored at zero."""
    return np.maximum(np.log((n - df + 0.5) / (df + 0.5)), 0.0)


def idf_lucene(df: np.ndarray, n: int, p: BM25Params) -> np.ndarray:
    """Lucene's always-positive idf."""
    return np.log(1.0 + (n - df + 0.5) / (df + 0.5))


def idf_bm25l(df: np.ndarray, n: int, p: BM25Params) -> np.ndarray:
    """BM25L idf (as rank-bm25 computes it)."""
    return np.log(n + 1.0) - np.log(df + 0.5)


def idf_bm25plus(df: np.ndarray, n: int, p: BM25Params) -> np.ndarray:
    """BM25+ idf."""
    return np.log((n + 1.0) / df)


# ---- tf parts: (tf, dl / avgdl, params) -> weight, for tf > 0 ---------------------------------------
def tf_classic(tf: np.ndarray, rel_len: np.ndarray, p: BM25Params) -> np.ndarray:
    """Saturating tf with length normalisation, in rank-bm25's order of operations."""
    return tf * (p.k1 + 1) / (tf + p.k1 * (1 - p.b + p.b * rel_len))


def tf_bm25l(tf: np.ndarray, rel_len: np.ndarray, p: BM25Params) -> np.ndarray:
    """BM25L: shifted, length-normalised tf."""
    c = tf / (1 - p.b + p.b * rel_len)
    return (p.k1 + 1) * (c + p.delta) / (p.k1 + c + p.delta)


def tf_bm25plus(tf: np.ndarray, rel_len: np.ndarray, p: BM25Params) -> np.ndarray:
    """BM25+: classic tf plus a lower bound ``delta``."""
    return p.delta + (tf * (p.k1 + 1)) / (p.k1 * (1 - p.b + p.b * rel_len) + tf)


class Variant(NamedTuple):
    idf: Callable[[np.ndarray, int, BM25Params], np.ndarray]
    tf: Callable[[np.ndarray, np.ndarray, BM25Params], np.ndarray]
    uses: tuple[str, ...]  # parameters that matter, recorded in run metadata
    default_delta: float


#: BM25 variants by name.
VARIANTS: dict[str, Variant] = {
    "okapi": Variant(idf_okapi, tf_classic, ("k1", "b", "epsilon"), 0.0),
    "robertson": Variant(idf_robertson, tf_classic, ("k1", "b"), 0.0),
    "lucene": Variant(idf_lucene, tf_classic, ("k1", "b"), 0.0),
    "bm25l": Variant(idf_bm25l, tf_bm25l, ("k1", "b", "delta"), 0.5),
    "bm25+": Variant(idf_bm25plus, tf_bm25plus, ("k1", "b", "delta"), 1.0),
}


class BM25(LexicalRetriever):
    """Lexical retrieval with BM25 over the shared :class:`Analyzer`.

    Parameters
    ----------
    k1 : float, default: 1.5
        Term-frequency saturation (>= 0).
    b : float, default: 0.75
        Length normalisation, in [0, 1].
    epsilon : float, default: 0.25
        ``okapi`` only: negative idf is replaced by ``epsilon`` times the mean idf (rank-bm25's floor).
    variant : str, default: "okapi"
        A key of :data:`VARIANTS` (see the module notes for formulas).
    delta : float or None, default: None
        ``bm25l`` / ``bm25+`` only; ``None`` takes the variant's default (0.5 / 1.0, as rank-bm25).
    analyzer : Analyzer, str or None, default: None
        Tokeniser for corpus and queries; ``None`` is ``Analyzer()``; a name is a preset of
        :data:`~ragcov_data.baselines.analyzer.ANALYZER_PRESETS` (``"pt"``: stop words, accent folding,
        Snowball Portuguese stemming).
    show_progress : bool, default: False
        Progress bars while indexing and searching.
    n_jobs : int or None, default: None
        Threads scoring query blocks in parallel; ``None`` uses every available CPU. Results do not
        depend on it.

    Notes
    -----
    A chunk that shares no term with a query scores 0 and is not retrieved (``min_score = 0.0``).
    Scores are exact float64 sums (summation order aside, ~1e-15 relative); ties and ordering follow
    :mod:`ragcov_data.baselines.base`. Memory: the index is a sparse matrix (12 bytes a posting) plus a
    dense block for the terms in at least 10 % of the documents; scoring goes in query blocks.
    Corpus and queries are tokenised in batch (:meth:`Analyzer.count_terms`, the same tokens as the
    analyzer); the index also keeps each distinct corpus word with its terms, so query words already
    seen in the corpus cost a hash look-up, not a new analysis.

    Examples
    --------
    >>> import pandas as pd
    >>> from ragcov_data.baselines import BM25
    >>> corpus = pd.DataFrame({"_id": ["a", "b", "c"], "text": [
    ...     "Resolução Normativa nº 1.000 da ANEEL", "Despacho do diretor-geral", "Portaria do MME"]})
    >>> bm25 = BM25(show_progress=False).index(corpus)
    >>> bm25.analyzer("Resolução Normativa nº 1.000")
    ['resolução', 'normativa', 'no', '1.000']
    >>> run = bm25.search(pd.DataFrame({"_id": ["q1"], "text": ["normativa 1.000"]}), k=2)
    >>> run[["query-id", "corpus-id", "rank"]].values.tolist()
    [['q1', 'a', 1]]
    """

    name = "bm25"
    #: Keep the corpus term counts after indexing (``counts_``, documents x terms); pseudo-relevance
    #: feedback (:class:`~ragcov_data.baselines.prf.RM3`) reads feedback documents from them.
    keep_counts: bool = False

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        variant: str = "okapi",
        *,
        delta: float | None = None,
        analyzer: Analyzer | str | None = None,
        show_progress: bool = False,
        n_jobs: int | None = None,
    ) -> None:
        super().__init__(analyzer=analyzer, show_progress=show_progress, n_jobs=n_jobs)
        if variant not in VARIANTS:
            import difflib

            close = difflib.get_close_matches(str(variant), VARIANTS, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise RagcovError(f"`variant` must be one of {list(VARIANTS)}; got {variant!r}.{hint}")
        v = VARIANTS[variant]
        delta = v.default_delta if delta is None else delta
        for pname, value in (("k1", k1), ("epsilon", epsilon), ("delta", delta)):
            if not _is_real(value) or not (0 <= value < np.inf):
                raise RagcovError(f"`{pname}` must be a finite number >= 0; got {value!r}.")
        if not _is_real(b) or not (0 <= b <= 1):
            raise RagcovError(f"`b` must be a number in [0, 1]; got {b!r}.")
        self.variant = variant
        self._p = BM25Params(float(k1), float(b), float(epsilon), float(delta))
        self.idf_: np.ndarray | None = None
        self.counts_: Any = None
        self.doc_len_: np.ndarray | None = None
        self.avgdl_: float | None = None

    @property
    def k1(self) -> float:
        return self._p.k1

    @property
    def b(self) -> float:
        return self._p.b

    @property
    def epsilon(self) -> float:
        return self._p.epsilon

    @property
    def delta(self) -> float:
        return self._p.delta

    def params(self) -> dict[str, Any]:
        """Variant, the parameters it uses, and the analyzer's parameters."""
        v = VARIANTS[self.variant]
        out: dict[str, Any] = {"variant": self.variant}
        out.update({name: getattr(self._p, name) for name in v.uses})
        out["analyzer"] = self.analyzer.params()
        return out

    def __repr__(self) -> str:
        v = VARIANTS[self.variant]
        args = ", ".join(f"{n}={getattr(self._p, n)!r}" for n in v.uses)
        return f"BM25({args}, variant={self.variant!r})"

    # ---- Retriever hooks ----------------------------------------------------------------------
    def _fit(self, texts: list[str]) -> None:
        counts = self._count_corpus(texts)
        n = counts.shape[0]
        doc_len = np.asarray(counts.sum(axis=1), dtype=np.float64).ravel()
        if doc_len.sum() == 0:
            raise RagcovError(
                f"`corpus` has no tokens at all under {self.analyzer!r}; check the `text` column."
            )
        avgdl = doc_len.sum() / n
        postings = counts.T.tocsr()  # terms x documents: each term's postings in document order
        df = np.diff(postings.indptr)
        variant = VARIANTS[self.variant]
        idf = variant.idf(df.astype(np.float64), n, self._p)
        idf = np.where(idf > 0, idf, IDF_FLOOR)  # a matching term always counts (corpora of one or two documents)
        weights = postings  # counts are not needed any more: weigh in place
        weights.data = idf[np.repeat(np.arange(len(df)), df)] * variant.tf(
            postings.data, doc_len[postings.indices] / avgdl, self._p)
        self.vocabulary_ = self._counter.vocabulary_
        self.idf_, self.doc_len_, self.avgdl_ = idf, doc_len, float(avgdl)
        self.counts_ = counts if self.keep_counts else None
        self._scorer = BlockScorer(weights.T)

    def _score_block(self, texts: list[str]) -> np.ndarray:
        return self._scorer.scores(self._count_queries(texts), out=self._scorer.buffer(len(texts)))

    def get_scores(self, query: str) -> np.ndarray:
        """Scores of one query text against the whole corpus, in corpus order (like rank-bm25's)."""
        if self._scorer is None:
            raise RagcovError("call `index(corpus)` before `get_scores(query)`.")
        return self._scorer.scores(self._count_queries([str(query)]))[0]


def _is_real(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
