"""Is a ``verified`` flag on a document sample right about the census? Conditional coverage of the check.

Run by hand:  OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_verified_sampled.py [--data-dir ../shared/data]
              [--seeds 20] [--ks 40 80] [--chunk-words 75 150] [--census-reps 4000] [--old]

The census: bm25 hit@1 on the ANEEL self-retrieval task at the given chunk sizes (every chunk a query; at 75
words one document holds 568 of 3,062 queries). For each chunk size, K and seed 0..S-1 the K documents a
``--sample-docs K --seed s`` task draws (:func:`ragcov_data.tasks.sampling` keys) are the sample; each micro
method's interval is computed on it as ``evaluate`` does, and its check (``eval/estimates/verify.py``) run
on it, with the population's sizes as the sample records them (``--old``: also the check without them, the
twin built from the sample alone).

A sample's *conditional coverage* for a method is the method's coverage over ``--census-reps`` draws of K of
the census's documents without replacement that agree with the sample on whether they hold the largest
document (the case a sample cannot see). A table row per (chunk size, K, method): share of seeds marked
``verified`` / ``unverifiable``, the mean conditional coverage of the verified ones (the number that must
stay >= 0.93), and the share of verified intervals that contain the census value. MC SE of a conditional
coverage: sqrt(c (1 - c) / draws in its class), printed as the largest over the verified seeds.
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

import ragcov_data  # noqa: E402
from ragcov_data.baselines import BM25  # noqa: E402
from ragcov_data.execution.engine import run_task  # noqa: E402
from ragcov_data.eval.estimates import _kernels  # noqa: E402
from ragcov_data.eval.estimates import verify as V  # noqa: E402
from ragcov_data.tasks.sampling import _keys  # noqa: E402

METHODS = ("known_sizes", "cr2", "bootstrap_t", "wild_cluster", "cluster_bootstrap")
B = V.VERIFY_RESAMPLES


def census_outcomes(data_dir: str, chunk_words: int | str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-query bm25 hit@1 of the census at ``chunk_words`` (a chunk size in words, or ``"dispositivo"``),
    the document code of each query and the document ids."""
    from ragcov_data.eval.outcomes.metrics import per_query

    cut = {"config_name": "dispositivo"} if chunk_words == "dispositivo" else {"chunk_words": int(chunk_words)}
    ds = ragcov_data.load_dataset("aneel_taesa", data_dir=data_dir, show_progress=False, **cut)
    queries, qrels = ds["queries"].to_pandas(), ds["qrels"].to_pandas()
    run = run_task(BM25(show_progress=False), ds, k=10, exclude_self=True)
    v = per_query(run, qrels, "hit@1", query_ids=queries["_id"].astype(str).to_numpy()).to_numpy(float)
    codes, docs = pd.factorize(queries["doc_id"].astype(str))
    return v, codes, np.asarray(docs)


def sample_docs(docs: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Codes of the K documents a ``--sample-docs K --seed seed`` task draws (the smallest hashed keys)."""
    return np.argsort(_keys(list(docs), seed), kind="stable")[:k]


def conditional_coverage(n, s, q, k: int, reps: int, seed: int) -> dict:
    """Per method: coverage among census draws holding / missing the largest document, and their counts."""
    K0 = len(n)
    rng = np.random.default_rng([seed, k, 11])
    idx = np.argsort(rng.random((reps, K0)), axis=1)[:, :k]
    big = int(np.argmax(n))
    holds = (idx == big).any(1)
    truth = s.sum() / n.sum()
    pop = {"documents": float(K0), "sizes": n}
    out = {}
    for j, m in enumerate(METHODS):
        o = _kernels.interval_batch(n[idx], s[idx], q[idx], estimator="micro", method=m, n_resamples=B,
                                 rng=np.random.default_rng([seed, k, j]), population=pop)
        hit = (o["low"] <= truth + 1e-12) & (truth - 1e-12 <= o["high"])
        out[m] = {True: (float(hit[holds].mean()), int(holds.sum())),
                  False: (float(hit[~holds].mean()), int((~holds).sum()))}
    return out


def study(v, codes, docs, chunk_words: int, ks, seeds: int, census_reps: int, old: bool, cache: str) -> list[dict]:
    K0 = int(codes.max()) + 1
    n = np.bincount(codes, minlength=K0).astype(float)
    s = np.bincount(codes, weights=v, minlength=K0)
    q = np.bincount(codes, weights=v * v, minlength=K0)
    truth = s.sum() / n.sum()
    big = int(np.argmax(n))
    rows = []
    for k in ks:
        cond = conditional_coverage(n, s, q, k, census_reps, 0)
        recs = {m: [] for m in METHODS}
        for seed in range(seeds):
            pick = sample_docs(docs, k, seed)
            holds = bool((pick == big).any())
            vals = np.concatenate([v[codes == c] for c in pick])
            cl = np.repeat(np.arange(k), n[pick].astype(int))
            design = V.design_of(vals, cl, population=float(K0), seed=seed, sizes=n)
            new = V.verify_design(design, [("micro", m) for m in METHODS], cache_dir=cache)
            prev = V.verify_design({**design, "sizes": None}, [("micro", m) for m in METHODS], cache_dir=cache) \
                if old else {}
            for j, m in enumerate(METHODS):
                o = _kernels.interval_batch(n[pick], s[pick], q[pick], estimator="micro", method=m, n_resamples=999,
                                         rng=np.random.default_rng([seed, j]),
                                         population={"documents": float(K0), "sizes": n})
                contains = bool(o["low"][0] <= truth <= o["high"][0])
                r = new.get(f"micro/{m}", {})
                recs[m].append({"seed": seed, "holds": holds, "contains": contains,
                                "status": r.get("verified_status"), "coverage": r.get("verified_coverage"),
                                "old": (prev.get(f"micro/{m}") or {}).get("verified"),
                                "cond": cond[m][holds]})
        for m in METHODS:
            df = pd.DataFrame(recs[m])
            ver = df[df["status"] == "verified"]
            row = {"chunk": chunk_words, "K": k, "method": m, "seeds": len(df),
                   "holds largest": int(df["holds"].sum()),
                   "verified": f"{len(ver) / len(df):.2f}",
                   "unverifiable": f"{(df['status'] == 'unverifiable').mean():.2f}",
                   "cond. cov. of verified": "-" if ver.empty else
                   f"{np.mean([c for c, _ in ver['cond']]):.3f} (min {min(c for c, _ in ver['cond']):.3f})",
                   "MC SE": "-" if ver.empty else
                   f"{max(math.sqrt(c * (1 - c) / r) for c, r in ver['cond']):.3f}",
                   "verified contain census": "-" if ver.empty else f"{ver['contains'].mean():.2f}",
                   "cond. cov. all seeds": f"{np.mean([c for c, _ in df['cond']]):.3f}"}
            if old:
                vo = df[df["old"] == True]  # noqa: E712
                row["old: verified"] = f"{len(vo) / len(df):.2f}"
                row["old: cond. cov. of verified"] = "-" if vo.empty else f"{np.mean([c for c, _ in vo['cond']]):.3f}"
            rows.append(row)
            print("  " + ", ".join(f"{a}: {b}" for a, b in row.items()), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=default_data_dir())
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--ks", type=int, nargs="+", default=[40, 80])
    ap.add_argument("--chunk-words", type=int, nargs="+", default=[75, 150])
    ap.add_argument("--census-reps", type=int, default=4000)
    ap.add_argument("--old", action="store_true", help="also the check without the population's sizes")
    ap.add_argument("--cache-dir", default=None, help="verification cache (default: a fresh temporary folder)")
    args = ap.parse_args()
    print(f"$ {command_line()}")
    t0 = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for cw in args.chunk_words:
            v, codes, docs = census_outcomes(args.data_dir, cw)
            print(f"ANEEL at {cw} words: {len(codes)} queries in {codes.max() + 1} documents, largest "
                  f"{np.bincount(codes).max()}; bm25 hit@1 = {v.mean():.4f}", flush=True)
            rows += study(v, codes, docs, cw, args.ks, args.seeds, args.census_reps, args.old, args.cache_dir or tmp)
    print()
    print(table(rows))
    print(f"\ntotal {time.perf_counter() - t0:.0f} s; peak RSS {peak_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()
