"""Fixtures shared by the CLI tests: a tiny cited-questions pair of files, and the API's own per-question
values on the shared IRPF questions (the reference the `ragcov chunking --dataset irpf` numbers must equal)."""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Callable

import pandas as pd
import pytest

from ragcov_data.baselines import BM25
from ragcov_data.cli import main
from ragcov_data.eval.comparisons.cited import per_query_values
from ragcov_data.loaders.cited_questions import build_cited_task, irpf_dir

#: One income word an article of the tiny act and a question of the tiny questions file.
WORDS = ["aluguel", "pensão", "doação", "herança", "salário", "juros"]


@pytest.fixture
def cited_files(tmp_path: Path) -> tuple[Path, Path]:
    """``(acts.jsonl, q.jsonl)``: one act of six articles (Lei nº 10, de 2000) and six questions, question i
    citing article i."""
    acts = tmp_path / "acts.jsonl"
    arts = "\n".join(f"Art. {i}º O contribuinte deve declarar o rendimento {w} recebido no ano, com os seus "
                     f"comprovantes e a indicação da fonte pagadora do rendimento {w}." for i, w in enumerate(WORDS, 1))
    acts.write_text(json.dumps({"doc_id": "lei-10-2000", "title": "Lei nº 10, de 2000", "text": arts},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    qs = tmp_path / "q.jsonl"
    qs.write_text("".join(json.dumps({"qid": f"q{i}", "question": f"Como declarar {w}?",
                                      "citations": f"Lei nº 10, de 2000, art. {i}º"}, ensure_ascii=False) + "\n"
                          for i, w in enumerate(WORDS, 1)), encoding="utf-8")
    return acts, qs


@pytest.fixture
def irpf_api_values(data_dir: Path) -> Callable[..., pd.DataFrame]:
    """``f(qids, metrics, k=10, **cut)``: per-question ``metrics`` of BM25 (top ``k``) on the shared IRPF task
    cut by ``cut`` (``chunking=`` or ``chunker=``), computed through the API alone."""
    folder = irpf_dir(data_dir)

    def values(qids: list[str], metrics: list[str], k: int = 10, **cut: str) -> pd.DataFrame:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            task = build_cited_task(folder / "laws.jsonl", folder / "questions.jsonl", **cut)
        q = task.queries.set_index("_id").loc[qids].reset_index()
        depth = len(task.corpus) if k is None else k
        run = BM25(show_progress=False).index(task.corpus).search(q[["_id", "text"]], k=depth, show_progress=False)
        return per_query_values(run, task, metrics=metrics, query_ids=qids)

    return values


def twelve_acts_run(folder: Path, aneel_fulltext: Path, run_name: str) -> tuple[Path, Path]:
    """``(acts.jsonl, run)`` in ``folder``: the first twelve acts of the shared acervo and the bm25 run of their
    100-word chunks made by ``ragcov run`` (its format from ``run_name``'s suffix)."""
    src = folder / "acts.jsonl"
    src.write_text("".join(aneel_fulltext.read_text(encoding="utf-8").splitlines(True)[:12]), encoding="utf-8")
    run = folder / run_name
    assert main(["run", "--retriever", "bm25", "--data-files", str(src), "--out", str(run), "--quiet"]) == 0
    return src, run


@pytest.fixture(scope="module")
def twelve_acts(tmp_path_factory, aneel_fulltext) -> Callable[[str], tuple[Path, Path]]:
    """``f(run_name)``: :func:`twelve_acts_run` in a fresh folder of this module."""
    return lambda run_name: twelve_acts_run(tmp_path_factory.mktemp("acervo"), aneel_fulltext, run_name)
