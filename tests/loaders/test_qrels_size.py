"""Self-retrieval qrels grow with the square of a document's chunk count: counted and warned about first."""
from __future__ import annotations

import warnings

import pytest

from ragcov_data import build_task
from ragcov_data.loaders import chunking
from ragcov_data.loaders.chunking import QrelsSizeWarning, qrels_rows, warn_qrels_size


def test_long_document_warns_with_size_before_building(tmp_path, write_jsonl, words, monkeypatch):
    # one long act (300 chunks of 50 words) beside two short ones
    path = write_jsonl(tmp_path / "long.jsonl", [{"doc_id": "lei", "text": words(15_000, "l")},
                                                 {"doc_id": "a", "text": words(100, "a")},  # 2 chunks
                                                 {"doc_id": "b", "text": words(160, "b")}])  # 3: 10-word tail merged
    monkeypatch.setattr(chunking, "QRELS_WARN_ROWS", 50_000)
    expected = 300 * 299 + 2 * 1 + 3 * 2
    with pytest.warns(QrelsSizeWarning) as rec:
        task = build_task(path, chunk_words=50, query_words=20)
    assert len(task.qrels) == expected  # the warning announced the real size
    msg = str(rec[0].message)
    assert msg.startswith(f"the self-retrieval qrels will hold {expected:,} rows (about ")
    assert "warning threshold 50,000" in msg and "largest document (300 chunks) alone gives 100% of them" in msg
    assert "Use larger chunks (`chunk_words`)" in msg
    assert rec[0].filename == __file__  # points at the caller of build_task, not ragcov's internals


def test_no_warning_below_threshold(tmp_path, write_jsonl, words, monkeypatch):
    path = write_jsonl(tmp_path / "s.jsonl", [{"doc_id": "a", "text": words(1_000)}])
    monkeypatch.setattr(chunking, "QRELS_WARN_ROWS", 20 * 19)  # exactly the size: not above
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(build_task(path, chunk_words=50, query_words=20).qrels) == 20 * 19


def test_memory_estimate_scales_with_ids():
    with pytest.warns(QrelsSizeWarning, match=r"will hold 99,990,000 rows \(about 6\.4 GB in memory"):
        rows = warn_qrels_size([10_000], mean_id_chars=20.0)  # 1M words in 100-word chunks, default threshold
    assert rows == 10_000 * 9_999
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_qrels_size([10, 3], threshold=10**6) == 96


def test_default_threshold_and_real_sample(aneel_task):
    sizes = aneel_task.corpus.groupby("doc_id", sort=False).size()
    assert qrels_rows(sizes) == len(aneel_task.qrels)
    assert chunking.QRELS_WARN_ROWS == 20_000_000  # the shared sample (244,070 rows at chunks-100) is far below
