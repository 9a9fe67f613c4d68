"""Headless Chromium for the browser checks: found on PATH, else skipped with the one-line install hint —
except where ``RAGCOV_REQUIRE_BROWSER=1`` (CI), where a missing browser is a failure, never a skip."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

INSTALL_HINT = "headless Chromium not found on PATH; install it to run the browser checks: apt-get install chromium"


def chromium(module_level: bool = False) -> str:
    """Path of the Chromium binary, or skip (fail under ``RAGCOV_REQUIRE_BROWSER=1``) with the install hint;
    ``module_level`` skips a whole test module in one line."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    if os.environ.get("RAGCOV_REQUIRE_BROWSER") == "1":
        pytest.fail(INSTALL_HINT + " (RAGCOV_REQUIRE_BROWSER=1: the browser checks must run here)", pytrace=False)
    pytest.skip(INSTALL_HINT, allow_module_level=module_level)


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
