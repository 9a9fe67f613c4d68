"""Reading large run files: time and peak memory of ragcov's reader against two peers, same file.

    python benchmarks/bench_runio.py [--rows 5000000] [--repeat 3] [--depth 10]

Writes a synthetic TREC run (``--rows`` lines: 1,000 documents a query, scores with ties, lines in
document order) to a temporary folder, then measures ``ragcov_data.runs.load_run`` (full normal form: ids
validated, duplicate pairs checked, rows sorted into trec_eval order), ``load_run(depth=K)`` (the same
checks on every row, keeping K rows a query plus ties: what scoring at cutoff K needs) and two peers on the
same file: ``ir_measures.read_trec_run`` (a run reader: parses lines into tuples, no checks) and
``pandas.read_csv(sep=r"\\s+")`` (parsing only). Also ragcov on the same run already in trec_eval order (as
ragcov writes it), gzipped, and tab-separated. Each case runs in a fresh Python process, so its peak
resident memory (``VmHWM``, else ``ru_maxrss``) is its own; the time is the best of ``--repeat`` and the process's memory
after its imports is printed beside the peak.
"""
from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _common import command_line


def write_run(path: Path, rows: int, sep: str = " ") -> None:
    per_q = 1000
    nq = max(1, rows // per_q)
    rng = np.random.default_rng(0)
    q = np.repeat([f"q{i}" for i in range(nq)], per_q)
    d = np.tile([f"doc{j:06d}" for j in range(per_q)], nq)
    s = np.round(rng.gamma(2.0, 3.0, size=nq * per_q), 2)  # 2 decimals: many ties
    r = np.tile(np.arange(1, per_q + 1), nq)
    frame = pd.DataFrame({"q": q, "z": "Q0", "d": d, "r": r, "s": s, "t": "bench"})
    frame.to_csv(path, sep=sep, header=False, index=False)


def _rss_mib() -> float:
    """Peak resident memory of this process, MiB: ``VmHWM`` where Linux reports it (``ru_maxrss`` survives
    ``exec`` and would report the parent's peak), else ``ru_maxrss``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def measure(case: str, path: str, repeat: int, depth: int | None) -> dict:
    """One case, in this (fresh) process: best time of ``repeat``, peak RSS, rows returned."""
    if case == "pandas":
        fn = lambda: pd.read_csv(path, sep=r"\s+", header=None, names=["q", "z", "d", "r", "s", "t"],  # noqa: E731
                                 dtype={0: str, 2: str})
    elif case == "ir_measures":
        import ir_measures

        fn = lambda: sum(1 for _ in ir_measures.read_trec_run(path))  # noqa: E731
    else:
        from ragcov_data.runs import load_run

        fn = lambda: load_run(path, depth=depth)  # noqa: E731
    base = _rss_mib()
    times, out = [], None
    for _ in range(repeat):
        out = None
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    rows = out if isinstance(out, int) else len(out)
    return {"seconds": min(times), "peak_mib": _rss_mib(), "imports_mib": base, "rows": rows}


def run_case(case: str, path: Path, repeat: int, depth: int | None = None) -> dict:
    cmd = [sys.executable, __file__, "--measure", case, "--path", str(path), "--repeat", str(repeat)]
    if depth is not None:
        cmd += ["--depth", str(depth)]
    res = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=Path(__file__).parent)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--depth", type=int, default=10, help="cutoff of the bounded read (default: 10)")
    ap.add_argument("--measure", default=None, choices=("ragcov", "ragcov-depth", "ir_measures", "pandas"),
                    help="measure one reader on --path in this process and print JSON (what each case runs)")
    ap.add_argument("--path", default=None, help="with --measure: the run file to read")
    args = ap.parse_args()
    if args.measure:
        depth = args.depth if args.measure.endswith("depth") else None
        print(json.dumps(measure(args.measure, args.path, args.repeat, depth)))
        return
    print(command_line())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.trec"
        write_run(path, args.rows)
        size = path.stat().st_size / 2**20
        from ragcov_data.runs import load_run, save_run

        ordered = Path(tmp) / "ordered.trec"
        save_run(load_run(path), ordered)
        gz = Path(tmp) / "big.trec.gz"
        with open(path, "rb") as src, gzip.open(gz, "wb", compresslevel=1) as dst:
            dst.write(src.read())
        tab = Path(tmp) / "big_tabs.trec"
        write_run(tab, args.rows, sep="\t")
        k = args.depth
        cases = [
            ("ragcov load_run (validated, trec_eval order)", "ragcov", path, args.repeat),
            (f"ragcov load_run(depth={k}) (every row checked, {k} a query + ties kept)", "ragcov-depth", path,
             args.repeat),
            ("ir_measures read_trec_run (tuples, no checks)", "ir_measures", path, args.repeat),
            ("pandas read_csv sep='\\s+' (parse only)", "pandas", path, args.repeat),
            ("ragcov load_run, file already in trec_eval order", "ragcov", ordered, args.repeat),
            (f"ragcov load_run(depth={k}), file in trec_eval order", "ragcov-depth", ordered, args.repeat),
            ("ragcov load_run .gz", "ragcov", gz, 1),
            (f"ragcov load_run(depth={k}) .gz", "ragcov-depth", gz, 1),
            ("ragcov load_run tab-separated", "ragcov", tab, 1),
        ]
        results = []
        for label, case, p, repeat in cases:
            r = run_case(case, p, repeat, k if case.endswith("depth") else None)
            results.append((label, r))
            print(f"{label:<62} {r['seconds']:6.2f} s  peak RSS {r['peak_mib']:6.0f} MiB  "
                  f"(imports {r['imports_mib']:.0f} MiB; {r['rows']:,} rows)", flush=True)
    ours = results[0][1]["seconds"]
    print(f"{args.rows:,} lines, {size:.0f} MiB file; ir_measures / ours = {results[2][1]['seconds'] / ours:.2f}x, "
          f"pandas / ours = {results[3][1]['seconds'] / ours:.2f}x")


if __name__ == "__main__":
    main()
