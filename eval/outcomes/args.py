"""The one check of the outcome stage's policy arguments, shared by every verb that scores runs
(``evaluate``, ``compare``, ``leaderboard``, ``misses``, :func:`~ragcov_data.eval.outcomes.outcomes_many`),
so each option is refused with the same message wherever it is given."""
from __future__ import annotations

from typing import Any

from ragcov_data.errors import RagcovError
from ragcov_data.ties import DEFAULT_TIE_POLICY, check_tie_policy

__all__ = ["ON_MISSING", "check_outcome_args"]

#: Policies for task queries a run lacks (``intersect``: several runs only).
ON_MISSING = ("error", "zero", "intersect")


def check_outcome_args(on_missing: str | None = "error", tie_policy: Any = DEFAULT_TIE_POLICY, *,
                       single: bool = False) -> str:
    """Check ``on_missing`` (one of :data:`ON_MISSING`; ``intersect`` only where several runs share the
    queries, not for ``single``-run verbs; ``None``: not checked) and ``tie_policy``; return the tie
    policy's canonical name (aliases resolved, :func:`ragcov_data.ties.check_tie_policy`)."""
    tie_policy = check_tie_policy(tie_policy)
    allowed = ON_MISSING[:2] if single else ON_MISSING
    if on_missing is not None and on_missing not in allowed:
        raise RagcovError(f"`on_missing` must be one of {allowed}; got {on_missing!r}.")
    return tie_policy
