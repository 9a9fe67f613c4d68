"""`ragcov chunking --dataset irpf --chunker NAME ...`: built-in and external chunkers in one family, as the API
scores them."""
from __future__ import annotations

import json

import pytest

from ragcov_data.cli import main


def test_chunking_irpf_with_chunkers_end_to_end(data_dir, tmp_path, capsys, irpf_api_values):
    out = tmp_path / "chunkers.json"
    assert main(["chunking", "--dataset", "irpf", "--data-dir", str(data_dir), "--chunker", "words-50",
                 "--chunker", "dispositivo", "--chunker", "recursive-800", "--retriever", "bm25", "--metrics",
                 "recall@10", "--budgets", "none", "--n-resamples", "199", "--quiet", "--json", str(out)]) == 0
    cap = capsys.readouterr()
    assert "recursive-800/bm25" in cap.out and "dispositivo/bm25" in cap.out and "words-50/bm25" in cap.out
    got = json.loads(out.read_text())
    systems = {s["name"]: s for s in got["leaderboards"]["recall@10"]["systems"]}
    assert set(systems) == {"words-50/bm25", "dispositivo/bm25", "recursive-800/bm25"}
    # the external chunker's number from the API: per-question recall@10 of BM25 on recursive-800
    ref = irpf_api_values([v["query-id"] for v in got["values"]], ["recall@10"], chunker="recursive-800")
    assert systems["recursive-800/bm25"]["estimate"] == pytest.approx(ref["recall@10"].mean(), abs=1e-12)


def test_chunker_beside_chunking_and_bad_chunkers(data_dir, tmp_path, capsys, cited_files):
    acts, qs = cited_files
    base = ["chunking", "--dataset", "cited_questions", "--data-files", str(acts), "--questions", str(qs),
            "--retriever", "bm25", "--n-resamples", "199", "--quiet", "--metrics", "recall@5"]
    out = tmp_path / "o.json"
    assert main([*base, "--chunking", "article", "--chunker", "semchunk-20", "--chunker", "chonkie-sentence-20",
                 "--json", str(out)]) == 0
    names = {s["name"] for s in json.loads(out.read_text())["leaderboards"]["recall@5"]["systems"]}
    assert names == {"article/bm25", "semchunk-20/bm25", "chonkie-sentence-20/bm25"}
    rows = [ln for ln in capsys.readouterr().out.splitlines() if "/bm25 " in ln and " recall@5 " in ln]
    assert len(rows) == 3 and len({ln.index(" recall@5 ") for ln in rows}) == 1  # long names keep columns aligned
    assert main([*base, "--chunker", "sentences"]) == 2
    assert "unknown chunker 'sentences'" in capsys.readouterr().err
    assert main([*base, "--chunking", "article", "--chunker", "article"]) == 2
    assert "list a chunking twice" in capsys.readouterr().err
    assert main(["chunking", "--data-dir", str(data_dir), "--chunker", "recursive-800", "--quiet"]) == 2
    assert "--chunker applies to --dataset irpf / cited_questions" in capsys.readouterr().err
