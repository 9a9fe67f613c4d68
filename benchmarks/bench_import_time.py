"""Start-up cost of ``import ragcov_data`` and ``ragcov --help``: total import time and which heavy libraries load.

Each command runs in a fresh interpreter with ``python -X importtime``; the total is the sum of the top-level
cumulative times (microseconds) the interpreter reports, the median of ``--repeat`` runs. The peer measured in
the same run is ``import numpy`` (a fixed cost every ragcov command pays), so the ratio is comparable across
machines that are busy to a different degree.

    python benchmarks/bench_import_time.py --repeat 5
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

#: Libraries whose import a cheap start-up must avoid (or whose presence it reports).
HEAVY = ("datasets", "pyarrow", "torch", "scipy", "pandas", "sklearn", "ir_datasets", "matplotlib")

COMMANDS = {
    "import ragcov_data": ["-c", "import ragcov_data"],
    "ragcov --help": ["-m", "ragcov_data", "--help"],
    "import numpy (peer)": ["-c", "import numpy"],
}


def importtime(args: list[str]) -> tuple[int, set[str]]:
    """Total top-level cumulative import time (µs) of one fresh interpreter, and the heavy libraries it loaded."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{args} exited {proc.returncode}: {proc.stderr[-2000:]}")
    total, loaded = 0, set()
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        cumulative = cumulative.strip()
        if not cumulative.isdigit():
            continue  # the header line
        if name[1:] == name[1:].lstrip():  # a top-level import (nested ones are indented further)
            total += int(cumulative)
        if name.strip() in HEAVY:
            loaded.add(name.strip())
    return total, loaded


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="fresh interpreters per command (median is reported)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out = {}
    for label, cmd in COMMANDS.items():
        runs = [importtime(cmd) for _ in range(args.repeat)]
        out[label] = {"median_ms": round(statistics.median(t for t, _ in runs) / 1000, 1),
                      "heavy_imported": sorted(set().union(*(h for _, h in runs)))}
    peer = out["import numpy (peer)"]["median_ms"]
    for label in out:
        out[label]["ratio_to_numpy"] = round(out[label]["median_ms"] / peer, 2) if peer else None
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for label, row in out.items():
            print(f"{label:22s} {row['median_ms']:8.1f} ms  x{row['ratio_to_numpy']:<5} heavy: "
                  f"{', '.join(row['heavy_imported']) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
