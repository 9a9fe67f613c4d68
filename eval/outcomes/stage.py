"""The outcome stage in one call: prepare the task, score each run, align the runs.

:func:`outcomes_many` (and :func:`outcomes`, for one run) chain :func:`~ragcov_data.eval.outcomes.prepare.prepare_task`'s
two steps, :func:`~ragcov_data.eval.outcomes.score.score_run` and :func:`~ragcov_data.eval.outcomes.align.align`,
with the run checks of every task; the steps live in their own modules so a caller can prepare a task once.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from ragcov_data.runs.passages import is_passage_run
from ragcov_data.ties import DEFAULT_TIE_POLICY
from ragcov_data.eval.outcomes.align import align
from ragcov_data.eval.outcomes.args import check_outcome_args
from ragcov_data.eval.outcomes.prepare import finish_task, read_task
from ragcov_data.eval.outcomes.run_checks import check_made_on, check_run_parameters
from ragcov_data.eval.outcomes.score import score_run
from ragcov_data.eval.outcomes.table import OutcomeSet, OutcomeTable, check_run, read_run, run_name


def outcomes_many(
    runs: Mapping[str, Any],
    task: Any,
    metric: Any = "hit@1",
    *,
    tie_policy: str = DEFAULT_TIE_POLICY,
    relevance_threshold: float = 1,
    on_missing: str = "error",
    on_mismatch: str | None = None,
    cluster: str | None = None,
    by: str | None = None,
    strata: str | None = None,
    exclude_self: bool = True,
    fpc: bool = True,
    population_sizes: Any = None,
    query_columns: Sequence[str] = (),
    single: bool = False,
) -> OutcomeSet:
    """Per-query outcomes of several runs on one task, over one set of queries.

    Parameters
    ----------
    runs : mapping name -> run
        Each anything :func:`ragcov_data.runs.load_run` reads (path, DataFrame, dict).
    task : DatasetDict, Task or dict of DataFrames
        ``queries`` and ``qrels`` (``corpus`` optional).
    metric : str or MetricSpec
        ``hit@k``, ``ndcg@k``, ``p@k``, ``r@k``, ``mrr@k``.
    tie_policy, relevance_threshold
        As in :func:`ragcov_data.eval.evaluate`.
    on_missing : {"error", "zero", "intersect"}
        Task queries a run lacks: an error naming each run and how many; scored 0 (counted per run and
        said); or (``intersect``) only the queries every run has (the dropped count said).
    on_mismatch : {"error", "intersect"}, optional
        ``compare``'s rule, checked before ``on_missing``: runs covering different query sets are an error,
        or only their shared queries are kept.
    cluster, by, strata : str, optional
        Queries columns: sampled unit (default :func:`default_cluster`), groups, strata.
    exclude_self : bool
        Drop rows retrieving the query's own chunk (self-retrieval).
    fpc : bool
        Apply a document sample's finite-population correction (see :mod:`ragcov_data.tasks.sampling`).
    population_sizes : float or mapping, optional
        Given population sizes (override the sample's).
    query_columns : sequence of str
        Further queries columns to keep in ``queries``.
    single : bool
        Messages worded for one run (``evaluate``).

    Returns
    -------
    OutcomeSet
    """
    tie_policy = check_outcome_args(on_missing, tie_policy, single=single)
    base = read_task(task, metric, tie_policy, cluster, by, strata, query_columns)
    loaded: dict[str, pd.DataFrame] = {}
    fingerprints: dict[str, Any] = {}
    for name, run in runs.items():  # every run read and checked before any is paired with the task's queries
        loaded[name] = read_run(run)
        if is_passage_run(loaded[name]):  # a pipeline's text: located in the task's documents when scored
            continue
        check_run(loaded[name], "run" if single else f"runs[{name!r}]")
        check_run_parameters(loaded[name], base.manifest, name)
    for name, df in loaded.items():
        if not is_passage_run(df):
            check_made_on({name: df}, task, base.manifest, base.frames["corpus"], fingerprints=fingerprints)
    prepared = finish_task(task, base, loaded, tie_policy=tie_policy, relevance_threshold=relevance_threshold,
                           cluster=cluster, by=by, strata=strata, exclude_self=exclude_self, fpc=fpc,
                           population_sizes=population_sizes, single=single)
    prepared.fingerprints.update(fingerprints)
    scored = {name: score_run(prepared, df, name, checked=True) for name, df in loaded.items()}
    return align(prepared, scored, on_missing=on_missing, on_mismatch=on_mismatch)


def outcomes(
    run: Any,
    task: Any,
    metric: Any = "hit@1",
    *,
    name: str | None = None,
    tie_policy: str = DEFAULT_TIE_POLICY,
    relevance_threshold: float = 1,
    on_missing: str = "error",
    cluster: str | None = None,
    by: str | None = None,
    strata: str | None = None,
    exclude_self: bool = True,
    fpc: bool = True,
    population_sizes: Any = None,
    query_columns: Sequence[str] = (),
) -> OutcomeTable:
    """Per-query outcomes of one run on one task (see the module docstring for every step).

    ``name`` (default: the run file's name, else ``"run"``) names the run in notices. Other parameters as
    in :func:`outcomes_many` (``on_missing``: ``"error"`` or ``"zero"``). ``info["order"]`` holds each
    query's chunk position (for the within-document autocorrelation; None without one).
    """
    if name is None:
        name = run_name(run)
    res = outcomes_many({name: run}, task, metric, tie_policy=tie_policy, relevance_threshold=relevance_threshold,
                        on_missing=on_missing, cluster=cluster, by=by, strata=strata, exclude_self=exclude_self,
                        fpc=fpc, population_sizes=population_sizes, query_columns=query_columns, single=True)
    table = res.tables[name]
    table.info["order"] = res.info["order"]
    return table
