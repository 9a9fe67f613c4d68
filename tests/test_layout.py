"""The package's rooms say what they hold: the root keeps the public API and its plumbing, every room has a
docstring that says what lives there and a line in CONTRIBUTING.md's map, and no two module names are one letter
apart (``pipeline``/``pipelines`` meant unrelated things).

The names are read from the source tree (the folders ``pyproject.toml`` installs), not from a list kept here.
"""
from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

from test_imports import ROOT, source_folders

#: The most modules the package root may hold besides its subpackages (``__init__`` and ``__main__`` included).
ROOT_MODULES_MAX = 8


def _one_edit_apart(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one inserted, deleted or substituted letter."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


@pytest.mark.parametrize("a, b, want", [("pipeline", "pipelines", True), ("chunking", "chunkings", True),
                                        ("core", "score", True), ("run", "runs", True), ("tasks", "tasks", False),
                                        ("eval", "evaluator", False), ("dense", "sense", True),
                                        ("bm25", "prf", False)])
def test_one_edit_apart_is_levenshtein_distance_one(a, b, want):
    assert _one_edit_apart(a, b) is want


def cli_verbs() -> set[str]:
    """The ``ragcov`` verbs, read from the CLI's table of verbs (a verb's module is named by its verb)."""
    from ragcov_data import cli

    return set(cli.VERBS)


def module_names() -> dict[str, list[str]]:
    """Every module and subpackage name of the installed package (leading underscores dropped) -> where it is,
    leaving out the ``cli`` modules named by their verb (verb names are the command line's: ``cli/run.py`` is
    ``ragcov run`` and may sit beside ``ragcov_data/runs/``, which reads run files)."""
    verbs = cli_verbs()
    out: dict[str, list[str]] = {}
    for pkg, folder in source_folders().items():
        if pkg != "ragcov_data":
            out.setdefault(pkg.rpartition(".")[2], []).append(pkg + "/")
        for f in folder.glob("*.py"):
            if f.stem in ("__init__", "__main__") or (pkg == "ragcov_data.cli" and f.stem in verbs):
                continue
            out.setdefault(f.stem.lstrip("_"), []).append(f"{pkg}.{f.stem}")
    return out


def test_the_package_root_holds_the_api_and_its_plumbing_only():
    root = source_folders()["ragcov_data"]
    mods = sorted(p.name for p in root.glob("*.py"))
    assert len(mods) <= ROOT_MODULES_MAX, f"ragcov_data/ holds {len(mods)} modules: {mods}; give the new one a room"


def test_no_two_module_names_are_one_letter_apart():
    names = module_names()
    assert {"runs", "engine", "benchmark", "paired_chunkings", "kernels"} <= set(names)
    close = [f"{a} {names[a]} ~ {b} {names[b]}" for a, b in itertools.combinations(sorted(names), 2)
             if _one_edit_apart(a, b)]
    assert close == [], "module names one letter apart: " + "; ".join(close)


def test_every_room_says_what_it_holds_in_its_docstring_and_in_the_map():
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    layout = contributing[contributing.index("## Layout"):contributing.index("## Tests")]
    for pkg, folder in source_folders().items():
        init = folder / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 12, f"{pkg} has no docstring saying what it holds ({init})"
        leaf = pkg.rpartition(".")[2]
        if pkg.count(".") <= 1 or pkg.startswith("ragcov_data.eval."):
            assert f"{leaf}/" in layout, f"CONTRIBUTING.md's layout map does not name {leaf}/ ({pkg})"


def test_no_source_or_doc_file_holds_a_merge_conflict_marker():
    """A marker inside a docstring or a page would not break an import; this finds it."""
    import re

    marker = re.compile(r"^(<<<<<<< |>>>>>>> |=======$)", re.M)
    files = [p for top in ("ragcov_data", "eval", "loaders", "baselines", "tests", "docs", "benchmarks")
             for p in (ROOT / top).rglob("*") if p.suffix in (".py", ".md", ".toml", ".txt")]
    files += [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "dataset_card.md", ROOT / "pyproject.toml"]
    hits = [str(p.relative_to(ROOT)) for p in files if p.is_file() and marker.search(p.read_text(encoding="utf-8"))]
    assert hits == []
