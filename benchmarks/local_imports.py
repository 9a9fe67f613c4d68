"""List the package's function-level imports of its own modules (``ragcov_data.*`` and relative imports).

A module's dependencies should be readable at its top; an import inside a function is kept only where it is
deliberate (an optional extra, a heavy library kept lazy for start-up time, a CLI verb that keeps
``ragcov --help`` cheap). This script reads every ``.py`` file of the source tree with :mod:`ast` and prints,
per folder, how many function-level internal imports remain, then each one with its file, line and the comment
on its line or the line above (which should say why it stays local).

    python benchmarks/local_imports.py            # counts per folder and the list
    python benchmarks/local_imports.py --counts   # counts only
    python benchmarks/local_imports.py --json     # machine-readable
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Source folders of the installed package (see pyproject.toml's package-dir).
FOLDERS = ("ragcov_data", "eval", "loaders", "baselines")


@dataclass(frozen=True)
class LocalImport:
    """One function-level import of a package module."""

    path: str  # relative to the repository root
    line: int
    statement: str
    why: str  # the comment on the import's line or the line above it ("" when none)


def _is_internal(node: ast.Import | ast.ImportFrom) -> bool:
    """Whether an import statement reaches the package's own modules (absolute ``ragcov_data`` or relative)."""
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "ragcov_data"
    return any(a.name.split(".")[0] == "ragcov_data" for a in node.names)


def _comment(lines: list[str], lineno: int) -> str:
    """The trailing comment of line ``lineno`` (1-based), else a comment-only line just above it."""
    here = lines[lineno - 1]
    if "#" in here:
        return here.split("#", 1)[1].strip()
    above = lines[lineno - 2].strip() if lineno >= 2 else ""
    return above[1:].strip() if above.startswith("#") else ""


def local_imports(path: Path) -> list[LocalImport]:
    """Function-level internal imports of one source file, in line order."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found: list[LocalImport] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and in_function and _is_internal(child):
                found.append(LocalImport(str(path.relative_to(ROOT)), child.lineno,
                                         ast.get_source_segment(text, child) or "", _comment(lines, child.lineno)))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(text, filename=str(path)), False)
    return sorted(found, key=lambda f: f.line)


def scan(root: Path = ROOT) -> list[LocalImport]:
    """Every function-level internal import under the package's source folders."""
    out: list[LocalImport] = []
    for top in FOLDERS:
        for path in sorted((root / top).rglob("*.py")):
            out.extend(local_imports(path))
    return out


def per_folder(found: list[LocalImport]) -> dict[str, int]:
    """Count per source folder (the file's parent directory)."""
    return dict(sorted(Counter(str(Path(f.path).parent) for f in found).items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--counts", action="store_true", help="print the counts per folder only")
    ap.add_argument("--json", action="store_true", help="print counts and imports as JSON")
    args = ap.parse_args(argv)
    found = scan()
    counts = per_folder(found)
    if args.json:
        json.dump({"total": len(found), "per_folder": counts, "imports": [asdict(f) for f in found]},
                  sys.stdout, indent=1, ensure_ascii=False)
        print()
        return 0
    for folder, n in counts.items():
        print(f"{n:4d}  {folder}")
    print(f"{len(found):4d}  total")
    if not args.counts:
        for f in found:
            print(f"{f.path}:{f.line}: {f.statement.splitlines()[0]}" + (f"   # {f.why}" if f.why else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
