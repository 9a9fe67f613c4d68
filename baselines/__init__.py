"""Baseline retrievers (BM25, TF-IDF, dense) and the run format shared by every retriever.

>>> from ragcov_data.baselines import BM25, TfIdf, Dense    # doctest: +SKIP
>>> bm25 = BM25().index(ds["corpus"])                       # doctest: +SKIP
>>> run = bm25.search(ds["queries"], k=10, exclude_self=True)  # doctest: +SKIP

``import ragcov_data.baselines`` never imports torch: the dense retriever loads its encoder (and torch) when it
first encodes.
"""
from __future__ import annotations

from ragcov_data.baselines.analyzer import ANALYZER_PRESETS, PT_STOPWORDS, Analyzer
from ragcov_data.baselines.base import RUN_COLUMNS, Retriever
from ragcov_data.baselines.bm25 import BM25, VARIANTS
from ragcov_data.baselines.dense import Dense
from ragcov_data.baselines.hybrid import Hybrid, fuse
from ragcov_data.baselines.prf import RM3
from ragcov_data.baselines.top_ties import load_run, save_run, top_tie_share, top_tie_sizes, validate_run
from ragcov_data.baselines.tfidf import TfIdf

__all__ = [
    "ANALYZER_PRESETS",
    "Analyzer",
    "BM25",
    "Dense",
    "Hybrid",
    "PT_STOPWORDS",
    "RM3",
    "RUN_COLUMNS",
    "Retriever",
    "TfIdf",
    "VARIANTS",
    "fuse",
    "load_run",
    "save_run",
    "top_tie_share",
    "top_tie_sizes",
    "validate_run",
]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
