"""Benchmark reports: a self-contained HTML page, a markdown summary and machine-readable JSON.

``write_report(results, out_dir)`` writes ``report.html``, ``summary.md``, ``results.json``, the
figures as PNG files (``figures/``) and any big table of ``results["_tables"]`` as ``<name>.csv`` (kept
out of ``results.json``, e.g. ``misses.csv``: one row per hit@1 miss); ``load_results(path)`` reads
``results.json`` back so a report can be re-rendered (``ragcov report``) without re-running anything.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping


from ragcov_data.errors import InputFileError
from ragcov_data._atomic import atomic_write
from ragcov_data.outputs import REPORT, mark_folder
from ragcov_data._json import to_jsonable  # the one JSON cleaning (re-exported for readers of reports)

__all__ = ["write_report", "load_results", "to_jsonable"]

REQUIRED_KEYS = ("meta", "task", "retrievers")


def write_report(results: Mapping[str, Any], out_dir: str | os.PathLike) -> dict[str, Path]:
    """Write ``report.html``, ``summary.md``, ``results.json``, ``figures/*.png`` and the tables of
    ``results["_tables"]`` (name -> DataFrame, as ``<name>.csv``) into ``out_dir``.

    Returns
    -------
    dict
        ``{"html": ..., "markdown": ..., "json": ..., "figures": ...}`` paths, plus one per table.
    """
    # local: keeps `ragcov --help` from importing matplotlib (the renderer draws the figures); at module level its
    # `figures` would also hide the submodule of that name
    from ragcov_data.reporting.render import figures, render_html, render_markdown

    out = Path(out_dir)
    mark_folder(out, REPORT)  # the folder reads back as a ragcov report: writing it again is not refused
    tables = results.get("_tables") or {}
    clean = to_jsonable({k: v for k, v in results.items() if k != "_tables"})
    figs = figures(clean)
    fig_dir = out / "figures"
    files = {}
    for key, (png, _) in figs.items():
        atomic_write(fig_dir / f"{key}.png", png)
        files[key] = f"figures/{key}.png"
    paths = {"html": out / "report.html", "markdown": out / "summary.md", "json": out / "results.json",
             "figures": fig_dir}
    atomic_write(paths["json"], json.dumps(clean, indent=1, ensure_ascii=False).encode("utf-8"))
    atomic_write(paths["html"], render_html(clean, figs).encode("utf-8"))
    atomic_write(paths["markdown"], render_markdown(clean, files).encode("utf-8"))
    for name, table in tables.items():
        paths[name] = out / f"{name}.csv"
        atomic_write(paths[name], table.to_csv(index=False).encode("utf-8"))
    return paths


def load_results(path: str | os.PathLike) -> dict[str, Any]:
    """Read a ``results.json`` written by :func:`write_report` (a folder holding one is also accepted)."""
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    if not p.is_file():
        raise InputFileError(f"results file {str(p)!r} not found; pass the results.json written by `ragcov benchmark`.")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputFileError(f"results file {str(p)!r} is not valid JSON ({exc}); re-run `ragcov benchmark`.") from exc
    missing = [k for k in REQUIRED_KEYS if k not in data] if isinstance(data, dict) else list(REQUIRED_KEYS)
    if missing:
        raise InputFileError(
            f"results file {str(p)!r} lacks key(s) {missing}; it was not written by `ragcov benchmark`."
        )
    return data
