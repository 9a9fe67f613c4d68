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

``--eval`` adds the whole ``ragcov eval`` of a large run of the real task (every chunk of the aneel_taesa
task, words-100, ranked for every query: about 5.3M lines, over 200 MB), carrying the task's fingerprint as
``ragcov run`` writes it, so the reading, the fingerprint and chunk-id checks, scoring and intervals are all
in the peak (``--data-dir`` or ``$RAGCOV_DATA_DIR``).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
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


def write_task_run(path: Path, data_dir: str, per_query: int = 1000, fingerprint: bool = True) -> int:
    """``per_query`` chunks of the aneel_taesa task (words-100) for every query, scores with ties, tagged with the
    task's fingerprint as ``ragcov run`` writes it (or a plain tag). Returns the number of lines."""
    from ragcov_data.runs.fingerprint import fingerprint_tag, task_fingerprint
    from ragcov_data.tasks.sources import resolve_task

    task = resolve_task(data_dir=data_dir).task
    qids = task["queries"]["_id"]
    cids = np.asarray(task["corpus"]["_id"], dtype=object)
    tag = "bm25" + (fingerprint_tag(task_fingerprint(task)) if fingerprint else "")
    rng = np.random.default_rng(0)
    k = min(per_query, len(cids))
    with open(path, "w") as fh:
        for q in qids:
            pick = cids[rng.choice(len(cids), size=k, replace=False)]
            s = np.round(rng.gamma(2.0, 3.0, size=k), 2)
            fh.write("".join(f"{q} Q0 {d} {r} {v} {tag}\n" for r, (d, v) in enumerate(zip(pick, s.tolist()), 1)))
    return len(qids) * k


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


def measure(case: str, path: str, repeat: int, depth: int | None, data_dir: str | None = None) -> dict:
    """One case, in this (fresh) process: best time of ``repeat``, peak RSS, rows returned."""
    depth_or_dir = data_dir
    if case == "pandas":
        fn = lambda: pd.read_csv(path, sep=r"\s+", header=None, names=["q", "z", "d", "r", "s", "t"],  # noqa: E731
                                 dtype={0: str, 2: str})
    elif case == "ragcov-eval":
        import contextlib
        import io

        from ragcov_data.cli import main as cli

        def fn() -> int:
            with contextlib.redirect_stdout(io.StringIO()):
                code = cli(["eval", path, "--data-dir", depth_or_dir, "--metric", "ndcg@10", "--n-resamples", "999"])
            if code:
                raise SystemExit(f"ragcov eval failed with status {code}")
            return 0
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
    if case == "ragcov-eval":
        rows = sum(1 for _ in open(path, "rb"))
    return {"seconds": min(times), "peak_mib": _rss_mib(), "imports_mib": base, "rows": rows}


def run_case(case: str, path: Path, repeat: int, depth: int | None = None, data_dir: str | None = None) -> dict:
    cmd = [sys.executable, __file__, "--measure", case, "--path", str(path), "--repeat", str(repeat)]
    if depth is not None:
        cmd += ["--depth", str(depth)]
    if data_dir is not None:
        cmd += ["--data-dir", str(data_dir)]
    res = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=Path(__file__).parent)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--depth", type=int, default=10, help="cutoff of the bounded read (default: 10)")
    ap.add_argument("--eval", action="store_true",
                    help="also measure `ragcov eval` of a >200 MB run of the real task (needs the data folder)")
    ap.add_argument("--only-eval", action="store_true", help="measure `ragcov eval` only (implies --eval)")
    ap.add_argument("--eval-candidates", type=int, default=1000,
                    help="--eval: chunks ranked a query (default 1000: 2.3M lines, about 215 MB)")
    ap.add_argument("--data-dir", default=None, help="the shared data folder (default: $RAGCOV_DATA_DIR)")
    ap.add_argument("--measure", default=None, choices=("ragcov", "ragcov-depth", "ragcov-eval", "ir_measures",
                                                        "pandas"),
                    help="measure one reader on --path in this process and print JSON (what each case runs)")
    ap.add_argument("--path", default=None, help="with --measure: the run file to read")
    args = ap.parse_args()
    if args.measure:
        depth = args.depth if args.measure.endswith("depth") else None
        print(json.dumps(measure(args.measure, args.path, args.repeat, depth, args.data_dir)))
        return
    print(command_line())
    if args.eval or args.only_eval:
        _eval_case(args.data_dir or os.environ.get("RAGCOV_DATA_DIR"), args.eval_candidates)
        if args.only_eval:
            return
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


def _eval_case(data_dir: str | None, per_query: int) -> None:
    """``ragcov eval`` of a large run of the real task, in fresh processes: seconds and peak memory, with the
    task's fingerprint in the run (checked against the task's corpus hash) and without (the chunk-id checks)."""
    if not data_dir:
        raise SystemExit("--eval needs the data folder: --data-dir DIR or $RAGCOV_DATA_DIR")
    with tempfile.TemporaryDirectory() as tmp:
        for fingerprint in (True, False):
            path = Path(tmp) / f"task_run_{fingerprint}.trec"
            lines = write_task_run(path, data_dir, per_query, fingerprint)
            size = path.stat().st_size / 2**20
            r = run_case("ragcov-eval", path, 1, data_dir=data_dir)
            label = f"ragcov eval ndcg@10, run {'with' if fingerprint else 'without'} fingerprint"
            print(f"{label:<62} {r['seconds']:6.2f} s  peak RSS {r['peak_mib']:6.0f} MiB  (imports "
                  f"{r['imports_mib']:.0f} MiB; {lines:,} lines, {size:.0f} MiB file)", flush=True)


if __name__ == "__main__":
    main()
