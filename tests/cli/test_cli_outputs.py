"""Outputs that would overwrite an input, or each other, are refused before any work, on every verb."""
from __future__ import annotations

import os

import pytest

from ragcov_data.cli import main
from ragcov_data.cli._common import check_outputs
from ragcov_data.errors import RagcovError

RUN = "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n"


@pytest.fixture
def runs(tmp_path):
    paths = {}
    for name in ("x", "y", "a", "b"):
        p = tmp_path / f"{name}.trec"
        p.write_text(RUN)
        paths[name] = p
    return paths


def _refused(capsys, argv, *needles):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    for n in needles:
        assert n in err, err
    return err


@pytest.mark.parametrize("argv, opts", [
    (["leaderboard", "--html", "{x}", "{x}", "{y}"], ("--html and RUN", "the output would overwrite an input")),
    (["leaderboard", "--json", "{y}", "first={x}", "{y}"], ("--json and RUN",)),
    (["eval", "{x}", "--json", "{x}"], ("--json and RUN",)),
    (["misses", "{x}", "--csv", "{x}"], ("--csv and RUN",)),
    (["misses", "{x}", "--json", "{x}"], ("--json and RUN",)),
    (["compare", "{a}", "{b}", "--json", "{b}"], ("--json and RUN_B",)),
    (["plan", "--difference", "0.02", "--runs", "{a}", "{b}", "--json", "{a}"], ("--json and --runs",)),
    (["coverage", "{x}", "--out", "{x}"], ("--out and POPULATION",)),
    (["run", "--retriever", "bm25", "--data-files", "{x}", "--out", "{x}"], ("--out and --data-files",)),
])
def test_output_naming_an_input_is_refused_and_the_input_kept(capsys, runs, argv, opts):
    argv = [a.format(**runs) for a in argv]
    before = {p: p.read_bytes() for p in runs.values()}
    err = _refused(capsys, argv, *opts)
    assert "name the same file" in err
    assert str(runs["x"]) in err or str(runs["b"]) in err or str(runs["a"]) in err or str(runs["y"]) in err
    assert {p: p.read_bytes() for p in runs.values()} == before


def test_two_outputs_on_one_file_are_refused(capsys, runs, tmp_path):
    out = tmp_path / "same.out"
    err = _refused(capsys, ["leaderboard", str(runs["x"]), str(runs["y"]), "--json", str(out), "--html", str(out)],
                   "--json and --html name the same file", str(out), "give each output its own path")
    assert not out.exists()


def test_symlink_and_relative_spellings_of_an_input_are_caught(capsys, runs, tmp_path, monkeypatch):
    link = tmp_path / "link.json"
    link.symlink_to(runs["x"])
    _refused(capsys, ["eval", str(runs["x"]), "--json", str(link)], "--json and RUN", str(link))
    monkeypatch.chdir(tmp_path)
    _refused(capsys, ["compare", "a.trec", "b.trec", "--json", "sub/../a.trec"], "--json and RUN_A")
    assert runs["a"].read_text() == RUN


def test_hard_link_is_caught(runs, tmp_path):
    hard = tmp_path / "hard.json"
    os.link(runs["x"], hard)
    with pytest.raises(RagcovError, match="--json and RUN name the same file"):
        check_outputs([("RUN", runs["x"])], [("--json", hard)])


def test_output_over_a_file_of_an_input_folder_is_refused(tmp_path):
    task = tmp_path / "task"
    task.mkdir()
    (task / "queries.parquet").write_bytes(b"PAR1")
    with pytest.raises(RagcovError, match=r"--json .* is a file inside --task"):
        check_outputs([("--task", task)], [("--json", task / "queries.parquet")])
    with pytest.raises(RagcovError, match="--out and --data-dir name the same folder"):
        check_outputs([("--data-dir", task)], [], folder_outputs=[("--out", task)])


def test_distinct_outputs_pass(runs, tmp_path):
    check_outputs([("RUN", runs["x"]), ("RUN", runs["y"])],
                  [("--json", tmp_path / "o.json"), ("--html", tmp_path / "o.html"), ("--markdown", None)])


def test_unwritable_output_is_still_refused(runs, tmp_path):
    with pytest.raises(RagcovError, match="it is a folder, not a file"):
        check_outputs([("RUN", runs["x"])], [("--json", tmp_path)])


def test_a_previous_report_inside_the_data_folder_may_be_rewritten(tmp_path):
    """Only files the verb reads from an input folder are protected: rerunning a command is not refused."""
    task = tmp_path / "task"
    task.mkdir()
    (task / "report.json").write_text('{"result_type": "EvaluationResult"}')  # ragcov's own JSON
    check_outputs([("--data-dir", task)], [("--json", task / "report.json")])
    docs = tmp_path / "acervo"
    docs.mkdir()
    (docs / "lei.txt").write_text("Art. 1")
    with pytest.raises(RagcovError, match="is a file inside --data-files"):
        check_outputs([("--data-files", docs)], [("--csv", docs / "lei.txt")])
