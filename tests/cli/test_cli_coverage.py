"""End-to-end tests of the coverage, plan, report and benchmark verbs (ANEEL sample, small settings)."""
from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from _quick_job import quick_job

from ragcov_data.cli import main


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory, data_dir):
    """The quick main job's output folder (read only), what it printed and its log (tests/_quick_job.py: one run
    a session, shared with the report's browser checks and the main job's page)."""
    job = quick_job(tmp_path_factory, data_dir)
    return job.out, job.printed, job.err


@pytest.fixture(scope="module")
def bench(bench_run):
    return bench_run[0]


@pytest.fixture(scope="module")
def bench_out(bench_run):
    out, printed, _ = bench_run
    return json.loads((out / "results.json").read_text()), printed


@pytest.fixture(scope="module")
def census(bench, tmp_path_factory):
    """BM25's per-document counts on the ANEEL sample, written as a population file."""
    res = json.loads((bench / "results.json").read_text())
    per_doc = pd.DataFrame(next(r for r in res["retrievers"] if r["name"] == "bm25")["per_doc"])
    path = tmp_path_factory.mktemp("pop") / "census.csv"
    per_doc.to_csv(path, index=False)
    return path


def test_console_pointers_name_sections_of_the_report(bench):
    """Every "(report: X)" the console can print names a section heading of report.html and of summary.md."""
    import re
    from pathlib import Path

    import ragcov_data.reporting.console as console

    pointers = set(re.findall(r"\(report: ([^)]+)\)", Path(console.__file__).read_text(encoding="utf-8")))
    assert {"Chunking and misses", "JurisTCU"} <= pointers
    heads = set(re.findall(r"<h2>([^<]+)</h2>", (bench / "report.html").read_text(encoding="utf-8")))
    md = (bench / "summary.md").read_text(encoding="utf-8")
    for p in pointers:
        assert p in heads, (p, heads)
        assert re.search(rf"^## {re.escape(p)}\b", md, flags=re.M), p


def test_benchmark_log_lines_fit_200_characters(bench_run):
    log = [line for line in bench_run[2].splitlines() if line.startswith("[ragcov]")]
    assert len(log) >= 5
    assert max(map(len, log)) <= 200, max(log, key=len)


def test_log_line_shortens_paths_and_wraps_what_is_still_long(tmp_path, monkeypatch):
    from ragcov_data.cli._common import log_line

    monkeypatch.chdir(tmp_path)
    deep = tmp_path / ("a" * 60) / ("b" * 60) / "irpf"
    lines = log_line(f"IRPF real questions from {deep}: chunkings " + ", ".join(f"words-{n}" for n in range(60)))
    assert all(len(x) <= 200 and x.startswith("[ragcov]") for x in lines) and len(lines) >= 2
    joined = " ".join(x.removeprefix("[ragcov]").strip() for x in lines)
    assert str(tmp_path) not in joined and f"{'a' * 60}/{'b' * 60}/irpf" in joined  # relative, nothing dropped
    assert "words-59" in joined


def test_benchmark_writes_complete_results(bench, capsys):
    res = json.loads((bench / "results.json").read_text())
    assert [r["name"] for r in res["retrievers"]] == ["bm25", "tfidf"]
    assert res["task"]["documents"] == 147
    bm25 = res["retrievers"][0]
    assert sum(d["n"] for d in bm25["per_doc"]) == res["task"]["queries"]
    methods = {(e["estimator"], e["method"]) for e in bm25["estimates"]}
    assert ("micro", "wald_iid") in methods and ("macro", "t") in methods
    assert len(res["comparisons"]) == 1 and res["comparisons"][0]["a"] == "bm25"
    cov = pd.DataFrame(res["coverage"]["rows"])
    assert sorted(cov["k"].unique()) == [5, 10, 20] and cov["coverage"].between(0, 1).all()
    assert set(res["coverage"]["recommendation"]) == {"micro", "macro"}
    assert res["juristcu"] and res["juristcu"]["estimates"]
    for f in ("report.html", "summary.md"):
        assert (bench / f).stat().st_size > 1000
    assert "(naive)" in (bench / "summary.md").read_text()


def test_benchmark_pairs_are_family_wise(bench):
    """Every pairwise record (ANEEL and JurisTCU) is filled from the leaderboard: p_adj and family."""
    res = json.loads((bench / "results.json").read_text())
    lb = res["leaderboard"]
    assert lb["metric"] == "hit@1" and lb["cluster"] == "doc_id" and lb["family"]["p_adj"].startswith("hull_adjusted")
    assert {s["name"] for s in lb["systems"]} == {"bm25", "tfidf"} and lb["n_pairs"] == 1
    pair = lb["pairs"][0]
    for c in res["comparisons"]:
        assert c["family"]["p_adj"].startswith("hull_adjusted") and c["family"]["n_pairs"] == 1
        assert [e["method"] for e in c["estimates"]] == ["simultaneous"] and "p_adj" in c["interval"]
        sign = 1 if (c["a"], c["b"]) == (pair["a"], pair["b"]) else -1  # comparisons keep retriever order
        assert (c["a"], c["b"]) == ("bm25", "tfidf")
        assert c["diff"] == pytest.approx(sign * pair["diff"]) and c["p_adj"] == pytest.approx(pair["p_adj"])
        assert sorted((c["low"], c["high"])) == pytest.approx(sorted((sign * pair["low"], sign * pair["high"])))
    jt = res["juristcu"]
    assert jt["comparisons"] and all("p_adj" in r and r["family"] for r in jt["comparisons"])
    assert jt["leaderboard"]["metric"] == "ndcg@10" and jt["sentence"] == jt["leaderboard"]["separable"]["__all__"]


def test_benchmark_chunkings_and_misses(bench):
    """Both chunkings compared by document; the misses summary in JSON, the full list in misses.csv."""
    res = json.loads((bench / "results.json").read_text())
    ch = res["chunkings"]
    assert ch["names"] == ["words-100", "dispositivo"] and ch["retriever"] == "bm25"
    assert ch["difference"]["n_documents"] == len(ch["per_document"])
    m = res["misses"]
    assert m["chunking"] == "words-100" and m["dispositivo"]["chunking"] == "dispositivo"
    assert "misses" not in m and "misses" not in m["dispositivo"]  # the per-miss list lives in misses.csv
    bm25 = next(r for r in res["retrievers"] if r["name"] == "bm25")
    assert m["n_queries"] == res["task"]["queries"]
    assert m["n_misses"] == sum(d["n"] - d["hits"] for d in bm25["per_doc"])  # the same hit@1 as evaluate
    assert {f["name"] for f in m["flags"]} >= {"same_type", "near_duplicate", "other_edition"}
    table = pd.read_csv(bench / "misses.csv")
    assert table["chunking"].value_counts().to_dict() == {"words-100": m["n_misses"],
                                                          "dispositivo": m["dispositivo"]["n_misses"]}
    share = table.loc[table["chunking"] == "words-100", "same_type"].mean()
    assert next(f["share"] for f in m["flags"] if f["name"] == "same_type") == pytest.approx(share)
    assert f"Of BM25's {m['n_misses']:,} hit@1 misses" in res["study"]


def test_benchmark_prints_one_verdict_line_per_task(bench_out):
    from ragcov_data.eval.comparisons.leaderboard_render import short_sentence

    res, out = bench_out
    for board in (res["leaderboard"], res["juristcu"]["leaderboard"], res["irpf"]["leaderboard"]):
        assert f"  {short_sentence(board)}" in out
    assert "Chunking (bm25, ANEEL): dispositivo − words-100 = " in out
    assert "misses:  " in out and "latex:   " in out


def test_quick_console_has_a_score_table_per_task_and_short_lines(bench_out):
    """`ragcov benchmark --quick`: one table per task (system, score [interval], tier, rank interval), every
    system of the task a row with its numbers; no line over 200 characters outside the tables."""
    from ragcov_data._format import num

    res, out = bench_out
    lines = out.splitlines()
    boards = {"ANEEL self-retrieval": res["leaderboard"], "JurisTCU": res["juristcu"]["leaderboard"],
              "IRPF real questions, article chunks": res["irpf"]["leaderboard"]}
    in_table: set[int] = set()
    for title, board in boards.items():
        start = lines.index(title)
        header = lines[start + 2]
        assert header.split() == ["system", "score", "95%", "interval", "tier", "rank", "[interval]"]
        systems = [s for s in board["systems"] if s["group"] == "__all__"]
        for k, s in enumerate(systems):
            row = lines[start + 3 + k]
            assert row.split()[0] == s["name"] and num(s["estimate"]) in row
            assert f"[{num(s['low'])}, {num(s['high'])}]" in row and f"{s['rank']} [{s['rank_low']}, {s['rank_high']}]" in row
            # each interval marked by its check, as in the report: * measured short, ‡ the check cannot vouch
            assert (" * " in row) == (s["verified_status"] == "not_verified")
            assert (" ‡ " in row) == (s["verified_status"] == "unverifiable")
            in_table.add(start + 3 + k)
        in_table.add(start + 2)
    long = [ln for i, ln in enumerate(lines) if i not in in_table and len(ln) > 200]
    assert not long, long
    assert "at K=" not in out and "at K =" not in out
    assert "macro t (as the rows)" in out  # the macro method named as the rows use it


def test_benchmark_first_table_headlines_a_verified_estimator(bench, bench_out):
    """ANEEL's documents are wildly unequal: no micro interval holds there, so the first table headlines the
    per-document mean (every row verified) and gives trec_eval's numbers on a second line, with the reason."""
    from ragcov_data._format import num

    res, out = bench_out
    board = res["leaderboard"]
    rows = [s for s in board["systems"] if s["group"] == "__all__"]
    assert all(s["verified"] is True for s in rows)  # no headline row NOT VERIFIED
    micro = board["info"]["micro_line"]
    assert board["estimator"] == "macro" and micro["estimator"] == "micro"
    assert all(s["verified"] is not True for s in micro["systems"])  # why macro took the headline
    section = out.split("ANEEL self-retrieval", 1)[1].split("\n\n", 1)[0]
    assert "mean of per-document means" in section and "NOT VERIFIED" not in section
    line = next(ln for ln in section.splitlines() if ln.startswith("  micro (mean over queries, trec_eval's number)"))
    for s in micro["systems"]:
        assert f"{s['name']} {num(s['estimate'])}" in line
    assert "  micro is not verified at this design: its intervals cover " in section
    assert "the largest holds 18% of them" in section
    # the report's first screen and summary.md say it too, and name the headline per document
    md = (bench / "summary.md").read_text(encoding="utf-8")
    assert "hit@1 (per-document mean)" in md and micro["reason"] in md
    page = (bench / "report.html").read_text(encoding="utf-8")
    assert "micro is not verified at this design" in page and "hit@1 (per-document mean)" in page


def test_benchmark_latex_summary_is_booktabs(tmp_path_factory, data_dir):
    tex = quick_job(tmp_path_factory, data_dir).latex.read_text(encoding="utf-8")
    # one table per part the job ran: ANEEL, JurisTCU, IRPF, and the chunking answer on IRPF and LGPD
    labels = re.findall(r"\\label\{tab:([^}]+)\}", tex)
    assert labels == ["aneel-taesa-all-systems", "juristcu-all-systems", "irpf-all-systems",
                      "irpf-chunking-all-systems", "lgpd-chunking-all-systems"]
    n = len(labels)
    assert tex.count("\\begin{table}") == n and tex.count("\\toprule") == tex.count("\\bottomrule") == n
    assert "95\\% interval" in tex and "JurisTCU, all queries" in tex


def test_report_rerenders_from_json(bench, tmp_path, capsys):
    assert main(["report", str(bench / "results.json"), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "report.html").read_text() == (bench / "report.html").read_text()
    assert "report:" in capsys.readouterr().out


def test_coverage_verb_on_census(census, tmp_path, capsys):
    out = tmp_path / "cov.csv"
    assert main(["coverage", str(census), "--k", "5,10", "--reps", "100", "--methods", "wald_iid,cr2,t",
                 "--out", str(out), "--no-progress"]) == 0
    tab = pd.read_csv(out)
    # cr2 applies to both estimators: micro wald_iid + cr2, macro cr2 + t, at two K
    assert len(tab) == 2 * 4 and set(tab["method"]) == {"wald_iid", "cr2", "t"}
    assert "147 documents" in capsys.readouterr().out


def test_plan_verb_on_census(census, capsys):
    assert main(["plan", str(census), "--halfwidth", "0.1", "--k", "20", "--reps", "100", "--n-resamples", "49",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "micro: K =" in out and "macro: K =" in out and "RecommendResult(k=20" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["coverage", "{census}", "--k", "500", "--no-progress"], "larger than the population (147 documents)"),
        (["coverage", "{census}", "--methods", "wald", "--no-progress"], "Did you mean"),
        (["coverage", "{empty}", "--no-progress"], "empty"),
        (["coverage", "missing.csv"], "not found"),
        (["plan", "{census}", "--halfwidth", "3"], "target_halfwidth"),
        (["report", "{empty}"], "not valid JSON"),
        (["benchmark", "--data-dir", "{data}", "--retrievers", "bm52"], "Did you mean 'bm25'"),
        (["benchmark", "--data-dir", "/nonexistent/dir"], "does not exist"),
    ],
)
def test_bad_arguments_one_line_nonzero(argv, message, census, tmp_path, data_dir, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("doc_id,n,hits\n")
    argv = [a.format(census=census, empty=empty, data=data_dir) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


@pytest.mark.parametrize("verb", ["coverage", "plan", "report", "benchmark"])
def test_help_is_complete(verb, capsys):
    with pytest.raises(SystemExit) as exc:
        main([verb, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "example:" in out and "usage: ragcov " + verb in out


def test_unparseable_k_is_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["coverage", "--twin", "--k", "five"])
    assert exc.value.code == 2
    assert "comma-separated integers" in capsys.readouterr().err


def test_benchmark_summary_never_calls_an_unverified_method_recommended():
    from ragcov_data.cli.benchmark import _summary

    rec = {"micro": {"method": "bootstrap_t", "coverage": 0.907, "mc_margin": 0.013, "qualified": False,
                     "reason": "no method reaches 95% at K=20 (best: bootstrap_t at 90.7% ± 1.3%)"},
           "macro": {"method": "t", "coverage": 0.951, "mc_margin": 0.009, "qualified": True, "reason": "ok"}}
    results = {"task": {"queries": 10, "documents": 3}, "meta": {"elapsed_s": 1.0}, "retrievers": [],
               "coverage": {"recommend_k": 20, "recommendation": rec, "reps": 3,
                            "rows": [{"k": 20, "estimator": "macro", "method": "t", "coverage": 0.951}]}}
    text = _summary(results)
    assert "micro; for samples of 20 documents NO method verified" in text and "use bootstrap_t" not in text
    assert "macro; for samples of 20 documents" not in text and "at K=" not in text
    assert "3 samples of 20 of the 3 documents" in text


def test_benchmark_refuses_too_few_resamples_before_any_work(data_dir, tmp_path, capsys):
    """The proxy section's intervals are at sqrt(level); 49 resamples cannot hold one and the job says so at once."""
    code = main(["benchmark", "--data-dir", str(data_dir), "--out", str(tmp_path / "o"), "--retrievers", "bm25,tfidf",
                 "--quick", "--n-resamples", "49", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "n_resamples" in err and ">= 78" in err
    assert "building task" not in err and not (tmp_path / "o" / "results.json").exists()
