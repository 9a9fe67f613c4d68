"""Coverage of single and simultaneous intervals when K documents of the ANEEL census are sampled.

Run by hand:  OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_coverage_sampled.py --data-dir ../shared/data
              [--reps 2000] [--reps-boot 1000] [--reps-family 500] [--seed 0] [--parts single simultaneous design]

The census: five real retrievers (as in ``bench_null_families.py``) on the ANEEL self-retrieval task
(2,312 queries in 147 documents; one document holds 18% of the queries). Its per-query outcomes are the
population; the target is the census value.

1. Single estimates, K = 20, 40, 80, 120 documents drawn *without* replacement (a ``--sample-docs`` task):
   share of samples whose interval contains the census micro / macro value, for each method as
   ``evaluate`` computes it on a sampled task (analytic methods with the correction ``1 - K/N``, named
   ``+fpc``) and without the correction (micro ignores it: flagged ``fpc_ignored``); ``known_sizes`` gets
   every census document's size, as a sampled task records them. ``--chunk-words`` builds the census with
   another chunking (another size distribution: a design the methods were not tuned on).
2. Simultaneous intervals of the five systems' ten pairwise differences, K = 20, 40, 80 documents drawn
   with and without replacement: share of samples in which all ten intervals contain the ten census
   differences, for the micro family with CR2 pairs (``cr2``) and with the wild-cluster hull
   (``wild_cluster``, the leaderboard's), and the macro family with t pairs (``macro t``) and with the
   guarded Hall cluster bootstrap (``macro guarded_hall``, the leaderboard's). ``--parts candidates``: the same coverage for
   the candidate macro critical values of ``bench_null_families.py --candidates`` (sign-flip among them);
   ``--parts min-p``: the micro hull with both parts at the WCR family's single-step min-p level (measured, not
   adopted; ``bench_null_families.py --families 'micro wild_cluster min_p'`` gives its level).

3. The single estimates of part 1 under another draw of K documents: the largest documents taken with
   certainty (a take-all stratum by size), the rest without replacement (``--parts design``).

Margins are 1.96 Monte-Carlo SE.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, peak_rss_mb, table  # noqa: E402
from bench_null_families import (CANDIDATES, RETRIEVERS, candidate_stat, macro_crits, outcomes,  # noqa: E402
                                 wild_joint)

import ragcov_data  # noqa: E402
from ragcov_data.eval.estimates import _kernels  # noqa: E402
from ragcov_data.eval.comparisons._family import family  # noqa: E402

SINGLE = [("micro", "known_sizes", False), ("micro", "cr2", False), ("micro", "bootstrap_t", False),
          ("micro", "wild_cluster", False), ("micro", "cluster_bootstrap", False),
          ("macro", "t", True), ("macro", "t", False), ("macro", "bootstrap_t", False),
          ("macro", "wild_cluster", False)]


def _fmt(c: float, reps: int) -> str:
    return f"{c:.3f} ± {1.96 * math.sqrt(c * (1 - c) / reps):.3f}"


def _census(V: np.ndarray, codes: np.ndarray):
    """Documents K0, per-document n, s, q of the census, and its micro and macro values."""
    K0 = int(codes.max()) + 1
    n = np.bincount(codes, minlength=K0).astype(float)
    s = np.bincount(codes, weights=V, minlength=K0)
    q = np.bincount(codes, weights=V * V, minlength=K0)
    return K0, n, s, q, {"micro": s.sum() / n.sum(), "macro": (s / n).mean()}


def single(V: np.ndarray, codes: np.ndarray, ks, reps: int, reps_boot: int, B: int, seed: int, label: str) -> list:
    K0, n, s, q, truth = _census(V, codes)
    rows = []
    for k in ks:
        rng = np.random.default_rng([seed, k])
        idx = np.argsort(rng.random((reps, K0)), axis=1)[:, :k]
        row = {"outcome": label, "K": k}
        widths: dict[str, float] = {}
        for est, m, fpc in SINGLE:
            R = reps if _kernels.METHODS[m]["kind"] == "analytic" else reps_boot
            pop = {"documents": K0, "sizes": n} if m in _kernels.SIZE_METHODS else {"documents": K0} if fpc else None
            o = _kernels.interval_batch(n[idx[:R]], s[idx[:R]], q[idx[:R]], estimator=est, method=m, n_resamples=B,
                                     rng=np.random.default_rng([seed, k, len(row)]), population=pop)
            c = float(np.mean((o["low"] <= truth[est]) & (truth[est] <= o["high"])))
            row[f"{est} {m}{' +fpc' if fpc else ''}"] = _fmt(c, R)
            if est == "micro" and m in ("known_sizes", "cr2", "bootstrap_t"):
                widths[m] = float(np.mean(o["high"] - o["low"]))
        row["micro mean width: known_sizes / cr2 / bootstrap_t"] = " / ".join(f"{w:.3f}" for w in widths.values())
        rows.append(row)
        print("  " + ", ".join(f"{a}: {b}" for a, b in row.items()), flush=True)
    return rows


def take_all_stratum(sizes: np.ndarray, k: int) -> np.ndarray:
    """Documents taken with certainty when K documents are drawn with a take-all stratum by size: repeatedly,
    every document holding more than ``(queries left) / (documents left to draw)`` queries (its inclusion
    probability under a draw proportional to size would exceed 1; Hidiroglou 1986)."""
    cert = np.zeros(len(sizes), bool)
    while True:
        new = ~cert & (sizes > sizes[~cert].sum() / (k - cert.sum()))
        if not new.any():
            return cert
        cert |= new


TAKE_ALL = [("micro", "cr2", False), ("micro", "bootstrap_t", False), ("macro", "t", True)]


def design_study(V: np.ndarray, codes: np.ndarray, ks, reps: int, reps_boot: int, B: int, seed: int,
                 label: str) -> list:
    """Part 3: the same K documents drawn with a take-all stratum (the largest documents with certainty, the
    rest without replacement). The estimate adds the take-all documents' exact contribution to the rest's
    estimate scaled to the rest's share, ``(S_c + Q_r R) / Q`` (micro) or ``(sum_c m_g + N_r m) / N``
    (macro), so the interval is the rest's interval under that affine map (macro with the rest's
    correction ``1 - k/N_r``). Coverage and mean width; ``srs`` columns are part 1's draw, for width."""
    K0, n, s, q, truth = _census(V, codes)
    rows = []
    for k in ks:
        cert = take_all_stratum(n, k)
        rest = np.flatnonzero(~cert)
        kr = k - int(cert.sum())
        rng = np.random.default_rng([seed, k, 7])
        idx = rest[np.argsort(rng.random((reps, len(rest))), axis=1)[:, :kr]]
        srs = np.argsort(rng.random((reps, K0)), axis=1)[:, :k]
        shift = {"micro": s[cert].sum() / n.sum(), "macro": (s[cert] / n[cert]).sum() / K0}
        scale = {"micro": n[rest].sum() / n.sum(), "macro": len(rest) / K0}
        row = {"outcome": label, "K": k, "take-all documents": int(cert.sum())}
        for est, m, fpc in TAKE_ALL:
            R = reps if _kernels.METHODS[m]["kind"] == "analytic" else reps_boot
            kw = dict(estimator=est, method=m, n_resamples=B, rng=np.random.default_rng([seed, k, len(row)]))
            o = _kernels.interval_batch(n[idx[:R]], s[idx[:R]], q[idx[:R]], **kw,
                                     population={"documents": len(rest)} if fpc else None)
            low, high = shift[est] + scale[est] * o["low"], shift[est] + scale[est] * o["high"]
            c = float(np.mean((low <= truth[est]) & (truth[est] <= high)))
            o2 = _kernels.interval_batch(n[srs[:R]], s[srs[:R]], q[srs[:R]], **kw,
                                      population={"documents": K0} if fpc else None)
            name = f"{est} {m}{' +fpc' if fpc else ''}"
            row[name] = _fmt(c, R)
            row[f"{name} width (srs)"] = f"{np.mean(high - low):.3f} ({np.mean(o2['high'] - o2['low']):.3f})"
        rows.append(row)
        print("  " + ", ".join(f"{a}: {b}" for a, b in row.items()), flush=True)
    return rows


#: Part 2's families: (column, estimator, pair test of ``family``, level of the micro hull ``_family.WILD_JOINT``).
FAMILIES = [("micro cr2", "micro", "cr2", None), ("micro wild_cluster", "micro", "wild_cluster", "bonferroni"),
            ("macro t", "macro", "cr2", None), ("macro guarded_hall", "macro", "wild_cluster", None)]
#: ``--parts min-p``: the micro hull at the WCR family's min-p level (measured, not adopted), on part 2's samples.
MIN_P = [("micro wild_cluster min_p", "micro", "wild_cluster", "min_p")]


def simultaneous(V: np.ndarray, codes: np.ndarray, ks, reps: int, B: int, seed: int, label: str,
                 families=FAMILIES) -> list:
    S = V.shape[0]
    K0 = int(codes.max()) + 1
    n = np.bincount(codes, minlength=K0).astype(float)
    sums = np.array([np.bincount(codes, weights=v, minlength=K0) for v in V])
    ia, ib = np.triu_indices(S, 1)
    truth = {"micro": sums.sum(1) / n.sum(), "macro": (sums / n).mean(1)}
    truth = {e: t[ia] - t[ib] for e, t in truth.items()}
    members = [np.flatnonzero(codes == c) for c in range(K0)]
    rows = []
    for repl in (True, False):
        for k in ks:
            row = {"outcome": label, "draw": "with replacement" if repl else "without replacement", "K": k}
            for name, est, pt, joint in families:
                rng = np.random.default_rng([seed, k, int(repl)])
                hit = 0
                with wild_joint(joint):
                    for _ in range(reps):
                        pick = rng.integers(0, K0, k) if repl else rng.permutation(K0)[:k]
                        rows_ = np.concatenate([members[c] for c in pick])
                        cc = np.repeat(np.arange(k), n[pick].astype(int))
                        f = family(V[:, rows_], cc, k, estimator=est, level=0.95, n_resamples=B, rng=rng,
                                   pair_test=pt)
                        pr = f["pairs"]
                        hit += bool(np.all((pr["low"] <= truth[est] + 1e-12) & (truth[est] - 1e-12 <= pr["high"])))
                row[name] = _fmt(hit / reps, reps)
            rows.append(row)
            print("  " + ", ".join(f"{a}: {b}" for a, b in row.items()), flush=True)
    return rows


def candidates(V: np.ndarray, codes: np.ndarray, ks, reps: int, B: int, seed: int, label: str) -> list:
    """``--candidates``: part 2's simultaneous coverage of the ten macro differences for each candidate critical
    value of ``bench_null_families.macro_crits`` (its statistic at the census difference within ``c``), on the
    same samples."""
    K0 = int(codes.max()) + 1
    n = np.bincount(codes, minlength=K0)
    means = np.array([np.bincount(codes, weights=v, minlength=K0) / n for v in V])
    ia, ib = np.triu_indices(V.shape[0], 1)
    X0 = means[ia] - means[ib]
    truth = X0.mean(1)
    rows = []
    for repl in (True, False):
        for k in ks:
            rng = np.random.default_rng([seed, k, int(repl), 3])
            hit = dict.fromkeys(CANDIDATES, 0)
            for _ in range(reps):
                X = X0[:, rng.integers(0, K0, k) if repl else rng.permutation(K0)[:k]]
                for name, c in macro_crits(X, 0.95, B, rng).items():
                    hit[name] += bool(np.all(candidate_stat(X, truth, name) <= c * (1 + 1e-12)))
            row = {"outcome": label, "draw": "with replacement" if repl else "without replacement", "K": k}
            row.update({name: _fmt(h / reps, reps) for name, h in hit.items()})
            rows.append(row)
            print("  " + ", ".join(f"{a}: {b}" for a, b in row.items()), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("RAGCOV_DATA_DIR", "../shared/data"))
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--reps-boot", type=int, default=1000)
    ap.add_argument("--reps-family", type=int, default=500)
    ap.add_argument("--n-resamples", type=int, default=999)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk-words", type=int, default=100, help="the census's chunking (default 100 words)")
    ap.add_argument("--parts", nargs="+", default=["single", "simultaneous", "design"],
                    choices=["single", "simultaneous", "design", "candidates", "min-p"],
                    help="which studies to run (default: all three)")
    args = ap.parse_args()
    print(f"$ {command_line()}")
    t0 = time.perf_counter()
    aneel = ragcov_data.load_dataset("aneel_taesa", data_dir=args.data_dir, chunk_words=args.chunk_words,
                                     show_progress=False)
    vals, q = outcomes(aneel, ("hit@1", "ndcg@10"), exclude_self=True)
    codes = pd.factorize(q["doc_id"])[0]
    print(f"ANEEL census: {len(codes)} queries in {codes.max() + 1} documents; systems {', '.join(RETRIEVERS)}")
    if "single" in args.parts:
        print(f"\n1. single estimates (bm25), K of {codes.max() + 1} documents without replacement; B =",
              args.n_resamples)
        rows = []
        for m in ("hit@1", "ndcg@10"):
            ks = tuple(k for k in (20, 40, 80, 120) if k < codes.max() + 1)
            rows += single(vals[m][0], codes, ks, args.reps, args.reps_boot, args.n_resamples, args.seed, f"bm25 {m}")
        print()
        print(table(rows))
    if "simultaneous" in args.parts:
        print("\n2. simultaneous intervals of the 10 differences of 5 systems (hit@1); B =", args.n_resamples)
        rows = simultaneous(vals["hit@1"], codes, (20, 40, 80), args.reps_family, args.n_resamples, args.seed, "hit@1")
        print()
        print(table(rows))
    if "min-p" in args.parts:
        print("\n2c. the micro hull at the WCR family's min-p level (not the leaderboard's): simultaneous coverage of "
              "the 10 differences of 5 systems (hit@1), part 2's samples; B =", args.n_resamples)
        rows = simultaneous(vals["hit@1"], codes, (20, 40, 80), args.reps_family, args.n_resamples, args.seed, "hit@1",
                            families=MIN_P)
        print()
        print(table(rows))
    if "candidates" in args.parts:
        print("\n2b. macro candidates (bench_null_families.macro_crits): simultaneous coverage of the 10 differences "
              "of 5 systems (hit@1); B =", args.n_resamples)
        rows = candidates(vals["hit@1"][:5], codes, (20, 40, 80), args.reps_family, args.n_resamples, args.seed,
                          "hit@1")
        print()
        print(table(rows))
    if "design" in args.parts:
        print("\n3. a take-all stratum by size, K of 147 documents (bm25); B =", args.n_resamples)
        rows = []
        for m in ("hit@1", "ndcg@10"):
            rows += design_study(vals[m][0], codes, (20, 40, 80, 120), args.reps, args.reps_boot, args.n_resamples,
                                 args.seed, f"bm25 {m}")
        print()
        print(table(rows))
    print(f"\ntotal {time.perf_counter() - t0:.0f} s; peak RSS {peak_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()
