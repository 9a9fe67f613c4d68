"""The one output guard: no verb writes over an input, a data folder's file, or a file that is not its own output.

Every case runs on a copy of the data folder (the shared data is never written), and checks that the
refused file is byte for byte unchanged.
"""
from __future__ import annotations

import shutil

import pytest

from ragcov_data.cli import main


@pytest.fixture(scope="module")
def data(tmp_path_factory, data_dir):
    """A copy of the JurisTCU and IRPF data folders, and a TREC run of JurisTCU."""
    d = tmp_path_factory.mktemp("data")
    shutil.copytree(data_dir / "juristcu", d / "juristcu")
    (d / "irpf").mkdir()
    for name in ("laws.jsonl", "questions.jsonl"):
        shutil.copy(data_dir / "irpf" / name, d / "irpf" / name)
    run = d / "run.trec"
    assert main(["run", "--retriever", "bm25", "--dataset", "juristcu", "--data-dir", str(d), "--cache-dir",
                 str(d / "cache"), "--out", str(run), "--quiet"]) == 0
    shutil.copy(run, d / "other.trec")
    return d


def _refused(argv, target, capsys, says):
    before = target.read_bytes()
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2 and says in err, err
    assert target.read_bytes() == before


@pytest.mark.parametrize("verb_args, out_opt, target", [
    (["eval", "{run}", "--dataset", "juristcu"], "--json", "juristcu/qrel.csv"),
    (["eval", "{run}", "--dataset", "juristcu"], "--json", "juristcu/query.csv"),
    (["leaderboard", "{run}", "{run2}", "--dataset", "juristcu"], "--html", "juristcu/doc.csv"),
    (["eval", "{run}", "--dataset", "irpf"], "--json", "irpf/laws.jsonl"),
    (["chunking", "--dataset", "irpf", "--retriever", "bm25"], "--json", "irpf/questions.jsonl"),
    (["run", "--retriever", "bm25", "--dataset", "irpf"], "--out", "irpf/questions.jsonl"),
])
def test_output_inside_a_data_folder_is_refused(data, capsys, verb_args, out_opt, target):
    argv = [a.format(run=data / "run.trec", run2=data / "other.trec") for a in verb_args]
    _refused([*argv, "--data-dir", data, "--cache-dir", data / "cache", out_opt, data / target], data / target,
             capsys, "the output would overwrite an input file")


def test_data_folder_from_the_environment_is_guarded_too(data, capsys, monkeypatch):
    monkeypatch.setenv("RAGCOV_DATA_DIR", str(data))
    _refused(["eval", data / "run.trec", "--dataset", "irpf", "--json", data / "irpf" / "laws.jsonl"],
             data / "irpf" / "laws.jsonl", capsys, "$RAGCOV_DATA_DIR")


@pytest.mark.parametrize("out_opt", ["--html", "--markdown", "--json"])
def test_leaderboard_output_over_another_run_is_refused(data, tmp_path, capsys, out_opt):
    bystander = tmp_path / "kept.trec"
    shutil.copy(data / "run.trec", bystander)
    _refused(["leaderboard", data / "run.trec", data / "other.trec", "--dataset", "juristcu", "--data-dir", data,
              "--cache-dir", data / "cache", out_opt, bystander], bystander, capsys, "has the suffix .trec of a run")


def test_eval_json_over_another_run_is_refused_and_own_outputs_are_rewritten(data, tmp_path, capsys):
    bystander = tmp_path / "kept.trec"
    shutil.copy(data / "other.trec", bystander)
    common = ["--dataset", "juristcu", "--data-dir", str(data), "--cache-dir", str(data / "cache")]
    _refused(["eval", data / "run.trec", *common, "--json", bystander], bystander, capsys,
             "has the suffix .trec of a run")
    out, html = tmp_path / "e.json", tmp_path / "b.html"
    for _ in range(2):  # ragcov's own outputs: written again
        assert main(["eval", str(data / "run.trec"), *common, "--json", str(out)]) == 0
        assert main(["leaderboard", str(data / "run.trec"), str(data / "other.trec"), *common, "--n-resamples",
                     "99", "--html", str(html)]) == 0
    assert out.read_text().lstrip().startswith("{") and html.read_text().lower().startswith("<!doctype html")


def test_run_out_over_a_table_is_refused(data, tmp_path, capsys):
    table = tmp_path / "notes.csv"
    table.write_text("a,b\n1,2\n")
    _refused(["run", "--retriever", "bm25", "--dataset", "juristcu", "--data-dir", data, "--cache-dir",
              data / "cache", "--out", table], table, capsys, "is not a run ragcov wrote")


def test_coverage_table_is_written_again_but_not_over_a_run(tmp_path, capsys):
    from ragcov_data.cli import build_parser
    from ragcov_data.cli._common import check_args_outputs
    from ragcov_data.errors import RagcovError

    table = tmp_path / "cov.csv"
    table.write_text("estimator,method,K,coverage\nmicro,cr2,5,0.93\n")
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 d1 1 2.5 bm25\n")
    args = build_parser().parse_args(["coverage", "pop.csv", "--out", str(table)])
    check_args_outputs(args)  # ragcov's own table: may be written again
    args = build_parser().parse_args(["coverage", "pop.csv", "--out", str(run)])
    with pytest.raises(RagcovError, match="is not a ragcov coverage table"):
        check_args_outputs(args)
