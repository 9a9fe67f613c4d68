"""What BM25 and TF-IDF share: the analyzer, batched term counting of the corpus, sparse block scoring.

A lexical retriever tokenises the corpus once through a :class:`~ragcov_data.baselines._counter.TermCounter`
(``_count_corpus``), turns the counts into document weights for a :class:`BlockScorer`, and counts each
block of queries with the same counter (``_count_queries``). Chunks sharing no term with the query score
0 and are not retrieved (``min_score = 0.0``).
"""
from __future__ import annotations

from typing import Any, Sequence

import scipy.sparse as sp

from ragcov_data.baselines._counter import TermCounter
from ragcov_data.baselines._sparse import BlockScorer
from ragcov_data.baselines.analyzer import ANALYZER_PRESETS, Analyzer
from ragcov_data.baselines.base import Retriever
from ragcov_data.errors import RagcovError


class LexicalRetriever(Retriever):
    """Base of the sparse retrievers: validates and holds ``analyzer``, ``show_progress`` and ``n_jobs``."""

    min_score = 0.0
    max_block_floats = 4_000_000
    #: Texts tokenised at a time while indexing (one progress step each).
    index_batch: int = 20_000

    def __init__(self, *, analyzer: Analyzer | str | None, show_progress: bool, n_jobs: int | None) -> None:
        super().__init__()
        if isinstance(analyzer, str):  # a named preset, e.g. "pt"
            analyzer = Analyzer.preset(analyzer)
        if analyzer is not None and not isinstance(analyzer, Analyzer):
            raise RagcovError(
                f"`analyzer` must be a ragcov_data.baselines.Analyzer, a preset name {sorted(ANALYZER_PRESETS)} "
                f"or None; got {type(analyzer)!r}."
            )
        if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1):
            raise RagcovError(f"`n_jobs` must be a positive integer or None; got {n_jobs!r}.")
        self.analyzer = analyzer if analyzer is not None else Analyzer()
        self.show_progress = bool(show_progress)
        self.n_jobs = n_jobs
        #: Term -> column of the index.
        self.vocabulary_: dict[str, int] = {}
        self._counter: TermCounter | None = None
        self._scorer: BlockScorer | None = None

    def _count_corpus(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Term counts of the corpus (texts x terms), ``index_batch`` texts at a time, with a progress bar
        over batches when there are several; keeps the fitted counter for the queries."""
        starts: Any = range(0, len(texts), self.index_batch)
        if self._show_index and len(starts) > 1:
            from tqdm.auto import tqdm

            starts = tqdm(starts, desc=f"{self.name}: index", unit=f"×{self.index_batch} texts", leave=False,
                          disable=None)  # a bar on a terminal only
        counter = TermCounter(self.analyzer)
        counts = counter.fit_transform(texts[s:s + self.index_batch] for s in starts)
        self._counter = counter
        return counts

    def _count_queries(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Term counts of query texts over the corpus's terms (terms it lacks are dropped)."""
        if self._counter is None:
            raise RagcovError("call `index(corpus)` before searching.")
        return self._counter.transform(texts)

    def _after_search(self) -> None:
        if self._scorer is not None:
            self._scorer._buffers.clear()
