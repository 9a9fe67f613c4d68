"""The evaluator's estimates, comparisons, misses and planning modules keep the project's size rules: no function
over 80 lines (docstring included) and no module over 800 lines, so each helper keeps one job."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = ["eval/estimates/_kernels.py", "eval/estimates/interval.py", "eval/misses/analysis.py",
           "eval/misses/_flags.py", "eval/planning/twin.py", "eval/planning/power.py", "eval/planning/coverage.py",
           "eval/planning/planner.py", "eval/comparisons/pool.py", "eval/comparisons/paired_chunkings.py",
           "eval/comparisons/proxy.py", "eval/comparisons/_orders.py", "eval/comparisons/proxy_render.py",
           "eval/planning/proxy_coverage.py", "eval/outcomes/self_budget.py", "eval/estimates/concentration.py",
           "eval/estimates/verify.py"]
MAX_FUNCTION, MAX_MODULE = 80, 800


def _long_functions(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION]


@pytest.mark.parametrize("module", MODULES)
def test_no_function_over_80_lines(module):
    assert _long_functions(ROOT / module) == []


@pytest.mark.parametrize("module", MODULES)
def test_no_module_over_800_lines(module):
    n = len((ROOT / module).read_text(encoding="utf-8").splitlines())
    assert n <= MAX_MODULE, f"{module} has {n} lines"


def test_the_check_sees_a_long_function(tmp_path):
    path = tmp_path / "long.py"
    path.write_text("def f():\n" + "    x = 1\n" * 80 + "    return x\n", encoding="utf-8")
    assert _long_functions(path) == [("f", 82)]
