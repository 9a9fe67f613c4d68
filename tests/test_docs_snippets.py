"""Every fenced code block of README.md, CONTRIBUTING.md and docs/**/*.md runs as written.

Per page, in a fresh working directory whose ``../shared/data`` is the tests' data folder (so the pages can say
``--data-dir ../shared/data`` exactly as a user beside the shared folder types it):

- ```python blocks run in page order in one namespace;
- ```bash blocks: every ``ragcov ...`` command runs through the CLI's entry point in-process and must exit 0;
  any other command in a bash block fails the test (write it as text, or mark the block not-run). The test checks
  that a command runs, not its Monte-Carlo noise: replicate counts above :data:`CAPS` (``--n-resamples``,
  ``--reps``; given, or the verb's default when the command gives none) run at the cap, which changes how precise a
  printed interval or coverage is, never what runs;
- ```text blocks are output (console transcripts) and are not run; a fence without a language is an error.

The quick main job's command (``tests/_quick_job.py``) runs once a session and is shared with the tests that
read its outputs: the page's exact command reads that run into its ``reports/`` folder.

A block that cannot run here (an install, the full main job) carries ``<!-- not-run: reason -->`` on the line
right above its fence; such marks must be few and each must give its reason.
"""
from __future__ import annotations

import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from _quick_job import QUICK_ARGS, QuickJob, quick_job

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted([REPO / "README.md", REPO / "CONTRIBUTING.md", *(REPO / "docs").rglob("*.md")])
LANGUAGES = {"python", "bash", "text", "json"}
MAX_NOT_RUN = 8
NOT_RUN = re.compile(r"^<!--\s*not-run:(?P<reason>.*?)-->\s*$")
FENCE = re.compile(r"^```(?P<lang>\S*)\s*$")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    not_run: str | None  # the reason, when the block is marked not-run


def parse_blocks(page: Path) -> list[Block]:
    """The fenced blocks of one page, each with its language and its not-run reason (if marked)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        if j == len(lines):
            raise AssertionError(f"{page.name}:{start + 1}: code fence never closed")
        mark = NOT_RUN.match(lines[start - 1].strip()) if start > 0 else None
        blocks.append(Block(page, start + 1, m.group("lang"), "\n".join(lines[start + 1:j]) + "\n",
                            mark.group("reason").strip() if mark else None))
        i = j + 1
    return blocks


def stray_marks(page: Path) -> list[int]:
    """Lines of not-run marks that are not right above a fence (a mark that marks nothing)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    return [n + 1 for n, line in enumerate(lines)
            if NOT_RUN.match(line.strip()) and not (n + 1 < len(lines) and FENCE.match(lines[n + 1]))]


def shell_commands(code: str) -> list[str]:
    """The commands of a bash block: continuation lines joined, comments and blank lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", code)
    commands = []
    for line in joined.splitlines():
        parts = shlex.split(line, comments=True)
        if parts:
            commands.append(shlex.join(parts))
    return commands


def _page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


@pytest.fixture
def workdir(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working dir with ``../shared/data`` pointing at the tests' data folder."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data_dir.resolve(), target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("RAGCOV_DATA_DIR", raising=False)
    return work


def test_pages_found() -> None:
    assert (REPO / "README.md") in PAGES and (REPO / "CONTRIBUTING.md").is_file()
    assert len([p for p in PAGES if "docs" in p.parts]) >= 10, "the docs pages are missing"


def test_blocks_are_labelled_and_marks_are_few() -> None:
    marked = []
    for page in PAGES:
        assert not stray_marks(page), f"{_page_id(page)}: not-run mark not right above a fence: {stray_marks(page)}"
        for b in parse_blocks(page):
            assert b.lang in LANGUAGES, (f"{_page_id(page)}:{b.line}: fence language {b.lang!r}; use one of "
                                         f"{sorted(LANGUAGES)} (```text for output)")
            if b.not_run is not None:
                assert len(b.not_run) >= 10, f"{_page_id(page)}:{b.line}: a not-run mark must say why"
                assert b.lang in {"python", "bash"}, f"{_page_id(page)}:{b.line}: only code blocks need a mark"
                marked.append(f"{_page_id(page)}:{b.line}")
    assert len(marked) <= MAX_NOT_RUN, f"{len(marked)} blocks marked not-run (at most {MAX_NOT_RUN}): {marked}"


def test_readme_first_screen() -> None:
    """The README's first 40 lines give the two commands (install + main job, tests), each with its time."""
    head = "\n".join((REPO / "README.md").read_text(encoding="utf-8").splitlines()[:40])
    assert ".venv/bin/ragcov benchmark --data-dir ../shared/data" in head
    assert ".venv/bin/python -m pytest -q" in head
    assert head.count("<!-- time -->") >= 2
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


def test_readme_torch_note_says_where_the_cpu_build_comes_from() -> None:
    """Installing torch first avoids a CUDA build only where pip finds a CPU wheel: the README keeps the
    command and says how to get the CPU build elsewhere, never that pip cannot pull a CUDA build."""
    head = "\n".join((REPO / "README.md").read_text(encoding="utf-8").splitlines()[:40])
    assert "pip install torch==2.13.0 &&" in head
    assert "--index-url https://download.pytorch.org/whl/cpu" in head
    assert "never pulls" not in head and "only where pip finds a CPU wheel" in head


def test_parser_reads_marks_and_continuations(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("x\n<!-- not-run: installs packages -->\n```bash\npip install x\n```\n\n```bash\n"
                    "ragcov eval a.trec \\\n    --metric ndcg@10   # comment\n```\n", encoding="utf-8")
    first, second = parse_blocks(page)
    assert (first.not_run, second.not_run) == ("installs packages", None)
    assert shell_commands(second.code) == ["ragcov eval a.trec --metric ndcg@10"]
    assert capped(["ragcov", "coverage", "--reps", "200", "--n-resamples", "9", "--k", "999"]) == [
        "ragcov", "coverage", "--reps", "50", "--n-resamples", "9", "--k", "999"]
    assert capped(["ragcov", "leaderboard", "a.trec"]) == ["ragcov", "leaderboard", "a.trec", "--n-resamples", "99"]
    plan = capped(["ragcov", "plan", "--twin"])  # its --reps default is decided at run time: capped too
    assert plan[:3] == ["ragcov", "plan", "--twin"] and dict(zip(plan[3::2], plan[4::2])) == {"--n-resamples": "99",
                                                                                             "--reps": "50"}
    assert capped(["ragcov", "misses", "r.trec"]) == ["ragcov", "misses", "r.trec"]
    page.write_text("<!-- not-run: a reason here -->\n\ntext\n", encoding="utf-8")
    assert stray_marks(page) == [1]


QUICK_JOB = ["ragcov", "benchmark", "--data-dir", "../shared/data", *QUICK_ARGS]
#: Replicate counts a page's command runs with at most (the test checks the wiring, not the precision).
CAPS = {"--n-resamples": 99, "--reps": 50}


def _verb_parsers() -> dict[str, "argparse.ArgumentParser"]:
    """Each CLI verb -> its parser."""
    import argparse

    from ragcov_data.cli import build_parser

    return next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices


def _replicate_defaults() -> dict[str, dict[str, object]]:
    """Each verb's replicate options of :data:`CAPS` that it takes, with their defaults."""
    return {verb: {o: a.default for a in p._actions for o in a.option_strings if o in CAPS}
            for verb, p in _verb_parsers().items()}


def capped(argv: list[str]) -> list[str]:
    """``argv`` with each replicate count of :data:`CAPS` cut to its cap: a count given above it, or a verb's
    default above it (or decided at run time) when the command gives none; smaller counts and the rest as given."""
    out = list(argv)
    for i, a in enumerate(out[:-1]):
        if a in CAPS and out[i + 1].isdigit():
            out[i + 1] = str(min(int(out[i + 1]), CAPS[a]))
    for flag, default in _replicate_defaults().get(out[1] if len(out) > 1 else "", {}).items():
        if flag not in out and (not isinstance(default, int) or default > CAPS[flag]):
            out += [flag, str(CAPS[flag])]
    return out


def _run_bash(block: Block, capsys: pytest.CaptureFixture[str], job: Callable[[], QuickJob]) -> None:
    """Run each command of a bash block through the CLI. The quick main job's exact command (``QUICK_JOB``,
    default ``--out reports``) reads the session's one run of it into ``reports/`` (tests/_quick_job.py)."""
    from ragcov_data.cli import main

    for command in shell_commands(block.code):
        argv = shlex.split(command)
        assert argv[0] == "ragcov", (f"{_page_id(block.page)}:{block.line}: {command!r} is not a ragcov command: "
                                     "write it as text or mark the block not-run")
        if argv == QUICK_JOB:
            job().copy_to(Path("reports"))
            continue
        rc = main(capped(argv)[1:])
        err = capsys.readouterr().err
        assert rc == 0, f"{_page_id(block.page)}:{block.line}: {command!r} exited {rc}: {err[-2000:]}"


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_page_code_runs(page: Path, workdir: Path, capsys: pytest.CaptureFixture[str],
                        tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> None:
    namespace: dict[str, object] = {"__name__": "__docs__"}
    ran = 0
    for block in parse_blocks(page):
        if block.not_run is not None or block.lang not in {"python", "bash"}:
            continue
        if block.lang == "python":
            code = compile("\n" * block.line + block.code, _page_id(page), "exec")  # tracebacks give page lines
            with contextlib.redirect_stdout(io.StringIO()):
                exec(code, namespace)  # noqa: S102 - the documented example itself
        else:
            _run_bash(block, capsys, lambda: quick_job(tmp_path_factory, data_dir))
        ran += 1
    code_blocks = [b for b in parse_blocks(page) if b.lang in {"python", "bash"}]
    assert ran == len([b for b in code_blocks if b.not_run is None])


def test_main_job_page_runs_the_shared_quick_job() -> None:
    """The main job's page shows the quick job's exact command, so its run is the one the tests share."""
    commands = [shlex.split(c) for b in parse_blocks(REPO / "docs" / "main-job.md") if b.lang == "bash"
                and b.not_run is None for c in shell_commands(b.code)]
    assert QUICK_JOB in commands


LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors of a page: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            for m in re.finditer(r"^#+\s+(.*)$", text, flags=re.M)}


def test_relative_links_resolve() -> None:
    """Every relative link of every page names a file that exists, and a heading of it when it has an anchor."""
    broken = []
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for m in LINK.finditer(text):
            target = m.group("target")
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{_page_id(page)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{_page_id(page)}: {target} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def _resolve(dotted: str) -> bool:
    """Whether ``a.b.c`` names an importable module or an attribute reachable from one."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for name in parts[cut:]:
                obj = getattr(obj, name)
        except AttributeError:
            return False
        return True
    return False


def test_named_python_paths_exist() -> None:
    """Every ``ragcov_data.…`` path the pages name in prose is a module or attribute that exists."""
    missing = sorted({f"{_page_id(page)}: {name}" for page in PAGES
                      for name in re.findall(r"`(ragcov_data(?:\.\w+)+)", page.read_text(encoding="utf-8"))
                      if not _resolve(name)})
    assert not missing, "paths named in the docs that do not exist:\n" + "\n".join(missing)


def test_results_pages_are_dated_with_their_command() -> None:
    """Each page of docs/results/ says when it was measured and names the command (in backticks) that made it."""
    undated = []
    for page in sorted((REPO / "docs" / "results").glob("*.md")):
        if page.name == "README.md":
            continue
        head = "\n".join(page.read_text(encoding="utf-8").splitlines()[:8])
        if not re.search(r"[Mm]easured (before |on )?\d{4}-\d{2}-\d{2}", head) or not re.search(r"`(ragcov|python) ", head):
            undated.append(_page_id(page))
    assert not undated, f"results pages without a date and a command in their first lines: {undated}"


def _verb_options() -> dict[str, set[str]]:
    """Each CLI verb -> the option strings its parser accepts."""
    return {verb: set(p._option_string_actions) for verb, p in _verb_parsers().items()}


def test_commands_in_prose_use_real_options() -> None:
    """Commands quoted in prose or transcripts (not run) name a real verb and only options that verb accepts."""
    verbs = _verb_options()
    wrong = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        quoted = re.findall(r"`ragcov ([a-z]+)((?:[^`\n]|\n(?!\n))*)`", text)
        quoted += re.findall(r"^\$ ragcov ([a-z]+)(.*(?:\\\n.*)*)$", text, flags=re.M)
        for verb, rest in quoted:
            if verb not in verbs:
                wrong.append(f"{_page_id(page)}: ragcov {verb} (no such verb)")
                continue
            for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
                if option not in verbs[verb]:
                    wrong.append(f"{_page_id(page)}: ragcov {verb} {option} (no such option)")
    assert not wrong, "commands the CLI would refuse:\n" + "\n".join(sorted(set(wrong)))
