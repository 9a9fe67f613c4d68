"""Step 3 of the outcome stage: scored runs put on one set of queries, as an :class:`OutcomeSet`.

:func:`align` applies the rules for queries the runs do not share: runs covering different queries
(``on_mismatch``, ``compare``'s rule: an error, or only the shared queries), then task queries a run lacks
(``on_missing``: an error naming the run and whether it was made on another task, scored 0 and said, or
only the queries every run has). Notices come in one order: the task's, the runs' documents, the queries
dropped, the population correction's, then each run's own (zero-filled queries, score ties).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import QrelsRunMismatchError, RagcovError
from ragcov_data.eval.outcomes.args import check_outcome_args
from ragcov_data.eval.outcomes.passages import ambiguity_notice, missing_answers_error, run_label
from ragcov_data.eval.outcomes.prepare import PreparedTask
from ragcov_data.eval.outcomes.run_checks import outside_notice
from ragcov_data.eval.outcomes.score import ScoredRun, scores_of
from ragcov_data.eval.outcomes.table import (OutcomeSet, OutcomeTable, _missing_error, _tie_notice, chunk_order,
                                             tie_profile, zeroed_notice)

__all__ = ["align", "ON_MISMATCH"]

#: ``compare``'s rule for runs covering different queries.
ON_MISMATCH = ("error", "intersect")


@dataclass
class _Kept:
    """The prepared queries kept and what each run lacks among them."""

    keep: np.ndarray
    lacks: dict[str, np.ndarray]
    n_lacking: dict[str, int]
    n_dropped_missing: int
    n_dropped_mismatch: int


def _mismatch(run_ids: Mapping[str, set], qids_all: np.ndarray, on_mismatch: str | None) -> np.ndarray:
    """Mask of the prepared queries every run covers when the runs cover different queries and
    ``on_mismatch="intersect"``; different coverage under ``"error"`` is refused, naming the first two runs."""
    keep = np.ones(len(qids_all), dtype=bool)
    if on_mismatch is None or len(run_ids) < 2:
        return keep
    sets = list(run_ids.values())
    if all(s == sets[0] for s in sets[1:]):
        return keep
    if on_mismatch == "error":
        (na, qa), (nb, qb) = list(run_ids.items())[:2]
        only_a, only_b = sorted(qa - qb), sorted(qb - qa)
        raise QrelsRunMismatchError(
            f"`{na}` and `{nb}` cover different queries: {len(only_a)} only in {na} (first 3: {only_a[:3]}), "
            f"{len(only_b)} only in {nb} (first 3: {only_b[:3]}). Pass `on_mismatch='intersect'` to compare "
            "the shared queries only.")
    shared = set.intersection(*sets)
    keep = np.fromiter((q in shared for q in qids_all), bool, len(qids_all))
    if not keep.any():
        raise QrelsRunMismatchError(f"`{'` and `'.join(run_ids)}` share no query of the task; nothing to "
                                    "compare.")
    return keep


def _coverage(prepared: PreparedTask, scored: Mapping[str, ScoredRun], on_missing: str) -> dict[str, set]:
    """The queries each run covers as the rule for differing query sets sees them. A passage run's missing
    questions are decided by ``on_missing`` alone, in every verb alike: refused under ``"error"``
    (:func:`~ragcov_data.eval.outcomes.passages.missing_answers_error`), under ``"zero"`` answered with no
    context, so they do not make its query set differ from the other runs'."""
    out = {}
    task_ids = set(prepared.task_ids)
    for name, s in scored.items():
        ids = s.run_query_ids
        if s.located is not None and not (ids - task_ids):  # a passage run of this task's questions
            lacking = [q for q in prepared.query_ids if q not in ids]
            if lacking and on_missing == "error":
                raise missing_answers_error(name, s.located.frame.attrs, lacking, len(prepared.query_ids))
            if on_missing == "zero":
                ids = ids | set(prepared.query_ids)
        out[name] = ids
    return out


def _kept_queries(prepared: PreparedTask, scored: Mapping[str, ScoredRun], on_missing: str,
                  on_mismatch: str | None, notices: list[str]) -> _Kept:
    """Which prepared queries are kept (mismatch first, then missing queries) and what each run lacks."""
    run_ids = {name: s.run_query_ids for name, s in scored.items()}
    qids_all = prepared.query_ids
    keep = _mismatch(_coverage(prepared, scored, on_missing), qids_all, on_mismatch)
    n_dropped_mismatch = int((~keep).sum())
    qids_kept = qids_all[keep]
    lacks = {name: np.fromiter((q not in ids for q in qids_kept), bool, len(qids_kept))
             for name, ids in run_ids.items()}
    lacking = {k: int(v.sum()) for k, v in lacks.items() if v.any()}
    n_lacking = {k: int(v.sum()) for k, v in lacks.items()}  # before any intersect: reported per run
    n_dropped = 0
    if lacking:
        said = ", ".join(f"{k!r} lacks {v} of {len(qids_kept)}" for k, v in lacking.items())
        if on_missing == "error":
            task_ids = set(prepared.task_ids)
            for name, m in lacks.items():
                if m.any():
                    run_only = len(run_ids[name] - task_ids)
                    _missing_error(name, list(qids_kept[m]), qids_kept, run_only, prepared.single, scored[name].run)
            raise QrelsRunMismatchError(
                f"runs miss task queries: {said}. Pass on_missing='zero' to score them 0, or 'intersect' to keep "
                "only the queries every run has (CLI: --on-missing zero|intersect); zero is right for queries a run "
                "ran and found nothing, and a query that was not run belongs in the run.")
        if on_missing == "intersect":
            both = ~np.any(np.stack(list(lacks.values())), axis=0)
            if not both.any():
                raise QrelsRunMismatchError(f"the runs share no query of the task ({said}); nothing to rank.")
            n_dropped = int((~both).sum())
            notices.append(f"kept the {int(both.sum())} queries every run has; dropped {n_dropped} of "
                           f"{len(qids_kept)} ({said}).")
            idx = np.flatnonzero(keep)
            keep[idx[~both]] = False
            lacks = {k: v[both] for k, v in lacks.items()}
    return _Kept(keep, lacks, n_lacking, n_dropped, n_dropped_mismatch)


def _run_notices(prepared: PreparedTask, scored: Mapping[str, ScoredRun]) -> list[str]:
    """What the runs' documents give to say: each run's notice for one run, one notice naming every run
    with rows outside a shipped subset corpus for several, and where each passage run's passages were found."""
    if prepared.single:
        return [n for s in scored.values() for n in s.document_notices]
    outside = {name: s.n_unknown_document_rows for name, s in scored.items()}
    located = [n for s in scored.values() if s.located is not None for n in s.document_notices]  # passage runs
    return ([outside_notice(outside, prepared.subset_note)] if any(outside.values()) else []) + located


def _on_kept(prepared: PreparedTask, s: ScoredRun, keep: np.ndarray) -> tuple[pd.Series, list[str], float, float]:
    """A run's scores, scoring notices and tie shares over the kept queries: as scored when every prepared
    query is kept, else scored again on the kept ones (counts such as ``n_run_only`` are of the kept queries)."""
    if keep.all():
        return s.scores, list(s.score_notices), s.top_tie_share, s.all_tied_share
    qids = prepared.query_ids[keep]
    own: list[str] = []
    scores = _restricted(prepared, s, qids)
    if scores is None:
        scores = scores_of(prepared, s.located or s.run, s.name, qids, own)
    return (scores, own, *tie_profile(s.run, len(qids)))


def _restricted(prepared: PreparedTask, s: ScoredRun, qids: np.ndarray) -> pd.Series | None:
    """A run's scores on the kept queries taken from its one scoring, with the metric's counts recounted over
    them (each query's value does not depend on the others); ``None`` where a count cannot be recounted from
    what the scoring kept (cited questions, passage runs, budgeted measures), which are scored on the kept
    queries instead."""
    attrs = s.scores.attrs
    if (s.located is not None or prepared.cited is not None or "no_relevant" not in attrs
            or attrs.get("context_words") is not None or s.score_notices):
        return None
    kept = set(map(str, qids))
    out = pd.Series(s.scores.reindex(qids).to_numpy(dtype=float), index=s.scores.index[:0].append(pd.Index(qids)),
                    name=s.scores.name)
    no_rel = [q for q in attrs["no_relevant"] if str(q) in kept]
    out.attrs = {**attrs, "n_queries": len(qids), "no_relevant": no_rel, "n_no_relevant": len(no_rel),
                 "n_no_run": int(sum(str(q) not in s.run_query_ids for q in qids)),
                 "n_run_only": len(s.run_query_ids - kept)}
    return out


def _table(prepared: PreparedTask, s: ScoredRun, kept: _Kept, on_missing: str, shared: list[str],
           columns: dict[str, Any], queries: pd.DataFrame) -> OutcomeTable:
    """One run's :class:`OutcomeTable` over the kept queries (``columns``: their per-query columns)."""
    qids = columns["query-id"]
    groups = columns.get("group")
    scores, own, top_share, all_share = _on_kept(prepared, s, kept.keep)
    miss = kept.lacks[s.name]
    n_miss = int(miss.sum())
    if n_miss and on_missing == "zero":
        by_group = None
        if groups is not None:
            by_group = {str(g): (int(miss[groups == g].sum()), int((groups == g).sum())) for g in pd.unique(groups)}
        own.append(zeroed_notice(s.name, n_miss, len(qids), by_group))
    note = _tie_notice(s.name, all_share, prepared.tie_policy)
    if note:
        own.append(note)
    pq = pd.DataFrame({**columns, "value": scores.to_numpy(dtype=float)})
    pq = pq[[c for c in ("query-id", "cluster", "value", "group", "stratum") if c in pq.columns]]
    info = {
        "n_missing_queries": n_miss,
        "missing_queries": [str(q) for q in qids[miss]] if on_missing == "zero" else [],
        "on_missing": on_missing,
        "run_attrs": {k: (v if isinstance(v, (str, int, float, bool, type(None))) else str(v))
                      for k, v in getattr(s.run, "attrs", {}).items()},
        "n_no_relevant": scores.attrs.get("n_no_relevant"), "n_run_only": scores.attrs.get("n_run_only"),
        "n_self_rows_removed": s.n_self_rows_removed, "n_unknown_document_rows": s.n_unknown_document_rows,
        "n_unjudged_queries": int(prepared.n_task - len(prepared.queries)),
        "top_tie_share": top_share, "all_tied_share": all_share, **prepared.pop_info,
    }
    if scores.attrs.get("context_words") is not None:  # budgeted measures: the words each context holds
        info["mean_context_words"] = float(scores.attrs["context_words"])
    if s.located is not None:  # a passage run: how its passages were located, how far their places may move it
        info["passages"] = {**s.located.report, "placement": scores.attrs.get("placement")}
        metric = scores.attrs.get("metric", str(prepared.spec))
        note = ambiguity_notice(run_label(s.name, s.located.frame.attrs), metric, s.located.report,
                                scores.attrs.get("placement"))
        if note:
            own.append(note)
    return OutcomeTable(
        name=s.name, per_query=pq, missing=miss, metric=scores.attrs.get("metric", str(prepared.spec)),
        tie_policy=prepared.tie_policy, relevance_threshold=prepared.relevance_threshold, cluster=prepared.cluster,
        by=prepared.by, strata=prepared.strata, population_sizes=prepared.population_sizes, sample=prepared.sample,
        info=info, notices=[*shared, *own], run=s.run, queries=queries, qrels=prepared.qrels)


def align(prepared: PreparedTask, scored: Mapping[str, ScoredRun] | Sequence[ScoredRun], *,
          on_missing: str = "error", on_mismatch: str | None = None) -> OutcomeSet:
    """The scored runs over one set of queries (parameters as in :func:`ragcov_data.eval.outcomes.outcomes_many`).

    ``scored`` maps names to :class:`~ragcov_data.eval.outcomes.score.ScoredRun` (a sequence is keyed by
    each run's name); every run must have been scored on ``prepared``.
    """
    check_outcome_args(on_missing, prepared.tie_policy, single=prepared.single)
    if on_mismatch is not None and on_mismatch not in ON_MISMATCH:
        raise RagcovError(f"`on_mismatch` must be one of {ON_MISMATCH}; got {on_mismatch!r}.")
    if not isinstance(scored, Mapping):
        scored = {s.name: s for s in scored}
    if not scored:
        raise RagcovError("`scored` holds no run; score at least one run with score_run(prepared, run, name).")
    if any(not np.array_equal(s.query_ids, prepared.query_ids) for s in scored.values()):
        raise RagcovError("every run given to `align` must be scored on the same prepared task (score_run).")
    notices = list(prepared.notices) + _run_notices(prepared, scored)
    kept = _kept_queries(prepared, scored, on_missing, on_mismatch, notices)
    notices += prepared.population_notices
    keep = kept.keep
    queries = prepared.queries.loc[keep].reset_index(drop=True)
    columns: dict[str, Any] = {"query-id": prepared.query_ids[keep], "cluster": prepared.clusters[keep]}
    if prepared.groups is not None:
        columns["group"] = prepared.groups[keep]
    if prepared.strata_values is not None:
        columns["stratum"] = prepared.strata_values[keep]
    tables: dict[str, OutcomeTable] = {}
    all_notices = list(notices)
    for name, s in scored.items():
        tables[name] = _table(prepared, s, kept, on_missing, notices, columns, queries)
        all_notices += tables[name].notices[len(notices):]
    n_dropped = kept.n_dropped_missing + kept.n_dropped_mismatch
    return OutcomeSet(tables=tables, queries=queries, qrels=prepared.qrels, prepared_qrels=prepared.prepared_qrels,
                      cluster=prepared.cluster, by=prepared.by, strata=prepared.strata,
                      population_sizes=prepared.population_sizes, sample=prepared.sample, n_dropped=n_dropped,
                      n_missing={name: kept.n_lacking[name] for name in scored}, notices=all_notices,
                      info={"n_dropped_mismatch": kept.n_dropped_mismatch, "n_dropped_missing": kept.n_dropped_missing,
                            "order": chunk_order(queries, prepared.corpus), **prepared.pop_info})
