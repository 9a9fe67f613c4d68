"""The HTML report opens in a real browser (headless Chromium) with every figure loaded and its tables,
the separability sentences at the top and the chunking / misses figures."""
from __future__ import annotations

import html as _html
import json
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


@pytest.fixture(scope="module")
def dom(report_dir, tmp_path_factory) -> str:
    """The report's DOM after Chromium loaded it (scripts run, images decoded)."""
    html = report_dir / "report.html"
    profile = tmp_path_factory.mktemp("profile")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", html.as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout


def test_report_loads_every_figure_in_chromium(report_dir, dom):
    html = report_dir / "report.html"
    n_imgs = len(re.findall(r"<img ", html.read_text(encoding="utf-8")))
    assert n_imgs >= 8
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


def test_new_figures_are_in_the_loaded_page(dom):
    """The chunking scatter, the miss-flag bars and the flags-by-type map, and the family-wise paired figure."""
    for fig in ("fig-chunking", "fig-misses_flags", "fig-misses_by_type", "fig-paired"):
        m = re.search(rf'<figure id="{fig}"><img [^>]*src="data:image/png;base64,', dom)
        assert m, f"{fig} missing from the page"


def test_separability_sentences_on_top(report_dir, dom):
    """Each task's separability sentence (the leaderboard's own) and the study's answer open the report."""
    res = json.loads((report_dir / "results.json").read_text(encoding="utf-8"))
    top = dom[dom.index('<section id="verdicts">'):dom.index("<h2>Task</h2>")]
    assert 'data-task="aneel_taesa"' in top and 'data-task="juristcu"' in top
    text = _html.unescape(top)
    for sentence in (res["leaderboard"]["sentence"], res["juristcu"]["sentence"], res["study"]):
        assert sentence in text
    n = res["misses"]["n_misses"]
    assert f"Of BM25's {n:,} hit@1 misses" in res["study"]


def test_every_pairwise_table_is_family_wise(dom):
    """No unadjusted pairwise table is left: each one has a caption naming the family and a p_adj column."""
    tables = re.findall(r'<table class="(pairs|juristcu-comparisons)">(.*?)</table>', dom, flags=re.S)
    assert {c for c, _ in tables} == {"pairs", "juristcu-comparisons"}
    for _, body in tables:
        assert re.search(r"<caption>Family-wise", body) and "p_adj" in body
    assert "<h2>Paired comparison</h2>" not in dom  # the old unadjusted per-pair tables
