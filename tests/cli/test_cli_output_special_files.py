"""Outputs are written only where a regular file may be replaced.

An output is written by moving a new file over its path, so a named pipe, a device, a socket, a folder or a link
to nothing standing there is refused before any work, naming the path, what it is and the fix; it is never
replaced. Every verb that writes is tried on a named pipe (made here with ``os.mkfifo``); the inputs named do not
exist, so a verb that read or computed anything before checking its outputs would fail with another message.
The pipe's read end is held open without blocking, so a writer that opened the pipe would neither hang the
test nor go unseen (what it wrote would be read back).
"""
from __future__ import annotations

import json
import re
import os
import stat
from pathlib import Path

import pytest

from ragcov_data._atomic import atomic_write, check_replaceable
from ragcov_data.cli import main
from ragcov_data.cli._common import check_outputs
from ragcov_data.errors import RagcovError

FIFO_SAYS = "is a named pipe (FIFO): ragcov writes an output by moving a new file over its path"


@pytest.fixture
def fifo(tmp_path):
    """``f(name)``: a named pipe at ``tmp_path/name`` whose read end is open (non-blocking) until the test ends."""
    fds: list[int] = []

    def make(name: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        fds.append(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        return path

    yield make
    for fd in fds:
        try:
            leaked = os.read(fd, 1 << 16)
        except BlockingIOError:  # nothing written, and a writer still holds it open: also a failure
            leaked = b"<held open>"
        os.close(fd)
        assert leaked == b"", f"something was written into the pipe: {leaked[:80]!r}"


def _refused(argv: list, pipe: Path, capsys, says: str = FIFO_SAYS) -> str:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert says in err and str(pipe.name) in err, err
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)  # still the pipe, not a file moved over it
    return err


MISSING = "no-such-input"
# verb's arguments (``{o}`` is the output path, ``{m}`` a missing input) and the name the output gets
FILE_OUTPUTS = [
    (["run", "--retriever", "bm25", "--dataset", "juristcu", "--data-dir", "{m}", "--out", "{o}"], "r.trec"),
    (["run", "--pipeline", "my_rag:build", "--dataset", "irpf", "--data-dir", "{m}", "--out", "{o}"], "r.jsonl"),
    (["eval", "{m}/r.trec", "--dataset", "juristcu", "--data-dir", "{m}", "--json", "{o}"], "e.json"),
    (["compare", "{m}/a.trec", "{m}/b.trec", "--dataset", "juristcu", "--data-dir", "{m}", "--json", "{o}"],
     "c.json"),
    (["leaderboard", "{m}/a.trec", "{m}/b.trec", "--dataset", "juristcu", "--data-dir", "{m}", "--json", "{o}"],
     "l.json"),
    (["leaderboard", "{m}/a.trec", "{m}/b.trec", "--dataset", "juristcu", "--data-dir", "{m}", "--html", "{o}"],
     "l.html"),
    (["leaderboard", "{m}/a.trec", "{m}/b.trec", "--dataset", "juristcu", "--data-dir", "{m}", "--latex", "{o}"],
     "l.tex"),
    (["leaderboard", "{m}/a.trec", "{m}/b.trec", "--dataset", "juristcu", "--data-dir", "{m}", "--markdown",
      "{o}"], "l.md"),
    (["misses", "{m}/a.trec", "--dataset", "juristcu", "--data-dir", "{m}", "--csv", "{o}"], "m.csv"),
    (["misses", "{m}/a.trec", "--dataset", "juristcu", "--data-dir", "{m}", "--json", "{o}"], "m.json"),
    (["chunking", "--dataset", "irpf", "--retriever", "bm25", "--data-dir", "{m}", "--json", "{o}"], "ch.json"),
    (["coverage", "{m}/pop.csv", "--out", "{o}"], "cov.csv"),
    (["plan", "{m}/pop.csv", "--json", "{o}"], "plan.json"),
    (["benchmark", "--data-dir", "{m}", "--out", "{m}-report", "--latex", "{o}"], "b.tex"),
]
FOLDER_OUTPUTS = [
    (["build", "--dataset", "juristcu", "--data-dir", "{m}", "--out", "{o}"], "task"),
    (["publish", "{o}", "--dataset", "juristcu", "--data-dir", "{m}"], "pub"),
    (["report", "{m}/results.json", "--out", "{o}"], "rep"),
    (["benchmark", "--data-dir", "{m}", "--out", "{o}"], "bench"),
]


@pytest.mark.parametrize("argv, name", FILE_OUTPUTS, ids=[f"{a[0]}-{n}" for a, n in FILE_OUTPUTS])
def test_every_file_output_refuses_a_named_pipe_before_any_work(argv, name, fifo, tmp_path, capsys):
    pipe = fifo(name)
    _refused([a.format(o=pipe, m=tmp_path / MISSING) for a in argv], pipe, capsys)


@pytest.mark.parametrize("argv, name", FOLDER_OUTPUTS, ids=[a[0] for a, _ in FOLDER_OUTPUTS])
def test_every_folder_output_refuses_a_named_pipe_at_its_path(argv, name, fifo, tmp_path, capsys):
    pipe = fifo(name)
    _refused([a.format(o=pipe, m=tmp_path / MISSING) for a in argv], pipe, capsys,
             says="it is a named pipe (FIFO), not a folder")


@pytest.mark.parametrize("argv, name", FOLDER_OUTPUTS, ids=[a[0] for a, _ in FOLDER_OUTPUTS])
def test_an_output_folder_holding_a_named_pipe_is_refused(argv, name, fifo, tmp_path, capsys):
    """ragcov writes regular files into its folders (report.json, corpus.parquet, ...): a pipe among them would be
    replaced (a task folder is swapped whole, its old entries deleted), so the folder is refused first."""
    pipe = fifo(f"{name}/manifest.json")
    _refused([a.format(o=pipe.parent, m=tmp_path / MISSING) for a in argv], pipe, capsys,
             says="holds 'manifest.json', a named pipe (FIFO): ragcov writes regular files into the folder")


def test_a_link_to_dev_null_is_refused_and_dev_null_stays_a_device(tmp_path, capsys):
    """``--json /dev/null`` would have moved a file over /dev/null; tried here only through a link, and refused
    before anything is written."""
    link = tmp_path / "null.json"
    link.symlink_to("/dev/null")
    err = _refused_link(["eval", tmp_path / "r.trec", "--dataset", "juristcu", "--data-dir", tmp_path / MISSING,
                         "--json", link], link, capsys)
    assert "is a symbolic link to '/dev/null', a character device" in err and "leave its option out" in err
    with pytest.raises(RagcovError, match="a symbolic link to '/dev/null', a character device"):
        atomic_write(link, "{}")  # the writer itself refuses too (the API writes through it)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and link.is_symlink()


def _refused_link(argv: list, link: Path, capsys) -> str:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2, err
    return err


def test_a_dangling_link_is_named_as_one(tmp_path, capsys):
    link = tmp_path / "gone.json"
    link.symlink_to(tmp_path / "nowhere" / "x.json")
    err = _refused_link(["eval", tmp_path / "r.trec", "--dataset", "juristcu", "--data-dir", tmp_path / MISSING,
                         "--json", link], link, capsys)
    assert f"--json {str(link)!r} is a symbolic link to {str(tmp_path / 'nowhere' / 'x.json')!r}, which does not " \
           "exist" in err and "remove the link, or give the path of the file itself" in err
    assert link.is_symlink() and not link.exists()


def test_a_folder_where_a_file_goes_is_named(tmp_path):
    with pytest.raises(RagcovError, match=r"cannot write --json '.*': it is a folder, not a file; choose a writable"):
        check_outputs([], [("--json", tmp_path)])


def test_a_link_to_a_regular_file_is_replaced_by_the_new_file_and_its_target_kept(tmp_path):
    """The policy for a link to a regular file: the check reads the file it points to (ragcov's own JSON result
    here, so it may be written again), and the write replaces the link with the new file; the file the link
    pointed to is left as it was."""
    target = tmp_path / "kept.json"
    target.write_text(json.dumps({"result_type": "evaluation", "old": True}))
    link = tmp_path / "link.json"
    link.symlink_to(target)
    check_outputs([], [("--json", link)])  # ragcov's own output, through the link: allowed
    atomic_write(link, json.dumps({"result_type": "evaluation", "new": True}))
    assert not link.is_symlink() and json.loads(link.read_text())["new"] is True
    assert json.loads(target.read_text())["old"] is True
    other = tmp_path / "notes.json"
    other.write_text('{"mine": 1}')
    (tmp_path / "to-notes.json").symlink_to(other)
    with pytest.raises(RagcovError, match="is not a ragcov JSON result"):  # the target is checked, not the link
        check_outputs([], [("--json", tmp_path / "to-notes.json")])


def test_the_api_writers_refuse_a_named_pipe(fifo, tmp_path):
    """Every writer goes through ``atomic_write``: a run, a result, a pipeline's passage run."""
    import pandas as pd

    import ragcov_data
    from ragcov_data.runs import save_run

    run = pd.DataFrame({"query-id": ["q1"], "corpus-id": ["d1"], "score": [1.0]})
    for name in ("r.trec", "r.parquet"):
        pipe = fifo(name)
        with pytest.raises(RagcovError, match=re.escape(FIFO_SAYS)):
            save_run(run, pipe)
    pipe = fifo("p.jsonl")
    task = {"queries": pd.DataFrame({"_id": ["q1"], "text": ["Qual?"]})}
    with pytest.raises(RagcovError, match=re.escape(FIFO_SAYS)):
        ragcov_data.run_pipeline(lambda q: ["Art. 1º"], task, out=pipe, show_progress=False)
    assert check_replaceable(tmp_path / "new.json") == tmp_path / "new.json"  # a new path is fine


def test_a_task_folder_holding_a_named_pipe_is_not_swapped_away(fifo, tmp_path):
    """``Task.to_parquet`` replaces the folder whole: a pipe under a task file's name would be deleted."""
    from ragcov_data.tasks.record import check_task_out

    pipe = fifo("task/corpus.parquet")
    with pytest.raises(RagcovError, match=r"holds 'corpus.parquet', a named pipe \(FIFO\), which replacing the folder"):
        check_task_out(pipe.parent)
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
