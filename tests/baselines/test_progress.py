"""Progress bars: never from a library call unless asked, and then only on a terminal (tqdm's
``disable=None``), on stderr; the main job's console summary stays on stdout."""
from __future__ import annotations

import io
import sys

import pandas as pd
import pytest

from ragcov_data.baselines import BM25, TfIdf

CORPUS = pd.DataFrame({"_id": [f"d{i}" for i in range(40)], "text": [f"termo {i} lei artigo {i % 7}" for i in range(40)]})
QUERIES = pd.DataFrame({"_id": [f"q{i}" for i in range(30)], "text": [f"artigo {i % 7}" for i in range(30)]})


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("cls", [BM25, TfIdf])
def test_library_calls_print_no_bar_by_default(cls, capfd):
    r = cls()
    assert r.show_progress is False
    r.index_batch = 8  # several index batches: a bar would be drawn if asked
    r.index(CORPUS).search(QUERIES, k=5)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_asked_bars_stay_off_a_pipe_and_show_on_a_terminal(monkeypatch, capfd):
    r = BM25(show_progress=True)
    r.index_batch = 8
    r.index(CORPUS).search(QUERIES, k=5)  # stderr is a pipe here (captured): tqdm's disable=None hides it
    assert capfd.readouterr().err == ""
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    r.index(CORPUS).search(QUERIES, k=5)
    assert "bm25: index" in term.getvalue() and "bm25: search" in term.getvalue()


def test_coverage_study_prints_nothing_unless_asked(capfd):
    from ragcov_data.eval.planning.coverage import coverage_study

    census = pd.DataFrame({"query-id": [f"q{i}" for i in range(60)], "doc_id": [f"d{i // 3}" for i in range(60)],
                           "value": [float(i % 2) for i in range(60)]})
    coverage_study(census, k=[5], reps=20, methods=["t"], estimators="macro", seed=0)
    assert capfd.readouterr().err == ""


def test_task_build_bars_only_on_a_terminal(tmp_path, monkeypatch, capfd):
    """`load_dataset(show_progress=True)` writes the datasets library's bars to a terminal, never to a pipe."""
    import json

    from ragcov_data import load_dataset

    acts = tmp_path / "data" / "aneel"
    acts.mkdir(parents=True)
    rows = [{"doc_id": f"a{i}", "text": " ".join(f"palavra{j}" for j in range(60)), "doc_type": "REN"}
            for i in range(3)]
    (acts / "aneel_fulltext.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    load_dataset("aneel_taesa", data_dir=str(acts.parent), chunk_words=20, show_progress=True,
                 cache_dir=str(tmp_path / "c1"))
    assert "examples/s" not in capfd.readouterr().err  # stderr is a pipe here
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    load_dataset("aneel_taesa", data_dir=str(acts.parent), chunk_words=20, show_progress=True,
                 cache_dir=str(tmp_path / "c2"))  # a fresh cache: the splits are generated again
    assert "examples" in term.getvalue()
