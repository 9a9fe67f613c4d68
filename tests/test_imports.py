"""The import graph points down the data flow: no cycle among the package's modules, and the task record
and the document sampler import nothing from the loaders.

Every ``import`` statement of every module is read with :mod:`ast` (function-level imports included:
a lazy import is still an arrow), and ``from ragcov_data import NAME`` of a lazily exported name is
resolved to the module that defines it (``ragcov_data._LAZY``).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ragcov_data

ROOT = Path(__file__).resolve().parents[1]
#: Installed package name -> folder (pyproject.toml's package-dir).
PACKAGES = {"ragcov_data": "ragcov_data", "ragcov_data.loaders": "loaders", "ragcov_data.baselines": "baselines",
            "ragcov_data.eval": "eval", "ragcov_data.eval.outcomes.metrics": "eval/metrics",
            "ragcov_data.cli": "ragcov_data/cli", "ragcov_data.reporting": "ragcov_data/reporting"}


def modules() -> dict[str, Path]:
    out = {}
    for pkg, folder in PACKAGES.items():
        for path in sorted((ROOT / folder).glob("*.py")):
            out[pkg if path.stem == "__init__" else f"{pkg}.{path.stem}"] = path
    return out


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Package modules ``name`` imports (``from pkg import sub`` counts as ``pkg.sub`` when that is a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for alias in node.names:
                full = f"{mod}.{alias.name}"
                if full in known:
                    out.add(full)
                elif mod == "ragcov_data" and alias.name in ragcov_data._LAZY:
                    out.add(ragcov_data._LAZY[alias.name])
                else:
                    out.add(mod)
    return {m for m in out if m in known and m != name}


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports_of(name, path, known) for name, path in mods.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read_from_every_module():
    g = graph()
    assert {"ragcov_data.task", "ragcov_data.sampling", "ragcov_data.loaders.build", "ragcov_data.sources",
            "ragcov_data.cli._task"} <= set(g)
    # the reader sees lazy, function-level and aliased imports
    assert "ragcov_data.task" in g["ragcov_data.loaders.build"]
    assert "ragcov_data.loaders.chunking" in g["ragcov_data.loaders.build"]  # `from ragcov_data.loaders import chunking as ch`
    assert "ragcov_data.loaders.build" in g["ragcov_data.loaders.self_retrieval"]  # inside a function
    assert "ragcov_data.sources" in g["ragcov_data.cli._task"]  # `from ragcov_data import sources`


def test_task_sources_are_resolved_by_the_library_below_the_cli():
    g = graph()
    assert not any(m.startswith("ragcov_data.cli") for m in g["ragcov_data.sources"])
    assert "ragcov_data.loaders.build" in g["ragcov_data.sources"]


def test_cycle_finder_finds_a_planted_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_the_package_modules():
    found = cycles(graph())
    assert found == [], f"import cycles: {found}"
    assert not any(m.startswith(("ragcov_data.task", "ragcov_data.sampling", "ragcov_data.loaders"))
                   for c in found for m in c)


def test_task_record_and_sampler_import_nothing_from_the_loaders():
    g = graph()
    for low in ("ragcov_data.task", "ragcov_data.sampling"):
        up = sorted(m for m in g[low] if m.startswith("ragcov_data.loaders"))
        assert up == [], f"{low} imports {up}"
    assert "ragcov_data.sampling" not in g["ragcov_data.task"]  # the sampler sits above the record


#: The installed package's stages in flow order: a module may import from its own stage or an earlier one.
STAGES = (
    ("core", ("ragcov_data.errors", "ragcov_data._", "ragcov_data.ties", "ragcov_data.paths", "ragcov_data.registry",
              "ragcov_data.legal", "ragcov_data.task", "ragcov_data.qrels", "ragcov_data.runs",
              "ragcov_data.run_fingerprint", "ragcov_data.sampling")),
    ("loaders", ("ragcov_data.loaders", "ragcov_data.sources", "ragcov_data.api", "ragcov_data.publish",
                 "ragcov_data.irds", "ragcov_data.outside")),
    ("baselines", ("ragcov_data.baselines",)),
    ("engine", ("ragcov_data.engine",)),
    ("outcomes", ("ragcov_data.eval.outcomes",)),
    ("estimates", ("ragcov_data.eval.estimates",)),
    ("comparisons", ("ragcov_data.eval.comparisons",)),
    ("misses", ("ragcov_data.eval.misses",)),
    ("planning", ("ragcov_data.eval.planning",)),
    ("eval", ("ragcov_data.eval",)),
    ("reporting", ("ragcov_data.reporting",)),
    ("pipeline", ("ragcov_data.pipeline", "ragcov_data.studies")),
    ("cli", ("ragcov_data.cli", "ragcov_data.__main__")),
)


def stage_of(module: str) -> int:
    """Index in :data:`STAGES` of the stage a module belongs to (the longest matching prefix wins)."""
    if module == "ragcov_data":
        return 0
    best, length = None, -1
    for i, (_, prefixes) in enumerate(STAGES):
        for p in prefixes:
            hit = module == p or module.startswith(p if p.endswith("_") else p + ".")
            if hit and len(p) > length:
                best, length = i, len(p)
    assert best is not None, f"{module} belongs to no stage: add it to STAGES"
    return best


def upward_arrows(g: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} ({STAGES[stage_of(a)][0]}) -> {b} ({STAGES[stage_of(b)][0]})"
                  for a, deps in g.items() for b in deps if stage_of(b) > stage_of(a))


def test_stage_finder_reads_prefixes_and_refuses_an_unknown_module():
    assert STAGES[stage_of("ragcov_data.eval.comparisons.leaderboard")][0] == "comparisons"
    assert STAGES[stage_of("ragcov_data.eval")][0] == "eval"
    assert STAGES[stage_of("ragcov_data._json")][0] == "core"
    assert upward_arrows({"ragcov_data.eval.outcomes.table": {"ragcov_data.eval.estimates._core"}}) != []
    with pytest.raises(AssertionError, match="no stage"):
        stage_of("ragcov_data.somewhere_new")


def test_every_import_follows_the_flow():
    """run -> outcomes -> estimates -> comparisons -> misses -> planning -> report: no upward arrow anywhere."""
    assert upward_arrows(graph()) == []
