"""Per-query IR metrics on graded qrels: hit@k, nDCG@k, P@k, R@k, MRR@k.

One metric per module; :data:`METRICS` maps each name to its function and :func:`parse_metric` reads
metric strings ``name@k`` in one place (as ranx does). :func:`per_query` is the entry point.

Conventions (stated once, used by every metric)
-----------------------------------------------
- **Relevance.** A judged document is relevant to a binary metric (hit, P, R, MRR) when its grade is
  ``>= relevance_threshold`` (default 1, as trec_eval's ``-l 1``). nDCG uses the graded score itself.
- **Unjudged documents.** ``unjudged="irrelevant"`` (default, as trec_eval): a retrieved document
  with no judgment for the query is non-relevant and keeps its position. ``unjudged="skip"``: such
  documents are removed before scoring and the list is condensed (judged-only evaluation,
  Sakai 2007). ``unjudged="relevant"``: such documents take the lowest positive grade (at least the
  relevance threshold) and keep their position, while the ideal ranking and the count of relevant
  documents stay those of the judgments; a value can then only rise from trec_eval's, so it is an
  upper bound on the score (capped at 1 per query, since nDCG and recall could pass the judged ideal).
- **Ordering and ties.** One tie policy for every metric (see :mod:`ragcov_data.eval.outcomes.metrics._lists`):
  ``trec_eval`` (default: score descending, then ``corpus-id`` descending, ranks ignored — the values
  trec_eval gives on the same run file), ``run`` (the run's ranks), ``pessimistic``, ``optimistic``,
  ``expected`` (exact mean over every order of tied documents, McSherry & Najork 2008).
- **Queries scored.** ``query_ids`` (default: every query in ``qrels``). A query with no run rows
  scores 0. A query with no relevant judged document scores 0 on every metric; how many there were is
  recorded in ``Series.attrs["n_no_relevant"]`` rather than raised, since with sampled or filtered
  queries this is data, not a mistake.

Examples
--------
>>> import pandas as pd
>>> from ragcov_data.eval.outcomes.metrics import per_query
>>> run = pd.DataFrame({"query-id": ["q1", "q1", "q2"], "corpus-id": ["a", "b", "c"],
...                     "rank": [1, 2, 1], "score": [2.0, 1.0, 0.5]})
>>> qrels = pd.DataFrame({"query-id": ["q1", "q2"], "corpus-id": ["b", "d"], "score": [2, 1]})
>>> per_query(run, qrels, "mrr@10").to_dict()
{'q1': 0.5, 'q2': 0.0}
"""
from __future__ import annotations

import difflib
import re
from typing import Any, Callable, Iterable, NamedTuple

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.outcomes.metrics._lists import UNJUDGED_POLICIES, RankedLists, prepare
from ragcov_data.eval.outcomes.metrics.hit import hit
from ragcov_data.eval.outcomes.metrics.mrr import mrr
from ragcov_data.eval.outcomes.metrics.ndcg import ndcg, ndcg_exp
from ragcov_data.eval.outcomes.metrics.precision import precision
from ragcov_data.eval.outcomes.metrics.recall import recall
from ragcov_data.ties import DEFAULT_TIE_POLICY, check_tie_policy

#: Metric name -> per-query function ``f(lists, k) -> Series``.
METRICS: dict[str, Callable[..., pd.Series]] = {
    "hit": hit,
    "ndcg": ndcg,
    "ndcg_exp": ndcg_exp,
    "p": precision,
    "r": recall,
    "mrr": mrr,
    # trec_eval's share of relevant chunks retrieved, named apart: on a cited-questions task `recall@k` is the
    # share of cited provisions (ragcov_data.eval.outcomes.budget); `chunk_recall@k` keeps trec_eval's there,
    # and `chunk_hit@k` the chunk-level hit (`hit@k` there: a cited provision overlapped)
    "chunk_recall": recall,
    "chunk_hit": hit,
}

#: Accepted spellings of metric names (lower-cased) -> canonical name.
ALIASES: dict[str, str] = {
    "success": "hit",
    "precision": "p",
    "recall": "r",
    "rr": "mrr",
    "recip_rank": "mrr",
    "ndcg_cut": "ndcg",
}

__all__ = ["METRICS", "MetricSpec", "parse_metric", "per_query", "RankedLists", "UNJUDGED_POLICIES"]

_PATTERN = re.compile(r"^\s*([A-Za-z_]+)\s*@\s*([+-]?\d+)\s*$")
_BUDGETED = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*?)\s*@\s*([+-]?\d+)\s*[wW]\s*$")


class MetricSpec(NamedTuple):
    """A parsed metric string: canonical ``name`` and cutoff ``k``; ``str()`` gives ``name@k``."""

    name: str
    k: int

    def __str__(self) -> str:
        return f"{self.name}@{self.k}"


def parse_metric(metric: str | MetricSpec) -> MetricSpec:
    """Parse ``"name@k"`` (e.g. ``"ndcg@10"``, ``"P@10"``) into a :class:`MetricSpec`.

    Raises
    ------
    RagcovError
        For an unknown name (listing the valid ones), a missing cutoff, or ``k < 1``.
    """
    if isinstance(metric, MetricSpec):
        return metric
    valid = ", ".join(f"{n}@k" for n in METRICS)
    if not isinstance(metric, str):
        raise RagcovError(f"`metric` must be a string like 'ndcg@10'; got {type(metric).__name__}.")
    m = _PATTERN.match(metric)
    if m is None and _BUDGETED.match(metric):
        raise _budgeted_here(metric, valid)
    if m is None:
        raise RagcovError(
            f"`metric` must look like 'name@k' (e.g. 'ndcg@10', 'hit@1'); got {metric!r}. Valid names: {valid}."
        )
    name, k = m.group(1).lower(), int(m.group(2))
    name = ALIASES.get(name, name)
    if name not in METRICS:
        close = difflib.get_close_matches(name, list(METRICS) + list(ALIASES), n=1)
        hint = f" Did you mean {ALIASES.get(close[0], close[0])!r}?" if close else ""
        raise RagcovError(f"unknown metric {m.group(1)!r} in `metric`={metric!r}; valid: {valid}.{hint}")
    if k < 1:
        raise RagcovError(f"the cutoff k in `metric`={metric!r} must be an integer >= 1; got {k}.")
    return MetricSpec(name, k)


#: The budgeted measures (``name@Bw``) a cited-questions task scores, and their aliases: defined here, where every
#: metric name is parsed, and read by :mod:`ragcov_data.eval.outcomes.budget`.
CITED_BUDGET_NAMES = ("recall", "hit", "span_recall", "precision", "iou", "covered_any", "covered_50", "covered_90",
                      "covered_whole")
CITED_ALIASES = {"r": "recall", "p": "precision", "success": "hit"}


def cited_budget_name(given: str) -> str | None:
    """The budgeted measure a name most likely means: itself or its alias, the valid name it ends with
    (``span_iou`` -> ``iou``), or a close spelling; None when none is close."""
    given = CITED_ALIASES.get(given.lower(), given.lower())
    if given in CITED_BUDGET_NAMES:
        return given
    ends = [n for n in CITED_BUDGET_NAMES if given.endswith("_" + n)]
    close = ends or difflib.get_close_matches(given, list(CITED_BUDGET_NAMES) + list(CITED_ALIASES), n=1)
    return CITED_ALIASES.get(close[0], close[0]) if close else None


def _budgeted_here(metric: str, valid: str) -> RagcovError:
    """A budgeted ``name@Bw`` asked of a task scored by ranked documents: it is a cited-questions measure, named
    as a cited-questions task accepts it (``span_iou@1000w`` there is ``iou@1000w``), beside this task's own."""
    m = _BUDGETED.match(metric)
    name = cited_budget_name(m.group(1)) if m else None
    there = f"{name}@{int(m.group(2)) if int(m.group(2)) >= 1 else 1000}w" if m and name else None
    if there is None:
        names = ", ".join(n + "@Bw" for n in CITED_BUDGET_NAMES)
        said = (f"a budgeted form (B words of context), which only a cited-questions task (irpf, cited_questions) "
                f"scores, and there as {names} (not {m.group(1) if m else metric!r})")
    else:
        said = ("a budgeted measure (B words of context) of a cited-questions task (irpf, cited_questions), scored "
                "by the cited provisions' character spans" + (f"; there it is named {there!r}" if there !=
                                                                   metric.strip() else ""))
    return RagcovError(f"`metric`={metric!r} is {said} (`ragcov eval RUN --dataset irpf --metric "
                       f"{there or 'recall@1000w'}`, `ragcov chunking --dataset irpf`). This task's measures are "
                       f"{valid} (e.g. 'ndcg@10').")


def per_query(
    run: pd.DataFrame,
    qrels: Any,
    metric: str | MetricSpec,
    *,
    relevance_threshold: float = 1,
    tie_policy: str = DEFAULT_TIE_POLICY,
    query_ids: Iterable[Any] | None = None,
    unjudged: str = "irrelevant",
    unjudged_grade: float | None = None,
) -> pd.Series:
    """Score every query of a run on one metric.

    Parameters
    ----------
    run : DataFrame
        ``query-id, corpus-id`` and ``rank`` and/or ``score`` (a run from ``Retriever.search``).
    qrels : DataFrame, datasets.Dataset, or a task (``DatasetDict`` / dict with a ``qrels`` split)
        ``query-id, corpus-id, score`` with graded scores (0 = judged non-relevant).
    metric : str
        ``name@k``: ``hit``, ``ndcg`` (linear gain), ``ndcg_exp`` (exponential gain), ``p``, ``r``, ``mrr``.
    relevance_threshold : float, default: 1
        Minimum grade counted as relevant by binary metrics.
    tie_policy : {'trec_eval', 'run', 'pessimistic', 'optimistic', 'expected'}, default: 'trec_eval'
        Order of documents with equal scores, for every metric (``'first'`` is accepted as ``'run'``).
    query_ids : iterable, optional
        Queries to score (the task's queries). Default: every query id in ``qrels``. Queries without
        run rows score 0; run rows of other queries are ignored (counted in ``attrs``).
    unjudged : {'irrelevant', 'skip', 'relevant'}, default: 'irrelevant'
        Treat unjudged retrieved documents as non-relevant (trec_eval), drop them and condense
        the ranking (judged-only evaluation), or read them as relevant at ``unjudged_grade`` (an upper
        bound on what completing the judgments could give; values capped at 1, see the module docstring).
    unjudged_grade : float, optional
        Grade of an unjudged document under ``unjudged='relevant'`` (default: the lowest positive grade
        of the qrels, at least ``relevance_threshold``).

    Returns
    -------
    Series
        Index ``query-id`` (str) in ``query_ids`` order, float values in [0, 1], ``name`` the
        canonical metric string. ``attrs`` records ``metric``, ``k``, ``relevance_threshold``,
        ``tie_policy``, ``unjudged``, ``n_queries``, ``n_no_run`` (queries without run rows),
        ``n_no_relevant`` / ``no_relevant`` (queries without a relevant judged document, all scored 0)
        and ``n_run_only`` (run queries outside ``query_ids``).

    Raises
    ------
    RagcovError
        Unknown metric, bad ``k``, unknown ``tie_policy``/``unjudged``, missing columns, duplicate
        rows, non-numeric grades.
    """
    spec = parse_metric(metric)
    tie_policy = check_tie_policy(tie_policy)
    lists = prepare(
        run, qrels, relevance_threshold=relevance_threshold, query_ids=query_ids,
        unjudged=unjudged, tie_policy=tie_policy, unjudged_grade=unjudged_grade,
    )
    values = METRICS[spec.name](lists, spec.k)
    if unjudged == "relevant":  # DCG and recall can pass the judged ideal; 1 is the most completing could give
        values = values.clip(upper=1.0)
    arr = np.zeros(len(lists.query_ids))
    arr[values.index.to_numpy(dtype=np.int64)] = values.to_numpy(dtype=float)
    out = pd.Series(arr, index=pd.Index(lists.query_ids, dtype=object, name="query-id"), name=str(spec))
    out.attrs.update(_score_attrs(lists, run, spec, tie_policy, unjudged))
    return out


def _score_attrs(lists: Any, run: pd.DataFrame, spec: MetricSpec, tie_policy: str, unjudged: str) -> dict[str, Any]:
    """What :func:`per_query` records beside the values: the settings, and the counts of queries without
    run rows, without a relevant judged document, and of run queries outside the scored ones."""
    n_rel = lists.n_relevant()
    no_rel = list(lists.query_ids[n_rel == 0])
    has_run = np.zeros(len(lists.query_ids), dtype=bool)
    has_run[lists.ranked["qidx"].to_numpy()] = True
    run_q = pd.unique(np.asarray(run["query-id"]).astype(str))
    return dict(
        metric=str(spec),
        k=spec.k,
        relevance_threshold=lists.threshold,
        tie_policy=tie_policy,
        unjudged=unjudged,
        gain="exponential" if spec.name == "ndcg_exp" else ("linear" if spec.name == "ndcg" else None),
        n_queries=len(lists.query_ids),
        n_no_run=int((~has_run).sum()),
        n_no_relevant=len(no_rel),
        no_relevant=no_rel,
        n_run_only=int((lists.query_ids.get_indexer(run_q) < 0).sum()),
    )
