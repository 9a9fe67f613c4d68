"""Ties, in one place: what a tied score is, the tie order every metric uses, and the tie policies.

**trec_eval's order.** trec_eval 10 ignores a run's rank column and sorts each query's documents by
score descending (full double precision), then by document id *descending*, compared byte-wise
(``strcmp``). ragcov uses the same order by default (tie policy ``"trec_eval"``), so any number it
prints for a run file is the number trec_eval gives on that file. UTF-8 byte order equals Unicode code
point order, which is how Python compares ``str``, so sorting ids as strings is exact.

**Near-ties.** Two scores *tie* for ragcov's retrievers when ``|a - b| <= TIE_TOL * max(1, |a|, |b|)``:
the tolerance absorbs floating-point summation-order noise, never a real score difference. A retriever
reports every run of such near-tied candidates with one exact score (:func:`snap_ties`), so trec_eval,
pytrec_eval and ragcov all see an exact tie. Scores read from files are compared exactly.

Note: pytrec_eval holds scores as float32, so scores closer than ~1e-7 (relative) tie there and not in
trec_eval 10 or ragcov (both double precision).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ragcov_data.errors import RagcovError

TIE_TOL = 1e-9

#: Tie policies of every metric, by name (see ``ragcov_data.eval.outcomes.metrics``):
#: ``trec_eval`` (score desc, id desc), ``run`` (the file's ranks), ``pessimistic`` (relevant documents
#: last within each tie), ``optimistic`` (first), ``expected`` (mean over every order of the ties).
TIE_POLICIES = ("trec_eval", "run", "pessimistic", "optimistic", "expected")
#: Older spellings still accepted -> the policy they mean.
TIE_POLICY_ALIASES = {"first": "run"}
DEFAULT_TIE_POLICY = "trec_eval"


def check_tie_policy(policy: Any) -> str:
    """The canonical name of ``policy`` (aliases resolved); a clear error for anything else."""
    name = TIE_POLICY_ALIASES.get(policy, policy) if isinstance(policy, str) else policy
    if name not in TIE_POLICIES:
        raise RagcovError(
            f"`tie_policy` must be one of {TIE_POLICIES}; got {policy!r}. 'trec_eval' (default) orders equal "
            "scores by document id descending, as trec_eval does; 'run' keeps the run's own ranks."
        )
    return name


def tied(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """Elementwise: do ``a`` and ``b`` tie under :data:`TIE_TOL`?"""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    scale = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return np.abs(a - b) <= TIE_TOL * scale


def tie_keys(ids: Any) -> np.ndarray:
    """Integer keys of ``ids`` such that sorting the keys ascending lists the ids descending (byte-wise).

    ``tie_keys(ids)[i] == 0`` for the largest id. Used to break score ties in trec_eval's order with
    integer sorts instead of string comparisons.
    """
    arr = np.asarray(ids, dtype=object)
    asc = np.argsort(arr, kind="stable")
    keys = np.empty(len(arr), dtype=np.int64)
    keys[asc] = np.arange(len(arr) - 1, -1, -1)
    return keys


def snap_ties(rows: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Give each run of near-tied scores one exact value, its first (largest).

    ``rows`` (query of each candidate) ascending and, within a query, ``vals`` descending. Consecutive
    candidates of one query whose scores tie under :func:`tied` form a run; every member gets the run's
    first score. Returns the new scores and a mask of the candidates whose score changed.
    """
    vals = np.asarray(vals, dtype=np.float64)
    if len(vals) < 2:
        return vals, np.zeros(len(vals), dtype=bool)
    joins = (rows[1:] == rows[:-1]) & tied(vals[1:], vals[:-1])
    if not joins.any():
        return vals, np.zeros(len(vals), dtype=bool)
    starts = np.flatnonzero(np.concatenate(([True], ~joins)))
    group = np.cumsum(np.concatenate(([True], ~joins))) - 1
    new = vals[starts][group]
    return new, new != vals
