"""Step 1 of the outcome stage: everything about a task that does not depend on the run being scored.

:func:`prepare_task` reads the task's frames once, restricts a document-sampled task (or the task of runs
made on a sample) to the sampled documents' queries, checks the qrels, keeps the judged queries, sets up
the provision-level scoring of a cited-questions task, reads the clusters, groups and strata, works out the
population sizes and prepares the qrels for scoring. The result, a :class:`PreparedTask`, is then used for
every run (:func:`ragcov_data.eval.outcomes.score.score_run`) and the runs are put on one set of queries
(:func:`ragcov_data.eval.outcomes.align.align`), as ir_measures prepares qrels once for many runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.outcomes.budget import cited_scoring
from ragcov_data.eval.outcomes.metrics import _lists, parse_metric  # _lists.prepare_qrels: looked up at call time
from ragcov_data.tasks.sampling import (DocumentPopulation, census_sizes, eval_info, population_for_eval, restrict_frames,
                                  sample_of, unequal_probabilities)
from ragcov_data.ties import DEFAULT_TIE_POLICY
from ragcov_data.eval.outcomes.args import check_outcome_args
from ragcov_data.eval.outcomes.table import (DEFAULT_CLUSTERS, _manifest, _sample_for_runs, _split_frame,
                                             check_task_qrels, default_cluster, judged_queries, known_subset_note,
                                             load_task_frames, query_column)

__all__ = ["PreparedTask", "prepare_task"]


@dataclass
class PreparedTask:
    """A task made ready to score runs on (:func:`prepare_task`); nothing in it depends on a run.

    ``queries`` are the judged (and sampled) task queries every run is scored on, in task order, with
    ``query_ids``, ``clusters``, ``groups`` and ``strata_values`` aligned to them; ``qrels`` the (sampled)
    qrels and ``prepared_qrels`` the same converted once for scoring; ``spec`` the metric (a provision-level
    :class:`~ragcov_data.eval.outcomes.budget.CitedMetric` when ``cited`` scores it); ``notices`` the
    task's notices and ``population_notices`` those of the finite-population correction (said after the
    notices about the runs); ``task_ids`` every task query id, before any sample (run checks).
    """

    task: Any = field(repr=False)
    manifest: dict[str, Any] = field(repr=False)
    corpus: pd.DataFrame | None = field(repr=False)
    spec: Any
    cited: Any
    tie_policy: str
    relevance_threshold: float
    exclude_self: bool
    single: bool
    queries: pd.DataFrame = field(repr=False)
    qrels: pd.DataFrame = field(repr=False)
    prepared_qrels: Any = field(repr=False)
    cluster: str
    by: str | None
    strata: str | None
    clusters: np.ndarray = field(repr=False)
    groups: np.ndarray | None = field(repr=False)
    strata_values: np.ndarray | None = field(repr=False)
    population_sizes: Any
    sample: dict[str, Any] | None
    pop_info: dict[str, Any]
    task_ids: np.ndarray = field(repr=False)
    subset_note: str | None
    n_task: int
    notices: list[str] = field(default_factory=list)
    population_notices: list[str] = field(default_factory=list)
    fingerprints: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def query_ids(self) -> np.ndarray:
        """The ids of :attr:`queries`, as strings."""
        return self.queries["_id"].astype(str).to_numpy()

    @property
    def metric(self) -> str:
        return str(self.spec)


@dataclass
class _TaskFrames:
    """The run-independent reading of a task that comes before any run is checked (frames, metric)."""

    frames: dict[str, pd.DataFrame | None]
    manifest: dict[str, Any]
    cited: Any
    spec: Any


def read_task(task: Any, metric: Any, tie_policy: str, cluster: str | None, by: str | None, strata: str | None,
              query_columns: Sequence[str], qrels: pd.DataFrame | None = None,
              granularity: str | None = None) -> _TaskFrames:
    """The task's frames (only the queries columns asked for; ``qrels`` instead of its split when given), its
    manifest and the metric: a provision-level one on a cited-questions task (at ``granularity``, default the
    manifest's: :func:`ragcov_data.eval.outcomes.budget.cited_scoring`), else parsed."""
    extra = [c for c in (cluster, by, strata, *query_columns) if c] + ([] if cluster else list(DEFAULT_CLUSTERS))
    frames = load_task_frames(task, extra, qrels)
    manifest = _manifest(task)
    cited = cited_scoring(task, metric, tie_policy, manifest, _split_frame, granularity)
    return _TaskFrames(frames, manifest, cited, cited.spec if cited is not None else parse_metric(metric))


def prepare_task(
    task: Any,
    metric: Any = "hit@1",
    *,
    tie_policy: str = DEFAULT_TIE_POLICY,
    relevance_threshold: float = 1,
    cluster: str | None = None,
    by: str | None = None,
    strata: str | None = None,
    exclude_self: bool = True,
    fpc: bool = True,
    population_sizes: Any = None,
    query_columns: Sequence[str] = (),
    single: bool = False,
    runs: Mapping[str, pd.DataFrame] | None = None,
    query_ids: Sequence[str] | None = None,
    qrels: pd.DataFrame | None = None,
    granularity: str | None = None,
) -> PreparedTask:
    """A task ready to score any number of runs on (parameters as in
    :func:`ragcov_data.eval.outcomes.outcomes_many`).

    ``runs`` (already read, :func:`ragcov_data.runs.load_run`) are only looked at for the document sample
    they record: runs made on a sample of the task's documents are scored on that sample's queries, so the
    runs to be scored together are given here (runs of two samples are refused). Pass the same runs to
    :func:`~ragcov_data.eval.outcomes.score.score_run`.

    ``query_ids`` scores only these task queries, in this order (each must be a query of the task, or of
    its sample); ``qrels`` are judgments to score against instead of the task's ``qrels`` split and
    ``granularity`` that of a cited-questions task's provisions (both for
    :func:`ragcov_data.eval.comparisons.cited.per_query_values`, which scores at a chosen granularity).
    """
    tie_policy = check_outcome_args(None, tie_policy)
    base = read_task(task, metric, tie_policy, cluster, by, strata, query_columns, qrels, granularity)
    return finish_task(task, base, dict(runs or {}), tie_policy=tie_policy, relevance_threshold=relevance_threshold,
                       cluster=cluster, by=by, strata=strata, exclude_self=exclude_self, fpc=fpc,
                       population_sizes=population_sizes, single=single, query_ids=query_ids)


def finish_task(task: Any, base: _TaskFrames, runs: Mapping[str, pd.DataFrame], *, tie_policy: str,
                relevance_threshold: float, cluster: str | None, by: str | None, strata: str | None,
                exclude_self: bool, fpc: bool, population_sizes: Any, single: bool,
                query_ids: Sequence[str] | None = None) -> PreparedTask:
    """The rest of :func:`prepare_task` once the frames are read (and, in ``outcomes_many``, every run checked):
    sample restriction, qrels checks, judged queries, clusters, population sizes, prepared qrels."""
    frames, notices = base.frames, []
    task_ids = frames["queries"]["_id"].astype(str).to_numpy(dtype=object)  # every query of the task, any sample
    sample, attrs = _sample_for_runs(task, runs, notices)
    census_queries = frames["queries"]  # before the sample restricts them: every document's queries (sizes)
    if sample is not None:
        frames, sample = restrict_frames(task, attrs, frames)  # a document-sampled task: its queries only
    if query_ids is not None:
        frames = {**frames, "queries": _chosen(frames["queries"], query_ids)}
    queries = _judged(frames, base.cited, notices)
    cluster_name = cluster or default_cluster(queries.columns)
    clusters = query_column(queries, cluster_name, "cluster")
    groups = query_column(queries, by, "by") if by else None
    strata_arr = query_column(queries, strata, "strata") if strata else None
    pop_notices: list[str] = []
    population_sizes = _population(task, sample, census_queries, cluster_name, strata, fpc, population_sizes,
                                   pop_notices)
    pop_info = eval_info(sample, population_sizes, population_sizes is not None)
    # the task's own unit, from every queries column it has (said wherever another unit is used)
    pop_info["task_cluster"] = default_cluster(census_queries.attrs.get("all_columns") or census_queries.columns)
    return PreparedTask(
        task=task, manifest=base.manifest, corpus=frames["corpus"], spec=base.spec, cited=base.cited,
        tie_policy=tie_policy, relevance_threshold=relevance_threshold, exclude_self=exclude_self, single=single,
        queries=queries, qrels=frames["qrels"], prepared_qrels=_lists.prepare_qrels(frames["qrels"]), cluster=cluster_name,
        by=by, strata=strata, clusters=clusters, groups=groups, strata_values=strata_arr,
        population_sizes=population_sizes, sample=sample, pop_info=pop_info, task_ids=task_ids,
        subset_note=known_subset_note(task, base.manifest), n_task=len(frames["queries"]), notices=notices,
        population_notices=pop_notices)


def _chosen(queries: pd.DataFrame, query_ids: Sequence[str]) -> pd.DataFrame:
    """The rows of ``query_ids`` (in that order); an id the (sampled) task lacks is an error naming it."""
    ids = [str(q) for q in query_ids]
    index = pd.Index(queries["_id"].astype(str))
    pos = index.get_indexer(ids) if index.is_unique else None
    if pos is None:
        raise RagcovError("the task's queries repeat an `_id`; query ids must be unique to choose queries by id.")
    if (pos < 0).any():
        miss = [q for q, p in zip(ids, pos) if p < 0]
        raise RagcovError(f"`query_ids` holds {len(miss)} id(s) that are not queries of the task (first: {miss[:3]}).")
    out = queries.iloc[pos].reset_index(drop=True)
    out.attrs = dict(queries.attrs)
    return out


def _judged(frames: Mapping[str, pd.DataFrame | None], cited: Any, notices: list[str]) -> pd.DataFrame:
    """The (sampled) queries with at least one judgment, checked qrels; on a cited-questions task those
    citing a provision at the task's granularity. No query left is an error."""
    queries, qrels = frames["queries"], frames["qrels"]
    check_task_qrels(qrels, frames["corpus"], queries, notices)
    # judged_queries reads only the query ids: their distinct values make its look-up cheap on big qrels
    queries = queries.loc[judged_queries(queries, qrels[["query-id"]].drop_duplicates(), notices)]
    queries = queries.reset_index(drop=True)
    if cited is not None:
        queries = cited.queries(queries, notices)
    if queries.empty:
        raise RagcovError("no query of the task has a judgment (qrels name none of its queries); check the task.")
    return queries


def _population(task: Any, sample: dict[str, Any] | None, census_queries: pd.DataFrame, cluster_name: str,
                strata: str | None, fpc: bool, population_sizes: Any, notices: list[str]) -> Any:
    """The population sizes the intervals correct for: those given, else the document sample's (with every
    population document's size when known), else None. A sample drawn with unequal probabilities and not
    stratified by its strata is refused (an unweighted mean would be biased)."""
    if sample is not None and fpc and population_sizes is None:
        population_sizes = population_for_eval(sample, cluster_name, strata, notices)
        if isinstance(population_sizes, float):  # one-stage: every population document's size, if known
            sizes = census_sizes(sample, None if sample_of(task) else census_queries)
            if sizes is not None:
                population_sizes = DocumentPopulation(population_sizes, sizes)
    elif sample is not None and not (strata is not None and strata == sample.get("strata")):
        problem = unequal_probabilities(sample)  # refused whatever the correction: an unweighted mean is biased
        if problem:
            raise RagcovError(problem)
    return population_sizes
