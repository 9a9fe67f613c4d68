"""The main job's chunking answer on both cited corpora (IRPF, LGPD): each ranked by the share of the cited text in
the context at every budget, clustered as its design asks (LGPD: the exam), the touch reading beside it with one
sentence where the two name different cuts, whether the corpora agree — in results.json, the console, report.html
and summary.md.

Both parts are read from the session's one quick main job (``tests/_quick_job.py``: every cut of
:data:`IRPF_CHUNKINGS`, ``--n-resamples 99``), as its ``results.json`` holds them."""
from __future__ import annotations

import html as _html
import json
import warnings

import pytest
from _quick_job import quick_job

from ragcov_data.jobs import benchmark as pipeline
from ragcov_data.reporting.blocks import corpora_agreement
from ragcov_data.reporting.console import MAX_LINE, summary
from ragcov_data.reporting.render import render_html, render_markdown

CHUNKINGS = pipeline.IRPF_CHUNKINGS


@pytest.fixture(scope="module")
def parts(tmp_path_factory, data_dir):
    results = json.loads((quick_job(tmp_path_factory, data_dir).out / "results.json").read_text(encoding="utf-8"))
    return results["irpf"], results["lgpd"]


@pytest.fixture(scope="module")
def results(parts):
    irpf, lgpd = parts
    return {"meta": {"level": 0.95}, "task": {}, "retrievers": [], "irpf": irpf, "lgpd": lgpd,
            "cited_agreement": corpora_agreement({"IRPF": irpf["budgets"], "LGPD": lgpd["budgets"]})}


def _overall(board):
    return {s["name"]: s for s in board["systems"] if s["group"] == "__all__"}


def test_lgpd_is_ranked_by_text_share_clustered_by_exam(parts, data_dir):
    """Every budget's family ranks span_recall@Bw over the exams; each answer's leader is its family's best, and the
    family's estimate of article/bm25-pt equals the mean of per_query_values on load_dataset('lgpd')'s task."""
    import ragcov_data
    from ragcov_data.baselines.registry import make_retriever
    from ragcov_data.eval.comparisons.cited import per_query_values

    b = parts[1]["budgets"]
    assert b["cluster"] == "exam" and b["metric"] == "span_recall@1000w" and set(b["answers"]) == {"500", "1000", "2000"}
    for w, ans in b["answers"].items():
        fam = _overall(b["families"][w])
        assert b["families"][w]["metric"] == f"span_recall@{w}w" and b["families"][w]["n_clusters"] > 200
        assert ans["leader"] == min(fam, key=lambda n: (-fam[n]["estimate"], n))
        assert set(fam) == {f"{c}/{r}" for c in CHUNKINGS for r in pipeline.LGPD_STUDY_RETRIEVERS}
    assert parts[1]["sentence"].startswith("On 350 real LGPD questions (clustered by exam), within 1,000 words of "
                                           "context, the cut whose context holds the most of the cited provisions' text")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = ragcov_data.load_dataset("lgpd", "article", data_dir=str(data_dir))
    queries = ds["queries"].to_pandas()[["_id", "text"]]
    run = make_retriever("bm25-pt").index(ds["corpus"].to_pandas()).search(queries, k=200)
    ref = per_query_values(run, ds, metrics=["span_recall@1000w"])
    assert _overall(b["families"]["1000"])["article/bm25-pt"]["estimate"] == pytest.approx(
        ref["span_recall@1000w"].mean(), abs=1e-12)


def test_the_readings_disagree_in_one_sentence_exactly_where_they_name_other_cuts(parts):
    """Per corpus and budget: a sentence exactly where touch and text share lead with different cuts, naming both
    leaders and their numbers; the headline budget's sentence closes the corpus's answer."""
    for part in parts:
        b = part["budgets"]
        for w, d in b["disagreements"].items():
            touch = _overall(b["touched_families"][w])
            text = _overall(b["families"][w])
            t_lead = max(touch, key=lambda n: touch[n]["estimate"])
            x_lead = b["answers"][w]["leader"]
            assert d["agree"] == (t_lead.split("/")[0] == x_lead.split("/")[0])
            assert (d["sentence"] is None) == d["agree"]
            if d["sentence"]:
                assert d["touch_winner"] == t_lead and f"{touch[t_lead]['estimate']:.3f}" in d["sentence"]
                assert f"{text[t_lead]['estimate']:.3f} of their text" in d["sentence"]
        if b["disagreement"]["sentence"]:
            assert part["sentence"].endswith(b["disagreement"]["sentence"])


def test_the_corpora_agreement_is_read_from_both_answers(parts, results):
    irpf, lgpd = parts
    agree = results["cited_agreement"]
    for w in ("500", "1000", "2000"):
        names = {"IRPF": irpf["budgets"]["answers"][w]["chunking"], "LGPD": lgpd["budgets"]["answers"][w]["chunking"]}
        assert agree["by_budget"][w] == names and agree["agree_by_budget"][w] == (len(set(names.values())) == 1)
        said = f"{int(w):,} words: " + (f"{names['IRPF']} on both" if len(set(names.values())) == 1 else
                                        f"IRPF {names['IRPF']}, LGPD {names['LGPD']}")
        assert said in agree["sentence"]
    assert agree["sentence"].startswith("IRPF and LGPD ")
    assert corpora_agreement({"IRPF": irpf["budgets"], "LGPD": None}) is None


def test_console_report_and_summary_state_both_answers(results):
    """The console prints both chunking tables with the answer by text share, the touch reading, the winning cut at
    each budget and the curve one line a system, then the agreement; the report and summary.md hold an LGPD section
    led by its figure, and the first screen states both answers and the agreement."""
    text = summary(results)
    lines = text.splitlines()
    for corpus, part in (("IRPF", results["irpf"]), ("LGPD", results["lgpd"])):
        b = part["budgets"]
        assert f"{corpus} chunking x retriever within 1,000 words of context, share of the cited text" in text
        assert f"by the share of the cited text in the context (span_recall@1000w): {b['answer']['leader']}" in text
        for name, row in b["text_share_curve"]["1000"].items():
            assert any(x.split()[:3] == [name, f"{row['span_recall']:.3f}", f"{row['touched']:.3f}"] for x in lines)
    assert results["cited_agreement"]["sentence"][:150] in text
    said = [x for x in lines if x.lstrip().startswith(("Answer at", "Touched (", "Its context holds", "Winning cut"))]
    n_disagree = sum(bool(p["budgets"]["disagreement"]["sentence"]) for p in (results["irpf"], results["lgpd"]))
    assert len(said) == 6 + n_disagree and all(len(x) <= MAX_LINE for x in said)  # the reason is never cut
    for part in (results["irpf"], results["lgpd"]):
        d = part["budgets"]["disagreement"]
        if d["sentence"]:
            assert f"Its context holds {d['touch_winner_text_share']:.3f} of the cited text" in text
    page, md = render_html(results), render_markdown(results)
    sec = page[page.index('<section id="lgpd">'):page.index('<section id="glossary">')]
    assert 0 < sec.index('id="fig-lgpd_budget"') < sec.index("<table")
    assert _html.escape(results["lgpd"]["sentence"]) in sec and 'class="text-share-curve"' in sec
    top = page[page.index('<section id="verdicts">'):page.index("<h2>Task</h2>")]
    assert 'data-task="lgpd-chunking"' in top and 'data-task="cited-agreement"' in top and 'href="#lgpd"' in top
    assert "## Real questions (LGPD)" in md and results["lgpd"]["sentence"] in md
    assert results["cited_agreement"]["sentence"] in md
