"""The import graph points down the data flow: no cycle among the package's modules, and the task record
and the document sampler import nothing from the loaders.

The modules are those of the *installed* package: found through the import system from ``ragcov_data`` and the
packages ``pyproject.toml`` declares (so a stage folder missing from the build is a failure here, not a module the
graph silently leaves out). Every ``import`` statement of every module is read with :mod:`ast` (function-level
imports included: a lazy import is still an arrow); ``from ragcov_data import NAME`` of a lazily exported name is
resolved to the module that defines it (``ragcov_data._LAZY``).
"""
from __future__ import annotations

import ast
import functools
import importlib.util
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

import ragcov_data

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]


def declared_packages() -> list[str]:
    """The packages ``pyproject.toml`` builds ([tool.setuptools] packages)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["tool"]["setuptools"]["packages"])


def modules() -> dict[str, Path]:
    """Every module of the installed package -> its source file (see :func:`_walk`)."""
    return dict(_walk())


@functools.lru_cache(maxsize=1)
def _walk() -> tuple[tuple[str, Path], ...]:
    """Every module of the installed package -> its source file, walked through the import system from
    ``ragcov_data`` and each declared package (an editable install maps ``ragcov_data.eval`` to ``eval/``)."""
    out: dict[str, Path] = {}

    def walk(name: str) -> None:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin, f"{name} is declared in pyproject.toml but does not import"
        out[name] = Path(spec.origin)
        for info in pkgutil.iter_modules(list(spec.submodule_search_locations or [])):
            if f"{name}.{info.name}" not in out:
                walk(f"{name}.{info.name}")

    for pkg in ["ragcov_data", *declared_packages()]:
        if pkg not in out:
            walk(pkg)
    return tuple(out.items())


def import_nodes(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement of a module with whether it sits inside a function (a lazy import)."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child, in_function))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return found


def targets(node: ast.Import | ast.ImportFrom, name: str, is_package: bool, known: set[str]) -> set[str]:
    """Package modules one import statement of module ``name`` reaches. ``from pkg import x`` reaches
    ``pkg.x`` when that is a module and ``pkg`` defines no other ``x``
    (``from ragcov_data.eval import compare`` is the function ``eval/__init__`` exports), else ``pkg``."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    package = name if is_package else name.rpartition(".")[0]
    if node.level:
        base = package.split(".")
        base = base[:len(base) - node.level + 1]
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    out = set()
    for alias in node.names:
        full = f"{mod}.{alias.name}"
        if mod == "ragcov_data" and alias.name in ragcov_data._LAZY:
            out.add(ragcov_data._LAZY[alias.name])
        elif full in known and not _defines_non_module(mod, alias.name):
            out.add(full)
        else:
            out.add(mod)
    return out


def _defines_non_module(package: str, attr: str) -> bool:
    """Whether ``package`` (a package module of ours) binds ``attr`` to something other than a module."""
    if package not in sys.modules and importlib.util.find_spec(package) is None:
        return False
    value = getattr(importlib.import_module(package), attr, None)
    return value is not None and not isinstance(value, ModuleType)


@functools.lru_cache(maxsize=None)
def _parsed(path: Path) -> tuple[tuple[ast.Import | ast.ImportFrom, bool], ...]:
    return tuple(import_nodes(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))))


def imports_of(name: str, path: Path, known: set[str], *, lazy: bool | None = None) -> set[str]:
    """Package modules ``name`` imports; ``lazy=True`` only inside functions, ``False`` only at module level."""
    out: set[str] = set()
    for node, in_function in _parsed(path):
        if lazy is None or lazy == in_function:
            out |= targets(node, name, path.stem == "__init__", known)
    return {m for m in out if m in known and m != name}


def graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (module- and function-level)."""
    return {name: set(deps) for name, deps in _graph()}


@functools.lru_cache(maxsize=1)
def _graph() -> tuple[tuple[str, frozenset[str]], ...]:
    mods = modules()
    known = set(mods)
    return tuple((name, frozenset(imports_of(name, path, known))) for name, path in mods.items())


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
    assert {"ragcov_data.tasks.record", "ragcov_data.tasks.sampling", "ragcov_data.loaders.build", "ragcov_data.tasks.sources",
            "ragcov_data.cli._task_options"} <= set(g)
    # the reader sees lazy, function-level and aliased imports
    assert "ragcov_data.tasks.record" in g["ragcov_data.loaders.build"]
    assert "ragcov_data.loaders.chunking" in g["ragcov_data.loaders.build"]  # `from ragcov_data.loaders import chunking as ch`
    assert "ragcov_data.loaders.build" in g["ragcov_data.loaders.self_retrieval"]  # inside a function
    assert "ragcov_data.tasks.sources" in g["ragcov_data.cli._task_options"]  # `from ragcov_data.tasks import sources`


def test_task_sources_are_resolved_by_the_library_below_the_cli():
    g = graph()
    assert not any(m.startswith("ragcov_data.cli") for m in g["ragcov_data.tasks.sources"])
    assert "ragcov_data.loaders.build" in g["ragcov_data.tasks.sources"]


def test_cycle_finder_finds_a_planted_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_the_package_modules():
    found = cycles(graph())
    assert found == [], f"import cycles: {found}"
    assert not any(m.startswith(("ragcov_data.tasks.record", "ragcov_data.tasks.sampling", "ragcov_data.loaders"))
                   for c in found for m in c)


def test_task_record_and_sampler_import_nothing_from_the_loaders():
    g = graph()
    for low in ("ragcov_data.tasks.record", "ragcov_data.tasks.sampling"):
        up = sorted(m for m in g[low] if m.startswith("ragcov_data.loaders"))
        assert up == [], f"{low} imports {up}"
    assert "ragcov_data.tasks.sampling" not in g["ragcov_data.tasks.record"]  # the sampler sits above the record


#: The installed package's stages in flow order: a module may import from its own stage or an earlier one.
STAGES = (
    ("core", ("ragcov_data.errors", "ragcov_data._", "ragcov_data.ties", "ragcov_data.outputs", "ragcov_data.legal",
              "ragcov_data.runs", "ragcov_data.tasks", "ragcov_data.execution", "ragcov_data.interop",
              "ragcov_data.jobs", "ragcov_data.tasks.paths", "ragcov_data.tasks.registry", "ragcov_data.tasks.record",
              "ragcov_data.tasks.qrels", "ragcov_data.tasks.sampling")),
    ("loaders", ("ragcov_data.loaders", "ragcov_data.tasks.sources", "ragcov_data.tasks.load",
                 "ragcov_data.tasks.publish", "ragcov_data.tasks.documents", "ragcov_data.interop.irds",
                 "ragcov_data.interop.outside")),
    ("baselines", ("ragcov_data.baselines",)),
    ("execution", ("ragcov_data.execution.engine", "ragcov_data.execution.pipelines",
                   "ragcov_data.execution.examples")),
    ("outcomes", ("ragcov_data.eval.outcomes",)),
    ("estimates", ("ragcov_data.eval.estimates",)),
    ("comparisons", ("ragcov_data.eval.comparisons",)),
    ("misses", ("ragcov_data.eval.misses",)),
    ("planning", ("ragcov_data.eval.planning",)),
    ("eval", ("ragcov_data.eval",)),
    ("reporting", ("ragcov_data.reporting",)),
    ("jobs", ("ragcov_data.jobs.benchmark", "ragcov_data.jobs.studies", "ragcov_data.jobs.proxy",
              "ragcov_data.interop.mteb")),
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
    assert upward_arrows({"ragcov_data.eval.outcomes.table": {"ragcov_data.eval.estimates._kernels"}}) != []
    with pytest.raises(AssertionError, match="no stage"):
        stage_of("ragcov_data.somewhere_new")


def test_every_import_follows_the_flow():
    """run -> outcomes -> estimates -> comparisons -> misses -> planning -> report: no upward arrow anywhere."""
    assert upward_arrows(graph()) == []


# ---------------------------------------------------------------- the installed layout, whole
def source_folders() -> dict[str, Path]:
    """Each declared package's folder in the source tree, through pyproject.toml's package-dir (a package without
    an entry lives in its parent's folder)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        dirs = tomllib.load(f)["tool"]["setuptools"].get("package-dir", {})
    out: dict[str, Path] = {}
    for pkg in declared_packages():
        parent, _, leaf = pkg.rpartition(".")
        out[pkg] = (ROOT / dirs[pkg]) if pkg in dirs else (out[parent] / leaf if parent else ROOT / pkg)
    return out


def test_the_graph_covers_the_installed_layout_whole():
    """Every stage folder's modules are nodes (the walk goes through the import system, not a folder list)."""
    mods = modules()
    assert set(declared_packages()) <= set(mods)
    assert {"ragcov_data.eval.outcomes.table", "ragcov_data.eval.outcomes.metrics.ndcg",
            "ragcov_data.eval.estimates.interval", "ragcov_data.eval.comparisons.leaderboard",
            "ragcov_data.eval.misses.analysis", "ragcov_data.eval.planning.twin", "ragcov_data.legal.citations",
            "ragcov_data.cli.benchmark", "ragcov_data.reporting.console"} <= set(mods)
    # the installed modules are exactly the source tree's, and no source folder holds modules no package builds
    folders = source_folders()
    assert set(mods) == {pkg if p.stem == "__init__" else f"{pkg}.{p.stem}"
                         for pkg, folder in folders.items() for p in folder.glob("*.py")}
    for top in ("ragcov_data", "eval", "loaders", "baselines"):
        stray = {p.parent for p in (ROOT / top).rglob("*.py")} - set(folders.values())
        assert not stray, f"{sorted(map(str, stray))} hold modules that no package in pyproject.toml builds"


@pytest.mark.parametrize("source, module, want", [
    # an attribute the package exports is an arrow to the package, not to a module of the same old name
    ("from ragcov_data.eval import compare", "ragcov_data.cli.compare", {"ragcov_data.eval"}),
    # a module of a room, absolute
    ("import ragcov_data.eval.estimates.interval", "ragcov_data.cli.eval", {"ragcov_data.eval.estimates.interval"}),
    ("from ragcov_data.tasks import sources", "ragcov_data.cli.build", {"ragcov_data.tasks.sources"}),
    # a submodule of a stage folder, relative and absolute
    ("from ..estimates import _kernels", "ragcov_data.eval.comparisons.compare", {"ragcov_data.eval.estimates._kernels"}),
    ("from ragcov_data.legal import citations", "ragcov_data.loaders.cited_questions",
     {"ragcov_data.legal.citations"}),
    # a lazily exported name of the package's top, and a function-level import
    ("from ragcov_data import load_dataset", "ragcov_data.jobs.benchmark", {"ragcov_data.tasks.load"}),
    ("def f():\n    from ragcov_data.eval.planning import twin\n", "ragcov_data.jobs.benchmark",
     {"ragcov_data.eval.planning.twin"}),
    ("import numpy\nfrom scipy import stats", "ragcov_data.jobs.benchmark", set()),
])
def test_an_import_statement_reaches_the_module_python_loads(source, module, want, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    assert imports_of(module, path, set(modules())) == want


def test_function_level_imports_are_arrows_and_close_no_cycle():
    """The graph is the module-level arrows plus the function-level ones; neither alone nor together do they
    form a cycle, so no function-level import is there to break one."""
    mods = modules()
    known = set(mods)
    top = {n: imports_of(n, p, known, lazy=False) for n, p in mods.items()}
    lazy = {n: imports_of(n, p, known, lazy=True) for n, p in mods.items()}
    full = graph()
    assert all(full[n] == top[n] | lazy[n] for n in mods)
    assert "ragcov_data.loaders.build" in lazy["ragcov_data.loaders.self_retrieval"]
    assert sum(len(v - top[n]) for n, v in lazy.items()) > 0  # function-level arrows the graph would otherwise miss
    assert cycles(top) == [] and cycles(full) == []


def test_import_nodes_tells_function_level_from_module_level():
    tree = ast.parse("import a\nclass C:\n    import b\n    def m(self):\n        import c\n"
                     "def f():\n    g = lambda: 0\n    if g:\n        from d import e\n")
    assert [(n.names[0].name if isinstance(n, ast.Import) else n.module, lazy) for n, lazy in import_nodes(tree)] \
        == [("a", False), ("b", False), ("c", True), ("d", True)]
