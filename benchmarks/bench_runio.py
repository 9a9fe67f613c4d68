"""Reading large run files: ragcov's reader (Arrow CSV) against pandas' whitespace reader, same file.

    python benchmarks/bench_runio.py [--rows 5000000] [--repeat 3]

Writes a synthetic TREC run (``--rows`` lines: 1,000 documents a query, scores with ties, lines in
document order) to a temporary folder, then times ``ragcov_data.runs.load_run`` (full normal form: ids
validated, duplicate pairs checked, rows sorted into trec_eval order) against two peers on the same
file: ``ir_measures.read_trec_run`` (a run reader: parses lines into tuples, no checks) and
``pandas.read_csv(sep=r"\\s+")`` (parsing only), best of ``--repeat``. Also ragcov on the same run
already in trec_eval order (as ragcov writes it), gzipped, and tab-separated.
"""
from __future__ import annotations

import argparse
import gzip
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _common import command_line, peak_rss_mb
from ragcov_data.runs import load_run


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


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(command_line())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.trec"
        write_run(path, args.rows)
        size = path.stat().st_size / 2**20
        t_ours, run = best(lambda: load_run(path), args.repeat)
        t_pd, _ = best(lambda: pd.read_csv(path, sep=r"\s+", header=None,
                                           names=["q", "z", "d", "r", "s", "t"], dtype={0: str, 2: str}),
                       args.repeat)
        import ir_measures

        t_irm, _ = best(lambda: sum(1 for _ in ir_measures.read_trec_run(str(path))), args.repeat)
        ordered = Path(tmp) / "ordered.trec"
        from ragcov_data.runs import save_run

        save_run(run, ordered)
        t_ord, _ = best(lambda: load_run(ordered), args.repeat)
        gz = Path(tmp) / "big.trec.gz"
        with open(path, "rb") as src, gzip.open(gz, "wb", compresslevel=1) as dst:
            dst.write(src.read())
        t_gz, _ = best(lambda: load_run(gz), 1)
        tab = Path(tmp) / "big_tabs.trec"
        write_run(tab, args.rows, sep="\t")
        t_tab, _ = best(lambda: load_run(tab), 1)
    print(f"{len(run):,} rows, {size:.0f} MiB")
    print(f"ragcov load_run (validated, trec_eval order): {t_ours:.2f} s (best of {args.repeat})")
    print(f"ir_measures read_trec_run (tuples, no checks): {t_irm:.2f} s  -> ours is {t_irm / t_ours:.2f}x faster")
    print(f"pandas read_csv sep='\\s+' (parse only):       {t_pd:.2f} s  -> ours is {t_pd / t_ours:.2f}x faster")
    print(f"ragcov load_run, file already in trec_eval order: {t_ord:.2f} s")
    print(f"ragcov load_run .gz: {t_gz:.2f} s; tab-separated: {t_tab:.2f} s")
    print(f"peak RSS {peak_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()
