"""The quick main job, run once per test session and read by every test that needs one.

Three places need a quick ``ragcov benchmark`` on the shared data: the end-to-end CLI tests
(``tests/cli/test_cli_coverage.py``), the browser checks of its report (``tests/test_report_browser.py``) and the
main job's page (``docs/main-job.md``, run by ``tests/test_docs_snippets.py``). Each ran its own job (about 50 s
of CPU on a quiet core); they now run one command, :data:`QUICK_ARGS`, once. The run is deterministic for its
seed, so reading its outputs is reading what the command writes.

Under pytest-xdist the workers share one folder (the parent of their base temporary folders) and a file lock, so
the first worker to ask runs the job and the others wait for it and read its outputs; without xdist the folder
is the session's own. Tests read the outputs and never write into the folder: a test that re-renders or copies
works on its own copy.
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

#: The quick job's options after ``--data-dir`` (the main job's page shows exactly this command).
QUICK_ARGS = ("--quick", "--retrievers", "bm25,tfidf", "--reps", "100", "--k", "5,10,20", "--n-resamples", "99",
              "--no-progress")


@dataclass(frozen=True)
class QuickJob:
    """One quick main job's outputs: its ``--out`` folder (read only), what it printed, its LaTeX summary."""

    out: Path
    printed: str
    err: str
    latex: Path

    def copy_to(self, dest: Path) -> Path:
        """A private copy of the output folder at ``dest`` (what ``--out dest`` would have written)."""
        shutil.copytree(self.out, dest, dirs_exist_ok=True)
        return dest


def _shared_root(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def quick_job(factory: pytest.TempPathFactory, data_dir: Path) -> QuickJob:
    """Run ``ragcov benchmark --data-dir DATA --out OUT QUICK_ARGS --latex TEX`` once per session; later callers
    (any worker) read its outputs. A failed run leaves no mark, so the next caller runs it again and fails alike."""
    from ragcov_data.cli import main

    root = _shared_root(factory) / "quick-main-job"
    root.mkdir(exist_ok=True)
    out, done, latex = root / "out", root / "done", root / "summary.tex"
    with FileLock(str(root / "lock")):
        if not done.exists():
            shutil.rmtree(out, ignore_errors=True)
            printed, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(err):
                code = main(["benchmark", "--data-dir", str(data_dir), "--out", str(out), *QUICK_ARGS,
                             "--latex", str(latex)])
            assert code == 0, f"the quick main job exited {code}: {err.getvalue()[-2000:]}"
            (root / "printed.txt").write_text(printed.getvalue(), encoding="utf-8")
            (root / "err.txt").write_text(err.getvalue(), encoding="utf-8")
            done.touch()
    return QuickJob(out, (root / "printed.txt").read_text(encoding="utf-8"),
                    (root / "err.txt").read_text(encoding="utf-8"), latex)
