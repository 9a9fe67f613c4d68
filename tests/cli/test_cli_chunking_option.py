"""``--chunking dispositivo`` on the verbs that build a task (build, run, eval through cli/_task_options.py) and publish."""
from __future__ import annotations

import json

import datasets
import pandas as pd

from ragcov_data.cli import main
from tests.loaders.test_dispositivos import ACTS


def _acts(tmp_path):
    path = tmp_path / "acts.jsonl"
    path.write_text("".join(json.dumps({"doc_id": k, "doc_type": k, "text": v}, ensure_ascii=False) + "\n"
                            for k, v in ACTS.items()), encoding="utf-8")
    return path


def test_build_dispositivo(tmp_path, capsys):
    src = _acts(tmp_path)
    assert main(["build", "--data-files", str(src), "--chunking", "dispositivo", "--max-words", "60",
                 "--chunk-words", "50", "--json", "--out", str(tmp_path / "task")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["config"]["name"] == "dispositivo-60-w50" and summary["config"]["max_words"] == 60
    assert summary["units"]["documents_structured"] == 3 and summary["units"]["documents_fallback"] == 1
    corpus = pd.read_parquet(tmp_path / "task" / "corpus.parquet")
    assert list(corpus.columns[:6]) == ["_id", "doc_id", "chunk_index", "text", "unit", "continued"]
    assert corpus["continued"].dtype == bool
    # a task folder is already built: the chunking options do not apply to it
    assert main(["build", "--task", str(tmp_path / "task"), "--chunking", "dispositivo"]) == 2
    assert "--chunking does not apply to the task folder" in capsys.readouterr().err
    assert main(["build", "--data-files", str(src), "--chunking", "dispositivo"]) == 0
    assert "dispositivos: 3 documents cut at their artigos, 1 with no artigo in word windows" in capsys.readouterr().out


def test_size_options_need_dispositivo(tmp_path, capsys):
    src = _acts(tmp_path)
    assert main(["build", "--data-files", str(src), "--max-words", "300"]) == 2
    assert "--max-words applies to --chunking dispositivo" in capsys.readouterr().err
    assert main(["build", "--data-files", str(src), "--chunking", "dispositivo", "--min-words", "5"]) == 2
    assert "`min_words` (5) must be >= `query_words` (20)" in capsys.readouterr().err


def test_run_dispositivo(tmp_path, capsys):
    src = _acts(tmp_path)
    out = tmp_path / "bm25.tsv"
    assert main(["run", "--retriever", "bm25", "--data-files", str(src), "--chunking", "dispositivo",
                 "--chunk-words", "50", "--out", str(out)]) == 0
    run = pd.read_csv(out, sep=r"\s+", header=None)
    assert run[0].str.startswith(("lei#", "decreto#", "resolucao_normativa#", "despacho#")).all()


def test_publish_both_chunkings(data_dir, aneel_fulltext, tmp_path, capsys):
    from ragcov_data import build_task

    n = len(build_task(aneel_fulltext, chunking="dispositivo").corpus)
    out = tmp_path / "pub"
    assert main(["publish", str(out), "--data-dir", str(data_dir), "--config", "chunks-400",
                 "--config", "dispositivo", "--cache-dir", str(tmp_path / "cache")]) == 0
    assert f"aneel_taesa/dispositivo: corpus {n:,}" in capsys.readouterr().out
    corpus = datasets.load_dataset(str(out), "corpus-dispositivo", split="dispositivo")
    assert corpus.num_rows == n and corpus.features["continued"].dtype == "bool"
    assert datasets.load_dataset(str(out), "corpus", split="chunks_400").num_rows == 567
    assert datasets.load_dataset(str(out), "queries", split="dispositivo").num_rows == n
