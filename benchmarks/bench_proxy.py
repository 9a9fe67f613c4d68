"""Coverage of the proxy study's interval for Kendall's tau, on pairs of tasks drawn from the real ones.

Run by hand:  OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_proxy.py --data-dir ../shared/data
              [--reps 500] [--n-resamples 499] [--level 0.95] [--seed 0] [--datasets irpf lgpd]
              [--units act artigo] [--spreads 2 4] [--json proxy-coverage.json]

For each cited-questions corpus (IRPF: 174 questions clustered by topic; LGPD: 350 clustered by exam) the proxy
study (:func:`ragcov_data.jobs.proxy.proxy_study`, ``ragcov proxy``'s defaults: every fast retriever at
words-100, and bm25-pt under words-50/100/200/dispositivo) gives, per family and per unit (acts or artigos as
documents), the two tasks' observed values: self-retrieval hit@1 per document, span_recall@1000w per question.
Each pair of value tables is the population of :func:`ragcov_data.eval.planning.proxy_coverage.proxy_coverage`:
``--reps`` simulated pairs of tasks of the real designs (as many documents and clusters, drawn with replacement),
the systems' true scores spaced exactly as observed, the proxy's systems relabelled to plant the true agreement
(identical, reversed, independent, or a known tau near 0.5). For each the script prints the coverage of the
compatible-orders interval (the study's) and of the joint bootstrap's percentile interval, with Monte-Carlo SEs,
the mean width, and how often the interval excludes 0. ``--spreads`` repeats the identical-orders scenario with
the gaps between the systems' true scores multiplied (on both tasks), on the artigo families: how large the
gaps must be before the interval can tell agreement from none. Deterministic for a seed; every table is also
written to ``--json``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir  # noqa: E402

from ragcov_data._format import num, pct  # noqa: E402
from ragcov_data.eval.planning.proxy_coverage import proxy_coverage  # noqa: E402
from ragcov_data.jobs.proxy import proxy_study  # noqa: E402


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", default=default_data_dir())
    p.add_argument("--datasets", nargs="+", default=["irpf", "lgpd"])
    p.add_argument("--units", nargs="+", default=["act", "artigo"])
    p.add_argument("--reps", type=int, default=500)
    p.add_argument("--n-resamples", type=int, default=499)
    p.add_argument("--level", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--spreads", type=float, nargs="*", default=[2.0, 4.0])
    p.add_argument("--json", default=None, help="write every table here")
    return p.parse_args()


def _designs(a: argparse.Namespace) -> list[tuple[str, dict]]:
    """``(name, headline comparison)`` of every corpus, unit and family."""
    out = []
    for ds in a.datasets:
        print(f"proxy study on {ds} (values only; no family check)", flush=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = proxy_study(ds, a.data_dir, units=a.units, level=a.level, n_resamples=a.n_resamples, seed=a.seed,
                              check=False, log=lambda m: print("  " + m, flush=True))
        out += [(f"{ds} {c['family']} ({c['unit']}s)", c) for c in res.comparisons if c["headline"]]
    return out


def _print(name: str, table: pd.DataFrame) -> None:
    at = table.attrs
    print(f"\n{name}: {len(at['systems'])} systems, {at['proxy_clusters']} documents x {at['real_clusters']} "
          f"clusters, spread {at['spread']:g}, {at['reps']} pairs (known scenario: tau {num(at['known_tau'], 2)})")
    print(f"{'scenario':<12} {'method':<21} {'true tau':>8} {'tau-hat':>8} {'coverage':>16} {'width':>6} "
          f"{'excl. 0':>8} {'[-1,1]':>7}")
    for r in table.itertuples(index=False):
        print(f"{r.scenario:<12} {r.method:<21} {num(r.true_tau, 2, sign=True):>8} {num(r.tau_hat, 2, sign=True):>8} "
              f"{pct(r.coverage):>7} ± {pct(1.96 * r.mc_se):>6} {num(r.mean_width, 2):>6} {pct(r.excludes_0):>8} "
              f"{pct(r.widest):>7}")


def main() -> None:
    a = _args()
    t0 = time.perf_counter()
    print(command_line(), flush=True)
    tables = []
    for name, comp in _designs(a):
        sides = comp["sides"]
        spreads = [1.0] + (list(a.spreads) if comp["unit"] == "artigo" else [])
        for spread in spreads:
            scen = ("identical", "reversed", "independent", "known") if spread == 1.0 else ("identical",)
            tab = proxy_coverage(sides["proxy"], sides["real"], scenarios=scen, spread=spread, reps=a.reps,
                                 level=a.level, n_resamples=a.n_resamples, seed=a.seed, show_progress=True)
            _print(name, tab)
            tables.append({"design": name, **{k: v for k, v in tab.attrs.items()},
                           "rows": tab.to_dict(orient="records")})
    print(f"\n{time.perf_counter() - t0:.0f} s; {command_line()}")
    if a.json:
        Path(a.json).write_text(json.dumps({"command": command_line(), "tables": tables}, indent=2, default=str))
        print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
