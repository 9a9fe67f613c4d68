"""Where no Chromium is installed the browser checks are skipped with the one-line install hint, and where
``RAGCOV_REQUIRE_BROWSER=1`` (CI) they fail instead of skipping."""
from __future__ import annotations

import pytest
from _browser import INSTALL_HINT, chromium


def test_missing_browser_skips_with_the_install_hint(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no chromium here
    monkeypatch.delenv("RAGCOV_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium"):
        chromium()


def test_missing_browser_fails_where_it_is_required(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("RAGCOV_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="RAGCOV_REQUIRE_BROWSER=1"):
        chromium()
    assert INSTALL_HINT.endswith("apt-get install chromium")



def test_without_a_browser_the_skip_line_says_how_many_checks_are_not_run(tmp_path):
    """One skip line for the whole browser module, and it counts the checks pytest would have run."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}  # python, but no chromium
    env.pop("RAGCOV_REQUIRE_BROWSER", None)
    module = here / "test_report_browser.py"
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", str(module)]
    ran = subprocess.run([*base, "-q", "-rs"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    with_browser = {**env, "PATH": str(tmp_path)}
    (tmp_path / "chromium").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "chromium").chmod(0o755)
    with_browser["PATH"] = f"{tmp_path}{os.pathsep}{Path(sys.executable).parent}"
    listed = subprocess.run([*base, "--collect-only", "-q"], capture_output=True, text=True, env=with_browser,
                            cwd=tmp_path)
    n = sum(1 for line in listed.stdout.splitlines() if "::" in line)
    assert n >= 10, listed.stdout
    assert f"({n} browser checks of test_report_browser.py not run)" in ran.stdout, ran.stdout[-1500:]
    assert INSTALL_HINT in ran.stdout and "1 skipped" in ran.stdout, ran.stdout[-500:]
