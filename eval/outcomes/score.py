"""Step 2 of the outcome stage: one run, already read, checked against a prepared task and scored per query.

:func:`score_run` refuses a run that was not made on the task (recorded parameters, fingerprint, chunk ids,
document sample, ids in another Unicode normalisation, documents outside a complete corpus), removes the
rows retrieving the query's own chunk, scores every prepared query and measures the run's score ties.
Which queries the run lacks, and what that means, is decided with the other runs by
:func:`ragcov_data.eval.outcomes.align.align`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import QrelsRunMismatchError, RagcovError
from ragcov_data.runs.passages import is_passage_run
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.eval.outcomes.passages import LocatedRun, locate_run, location_notice, passage_scores
from ragcov_data.eval.outcomes.prepare import PreparedTask
from ragcov_data.eval.outcomes.run_checks import (_check_query_normalisation, _where, check_made_on,
                                                  check_run_documents, check_run_parameters)
from ragcov_data.eval.outcomes.table import check_run, exclude_self_rows, tie_profile
from ragcov_data.tasks.sampling import resolve_for_eval, sample_of

__all__ = ["ScoredRun", "score_run", "check_read_run", "scores_of"]


@dataclass
class ScoredRun:
    """One run scored on a :class:`~ragcov_data.eval.outcomes.prepare.PreparedTask`.

    ``scores`` holds one value per prepared query (``query_ids``, task order; a query without run rows
    scores 0), with the metric's ``attrs`` (``metric``, ``n_no_relevant``, ``n_run_only``); ``run`` is the
    run as scored (own chunks removed) and ``run_query_ids`` its query ids; ``document_notices`` and
    ``score_notices`` what its documents and its scoring gave to say; ``top_tie_share`` and
    ``all_tied_share`` are shares of the prepared queries (:func:`ragcov_data.eval.outcomes.table.tie_profile`).
    A passage run (a pipeline's text) keeps its located passages in ``located`` and ``run`` is their table.
    """

    name: str
    run: pd.DataFrame = field(repr=False)
    query_ids: np.ndarray = field(repr=False)
    scores: pd.Series = field(repr=False)
    run_query_ids: set = field(repr=False)
    n_self_rows_removed: int
    n_unknown_document_rows: int
    top_tie_share: float
    all_tied_share: float
    document_notices: list[str] = field(default_factory=list)
    score_notices: list[str] = field(default_factory=list)
    located: LocatedRun | None = field(default=None, repr=False)


def check_read_run(prepared_or_base: Any, run: pd.DataFrame, name: str, *, single: bool,
                   fingerprints: dict | None = None) -> None:
    """The checks of a run before any scoring: columns and rows, its recorded task parameters against the
    manifest's, and what it was made on (fingerprint, chunk ids: :func:`~.run_checks.check_made_on`)."""
    check_run(run, "run" if single else f"runs[{name!r}]")
    check_run_parameters(run, prepared_or_base.manifest, name)
    check_made_on({name: run}, prepared_or_base.task, prepared_or_base.manifest, prepared_or_base.corpus,
                  fingerprints=fingerprints)


def _check_sample(prepared: PreparedTask, run: pd.DataFrame, name: str) -> None:
    """A run recording a document sample other than the prepared task's is refused: its queries are not the
    prepared ones (prepare the task with the run: ``prepare_task(..., runs={name: run})``)."""
    rec = resolve_for_eval(sample_of(prepared.task), run.attrs, prepared.task)
    if rec is None:
        return
    have = (prepared.sample or {}).get("documents_sha256")
    if have is None or rec.get("documents_sha256") != have:
        raise QrelsRunMismatchError(
            f"run {name!r} was made on a document sample (k={rec.get('k')}, seed={rec.get('seed')}) that the task "
            "was not prepared for; pass the run to prepare_task(..., runs={...}) so its sample's queries are scored.")


def scores_of(prepared: PreparedTask, run: pd.DataFrame | LocatedRun, name: str, query_ids: Sequence[str],
              notices: list[str]) -> pd.Series:
    """Per-query values of ``run`` over ``query_ids``: a located passage run's
    (:func:`ragcov_data.eval.outcomes.passages.passage_scores`), the cited provisions' measure on a cited-questions
    task, else the metric on the prepared qrels (:func:`ragcov_data.eval.outcomes.metrics.per_query`)."""
    if isinstance(run, LocatedRun):
        return passage_scores(prepared, run, query_ids)
    if prepared.cited is not None:
        return prepared.cited.scores(run, query_ids, name, notices)
    return per_query(run, prepared.prepared_qrels, prepared.spec, relevance_threshold=prepared.relevance_threshold,
                     tie_policy=prepared.tie_policy, query_ids=query_ids)


def score_run(prepared: PreparedTask, run: pd.DataFrame, name: str = "run", *, checked: bool = False) -> ScoredRun:
    """Check ``run`` (a DataFrame read by :func:`ragcov_data.runs.load_run`) against the prepared task and
    score every prepared query.

    ``checked=True`` skips the checks :func:`check_read_run` makes and the document-sample check, for a run
    that has been through them on this task already (``outcomes_many`` checks every run before preparing
    the task, as a run from another cut must be refused before its sample is looked at).
    """
    if not isinstance(run, pd.DataFrame):
        raise RagcovError(f"score_run takes a run already read (a DataFrame from ragcov_data.runs.load_run); got "
                          f"{type(run).__name__} for {name!r}: read it with load_run(path) first.")
    if is_passage_run(run):
        return _score_passages(prepared, run, name)
    if not checked:
        check_read_run(prepared, run, name, single=prepared.single, fingerprints=prepared.fingerprints)
        _check_sample(prepared, run, name)
    said: list[str] = []
    n_unknown = check_run_documents(run, prepared.corpus, prepared.subset_note, said, name)
    df, n_self = exclude_self_rows(run, prepared.queries, prepared.exclude_self)
    ids = set(pd.Index(pd.factorize(df["query-id"])[1]).astype(str))
    _check_query_normalisation(ids, prepared.task_ids, _where(df, name))
    qids = prepared.query_ids
    own: list[str] = []
    scores = scores_of(prepared, df, name, qids, own)
    top_share, all_share = tie_profile(df, len(qids))
    return ScoredRun(name=name, run=df, query_ids=qids, scores=scores, run_query_ids=ids, n_self_rows_removed=n_self,
                     n_unknown_document_rows=n_unknown, top_tie_share=top_share, all_tied_share=all_share,
                     document_notices=said, score_notices=own)


def _score_passages(prepared: PreparedTask, run: pd.DataFrame, name: str) -> ScoredRun:
    """A passage run located in the task's documents and scored (:mod:`ragcov_data.eval.outcomes.passages`)."""
    located = locate_run(run, prepared.task, name)
    ids = set(located.frame["query-id"]) | set(located.report["failures"]) | set(located.report["empty"])
    _check_query_normalisation(ids, prepared.task_ids, name)
    qids = prepared.query_ids
    scores = passage_scores(prepared, located, qids)
    return ScoredRun(name=name, run=located.frame, query_ids=qids, scores=scores, run_query_ids=ids,
                     n_self_rows_removed=0, n_unknown_document_rows=0, top_tie_share=0.0, all_tied_share=0.0,
                     document_notices=[location_notice(name, located.report)], located=located)
