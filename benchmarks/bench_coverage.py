"""Time the article's coverage table: 7 methods, K=20, R=5,000 replicates, B=999 bootstrap resamples.

Run by hand:  python benchmarks/bench_coverage.py [--reps 5000] [--resamples 999] [--repeat 3]
The population is the ANEEL-TAESA twin (simulated once, not timed). Prints the table beside the
article's coverages and the best wall time of ``--repeat`` runs.
"""
from __future__ import annotations

import argparse
import os
import time

from ragcov_data.eval.planning.coverage import coverage_study
from ragcov_data.eval.planning.twin import simulate_population

#: The article's table (estimator, method) -> coverage.
ARTICLE = {
    ("micro", "wald_iid"): 0.295, ("micro", "chunk_bootstrap"): 0.250, ("micro", "deff_wald"): 0.890,
    ("micro", "cr2"): 0.857, ("micro", "bootstrap_t"): 0.884, ("macro", "t"): 0.930, ("macro", "bootstrap_t"): 0.972,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=5000)
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    pop = simulate_population(seed=0)
    best, table = float("inf"), None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        # the article's 7 cells (+ macro cr2, which equals t and costs nothing) in one call, as a user would run it
        tab = coverage_study(pop, k=args.k, reps=args.reps, n_resamples=args.resamples, show_progress=False,
                             methods=["wald_iid", "chunk_bootstrap", "deff_wald", "cr2", "bootstrap_t", "t"])
        best = min(best, time.perf_counter() - t0)
        table = (tab,)
    print(f"{'estimator':9s} {'method':17s} {'twin':>7s} {'±MC':>5s} {'width':>7s} {'article':>8s}")
    for tab in table:
        for _, r in tab.iterrows():
            art = ARTICLE.get((r["estimator"], r["method"]))
            print(f"{r['estimator']:9s} {r['method']:17s} {100 * r['coverage']:6.1f}% {100 * r['mc_margin']:5.1f} "
                  f"{r['mean_width']:7.3f} {'' if art is None else f'{100 * art:7.1f}%'}")
    print(f"\n7 cells, K={args.k}, R={args.reps}, B={args.resamples}: best of {args.repeat} = {best:.2f} s "
          f"(cpus visible: {os.cpu_count()})")


if __name__ == "__main__":
    main()
