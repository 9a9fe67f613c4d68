"""The HTML report opens in a real browser (headless Chromium) with every figure loaded and its tables."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ragcov_data.cli import main

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory, data_dir) -> Path:
    out = tmp_path_factory.mktemp("report")
    code = main(["benchmark", "--data-dir", str(data_dir), "--out", str(out), "--retrievers", "bm25,tfidf",
                 "--quick", "--reps", "100", "--k", "5,10", "--n-resamples", "49", "--no-progress"])
    assert code == 0
    return out


def test_report_loads_every_figure_in_chromium(report_dir, tmp_path):
    html = report_dir / "report.html"
    n_imgs = len(re.findall(r"<img ", html.read_text(encoding="utf-8")))
    assert n_imgs >= 8
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000", "--dump-dom", html.as_uri()]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    body = re.search(r"<body[^>]*>", dom)
    assert body, "Chromium returned no DOM"
    assert 'data-figures="ok"' in body.group(0), body.group(0)
    assert f'data-figures-total="{n_imgs}"' in body.group(0)
    assert f'data-figures-loaded="{n_imgs}"' in body.group(0)
    for cls in ("estimates", "coverage", "diagnostics"):
        assert f'<table class="{cls}"' in dom
    assert "naive-tag" in dom  # naive methods visibly marked


def test_report_is_self_contained(report_dir):
    text = (report_dir / "report.html").read_text(encoding="utf-8")
    srcs = re.findall(r'src="([^"]+)"', text)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert "<link " not in text
