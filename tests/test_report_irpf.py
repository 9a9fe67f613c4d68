"""The real-questions (IRPF) part of the benchmark on the shared questions: every retriever ranked on recall@10
of the cited provisions over article chunks, the chunking x retriever family, and the one-sentence answer
whose intervals and verdicts are the family's own; the section leads with its figure and reaches the first
screen.

The part is read from the session's one quick main job (``tests/_quick_job.py``: retrievers bm25 and tfidf, every
cut of :data:`IRPF_CHUNKINGS`, ``--n-resamples 99``), as its ``results.json`` and log hold it."""
from __future__ import annotations

import html as _html
import json
import re

import numpy as np
import pytest
from _quick_job import QUICK_ARGS, quick_job

from ragcov_data.jobs import benchmark as pipeline
from ragcov_data.reporting.render import IRPF_SKIPPED, render_html, render_markdown

CHUNKINGS = pipeline.IRPF_CHUNKINGS
NAMES = QUICK_ARGS[QUICK_ARGS.index("--retrievers") + 1].split(",")


@pytest.fixture(scope="module")
def irpf(tmp_path_factory, data_dir):
    job = quick_job(tmp_path_factory, data_dir)
    out = json.loads((job.out / "results.json").read_text(encoding="utf-8"))["irpf"]
    return out, job.err.splitlines()


@pytest.fixture(scope="module")
def page(irpf):
    results = {"meta": {"level": 0.95}, "task": {}, "retrievers": [], "irpf": irpf[0]}
    return render_html(results), render_markdown(results)


def _overall(board):
    return {s["name"]: s for s in board["systems"] if s["group"] == "__all__"}


def test_json_holds_the_leaderboard_the_family_and_the_sentence(irpf):
    ir, log = irpf
    assert {"leaderboard", "chunkings", "sentence"} <= set(ir)
    assert set(_overall(ir["leaderboard"])) == set(NAMES) and ir["leaderboard"]["metric"] == "recall@10"
    fam = _overall(ir["chunkings"])
    assert set(fam) == {f"{c}/{r}" for c in CHUNKINGS for r in pipeline.IRPF_STUDY_RETRIEVERS}
    assert ir["chunkings"]["n_pairs"] == len(fam) * (len(fam) - 1) // 2
    assert any("resolved to their artigo only" in m or "not in the corpus" in m for m in log)  # said, not dropped


def test_leaderboard_equals_an_independent_recall(irpf, data_dir):
    """bm25's recall@10 on article chunks, recomputed here from the run and the citations."""
    from ragcov_data.baselines import BM25
    from ragcov_data.loaders.cited_questions import IRPF_FILES, build_cited_task

    folder = data_dir / "irpf"
    task = build_cited_task(folder / IRPF_FILES["acts"], folder / IRPF_FILES["questions"], dataset="irpf",
                            chunking="article")
    q = task["queries"].to_pandas() if hasattr(task["queries"], "to_pandas") else task["queries"]
    run = BM25(show_progress=False).index(task["corpus"]).search(q[["_id", "text"]], k=10, show_progress=False)
    cits = task.citations.to_pandas() if hasattr(task.citations, "to_pandas") else task.citations
    top = {str(qid): set(g.sort_values(["score", "corpus-id"], ascending=[False, False])["corpus-id"].astype(str)[:10])
           for qid, g in run.groupby("query-id")}
    rec = []
    for qid, g in cits[cits["status"] == "resolved"].groupby("query-id"):
        provisions = {}  # distinct cited provisions: one per character span, whatever the chunking
        for d, s, e, c in zip(g["doc_id"], g["start_char"], g["end_char"], g["chunks"]):
            if len(c):
                provisions[(d, int(s), int(e))] = set(map(str, c))
        if provisions:
            rec.append(np.mean([bool(top.get(str(qid), set()) & p) for p in provisions.values()]))
    assert len(rec) == irpf[0]["leaderboard"]["n_queries"]
    assert _overall(irpf[0]["leaderboard"])["bm25"]["estimate"] == pytest.approx(np.mean(rec), abs=1e-9)


def test_the_answer_is_the_equal_context_family(irpf):
    """The section's answer names the 1,000-word budget, and its numbers are that family's own; recall@10
    across chunkings is said as comparing unequal contexts, never as the answer."""
    ir = irpf[0]
    b = ir["budgets"]
    fam = b["families"]["1000"]
    assert b["budget"] == 1000 and fam["metric"] == "span_recall@1000w" and set(b["families"]) == {"500", "1000", "2000"}
    assert b["touched_families"]["1000"]["metric"] == "recall@1000w" and set(b["answers"]) == set(b["families"])
    est = _overall(fam)
    ans = b["answer"]
    assert ans["leader"] == max(est, key=lambda n: est[n]["estimate"])
    assert ans["chunking"] == ans["leader"].split("/")[0] != ans["next"].split("/")[0]
    pair = next(p for p in fam["pairs"] if {p["a"], p["b"]} == {ans["leader"], ans["next"]})
    s = 1 if pair["a"] == ans["leader"] else -1
    assert ans["diff"] == pytest.approx(s * pair["diff"], abs=1e-12)
    assert ans["diff"] == pytest.approx(est[ans["leader"]]["estimate"] - est[ans["next"]]["estimate"], abs=1e-12)
    assert sorted((ans["low"], ans["high"])) == pytest.approx(sorted((s * pair["low"], s * pair["high"])), abs=1e-12)
    assert ans["separable"] == bool(pair["significant"])
    text = ir["sentence"]
    assert re.search(r"^On 174 real IRPF questions \([^)]+\), within 1,000 words of context, the cut whose context "
                     r"holds the most of the cited provisions' text is ", text)
    assert f"{ans['diff']:+.3f}, simultaneous 95% interval [{ans['low']:+.3f}, {ans['high']:+.3f}]" in text
    assert not re.search(r"recall@10(?!\d)", text) and "top 10" not in text
    assert ir["unequal_context_sentence"].startswith("At unequal contexts (recall@10, ")
    pts = {(c["name"], c["budget"]): c for c in b["curve"]}
    assert len(pts) == 3 * len(est) and pts[(ans["leader"], 1000)]["estimate"] == est[ans["leader"]]["estimate"]


def test_sentence_prints_the_family_intervals_and_never_contradicts_them(irpf):
    ir = irpf[0]
    text = ir["unequal_context_sentence"]
    pairs = {(p["a"], p["b"]): p for p in ir["chunkings"]["pairs"] if p["group"] == "__all__"}
    num = lambda s: float(s.replace("−", "-"))  # noqa: E731
    sep_by: dict[str, list[bool]] = {}
    for seg in re.split(r"; (?=with )", text.split(": ", 1)[1]):
        ret = re.match(r"with (\S+), ", seg).group(1)
        found = re.findall(r"([\w-]+) − ([\w-]+) ([+−]\d\.\d{3}) \[([+−]\d\.\d{3}), ([+−]\d\.\d{3})\]", seg)
        assert found, seg
        for a, b, d, lo, hi in found:
            x, y = f"{a}/{ret}", f"{b}/{ret}"
            s = 1 if (x, y) in pairs else -1
            p = pairs[(x, y)] if s == 1 else pairs[(y, x)]
            assert num(d) == pytest.approx(s * p["diff"], abs=6e-4)
            assert sorted((num(lo), num(hi))) == pytest.approx(sorted((s * p["low"], s * p["high"])), abs=6e-4)
            assert (num(lo) > 0 or num(hi) < 0) == bool(p["significant"])  # the verdict is the interval's
            sep_by.setdefault(ret, []).append(bool(p["significant"]))
    assert set(sep_by) == set(pipeline.IRPF_STUDY_RETRIEVERS)
    lead = re.search(r"the lead over the next cut is separable under ([^,.]+)", text).group(1)
    yes = [r for r, s in sep_by.items() if s[0]]
    assert lead == ("no retriever" if not yes else "every retriever" if len(yes) == len(sep_by) else ", ".join(yes))


def test_section_leads_with_its_figure_and_reaches_the_first_screen(irpf, page):
    html, md = page
    ir = irpf[0]
    sec = html[html.index('<section id="irpf">'):]
    sec = sec[:sec.index('<section id="glossary">')]
    assert "<h2>Real questions (IRPF)</h2>" in sec
    first_svg, first_table = sec.find("<svg"), sec.find("<table")
    assert 0 < first_svg < first_table
    assert sec.count("<svg") >= 2  # a forest plot for the family and one for the leaderboard
    assert _html.escape(ir["sentence"]) in sec
    top = html[html.index('<section id="verdicts">'):html.index("<h2>Task</h2>")]
    assert 'data-task="irpf-chunking"' in top and _html.escape(ir["sentence"]) in top
    answer = re.search(r'<table class="answer">(.*?)</table>', top, flags=re.S).group(1)
    for s in _overall(ir["leaderboard"]).values():
        assert "IRPF questions" in answer and f"[{s['low']:.4f}, {s['high']:.4f}]" in answer
    assert 'href="#irpf"' in top
    assert "## Real questions (IRPF)" in md and ir["sentence"] in md
    fig = sec.index('id="fig-irpf_budget"')  # recall against budget, right after the answer
    assert sec.index(_html.escape(ir["sentence"])) < fig < first_svg
    assert "unequal contexts, k chunks of each chunking" in sec and "(unequal contexts)" in md


def test_missing_irpf_folder_is_one_line():
    results = {"meta": {"level": 0.95}, "task": {}, "retrievers": [], "irpf": None}
    assert IRPF_SKIPPED in render_html(results) and IRPF_SKIPPED in render_markdown(results)
    assert '<section id="irpf">' not in render_html(results)


def test_console_compares_chunkings_at_the_answers_budget():
    """The console's IRPF chunking table is the family at the budget the answer names (like for like), with the
    answer's line; recall@10 across chunkings appears only labelled as unequal contexts."""
    from ragcov_data.reporting.console import summary, task_boards

    board = {"metric": "recall@1000w", "level": 0.95, "systems": [], "pairs": []}
    results = {"irpf": {"chunkings": {"metric": "recall@10"},
                        "budgets": {"answer": {"budget": 1000, "leader": "words-50/bm25", "next": "words-100/bm25",
                                               "diff": 0.03, "low": -0.02, "high": 0.08, "separable": False,
                                               "sentence": "x"},
                                    "families": {"1000": board}}}}
    (key, title, got), = [b for b in task_boards(results) if b[0] == "irpf-chunking"]
    assert got is board and "within 1,000 words" in title
    fallback = {"irpf": {"chunkings": {"metric": "recall@10"}}}
    (_, title2, _), = [b for b in task_boards(fallback) if b[0] == "irpf-chunking"]
    assert "unequal contexts" in title2


def test_report_shows_the_budgeted_family_behind_the_answer(irpf, page):
    """The family the answer ("within N words") comes from is in report.html and summary.md, before
    recall@10's (the unequal-context one), with every system's interval."""
    html, md = page
    ir = irpf[0]
    b = ir["budgets"]["budget"]
    fam = ir["budgets"]["families"][str(b)]
    sec = html[html.index('<section id="irpf">'):]
    head = f"within {b:,} words of context"
    assert head in sec and sec.index(head) < sec.index("unequal contexts, k chunks of each chunking")
    assert head in md and md.index(head) < md.index("(unequal contexts)")
    for s in _overall(fam).values():
        assert f"{s['estimate']:.4f}" in md and f"[{s['low']:.4f}, {s['high']:.4f}]" in md


def test_main_job_ranks_the_cuts_with_the_retriever_the_readme_quotes():
    """The README's IRPF answer is the Portuguese BM25's (bm25-pt); the main job's study ranks the cuts with it,
    so the README, the main job and its report give one number for one answer."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert "the Portuguese BM25" in readme
    assert "bm25-pt" in pipeline.IRPF_STUDY_RETRIEVERS
