"""``ragcov build`` names skipped folder files and oversized qrels on stderr, one plain line each."""
from __future__ import annotations

import json

from ragcov_data.cli import main
from ragcov_data.loaders import chunking


def test_skipped_files_named_on_stderr(tmp_path, capsys):
    root = tmp_path / "acervo"
    root.mkdir()
    (root / "a.txt").write_text(" ".join(f"w{i}" for i in range(300)), encoding="utf-8")
    (root / "parecer.pdf").write_bytes(b"%PDF-1.4")
    (root / "voto.docx").write_bytes(b"PK")
    assert main(["build", "--data-files", str(root), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["documents_read"] == 1  # stdout stays pure JSON
    lines = captured.err.strip().split("\n")
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("ragcov build: warning: 2 file(s) in the acervo folder were not read")
    assert "acervo/parecer.pdf (unsupported type .pdf), acervo/voto.docx (unsupported type .docx)" in lines[0]


def test_oversized_qrels_warned_on_stderr(tmp_path, capsys, monkeypatch):
    src = tmp_path / "long.jsonl"
    src.write_text(json.dumps({"doc_id": "lei", "text": " ".join(f"w{i}" for i in range(5_000))}) + "\n",
                   encoding="utf-8")
    monkeypatch.setattr(chunking, "QRELS_WARN_ROWS", 1_000)
    assert main(["build", "--data-files", str(src), "--chunk-words", "50"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"ragcov build: warning: the self-retrieval qrels will hold {100 * 99:,} rows"), err
