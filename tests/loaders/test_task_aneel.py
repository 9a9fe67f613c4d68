"""Invariants of the chunked self-retrieval task on the real ANEEL sample."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

import ragcov_data
from ragcov_data import Task, build_task
from ragcov_data.loaders.chunking import SHORT_FINAL_CHUNK_RULE


def _expected_chunks(n: int, cw: int, qw: int) -> int:
    """Chunks of an n-word document, counted independently of the implementation."""
    if n < cw:
        return 1
    full, tail = divmod(n, cw)
    return full + (1 if tail >= qw else 0)


def test_chunks_rejoin_into_document_words(aneel_task, aneel_records):
    by_doc = {doc: g.sort_values("chunk_index") for doc, g in aneel_task.corpus.groupby("doc_id")}
    for rec in aneel_records:
        if rec["doc_id"] not in by_doc:
            continue
        g = by_doc[rec["doc_id"]]
        assert list(g["chunk_index"]) == list(range(len(g)))
        rejoined = " ".join(g["text"]).split()
        assert rejoined == rec["text"].split(), rec["doc_id"]


def test_chunk_sizes_and_ids(aneel_task):
    c = aneel_task.corpus
    sizes = c["text"].str.split().str.len()
    last = c.groupby("doc_id")["chunk_index"].transform("max") == c["chunk_index"]
    assert (sizes[~last] == 100).all()
    assert sizes[last].between(20, 119).all()
    assert (c["_id"] == c["doc_id"] + "#" + c["chunk_index"].map("{:04d}".format)).all()
    assert c["_id"].is_unique


def test_query_is_first_words_of_its_chunk(aneel_task):
    q, c = aneel_task.queries, aneel_task.corpus.set_index("_id")
    assert list(q["_id"]) == list(aneel_task.corpus["_id"])  # one query a chunk, same ids
    assert (q["_id"] == q["chunk_id"]).all()
    chunk_text = c.loc[q["chunk_id"], "text"].to_numpy()
    for query, text in zip(q["text"], chunk_text):
        assert query.split() == text.split()[:20]
    assert (q["doc_id"].to_numpy() == c.loc[q["chunk_id"], "doc_id"].to_numpy()).all()


def test_qrels_are_exactly_the_other_chunks_of_the_document(aneel_task):
    c = aneel_task.corpus[["_id", "doc_id"]]
    expected = c.merge(c, on="doc_id", suffixes=("_q", "_c"))
    expected = expected.loc[expected["_id_q"] != expected["_id_c"], ["_id_q", "_id_c"]]
    expected.columns = ["query-id", "corpus-id"]
    qrels = aneel_task.qrels
    assert not qrels.duplicated(["query-id", "corpus-id"]).any()
    key = ["query-id", "corpus-id"]
    got = qrels[key].sort_values(key).reset_index(drop=True)
    want = expected.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert (qrels["score"] == 1).all()
    assert not (qrels["query-id"] == qrels["corpus-id"]).any()


@pytest.mark.parametrize("cw", [50, 100, 400])
def test_counts_and_exclusions(aneel_fulltext, aneel_records, cw):
    task = build_task(aneel_fulltext, chunk_words=cw, query_words=20)
    n_chunks = {r["doc_id"]: _expected_chunks(len(r["text"].split()), cw, 20) for r in aneel_records}
    eligible = {d for d, n in n_chunks.items() if n >= 2}
    counts = task.manifest["counts"]
    assert counts["documents_read"] == len(aneel_records) == 151
    assert counts["documents_eligible"] == len(eligible)
    assert counts["documents_excluded"] == {"single_chunk": len(aneel_records) - len(eligible)}
    assert set(task.corpus["doc_id"]) == eligible  # excluded documents are nowhere in the task
    assert counts["chunks"] == len(task.corpus) == sum(n_chunks[d] for d in eligible)
    assert counts["qrels"] == len(task.qrels) == sum(n_chunks[d] * (n_chunks[d] - 1) for d in eligible)
    assert task.manifest["config"] == {"name": f"chunks-{cw}", "chunk_words": cw, "query_words": 20}


def test_metadata_travels_as_strings(aneel_task, aneel_records):
    meta = ["source_file", "git_blob", "doc_type", "issuer", "date", "n_words"]
    assert list(aneel_task.corpus.columns) == ["_id", "doc_id", "chunk_index", "text", *meta]
    assert list(aneel_task.queries.columns) == ["_id", "text", "doc_id", "chunk_id", *meta]
    first = aneel_task.corpus.drop_duplicates("doc_id").set_index("doc_id")
    qfirst = aneel_task.queries.drop_duplicates("doc_id").set_index("doc_id")
    for rec in aneel_records:
        if rec["doc_id"] not in first.index:
            continue
        for key in meta:
            for got in (first.at[rec["doc_id"], key], qfirst.at[rec["doc_id"], key]):
                assert pd.isna(got) if rec[key] is None else got == str(rec[key])
    assert first["date"].isna().sum() > 0  # nulls stay null, not "None"
    assert not (first["date"] == "None").any()


def test_manifest(aneel_task, aneel_fulltext):
    m = aneel_task.manifest
    digest = hashlib.sha256(aneel_fulltext.read_bytes()).hexdigest()
    assert m["sources"] == [{"name": "aneel_fulltext.jsonl", "sha256": digest, "bytes": aneel_fulltext.stat().st_size}]
    assert m["rules"]["short_final_chunk"] == SHORT_FINAL_CHUNK_RULE
    assert m["ragcov_version"] == ragcov_data.__version__
    json.dumps(m)  # JSON-able


def test_deterministic_parquet(aneel_fulltext, aneel_task, tmp_path):
    again = build_task(aneel_fulltext, chunk_words=100, query_words=20)
    a = aneel_task.to_parquet(tmp_path / "a")
    b = again.to_parquet(tmp_path / "b")
    for key in a:
        assert a[key].read_bytes() == b[key].read_bytes(), key
    back = pd.read_parquet(a["corpus"])
    pd.testing.assert_frame_equal(back, aneel_task.corpus, check_dtype=False)


def test_describe(aneel_task, aneel_records):
    d = aneel_task.describe()
    sizes = aneel_task.corpus.groupby("doc_id").size().to_numpy()
    assert (d.documents_read, d.documents_eligible) == (151, len(sizes))
    assert d.documents_excluded["single_chunk"] == 151 - len(sizes)
    assert d.chunks == d.queries == sizes.sum()
    assert d.chunks_per_document == {"median": float(np.median(sizes)), "p90": float(np.quantile(sizes, 0.9)),
                                     "max": float(sizes.max())}
    k = int(np.ceil(len(sizes) / 10))
    assert d.top10_share == pytest.approx(np.sort(sizes)[-k:].sum() / sizes.sum())
    types = pd.Series([r["doc_type"] for r in aneel_records]).value_counts()
    assert d.per_type["read"].sort_index().to_dict() == types.sort_index().to_dict()
    assert d.per_type["chunks"].sum() == d.chunks
    assert (d.per_type["read"] - d.per_type["excluded"] == d.per_type["eligible"]).all()
    text = str(d)
    assert "documents excluded" in text and "top 10%" in text and "despacho" in text
    assert "TaskDescription(" in repr(d)
    json.dumps(d.to_dict())


def test_task_round_trips_through_dataset_dict(aneel_task):
    dd = aneel_task.to_dataset_dict()
    back = Task.from_dataset_dict(dd)
    assert back.manifest == aneel_task.manifest
    for split in ("corpus", "queries", "qrels"):
        pd.testing.assert_frame_equal(back[split], aneel_task[split], check_dtype=False)
