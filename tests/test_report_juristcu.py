"""The JurisTCU part of the report (HTML and markdown) is worded by its units, prints no nan, and every
pairwise table in it is family-wise (simultaneous intervals and their own p_adj, said in the caption)."""
from __future__ import annotations

import re

import pytest

from ragcov_data.baselines import BM25, TfIdf
from ragcov_data.reporting.juristcu import juristcu_section
from ragcov_data.loaders.juristcu import read_juristcu
from ragcov_data.reporting import to_jsonable
from ragcov_data.reporting.blocks import leaderboard_block
from ragcov_data.reporting.render import render_html, render_markdown


@pytest.fixture(scope="module")
def results(juristcu_dir):
    task = read_juristcu(juristcu_dir)[0]
    runs = {n: r.index(task["corpus"]).search(task["queries"], k=10, show_progress=False)
            for n, r in {"bm25": BM25(), "tfidf": TfIdf()}.items()}
    tables = juristcu_section(task, runs, ("ndcg@10", "p@10"), n_resamples=200)
    est = tables["estimates"]
    board = leaderboard_block(tables["leaderboards"]["ndcg@10"], "juristcu")
    jt = {"note": est.attrs["corpus_note"], "units": to_jsonable(est.attrs["units"]),
          "estimates": to_jsonable(est), "comparisons": to_jsonable(tables["comparisons"]),
          "leaderboard": board, "sentence": board["sentence"]}
    return {"meta": {}, "task": {}, "retrievers": [], "juristcu": jt}, tables


def _juristcu_part(text: str, start: str) -> str:
    """From the JurisTCU heading to the glossary that closes the report (the glossary speaks of every task)."""
    i = text.index(start)
    ends = [j for j in (text.find('<section id="glossary">', i), text.find("## Glossary", i)) if j >= 0]
    return text[i:min(ends)] if ends else text[i:]


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
        rows = sum(_table(part, cls).count("<tr") - 1 for cls in ("juristcu-estimates", "juristcu-comparisons"))
        assert rows == n_rows  # minus each table's header row
    est = tables["estimates"]
    assert set(est.loc[est["group"] == "overall", "unit"]) == {"source_key"}
    assert set(est.loc[est["group"] != "overall", "unit"]) == {"query"}


def _table(text: str, cls: str) -> str:
    i = text.index(f'<table class="{cls}"')
    return text[i:text.index("</table>", i)]


def test_juristcu_pairs_are_family_wise_and_said_so(results):
    res, tables = results
    html = _juristcu_part(render_html(res, {}), "<h2>JurisTCU</h2>")
    cmp_ = _table(html, "juristcu-comparisons")
    assert "<caption>Family-wise: each metric x group is one family of 1 pair" in cmp_
    assert "<th class=l>p_adj</th>" in cmp_
    # the leaderboard's systems per group, with judged@10 beside nDCG (the pool), and no second pairs table
    assert html.count('<table class="leaderboard-systems"') == 4 and "judged@10" in html
    assert '<table class="pairs"' not in html
    md = _juristcu_part(render_markdown(res), "## JurisTCU")
    assert "Paired comparisons (A − B), Family-wise: each metric x group is one family" in md
    assert res["juristcu"]["sentence"] in md
    # the verdict at the top of the report is the leaderboard's own sentence
    top = render_html(res, {})
    assert top.index(res["juristcu"]["sentence"].replace("'", "&#x27;")) < top.index("<h2>JurisTCU</h2>")
