"""The outcome stage: a task and one or more runs become one per-query outcome table per run.

Every verb that scores a run — ``evaluate``, ``compare``, ``leaderboard``, ``misses`` and the chunking
comparison — gets its per-query values here, so the steps between a run file and the values happen
in one place, in this order:

1. the task's frames are read once (queries, qrels, corpus ids and chunk order);
2. a document-sampled task, or a run made on a document sample, is restricted to the sampled
   documents' queries (:func:`ragcov_data.tasks.sampling.restrict_frames`), and the finite-population
   information is worked out once (:func:`ragcov_data.tasks.sampling.population_for_eval`): every verb then
   applies the same correction, so ``eval`` and ``leaderboard``/``compare`` give one interval;
3. the qrels are checked and queries without any judgment are left out (a notice, as trec_eval);
4. each run is read (:func:`read_run`, the one call site of the run reader) and checked against the
   task: its recorded task parameters (``chunk_words``, ``query_words``, ``chunking``) against the
   manifest's, ids that differ from the task's only by Unicode normalisation, documents outside the
   corpus; rows retrieving the query's own chunk are removed;
5. task queries a run lacks: an error, scored 0 (``on_missing="zero"``: counted, listed and said in a
   notice naming the run), or, for several runs, only the queries every run has (``"intersect"``);
6. every run is scored per query against qrels prepared once;
7. ties: ``top_tie_share`` (queries whose best score is shared) and a notice when a run's candidates
   share one score in most queries (its order then comes from the tie policy alone).

Notices that concern one run name it. The result of :func:`outcomes` is an :class:`OutcomeTable`; of
:func:`outcomes_many`, an :class:`OutcomeSet` of tables over the same queries.

The steps are three functions, as ir_measures prepares qrels once for many runs:
:func:`~ragcov_data.eval.outcomes.prepare.prepare_task` (steps 1-3, what does not depend on a run),
:func:`~ragcov_data.eval.outcomes.score.score_run` (steps 4, 6, 7 for one run already read) and
:func:`~ragcov_data.eval.outcomes.align.align` (step 5, the runs over one set of queries).
:func:`outcomes_many` and :func:`outcomes` chain them; this module holds the records and the helpers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import QrelsRunMismatchError, RagcovError
from ragcov_data.tasks.qrels import check_qrels
from ragcov_data.runs import load_run
from ragcov_data.tasks.sampling import resolve_for_eval, sample_of
from ragcov_data.tasks.record import manifest_of
from ragcov_data.ties import DEFAULT_TIE_POLICY, tied
from ragcov_data.eval.outcomes.args import ON_MISSING, check_outcome_args
from ragcov_data.eval.outcomes.run_checks import (TASK_PARAMETERS, _check_query_normalisation,  # noqa: F401
                                                  _object_index, _where, check_made_on, check_run_documents,
                                                  check_run_parameters, outside_notice)

__all__ = ["OutcomeTable", "OutcomeSet", "read_run", "load_task_frames",
           "default_cluster", "DEFAULT_CLUSTERS", "ON_MISSING", "ALL_TIED_SHARE", "TASK_PARAMETERS",
           "outcomes_from_eval_json"]

#: Label of the overall row group (estimates, leaderboard panels) when ``by=`` is used.
ALL_GROUP = "__all__"
#: Queries columns tried, in order, as the task's unit of inference when ``cluster`` is not given (then the query
#: id): JurisTCU's ``source_key`` (the source summary), self-retrieval's ``doc_id`` (the document), LGPD's ``exam``,
#: IRPF's ``topic`` (a cited-questions task: the head of the question's summary). Each task carries exactly one of
#: them, or, for LGPD, ``exam`` before ``topic`` (there the same column).
DEFAULT_CLUSTERS = ("source_key", "doc_id", "exam", "topic")
#: Per-run ``info`` keys a verb's result copies from its :class:`OutcomeTable` (:meth:`OutcomeTable.result_info`).
RESULT_INFO_KEYS = ("n_missing_queries", "on_missing", "run_attrs", "n_no_relevant", "n_run_only",
                    "n_self_rows_removed", "n_unknown_document_rows", "n_unjudged_queries", "top_tie_share",
                    "all_tied_share", "missing_queries")
#: The document sample's keys, present when the task or a run was drawn on a sample.
POPULATION_INFO_KEYS = ("population_clusters", "sample")
#: The task's own unit of inference (:func:`default_cluster` of its queries columns), beside the ``cluster`` used:
#: an output whose unit is another says so.
UNIT_INFO_KEYS = ("task_cluster",)
#: Keys present for some runs only: ``mean_context_words`` (a budgeted measure: the words each context holds, on
#: average) and ``passages`` (a passage run: how its passages were located in the task's documents).
RUN_KIND_INFO_KEYS = ("mean_context_words", "passages")
#: A run whose candidates share one score in at least this share of its queries gets the all-tied notice.
ALL_TIED_SHARE = 0.5


# ============================================================================================ records
@dataclass
class OutcomeTable:
    """Per-query outcomes of one run on one task, with everything that shaped them.

    Attributes
    ----------
    name : str
        The run's name (in notices and messages).
    per_query : DataFrame
        ``query-id, cluster, value`` (and ``group`` with ``by``, ``stratum`` with ``strata``), one row per
        scored query, in task order.
    missing : ndarray of bool
        Per row: the run had no rows for that query (scored 0 under ``on_missing="zero"``).
    metric, tie_policy, relevance_threshold, cluster, by, strata : the settings.
    population_sizes : float, mapping or None
        What the intervals correct for (``None``: an infinite population).
    sample : dict or None
        The document sample behind the task or the run (:mod:`ragcov_data.tasks.sampling`).
    info : dict
        ``n_missing_queries``, ``missing_queries`` (ids scored 0), ``on_missing``, ``n_self_rows_removed``,
        ``n_unknown_document_rows``, ``n_unjudged_queries``, ``top_tie_share``, ``all_tied_share``,
        ``n_no_relevant``, ``n_run_only``, ``run_attrs``, ``population_clusters`` and ``sample``.
    notices : list of str
        Everything the reader must know (shared task notices first, then this run's, naming it).
    run : DataFrame
        The run as scored (own chunks removed), for verbs that look past the values (``misses``).
    queries, qrels : DataFrame
        The scored queries' rows of the task (``_id`` and the columns asked for) and the (sampled) qrels.
    """

    name: str
    per_query: pd.DataFrame
    missing: np.ndarray
    metric: str
    tie_policy: str
    relevance_threshold: float
    cluster: str
    by: str | None
    strata: str | None
    population_sizes: Any
    sample: dict[str, Any] | None
    info: dict[str, Any] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    run: pd.DataFrame | None = field(default=None, repr=False)
    queries: pd.DataFrame | None = field(default=None, repr=False)
    qrels: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def values(self) -> np.ndarray:
        return self.per_query["value"].to_numpy(dtype=float)

    @property
    def clusters(self) -> np.ndarray:
        return self.per_query["cluster"].to_numpy()

    @property
    def groups(self) -> np.ndarray | None:
        return self.per_query["group"].to_numpy() if "group" in self.per_query.columns else None

    @property
    def strata_values(self) -> np.ndarray | None:
        return self.per_query["stratum"].to_numpy() if "stratum" in self.per_query.columns else None

    @property
    def n_missing(self) -> int:
        return int(self.missing.sum())

    def result_info(self) -> dict[str, Any]:
        """What a result built on this run records of the outcome stage (``evaluate``'s ``info``): the keys
        of :data:`RESULT_INFO_KEYS`, ``notices``, ``run_name`` and the population's (``population_clusters``,
        ``sample``) when there is one."""
        out = {k: self.info[k] for k in RESULT_INFO_KEYS}
        out.update(notices=list(self.notices), run_name=self.name)
        out.update({k: self.info[k] for k in (*POPULATION_INFO_KEYS, *UNIT_INFO_KEYS) if k in self.info})
        out.update({k: self.info[k] for k in RUN_KIND_INFO_KEYS if k in self.info})
        return out

    def __repr__(self) -> str:
        return (f"OutcomeTable(name={self.name!r}, metric={self.metric!r}, N={len(self.per_query)}, "
                f"K={self.per_query['cluster'].nunique()}, cluster={self.cluster!r}, n_missing={self.n_missing}, "
                f"population_clusters={self.info.get('population_clusters')}, notices={len(self.notices)})")


@dataclass
class OutcomeSet:
    """Outcome tables of several runs over the same queries (``compare``, ``leaderboard``).

    ``tables`` maps each run's name to its :class:`OutcomeTable`; ``keep`` marks the judged (and
    sampled) task queries kept (``on_missing="intersect"`` drops those a run lacks: ``n_dropped``);
    ``n_missing`` counts the queries each run lacked among the kept ones; ``notices`` are the shared
    ones plus every run's. ``qrels`` (restricted frame) and ``prepared_qrels`` serve further scoring
    of the same runs (judged@k, condensed lists).
    """

    tables: dict[str, OutcomeTable]
    queries: pd.DataFrame
    qrels: pd.DataFrame
    prepared_qrels: Any
    cluster: str
    by: str | None
    strata: str | None
    population_sizes: Any
    sample: dict[str, Any] | None
    n_dropped: int
    n_missing: dict[str, int]
    notices: list[str]
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(self.tables)

    @property
    def query_ids(self) -> np.ndarray:
        return self.queries["_id"].astype(str).to_numpy()

    @property
    def clusters(self) -> np.ndarray:
        return next(iter(self.tables.values())).clusters

    @property
    def groups(self) -> np.ndarray | None:
        return next(iter(self.tables.values())).groups

    def result_info(self) -> dict[str, Any]:
        """What a result built on these runs records of the outcome stage (``compare``, ``leaderboard``):
        ``notices`` (this set's list), ``on_missing``, per run ``n_missing_queries``, ``missing_queries``
        (the ids scored 0), ``top_tie_share`` and ``all_tied_share``, and the population's keys."""
        first = next(iter(self.tables.values()))
        out: dict[str, Any] = {"notices": self.notices, "on_missing": first.info["on_missing"],
                               "n_missing_queries": dict(self.n_missing)}
        for key in ("missing_queries", "top_tie_share", "all_tied_share"):
            out[key] = {k: t.info[key] for k, t in self.tables.items()}
        for key in RUN_KIND_INFO_KEYS:  # per run, where any run has it (budgets, passage runs)
            if any(key in t.info for t in self.tables.values()):
                out[key] = {k: t.info.get(key) for k, t in self.tables.items()}
        out.update({k: self.info[k] for k in (*POPULATION_INFO_KEYS, *UNIT_INFO_KEYS) if k in self.info})
        return out

    def matrix(self) -> np.ndarray:
        """``(runs, queries)`` array of the per-query values, rows in :attr:`names` order."""
        return np.array([t.values for t in self.tables.values()])

    def __repr__(self) -> str:
        return (f"OutcomeSet(runs={self.names}, N={len(self.queries)}, cluster={self.cluster!r}, "
                f"n_missing={self.n_missing}, n_dropped={self.n_dropped})")


# ============================================================================================ inputs
def _split_frame(task: Any, split: str, columns: Sequence[str] | None = None) -> pd.DataFrame | None:
    try:
        part = task[split]
    except (KeyError, TypeError):
        return None
    if isinstance(part, pd.DataFrame):
        return part if columns is None else part[[c for c in columns if c in part.columns]]
    names = getattr(part, "column_names", None)
    if names is not None:  # datasets.Dataset: convert only the columns needed
        keep = [c for c in (columns or names) if c in names]
        return part.select_columns(keep).to_pandas()
    return pd.DataFrame(part)


def _all_columns(task: Any, split: str) -> list[str]:
    try:
        part = task[split]
    except (KeyError, TypeError):
        return []
    names = getattr(part, "column_names", None)
    return [str(c) for c in (names if names is not None else getattr(part, "columns", []))]


def load_task_frames(task: Any, query_columns: Iterable[str] = (),
                     qrels: pd.DataFrame | None = None) -> dict[str, pd.DataFrame | None]:
    """``queries``, ``qrels`` (and corpus ``_id, chunk_index`` when present) as DataFrames. ``qrels``, when
    given, are the judgments to score against instead of the task's split (a cited-questions task scored at
    a granularity: :func:`ragcov_data.eval.comparisons.cited.per_query_values`)."""
    if not isinstance(task, Mapping) and not hasattr(task, "keys"):
        raise RagcovError(f"`task` must be a DatasetDict or a dict of DataFrames with 'queries' and 'qrels'; "
                          f"got {type(task).__name__}.")
    qcols = list(dict.fromkeys(["_id", "doc_id", "chunk_id", "chunk_index", *query_columns]))
    queries = _split_frame(task, "queries", qcols)
    qrels = _split_frame(task, "qrels") if qrels is None else qrels
    for name, frame in (("queries", queries), ("qrels", qrels)):
        if frame is None:
            raise RagcovError(f"`task` has no '{name}' split; expected splits 'corpus', 'queries', 'qrels'.")
    if "_id" not in queries.columns:
        raise RagcovError("`task['queries']` needs an '_id' column (the query id).")
    queries.attrs["all_columns"] = _all_columns(task, "queries")  # for messages naming every usable column
    corpus = _split_frame(task, "corpus", ["_id", "doc_id", "chunk_index"])
    return {"queries": queries, "qrels": qrels, "corpus": corpus}


def read_run(run: Any) -> pd.DataFrame:
    """A run in normal form, through the one run reader (:func:`ragcov_data.runs.load_run`): a path
    (TREC, CSV/TSV, parquet, JSON; compressed or not), a DataFrame or a ``{qid: {docid: score}}`` dict.

    The outcome stage's only call of the run reader."""
    return load_run(run)


def run_name(run: Any) -> str:
    """How notices name a run: its file's name (a path, or a run read from a file), else ``"run"``."""
    if isinstance(run, (str, Path)):
        return Path(run).name
    src = getattr(run, "attrs", {}).get("source") if isinstance(run, pd.DataFrame) else None
    if isinstance(src, str) and src not in ("run", "DataFrame") and Path(src).is_file():
        return Path(src).name
    return "run"


def default_cluster(columns: Iterable[str]) -> str:
    """The task's unit of inference, read from its queries columns (:data:`DEFAULT_CLUSTERS`, in order):
    ``source_key`` (JurisTCU: queries written from one source summary move together), ``doc_id``
    (self-retrieval: chunks of one document move together), ``exam`` (LGPD: questions of one exam were written
    and chosen together), ``topic`` (IRPF: questions of one topic of the Q&A), else the query (``_id``)."""
    cols = set(columns)
    return next((c for c in DEFAULT_CLUSTERS if c in cols), "_id")


def _manifest(task: Any) -> dict[str, Any]:
    man = getattr(task, "manifest", None)
    if isinstance(man, Mapping):
        return dict(man)
    try:
        man = manifest_of(task) if hasattr(task, "get") else None
    except Exception:  # a plain dict of DataFrames has no manifest
        man = None
    return dict(man or {})


def known_subset_note(task: Any, manifest: Mapping[str, Any] | None = None) -> str | None:
    """The manifest's note when the shipped corpus is a known subset of the real one (JurisTCU), else None."""
    return (_manifest(task) if manifest is None else manifest).get("corpus_note")


def check_run(run: pd.DataFrame, name: str = "run") -> None:
    """A run needs ``query-id, corpus-id`` and at least one row."""
    missing = [c for c in ("query-id", "corpus-id") if c not in run.columns]
    if missing:
        raise RagcovError(f"`{name}` lacks columns {missing}; expected 'query-id, corpus-id, score [, rank]'.")
    if len(run) == 0:
        raise RagcovError(f"`{name}` is empty (no rows); nothing to evaluate.")


def check_task_qrels(qrels: pd.DataFrame, corpus: pd.DataFrame | None, queries: pd.DataFrame,
                     notices: list[str], source: str = "task qrels") -> None:
    """Grades must be integers; judgments naming documents or queries the task lacks become a notice."""
    rep = check_qrels(qrels, corpus_ids=None if corpus is None else corpus["_id"], query_ids=queries["_id"],
                      source=source, on_unknown="report")
    notices.extend(rep.messages)


def judged_queries(queries: pd.DataFrame, qrels: pd.DataFrame, notices: list[str]) -> np.ndarray:
    """Mask of the task's queries that have at least one judgment. The others are left out of every mean,
    as trec_eval leaves them out, and said in a notice."""
    qids = queries["_id"].astype(str)
    judged = pd.unique(qrels["query-id"].astype(str).to_numpy(dtype=object))  # few distinct ids: isin is cheap
    has = qids.isin(judged).to_numpy()
    if not has.all():
        miss = list(qids[~has][:5])
        notices.append(f"{int((~has).sum())} of {len(qids)} queries have no judgment at all (first: {miss}); they "
                       "are left out of the mean, as trec_eval does.")
    return has


def query_column(queries: pd.DataFrame, col: str, param: str) -> np.ndarray:
    """A queries column as strings; unknown or missing values are errors naming the parameter."""
    if col not in queries.columns:
        every = sorted(set(map(str, queries.attrs.get("all_columns") or [])) | set(map(str, queries.columns)))
        usable = [c for c in every if c != "text"]
        raise RagcovError(f"`{param}={col!r}` is not a column of the task's queries; any queries column works "
                          f"(CLI: --{param} COL): {usable}.")
    vals = queries[col]
    if vals.isna().any():
        raise RagcovError(f"`{param}={col!r}` is missing for {int(vals.isna().sum())} queries "
                          f"(first: {queries['_id'][vals.isna()].iloc[0]!r}).")
    return vals.astype(str).to_numpy()


def chunk_order(queries: pd.DataFrame, corpus: pd.DataFrame | None) -> np.ndarray | None:
    """Position of each query inside its document (chunk index), for the within-document autocorrelation."""
    if "chunk_index" in queries.columns:
        return queries["chunk_index"].to_numpy()
    if corpus is not None and "chunk_id" in queries.columns and "chunk_index" in corpus.columns:
        m = corpus.set_index(corpus["_id"].astype(str))["chunk_index"]
        return queries["chunk_id"].astype(str).map(m).to_numpy()
    return None


def exclude_self_rows(run: pd.DataFrame, queries: pd.DataFrame, exclude_self: bool) -> tuple[pd.DataFrame, int]:
    """Drop rows where a query retrieves its own chunk (self-retrieval); return the run and the count.

    Ids are compared through their distinct values (integer codes), not row by row as strings."""
    if not exclude_self or "chunk_id" not in queries.columns:
        return run, 0
    qcodes, quniq = pd.factorize(run["query-id"])
    ccodes, cuniq = pd.factorize(run["corpus-id"])
    own = pd.Series(queries["chunk_id"].astype(str).to_numpy(), index=queries["_id"].astype(str).to_numpy())
    own = own[~own.index.duplicated()]
    own.index = _object_index(own.index)
    own_of_q = own.reindex(_object_index(quniq)).to_numpy(dtype=object)  # NaN: not a task query
    own_code = _object_index(cuniq).get_indexer(pd.Index(own_of_q, dtype=object))
    own_code[pd.isna(own_of_q)] = -2
    mask = own_code[qcodes] == ccodes
    if not mask.any():
        return run, 0
    kept = run.loc[~mask].copy()
    if "rank" in kept.columns:  # re-rank so rank 1 is the best remaining candidate
        kept["rank"] = kept.groupby("query-id", sort=False)["rank"].rank(method="first").astype(int)
    kept.attrs = dict(run.attrs)
    return kept, int(mask.sum())


# ---------------------------------------------------------------------------------------- run checks
def tie_profile(run: pd.DataFrame, n_queries: int) -> tuple[float, float]:
    """``(top_tie_share, all_tied_share)``: shares of the task's queries whose best score is shared by 2+
    candidates, and whose 2+ candidates all share one score (see :func:`ragcov_data.ties.tied`).

    A rank-only run (``score = -rank``) has no score ties of its own making: (0, 0)."""
    if run.empty or "score" not in run.columns or n_queries == 0 or run.attrs.get("score_from") == "rank":
        return 0.0, 0.0
    codes, _ = pd.factorize(run["query-id"])
    score = run["score"].to_numpy(dtype=float)
    order = np.lexsort((-score, codes))  # by query, best score first
    c, sc = codes[order], score[order]
    first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    last = np.r_[first[1:], len(c)] - 1
    multi = last > first
    top_tied = multi & tied(sc[first], sc[np.minimum(first + 1, len(c) - 1)])
    all_tied = multi & tied(sc[first], sc[last])
    return float(top_tied.sum() / n_queries), float(all_tied.sum() / n_queries)


def _tie_notice(name: str, share: float, tie_policy: str) -> str | None:
    if share < ALL_TIED_SHARE:
        return None
    how = "every query's" if share >= 1.0 - 1e-12 else f"{share:.0%} of the queries'"
    return (f"run {name!r}: {how} candidates share one score; order comes from the tie policy alone "
            f"({tie_policy}), not from the retriever: check the run (all scores equal, e.g. 0?).")


def _found_nothing(run: pd.DataFrame | None, miss: list[str]) -> str:
    """What the run records of its missing queries: run by ``ragcov run`` and found nothing, or unknown."""
    said = set((run.attrs.get("found_nothing") or []) if run is not None else [])
    if said and set(miss) <= said:
        return (f" They were run and found nothing (the run records it), so 0 is their score: pass "
                "`on_missing='zero'` (CLI: --on-missing zero).")
    return (" If the retriever ran them and found nothing (`ragcov run` says so when it writes a run), 0 is their "
            "score: pass `on_missing='zero'` (CLI: --on-missing zero; stated in the result). If they were not run, "
            "add them to the run.")


def _missing_error(name: str, miss: list[str], qids: np.ndarray, run_only: int, single: bool,
                   run: pd.DataFrame | None = None) -> None:
    """Queries a run lacks, under on_missing='error'. A run that also holds queries the task lacks was made
    on another task: zero-filling would score it against the wrong queries, so zero is not suggested."""
    if run_only:
        raise QrelsRunMismatchError(
            f"run {name!r} has no rows for {len(miss)} of the task's {len(qids)} queries (first 3: {miss[:3]}) and "
            f"{run_only} queries the task lacks: it was made on another task (another chunk size, acervo or "
            "sample). Evaluate it on the task it was made on, or rebuild the run.")
    if single:
        raise QrelsRunMismatchError(
            f"`run` has no rows for {len(miss)} of the task's {len(qids)} queries (first 3: {miss[:3]})."
            + _found_nothing(run, miss))


def zeroed_notice(name: str, n: int, total: int, groups: Mapping[str, tuple[int, int]] | None = None) -> str:
    """``run X lacked N of M queries (scored 0)``, with the per-group counts when there are groups."""
    text = f"run {name!r} lacked {n} of {total} queries (scored 0)"
    if groups:
        text += "; by group: " + ", ".join(f"{g} {a} of {b}" for g, (a, b) in groups.items() if a)
    return text + "."


# ============================================================================================ the stage
def _sample_for_runs(task: Any, runs: Mapping[str, pd.DataFrame], notices: list[str]
                     ) -> tuple[dict[str, Any] | None, Mapping]:
    """The one document sample behind the task and every run (None: a census), and the attrs to restrict by.
    Runs made on different samples cannot share a table of queries: refused. A census run beside runs of a
    sample is scored on the sample's queries, said in a notice."""
    task_sample = sample_of(task)
    chosen, attrs_of, first = None, {}, None
    census = []
    for name, df in runs.items():
        rec = resolve_for_eval(task_sample, df.attrs, task)
        if rec is None:
            census.append(name)
            continue
        if chosen is None:
            chosen, attrs_of, first = rec, df.attrs, name
        elif rec.get("documents_sha256") != chosen.get("documents_sha256"):
            raise QrelsRunMismatchError(
                f"runs {first!r} and {name!r} were made on different document samples (k={chosen.get('k')}, seed="
                f"{chosen.get('seed')}; k={rec.get('k')}, seed={rec.get('seed')}); rank runs of one sample together.")
    if chosen is not None and census:
        notices.append(f"runs {census} carry no document sample; they are scored on the queries of run {first!r}'s "
                       f"sample ({chosen.get('k')} documents, seed {chosen.get('seed')}), as every run here.")
    return chosen, attrs_of


# the eval JSON reader lives in its own module; importable from here as before
from ragcov_data.eval.outcomes.eval_json import EVAL_JSON_FIELDS, outcomes_from_eval_json  # noqa: E402,F401
