"""One status, one mark, one sentence, in every output of one run.

The run: three retrievers on a 30-act cut of the shared ANEEL acervo (evaluate, leaderboard, misses, the
words-vs-dispositivo comparison) and two chunkings x two retrievers on the shared LGPD questions (the cited
chunking study within 1,000 words), assembled into the main job's ``results`` dict by the job's own block
functions. Each table's rows are given the three statuses in turn (measured short, cannot vouch, verified: the
renderers are what is tested here; the checks that produce the statuses are tested in ``tests/eval/test_verify*``),
the leader of every family measured short, as the IRPF answer's row was. Then every output is rendered — the
consoles of eval, leaderboard, chunking and misses, the report's first screen and sections, summary.md, LaTeX,
JSON — and each row's mark is read back beside its interval and compared with its status, and every footnote
with the one module's words: a row that cannot be vouched for is never said to cover less than the level.
"""
from __future__ import annotations

import html as html_lib
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import ragcov_data
from ragcov_data.baselines import BM25, TfIdf
from ragcov_data.eval import evaluate, leaderboard
from ragcov_data.eval.comparisons.cited import cited_chunking_study
from ragcov_data.eval.misses.analysis import misses
from ragcov_data.jobs.benchmark import _estimate_rows
from ragcov_data.jobs.studies import acervo_chunkings, chunking_comparison
from ragcov_data.reporting import console
from ragcov_data.reporting.blocks import budget_block, chunking_block, leaderboard_block, misses_block, study_sentence
from ragcov_data.reporting.render import render_html, render_markdown

#: The marks the project documents (docs/evaluator.md), written out here, not read from the code under test.
MARK = {"verified": "", "not_verified": "*", "unverifiable": "‡"}
ORDER = ("not_verified", "unverifiable", "verified")
REASON = "the documents at hand cannot show a larger one they lack (a reason as a check writes one)"
COVERAGE = {"not_verified": 0.912, "unverifiable": 0.968, "verified": 0.951}


def _give(frame: pd.DataFrame, order=ORDER, same=None) -> pd.DataFrame:
    """``frame`` with the statuses of ``order`` given to its rows in turn (first row first), as a check records them;
    rows equal in the columns ``same`` (one interval printed under several method names) share one status."""
    out = frame.copy()
    keys = list(range(len(out))) if same is None else \
        [tuple(np.round(v, 9) if isinstance(v, float) else v for v in k) for k in out[list(same)].itertuples(index=False)]
    turn = {k: order[i % len(order)] for i, k in enumerate(dict.fromkeys(keys))}
    st = [turn[k] for k in keys]
    out["verified_status"] = pd.Series(st, index=out.index, dtype=object)
    out["verified"] = pd.Series([s == "verified" for s in st], index=out.index, dtype=object)
    out["verified_coverage"] = [COVERAGE[s] for s in st]
    out["verified_mc_se"] = 0.009
    out["verified_reason"] = [REASON if s == "unverifiable" else "" for s in st]
    out["mark"] = [MARK[s] for s in st]
    return out


def _give_board(lb):
    """A leaderboard whose systems (per group, best first) carry the three statuses in turn."""
    parts = [_give(g) for _, g in lb.systems.groupby("group", sort=False)]
    lb.systems = pd.concat(parts).loc[lb.systems.index]
    return lb


@pytest.fixture(scope="module")
def run(data_dir, tmp_path_factory):
    warnings.simplefilter("ignore")
    folder = tmp_path_factory.mktemp("acervo")
    lines = (data_dir / "aneel" / "aneel_fulltext.jsonl").read_text(encoding="utf-8").splitlines()[:30]
    (folder / "acervo.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    tasks = acervo_chunkings({"data_files": [str(folder / "acervo.jsonl")], "chunk_words": 100})
    words = tasks["words-100"]
    makers = {"bm25-pt": lambda: BM25(analyzer="pt", show_progress=False), "tfidf": lambda: TfIdf(show_progress=False),
              "bm25": lambda: BM25(show_progress=False)}
    runs = {n: m().index(words["corpus"]).search(words["queries"], k=10, exclude_self=True, show_progress=False)
            for n, m in makers.items()}
    real = {"ev": evaluate(runs["bm25"], words, "hit@1", n_resamples=99),
            "lb": leaderboard(runs, words, metric="hit@1", estimator="micro", n_resamples=99),
            "ms": misses(runs["bm25"], words)}
    real["cmp"] = chunking_comparison(tasks, makers["bm25"], n_resamples=99)[0]
    lgpd = {"words-200": ragcov_data.load_dataset("lgpd", "words-200", data_dir=str(data_dir)),
            "article": ragcov_data.load_dataset("lgpd", data_dir=str(data_dir))}
    real["study"] = cited_chunking_study(lgpd, {"bm25": makers["bm25"], "tfidf": makers["tfidf"]},
                                         metrics=("recall@10",), budgets=(1000,), n_resamples=99)
    real_json = {k: json.loads(v.to_json()) for k, v in real.items()}
    # the same objects, each table's rows given the three statuses in turn
    ev, lb, ms, cmp_, study = (real[k] for k in ("ev", "lb", "ms", "cmp", "study"))
    ev.estimates = _give(ev.estimates, same=("estimator", "low", "high"))
    _give_board(lb)
    ms.flags = _give(ms.flags, same=("low", "high"))
    cmp_.chunkings = _give(cmp_.chunkings, same=("estimator", "low", "high"))
    cmp_.differences = _give(cmp_.differences, same=("low", "high"))
    cmp_.difference.update(_give(pd.DataFrame([cmp_.difference])).iloc[0].to_dict())
    for b in study.leaderboards.values():
        _give_board(b)
    results = _results(words, runs, ev, lb, ms, cmp_, study)
    return {"ev": ev, "lb": lb, "ms": ms, "cmp": cmp_, "study": study, "results": results, "real_json": real_json}


def _results(words, runs, ev, lb, ms, cmp_, study):
    """The main job's ``results`` dict, built by the job's own block functions from the objects above."""
    chunk = chunking_block(cmp_, "bm25")
    miss = misses_block(ms, "bm25", "words-100")
    budgets = budget_block(study, 1000)
    fam = study.leaderboards["recall@10"]
    irpf_board = leaderboard_block(study.leaderboards["span_recall@1000w"], "irpf")
    ret = {"name": "bm25", "estimates": _estimate_rows(ev.estimates), "diagnostics": {}}
    return {"meta": {"metric": "hit@1", "level": 0.95, "settings": {}}, "naive_methods": ["wald_iid", "chunk_bootstrap"],
            "task": {"name": "aneel_taesa", "documents": 30, "queries": len(words["queries"])},
            "retrievers": [ret], "comparisons": [], "leaderboard": leaderboard_block(lb, "aneel_taesa"),
            "chunkings": chunk, "misses": miss, "study": study_sentence(miss, chunk), "coverage": None,
            "irpf": {"leaderboard": irpf_board, "chunkings": leaderboard_block(fam, "irpf_chunkings"),
                     "budgets": budgets, "sentence": budgets["sentence"], "leaderboard_sentence": irpf_board["sentence"],
                     "n_questions": 350}}


# ------------------------------------------------------------------------------------------ reading marks back
def _interval(lo, hi, nd=4, tex=False):
    text = f"[{lo:.{nd}f}, {hi:.{nd}f}]"
    return text.replace("-", "$-$") if tex else text


def _mark_after(text: str, interval: str, near: str | None = None) -> set[str]:
    """The marks found right after ``interval`` in ``text`` (on lines holding ``near``, when given)."""
    found = set()
    for line in text.splitlines():
        if near is not None and near not in line:
            continue
        for m in re.finditer(re.escape(interval) + r"(\s?(\*|‡|\$\^\*\$|\$\^\\ddagger\$))?", line):
            found.add({"*": "*", "‡": "‡", "$^*$": "*", "$^\\ddagger$": "‡"}.get(m.group(2) or "", ""))
    return found


def _check_rows(text, rows, *, name, nd=4, near=True, tex=False, lo="low", hi="high", where=""):
    """Every row's interval in ``text`` carries exactly its status's mark."""
    seen = 0
    for r in rows:
        st = r["verified_status"]
        got = _mark_after(text, _interval(r[lo], r[hi], nd, tex), name(r) if near else None)
        assert got, (where, name(r), "interval not found")
        assert got == {MARK[st]}, (where, name(r), st, got)
        seen += 1
    assert {r["verified_status"] for r in rows} >= {"not_verified", "unverifiable", "verified"} or seen < 3, where


def _plain(text: str) -> str:
    """A page's text, a line between tags (a console's text as it is)."""
    if "<html" in text[:200].lower() or "<section" in text[:200]:
        return html_lib.unescape(re.sub(r"<[^>]+>", "\n", text))
    return text


def _check_words(text, rows, *, label, where=""):
    """Footnotes: a row measured short is named with its coverage and 'short of'; a row the check cannot vouch for
    is named with the check's reason and never with 'short of' or a coverage; a verified row is never named."""
    text = _plain(text)
    notes = [x for x in text.splitlines() if re.search(r"(\* NOT VERIFIED|‡ UNVERIFIABLE)", x)]
    short = " ".join(x for x in notes if "NOT VERIFIED" in x)
    blind = [x for x in notes if "UNVERIFIABLE" in x]
    for r in rows:
        st, lab = r["verified_status"], label(r)
        if st == "not_verified":
            assert f"{lab} covers {100 * COVERAGE[st]:.1f}% ± 1.8%" in short, (where, lab)
            assert "short of the 95% level at this design" in short
        elif st == "unverifiable":
            line = next((x for x in blind if lab in x), None)
            assert line is not None and REASON in line, (where, lab)
            assert "short of" not in line and "covers" not in line.split(REASON)[0], (where, line)
        else:
            assert not any(re.search(re.escape(lab) + r"( |:|;|,|$)", x) for x in notes), (where, lab)


def _systems(board, group="__all__"):
    return [r for r in board.systems.to_dict(orient="records") if r["group"] == group]


# ------------------------------------------------------------------------------------------ consoles
def test_eval_console_marks_every_row(run):
    ev = run["ev"]
    rows = ev.estimates.to_dict(orient="records")
    full = ev.summary(methods="all")
    for r in rows:  # the table's check column, read by the row's estimator, method and bounds
        line = next(x for x in full.splitlines() if x.split()[:2] == [r["estimator"], r["method"]]
                    and f"{r['low']:.4f}" in x)
        after = line.split(f"{r['high'] - r['low']:.4f}", 1)[1].split()
        assert (after[0] if after and after[0] in ("*", "‡") else "") == MARK[r["verified_status"]], r["method"]
    _check_words(full, [r for r in rows if r["verified_status"]], label=lambda r: f"{r['estimator']} {r['method']}",
                 where="eval --methods all")
    shown = ev.summary()  # what `ragcov eval` prints: the recommended rows, their marks and theirs only
    rec = [r for r in rows if r["recommended"]]
    _check_words(shown, rec, label=lambda r: f"{r['estimator']} {r['method']}", where="eval")
    assert all(f"{r['estimator']} {r['method']}" not in x for r in rows if not r["recommended"]
               for x in shown.splitlines() if "NOT VERIFIED" in x or "UNVERIFIABLE" in x)


def test_leaderboard_outputs_mark_every_system(run):
    lb = run["lb"]
    rows = _systems(lb)
    assert [r["verified_status"] for r in rows] == list(ORDER)  # the leader is the one measured short
    for text, where, kw in ((lb.summary(), "text", {}), (lb.to_markdown(), "markdown", {}),
                            (lb.to_html(), "html", {}), (lb.to_latex(), "latex", {"tex": True})):
        _check_rows(text, rows, name=lambda r: r["name"], where=where, **kw)
        if where != "latex":
            _check_words(text, rows, label=lambda r: r["name"], where=where)
    tex = lb.to_latex()
    assert "$^*$ NOT VERIFIED" in tex and "$^\\ddagger$ UNVERIFIABLE" in tex and "short of" in tex


def test_chunking_console_marks_every_system_of_every_family(run):
    study = run["study"]
    text, md = study.summary(), study.to_markdown()
    for metric, b in study.leaderboards.items():
        rows = _systems(b)
        assert rows[0]["verified_status"] == "not_verified"  # the family's leader (the answer's row)
        _check_rows(study.table_text(), rows, name=lambda r: r["name"], nd=3, where=f"table {metric}")
        _check_rows(md, rows, name=lambda r: r["name"], nd=3, where=f"markdown {metric}")
        _check_rows(b.summary(), rows, name=lambda r: r["name"], where=f"family {metric}")
        label = "recall@10 (unequal context)" if metric == "recall@10" else metric
        _check_words(study.table_text(), rows, label=lambda r: f"{r['name']} ({label})", where=metric)
    assert "covers less than the nominal level" not in text


def test_misses_and_chunking_comparison_consoles(run):
    ms, cmp_ = run["ms"], run["cmp"]
    rows = ms.flags.to_dict(orient="records")
    text = ms.summary()
    _check_rows(text, rows, name=lambda r: f"  {r['name']} ", nd=3, lo="low_bounded", hi="high_bounded",
                where="misses")
    _check_words(text, rows, label=lambda r: r["name"], where="misses")
    text = cmp_.summary()
    for r in cmp_.chunkings.to_dict(orient="records"):
        lo, hi = r.get("low_bounded", r["low"]), r.get("high_bounded", r["high"])
        assert _mark_after(text, _interval(lo, hi), r["name"]) == {MARK[r["verified_status"]]}
    for r in cmp_.differences.to_dict(orient="records"):
        lo, hi = r.get("low_bounded", r["low"]), r.get("high_bounded", r["high"])
        iv = f"[{lo:+.4f}, {hi:+.4f}]"
        assert _mark_after(text, iv, r["method"]) == {MARK[r["verified_status"]]}, r["method"]


# ------------------------------------------------------------------------------------------ the report
def _section(html: str, ident: str) -> str:
    start = html.index(f'<section id="{ident}"')
    return html[start:html.index("</section>", html.index(">", start))]


def test_report_first_screen_sections_summary_and_latex_agree(run):
    results = run["results"]
    html = render_html(results, figs={})
    first = html[html.index('<section id="verdicts">'):html.index("</nav>")]
    aneel = _systems(run["lb"])
    art = _systems(run["study"].leaderboards["span_recall@1000w"])
    # the first screen: the answer table (ANEEL's systems and the IRPF systems) and the answer's own row
    _check_rows(first, aneel, name=lambda r: f'<td class="sys">{r["name"]}</td>', where="first screen ANEEL")
    _check_words(first, aneel, label=lambda r: f"ANEEL self-retrieval: {r['name']}", where="first screen")
    leader = results["irpf"]["budgets"]["answer"]["leader"]
    assert leader == art[0]["name"] and f"* NOT VERIFIED: {leader} covers 91.2% ± 1.8%" in first  # never dropped
    # every section's tables
    _check_rows(_section(html, "aneel"), aneel, name=lambda r: f'<td class="name">{r["name"]}</td>',
                where="ANEEL section")
    _check_rows(_section(html, "irpf"), art, name=lambda r: f'<td class="name">{r["name"]}</td>',
                where="IRPF section")
    est = [r for r in results["retrievers"][0]["estimates"]]
    rets = _section(html, "retrievers")
    for r in est:  # every method of every retriever
        assert _mark_after(rets, f"{r['estimate']:.4f} [{r['low']:.4f}, {r['high']:.4f}]") == {MARK[r["verified_status"]]}
    _check_words(rets, est, label=lambda r: f"bm25 {r['estimator']} {r['method']}", where="retrievers section")
    chunk = _section(html, "chunking")
    for r in results["misses"]["flags"]:
        assert _mark_after(chunk, f"[{r['low']:.3f}, {r['high']:.3f}]", f"<td>{r['name']}</td>") \
            == {MARK[r["verified_status"]]}, r["name"]
    # summary.md: the answer table's mark column and every section's tables
    md = render_markdown(results)
    for r in aneel:
        row = next(x for x in md.splitlines() if x.startswith("| ANEEL") and f"| {r['name']} |" in x)
        assert row.split(" | ")[6] == MARK[r["verified_status"]], row
    _check_rows(md, art, name=lambda r: f"| {r['name']} |", where="summary.md IRPF")
    assert f"* NOT VERIFIED: {leader} covers 91.2% ± 1.8%" in md
    _check_words(md, aneel, label=lambda r: f"ANEEL self-retrieval: {r['name']}", where="summary.md")
    # the console summary and its LaTeX
    text = console.summary(results)
    _check_rows(text, aneel, name=lambda r: f"  {r['name']} ", where="console ANEEL")
    _check_rows(text, art, name=lambda r: f"  {r['name']} ", where="console IRPF")
    tex = console.latex_summary(results)
    _check_rows(tex, aneel, name=lambda r: r["name"], tex=True, where="latex summary")
    for out in (html, md, text, tex):
        assert "covers less than the nominal level" not in out
        assert not re.search(r"UNVERIFIABLE[^\n]*short of", _plain(out))


def test_json_rows_carry_status_reason_and_the_mark_of_their_status(run):
    """On the real (ungiven) objects: every interval record's ``mark`` is its ``verified_status``'s."""
    js = run["real_json"]
    records = (js["ev"]["estimates"] + js["lb"]["systems"] + js["ms"]["flags"] + js["cmp"]["differences"]
               + [e for c in js["cmp"]["chunkings"] for e in c["estimates"]]
               + [r for b in js["study"]["leaderboards"].values() for r in b["systems"]])
    statuses = set()
    for r in records:
        assert "verified_status" in r and "verified_reason" in r and "mark" in r, r
        assert r["mark"] == MARK.get(r["verified_status"], ""), r
        statuses.add(r["verified_status"])
        if r["verified_status"] == "unverifiable":
            assert r["verified_reason"]  # the check said why
    assert {"not_verified", "unverifiable", "verified"} <= statuses  # the real run holds all three
    assert np.isfinite(pd.DataFrame(js["lb"]["systems"])["verified_coverage"].astype(float)).all()
