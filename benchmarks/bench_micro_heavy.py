"""Candidate micro (ratio) intervals where documents are wildly unequal: coverage and width against CR2.

Run by hand:  OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_micro_heavy.py [--data-dir ../shared/data]
              [--reps 4000] [--boot 999] [--tune-reps 4000] [--seed 0] [--ks 40 80]

Populations: per-query bm25 hit@1 of the ANEEL self-retrieval census (every chunk a query; ``census_outcomes`` of
``bench_verified_sampled.py``) at 100 words (147 acts, 2,312 queries, one act 18% of them), at 50 and 400 words,
the ``dispositivo`` cut, and the acts of three types at 100 words (portaria, despacho, voto: the queries of those
acts, outcomes from the whole census). The truth is the population's micro mean (queries pooled).

Designs: ``world`` — the bootstrap world of a population of M acts: a replicate draws M acts with replacement,
each copy its own cluster (the superpopulation reading of the acts; the same draws); ``sample K`` — K of the 147
acts at 100 words without replacement (no sizes known to the methods).

Methods (``benchmarks/micro_heavy.py``): ``cr2`` (ragcov's, the reference), ``cr3`` (cluster jackknife, t on K-1),
``wild_rad`` (ragcov's ``wild_cluster``, Rademacher weights), ``wild_webb`` (the same wild cluster restricted
bootstrap with Webb's six-point weights, test inversion, ``--boot`` weights), ``hall_eq`` / ``hall_sym`` (cluster
bootstrap of Hall's skewness-corrected t of the ratio, equal-tailed / symmetric), ``fieller`` (coverage is
membership of the exact Fieller set, unbounded sets included; width is over the bounded sets, the unbounded share
printed), ``cr2_calib`` (CR2 at the nominal level calibrated on the sample's own ``--boot`` bootstrap replicates;
its inner level is closed-form, so no inner resampling), ``cr2_tuned`` (CR2 at the one nominal level that covers
95% in ``--tune-reps`` separate draws of the 100-word world: in-sample there, a hold-out check everywhere else),
``el`` (empirical likelihood, F(1, K-1) calibration). Every method sees the same draws; ``d cov`` is its coverage
minus CR2's with the paired MC SE, ``width/cr2`` the ratio of mean widths (``clipped``: of the intervals cut to [0,
1], where a hit rate lies). Coverage is printed +- 2 MC SE; a last table gives each method's coverage among the
draws holding the population's largest act 0, 1, 2 or 3+ times.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import micro_heavy as H  # noqa: E402
from _common import command_line, default_data_dir, peak_rss_mb, table  # noqa: E402

import ragcov_data  # noqa: E402
from ragcov_data.baselines import BM25  # noqa: E402
from ragcov_data.execution.engine import run_task  # noqa: E402
from ragcov_data.eval.estimates import _kernels  # noqa: E402
from ragcov_data.eval.outcomes.metrics import per_query  # noqa: E402

METHODS = ("cr2", "cr3", "wild_rad", "wild_webb", "hall_eq", "hall_sym", "fieller", "cr2_calib", "cr2_tuned", "el")
LEVEL = 0.95
_CHUNK = 16  # samples per bootstrap chunk (bounds the (chunk, K, B) arrays)


def census(data_dir: str, chunk_words: int | None = None, config: str | None = None) -> pd.DataFrame:
    """Per-query bm25 hit@1 of the census with the query's act and the act's type."""
    kw = {"chunk_words": chunk_words} if chunk_words else {}
    args = (config,) if config else ()
    ds = ragcov_data.load_dataset("aneel_taesa", *args, data_dir=data_dir, show_progress=False, **kw)
    queries, qrels = ds["queries"].to_pandas(), ds["qrels"].to_pandas()
    run = run_task(BM25(show_progress=False), ds, k=10, exclude_self=True)
    v = per_query(run, qrels, "hit@1", query_ids=queries["_id"].astype(str).to_numpy()).to_numpy(float)
    return pd.DataFrame({"v": v, "doc": queries["doc_id"].astype(str).to_numpy(),
                         "type": queries["doc_type"].astype(str).to_numpy()})


def sums(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Queries and sum of outcomes per act."""
    g = df.groupby("doc", sort=True)["v"]
    return g.size().to_numpy(float), g.sum().to_numpy(float)


def intervals(n: np.ndarray, s: np.ndarray, B: int, gen: np.random.Generator, lam: float) -> dict[str, dict]:
    """Every candidate's interval (``low``, ``high``; Fieller also its quadratic) on a batch of samples."""
    R, K = n.shape
    out = {"cr2": H.cr2(n, s, LEVEL), "cr3": H.cr3(n, s, LEVEL), "fieller": H.fieller(n, s, LEVEL),
           "cr2_tuned": H.cr2_at_level(n, s, lam), "el": H.el_ratio(n, s, LEVEL),
           "wild_webb": H.wild_webb(n, s, LEVEL, B, gen),
           "wild_rad": _kernels.interval_batch(n, s, s, estimator="micro", method="wild_cluster", level=LEVEL,
                                            n_resamples=B, rng=gen)}
    parts = {m: {"low": [], "high": []} for m in ("hall_eq", "hall_sym", "cr2_calib")}
    for lo in range(0, R, _CHUNK):
        hi = min(R, lo + _CHUNK)
        boot = H.boot_stats(n[lo:hi], s[lo:hi], _kernels._counts_chunk(hi - lo, K, B, gen))
        hall = H.hall_ratio(n[lo:hi], s[lo:hi], boot, LEVEL)
        for m, o in (("hall_eq", hall["equal"]), ("hall_sym", hall["symmetric"]),
                     ("cr2_calib", H.calibrated_cr2(n[lo:hi], s[lo:hi], boot, LEVEL))):
            parts[m]["low"].append(o["low"])
            parts[m]["high"].append(o["high"])
    out.update({m: {k: np.concatenate(v) for k, v in p.items()} for m, p in parts.items()})
    return out


def covers(res: dict[str, dict], truth: float, methods) -> dict[str, np.ndarray]:
    """Per method, whether each interval holds the truth (Fieller: membership of its set, bounded or not)."""
    out = {}
    for m in methods:
        o = res[m]
        out[m] = H.fieller_contains(o, truth) if m == "fieller" else \
            (o["low"] <= truth + 1e-12) & (truth - 1e-12 <= o["high"])
    return out


def by_copies(design: str, pop: str, cov: dict[str, np.ndarray], copies: np.ndarray) -> list[dict]:
    """Coverage of each method among the draws holding the population's largest act 0, 1, 2 and 3+ times."""
    rows = []
    for c in sorted(set(np.minimum(copies, 3).tolist())):
        sel = np.minimum(copies, 3) == c
        row = {"design": design, "population": pop, "copies of largest": f"{c}+" if c == 3 else str(c),
               "share of draws": f"{sel.mean():.3f}"}
        row.update({m: f"{v[sel].mean():.3f}" for m, v in cov.items()})
        rows.append(row)
    return rows


def summarise(design: str, pop: str, K: int, res: dict[str, dict], cov: dict[str, np.ndarray], methods
              ) -> list[dict]:
    """A row per method: coverage +- 2 MC SE, paired difference from CR2, mean width and its ratio to CR2's."""
    w_ref = np.mean(res["cr2"]["high"] - res["cr2"]["low"])
    clip = lambda o: np.clip(o["high"], 0, 1) - np.clip(o["low"], 0, 1)  # noqa: E731  (within [0, 1])
    c_ref = np.mean(clip(res["cr2"]))
    rows = []
    for m in methods:
        c = cov[m].astype(float)
        R = len(c)
        width = res[m]["high"] - res[m]["low"]
        fin = np.isfinite(width)
        d = c - cov["cr2"]
        rows.append({"design": design, "population": pop, "K": K, "method": m,
                     "coverage": f"{c.mean():.3f} ± {2 * math.sqrt(c.mean() * (1 - c.mean()) / R):.3f}",
                     "d cov vs cr2": "-" if m == "cr2" else
                     f"{d.mean():+.3f} ± {2 * d.std(ddof=1) / math.sqrt(R):.3f}",
                     "mean width": f"{width[fin].mean():.4f}",
                     "width/cr2": f"{width[fin].mean() / w_ref:.2f}",
                     "clipped width/cr2": f"{clip(res[m])[fin].mean() / c_ref:.2f}",
                     "unbounded": f"{(~fin).mean():.3f}" if (~fin).any() else "0"})
    return rows


def cell(design: str, pop: str, n_pop, s_pop, idx: np.ndarray, B: int, seed: int, lam: float,
         methods=METHODS) -> tuple[list[dict], list[dict]]:
    """Every method on the draws ``idx`` (R, K) of a population: its summary rows and its coverage by copies."""
    t0 = time.perf_counter()
    gen = np.random.default_rng([seed, 7])
    res = intervals(n_pop[idx], s_pop[idx], B, gen, lam)
    cov = covers(res, s_pop.sum() / n_pop.sum(), methods)
    rows = summarise(design, pop, idx.shape[1], res, cov, methods)
    cond = by_copies(design, pop, cov, (idx == int(np.argmax(n_pop))).sum(1))
    for r in rows + cond:
        print("  " + ", ".join(f"{a}: {b}" for a, b in r.items()), flush=True)
    print(f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    return rows, cond


def describe(name: str, n: np.ndarray, s: np.ndarray) -> str:
    return (f"{name}: {len(n)} acts, {int(n.sum())} queries, largest act {n.max() / n.sum():.0%} of them, "
            f"CV of sizes {n.std() / n.mean():.2f}; micro hit@1 {s.sum() / n.sum():.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=default_data_dir())
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--boot", type=int, default=999)
    ap.add_argument("--tune-reps", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ks", type=int, nargs="+", default=[40, 80])
    args = ap.parse_args()
    print(f"$ {command_line()}")
    t0 = time.perf_counter()
    c100 = census(args.data_dir, 100)
    pops = {"chunk 100": c100, "chunk 50": census(args.data_dir, 50), "chunk 400": census(args.data_dir, 400),
            "dispositivo": census(args.data_dir, config="dispositivo")}
    pops.update({f"chunk 100, {t}": c100[c100["type"] == t] for t in ("portaria", "despacho", "voto")})
    stats = {k: sums(v) for k, v in pops.items()}
    for k, (n, s) in stats.items():
        print(describe(k, n, s))
    n, s = stats["chunk 100"]
    M = len(n)
    tune = np.random.default_rng([args.seed, 99]).integers(0, M, size=(args.tune_reps, M))
    lam = H.tune_cr2_level(n[tune], s[tune], s.sum() / n.sum(), LEVEL)
    print(f"cr2_tuned: nominal level {lam:.4f} (tuned on {args.tune_reps} separate draws of the 100-word world)")
    rows, cond = [], []
    for j, (k, (n, s)) in enumerate(stats.items()):
        print(f"world: {k}", flush=True)
        idx = np.random.default_rng([args.seed, j]).integers(0, len(n), size=(args.reps, len(n)))
        a, b = cell("world", k, n, s, idx, args.boot, args.seed + j, lam)
        rows, cond = rows + a, cond + b
    n, s = stats["chunk 100"]
    for K in args.ks:
        print(f"sample {K} of {M}", flush=True)
        idx = np.argsort(np.random.default_rng([args.seed, K, 5]).random((args.reps, M)), axis=1)[:, :K]
        a, b = cell(f"sample {K}", "chunk 100", n, s, idx, args.boot, args.seed + 1000 + K, lam)
        rows, cond = rows + a, cond + b
    for d in dict.fromkeys(r["design"] + " | " + r["population"] for r in rows):
        print(f"\n### {d}\n")
        print(table([{k: v for k, v in r.items() if k not in ("design", "population")}
                     for r in rows if r["design"] + " | " + r["population"] == d]))
    print("\n### Coverage by copies of the population's largest act\n")
    print(table(cond))
    print(f"\ntotal {time.perf_counter() - t0:.0f} s; peak RSS {peak_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()
