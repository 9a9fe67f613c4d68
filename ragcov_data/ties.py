"""One definition of a tied score, shared by retrievers (which keep tied candidates in runs) and the
evaluator (which applies a tie policy to hit@1).

Two scores tie when ``|a - b| <= TIE_TOL * max(1, |a|, |b|)``. The tolerance absorbs floating-point
summation-order noise, not real score differences (BM25/TF-IDF/cosine differences are far larger).
"""
from __future__ import annotations

import numpy as np

TIE_TOL = 1e-9

#: Tie policies for hit@1, by name (see ``ragcov_data.eval.metrics``).
TIE_POLICIES = ("first", "pessimistic", "expected")


def tied(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """Elementwise: do ``a`` and ``b`` tie under :data:`TIE_TOL`?"""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    scale = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return np.abs(a - b) <= TIE_TOL * scale
