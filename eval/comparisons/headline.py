"""The leaderboard's headline estimator under ``estimator="auto"``: the one whose intervals are verified here.

The mean over queries (micro, trec_eval's number) is the default headline. Where documents are wildly unequal
(on the ANEEL census one act holds 18% of the queries, queries per act have a coefficient of variation of 2.4)
no micro interval method holds its level at the design, and every row would print as ``NOT VERIFIED``
(``benchmarks/bench_micro_heavy.py`` measures the candidates). There the per-document mean (macro), whose
intervals are verified, takes the headline, and micro moves to a second line that gives trec_eval's numbers and
says in one sentence why they carry no verified interval (``info["micro_line"]``). A board where micro is
verified for every system, or where macro is not verified either, keeps micro.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ragcov_data.eval.comparisons.leaderboard_render import ALL
from ragcov_data.eval.estimates import marks
from ragcov_data.eval.estimates.verify import size_cv

__all__ = ["choose_headline", "micro_line"]


def _verified(res: Any) -> tuple[int, int]:
    """(systems whose overall interval is verified, systems) of a leaderboard."""
    sy = res.systems[res.systems["group"] == ALL]
    ok = sum(1 for v in sy.get("verified", []) if v is True or v is np.True_)
    return ok, len(sy)


def _sizes_words(clusters: np.ndarray, unit: str) -> str:
    """``queries per document are very unequal (the largest holds 18% of them; CV 2.4)``."""
    _, n = np.unique(np.asarray(clusters), return_counts=True)
    return (f"queries per {unit} are very unequal (the largest holds {n.max() / n.sum():.0%} of them; "
            f"CV {size_cv(n):.1f})")


def micro_line(res: Any, clusters: np.ndarray, unit: str) -> dict[str, Any]:
    """The micro board's overall systems as the second line's record: per system ``name``, ``estimate``,
    ``low``, ``high``, ``method``, ``verified_coverage``, ``verified``, ``verified_status``; ``reason`` (one sentence) and
    ``coverage_range`` of its intervals at this design."""
    sy = res.systems[res.systems["group"] == ALL]
    status = list(sy["verified_status"]) if "verified_status" in sy else [None] * len(sy)
    cov = [float(c) for c in sy["verified_coverage"] if c is not None and np.isfinite(c)]
    short = [float(c) for c, st in zip(sy["verified_coverage"], status)
             if st == "not_verified" and c is not None and np.isfinite(c)]
    lvl = f"{res.level:.0%}"
    where = []
    if short:
        where.append(f"its intervals cover {min(short):.1%}–{max(short):.1%}, short of {lvl}")
    reasons = list(dict.fromkeys(marks.words(r, res.level) for r in sy.to_dict(orient="records")
                                 if marks.status_of(r) == "unverifiable"))
    if reasons:  # the check's own reason (verified_reason), as every output words it (eval/estimates/marks.py)
        where.append(("for the others " if short else "") + "; ".join(reasons))
    if not where:
        where.append(f"no interval of it is shown to hold {lvl}")
    reason = f"micro is not verified at this design: {'; '.join(where)}, as {_sizes_words(clusters, unit)}."
    rows = [{"name": str(r["name"]), "estimate": float(r["estimate"]), "low": float(r["low"]),
             "high": float(r["high"]), "method": str(r["method"]), "verified_coverage": r.get("verified_coverage"),
             "verified": r.get("verified"), **marks.record(r)} for r in sy.to_dict(orient="records")]
    return {"estimator": "micro", "systems": rows, "reason": reason,
            "coverage_range": [min(cov), max(cov)] if cov else None}


def choose_headline(run: Callable[[str], Any], clusters: np.ndarray, unit: str) -> Any:
    """``run(estimator)`` gives a leaderboard; returns micro's, or macro's with ``info["micro_line"]`` where
    micro is not verified for every system and macro is verified for more of them."""
    micro = run("micro")
    if (micro.groups.get(ALL) or {}).get("estimator") == "mean":  # one query a cluster: one mean, no choice
        return micro
    ok, n = _verified(micro)
    if ok == n:
        micro.info["headline"] = "micro: verified for every system"
        return micro
    macro = run("macro")
    ok_macro, _ = _verified(macro)
    if ok_macro <= ok:
        micro.info["headline"] = "micro: the per-document mean is not verified for more systems"
        return micro
    macro.info["micro_line"] = micro_line(micro, clusters, unit)
    macro.info["headline"] = "macro: micro is not verified at this design"
    return macro
