"""The main job: build the task, run every installed baseline, evaluate, rank them family-wise, compare the
two chunkings, analyse the misses, study coverage — the results a report renders.

Every pairwise comparison comes from :func:`ragcov_data.eval.leaderboard` (one family of all pairs:
simultaneous max-|t| intervals and Holm-adjusted p-values); the chunking study runs the first of BM25 /
the first retriever on both chunkings (``words-<chunk_words>`` and ``dispositivo``), compares them paired
by document (:func:`ragcov_data.eval.chunkings.compare_chunkings`) and flags every hit@1 miss of both runs
(:func:`ragcov_data.eval.misses`).

:func:`run_benchmark` returns the ``results`` dict that :func:`ragcov_data.reporting.write_report` renders
(and that ``results.json`` stores), so every figure can be re-drawn later without re-running anything. This
module runs; :mod:`ragcov_data.reporting` only renders. Retrievers are built in one place,
:func:`_make_retriever`.
"""
from __future__ import annotations

import datetime as _dt
import importlib
import inspect
import os
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.reporting.studies import (chunking_block, leaderboard_block, misses_block, misses_table,
                                           pair_records, single_system_sentence, study_sentence)

__all__ = ["run_benchmark", "RETRIEVERS", "available_retrievers", "within_doc_acf"]

#: Retriever name -> (module under ragcov_data.baselines, class name).
RETRIEVERS = {"bm25": ("bm25", "BM25"), "tfidf": ("tfidf", "TfIdf"), "dense": ("dense", "Dense")}


def _retriever_class(name: str):
    mod, cls = RETRIEVERS[name]
    try:
        module = importlib.import_module(f"ragcov_data.baselines.{mod}")
        klass = getattr(module, cls)
    except (ImportError, AttributeError):
        return None
    if name == "dense":  # optional extra: usable only if its heavy imports work
        try:
            importlib.import_module("torch")
            importlib.import_module("sentence_transformers")
        except ImportError:
            return None
    return klass


def _make_retriever(name: str, show_progress: bool = True) -> Any:
    """A new, unindexed retriever of the baseline ``name`` (the one place the pipeline builds one)."""
    return _call(_retriever_class(name), show_progress=show_progress)


def available_retrievers() -> list[str]:
    """Names of the baselines importable in this environment."""
    return [n for n in RETRIEVERS if _retriever_class(n) is not None]


def within_doc_acf(values: np.ndarray, docs: np.ndarray, order: np.ndarray, max_lag: int = 10) -> list[float]:
    """Pooled within-document autocorrelation of demeaned outcomes at lags 1..max_lag.

    ``rho_l = sum_d sum_t r_dt r_d(t+l) / sum_d sum_t r_dt^2`` with ``r`` the residual from the document
    mean (lag 1 equals :func:`ragcov_data.eval.design.lag1_autocorr`, checked in the tests). A copy of the
    general autocorrelation by lag until :mod:`ragcov_data.eval.design` offers one.
    """
    df = pd.DataFrame({"d": docs, "o": order, "y": np.asarray(values, float)}).sort_values(["d", "o"], kind="stable")
    r = (df["y"] - df.groupby("d")["y"].transform("mean")).to_numpy()
    d = df["d"].to_numpy()
    den = float(np.sum(r * r))
    out = []
    for lag in range(1, max_lag + 1):
        same = d[lag:] == d[:-lag]
        out.append(float(np.sum(r[lag:][same] * r[:-lag][same]) / den) if den > 0 else float("nan"))
    return out


def _call(fn, *args, **kwargs):
    """Call ``fn`` with only the keyword arguments it accepts."""
    params = inspect.signature(fn).parameters
    if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in params}
    return fn(*args, **kwargs)


def _estimate_rows(estimates: pd.DataFrame) -> list[dict[str, Any]]:
    keep = [c for c in ("estimator", "method", "estimate", "se", "df", "low", "high", "naive", "flags")
            if c in estimates.columns]
    rows = estimates[keep].to_dict(orient="records")
    for r in rows:
        f = r.get("flags")
        r["flags"] = list(f) if isinstance(f, (list, tuple, np.ndarray)) else ([] if f in (None, "") else [str(f)])
    return rows


def run_benchmark(
    data_dir: str | os.PathLike,
    *,
    chunk_words: int = 100,
    retrievers: Sequence[str] | None = None,
    reps: int = 2000,
    ks: Sequence[int] = (5, 10, 20, 40),
    n_resamples: int = 999,
    recommend_k: int | None = 20,
    level: float = 0.95,
    seed: int = 0,
    show_progress: bool = True,
    log: Any = print,
    engine: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run the whole benchmark on the default acervo of ``data_dir`` and return the results dict.

    Parameters
    ----------
    data_dir : path
        Data folder laid out like the shared one (``aneel/aneel_fulltext.jsonl``, optional ``juristcu/``).
    chunk_words : int, default: 100
        Words a chunk (queries are each chunk's first 20 words).
    retrievers : sequence of str, optional
        Baselines to run (default: every installed one of :data:`RETRIEVERS`). Naming one that is not
        installed is an error; the default silently skips missing optional ones.
    reps, ks, n_resamples, level, seed
        Coverage-study settings (replicates per K, sample sizes, bootstrap resamples, level, seed).
    recommend_k : int or None, default: 20
        K at which a method is recommended from the coverage table (must be one of ``ks``).
    show_progress : bool, default: True
    log : callable, default: print
        Receives one-line progress messages.
    engine : mapping, optional
        ``engine``, ``workers``, ``address`` for :mod:`ragcov_data.engine` (default: this process); the
        runs, hence every figure, are the same.

    Returns
    -------
    dict
        The content of ``results.json``: ``meta``, ``task``, ``retrievers``, ``comparisons`` (filled from the
        leaderboard's pairs, retriever order, each with ``family``), ``leaderboard`` (hit@1, one family of all
        pairs, with ``sentence``), ``chunkings`` (words vs dispositivo, paired by document), ``misses``
        (summary of BM25's hit@1 misses on both chunkings), ``study`` (the one-sentence answer), ``coverage``,
        ``juristcu`` (with its own ``leaderboard`` and ``sentence``); plus ``_tables`` (``misses``: one row per
        miss), which :func:`~ragcov_data.reporting.write_report` writes as ``misses.csv``, not into the JSON.
    """
    from ragcov_data import load_dataset
    from ragcov_data.eval import _core, evaluate
    from ragcov_data.eval.coverage import coverage_study
    from ragcov_data.eval.planner import choose_methods
    from ragcov_data.paths import data_dir as _data_dir

    t0 = time.perf_counter()
    root = _data_dir(data_dir)
    names = _benchmark_iv(retrievers, ks, recommend_k)
    log(f"building task aneel_taesa (chunk_words={chunk_words}) from {root}")
    ds = load_dataset("aneel_taesa", data_dir=str(root), chunk_words=chunk_words)
    queries = ds["queries"].to_pandas() if hasattr(ds["queries"], "to_pandas") else ds["queries"]
    if len(queries) == 0:
        raise RagcovError(f"the task built from {root} has no queries; check the acervo and `chunk_words`.")
    qmeta = queries.set_index("_id")[["doc_id", "doc_type"]]
    qmeta["chunk_index"] = [int(str(i).rsplit("#", 1)[-1]) if "#" in str(i) else 0 for i in qmeta.index]

    results: dict[str, Any] = {
        "meta": {"created": _dt.datetime.now().isoformat(timespec="seconds"), "metric": "hit@1", "level": level,
                 "title": f"Self-retrieval on aneel/aneel_fulltext.jsonl in {root}, chunks of {chunk_words} words",
                 "settings": {"chunk_words": chunk_words, "reps": reps, "k": list(ks), "n_resamples": n_resamples,
                              "seed": seed, "retrievers": names}},
        "task": {"name": "aneel_taesa", "documents": int(queries["doc_id"].nunique()), "queries": int(len(queries)),
                 "corpus_chunks": int(len(ds["corpus"])), "doc_types": int(queries["doc_type"].nunique())},
        "naive_methods": [m for m, spec in _core.METHODS.items() if spec["naive"]],
        "retrievers": [], "comparisons": [], "leaderboard": None, "coverage": None, "juristcu": None,
        "chunkings": None, "misses": None, "study": None,
    }
    try:
        from ragcov_data import __version__

        results["meta"]["ragcov_version"] = __version__
    except ImportError:  # pragma: no cover
        pass

    timings: dict[str, float] = {"task": round(time.perf_counter() - t0, 1)}
    results["meta"]["timings_s"] = timings
    runs, evals = {}, {}
    for name in names:
        t1 = time.perf_counter()
        log(f"running {name}")
        r = _make_retriever(name, show_progress)
        _engine_index(r, ds["corpus"], show_progress, engine)
        runs[name] = _engine_search(r, ds["queries"], True, show_progress, engine)
        ev = evaluate(runs[name], ds, metric="hit@1", level=level, seed=seed, n_resamples=n_resamples)
        evals[name] = ev
        pq = ev.per_query.set_index("query-id").join(qmeta, how="left")
        per_doc = (pq.groupby("doc_id").agg(n=("value", "size"), hits=("value", "sum"), doc_type=("doc_type", "first"))
                   .reset_index())
        diag = {k: v for k, v in ev.diagnostics.items() if not isinstance(v, dict)}
        results["retrievers"].append({
            "name": name,
            "estimates": _estimate_rows(ev.estimates),
            "diagnostics": diag,
            "per_doc": per_doc.to_dict(orient="records"),
            "acf": within_doc_acf(pq["value"].to_numpy(), pq["doc_id"].to_numpy(), pq["chunk_index"].to_numpy()),
        })
        timings[name] = round(time.perf_counter() - t1, 1)
    t1 = time.perf_counter()

    results["leaderboard"], results["comparisons"] = _family(runs, evals, ds, names, log, level=level,
                                                             seed=seed, n_resamples=n_resamples)
    timings["compare"] = round(time.perf_counter() - t1, 1)
    t1 = time.perf_counter()
    pop_name = "bm25" if "bm25" in names else names[0]
    study = _chunking_study(root, ds, runs[pop_name], evals[pop_name], pop_name, chunk_words=chunk_words, log=log,
                            show_progress=show_progress, engine=engine, level=level, seed=seed,
                            n_resamples=n_resamples)
    results.update({k: study[k] for k in ("chunkings", "misses", "study")})
    results["_tables"] = {"misses": study["table"]}  # written as misses.csv, not into results.json
    timings["chunkings_misses"] = round(time.perf_counter() - t1, 1)
    t1 = time.perf_counter()
    census = evals[pop_name].per_query.set_index("query-id").join(qmeta, how="left").reset_index()
    n_docs = census["doc_id"].nunique()
    ks_ok = [k for k in ks if k <= n_docs]
    if ks_ok:
        log(f"coverage study on {pop_name}'s population: K={ks_ok}, {reps} replicates")
        table = coverage_study(census[["query-id", "doc_id", "doc_type", "value"]], k=ks_ok, reps=reps,
                               level=level, seed=seed, n_resamples=n_resamples, show_progress=show_progress)
        cov = {"population": pop_name, "truth": table.attrs["truth"], "reps": reps, "level": level,
               "design": "srs", "rows": table.to_dict(orient="records"), "recommend_k": None, "recommendation": {}}
        if recommend_k is not None and recommend_k in ks_ok:
            cov["recommend_k"] = recommend_k
            cov["recommendation"] = choose_methods(table[table["k"] == recommend_k], level)
        results["coverage"] = cov

    timings["coverage"] = round(time.perf_counter() - t1, 1)
    t1 = time.perf_counter()
    jt = root / "juristcu"
    if jt.is_dir():
        results["juristcu"] = _juristcu(jt, names, log=log, show_progress=show_progress, engine=engine, level=level, seed=seed,
                                        n_resamples=n_resamples)
        timings["juristcu"] = round(time.perf_counter() - t1, 1)
    results["meta"]["elapsed_s"] = round(time.perf_counter() - t0, 1)
    return results


def _engine_index(r: Any, corpus: Any, show_progress: bool, engine: Mapping[str, Any] | None) -> None:
    if not engine or engine.get("engine", "local") == "local":
        _call(r.index, corpus, show_progress=show_progress)
        return
    from ragcov_data import engine as eng

    eng.index(r, corpus, show_progress=show_progress, **engine)


def _engine_search(r: Any, queries: Any, exclude_self: bool, show_progress: bool,
                   engine: Mapping[str, Any] | None) -> pd.DataFrame:
    if not engine or engine.get("engine", "local") == "local":
        return _call(r.search, queries, k=10, exclude_self=exclude_self, show_progress=show_progress)
    from ragcov_data import engine as eng

    return eng.search(r, queries, k=10, exclude_self=exclude_self, show_progress=show_progress, **engine)


def _juristcu(path: Path, names: Sequence[str], log: Any, show_progress: bool,
              engine: Mapping[str, Any] | None = None, **kwargs: Any) -> dict[str, Any] | None:
    """JurisTCU section: every retriever on the JurisTCU task, estimates by query group and paired comparisons."""
    from ragcov_data import load_dataset
    from ragcov_data.reporting.juristcu import juristcu_section
    from ragcov_data._json import to_jsonable

    log(f"JurisTCU section from {path}")
    ds = load_dataset("juristcu", data_dir=str(path.parent))
    runs = {}
    for name in names:
        r = _make_retriever(name, show_progress)
        _engine_index(r, ds["corpus"], show_progress, engine)
        runs[name] = _engine_search(r, ds["queries"], False, show_progress, engine)
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


def _family(runs: Mapping[str, pd.DataFrame], evals: Mapping[str, Any], ds: Any, names: Sequence[str], log: Any,
            **kwargs: Any) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The leaderboard of every retriever on hit@1 (one family of all pairs) and the ``comparisons``
    records filled from its pairs; ``(None, [])`` with a single retriever."""
    if len(names) < 2:
        log(f"leaderboard skipped: one retriever ({names[0]})")
        return None, []
    from ragcov_data.eval import leaderboard

    log(f"leaderboard of {len(names)} retrievers: {len(names) * (len(names) - 1) // 2} pairs, one family "
        "(simultaneous max-|t| intervals, Holm p_adj)")
    lb = leaderboard(runs, ds, metric="hit@1", **kwargs)
    per_doc = {n: evals[n].per_document.set_index("cluster")["rate"] for n in names}
    return leaderboard_block(lb, "aneel_taesa"), pair_records(lb, per_doc)


def _chunking_study(root: Path, words: Any, words_run: pd.DataFrame, words_eval: Any, name: str, *,
                    chunk_words: int, log: Any, show_progress: bool, engine: Mapping[str, Any] | None,
                    level: float, seed: int, n_resamples: int) -> dict[str, Any]:
    """``name`` on the dispositivo task too; both chunkings compared paired by document; misses of both."""
    from ragcov_data import load_dataset
    from ragcov_data.eval import evaluate, misses
    from ragcov_data.eval.chunkings import compare_chunkings

    words_name = f"words-{chunk_words}"
    log(f"chunking study: {name} on the dispositivo task, paired by document with {words_name}; hit@1 misses")
    disp = load_dataset("aneel_taesa", "dispositivo", data_dir=str(root))
    r = _make_retriever(name, show_progress)
    _engine_index(r, disp["corpus"], show_progress, engine)
    disp_run = _engine_search(r, disp["queries"], True, show_progress, engine)
    disp_eval = evaluate(disp_run, disp, metric="hit@1", level=level, seed=seed, n_resamples=n_resamples,
                         cluster="doc_id")
    cmp_ = compare_chunkings({words_name: words_eval, "dispositivo": disp_eval}, level=level,
                             n_resamples=n_resamples, seed=seed)
    found = {words_name: misses(words_run, words, level=level), "dispositivo": misses(disp_run, disp, level=level)}
    block = misses_block(found[words_name], name, words_name)
    block["dispositivo"] = misses_block(found["dispositivo"], name, "dispositivo")
    chunk = chunking_block(cmp_, name)
    return {"chunkings": chunk, "misses": block, "study": study_sentence(block, chunk),
            "table": misses_table({k: v.misses for k, v in found.items()})}


def _benchmark_iv(retrievers, ks, recommend_k) -> list[str]:
    import difflib

    if not ks or any((not isinstance(k, (int, np.integer))) or k < 2 for k in ks):
        raise RagcovError(f"`k` must be integers >= 2; got {list(ks)}.")
    if recommend_k is not None and recommend_k not in ks:
        recommend_k = None
    if retrievers is None:
        names = available_retrievers()
        if not names:
            raise RagcovError("no retriever is installed; install ragcov's baselines (`pip install -e .`).")
        return names
    names = [r.strip() for r in retrievers if r and r.strip()]
    if not names:
        raise RagcovError("`retrievers` is empty; pass at least one of " + ", ".join(RETRIEVERS) + ".")
    for n in names:
        if n not in RETRIEVERS:
            close = difflib.get_close_matches(n, RETRIEVERS, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise RagcovError(f"unknown retriever {n!r}; choose from {list(RETRIEVERS)}.{hint}")
        if _retriever_class(n) is None:
            extra = " (install the dense extra: pip install -e '.[dense]')" if n == "dense" else ""
            raise RagcovError(f"retriever {n!r} is not installed{extra}.")
    if len(set(names)) != len(names):
        raise RagcovError(f"`retrievers` lists a name twice: {names}.")
    return names
