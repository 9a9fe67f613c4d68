"""The JurisTCU part of the report (HTML and markdown) is worded by its units and prints no nan."""
from __future__ import annotations

import re

import pytest

from ragcov_data.baselines import BM25, TfIdf
from ragcov_data.eval.juristcu import juristcu_section
from ragcov_data.loaders.juristcu import read_juristcu
from ragcov_data.reporting import to_jsonable
from ragcov_data.reporting.render import render_html, render_markdown


@pytest.fixture(scope="module")
def results(juristcu_dir):
    task = read_juristcu(juristcu_dir)[0]
    runs = {n: r.index(task["corpus"]).search(task["queries"], k=10, show_progress=False)
            for n, r in {"bm25": BM25(), "tfidf": TfIdf()}.items()}
    tables = juristcu_section(task, runs, ("ndcg@10", "p@10"), n_resamples=200)
    est = tables["estimates"]
    jt = {"note": est.attrs["corpus_note"], "units": to_jsonable(est.attrs["units"]),
          "estimates": to_jsonable(est), "comparisons": to_jsonable(tables["comparisons"])}
    return {"meta": {}, "task": {}, "retrievers": [], "juristcu": jt}, tables


def _juristcu_part(text: str, start: str) -> str:
    i = text.index(start)
    return text[i:]


@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_juristcu_report_words_follow_the_unit(results, fmt):
    res, tables = results
    text = render_html(res, {}) if fmt == "html" else render_markdown(res)
    part = _juristcu_part(text, "<h2>JurisTCU</h2>" if fmt == "html" else "## JurisTCU")
    assert re.search(r"\bnan\b|\bNone\b", part, flags=re.IGNORECASE) is None
    for word in ("per-document", "share_never_hit", "documents with identical rate"):
        assert word not in part
    assert "Unit per group: query" in part and "Unit overall: source (CR2; bootstrap of sources)" in part
    # every row of both tables is in the report, with its unit
    n_rows = len(tables["estimates"]) + len(tables["comparisons"])
    if fmt == "markdown":
        assert sum(ln.startswith("| bm25 ") or ln.startswith("| tfidf ") for ln in part.splitlines()) == n_rows
    else:
        assert part.count("<tr") - 2 == n_rows  # minus the two header rows
    est = tables["estimates"]
    assert set(est.loc[est["group"] == "overall", "unit"]) == {"source_key"}
    assert set(est.loc[est["group"] != "overall", "unit"]) == {"query"}
