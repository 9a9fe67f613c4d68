"""Pipelines that break the contract fail early and say how, and a run with no passage is refused the same way
by every verb.

Each case was silent or misleading: a DataFrame's column names stored as passages (rc 0); a module calling
``sys.exit()`` at import (rc 0, no file); a module failing its own import told to change folder, or called a bug
in ragcov; a file shadowing the standard library hidden behind the error it caused; a factory whose first
parameter is not ``documents`` called with each question and nothing said of the rule; a run where no question got
a passage read back as "a run of chunk ids".
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

import ragcov_data
from ragcov_data.cli import main
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.execution.user_code import FACTORY_RULE, import_object
from ragcov_data.runs import load_run

TASK = {"queries": pd.DataFrame({"_id": ["q1", "q2", "q3"], "text": ["Quem declara?", "Qual o prazo?", "Onde?"]})}


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """``f(name, code)`` writes ``name.py`` in a fresh current folder; the modules it imports and ``sys.path`` are
    put back afterwards (a module shadowing the standard library must not leak into other tests)."""
    monkeypatch.chdir(tmp_path)
    modules, path = dict(sys.modules), list(sys.path)

    def write(name: str, code: str) -> Path:
        p = tmp_path / f"{name}.py"
        p.write_text(code, encoding="utf-8")
        return p

    yield write
    for name, mod in list(sys.modules.items()):  # only what was read from this folder (other modules stay loaded)
        file = getattr(mod, "__file__", None)
        if file and Path(file).resolve().is_relative_to(tmp_path.resolve()):
            del sys.modules[name]
            if name in modules:
                sys.modules[name] = modules[name]
    sys.path[:] = path


def test_a_dataframe_returned_is_refused_with_how_to_return_rows():
    frame = pd.DataFrame({"text": ["Art. 1º", "Art. 2º"], "score": [1.0, 0.5]})
    with pytest.raises(RagcovError, match=r"returned a pandas DataFrame for question 'q1' \(columns \['text', "
                                          r"'score'\]\), not a list of passages: iterating it gives its column names; "
                                          r"return its rows, e.g. `df.to_dict\('records'\)`"):
        ragcov_data.run_pipeline(lambda q: frame, TASK, show_progress=False)
    rows = ragcov_data.run_pipeline(lambda q: frame.to_dict("records"), TASK, show_progress=False)  # the fix works
    assert rows["text"].tolist() == ["Art. 1º", "Art. 2º"] * 3 and rows["score"].tolist() == [1.0, 0.5] * 3
    with pytest.raises(RagcovError, match="returned a set for question 'q1': a set has no order"):
        ragcov_data.run_pipeline(lambda q: {"Art. 1º", "Art. 2º"}, TASK, show_progress=False)


def test_sys_exit_at_import_names_the_module_and_the_line(folder, capsys):
    p = folder("script_rag", "import sys\ndef ask(q):\n    return ['x']\nsys.exit()\n")
    with pytest.raises(RagcovError, match=rf"--pipeline script_rag:ask: importing module 'script_rag' called "
                                          rf"sys.exit\(\) at {p}, line 4: sys.exit\(\): .* `if __name__ == "):
        import_object("script_rag:ask")
    folder("args_rag", "import argparse\nargparse.ArgumentParser().parse_args(['--k', '3'])\n")
    assert main(["run", "--pipeline", "args_rag:ask", "--dataset", "irpf", "--out", "r.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "importing module 'args_rag' called sys.exit(2) at" in err and "args_rag.py, line 2" in err
    assert not Path("r.jsonl").exists()


def test_a_module_failing_its_own_import_is_told_its_own_error(folder, capsys):
    p = folder("broken_rag", "import os\nimport not_installed_pkg_xyz\ndef ask(q):\n    return ['x']\n")
    with pytest.raises(RagcovError, match=rf"module 'broken_rag' \({p}\) failed in its own code while being "
                                          rf"imported: ModuleNotFoundError: No module named 'not_installed_pkg_xyz' "
                                          rf"\(at {p}, line 2: import not_installed_pkg_xyz\); install "
                                          "'not_installed_pkg_xyz'"):
        import_object("broken_rag:ask")
    p = folder("keyed_rag", "def ask(q):\n    return ['x']\nCONFIG = {'a': 1}['b']\n")
    assert main(["run", "--pipeline", "keyed_rag:ask", "--dataset", "irpf", "--out", "r.jsonl"]) == 2
    err = capsys.readouterr().err  # was: "internal error: KeyError: 'b' — this is a bug in ragcov"
    assert f"failed in its own code while being imported: KeyError: 'b' (at {p}, line 3: CONFIG = " in err, err
    folder("syntax_rag", "def ask(q)\n    return ['x']\n")
    with pytest.raises(RagcovError, match=r"SyntaxError: .*syntax_rag.py, line 1: def ask\(q\)"):
        import_object("syntax_rag:ask")
    with pytest.raises(RagcovError, match="cannot import module 'nowhere_rag' .* run from the folder holding"):
        import_object("nowhere_rag:ask")  # the module itself missing: that advice stays
    with pytest.raises(RagcovError, match=r"module 'keyed_rag' has no 'build' \(it defines: ask\)|failed in its"):
        import_object("keyed_rag:build")


def test_a_file_shadowing_the_standard_library_is_named(folder):
    """``./NAME.py`` named like a standard module: read in place of it by code that imports it, or imported in
    place of the team's file when the module named on the command line is a standard one already loaded."""
    name = next(n for n in ("colorsys", "wave", "tabnanny", "sched", "netrc", "mailcap") if n not in sys.modules)
    shadow = folder(name, "X = 1\n")
    folder("uses_std", f"import {name}\ndef ask(q):\n    return [str({name}.X)]\n")
    with pytest.raises(RagcovError, match=rf"--pipeline uses_std:ask: {shadow} is imported in place of the standard "
                                          rf"library's module '{name}' .* rename it \(e.g. my_{name}.py\)"):
        import_object("uses_std:ask")
    import queue  # noqa: F401 - loaded, as in any ragcov process

    mine = folder("queue", "TODO = ['x']\n")
    with pytest.raises(RagcovError, match=rf"--pipeline queue:TODO: {mine} is named like the module 'queue' that "
                                          r"Python imports instead \(.*queue.py\); rename your file"):
        import_object("queue:TODO")


def test_a_factory_is_recognised_by_its_first_parameter_and_the_errors_say_the_rule(folder, data_dir, capsys):
    folder("factory_rag", "def build(docs):\n    texts = list(docs['text'])\n    return lambda q: texts[:2]\n")
    assert main(["run", "--pipeline", "factory_rag:build", "--dataset", "irpf", "--data-dir", str(data_dir),
                 "--out", "r.jsonl", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "failed on every question" in err and FACTORY_RULE in err
    assert "`build(docs)` was called with each question: if it builds the pipeline, name its first parameter " \
           "`documents`" in err

    def make(corpus):  # returns its retriever when called with a question: a malformed answer, with the rule
        return lambda q: ["x"]

    with pytest.raises(RagcovError, match=r"returned a function for question 'q1', not a list .* Note: a function "
                                          r"is taken as a factory .* `make\(corpus\)` was called"):
        ragcov_data.run_pipeline(make, TASK, show_progress=False)
    with pytest.raises(RagcovError) as plain:  # a pipeline of a question: no note
        ragcov_data.run_pipeline(lambda question: 3, TASK, show_progress=False)
    assert "factory" not in str(plain.value)
    from ragcov_data.execution.user_code import pipeline_or_factory

    def build(documents):
        return lambda q: ["x"]

    assert pipeline_or_factory(build) == (None, build) and pipeline_or_factory(make) == (make, None)
    docs = (Path(__file__).resolve().parents[1] / "docs" / "pipelines.md").read_text(encoding="utf-8")
    assert "only when its first parameter is named `documents`" in docs


# --------------------------------------------------------------------------- a run with no passage


@pytest.fixture(scope="module")
def nothing(tmp_path_factory, data_dir):
    """Two passage runs of the IRPF questions with no passage: every question answered with nothing, and every
    question failed; and a run with passages to put beside them."""
    folder = tmp_path_factory.mktemp("nothing")
    irpf = ragcov_data.load_dataset("irpf", "article", data_dir=str(data_dir))

    def fail(question):
        raise TimeoutError("the index is down")

    for name, pipe in (("empty", lambda q: []), ("failed", fail)):
        with pytest.raises(RagcovError, match="failed on every question|returned no passage for any question"):
            ragcov_data.run_pipeline(pipe, irpf, out=folder / f"{name}.jsonl", show_progress=False, name=name)
    ragcov_data.run_pipeline(lambda q: [q], irpf, out=folder / "ok.jsonl", show_progress=False, name="ok")
    return folder


def test_run_pipeline_says_none_answered(nothing):
    lines = (nothing / "empty.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[1])["empty"] is True and len(lines) == 176


@pytest.mark.parametrize("name, says", [
    ("empty", "175 answered with no passage (first: 'irpf2024-q002'), so every question would score 0"),
    ("failed", "175 question(s) failed in the pipeline (first: 'irpf2024-q002': TimeoutError: the index is down), "
               "so every question would score 0"),
])
def test_a_run_with_no_passage_reads_back_as_a_passage_run_and_every_verb_refuses_it(nothing, data_dir, capsys, name,
                                                                                      says):
    path = nothing / f"{name}.jsonl"
    with pytest.raises(InputFileError, match="the passage run has no passage") as exc:
        load_run(path)
    assert says in str(exc.value) and "chunk ids" not in str(exc.value)
    common = ["--dataset", "irpf", "--data-dir", str(data_dir), "--n-resamples", "99"]
    for argv in (["eval", str(path), *common, "--metric", "recall@1000w"],
                 ["leaderboard", str(nothing / "ok.jsonl"), str(path), *common, "--metric", "recall@1000w"],
                 ["chunking", "--dataset", "irpf", "--data-dir", str(data_dir), "--chunking", "article",
                  "--retriever", "bm25", "--passages", str(path), "--budgets", "1000", "--metrics", "recall@10",
                  "--n-resamples", "99", "--quiet"]):
        assert main(argv) == 2, argv[0]
        err = capsys.readouterr().err
        assert f"{path}: the passage run has no passage" in err and says in err, (argv[0], err)
