"""The command line parses options and prints; the work lives in the library.

Read with :mod:`ast`: every verb's ``run(args)`` in ``ragcov_data/cli/*.py`` fits in 40 lines, the jobs they
call fit in 80, and no CLI module indexes or searches a retriever itself (runs come from
``ragcov_data.execution.engine.run_task`` through the library).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = sorted((ROOT / "ragcov_data" / "cli").glob("*.py"))
MAX_RUN = 40
MAX_JOB = 80


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def _lines(fn: ast.FunctionDef) -> int:
    return fn.end_lineno - fn.lineno + 1


def test_the_cli_folder_is_read():
    names = {p.stem for p in CLI}
    assert {"run", "benchmark", "chunking", "build", "plan", "eval"} <= names
    assert sum("run" in _functions(p) for p in CLI) >= 12  # every verb module has its run(args)


@pytest.mark.parametrize("path", CLI, ids=lambda p: p.name)
def test_every_verb_run_fits_in_40_lines(path):
    fn = _functions(path).get("run")
    if fn is None:
        assert path.stem.startswith("_") or path.stem == "chunking_cited", f"{path.name} has no run(args)"
        return
    assert _lines(fn) <= MAX_RUN, f"{path.name}: run() is {_lines(fn)} lines; move the work into the library"


@pytest.mark.parametrize("module, name", [("ragcov_data/jobs/benchmark.py", "run_benchmark"),
                                          ("eval/comparisons/cited.py", "cited_chunking_study")])
def test_the_jobs_fit_in_80_lines(module, name):
    fn = _functions(ROOT / module)[name]
    assert _lines(fn) <= MAX_JOB, f"{module}: {name} is {_lines(fn)} lines"


def test_no_cli_module_indexes_or_searches():
    for path in CLI:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                assert node.func.attr not in ("index", "search"), \
                    f"{path.name}:{node.lineno} calls .{node.func.attr}(); use ragcov_data.execution.engine.run_task"


def test_the_limit_check_fails_on_a_long_run(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_RUN))
    path = tmp_path / "verb.py"
    path.write_text(f"def run(args):\n{body}\n    return 0\n", encoding="utf-8")
    assert _lines(_functions(path)["run"]) > MAX_RUN
