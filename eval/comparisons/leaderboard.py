"""``leaderboard``: many retrievers on one shared benchmark, with the family-wise error held.

Design (every choice below is the documented default; the machinery is :mod:`._family`)
--------------------------------------------------------------------------------------
- **Values.** Every run is scored per query by :func:`ragcov_data.eval.outcomes.metrics.per_query` with one tie
  policy for all (default ``trec_eval``). The unit of inference is the task's default cluster
  (``source_key``, else ``doc_id``, else the query) unless ``cluster=`` names another queries column.
  With ``by=`` everything is done per group and overall (group ``"__all__"``); each group is its own
  family (its pairs are adjusted together).
- **Per system.** Estimate = mean over queries (``"micro"``, trec_eval's number) or the mean of cluster
  means (``"macro"``); where every cluster holds one query both are the mean (``"mean"``). The default,
  ``estimator="auto"`` (as ``ragcov leaderboard`` and the main job), headlines micro where its intervals are
  verified for every system, else macro (:mod:`.headline`).
  The interval is ``evaluate``'s row of the family's method, with its check and mark: CR2 with
  Satterthwaite df for micro, t on K - 1 df for macro and mean; on a document-sampled task the micro
  ``known_sizes`` interval (every population document's size in the variance; without recorded sizes the
  bootstrap-t, on resampling counts from the same seed as ``evaluate``'s) and the macro t with the
  finite-population correction.
- **Per pair** (all S (S - 1) / 2, ``a`` ranked above ``b``): ``diff`` = mean of per-query differences;
  ``low, high`` = simultaneous interval at ``level``: max-|t| from one cluster bootstrap whose resampling
  counts (K x B) are shared by every system and pair, never narrower than Bonferroni's on the same CR2/t
  tests (see :mod:`._family`); ``p_adj_maxt`` = the adjusted p-value coherent with the intervals;
  ``p`` = the p-value of the test behind the verdict (the hull's: the larger of the CR2/t test's and the
  resampling family's, below; a pair's test rejects only where both do; equal to ``p_family``);
  ``p_adj`` = that hull's adjusted p-value, the smallest family-wise level at which the pair's printed
  simultaneous interval excludes 0, so ``p_adj < 1 - level`` exactly when ``significant``;
  null (left out) on the rare pair whose wild test inverted on a grid excludes 0 by a hair while its
  p-value at 0 does not reject, or the reverse (:func:`._family._on_verdict_side`);
  ``significant_holm`` (name kept for the JSON contract) = ``significant``, the same decision;
  ``p_cr2`` = the CR2 (micro) / t (macro, mean) test of ``compare`` alone, not a verdict's test;
  ``low, high`` = simultaneous interval at ``level``:
  max-|t| from one cluster bootstrap whose resampling counts (K x B) are shared by every system and pair,
  never narrower than Bonferroni's on the same CR2/t tests; for micro (:data:`PAIR_TEST`) widened to the
  hull with the wild cluster restricted bootstrap interval at Bonferroni's level, whose test keeps its
  size when one document dominates (see :mod:`._family`); for macro and for one-query clusters (families of
  two or more pairs) the guarded Hall cluster-bootstrap family instead (:mod:`._hall`: Hall's
  skewness-corrected t, the studentized t where a difference sits in fewer than 30 documents), which covers
  where t intervals read at Bonferroni's level are too short for skewed per-document differences and holds
  its level without the hull's conservatism; ``p_family`` = the p-value of the verdict's test (micro: the
  larger of the hull's two; macro: the pair's own bootstrap p-value); ``p_adj_maxt`` = the single-step
  max-|t| adjusted p-value; per-query wins/losses/ties.
- **One procedure.** ``significant`` (a pair is separable) is exactly "its printed simultaneous interval
  excludes 0"; rank intervals, tiers, colours and ``best_set`` use those decisions and nothing else, so
  no verdict contradicts the interval beside it. Every p-value and significance column comes from that
  same test (earlier versions printed a CR2/t Holm column beside it, which rejected 7.3% of two-system null
  families at 5%: a column from another test than the verdict's).
- **Ranks.** ``rank`` by estimate (ties share the best rank). The rank interval is the coherent one:
  ``rank_low = 1 + #systems separably above``, ``rank_high = S - #systems separably below``; ``tier``
  is the compact letter display of the same decisions (systems sharing a letter are not separable), so
  ranks and tiers never contradict. ``best_set`` (in each group's info) = the systems that could be best:
  none is separably above them (``rank_low = 1``).
- **judged@k** (k = the metric's cutoff unless ``judged_k``): the share of each system's top-k
  documents that carry any judgment for the query, as ``ir_measures``' ``Judged@k``: judged documents
  among the first ``min(k, n_q)`` divided by ``min(k, n_q)``, ``n_q`` the documents the run retrieved
  for the query (a query without any scores 0), under the same tie policy, averaged over queries. Below
  :data:`JUDGED_THRESHOLD` (0.9) the row is flagged. For P@k the gap between reading unjudged documents
  as non-relevant and as relevant is, per query, ``min(k, n_q) / k * (1 - judged@k)``: exactly
  ``1 - judged@k`` when every query retrieves at least k documents, so a flagged system's score may owe
  ten points or more to the pool. Beside nDCG the condensed-list nDCG (unjudged documents removed, Sakai
  2007) shows how much. On a self-retrieval task (queries carry ``chunk_id``) judgments are complete
  by construction (every same-document chunk is relevant, every other chunk is non-relevant and simply
  not listed): judged@k would just be the share of relevant documents, so it is omitted (``None``)
  with a note.
- **Missing queries.** ``on_missing="error"`` names every run lacking task queries and how many;
  ``"zero"`` scores them 0 (counted per system and per group, and said: "run X lacked N of M queries
  (scored 0); by group: ..."); a run lacking more than half of a group's queries is shown there but not
  tiered (tier ``"–"``, ``tiered`` False: it enters no other system's rank interval, tier or could-be-best
  set, and none of its pairs is called robust to the pool); ``"intersect"`` keeps the queries every run
  covers (dropped count in the result).
- **Pooled judgments.** Beside the estimate (``unjudged_as_nonrelevant``, trec_eval's number) every system
  carries ``condensed`` and ``unjudged_as_relevant`` (also kept as ``bound_high``): three readings of the
  unjudged documents, none a bound on the others (:mod:`.pool`); ``tier_flip`` marks a system whose order
  against another reverses under some reading, and ``pooled_like`` a run with judged@k >= 0.99, judged like
  a pooled engine.
- **Inputs.** Every run goes through the outcome stage (:mod:`.outcomes`), as in ``evaluate``: a document
  sample restricts the queries and its finite-population correction enters the per-system intervals (the
  same interval ``evaluate`` prints; the pair tests stay uncorrected, which is conservative, and say so);
  a run whose candidates share one score in most queries is named in a notice.

References: Sakai, T. (2007). Alternatives to bpref. SIGIR '07, 71-78 (condensed lists).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Mapping

import numpy as np
import pandas as pd

from ragcov_data._atomic import atomic_write
from ragcov_data.errors import RagcovError
from ragcov_data.eval.comparisons.leaderboard_latex import latex
from ragcov_data.eval.comparisons.leaderboard_render import _UNITS, html, markdown, sentence, text
from ragcov_data.eval.comparisons.verify_family import check_leaderboard
from ragcov_data.eval.estimates.interval import _population
from ragcov_data.eval.estimates.verify import is_sampled
from ragcov_data.eval.outcomes.budget import cited_metric_of
from ragcov_data.eval.outcomes.metrics import parse_metric, per_query
from ragcov_data.eval.outcomes.passages import ranked_documents
from ragcov_data.eval.outcomes.metrics._lists import prepare_qrels
from ragcov_data.runs.passages import is_passage_run
from ragcov_data.ties import DEFAULT_TIE_POLICY

from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval.estimates._kernels import ESTIMATORS
from ragcov_data.eval.comparisons import pool
from ragcov_data.eval.comparisons.headline import choose_headline
from ragcov_data.eval.comparisons._family import LEADERBOARD_PAIR_TEST, cluster_sums, family, letters, rank_bounds
from ragcov_data.eval.comparisons._nullfamily import null_family_rates
from ragcov_data.eval.estimates.evaluator import ALL_GROUP
from ragcov_data.eval.outcomes.args import ON_MISSING, check_outcome_args  # noqa: F401 (ON_MISSING: importable here)
from ragcov_data.eval.outcomes.stage import outcomes_many
from ragcov_data.eval.outcomes.table import OutcomeSet, load_task_frames
from ragcov_data.eval.estimates.results import _JsonMixin, recommended_order

__all__ = ["leaderboard", "LeaderboardResult", "null_family_rates", "JUDGED_THRESHOLD", "SYSTEM_COLUMNS",
           "PAIR_COLUMNS"]

#: Pair test of the micro family (:func:`._family.family`): the wild-cluster hull holds its size where
#: one document holds a large share of the queries (CR2 alone rejects 7.5-9% of ANEEL null pairs at 5%).
PAIR_TEST = LEADERBOARD_PAIR_TEST
#: judged@k below this is flagged (see the module docstring).
JUDGED_THRESHOLD = 0.9
#: Names of the family-wise methods, recorded in ``family``.
FAMILY = {"p": ("the test of the simultaneous interval: micro, the hull (larger of the CR2 and wild cluster p-values); "
               "macro, the pair's own guarded Hall cluster-bootstrap p-value"),
          "p_adj": "hull_adjusted: the smallest family-wise level at which the simultaneous interval excludes 0",
          "p_cr2": "cr2 t (Satterthwaite df) for micro; t (K-1 df) for macro and mean (not the verdict's test)",
          "interval": "max_t_cluster_bootstrap_bonferroni_bounded",
          "p_adj_maxt": "max_t_single_step_bonferroni_bounded",
          "rank_interval": "interval_separation", "tier": "compact_letter_display_interval",
          "decision": "simultaneous_interval_excludes_0", "micro_interval": "hull_with_wild_cluster_restricted",
          "macro_interval": "guarded_hall_max_t",
          "best_set": "not_separably_below_any"}
#: Columns of ``systems`` (the JSON records carry the same fields).
SYSTEM_COLUMNS = ["name", "group", "estimate", "low", "high", "rank", "rank_low", "rank_high", "tier", "judged",
                  "judged_flag", "condensed", "se", "df", "estimator", "method", "n_queries", "n_clusters",
                  "n_missing", "bound_high",
                  "verified_coverage", "verified_mc_se", "verified",
                  "verified_status",  # each interval's check (eval/verify_family.py)
                  # the pool's readings under their own names (bound_high = unjudged_as_relevant, kept), a run
                  # judged like a pooled engine, a tier whose order flips under the pool, a run left untiered
                  "unjudged_as_nonrelevant", "unjudged_as_relevant", "pooled_like", "tier_flip", "tiered",
                  # why the check cannot vouch (an unverifiable row), and the mark every output prints (eval/marks.py)
                  "verified_reason", "mark"]
#: Columns of ``pairs``.
PAIR_COLUMNS = ["a", "b", "group", "diff", "low", "high", "p", "p_adj", "p_adj_maxt", "se", "df", "significant",
                "wins", "losses", "ties", "robust", "significant_holm", "p_family", "p_cr2",
                "verified_coverage", "verified_mc_se", "verified",
                "verified_status",  # the family's check (eval/verify_family.py)
                "tiered"]  # False where a run of the pair lacks most of the group's queries (not tiered there)
#: judged@k at or above this names a run "judged like a pooled engine" (its lists were, in effect, the pool).
POOLED_LIKE = 0.99
#: With ``on_missing="zero"``, a run lacking more than this share of a group's queries is shown, not tiered.
UNTIERED_MISSING = 0.5
_SELF_RETRIEVAL_NOTE = ("judged@k not applicable: on a self-retrieval task every chunk of the query's document "
                        "is relevant and every other chunk is non-relevant by construction (judgments are complete), "
                        "so a pool bias cannot arise.")


# ------------------------------------------------------------------------------------------ inputs
def _check_args(runs: Any, metric: Any, estimator: str, on_missing: str, level: float, n_resamples: Any,
                judged_k: Any, tie_policy: Any = DEFAULT_TIE_POLICY) -> str:
    """Every argument of :func:`leaderboard` that needs no task; returns the tie policy's canonical name."""
    if not isinstance(runs, Mapping):
        raise RagcovError("`runs` must map names to runs, e.g. {'bm25': 'bm25.trec', 'tfidf': df}; "
                          f"got {type(runs).__name__}.")
    if len(runs) < 2:
        raise RagcovError(f"a leaderboard needs at least 2 runs; got {len(runs)}.")
    bad = [n for n in runs if not isinstance(n, str) or not n.strip()]
    if bad:
        raise RagcovError(f"run names must be non-empty strings; got {bad!r}.")
    if estimator not in (*ESTIMATORS, "auto"):
        raise RagcovError(f"`estimator` must be one of {(*ESTIMATORS, 'auto')}; got {estimator!r}.")
    tie_policy = check_outcome_args(on_missing, tie_policy)
    _kernels.check_level(level)
    _kernels.check_resamples(n_resamples, level, ("cluster_bootstrap",))
    if judged_k is not None and (not isinstance(judged_k, (int, np.integer)) or judged_k < 1):
        raise RagcovError(f"`judged_k` must be a positive integer; got {judged_k!r}.")
    return tie_policy


def _judged_qrels(qrels: pd.DataFrame) -> pd.DataFrame:
    """Every judged (query, document) as grade 1: P@k on it counts the judged documents in the top k."""
    out = qrels[["query-id", "corpus-id"]].copy()
    out["score"] = 1
    return out


def judged_at_k(run: pd.DataFrame, judged_qrels: Any, k: int, *, tie_policy: str = DEFAULT_TIE_POLICY,
                query_ids: Any = None) -> np.ndarray:
    """Per-query ``Judged@k`` as ``ir_measures`` defines it: judged documents among the top ``k`` divided by
    the number of documents retrieved up to ``k`` (``min(k, retrieved)``), not by ``k``; 0 for a query
    without run rows.

    ``judged_qrels`` is :func:`_judged_qrels` (every judgment as grade 1), prepared or not; the top ``k``
    follows ``tie_policy`` (ir_measures breaks ties by document id ascending, trec_eval and ragcov by
    document id descending: the two agree whenever no tie straddles rank ``k``).
    """
    p = per_query(run, judged_qrels, f"p@{k}", tie_policy=tie_policy, query_ids=query_ids)
    n_ret = run["query-id"].astype(str).value_counts().reindex(p.index.astype(str), fill_value=0).to_numpy()
    denom = np.minimum(n_ret, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, p.to_numpy(dtype=float) * k / np.maximum(denom, 1), 0.0)


def default_metric(queries: pd.DataFrame) -> str:
    """The task's own metric: hit@1 for self-retrieval (queries carry ``chunk_id``: one relevant document
    per query), else nDCG@10 (graded or pooled judgments, as trec_eval and BEIR report them)."""
    return "hit@1" if "chunk_id" in queries.columns else "ndcg@10"


# ------------------------------------------------------------------------------------------ main
def leaderboard(
    runs: Mapping[str, Any],
    task: Any,
    *,
    metric: str | None = None,
    cluster: str | None = None,
    by: str | None = None,
    level: float = 0.95,
    n_resamples: int = 5000,
    seed: int | None = 0,
    on_missing: str = "error",
    estimator: str = "auto",
    tie_policy: str = DEFAULT_TIE_POLICY,
    relevance_threshold: int = 1,
    judged_k: int | None = None,
    exclude_self: bool = True,
) -> "LeaderboardResult":
    """Rank many runs on one task: per-system intervals, family-wise pair tests, ranks, tiers, judged@k.

    Parameters
    ----------
    runs : mapping name -> run
        Each anything :func:`ragcov_data.runs.load_run` reads: a path (TREC, CSV/TSV, parquet, JSON), a DataFrame
        (``query-id, corpus-id`` and ``score`` and/or ``rank``) or a ``{qid: {docid: score}}`` dict.
    task : DatasetDict or dict of DataFrames
        ``queries``, ``qrels`` (``corpus`` optional), as for :func:`ragcov_data.eval.evaluate`.
    metric : str, optional
        ``hit@k``, ``ndcg@k``, ``p@k``, ``r@k``, ``mrr@k``. Default: the task's own, :func:`default_metric`
        (recorded in ``info["metric_default"]``); passage runs on a cited-questions task: :data:`PASSAGE_DEFAULT`,
        the share of the cited text within 1,000 words.
    cluster, by : str, optional
        Queries column of the sampled unit (default :func:`default_cluster`); column of groups (each group
        ranked as its own family, plus ``"__all__"``).
    level, n_resamples, seed
        Level of every interval (a pair is significant when its simultaneous interval excludes 0); B of the
        shared cluster bootstrap (simultaneous intervals, max-|t| p-values); its seed.
    on_missing : {"error", "zero", "intersect"}
    estimator : {"auto", "micro", "macro"}, default: "auto"
        The headline estimator, as ``ragcov leaderboard`` and the main job choose it. ``auto``: micro (the
        mean over queries, trec_eval's number) where its intervals are verified for every system, else macro
        where more of its intervals are, with micro (trec_eval's numbers) and why it is not verified in
        ``info["micro_line"]`` (:mod:`.headline`); ``info["headline"]`` says which and why.
    tie_policy, relevance_threshold
        One tie policy for every run (:mod:`ragcov_data.ties`); minimum grade counted relevant.
    judged_k : int, optional
        Cutoff of judged@k (default: the metric's k).
    exclude_self : bool
        Drop rows retrieving the query's own chunk (self-retrieval; a no-op elsewhere).

    Returns
    -------
    LeaderboardResult
        ``systems`` (:data:`SYSTEM_COLUMNS`), ``pairs`` (:data:`PAIR_COLUMNS`), ``to_json``, ``to_markdown``,
        ``to_html``.
    """
    tie_policy = _check_args(runs, metric, estimator, on_missing, level, n_resamples, judged_k, tie_policy)
    metric_default = metric is None
    if metric_default:  # the task's own metric: hit@1 for self-retrieval, nDCG@10 for graded/pooled qrels
        metric = default_metric(load_task_frames(task)["queries"])
        if _cited_passages(task, runs):  # pipelines' text on cited questions: the share of the cited text
            metric = PASSAGE_DEFAULT
    cited, spec = _leaderboard_metric(task, metric)
    # the outcome stage: task frames read once, qrels prepared once, the sample and its correction,
    # missing queries and tie notices for every run
    oc = outcomes_many(runs, task, metric if cited is not None else spec, tie_policy=tie_policy,
                       relevance_threshold=relevance_threshold, on_missing=on_missing, cluster=cluster, by=by,
                       exclude_self=exclude_self)
    n_notices = len(oc.notices)

    def ranked(est: str) -> "LeaderboardResult":
        del oc.notices[n_notices:]  # each estimator's board says its own notices once
        res = _ranked(oc, spec, cited is not None, judged_k, estimator=est, level=level,
                      n_resamples=int(n_resamples), seed=seed, on_missing=on_missing, tie_policy=tie_policy,
                      relevance_threshold=relevance_threshold, metric_default=metric_default)
        res.info["notices"] = list(res.info["notices"])
        return res

    if estimator != "auto":
        return ranked(estimator)
    return choose_headline(ranked, oc.clusters, _UNITS.get(oc.cluster, str(oc.cluster)))


#: The default metric of passage runs on a cited-questions task: the share of the cited provisions' text within the
#: first 1,000 words each pipeline returns (chunk nDCG grades ragcov's chunks, which a passage run has none of).
PASSAGE_DEFAULT = "span_recall@1000w"


def _cited_passages(task: Any, runs: Mapping[str, Any]) -> bool:
    """Whether ``task`` has cited provisions and a run of ``runs`` is a passage run (a pipeline's returned text)."""
    try:
        cited = task["citations"] is not None
    except (KeyError, TypeError, IndexError):
        cited = False
    return cited and any(is_passage_run(r) for r in runs.values())


def _leaderboard_metric(task: Any, metric: Any) -> tuple[Any, Any]:
    """``(cited, spec)``: on a cited-questions task recall@k / name@Bw are the cited provisions' measures
    (:mod:`ragcov_data.eval.outcomes.budget`; ``cited`` is then the spec), else ``cited`` is None."""
    try:
        cited = cited_metric_of(metric, task["citations"] is not None)
    except (KeyError, TypeError, IndexError):
        cited = None
    return cited, (cited if cited is not None else parse_metric(metric))


def _judged_matrices(oc: OutcomeSet, spec: Any, cited: bool, jk: int, tie_policy: str, relevance_threshold: int,
                     notices: list[str]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(J, C)``: judged@k per run and query (None where every chunk is judged: cited provisions,
    self-retrieval, each said in a notice) and the condensed-list nDCG (unjudged skipped; None otherwise)."""
    qids, loaded = oc.query_ids, [ranked_documents(t.run) for t in oc.tables.values()]
    self_retrieval = "chunk_id" in oc.queries.columns
    if cited:  # relevance is overlap with a cited provision's span: every chunk is judged by it
        J = None
        notices.append(f"judged@k not applicable: {spec} reads the cited provisions' character spans, which decide "
                       "every chunk's relevance (no pool).")
    elif self_retrieval:
        J = None
        notices.append(_SELF_RETRIEVAL_NOTE)
    else:
        jq = prepare_qrels(_judged_qrels(oc.qrels))
        J = np.array([judged_at_k(r, jq, jk, tie_policy=tie_policy, query_ids=qids) for r in loaded])
    C = None
    if spec.name in ("ndcg", "ndcg_exp") and not self_retrieval:
        C = np.array([per_query(r, oc.prepared_qrels, spec, unjudged="skip", relevance_threshold=relevance_threshold,
                                tie_policy=tie_policy, query_ids=qids).to_numpy(dtype=float) for r in loaded])
    return J, C


def _families(oc: OutcomeSet, J: np.ndarray | None, C: np.ndarray | None, *, estimator: str, level: float,
              n_resamples: int, seed: int | None, on_missing: str) -> tuple[list, pd.DataFrame, pd.DataFrame, dict]:
    """One family per group (the overall first): ``(parts, systems, pairs, group_info)``."""
    V, clusters, groups, names = oc.matrix(), oc.clusters, oc.groups, oc.names
    miss = {name: t.missing for name, t in oc.tables.items()}
    parts = [(ALL_GROUP, np.ones(V.shape[1], dtype=bool))]
    if groups is not None:
        parts += [(str(g), groups == g) for g in pd.unique(groups)]
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(len(parts))]
    sys_rows, pair_rows, group_info = [], [], {}
    for (label, mask), rng in zip(parts, rngs):
        group_missing = oc.n_missing if label == ALL_GROUP else {k: int(m[mask].sum()) for k, m in miss.items()}
        srows, prows, info = _one_group(label, V[:, mask], clusters[mask], names, estimator, level, n_resamples,
                                        rng, None if J is None else J[:, mask], None if C is None else C[:, mask],
                                        group_missing, oc.population_sizes, seed, zero_filled=on_missing == "zero")
        sys_rows += srows
        pair_rows += prows
        group_info[label] = info
    return parts, pd.DataFrame(sys_rows, columns=SYSTEM_COLUMNS), pd.DataFrame(pair_rows, columns=PAIR_COLUMNS), \
        group_info


def _ranked(oc: OutcomeSet, spec: Any, cited: bool, judged_k: int | None, *, estimator: str, level: float,
            n_resamples: int, seed: int | None, on_missing: str, tie_policy: str, relevance_threshold: int,
            metric_default: bool) -> "LeaderboardResult":
    """The leaderboard of an outcome set: judged@k, the families, the pool's readings, every interval's check."""
    notices = oc.notices
    if oc.population_sizes is not None:
        notices.append("per-system intervals are `ragcov eval`'s for a document-sampled task (micro: known_sizes, "
                       "or the bootstrap-t where the sample lacks the documents' sizes; macro: t with the "
                       "finite-population correction); the pair tests and simultaneous intervals apply no correction "
                       "(conservative: wider).")
    jk = int(judged_k or spec.k)
    J, C = _judged_matrices(oc, spec, cited, jk, tie_policy, relevance_threshold, notices)
    parts, systems, pairs, group_info = _families(oc, J, C, estimator=estimator, level=level,
                                                  n_resamples=n_resamples, seed=seed, on_missing=on_missing)
    V, names, loaded = oc.matrix(), oc.names, [ranked_documents(t.run) for t in oc.tables.values()]
    # the pool's three readings of unjudged documents (none on self-retrieval: judgments are complete)
    readings = None if J is None else pool.pool_readings(loaded, oc.prepared_qrels, spec, V,
                                                         relevance_threshold=relevance_threshold,
                                                         tie_policy=tie_policy, query_ids=oc.query_ids)
    systems, pairs, pool_info = pool.apply_pool(systems, pairs, readings, names, parts, oc.clusters,
                                                estimator=estimator, level=level,
                                                alpha_star={k: v["alpha_star"] for k, v in group_info.items()})
    # -- every interval's check at this design: per system (as evaluate), per family (eval/verify_family.py) --
    systems, pairs = check_leaderboard(systems, pairs, group_info, V, oc.clusters, names, parts, estimator=estimator,
                                       level=level, population_sizes=oc.population_sizes, notices=notices,
                                       unit=_UNITS.get(oc.cluster, str(oc.cluster)))
    return LeaderboardResult(
        systems=systems, pairs=pairs, metric=str(spec), level=level, cluster=oc.cluster,
        n_clusters=group_info[ALL_GROUP]["n_clusters"], n_queries=int(V.shape[1]), family=dict(FAMILY),
        estimator=estimator, tie_policy=tie_policy, relevance_threshold=relevance_threshold, by=oc.by,
        judged_k=None if J is None else jk, judged_threshold=JUDGED_THRESHOLD, groups=group_info,
        info={"n_resamples": n_resamples, "seed": seed, "on_missing": on_missing,
              "n_dropped": oc.n_dropped if on_missing == "intersect" else 0, "n_missing": oc.n_missing,
              "self_retrieval": "chunk_id" in oc.queries.columns, "notices": notices, "metric_default": metric_default,
              **oc.result_info(),
              "pool": {"line": pool.pool_line(oc.qrels), "readings": pool.READINGS, "groups": pool_info,
                       "reading_names": pool.READING_NAMES, "not_bounds": pool.NOT_BOUNDS,
                       "pooled_like": pool.pooled_like_line(systems[systems["group"] == ALL_GROUP], jk, POOLED_LIKE)}
              if readings else None},
    )


def _one_group(label, V, clusters, names, estimator, level, B, rng, J, C, n_missing, population_sizes=None,
               seed=0, zero_filled=False):
    """Rows of ``systems`` and ``pairs`` of one group (one family). With ``zero_filled`` (missing queries
    scored 0), a run lacking more than :data:`UNTIERED_MISSING` of the group's queries is shown but not
    tiered: its tier is ``"–"``, it enters no other system's rank interval, tier or could-be-best set."""
    codes, uniq = pd.factorize(pd.Series(clusters), sort=False)
    K = len(uniq)
    f = family(V, codes, K, estimator=estimator, level=level, n_resamples=B, rng=rng, pair_test=PAIR_TEST)
    st, pr = f["systems"], f["pairs"]
    sys_method = f["method"]
    if population_sizes is not None:
        st, sys_method = _corrected_systems(V, codes, K, f, estimator, level, population_sizes, B, seed)
    # one procedure: a pair is separable iff its printed simultaneous interval excludes 0 (the CR2/t test: the p_cr2 column)
    sep = (pr["low"] > 0) | (pr["high"] < 0)
    S = len(names)
    est = st["estimate"]
    rank = pd.Series(-est).rank(method="min").astype(int).to_numpy()
    order = list(np.argsort(-est, kind="stable"))
    alpha = 1.0 - level
    better = np.zeros((S, S), dtype=bool)  # better[i, j]: i's simultaneous interval over j excludes 0
    for i, j, d, sp in zip(f["ia"], f["ib"], pr["diff"], sep):
        if sp:
            better[(i, j) if d > 0 else (j, i)] = True
    tiered = np.array([not (zero_filled and n_missing.get(n, 0) > UNTIERED_MISSING * V.shape[1]) for n in names])
    better = better & tiered[:, None] & tiered[None, :]  # an untiered run separates nobody
    rlow, rhigh = rank_bounds(better)
    sub = [s for s in order if tiered[s]]
    sub_tiers = letters(list(range(len(sub))), (better | better.T)[np.ix_(sub, sub)]) if sub else []
    tiers = ["–"] * S
    for k, s in enumerate(sub):
        tiers[s] = sub_tiers[k]
    sys_rows = []
    for s in order:
        judged = float(J[s].mean()) if J is not None else None
        sys_rows.append({
            "name": names[s], "group": label, "estimate": float(est[s]), "low": float(st["low"][s]),
            "high": float(st["high"][s]), "rank": int(rank[s]), "rank_low": int(rlow[s]), "rank_high": int(rhigh[s]),
            "tier": tiers[s], "judged": judged,
            "judged_flag": None if judged is None else bool(judged < JUDGED_THRESHOLD),
            "condensed": float(C[s].mean()) if C is not None else None, "se": float(st["se"][s]),
            "df": float(st["df"][s]), "estimator": f["estimator"], "method": sys_method,
            "n_queries": int(V.shape[1]), "n_clusters": K, "n_missing": int(n_missing.get(names[s], 0)),
            "pooled_like": None if judged is None else bool(judged >= POOLED_LIKE), "tiered": bool(tiered[s])})
    pos = {s: k for k, s in enumerate(order)}
    pair_rows = []
    for k, (i, j) in enumerate(zip(f["ia"], f["ib"])):
        flip = pos[j] < pos[i]
        a, b = (j, i) if flip else (i, j)
        sgn = -1.0 if flip else 1.0
        lo, hi = sgn * pr["low"][k], sgn * pr["high"][k]
        w, l_ = (pr["losses"][k], pr["wins"][k]) if flip else (pr["wins"][k], pr["losses"][k])
        pair_rows.append({
            "a": names[a], "b": names[b], "group": label, "diff": float(sgn * pr["diff"][k]),
            "low": float(min(lo, hi)), "high": float(max(lo, hi)), "p": float(pr["p"][k]),
            "p_adj": float(pr["p_hull"][k]), "p_adj_maxt": float(pr["p_maxt"][k]), "se": float(pr["se"][k]),
            "df": float(pr["df"][k]), "significant": bool(sep[k]),
            "significant_holm": bool(sep[k]), "p_family": float(pr["p"][k]),
            "p_cr2": float(pr["p_cr2"][k]), "wins": int(w),
            "losses": int(l_), "ties": int(pr["ties"][k]), "tiered": bool(tiered[a] and tiered[b]),
            "_order": (pos[a], pos[b])})
    pair_rows.sort(key=lambda r: r.pop("_order"))
    # "method": the interval the systems rows print (on a document sample: its corrected method, e.g. known_sizes)
    info = {"n_queries": int(V.shape[1]), "n_clusters": K, "estimator": f["estimator"], "method": sys_method,
            "crit": f["crit"], "alpha_star": f["alpha_star"], "pair_method": f.get("pair_method", f["method"]),
            # could be best: no system separably above it (rank_low = 1), by the same intervals
            "best_set": [names[s] for s in order if rlow[s] == 1 and tiered[s]],
            "untiered": [names[s] for s in order if not tiered[s]],
            "n_missing": {k: int(v) for k, v in n_missing.items() if v}}  # queries scored 0, per run
    return sys_rows, pair_rows, info


def _corrected_systems(V, codes, K, f, estimator, level, population_sizes, B, seed):
    """Per-system intervals on a document sample: the same call of the interval core that ``evaluate`` makes
    for its recommended row (:func:`.results.recommended_order` of a sampled task: micro ``known_sizes``, or
    the bootstrap-t on resampling counts drawn from the same seed where the sizes are unknown; the macro t
    with the finite-population correction), so both print one interval. Returns the intervals and the method."""
    n = np.bincount(codes, minlength=K).astype(float)
    s, q = cluster_sums(V, codes, K), cluster_sums(V * V, codes, K)
    core_est = "macro" if f["singleton"] else estimator
    method, extra = f["method"], {}
    if core_est == "micro" and is_sampled(population_sizes) and K >= 2:
        sizes = getattr(population_sizes, "sizes", None) is not None
        method = next(m for m in recommended_order("micro", sampled=True)
                      if sizes or m not in _kernels.SIZE_METHODS)
        if _kernels.METHODS[method]["kind"] == "bootstrap":
            counts = _kernels._counts_chunk(1, K, B, np.random.default_rng(seed))  # evaluate's draw for this seed
            extra = {"boot_counts": np.broadcast_to(counts, (len(V), K, B)), "n_resamples": B}
    out = _kernels.interval_batch(np.broadcast_to(n, s.shape), s, q, estimator=core_est, method=method,
                               level=level, population=_population(population_sizes, False, None), **extra)
    return {k: out[k] for k in ("estimate", "se", "df", "low", "high")}, method


# ------------------------------------------------------------------------------------------ result
@dataclass
class LeaderboardResult(_JsonMixin):
    """A leaderboard: ``systems`` and ``pairs`` per group, the settings and the family's methods.

    Attributes
    ----------
    systems : DataFrame
        :data:`SYSTEM_COLUMNS`, one row per (group, system), best first within each group.
    pairs : DataFrame
        :data:`PAIR_COLUMNS`, one row per (group, pair), ``a`` ranked above ``b`` (``diff = a - b``).
    metric, level, cluster, n_clusters, n_queries : the overall design.
    family : dict
        Names of the methods behind ``p``, ``p_adj``, the simultaneous interval, ``p_adj_maxt``, ranks
        and tiers.
    groups : dict
        Per group: ``n_queries``, ``n_clusters``, ``estimator``, ``method``, ``crit`` (max-|t| quantile),
        ``alpha_star`` (per-comparison level of the simultaneous intervals), ``n_missing`` (runs that lacked
        queries of the group, scored 0: how many; under ``intersect`` only ``__all__`` holds the counts, of
        the queries dropped before ranking).
    info : dict
        ``n_resamples``, ``seed``, ``on_missing``, ``n_dropped``, ``n_missing``, ``notices``.
    """

    _json_indent: ClassVar[int] = 2

    systems: pd.DataFrame
    pairs: pd.DataFrame
    metric: str
    level: float
    cluster: str
    n_clusters: int
    n_queries: int
    family: dict[str, str]
    estimator: str
    tie_policy: str
    relevance_threshold: int
    by: str | None
    judged_k: int | None
    judged_threshold: float
    groups: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Top level ``metric, level, cluster, n_clusters, n_queries, family``, the settings, ``systems``
        and ``pairs`` records, ``groups`` and ``info``."""
        return {"metric": self.metric, "level": self.level, "cluster": self.cluster, "n_clusters": self.n_clusters,
                "n_queries": self.n_queries, "family": self.family, "estimator": self.estimator,
                "family_check": (self.groups.get(ALL_GROUP) or {}).get("family_check"),  # eval/verify_family.py
                "tie_policy": self.tie_policy, "relevance_threshold": self.relevance_threshold, "by": self.by,
                "judged_k": self.judged_k, "judged_threshold": self.judged_threshold,
                "best_set": self.best_set(), "systems": self.systems, "pairs": self.pairs, "groups": self.groups,
                "info": self.info}

    def to_frame(self) -> pd.DataFrame:
        return self.systems.copy()

    def best_set(self, group: str = ALL_GROUP) -> list[str]:
        """The systems that could be best in ``group``: those no other system is separably above (their
        simultaneous intervals against every better-ranked system contain 0), best first. With probability
        at least ``level`` it contains the truly best system."""
        return list(self.groups[group]["best_set"])

    def separable(self, group: str = ALL_GROUP) -> str:
        """One sentence: which systems are separable at the family-wise level and which are not."""
        return sentence(self, group)

    def summary(self) -> str:
        """Terminal text: per group a compact table and a pair matrix."""
        return text(self)

    def to_markdown(self, path: str | Path | None = None) -> str:
        """Markdown tables (systems and pairs per group); also written to ``path`` when given."""
        return _write(markdown(self), path)

    def to_latex(self, path: str | Path | None = None) -> str:
        """LaTeX booktabs tables (systems and pairs per group, as ranx exports comparisons); also written to
        ``path`` when given."""
        return _write(latex(self), path)

    def to_html(self, path: str | Path | None = None) -> str:
        """A self-contained HTML page (inline SVG, no external resource); also written to ``path``."""
        return _write(html(self), path)

    def __repr__(self) -> str:
        S = self.systems["name"].nunique()
        return (f"LeaderboardResult(metric={self.metric!r}, systems={S}, N={self.n_queries}, K={self.n_clusters}, "
                f"level={self.level})\n{self.summary()}")


def _write(text: str, path: str | Path | None) -> str:
    if path is not None:
        atomic_write(path, text if text.endswith("\n") else text + "\n")
    return text
