"""Pieces of ``bench_verified_grid.py``: censuses, one sample's table as ``evaluate`` builds it, conditional
coverage over census draws, and the summary rows (run by hand, never by the test suite)."""
from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_verified_sampled import census_outcomes, sample_docs  # noqa: E402,F401  (sample_docs re-exported: the --sample-docs draw)

import ragcov_data  # noqa: E402
from ragcov_data.baselines import BM25  # noqa: E402
from ragcov_data.execution.engine import run_task  # noqa: E402
from ragcov_data.eval.estimates import _kernels  # noqa: E402
from ragcov_data.eval.estimates import verify as V  # noqa: E402
from ragcov_data.eval.estimates.evaluator import estimates_table  # noqa: E402
from ragcov_data.eval.estimates.results import mark_recommended  # noqa: E402
from ragcov_data.eval.outcomes.metrics import per_query  # noqa: E402
from ragcov_data.eval.estimates.interval import sufficient_stats  # noqa: E402

MICRO = ("known_sizes", "cr2", "cr1", "bootstrap_t", "wild_cluster", "cluster_bootstrap")
MACRO = ("t", "cr2", "cr1", "bootstrap_t", "wild_cluster", "cluster_bootstrap")
#: ``evaluate``'s defaults: its seed and bootstrap replicates.
EVAL_SEED, EVAL_RESAMPLES = 0, 5000


def pairs_for(sized: bool) -> list[tuple[str, str]]:
    """The (estimator, method) rows of one sample: ``known_sizes`` only where the population's sizes are known."""
    return [("micro", m) for m in MICRO if sized or m != "known_sizes"] + [("macro", m) for m in MACRO]


def aneel_census(data_dir: str, cut: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-query bm25 hit@1 of the ANEEL self-retrieval census at ``cut`` (a chunk size in words, or
    ``dispositivo``), the document code of each query and the document ids (the sampled benchmark's loader)."""
    return census_outcomes(data_dir, cut)


def juristcu_census(data_dir: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Per-query bm25 nDCG@10 on JurisTCU, the source-summary code of each query, the source keys, and the
    micro value ``evaluate`` reports on the same run (a check that the values are the evaluator's)."""
    from ragcov_data.eval import evaluate

    ds = ragcov_data.load_dataset("juristcu", data_dir=data_dir, show_progress=False)
    queries, qrels = ds["queries"].to_pandas(), ds["qrels"].to_pandas()
    run = run_task(BM25(show_progress=False), ds, k=10)
    v = per_query(run, qrels, "ndcg@10", query_ids=queries["_id"].astype(str).to_numpy()).to_numpy(float)
    codes, keys = pd.factorize(queries["source_key"].astype(str))
    res = evaluate(run, ds, "ndcg@10", methods=["cr2"], n_resamples=999)
    micro = float(res.estimates.query("estimator == 'micro'")["estimate"].iloc[0])
    return v, codes, np.asarray(keys), micro


def cluster_sums(v: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-cluster ``n, s, q`` of the census, in code order (codes from ``pd.factorize``: order of first
    appearance, as :func:`~ragcov_data.eval.estimates.interval.sufficient_stats` orders them)."""
    _, n, s, q = sufficient_stats(v, codes)
    return n, s, q


def truths(n: np.ndarray, s: np.ndarray) -> dict[str, float]:
    """The census values: micro (mean over queries) and macro (mean of the clusters' means)."""
    return {"micro": float(s.sum() / n.sum()), "macro": float((s / n).mean())}


def sample_table(vals: np.ndarray, cl: np.ndarray, population: float | None, sizes: np.ndarray | None,
                 cache: str) -> pd.DataFrame:
    """One sample's estimates as ``evaluate`` builds them (its seed, its replicates, the population as the
    task records it: the number N, or N with every size), checked (``verify_intervals``) and marked
    (``mark_recommended``, ``sampled`` when a population is given), restricted to :func:`pairs_for`."""
    pairs = set(pairs_for(sizes is not None))
    pop: Any = None if population is None else (
        {"documents": float(population), "sizes": sizes} if sizes is not None else float(population))
    methods = tuple(dict.fromkeys(m for _, m in sorted(pairs)))
    est = estimates_table(vals, cl, methods, level=0.95, seed=EVAL_SEED, n_resamples=EVAL_RESAMPLES,
                          population_sizes=pop)
    est = est[[(e, m) in pairs for e, m in zip(est["estimator"], est["method"])]].reset_index(drop=True)
    design = V.design_of(vals, cl, population=population, seed=EVAL_SEED, sizes=sizes)
    out = V.verify_intervals(est, design, cache_dir=cache)
    return mark_recommended(out, sampled=population is not None)


def _without_replacement(rng: np.random.Generator, pool: np.ndarray, reps: int, k: int) -> np.ndarray:
    return pool[np.argsort(rng.random((reps, len(pool))), axis=1)[:, :k]]


def class_coverage(n, s, q, k: int, big: int | None, reps: int, seed: int, B: int = V.VERIFY_RESAMPLES,
                   pairs: list[tuple[str, str]] | None = None) -> dict:
    """Coverage of every (estimator, method) of :func:`pairs_for` over ``reps`` census draws of ``k`` clusters
    without replacement in each class: holding cluster ``big`` (True) and missing it (False); ``big`` None:
    one class (key False), every draw. Intervals with the population N and every size, ``B`` bootstrap
    replicates (default: the check's :data:`verify.VERIFY_RESAMPLES`); ``pairs``: only those.
    Returns ``{(est, m): {class: (coverage, reps)}}``."""
    K0 = len(n)
    rng = np.random.default_rng([seed, k, 11])
    if big is None:
        idx = {False: _without_replacement(rng, np.arange(K0), reps, k)}
    else:
        others = np.delete(np.arange(K0), big)
        idx = {True: np.concatenate([np.full((reps, 1), big), _without_replacement(rng, others, reps, k - 1)], 1),
               False: _without_replacement(rng, others, reps, k)}
    truth = truths(n, s)
    pop = {"documents": float(K0), "sizes": n}
    out: dict = {}
    for j, (est, m) in enumerate(pairs_for(True)):
        if pairs is not None and (est, m) not in pairs:
            continue
        out[(est, m)] = {}
        for cls, ix in idx.items():
            o = _kernels.interval_batch(n[ix], s[ix], q[ix], estimator=est, method=m, n_resamples=B,
                                     rng=np.random.default_rng([seed, k, j, int(cls)]), population=pop)
            t = truth[est]
            hit = np.isfinite(o["low"]) & np.isfinite(o["high"]) & (o["low"] <= t + 1e-12) & (t - 1e-12 <= o["high"])
            out[(est, m)][cls] = (float(hit.mean()), len(ix))
    return out


def _cov_cells(cs: list[tuple[float, int]], contains: list[bool]) -> dict[str, str]:
    if not cs:
        return {"mean cond. cov.": "-", "min": "-", "MC SE": "-", "contain census": "-"}
    c = [round(x, 6) for x, _ in cs]
    se = max(math.sqrt(max(x * (1 - x), 1.0 / r) / r) for x, r in cs)
    return {"mean cond. cov.": f"{round(float(np.mean(c)), 6):.3f}", "min": f"{min(c):.3f}", "MC SE": f"{se:.3f}",
            "contain census": f"{np.mean(contains):.2f}"}


def summary_rows(recs: list[dict], head: dict[str, Any]) -> list[dict]:
    """Rows per (estimator, method) and per estimator's recommended row from one cell's per-seed records
    (``estimator, method, status, recommended, cond, contains``)."""
    df = pd.DataFrame(recs)
    rows = []
    for (est, m), g in df.groupby(["estimator", "method"], sort=False):
        ver = g[g["status"] == "verified"]
        rows.append({**head, "estimator": est, "method": m, "seeds": len(g),
                     "verified": f"{(g['status'] == 'verified').mean():.2f}",
                     "unverifiable": f"{(g['status'] == 'unverifiable').mean():.2f}",
                     "not_verified": f"{(g['status'] == 'not_verified').mean():.2f}",
                     **_cov_cells(list(ver["cond"]), list(ver["contains"]))})
    for est, g in df[df["recommended"]].groupby("estimator", sort=False):
        ver = g[g["status"] == "verified"]
        picks = ", ".join(f"{m} {c}" for m, c in g["method"].value_counts().items())
        rows.append({**head, "estimator": est, "method": f"recommended ({picks})", "seeds": len(g),
                     "verified": f"{(g['status'] == 'verified').mean():.2f}",
                     "unverifiable": f"{(g['status'] == 'unverifiable').mean():.2f}",
                     "not_verified": f"{(g['status'] == 'not_verified').mean():.2f}",
                     **_cov_cells(list(ver["cond"]), list(ver["contains"]))})
    return rows
