"""The jobs behind the command line: make a run file's run, compare two chunkings of one acervo, rank the
chunkings x retrievers of cited questions, read a pilot or a population.

``ragcov run``, ``ragcov chunking`` and ``ragcov plan``/``coverage`` parse their options and print; the
work is here, callable from Python with the same results. Every run is made by the one entry point,
:func:`ragcov_data.execution.engine.run_task` (index, search, stamp the task's fingerprint; here or on Ray), and
:mod:`ragcov_data.jobs.benchmark` (``ragcov benchmark``) uses :func:`chunking_comparison` for its own chunking
study, so the two jobs cannot drift apart.
"""
from __future__ import annotations

import copy
import json
import os
import warnings
from collections import OrderedDict
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.tasks import sources
from ragcov_data.baselines.found_nothing import FOUND_NOTHING_KEY, found_nothing
from ragcov_data.execution.engine import columns_of, is_self_retrieval, run_task, shutdown
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.eval import evaluate
from ragcov_data.eval.comparisons.paired_chunkings import compare_chunkings
from ragcov_data.eval.comparisons.cited import cited_chunking_study
from ragcov_data.eval.outcomes.table import outcomes_from_eval_json
from ragcov_data.eval.planning.twin import simulate_population
from ragcov_data.legal.acervo import sha256_file
from ragcov_data.loaders._cited_gold import UnresolvedCitations
from ragcov_data.loaders.cited_questions import build_cited_task
from ragcov_data.runs.fingerprint import FINGERPRINT_KEY
from ragcov_data.tasks.sources import read_table  # one table reader: BOM, JSON Lines, ids as text

__all__ = ["make_run", "check_searchable", "acervo_chunkings", "chunking_comparison", "cited_tasks", "cited_study",
           "read_pilot", "read_population"]


# --------------------------------------------------------------------------- ragcov run


def check_searchable(task: Any, self_retrieval: bool) -> None:
    """Refuse a task a run cannot be made of: no corpus, no query, or (self-retrieval) one document.

    With one document every query's only candidates are its own document's chunks: there is nothing
    to retrieve across documents and no document-level interval, so a run would be empty or useless.
    """
    try:
        corpus = task["corpus"]
    except (KeyError, TypeError):
        corpus = None
    if corpus is None or len(corpus) == 0:
        raise RagcovError("the task has no corpus to index; pass a task with corpus, queries and qrels "
                          "(e.g. --data-files ACERVO or a folder written by `ragcov build --out`).")
    queries = task["queries"]
    if len(queries) == 0:
        raise RagcovError("the task has no query, so there is nothing to run; check the acervo and --chunk-words.")
    if self_retrieval and "doc_id" in columns_of(queries):
        docs = queries["doc_id"]
        ids = set(docs.unique() if hasattr(docs, "unique") else docs)
        if len(ids) < 2:
            raise RagcovError(f"the task's queries all come from one document ({next(iter(ids))!r}); self-retrieval "
                              "needs at least two documents that yield two chunks each — add documents to the "
                              "acervo or lower --chunk-words.")


def make_run(retriever: Any, task: Any, *, k: int = 10, engine: Mapping[str, Any] | None = None,
             attrs: Mapping[str, Any] | None = None) -> tuple[pd.DataFrame, bool, str | None]:
    """The run of ``ragcov run``: ``retriever`` on ``task`` (:func:`ragcov_data.execution.engine.run_task`), with the
    source's ``attrs`` and the queries that found nothing recorded; returns ``(run, exclude_self, notice)``.

    A run with no row at all is an error (nothing would be written); a local Ray cluster started for the
    run is stopped whatever happens.
    """
    queries = task["queries"]
    exclude_self = is_self_retrieval(queries)
    check_searchable(task, exclude_self)
    try:
        run = run_task(retriever, task, k=k, exclude_self=exclude_self, show_progress=None, **dict(engine or {}))
    finally:
        shutdown()  # a local cluster started for this run
    qframe = queries.select_columns(["_id", "text"]).to_pandas() if hasattr(queries, "select_columns") \
        else queries[["_id", "text"]]
    nothing, notice = found_nothing(retriever, qframe, run)
    if len(run) == 0:
        raise RagcovError(f"{retriever.name} retrieved nothing for any of the {len(queries):,} queries, so no run "
                          f"was written: {notice.removeprefix('notice: ').split(' (first:')[0]}; check the "
                          "queries' and the corpus's text, or try another --retriever (e.g. tfidf or dense).")
    stamp = run.attrs.get(FINGERPRINT_KEY)
    run.attrs.update(attrs or {})
    if nothing:  # recorded (parquet metadata), so eval can tell "found nothing" from "not run"
        run.attrs[FOUND_NOTHING_KEY] = nothing
    if stamp is not None:  # what the run was made on: parquet metadata and the TREC tag (save_run)
        run.attrs[FINGERPRINT_KEY] = stamp
    return run, exclude_self, notice


# --------------------------------------------------------------------------- ragcov chunking (an acervo)


def chunking_comparison(tasks: Mapping[str, Any], make_retriever: Callable[[], Any], *, metric: str = "hit@1",
                        level: float = 0.95, seed: int | None = 0, n_resamples: int = 5000,
                        engine: Mapping[str, Any] | None = None, show_progress: bool | None = None,
                        runs: Mapping[str, pd.DataFrame] | None = None,
                        evals: Mapping[str, Any] | None = None) -> tuple[Any, dict[str, pd.DataFrame], dict[str, Any]]:
    """Self-retrieval under each chunking of one acervo, compared paired by document.

    Each task without a run in ``runs`` gets a fresh retriever's run (:func:`ragcov_data.execution.engine.run_task`,
    k=10, own chunk excluded); each without an evaluation in ``evals`` is evaluated on ``metric`` clustered
    by document; :func:`ragcov_data.eval.comparisons.paired_chunkings.compare_chunkings` compares them. Returns
    ``(comparison, runs, evals)`` in the order of ``tasks``.
    """
    runs, evals = dict(runs or {}), dict(evals or {})
    for name, task in tasks.items():
        if name not in runs:
            runs[name] = run_task(make_retriever(), task, k=10, exclude_self=True, show_progress=show_progress,
                                  **dict(engine or {}))
        if name not in evals:
            evals[name] = evaluate(runs[name], task, metric, level=level, seed=seed, n_resamples=n_resamples,
                                   cluster="doc_id")
    evals = {name: evals[name] for name in tasks}
    res = compare_chunkings(evals, level=level, n_resamples=n_resamples, seed=seed)
    return res, {name: runs[name] for name in tasks}, evals


def acervo_chunkings(source: Mapping[str, Any], *, show_progress: bool = False) -> dict[str, Any]:
    """The two self-retrieval tasks ``ragcov chunking`` compares, cut from the one acervo ``source`` names
    (:func:`ragcov_data.tasks.sources.resolve_task` keywords): word windows of ``chunk_words`` (default 100), then
    dispositivos within ``min_words``/``max_words``."""
    words = sources.resolve_task(**{**source, "min_words": None, "max_words": None}, show_progress=show_progress)
    disp = sources.resolve_task(**{**source, "chunking": "dispositivo"}, show_progress=show_progress)
    return {f"words-{source.get('chunk_words') or 100}": words.task, "dispositivo": disp.task}


# --------------------------------------------------------------------------- ragcov chunking (cited questions)


def cited_tasks(acts: Any, questions: Any, chunkings: Sequence[tuple[str, Mapping[str, Any]]], *,
                dataset: str, note: Callable[[str, str], Any], build: Callable[..., Any] | None = None,
                **kw: Any) -> dict[str, Any]:
    """One cited-questions task per ``(name, build_cited_task keywords)`` of ``chunkings``, the same questions
    under each (built by ``build``, default :func:`build_cited_task`; ``lgpd``'s reads unit tables and exam
    questions); every warning of a build goes to ``note(name, message)``, never silent, the unresolved citations
    once (their one-line summary: the counts and where the list is) for every chunking that shares them.

    A task built in this process from files of the same content with the same options is not built again:
    a copy of it is returned and its warnings said again (:data:`_BUILT`; the main job's studies share them)."""
    build = build or build_cited_task
    tasks: dict[str, Any] = {}
    gold: dict[tuple, list[tuple[str, Any]]] = {}  # what an unresolved-citations notice says -> (chunking, notice)
    for name, opts in chunkings:
        key = _built_key(acts, questions, dataset, name, opts, build, kw)
        if key is not None and key in _BUILT:
            task, messages = _BUILT[key]
            tasks[name] = copy.deepcopy(task)
        else:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                tasks[name] = build(acts, questions, dataset=dataset, config_name=name, **kw, **opts)
            messages = [w.message for w in caught]
            if key is not None:
                _BUILT[key] = (copy.deepcopy(tasks[name]), messages)
                while len(_BUILT) > _BUILT_MAX:
                    _BUILT.pop(next(iter(_BUILT)))
        for message in messages:
            if isinstance(message, UnresolvedCitations):  # the same citations under every chunking: said once
                gold.setdefault(message.key(), []).append((name, message))
            else:
                note(name, str(message))
    for said in gold.values():
        names = [n for n, _ in said]
        where = "" if len(gold) == 1 else f" [{', '.join(names)}]"
        note(names[0], said[0][1].summary() + where)
    return tasks


#: Cited-questions tasks built in this process, by the content of their files and their options (oldest first), with
#: the warnings their build gave.
_BUILT: "OrderedDict[tuple, tuple[Any, list[Warning]]]" = OrderedDict()
_BUILT_MAX = 12


def _built_key(acts: Any, questions: Any, dataset: str, name: str, opts: Mapping[str, Any], build: Callable,
               kw: Mapping[str, Any]) -> tuple | None:
    """The key of a build in :data:`_BUILT`: the sha256 of every file read and every option (None when the acts or
    the questions are not files, or an option is an object whose value cannot be keyed: a chunker, say)."""
    paths = [acts] if isinstance(acts, (str, os.PathLike)) else acts
    if not isinstance(paths, (list, tuple)) or not isinstance(questions, (str, os.PathLike)):
        return None
    plain = (str, int, float, bool, type(None))
    if not all(isinstance(v, plain) for v in [*opts.values(), *kw.values()]):
        return None
    try:
        shas = tuple(sha256_file(p) for p in [*paths, questions])
    except (OSError, TypeError):
        return None
    return (shas, dataset, name, tuple(sorted(opts.items())), f"{build.__module__}.{build.__qualname__}",
            tuple(sorted(kw.items())))


def cited_study(tasks: Mapping[str, Any], makers: Mapping[str, Callable[[], Any]], *,
                engine: Mapping[str, Any] | None = None, **kw: Any) -> Any:
    """:func:`ragcov_data.eval.comparisons.cited.cited_chunking_study` of ``tasks`` x ``makers``, every run made by
    :func:`ragcov_data.execution.engine.run_task` (here, or on the engine given)."""
    runner = partial(run_task, exclude_self=False, show_progress=None, **dict(engine or {}))
    return cited_chunking_study(tasks, makers, runner=runner, **kw)


# --------------------------------------------------------------------------- ragcov plan / coverage inputs


def read_pilot(path: str) -> pd.DataFrame:
    """Paired differences from a ``compare --json`` file (its ``per_query`` records) or a table with
    ``cluster`` (or ``doc_id``) and ``diff``; every problem is an error naming the file."""
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"pilot file {str(p)!r} not found; pass the JSON of `ragcov compare --json` or a table "
                             "of query-id, cluster, diff.")
    if p.suffix.lower() == ".json":
        df = _read_json_pilot(p)
    else:
        df = read_table(p, id_columns=("query-id", "cluster", "doc_id"))
    missing = [name for name, ok in (("cluster (or doc_id)", "cluster" in df.columns or "doc_id" in df.columns),
                                     ("diff", "diff" in df.columns)) if not ok]
    if missing:
        raise InputFileError(f"pilot file {str(p)!r} lacks column(s) {missing} (found {sorted(map(str, df.columns))}); "
                             "give one row a query with its cluster and the paired difference A - B, as "
                             "`ragcov compare --json` writes them.")
    diff = pd.to_numeric(df["diff"], errors="coerce")
    if diff.isna().any():
        i = int(np.flatnonzero(diff.isna().to_numpy())[0])
        qid = df["query-id"].iloc[i] if "query-id" in df.columns else "?"
        raise InputFileError(f"pilot file {str(p)!r}: row {i} (query-id {qid!r}) has diff {df['diff'].iloc[i]!r}; "
                             "every difference must be a finite number.")
    df["diff"] = diff.astype(float)
    return df


def _read_json_pilot(p: Path) -> pd.DataFrame:
    """The ``per_query`` records of a ``ragcov compare --json`` file, checked against its ``n_queries``."""
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputFileError(f"cannot read pilot file {str(p)!r}: not valid UTF-8 JSON ({exc}).") from exc
    records = data.get("per_query") if isinstance(data, dict) else None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise InputFileError(
            f"pilot file {str(p)!r} has no `per_query` records of paired differences; write it with "
            "`ragcov compare A B --json OUT` (ragcov 0.x before per_query was added: run compare again).")
    df = pd.DataFrame.from_records(records)
    if isinstance(data.get("n_queries"), int) and data["n_queries"] != len(df):
        raise InputFileError(f"pilot file {str(p)!r} declares n_queries={data['n_queries']} but holds {len(df)} "
                             "`per_query` records; the file is truncated or edited. Write it again.")
    if isinstance(data.get("cluster"), str):
        df.attrs["cluster"] = data["cluster"]
    return df


def read_population(path: str | None, twin: bool = False, seed: int = 0) -> pd.DataFrame:
    """Read a population table (parquet, CSV, TSV, JSON lines, JSON records or an ``eval --json`` file).

    A ``.json`` file written by ``ragcov eval --json`` (an object with ``per_query`` records
    ``query-id, cluster, value [, group]``) gives its per-query values, the ``cluster`` becoming the
    ``doc_id`` the coverage study samples; a ``.json`` list of records is read as a table.
    """
    if twin:
        return simulate_population(seed=seed)
    if path is None:
        raise RagcovError("give a population file (per-query outcomes or per-document counts) or --twin.")
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"population file {str(p)!r} not found; pass a parquet/CSV/JSONL table or --twin.")
    if p.suffix == ".json":
        return outcomes_from_eval_json(p)[0]
    return read_table(p, id_columns=("doc_id", "query-id"))


