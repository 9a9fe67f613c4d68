"""Are ``verified`` rows and the recommended row right about the census? A grid of designs, micro and macro.

Run by hand:  OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_verified_grid.py [--data-dir ../shared/data]
              [--parts aneel juristcu superpop] [--cuts 50 100 400 dispositivo] [--ks 20 40 80] [--seeds 20]
              [--census-reps 1000] [--census-resamples 99] [--draws 200] [--cache-dir DIR]

``aneel``: the census is bm25 hit@1 on the ANEEL self-retrieval task at each cut (chunk size in words, or
the dispositivo chunking). For each K and seed 0..S-1 the K documents a ``--sample-docs K --seed s`` task draws
are the sample, under two designs: ``no sizes`` (``population_sizes=N``, an int) and ``sizes`` (every
population document's size, as a ``--sample-docs`` task records them). Each sample's table is built as
``evaluate`` builds it (its seed 0 and 5,000 replicates; the population as the task records it), checked
(``verify_intervals``) and marked (``mark_recommended(sampled=True)``). A row's *conditional coverage* is its
method's coverage over ``--census-reps`` draws of K census documents without replacement that agree with the
sample on holding the largest document (micro and macro alike), MC SE ``sqrt(c (1 - c) / draws)``; a draw's
bootstrap intervals use the check's 99 replicates (``--census-resamples``: more, to see what that costs).

``juristcu``: the same on bm25 nDCG@10 on JurisTCU, the sampled unit the source summary (``source_key``, at
most two queries each), without sizes; no source is large, so the coverage is over every draw of K sources.

``superpop``: ``--draws`` draws of the 147 ANEEL acts (chunk 100) with replacement, each copy its own cluster,
each evaluated as a census (no population; ``mark_recommended(sampled=False)``): per estimator, whether the
recommended row is verified and whether it contains the 147-act census value.
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir, peak_rss_mb, table  # noqa: E402
import _verified_grid as G  # noqa: E402


def cell(v, codes, keys, k: int, sized: bool, seeds: int, big: int | None, cond: dict, cache: str) -> list[dict]:
    """Per-seed records of one (census, K, design): each row's status, recommendation, conditional coverage
    and whether its interval contains the census value."""
    n, s, q = G.cluster_sums(v, codes)
    truth = G.truths(n, s)
    K0 = len(n)
    recs = []
    for seed in range(seeds):
        pick = G.sample_docs(keys, k, seed)
        holds = big is not None and bool((pick == big).any())
        vals = np.concatenate([v[codes == c] for c in pick])
        cl = np.repeat(np.arange(k), n[pick].astype(int))
        t = G.sample_table(vals, cl, float(K0), n if sized else None, cache)
        for _, r in t.iterrows():
            est, m = r["estimator"], r["method"]
            recs.append({"seed": seed, "estimator": est, "method": m, "status": r["verified_status"],
                         "recommended": bool(r["recommended"]), "cond": cond[(est, m)][holds],
                         "contains": bool(r["low"] <= truth[est] <= r["high"])})
    return recs


def grid(name: str, v, codes, keys, ks, seeds: int, designs, census_reps: int, cache: str,
         condition: bool, B: int) -> list[dict]:
    n, s, q = G.cluster_sums(v, codes)
    big = int(np.argmax(n)) if condition else None
    rows = []
    for k in ks:
        t0 = time.perf_counter()
        cond = G.class_coverage(n, s, q, k, big, census_reps, 0, B=B)
        for sized in designs:
            recs = cell(v, codes, keys, k, sized, seeds, big, cond, cache)
            head = {"census": name, "K": k, "design": "sizes" if sized else "no sizes"}
            new = G.summary_rows(recs, head)
            for r in new:
                print("  " + ", ".join(f"{a}: {b}" for a, b in r.items()), flush=True)
            rows += new
        print(f"  [{name} K={k}: {time.perf_counter() - t0:.0f} s]", flush=True)
    return rows


def superpop(v, codes, draws: int, cache: str) -> list[dict]:
    """Census evaluations of ``draws`` with-replacement draws of the census's clusters (each copy its own)."""
    n, s, q = G.cluster_sums(v, codes)
    truth = G.truths(n, s)
    K0 = len(n)
    by = [v[codes == c] for c in range(K0)]
    rng = np.random.default_rng([2026, 12, 5])
    big = int(np.argmax(n))
    recs = []
    for d in range(draws):
        idx = rng.integers(0, K0, K0)
        vals = np.concatenate([by[c] for c in idx])
        cl = np.repeat(np.arange(K0), n[idx].astype(int))
        t = G.sample_table(vals, cl, None, None, cache)
        for _, r in t.iterrows():
            recs.append({"draw": d, "estimator": r["estimator"], "method": r["method"],
                         "copies of largest": min(int((idx == big).sum()), 2),
                         "status": r["verified_status"], "recommended": bool(r["recommended"]),
                         "contains": bool(r["low"] <= truth[r["estimator"]] <= r["high"])})
        if d % 20 == 19:
            print(f"  superpop: {d + 1} draws", flush=True)
    return superpop_rows(pd.DataFrame(recs), draws) + by_copies(pd.DataFrame(recs))


def _cov(g: pd.DataFrame) -> dict[str, str]:
    ver = g[g["status"] == "verified"]
    if ver.empty:
        return {"verified": "0", "coverage of verified": "-", "MC SE": "-"}
    c = float(ver["contains"].mean())
    return {"verified": f"{len(ver)}", "coverage of verified": f"{c:.3f}",
            "MC SE": f"{math.sqrt(max(c * (1 - c), 1 / len(ver)) / len(ver)):.3f}"}


def superpop_rows(df: pd.DataFrame, draws: int) -> list[dict]:
    rows = []
    for (est, m), g in df.groupby(["estimator", "method"], sort=False):
        rows.append({"estimator": est, "method": m, "draws": draws, **_cov(g),
                     "coverage of all": f"{g['contains'].mean():.3f}"})
    for est, g in df[df["recommended"]].groupby("estimator", sort=False):
        picks = ", ".join(f"{m} {c}" for m, c in g["method"].value_counts().items())
        rows.append({"estimator": est, "method": f"recommended ({picks})", "draws": draws, **_cov(g),
                     "coverage of all": f"{g['contains'].mean():.3f}"})
    return rows


def by_copies(df: pd.DataFrame) -> list[dict]:
    """The recommended rows by how many copies of the largest act the draw holds (2: two or more)."""
    rows = []
    for (est, c), g in df[df["recommended"]].groupby(["estimator", "copies of largest"], sort=True):
        rows.append({"estimator": est, "method": f"recommended, {c}{'+' if c == 2 else ''} copies of the largest",
                     "draws": len(g), **_cov(g), "coverage of all": f"{g['contains'].mean():.3f}"})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=default_data_dir())
    ap.add_argument("--parts", nargs="+", default=["aneel", "juristcu", "superpop"],
                    choices=["aneel", "juristcu", "superpop"])
    ap.add_argument("--cuts", nargs="+", default=["50", "100", "400", "dispositivo"])
    ap.add_argument("--ks", type=int, nargs="+", default=[20, 40, 80])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--census-reps", type=int, default=1000, help="census draws per class of a conditional coverage")
    ap.add_argument("--census-resamples", type=int, default=G.V.VERIFY_RESAMPLES,
                    help="bootstrap replicates of a census draw's interval (default: the check's)")
    ap.add_argument("--draws", type=int, default=200, help="superpopulation draws")
    ap.add_argument("--cache-dir", default=None, help="verification cache (default: a fresh temporary folder)")
    args = ap.parse_args()
    print(f"$ {command_line()}", flush=True)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache_dir or tmp
        if "aneel" in args.parts:
            rows = []
            for cut in args.cuts:
                v, codes, docs = G.aneel_census(args.data_dir, cut)
                n = np.bincount(codes)
                print(f"ANEEL {cut}: {len(v)} queries in {len(n)} documents, largest {n.max()} "
                      f"({n.max() / n.sum():.1%}); bm25 hit@1 micro {v.mean():.4f}", flush=True)
                rows += grid(f"ANEEL {cut}", v, codes, docs, args.ks, args.seeds, (False, True),
                             args.census_reps, cache, condition=True, B=args.census_resamples)
            print("\n" + table(rows) + "\n", flush=True)
        if "juristcu" in args.parts:
            v, codes, keys, micro = G.juristcu_census(args.data_dir)
            print(f"JurisTCU: {len(v)} queries in {codes.max() + 1} sources; bm25 nDCG@10 micro {v.mean():.4f} "
                  f"(evaluate: {micro:.4f})", flush=True)
            rows = grid("JurisTCU", v, codes, keys, args.ks, args.seeds, (False,), args.census_reps, cache,
                        condition=False, B=args.census_resamples)
            print("\n" + table(rows) + "\n", flush=True)
        if "superpop" in args.parts:
            v, codes, _ = G.aneel_census(args.data_dir, "100")
            print(f"superpopulation of the {codes.max() + 1} ANEEL acts (chunk 100): {args.draws} draws", flush=True)
            print("\n" + table(superpop(v, codes, args.draws, cache)) + "\n", flush=True)
    print(f"total {time.perf_counter() - t0:.0f} s; peak RSS {peak_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()
