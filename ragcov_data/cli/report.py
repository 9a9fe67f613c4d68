"""``ragcov report``: re-render the HTML / markdown report from a ``results.json``."""
from __future__ import annotations

import argparse
from pathlib import Path

from ragcov_data.tasks.paths import check_writable
from ragcov_data.reporting import load_results, write_report


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report",
        help="re-render report.html and summary.md from a results.json",
        description=("Re-draw every figure and re-write report.html, summary.md and figures/ from the results.json "
                     "written by `ragcov benchmark` (nothing is re-run)."),
        epilog="example: ragcov report reports/results.json --out reports/",
    )
    p.add_argument("results", help="results.json (or the folder holding it)")
    p.add_argument("--out", help="output folder (default: the folder of results.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    src = Path(args.results)
    out = Path(args.out) if args.out else (src if src.is_dir() else src.parent)
    check_writable(out, folder=True)
    results = load_results(args.results)
    paths = write_report(results, out)
    print(f"report: {paths['html']}\nsummary: {paths['markdown']}\nresults: {paths['json']}")
    return 0
