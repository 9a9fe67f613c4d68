"""Check that the main job's ``results.json`` is the same at two git revisions (by default the commit before the
layout-by-stage move, ``e5fed57``, and the move itself, ``d4b8958``).

For each revision, one after the other, it

1. checks the revision out in a temporary detached worktree (``git worktree add --detach``);
2. makes a ``--system-site-packages`` venv there and installs that worktree alone (``pip install --no-deps -e``),
   so every dependency is the machine's and only ragcov's source differs;
3. runs the main job the way that revision's ``README.md`` says (its first ``ragcov benchmark`` command, options
   verbatim, ``--data-dir`` replaced by ours, ``--out`` added) through ``python -m ragcov_data``, in a process that
   first checks that ``ragcov_data`` and its stage packages import from that worktree and, when the job is done,
   that every ``ragcov_data`` module it loaded came from there;
4. with empty caches of its own (verification, embeddings, ``datasets``), so neither revision reuses the other's
   work.

Then it compares the two ``results.json`` after removing only the fields that are timing, paths or dates
(``VOLATILE``, each named in the output); any other difference fails and its JSON paths are printed. Exit 0 when
identical, 1 when not, 2 when a job or a check could not run. The worktrees, venvs and caches are removed
afterwards (``--keep`` leaves them); the outputs and logs stay in ``--work`` when it is given, else they go too.

    python benchmarks/check_layout_identity.py --data-dir ../shared/data
    python benchmarks/check_layout_identity.py --compare A/results.json B/results.json   # comparison only
"""
from __future__ import annotations

import argparse
import atexit
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REVS = ("e5fed57", "d4b8958")

#: JSON paths removed before the comparison (timing, paths and dates only), with why.
VOLATILE: dict[tuple[str, ...], str] = {
    ("meta", "created"): "date and time the job started",
    ("meta", "timings_s"): "seconds each stage took",
    ("meta", "elapsed_s"): "seconds the whole job took",
}

#: Run inside the revision's venv: check where ragcov_data imports from, run the CLI, check again.
_RUNNER = r"""
import json, runpy, sys
from pathlib import Path
root, report, argv = Path(sys.argv[1]).resolve(), Path(sys.argv[2]), sys.argv[3:]
import ragcov_data, ragcov_data.eval, ragcov_data.loaders, ragcov_data.baselines
def outside():
    return sorted(n for n, m in list(sys.modules.items())
                  if n.split(".")[0] == "ragcov_data" and getattr(m, "__file__", None)
                  and not Path(m.__file__).resolve().is_relative_to(root))
bad = outside()
if bad:
    sys.exit(f"ragcov_data modules imported from outside {root}: {bad}")
sys.argv = ["ragcov", *argv]
code = 0
try:
    runpy.run_module("ragcov_data", run_name="__main__")
except SystemExit as e:
    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
bad = outside()
mods = sorted(n for n in sys.modules if n.split(".")[0] == "ragcov_data")
report.write_text(json.dumps({"root": str(root), "package": ragcov_data.__file__, "modules": len(mods),
                              "outside": bad, "exit": code}, indent=1))
if bad:
    sys.exit(f"ragcov_data modules imported from outside {root}: {bad}")
sys.exit(code)
"""


def readme_benchmark_args(readme: Path) -> list[str]:
    """The options of the README's first ``ragcov benchmark`` command (inside a fenced block), as argv tokens
    after ``benchmark``; a ``&&`` chain is cut at the command's end."""
    in_block = False
    for line in readme.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_block = not in_block
            continue
        if not in_block or "ragcov benchmark" not in line:
            continue
        tokens = shlex.split(line.split("ragcov benchmark", 1)[1], comments=True)
        for stop in ("&&", ";", "|", "||"):
            if stop in tokens:
                tokens = tokens[:tokens.index(stop)]
        return tokens
    raise SystemExit(f"{readme}: no `ragcov benchmark` command in a fenced block; pass the revision whose README has one")


def job_args(readme_args: list[str], data_dir: str, out: Path) -> list[str]:
    """The README's options with ``--data-dir`` set to ``data_dir`` and ``--out`` to ``out``."""
    args, skip = [], False
    for i, tok in enumerate(readme_args):
        if skip:
            skip = False
            continue
        if tok in ("--data-dir", "--out"):
            skip = True
            continue
        if tok.startswith(("--data-dir=", "--out=")):
            continue
        args.append(tok)
    return ["benchmark", *args, "--data-dir", data_dir, "--out", str(out)]


def run_revision(rev: str, work: Path, data_dir: str, log: Path) -> dict[str, Any]:
    """Worktree, venv, job for one revision; returns what ran, where and how long it took."""
    wt, venv, out, cache = work / f"wt-{rev}", work / f"venv-{rev}", work / f"out-{rev}", work / f"cache-{rev}"
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", f"{rev}^{{commit}}"], check=True,
                         capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(wt), sha], check=True,
                   capture_output=True, text=True)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "-e", str(wt)], check=True,
                   capture_output=True, text=True)
    argv = job_args(readme_benchmark_args(wt / "README.md"), data_dir, out)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAGCOV_DATA_DIR")}
    env.update(RAGCOV_VERIFY_CACHE_DIR=str(cache / "verify"), RAGCOV_CACHE_DIR=str(cache / "embeddings"),
               HF_DATASETS_CACHE=str(cache / "datasets"))
    where = work / f"imports-{rev}.json"
    print(f"[{rev}] {sha[:12]}: python -m ragcov_data {shlex.join(argv)}", flush=True)
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as f:
        proc = subprocess.run([str(py), "-c", _RUNNER, str(wt), str(where), *argv], cwd=str(work), env=env,
                              stdout=f, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        raise RuntimeError(f"[{rev}] the job exited {proc.returncode} after {seconds:.0f} s; log {log}:\n"
                           + "\n".join(tail))
    imports = json.loads(where.read_text(encoding="utf-8"))
    print(f"[{rev}] done in {seconds:.0f} s; {imports['modules']} ragcov_data modules, all from {wt}", flush=True)
    return {"rev": rev, "sha": sha, "seconds": seconds, "results": out / "results.json", "worktree": wt,
            "argv": argv}


def strip_volatile(doc: dict[str, Any]) -> list[str]:
    """Remove the ``VOLATILE`` fields from ``doc`` in place; returns the dotted paths that were present."""
    removed = []
    for path in VOLATILE:
        node: Any = doc
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and path[-1] in node:
            del node[path[-1]]
            removed.append(".".join(path))
    return removed


def diff_paths(a: Any, b: Any, path: str = "$") -> Iterator[str]:
    """JSON paths where ``a`` and ``b`` differ (exact: same types, equal values; NaN equals NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                yield f"{path}.{k} (only in {'B' if k not in a else 'A'})"
            else:
                yield from diff_paths(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{path} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b)):
            yield from diff_paths(x, y, f"{path}[{i}]")
    elif type(a) is not type(b):  # 1 and 1.0 are different JSON text: a field that changed type differs
        yield f"{path} ({type(a).__name__} vs {type(b).__name__})"
    elif isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return
    elif a != b:
        yield f"{path} ({a!r} vs {b!r})"


def compare(path_a: Path, path_b: Path, show: int = 40) -> int:
    """Print the comparison of two results.json files; returns the number of differing JSON paths."""
    docs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in (path_a, path_b)]
    for label, doc, p in zip("AB", docs, (path_a, path_b)):
        removed = strip_volatile(doc)
        print(f"{label}: {p}: removed {', '.join(removed) or 'nothing'}")
    for path, why in VOLATILE.items():
        print(f"  {'.'.join(path)}: {why}")
    diffs = list(diff_paths(*docs))
    n_leaves = sum(1 for _ in _leaves(docs[0]))
    if diffs:
        print(f"DIFFERENT: {len(diffs)} JSON paths differ (of {n_leaves:,} leaves in A):")
        for d in diffs[:show]:
            print(f"  {d}")
        if len(diffs) > show:
            print(f"  ... and {len(diffs) - show} more")
    else:
        print(f"IDENTICAL: {n_leaves:,} leaves, top-level keys {sorted(docs[0])}")
    return len(diffs)


def _leaves(x: Any) -> Iterator[Any]:
    if isinstance(x, dict):
        for v in x.values():
            yield from _leaves(v)
    elif isinstance(x, list):
        for v in x:
            yield from _leaves(v)
    else:
        yield x


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--revs", nargs=2, default=list(DEFAULT_REVS), metavar=("A", "B"),
                   help=f"the two revisions (default: {' '.join(DEFAULT_REVS)})")
    p.add_argument("--data-dir", default=default_data_dir(), help="data folder (default: $RAGCOV_DATA_DIR or ../shared/data)")
    p.add_argument("--work", default=None,
                   help="folder for worktrees, venvs, outputs and logs; outputs and logs stay there (default: a temporary one, removed)")
    p.add_argument("--keep", action="store_true", help="keep the worktrees, venvs and caches too")
    p.add_argument("--compare", nargs=2, metavar=("A_JSON", "B_JSON"), help="only compare two results.json files")
    args = p.parse_args(argv)
    print(command_line(), flush=True)
    if args.compare:
        return 1 if compare(*map(Path, args.compare)) else 0
    data_dir = str(Path(args.data_dir).resolve())
    work = Path(args.work or tempfile.mkdtemp(prefix="layout-identity-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    done: list[dict[str, Any]] = []
    try:
        for rev in args.revs:
            done.append(run_revision(rev, work, data_dir, work / f"job-{rev}.log"))
    except (RuntimeError, subprocess.CalledProcessError) as e:
        print(f"could not run: {e}" + (f"\n{e.stderr}" if getattr(e, "stderr", None) else ""), file=sys.stderr)
        return 2
    finally:
        if not args.keep:
            _cleanup(work, args.revs, whole=args.work is None)
    for d in done:
        print(f"{d['rev']} ({d['sha'][:12]}): {d['seconds']:.0f} s")
    if args.keep or args.work:
        print(f"outputs kept in {work}")
    return 1 if compare(done[0]["results"], done[1]["results"]) else 0


def _cleanup(work: Path, revs: list[str], whole: bool) -> None:
    """Remove our worktrees (through git, so none stays registered), venvs and caches; with ``whole``, the work
    folder too once the comparison has read the outputs (at exit)."""
    for rev in revs:
        wt = work / f"wt-{rev}"
        if wt.exists():
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(wt)], capture_output=True)
        for d in (wt, work / f"venv-{rev}", work / f"cache-{rev}"):
            shutil.rmtree(d, ignore_errors=True)
    if whole:
        atexit.register(shutil.rmtree, work, True)


if __name__ == "__main__":
    sys.exit(main())
