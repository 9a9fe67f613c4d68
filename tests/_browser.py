"""Headless Chromium for the browser checks: found on PATH, else skipped with the one-line install hint —
except where ``RAGCOV_REQUIRE_BROWSER=1`` (CI), where a missing browser is a failure, never a skip."""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

import pytest

INSTALL_HINT = "headless Chromium not found on PATH; install it to run the browser checks: apt-get install chromium"


def checks_in(module: str | Path) -> int:
    """The number of tests a test module defines (``test_*`` functions, each parametrize case counted where the
    cases are a literal list or tuple), read from its source without importing it."""
    tree = ast.parse(Path(module).read_text(encoding="utf-8"))
    total = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            cases = 1
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and ast.unparse(dec.func).endswith("parametrize") and len(dec.args) > 1 \
                        and isinstance(dec.args[1], (ast.List, ast.Tuple)):
                    cases *= len(dec.args[1].elts)
            total += cases
    return total


def chromium(module: str | Path | None = None) -> str:
    """Path of the Chromium binary, or skip (fail under ``RAGCOV_REQUIRE_BROWSER=1``) with the install hint;
    given its ``module`` (``__file__``), the whole test module is skipped in one line that says how many checks
    it holds."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    if os.environ.get("RAGCOV_REQUIRE_BROWSER") == "1":
        pytest.fail(INSTALL_HINT + " (RAGCOV_REQUIRE_BROWSER=1: the browser checks must run here)", pytrace=False)
    if module is None:
        pytest.skip(INSTALL_HINT)
    n = checks_in(module)
    pytest.skip(f"{INSTALL_HINT} ({n} browser check{'s' * (n != 1)} of {Path(module).name} not run)",
                allow_module_level=True)


def _flags(profile: Path, width: int, height: int) -> list[str]:
    return ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}",
            f"--window-size={width},{height}"]


def dump_dom(page: Path, profile: Path, width: int = 1280, height: int = 1600) -> str:
    """The page's DOM after Chromium loaded it (scripts run, images decoded)."""
    cmd = [chromium(), *_flags(profile, width, height), "--virtual-time-budget=5000", "--dump-dom", page.as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180).stdout


def screenshot(page: Path, out: Path, profile: Path, width: int = 1280, height: int = 1600) -> Path:
    """A PNG of the page's first ``height`` pixels at ``width``."""
    cmd = [chromium(), *_flags(profile, width, height), f"--screenshot={out}", page.as_uri()]
    subprocess.run(cmd, capture_output=True, timeout=180)
    return out
