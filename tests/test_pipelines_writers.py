"""A pipeline's passage run has one writer at a time, and a file that holds an answer twice is repaired.

Two ``ragcov run --pipeline`` on one ``--out`` used to both append every answer, and both failed blaming the
pipeline ("rank 1 twice"), with no re-run able to repair the file. The writer now holds a lock beside the file
(:func:`ragcov_data._atomic.one_writer`), and a resumed file keeps one copy of an answer found twice when the
copies agree, and asks the question again when they differ.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import ragcov_data
from ragcov_data._atomic import lock_path, one_writer
from ragcov_data.cli import main
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.runs import load_run

QUESTIONS = ["Quem declara?", "Qual o prazo?", "Onde entregar?", "Quanto pagar?"]
TASK = {"queries": pd.DataFrame({"_id": [f"q{i}" for i in range(1, 5)], "text": QUESTIONS})}


def _answer(question: str) -> list[str]:
    return [f"{question} primeiro", f"{question} segundo"]


SLOW = """
import os, pathlib, time
def build(documents):
    def ask(question):  # in the process told to wait: waits (at most 5 minutes) until the test releases it
        pathlib.Path('started').touch()
        end = time.monotonic() + 300
        while os.environ.get('WAIT_FOR_RELEASE') and not pathlib.Path('release').exists() and time.monotonic() < end:
            time.sleep(0.05)
        return [question[:40]]
    return ask
"""


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float = 120) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the first run did not start"
        time.sleep(0.05)


def test_a_second_run_on_one_out_is_refused_naming_the_first(tmp_path, monkeypatch, data_dir, capsys):
    """The first ``ragcov run --pipeline`` waits inside its pipeline; a second on the same ``--out`` is refused,
    naming the first's process, and the file the first writes is whole and reads back."""
    (tmp_path / "slow.py").write_text(SLOW, encoding="utf-8")
    argv = ["run", "--pipeline", "slow:build", "--dataset", "irpf", "--data-dir", str(data_dir), "--out", "r.jsonl",
            "--quiet"]
    first = subprocess.Popen([sys.executable, "-m", "ragcov_data", *argv], cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env={**os.environ, "WAIT_FOR_RELEASE": "1"})
    try:
        _wait_for(tmp_path / "started", first)
        monkeypatch.chdir(tmp_path)
        before = (tmp_path / "r.jsonl").read_bytes()
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"r.jsonl is being written by another run (process {first.pid} on " in err, err
        assert "python -m ragcov_data run --pipeline slow:build" in err and "give another output path" in err
        assert (tmp_path / "r.jsonl").read_bytes() == before  # the second wrote nothing
        (tmp_path / "release").touch()
        out, err = first.communicate(timeout=300)
        assert first.returncode == 0, err
    finally:
        (tmp_path / "release").touch()
        first.kill() if first.poll() is None else None
    run = load_run(tmp_path / "r.jsonl")
    assert run["query-id"].nunique() == 175 and run.groupby("query-id").size().eq(1).all()
    assert not lock_path(tmp_path / "r.jsonl").exists()  # the lock file goes with its holder
    assert main(argv) == 0 and "0 asked now, 175 found answered" in capsys.readouterr().out  # free again


def test_a_lock_left_by_a_killed_writer_does_not_block(tmp_path):
    """The kernel releases a lock when its holder dies, however it dies: the lock file it leaves is no lock."""
    out = tmp_path / "r.jsonl"
    code = (f"from ragcov_data._atomic import one_writer\nimport os\nwith one_writer({str(out)!r}):\n"
            "    os._exit(9)\n")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 9
    assert lock_path(out).exists()  # left behind by the killed process
    run = ragcov_data.run_pipeline(_answer, TASK, out=out, show_progress=False)
    assert run["query-id"].nunique() == 4 and not lock_path(out).exists()


def test_the_lock_is_exclusive_within_one_process_too(tmp_path):
    out = tmp_path / "r.jsonl"
    with one_writer(out):
        with pytest.raises(RagcovError, match=rf"{out} is being written by another run \(process {os.getpid()} on"):
            ragcov_data.run_pipeline(_answer, TASK, out=out, show_progress=False)
    assert not out.exists()


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def test_answers_found_twice_are_kept_once_when_they_agree_and_asked_again_when_they_differ(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    ragcov_data.run_pipeline(_answer, TASK, out=out, show_progress=False, name="mine")
    head, *body = _lines(out)
    q1, q2, q3, q4 = (body[i:i + 2] for i in range(0, 8, 2))
    other = [ln.replace("primeiro", "outro") for ln in q2]  # another copy of q2's answer, with other text
    # two runs that wrote at once: a second equal first line, q1 twice with its lines interleaved, q2 twice, differing
    out.write_text("".join([head, q1[0], head, q1[0], q1[1], q1[1], *q2, *other, *q3, *q4]), encoding="utf-8")
    with pytest.raises(InputFileError):
        load_run(out)  # what the reader says of such a file
    capsys.readouterr()
    asked: list[str] = []
    run = ragcov_data.run_pipeline(lambda q: asked.append(q) or _answer(q), TASK, out=out, show_progress=False,
                                   name="mine")
    assert asked == [QUESTIONS[1]]  # q2 only: its copies differ
    err = capsys.readouterr().err
    assert f"{out}: 2 question(s) were answered twice in the file" in err
    assert "1 with identical copies kept once (first: 'q1')" in err
    assert "1 whose copies differ dropped and asked again (first: 'q2')" in err
    assert run.attrs["repaired"] == {"merged": ["q1"], "asked_again": ["q2"]}
    assert sorted(_lines(out)) == sorted([head, *q1, *q2, *q3, *q4])  # one copy each, q2 asked again
    assert load_run(out)[["query-id", "rank", "text"]].equals(run[["query-id", "rank", "text"]])


def test_a_file_repaired_with_nothing_left_to_ask_is_rewritten_too(tmp_path):
    out = tmp_path / "r.jsonl"
    ragcov_data.run_pipeline(_answer, TASK, out=out, show_progress=False)
    lines = _lines(out)
    out.write_text("".join(lines + lines[1:3]), encoding="utf-8")  # q1 again, identical: nothing to ask
    run = ragcov_data.run_pipeline(lambda q: pytest.fail("nothing should be asked"), TASK, out=out,
                                   show_progress=False, name="_answer")
    assert run.attrs["asked"] == 0 and run.attrs["repaired"]["merged"] == ["q1"]
    assert _lines(out) == lines


def test_an_empty_answer_and_passages_for_one_question_differ(tmp_path):
    out = tmp_path / "r.jsonl"
    ragcov_data.run_pipeline(_answer, TASK, out=out, show_progress=False)
    lines = _lines(out)
    out.write_text("".join(lines + [json.dumps({"query-id": "q3", "empty": True}) + "\n"]), encoding="utf-8")
    asked: list[str] = []
    ragcov_data.run_pipeline(lambda q: asked.append(q) or _answer(q), TASK, out=out, show_progress=False,
                             name="_answer")
    assert asked == [QUESTIONS[2]]


def test_a_second_first_line_of_another_run_is_refused(tmp_path):
    out = tmp_path / "r.jsonl"
    ragcov_data.run_pipeline(_answer, TASK, out=out, show_progress=False)
    head, *body = _lines(out)
    alien = json.dumps({"ragcov_passage_run": {**json.loads(head)["ragcov_passage_run"], "pipeline": "other"}})
    out.write_text("".join([head, *body[:2], alien + "\n", *body[2:]]), encoding="utf-8")
    with pytest.raises(InputFileError, match=r"line 4: a second first line 'ragcov_passage_run', of another run"):
        ragcov_data.run_pipeline(_answer, TASK, out=out, show_progress=False, name="_answer")
