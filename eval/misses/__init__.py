"""Stage 4: where the misses go (what a retriever returned instead of the query's own document)."""
from __future__ import annotations

from ragcov_data.eval.misses.analysis import MissesResult, misses  # noqa: F401

__all__ = ["misses", "MissesResult"]
