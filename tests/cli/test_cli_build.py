"""``ragcov build`` and ``ragcov publish`` on the real sample."""
from __future__ import annotations

import json

import pandas as pd

from ragcov_data.cli import main


def test_build_prints_summary(data_dir, capsys):
    assert main(["build", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "documents read" in out and "151" in out
    assert "documents excluded         4" in out and "single_chunk: 4" in out
    assert "2,312" in out and "top 10% of documents hold 50.0% of chunks" in out and "despacho" in out


def test_build_json_and_out(data_dir, tmp_path, capsys):
    assert main(["build", "--data-dir", str(data_dir), "--chunk-words", "400", "--json", "--out",
                 str(tmp_path / "t")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["config"]["name"] == "chunks-400"
    assert summary["documents_eligible"] + summary["documents_excluded"]["single_chunk"] == 151
    corpus = pd.read_parquet(tmp_path / "t" / "corpus.parquet")
    assert len(corpus) == summary["chunks"]
    manifest = json.loads((tmp_path / "t" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["qrels"] == summary["qrels"]


def test_build_data_files_and_errors(tmp_path, capsys):
    src = tmp_path / "a.jsonl"
    src.write_text(json.dumps({"doc_id": "x", "text": " ".join(["w"] * 300)}) + "\n", encoding="utf-8")
    assert main(["build", "--data-files", str(src), "--chunk-words", "50", "--query-words", "10"]) == 0
    assert "chunks                     6" in capsys.readouterr().out
    assert main(["build", "--data-files", str(src), "--chunk-words", "10"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ragcov build: error: `chunk_words` (10) must be >= `query_words` (20)")
    assert main(["build", "--data-files", str(tmp_path / "missing.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_publish_verb(data_dir, tmp_path, capsys):
    out = tmp_path / "pub"
    assert main(["publish", str(out), "--data-dir", str(data_dir), "--config", "chunks-400",
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "aneel_taesa/chunks-400: corpus 567" in capsys.readouterr().out
    assert (out / "README.md").is_file() and (out / "queries" / "chunks-400.parquet").is_file()
