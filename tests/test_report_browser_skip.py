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
