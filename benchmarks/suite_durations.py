"""How long the test suite takes: the full suite (CI's, the README's) and the fast lane (``-m "not slow"``).

Run by hand:  python benchmarks/suite_durations.py [--lanes full fast] [--workers 2] [--top 20] [--out FILE]
              python benchmarks/suite_durations.py --junit FILE.xml   (read a finished run instead)

Each lane runs ``python -m pytest -q -n WORKERS --dist loadfile`` in this repository and writes a JUnit file; the
script prints its wall time, the CPU time of pytest and its workers, the machine's load average before and after
(a busy machine stretches the wall time, not the CPU time: read both), the slowest tests and the slowest modules
(a module's time holds its fixtures' setup), and whether each slow test is in the fast lane. The lists of what the
fast lane leaves out are ``SLOW_MODULES`` and ``SLOW_TESTS`` in ``tests/_lanes.py``.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LANES = {"full": [], "fast": ["-m", "not slow"]}


def run_lane(name: str, workers: int, junit: Path) -> dict:
    """One lane's wall and CPU time (pytest and its workers) and the load average around it."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", str(workers), "--dist", "loadfile", "-p", "no:cacheprovider",
           f"--junitxml={junit}", *LANES[name]]
    load0 = os.getloadavg()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
    return {"lane": name, "command": " ".join(cmd[1:]), "returncode": proc.returncode, "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1), "load_before": [round(x, 2) for x in load0],
            "load_after": [round(x, 2) for x in os.getloadavg()], "summary": tail}


def read_junit(path: Path) -> tuple[list[tuple[float, str]], dict[str, float]]:
    """Per-test times (setup, call and teardown: pytest's default) and per-module totals of a JUnit file."""
    tests, modules = [], collections.Counter()
    for tc in ET.parse(path).iter("testcase"):
        t, mod = float(tc.get("time") or 0), tc.get("classname", "").replace(".", "/") + ".py"
        tests.append((t, f"{mod}::{tc.get('name')}"))
        modules[mod] += t
    return sorted(tests, reverse=True), dict(modules.most_common())


def slow_lists() -> tuple[set[str], set[str]]:
    sys.path.insert(0, str(REPO / "tests"))
    from _lanes import SLOW_MODULES, SLOW_TESTS  # the lists the fast lane reads

    return set(SLOW_MODULES), set(SLOW_TESTS)


def report(path: Path, top: int) -> dict:
    tests, modules = read_junit(path)
    slow_mods, slow_tests = slow_lists()

    def lane(test: str) -> str:
        mod, name = test.split("::")
        return "slow" if mod in slow_mods or f"{mod}::{name.split('[')[0]}" in slow_tests else "fast"

    print(f"\nslowest {top} tests ({path.name}; seconds, setup included; lane):")
    for t, name in tests[:top]:
        print(f"  {t:7.1f}  {lane(name):4s}  {name}")
    print(f"\nslowest {top} modules:")
    for mod, t in list(modules.items())[:top]:
        print(f"  {t:7.1f}  {'slow' if mod in slow_mods else '':4s}  {mod}")
    return {"tests": len(tests), "sum_s": round(sum(t for t, _ in tests), 1),
            "slowest_tests": [{"test": n, "seconds": round(t, 2), "lane": lane(n)} for t, n in tests[:top]],
            "slowest_modules": [{"module": m, "seconds": round(t, 2)} for m, t in list(modules.items())[:top]]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lanes", nargs="+", choices=list(LANES), default=["full", "fast"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--junit", type=Path, help="read this JUnit file instead of running a lane")
    ap.add_argument("--out", type=Path, help="write the measurements as JSON")
    a = ap.parse_args(argv)
    out: dict = {"date": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(), "lanes": []}
    if a.junit:
        out["junit"] = report(a.junit, a.top)
    else:
        folder = Path(tempfile.mkdtemp(prefix="ragcov-suite-"))
        for name in a.lanes:
            junit = folder / f"{name}.xml"
            res = run_lane(name, a.workers, junit)
            print(f"{name}: {res['wall_s']} s wall, {res['cpu_s']} s CPU, load {res['load_before']} -> "
                  f"{res['load_after']}; {res['summary']}")
            res.update(report(junit, a.top))
            out["lanes"].append(res)
    if a.out:
        a.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["returncode"] == 0 for r in out["lanes"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
