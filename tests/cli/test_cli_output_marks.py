"""Every output ragcov writes carries a mark it reads back; every output path of every verb goes through one check.

An existing file or folder ragcov did not write (as that kind of output) is refused unless --force; an input of
the same command is refused even with --force; a report option with a run's suffix (``--latex x.trec`` before the
runs) is refused. Each refused file is checked byte for byte unchanged.
"""
from __future__ import annotations

import json
import random
import shutil

import pytest

from ragcov_data import outputs as marks
from ragcov_data.cli import main


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A small acervo, two runs ragcov wrote on it (TREC and parquet) and the common task options."""
    d = tmp_path_factory.mktemp("marks")
    rng = random.Random(1)
    words = [f"palavra{i}" for i in range(400)]
    with open(d / "acervo.jsonl", "w", encoding="utf-8") as fh:
        for i in range(8):
            fh.write(json.dumps({"doc_id": f"d{i}", "text": " ".join(rng.choice(words) for _ in range(260))}) + "\n")
    for name, retriever in (("a.trec", "bm25"), ("b.trec", "tfidf"), ("c.parquet", "bm25")):
        assert main(["run", "--retriever", retriever, "--data-files", str(d / "acervo.jsonl"), "--out",
                     str(d / name), "--quiet"]) == 0
    return d


def _task(work):
    return ["--data-files", str(work / "acervo.jsonl")]


def _refused(capsys, argv, target, *says):
    before = target.read_bytes() if target.is_file() else None
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2, err
    for s in says:
        assert s in err, err
    if before is not None:
        assert target.read_bytes() == before
    return err


# --------------------------------------------------------------------------- the measured cases
def test_latex_before_the_runs_does_not_take_a_run(work, tmp_path, capsys):
    x = tmp_path / "x.trec"
    shutil.copy(work / "a.trec", x)
    _refused(capsys, ["leaderboard", "--latex", x, work / "a.trec", work / "b.trec", *_task(work)], x,
             "--latex", str(x), "after the runs", ".tex")


def test_latex_over_a_readme_is_refused(work, tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("# my project\n")
    _refused(capsys, ["leaderboard", work / "a.trec", work / "b.trec", *_task(work), "--latex", readme], readme,
             "--latex", str(readme))


def test_latex_over_a_copy_of_query_csv_is_refused(work, tmp_path, capsys, data_dir):
    q = tmp_path / "query.csv"
    shutil.copy(data_dir / "juristcu" / "query.csv", q)
    _refused(capsys, ["leaderboard", work / "a.trec", work / "b.trec", *_task(work), "--latex", q], q, str(q))


def test_json_over_a_json_run_is_refused(work, tmp_path, capsys):
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"d0#0000": {"d1#0000": 2.0}}))
    _refused(capsys, ["eval", work / "a.trec", *_task(work), "--json", run], run,
             "not a ragcov JSON result", "ragcov did not write it", "--force")


def test_json_over_another_task_manifest_is_refused(work, tmp_path, capsys):
    task = tmp_path / "task"
    assert main(["build", *_task(work), "--out", str(task)]) == 0
    capsys.readouterr()
    manifest = task / "manifest.json"
    _refused(capsys, ["eval", work / "a.trec", *_task(work), "--json", manifest], manifest, "--json", "--force")
    corpus = task / "corpus.parquet"  # run --out over another task's corpus table
    _refused(capsys, ["run", "--retriever", "bm25", *_task(work), "--out", corpus, "--quiet"], corpus,
             "not a run ragcov wrote")


def test_misses_csv_over_a_csv_run_is_refused(work, tmp_path, capsys):
    run = tmp_path / "run.csv"
    run.write_text("query-id,corpus-id,score\nd0#0000,d1#0000,2.0\n")
    _refused(capsys, ["misses", work / "a.trec", *_task(work), "--csv", run], run, "not a ragcov misses table")


def test_coverage_out_over_any_csv_is_refused(work, tmp_path, capsys):
    table = tmp_path / "notes.csv"
    table.write_text("a,b\n1,2\n")
    _refused(capsys, ["coverage", "--twin", "--k", "5", "--reps", "10", "--out", table], table,
             "not a ragcov coverage table")


def test_publish_into_a_folder_with_the_users_readme_is_refused(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "README.md").write_text("# my notes\n")
    _refused(capsys, ["publish", out, "--data-files", tmp_path / "none.jsonl"], out / "README.md",
             "is a folder ragcov did not write", "README.md", "--force")
    assert (out / "README.md").read_text() == "# my notes\n"


# --------------------------------------------------------------------------- own outputs, --force, inputs
def test_every_verb_rewrites_its_own_outputs_without_force(work, tmp_path, capsys):
    a, b = str(work / "a.trec"), str(work / "b.trec")
    outs = {"--json": tmp_path / "l.json", "--html": tmp_path / "l.html", "--markdown": tmp_path / "l.md",
            "--latex": tmp_path / "l.tex"}
    board = ["leaderboard", a, b, *_task(work), "--n-resamples", "99"]
    for opt, path in outs.items():
        board += [opt, str(path)]
    misses = ["misses", a, *_task(work), "--csv", str(tmp_path / "m.csv"), "--json", str(tmp_path / "m.json")]
    cov = ["coverage", "--twin", "--k", "5", "--reps", "10", "--no-progress", "--out", str(tmp_path / "c.csv")]
    rerun = ["run", "--retriever", "bm25", *_task(work), "--out", str(tmp_path / "r.parquet"), "--quiet"]
    for _ in range(2):
        for argv in (board, misses, cov, rerun, ["eval", a, *_task(work), "--json", str(tmp_path / "l.json")]):
            assert main(argv) == 0, capsys.readouterr().err
    expected = {**{p: k for p, k in zip(outs.values(), (marks.JSON, marks.HTML, marks.MARKDOWN, marks.LATEX))},
                tmp_path / "m.csv": marks.MISSES_TABLE, tmp_path / "c.csv": marks.COVERAGE_TABLE,
                tmp_path / "r.parquet": marks.RUN, work / "a.trec": marks.RUN}
    assert {p: marks.kind_of(p) for p in expected} == expected


def test_force_replaces_a_foreign_file_but_never_an_input(work, tmp_path, capsys):
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": 1}')
    argv = ["eval", str(work / "a.trec"), *_task(work), "--json", str(notes)]
    _refused(capsys, argv, notes, "--force")
    assert main([*argv, "--force"]) == 0
    assert marks.kind_of(notes) == marks.JSON
    run = tmp_path / "a.json"  # an input named as the output: refused with --force too
    shutil.copy(work / "a.trec", run)
    _refused(capsys, ["eval", run, *_task(work), "--json", run, "--force"], run, "name the same file")


def test_report_and_publish_folders_read_back_as_ragcov_s(tmp_path):
    from ragcov_data.cli import build_parser
    from ragcov_data.cli._common import check_args_outputs
    from ragcov_data.errors import RagcovError

    rep, pub = tmp_path / "rep", tmp_path / "pub"
    marks.mark_folder(rep, marks.REPORT)
    marks.mark_folder(pub, marks.PUBLISH)
    (rep / "report.html").write_text("<!DOCTYPE html>")
    (pub / "README.md").write_text("card")
    check_args_outputs(build_parser().parse_args(["report", "results.json", "--out", str(rep)]))
    check_args_outputs(build_parser().parse_args(["publish", str(pub)]))
    with pytest.raises(RagcovError, match="did not write as a ragcov report folder"):
        check_args_outputs(build_parser().parse_args(["report", "results.json", "--out", str(pub)]))
    check_args_outputs(build_parser().parse_args(["report", "results.json", "--out", str(pub), "--force"]))


@pytest.mark.parametrize("option, value", [("--latex", "a.trec"), ("--json", "notes.csv"), ("--html", "run.jsonl"),
                                           ("--markdown", "t.parquet"), ("--csv", "r.trec.gz")])
def test_a_report_option_with_another_kinds_suffix_is_refused(option, value):
    from ragcov_data.errors import RagcovError

    with pytest.raises(RagcovError, match=r"give a \.[a-z]+ path"):
        marks.check_suffix(option, value, runs_option=True)
    marks.check_suffix(option, "out" + marks.OWN_SUFFIXES[option][0])  # its own suffix passes
