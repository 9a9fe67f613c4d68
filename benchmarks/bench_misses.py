"""Time the miss analysis (``ragcov_data.eval.misses``) of BM25 on the ANEEL task (chunks-100, 2,312 queries).

Run by hand:  python benchmarks/bench_misses.py [--data-dir ../shared/data] [--repeats 5] [--cli]

Prints its own command, the call's best and median time over the repeats (task and run already in memory:
the analysis itself), and with ``--cli`` the wall time of ``ragcov misses RUN --data-dir DIR`` end to end
(a fresh process: imports, loading the cached task, reading the run, printing).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, peak_rss_mb  # noqa: E402

import ragcov_data  # noqa: E402
from ragcov_data.baselines import BM25  # noqa: E402
from ragcov_data.execution.engine import run_task  # noqa: E402
from ragcov_data.eval import misses  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=os.environ.get("RAGCOV_DATA_DIR", "../shared/data"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cli", action="store_true", help="also time `ragcov misses` in a fresh process")
    args = ap.parse_args()
    print(f"$ {command_line()}")
    ds = ragcov_data.load_dataset("aneel_taesa", data_dir=args.data_dir)
    run = run_task(BM25(), ds, k=10, exclude_self=True, show_progress=False)
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        res = misses(run, ds)
        times.append(time.perf_counter() - t0)
    print(f"{res.n_queries} queries, {res.n_misses} misses, {len(run):,} run rows")
    for r in res.flags.itertuples(index=False):
        lo, hi = getattr(r, "low_bounded", r.low), getattr(r, "high_bounded", r.high)  # printed in [0, 1]
        mark = " clipped" if getattr(r, "clipped", False) else ""
        print(f"  {r.name:<22} {r.share:.3f} [{lo:.3f}, {hi:.3f}]{mark}  ({r.n_flagged} of {r.n_misses})")
    print(f"misses(run, task): best {min(times):.3f} s, median {np.median(times):.3f} s over {args.repeats} runs; "
          f"peak RSS {peak_rss_mb():.0f} MiB")
    if args.cli:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bm25.trec"
            from ragcov_data.runs import save_run

            save_run(run, path)
            exe = Path(sys.executable).with_name("ragcov")
            cmd = [str(exe), "misses", str(path), "--data-dir", args.data_dir, "--json", str(Path(tmp) / "m.json")]
            walls = []
            for _ in range(3):
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                walls.append(time.perf_counter() - t0)
            print(f"ragcov misses (fresh process, TREC run, cached task): best {min(walls):.2f} s, "
                  f"median {np.median(walls):.2f} s over 3 runs")


if __name__ == "__main__":
    main()
