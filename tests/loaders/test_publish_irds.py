"""Publishing (plain ``datasets.load_dataset`` on the folder, offline) and the ``ir_datasets`` bridge."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from ragcov_data import RagcovError, load_dataset, publish, register_ir_datasets


@pytest.fixture(scope="module")
def published(aneel_ds, data_dir, hf_cache, tmp_path_factory):
    out = tmp_path_factory.mktemp("published")
    publish(aneel_ds, out)
    ds400 = load_dataset("aneel_taesa", "chunks-400", data_dir=data_dir, cache_dir=hf_cache, show_progress=False)
    publish(ds400, out)
    return out, ds400


def test_layout_card_and_manifest(published, aneel_ds, aneel_fulltext):
    out, _ = published
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    # .ragcov: the mark that the folder is ragcov publish's (publishing more configs into it is not refused)
    assert names == [".ragcov", "README.md", "corpus/chunks-100.parquet", "corpus/chunks-400.parquet",
                     "manifest.json", "qrels/chunks-100.parquet", "qrels/chunks-400.parquet",
                     "queries/chunks-100.parquet", "queries/chunks-400.parquet"]
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("---\n") and "config_name: queries" in readme and "path: queries/chunks-400.parquet" in readme
    assert "Lei 9.610/98" in readme and "identical passage in another edition" in readme
    index = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert set(index["configs"]) == {"chunks-100", "chunks-400"}
    assert index["configs"]["chunks-100"]["counts"]["queries"] == aneel_ds.num_rows["queries"]
    import hashlib

    assert index["configs"]["chunks-100"]["sources"][0]["sha256"] == hashlib.sha256(
        aneel_fulltext.read_bytes()).hexdigest()
    for rel, digest in index["files"].items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == digest


def test_plain_datasets_load_offline(published, aneel_ds, tmp_path):
    out, ds400 = published
    code = (
        "import json, sys, datasets\n"
        f"q = datasets.load_dataset({str(out)!r}, 'queries', cache_dir={str(tmp_path / 'c')!r})\n"
        f"r = datasets.load_dataset({str(out)!r}, 'qrels', split='chunks_400', cache_dir={str(tmp_path / 'c')!r})\n"
        "print(json.dumps({'splits': sorted(q), 'n': q['chunks_100'].num_rows, 'first': q['chunks_100'][0],"
        " 'qrels400': r.num_rows}))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["splits"] == ["chunks_100", "chunks_400"]
    assert got["n"] == aneel_ds.num_rows["queries"]
    assert got["first"] == aneel_ds["queries"][0]
    assert got["qrels400"] == ds400.num_rows["qrels"]


def test_publish_is_deterministic(aneel_task, tmp_path):
    a, b = publish(aneel_task, tmp_path / "a"), publish(aneel_task, tmp_path / "b")
    for f in sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file()):
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_publish_dict_of_frames_and_iv(aneel_task, tmp_path):
    frames = {s: aneel_task[s] for s in ("corpus", "queries", "qrels")}
    out = publish(frames, tmp_path / "p", config_name="my-config", card=None)
    back = pd.read_parquet(out / "qrels" / "my-config.parquet")
    assert len(back) == len(aneel_task.qrels)
    with pytest.raises(RagcovError, match=r"lacks split\(s\) \['qrels'\]"):
        publish({"corpus": aneel_task.corpus, "queries": aneel_task.queries}, tmp_path / "q")


def test_ir_datasets_matches_load_dataset(data_dir, hf_cache, aneel_ds):
    import ir_datasets

    ids = register_ir_datasets(data_dir, cache_dir=hf_cache)
    assert register_ir_datasets(data_dir, cache_dir=hf_cache) == ids  # twice is harmless
    assert {"ragcov/aneel-taesa/chunks-50", "ragcov/aneel-taesa/chunks-100", "ragcov/aneel-taesa/chunks-400",
            "ragcov/aneel-taesa", "ragcov/juristcu"} <= set(ids)
    ds = ir_datasets.load("ragcov/aneel-taesa/chunks-100")
    assert ds.has_docs() and ds.has_queries() and ds.has_qrels()
    assert (ds.docs_count(), ds.queries_count(), ds.qrels_count()) == (
        aneel_ds.num_rows["corpus"], aneel_ds.num_rows["queries"], aneel_ds.num_rows["qrels"])
    docs = list(ds.docs_iter())
    corpus = aneel_ds["corpus"]
    for i in (0, 9, len(docs) - 1):
        row = corpus[i]
        assert docs[i].doc_id == row["_id"] and docs[i].text == row["text"]
        assert docs[i].source_doc_id == row["doc_id"] and docs[i].chunk_index == row["chunk_index"]
        assert docs[i].doc_type == row["doc_type"] and docs[i].date == row["date"]
    queries = list(ds.queries_iter())
    assert [q.query_id for q in queries] == aneel_ds["queries"]["_id"]
    assert queries[5].chunk_id == aneel_ds["queries"][5]["chunk_id"] and queries[5].text == aneel_ds["queries"][5]["text"]
    from ir_datasets.formats import TrecQrel

    qrels = list(ds.qrels_iter())
    first = aneel_ds["qrels"][0]
    assert qrels[0] == TrecQrel(first["query-id"], first["corpus-id"], 1, "0")
    assert ds.docs_store().get(docs[3].doc_id) == docs[3]
    default = ir_datasets.load("ragcov/aneel-taesa")
    assert default.queries_count() == ds.queries_count()
