"""The fast lane's lists (tests/_lanes.py) name real modules and tests, and the marker they set is the registered one."""
from __future__ import annotations

import ast
import tomllib

from _lanes import REPO, SLOW_MODULES, SLOW_TESTS, mark_slow


def _functions(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_every_slow_module_and_test_exists():
    missing = [m for m in SLOW_MODULES if not (REPO / m).is_file()]
    assert missing == []
    for entry in SLOW_TESTS:
        module, name = entry.split("::")
        assert (REPO / module).is_file(), entry
        assert name in _functions(REPO / module), entry
        assert module not in SLOW_MODULES, f"{entry}: its whole module is already slow"
    assert len(set(SLOW_TESTS)) == len(SLOW_TESTS) and len(set(SLOW_MODULES)) == len(SLOW_MODULES)


def test_the_slow_marker_is_registered():
    conf = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    markers = conf["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("slow:") for m in markers)


class _Item:
    """What the hook reads of a collected test: its file, its function's name, the markers added."""

    def __init__(self, path, name: str):
        self.fspath, self.originalname, self.name, self.marks = path, name, name + "[p]", []

    def add_marker(self, mark) -> None:
        self.marks.append(mark.name)


def test_the_hook_marks_listed_modules_and_tests_and_nothing_else():
    module, name = SLOW_TESTS[0].split("::")
    items = [_Item(REPO / SLOW_MODULES[0], "test_anything"), _Item(REPO / module, name),
             _Item(REPO / module, name + "_other"), _Item(REPO / "tests" / "test_fast_lane.py", name)]
    mark_slow(items)
    assert [i.marks for i in items] == [["slow"], ["slow"], [], []]
