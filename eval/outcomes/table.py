"""The outcome stage: a task and one or more runs become one per-query outcome table per run.

Every verb that scores a run — ``evaluate``, ``compare``, ``leaderboard``, ``misses`` and the chunking
comparison — gets its per-query values here, so the steps between a run file and the values happen
in one place, in this order:

1. the task's frames are read once (queries, qrels, corpus ids and chunk order);
2. a document-sampled task, or a run made on a document sample, is restricted to the sampled
   documents' queries (:func:`ragcov_data.sampling.restrict_frames`), and the finite-population
   information is worked out once (:func:`ragcov_data.sampling.population_for_eval`): every verb then
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
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import QrelsRunMismatchError, RagcovError
from ragcov_data.ties import DEFAULT_TIE_POLICY, check_tie_policy, tied
from ragcov_data.eval.outcomes.run_checks import (TASK_PARAMETERS, _check_query_normalisation,  # noqa: F401
                                                  _object_index, _where, check_made_on, check_run_documents,
                                                  check_run_parameters, outside_notice)

__all__ = ["outcomes", "outcomes_many", "OutcomeTable", "OutcomeSet", "read_run", "load_task_frames",
           "default_cluster", "DEFAULT_CLUSTERS", "ON_MISSING", "ALL_TIED_SHARE", "TASK_PARAMETERS",
           "outcomes_from_eval_json"]

#: Policies for task queries a run lacks (``intersect``: several runs only).
#: Label of the overall row group (estimates, leaderboard panels) when ``by=`` is used.
ALL_GROUP = "__all__"
ON_MISSING = ("error", "zero", "intersect")
#: Queries columns tried, in order, as the sampled unit when ``cluster`` is not given (then the query id).
DEFAULT_CLUSTERS = ("source_key", "doc_id")
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
        The document sample behind the task or the run (:mod:`ragcov_data.sampling`).
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


def load_task_frames(task: Any, query_columns: Iterable[str] = ()) -> dict[str, pd.DataFrame | None]:
    """``queries``, ``qrels`` (and corpus ``_id, chunk_index`` when present) as DataFrames."""
    if not isinstance(task, Mapping) and not hasattr(task, "keys"):
        raise RagcovError(f"`task` must be a DatasetDict or a dict of DataFrames with 'queries' and 'qrels'; "
                          f"got {type(task).__name__}.")
    qcols = list(dict.fromkeys(["_id", "doc_id", "chunk_id", "chunk_index", *query_columns]))
    queries = _split_frame(task, "queries", qcols)
    qrels = _split_frame(task, "qrels")
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
    from ragcov_data.runs import load_run

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
    """The default sampled unit: ``source_key`` (JurisTCU: queries written from one source summary move
    together), else ``doc_id`` (self-retrieval: chunks of one document move together), else ``_id``."""
    cols = set(columns)
    return next((c for c in DEFAULT_CLUSTERS if c in cols), "_id")


def _manifest(task: Any) -> dict[str, Any]:
    man = getattr(task, "manifest", None)
    if isinstance(man, Mapping):
        return dict(man)
    from ragcov_data.task import manifest_of

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
    from ragcov_data.qrels import check_qrels

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
    from ragcov_data.sampling import resolve_for_eval, sample_of

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
        Apply a document sample's finite-population correction (see :mod:`ragcov_data.sampling`).
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
    from ragcov_data.eval.outcomes.budget import cited_scoring
    from ragcov_data.eval.outcomes.metrics import parse_metric, per_query
    from ragcov_data.eval.outcomes.metrics._lists import prepare_qrels
    from ragcov_data.sampling import eval_info, population_for_eval, restrict_frames

    tie_policy = check_tie_policy(tie_policy)
    if on_missing not in ON_MISSING or (single and on_missing == "intersect"):
        allowed = ON_MISSING[:2] if single else ON_MISSING
        raise RagcovError(f"`on_missing` must be one of {allowed}; got {on_missing!r}.")
    extra = [c for c in (cluster, by, strata, *query_columns) if c] + ([] if cluster else list(DEFAULT_CLUSTERS))
    frames = load_task_frames(task, extra)
    manifest = _manifest(task)
    # a cited-questions task: recall@k and name@Bw are measures of the cited provisions (one per-question code)
    cited = cited_scoring(task, metric, tie_policy, manifest, _split_frame)
    spec = cited.spec if cited is not None else parse_metric(metric)

    loaded: dict[str, pd.DataFrame] = {}
    for name, run in runs.items():
        df = read_run(run)
        check_run(df, "run" if single else f"runs[{name!r}]")
        check_run_parameters(df, manifest, name)
        loaded[name] = df
    check_made_on(loaded, task, manifest, frames["corpus"])

    notices: list[str] = []
    task_ids = frames["queries"]["_id"].astype(str).to_numpy(dtype=object)  # every query of the task, any sample
    sample, attrs = _sample_for_runs(task, loaded, notices)
    census_queries = frames["queries"]  # before the sample restricts them: every document's queries (sizes)
    if sample is not None:
        frames, sample = restrict_frames(task, attrs, frames)  # a document-sampled task: its queries only
    queries, qrels = frames["queries"], frames["qrels"]
    check_task_qrels(qrels, frames["corpus"], queries, notices)
    subset = known_subset_note(task, manifest)
    n_task = len(queries)
    # judged_queries reads only the query ids: their distinct values make its look-up cheap on big qrels
    queries = queries.loc[judged_queries(queries, qrels[["query-id"]].drop_duplicates(), notices)]
    queries = queries.reset_index(drop=True)
    if cited is not None:
        queries = cited.queries(queries, notices)
    if queries.empty:
        raise RagcovError("no query of the task has a judgment (qrels name none of its queries); check the task.")
    qids_all = queries["_id"].astype(str).to_numpy()

    per_run: dict[str, dict[str, Any]] = {}
    run_ids: dict[str, set] = {}
    outside: dict[str, int] = {}
    for name, df in loaded.items():
        where = _where(df, name)
        said: list[str] = []
        n_unknown = outside[name] = check_run_documents(df, frames["corpus"], subset, said, name)
        if single:
            notices += said
        df, n_self = exclude_self_rows(df, queries, exclude_self)
        ids = set(pd.Index(pd.factorize(df["query-id"])[1]).astype(str))
        _check_query_normalisation(ids, task_ids, where)
        loaded[name], run_ids[name] = df, ids
        per_run[name] = {"n_self_rows_removed": n_self, "n_unknown_document_rows": n_unknown}

    if not single and any(outside.values()):  # one notice naming every run, not one copy per run
        notices.append(outside_notice(outside, subset))

    # ---- queries kept: mismatch between runs (compare), then missing queries --------------------
    keep = np.ones(len(qids_all), dtype=bool)
    n_dropped_mismatch = 0
    if on_mismatch is not None and len(run_ids) >= 2:
        sets = list(run_ids.values())
        if any(s != sets[0] for s in sets[1:]):
            if on_mismatch == "error":
                (na, qa), (nb, qb) = list(run_ids.items())[:2]
                only_a, only_b = sorted(qa - qb), sorted(qb - qa)
                raise QrelsRunMismatchError(
                    f"`{na}` and `{nb}` cover different queries: {len(only_a)} only in {na} (first 3: {only_a[:3]}), "
                    f"{len(only_b)} only in {nb} (first 3: {only_b[:3]}). Pass `on_mismatch='intersect'` to compare "
                    "the shared queries only.")
            shared = set.intersection(*sets)
            keep = np.fromiter((q in shared for q in qids_all), bool, len(qids_all))
            n_dropped_mismatch = int((~keep).sum())
            if not keep.any():
                raise QrelsRunMismatchError(f"`{'` and `'.join(run_ids)}` share no query of the task; nothing to "
                                            "compare.")
    qids_kept = qids_all[keep]
    lacks = {name: np.fromiter((q not in ids for q in qids_kept), bool, len(qids_kept))
             for name, ids in run_ids.items()}
    lacking = {k: int(v.sum()) for k, v in lacks.items() if v.any()}
    n_lacking = {k: int(v.sum()) for k, v in lacks.items()}  # before any intersect: reported per run
    n_dropped = 0
    if lacking:
        said = ", ".join(f"{k!r} lacks {v} of {len(qids_kept)}" for k, v in lacking.items())
        if on_missing == "error":
            for name, m in lacks.items():
                if m.any():
                    run_only = len(run_ids[name] - set(task_ids))
                    _missing_error(name, list(qids_kept[m]), qids_kept, run_only, single, loaded[name])
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
    queries = queries.loc[keep].reset_index(drop=True)
    qids = qids_all[keep]

    cluster_name = cluster or default_cluster(queries.columns)
    clusters = query_column(queries, cluster_name, "cluster")
    groups = query_column(queries, by, "by") if by else None
    strata_arr = query_column(queries, strata, "strata") if strata else None
    if sample is not None and fpc and population_sizes is None:
        population_sizes = population_for_eval(sample, cluster_name, strata, notices)
        if isinstance(population_sizes, float):  # one-stage: every population document's size, if known
            from ragcov_data.sampling import DocumentPopulation, census_sizes, sample_of

            sizes = census_sizes(sample, None if sample_of(task) else census_queries)
            if sizes is not None:
                population_sizes = DocumentPopulation(population_sizes, sizes)
    elif sample is not None and not (strata is not None and strata == sample.get("strata")):
        from ragcov_data.sampling import unequal_probabilities

        problem = unequal_probabilities(sample)  # refused whatever the correction: an unweighted mean is biased
        if problem:
            raise RagcovError(problem)
    applied = population_sizes is not None
    pop_info = eval_info(sample, population_sizes, applied)

    prepared = prepare_qrels(qrels)  # validated and converted once, not once per run (the cost on big qrels)
    kw = dict(relevance_threshold=relevance_threshold, tie_policy=tie_policy, query_ids=qids)
    tables: dict[str, OutcomeTable] = {}
    n_missing: dict[str, int] = {}
    all_notices = list(notices)
    for name, df in loaded.items():
        own: list[str] = []
        scores = cited.scores(df, qids, name, own) if cited is not None else per_query(df, prepared, spec, **kw)
        miss = lacks[name]
        n_miss = int(miss.sum())
        n_missing[name] = n_lacking[name]
        if n_miss and on_missing == "zero":
            by_group = None
            if groups is not None:
                by_group = {str(g): (int(miss[groups == g].sum()), int((groups == g).sum())) for g in pd.unique(groups)}
            own.append(zeroed_notice(name, n_miss, len(qids), by_group))
        top_share, all_share = tie_profile(df, len(qids))
        note = _tie_notice(name, all_share, tie_policy)
        if note:
            own.append(note)
        pq = pd.DataFrame({"query-id": qids, "cluster": clusters, "value": scores.to_numpy(dtype=float)})
        if groups is not None:
            pq["group"] = groups
        if strata_arr is not None:
            pq["stratum"] = strata_arr
        info = {
            "n_missing_queries": n_miss,
            "missing_queries": [str(q) for q in qids[miss]] if on_missing == "zero" else [],
            "on_missing": on_missing,
            "run_attrs": {k: (v if isinstance(v, (str, int, float, bool, type(None))) else str(v))
                          for k, v in getattr(df, "attrs", {}).items()},
            "n_no_relevant": scores.attrs.get("n_no_relevant"), "n_run_only": scores.attrs.get("n_run_only"),
            **per_run[name], "n_unjudged_queries": int(n_task - len(queries) - n_dropped - n_dropped_mismatch),
            "top_tie_share": top_share, "all_tied_share": all_share, **pop_info,
        }
        tables[name] = OutcomeTable(
            name=name, per_query=pq, missing=miss, metric=scores.attrs.get("metric", str(spec)),
            tie_policy=tie_policy, relevance_threshold=relevance_threshold, cluster=cluster_name, by=by,
            strata=strata, population_sizes=population_sizes, sample=sample, info=info,
            notices=[*notices, *own], run=df, queries=queries, qrels=qrels)
        all_notices += own
    return OutcomeSet(tables=tables, queries=queries, qrels=qrels, prepared_qrels=prepared, cluster=cluster_name,
                      by=by, strata=strata, population_sizes=population_sizes, sample=sample,
                      n_dropped=n_dropped + n_dropped_mismatch, n_missing=n_missing, notices=all_notices,
                      info={"n_dropped_mismatch": n_dropped_mismatch, "n_dropped_missing": n_dropped,
                            "order": chunk_order(queries, frames["corpus"]), **pop_info})


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


# the eval JSON reader lives in its own module; importable from here as before
from ragcov_data.eval.outcomes.eval_json import EVAL_JSON_FIELDS, outcomes_from_eval_json  # noqa: E402,F401
