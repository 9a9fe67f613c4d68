"""Time ``leaderboard`` on 20 real runs of the ANEEL task (chunks-100, 2,312 queries), B = 5,000, against
ranx's ``compare`` on the same runs, in one process.

Run by hand:  python benchmarks/bench_leaderboard.py --data-dir ../shared/data [--n-resamples 5000] [--repeats 3]
              [--fisher]

The 20 runs are real retrievers (top 10, own chunk excluded): BM25 in its five variants (okapi, robertson,
lucene, bm25l, bm25+) at three (k1, b) settings, and TF-IDF with sublinear/raw tf x min_df 1/2 plus one
without idf smoothing. Timings (best and median of ``--repeats``, runs already in memory):

- ``leaderboard(runs, task, metric="hit@1", n_resamples=B)`` end to end (reading and checking the runs,
  scoring every query of every run, per-system intervals, every pair, the shared cluster bootstrap,
  ranks, tiers);
- the family statistics alone (``eval._family.family`` on the 20 x 2,312 matrix of per-query values);
- ranx ``compare(qrels, runs, metrics="hit_rate@1", max_p=0.05, stat_test="student")``: its first call
  in this process (numba JIT compile / cache load included) and the warm calls (JIT excluded); with
  ``--fisher`` also ``stat_test="fisher", n_permutations=B`` (once: it is slow). Converting the
  DataFrames to ranx ``Qrels``/``Run`` is timed apart and not counted in ``compare``.

Also printed: how many of the 190 pairs each declares different at 5% — ranx unadjusted per pair
(its only option), ragcov Holm-adjusted (and, for reference, ragcov's own unadjusted count) — and the
largest difference between the two libraries' per-system means (tie order can differ).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, peak_rss_mb  # noqa: E402

import ragcov_data  # noqa: E402
from ragcov_data.baselines import BM25, TfIdf  # noqa: E402
from ragcov_data.execution.engine import run_task  # noqa: E402
from ragcov_data.eval import leaderboard  # noqa: E402
from ragcov_data.eval.comparisons._family import family  # noqa: E402
from ragcov_data.eval.outcomes.metrics import per_query  # noqa: E402
from ragcov_data.eval.outcomes.metrics._lists import prepare_qrels  # noqa: E402

BM25_VARIANTS = ("okapi", "robertson", "lucene", "bm25l", "bm25+")
BM25_PARAMS = ((1.2, 0.75), (1.5, 0.75), (0.9, 0.4))
TFIDF = (("tfidf_sub_df1", dict(sublinear_tf=True, min_df=1)), ("tfidf_sub_df2", dict(sublinear_tf=True, min_df=2)),
         ("tfidf_raw_df1", dict(sublinear_tf=False, min_df=1)), ("tfidf_raw_df2", dict(sublinear_tf=False, min_df=2)),
         ("tfidf_nosmooth", dict(smooth_idf=False)))


def make_runs(ds, k: int = 10) -> dict[str, pd.DataFrame]:
    """The 20 real runs (see the module docstring)."""
    runs: dict[str, pd.DataFrame] = {}
    for variant in BM25_VARIANTS:
        for k1, b in BM25_PARAMS:
            runs[f"{variant}_k{k1}_b{b}"] = run_task(BM25(k1=k1, b=b, variant=variant, show_progress=False), ds, k=k,
                                                     exclude_self=True)
    for name, kw in TFIDF:
        runs[name] = run_task(TfIdf(show_progress=False, **kw), ds, k=k, exclude_self=True)
    return runs


def timed(fn, repeats: int):
    """(result of the last call, list of wall times)."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, times


def fmt(times: list[float]) -> str:
    return f"best {min(times):.2f} s, median {np.median(times):.2f} s over {len(times)}"


def ranx_objects(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame):
    from ranx import Qrels, Run

    qd: dict[str, dict[str, int]] = {}
    for q, d, s in zip(qrels["query-id"].astype(str), qrels["corpus-id"].astype(str), qrels["score"].astype(int)):
        qd.setdefault(q, {})[d] = s
    rx = []
    for name, df in runs.items():
        rd: dict[str, dict[str, float]] = {}
        for q, d, s in zip(df["query-id"].astype(str), df["corpus-id"].astype(str), df["score"].astype(float)):
            rd.setdefault(q, {})[d] = s
        rx.append(Run(rd, name=name))
    return Qrels(qd), rx


def ranx_pairs(report, names: list[str], alpha: float, metric: str) -> tuple[int, int]:
    """(pairs declared different at ``alpha``, pairs) from a ranx Report (each pair once)."""
    hits = total = 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            p = report.comparisons[frozenset([a, b])][metric]["p_value"]
            hits += bool(p < alpha)
            total += 1
    return hits, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("RAGCOV_DATA_DIR", "../shared/data"))
    ap.add_argument("--chunk-words", type=int, default=100)
    ap.add_argument("--n-resamples", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--fisher", action="store_true", help="also time ranx's Fisher randomization test (slow)")
    args = ap.parse_args()
    print(f"$ {command_line()}")
    B, alpha = args.n_resamples, 0.05

    ds = ragcov_data.load_dataset("aneel_taesa", data_dir=args.data_dir, chunk_words=args.chunk_words,
                                  show_progress=False)
    t0 = time.perf_counter()
    runs = make_runs(ds)
    t_runs = time.perf_counter() - t0
    queries, qrels = ds["queries"].to_pandas(), ds["qrels"].to_pandas()
    print(f"ANEEL task: {len(queries):,} queries in {queries['doc_id'].nunique()} documents, {len(qrels):,} qrels "
          f"rows; {len(runs)} runs built in {t_runs:.1f} s; B = {B:,}; cores: {os.cpu_count()}")

    # ---- ragcov: end to end, then the family statistics alone ------------------------------------
    res, t_lb = timed(lambda: leaderboard(runs, ds, metric="hit@1", n_resamples=B), args.repeats)
    qids = queries["_id"].astype(str).to_numpy()
    V, t_pq = timed(lambda: np.array([per_query(r, qrels, "hit@1", query_ids=qids).to_numpy(float)
                                      for r in runs.values()]), args.repeats)
    _, t_pq1 = timed(lambda: (lambda pq: [per_query(r, pq, "hit@1", query_ids=qids) for r in runs.values()])(
        prepare_qrels(qrels)), args.repeats)
    codes, uniq = pd.factorize(queries["doc_id"], sort=False)
    fam, t_fam = timed(lambda: family(V, codes, len(uniq), estimator="micro", level=0.95, n_resamples=B,
                                      rng=np.random.default_rng(0)), args.repeats)
    pairs = res.pairs[res.pairs["group"] == "__all__"]
    n_holm, n_unadj, n_pairs = int((pairs["p_adj"] < alpha).sum()), int((pairs["p"] < alpha).sum()), len(pairs)
    n_simul = int(((pairs["low"] > 0) | (pairs["high"] < 0)).sum())
    print(f"\nragcov leaderboard(20 runs, hit@1, B={B}) end to end: {fmt(t_lb)}  (goal < 5 s)")
    print(f"  scoring 20 runs per query alone, qrels ({len(qrels):,} rows) re-prepared for each run "
          f"(per_query(run, qrels) x 20, the cost before the leaderboard prepared them once): {fmt(t_pq)}")
    print(f"  the same with the qrels prepared once (prepare_qrels, as leaderboard does now): {fmt(t_pq1)}")
    print(f"  family statistics alone (20 x {V.shape[1]}, K = {len(uniq)}, 190 pairs): {fmt(t_fam)}")
    print(f"  pairs declared different at 5%: Holm {n_holm}/{n_pairs}, simultaneous interval excludes 0 "
          f"{n_simul}/{n_pairs} (ragcov unadjusted CR2: {n_unadj}/{n_pairs}); tiers: "
          f"{' '.join(sorted(set(res.systems['tier'])))}")

    # ---- ranx ----------------------------------------------------------------------------------
    try:
        from ranx import compare
    except ImportError:
        print("\nranx is not installed: pip install ranx  (skipping the comparison)")
        return
    t0 = time.perf_counter()
    rq, rruns = ranx_objects(runs, qrels)
    t_conv = time.perf_counter() - t0
    names = list(runs)
    m = "hit_rate@1"
    call = lambda test, **kw: compare(rq, rruns, metrics=[m], max_p=alpha, stat_test=test, **kw)  # noqa: E731
    t0 = time.perf_counter()
    rep = call("student")
    t_first = time.perf_counter() - t0
    rep, t_warm = timed(lambda: call("student"), args.repeats)
    n_rx, _ = ranx_pairs(rep, names, alpha, m)
    means = res.systems.set_index("name")["estimate"]
    gap = max(abs(rep.results[n][m] - means[n]) for n in names)
    print(f"\nranx Qrels/Run from dicts (not counted below): {t_conv:.2f} s")
    print(f"ranx compare(hit_rate@1, student): first call in this process (numba JIT included) {t_first:.2f} s; "
          f"warm (JIT excluded) {fmt(t_warm)}")
    print(f"  pairs declared different at 5% (unadjusted, per pair): {n_rx}/{n_pairs}; "
          f"largest |mean ranx - mean ragcov| over the 20 runs: {gap:.2e}")
    print(f"ratio ragcov leaderboard / ranx compare student (best vs best, warm): {min(t_lb) / min(t_warm):.2f}; "
          f"vs ranx first call: {min(t_lb) / t_first:.2f}")
    if args.fisher:
        t0 = time.perf_counter()
        rep_f = call("fisher", n_permutations=B)
        t_f = time.perf_counter() - t0
        n_f, _ = ranx_pairs(rep_f, names, alpha, m)
        print(f"ranx compare(hit_rate@1, fisher, n_permutations={B}), once: its first call in this process "
              f"(any JIT of the permutation kernel included): {t_f:.2f} s; pairs different at 5% (unadjusted): "
              f"{n_f}/{n_pairs}; ratio ragcov / ranx fisher: {min(t_lb) / t_f:.3f}")
    print(f"\npeak RSS {peak_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()
