"""``ragcov_data.load_dataset("aneel_taesa", ...)``: configs, sources, caching, agreement with build_task."""
from __future__ import annotations

import json

import pytest
from datasets import DatasetDict

import ragcov_data
from ragcov_data import RagcovError, Task, load_dataset
from ragcov_data.tasks.record import manifest_of


def test_default_config_matches_build_task(aneel_ds, aneel_task, tmp_path):
    assert isinstance(aneel_ds, DatasetDict)
    assert set(aneel_ds) == {"corpus", "queries", "qrels"}
    assert aneel_ds["corpus"].info.config_name == "chunks-100"
    assert aneel_ds["corpus"].features["chunk_index"].dtype == "int64"
    assert aneel_ds["qrels"].features["score"].dtype == "int64"
    assert list(aneel_ds["queries"].features) == list(aneel_task.queries.columns)
    # same bytes whichever way the task is built
    a = Task.from_dataset_dict(aneel_ds).to_parquet(tmp_path / "hf")
    b = aneel_task.to_parquet(tmp_path / "direct")
    for key in ("corpus", "queries", "qrels", "manifest"):
        assert a[key].read_bytes() == b[key].read_bytes(), key
    assert manifest_of(aneel_ds) == aneel_task.manifest


@pytest.mark.parametrize("config_name, expected", [("chunks-400", 567), ("chunks-50", 4555)])
def test_named_configs(data_dir, hf_cache, aneel_records, config_name, expected):
    ds = load_dataset("aneel_taesa", config_name, data_dir=data_dir, cache_dir=hf_cache, show_progress=False)
    cw = int(config_name.split("-")[1])
    assert ds["corpus"].info.config_name == config_name
    assert ds.num_rows["corpus"] == ds.num_rows["queries"] == expected
    assert max(len(t.split()) for t in ds["corpus"]["text"]) <= cw + 19
    assert all(len(t.split()) == 20 for t in ds["queries"]["text"])


def test_any_chunk_size_through_kwargs(aneel_fulltext, hf_cache):
    ds = load_dataset("aneel_taesa", data_files=aneel_fulltext, chunk_words=75, cache_dir=hf_cache,
                      show_progress=False)
    assert ds["corpus"].info.config_name == "chunks-75"
    assert manifest_of(ds)["config"] == {"name": "chunks-75", "chunk_words": 75, "query_words": 20}
    ds = load_dataset("aneel_taesa", data_files=aneel_fulltext, chunk_words=200, query_words=40,
                      cache_dir=hf_cache, show_progress=False)
    assert ds["corpus"].info.config_name == "chunks-200-q40"
    assert all(len(t.split()) == 40 for t in ds["queries"]["text"])


def test_data_dir_from_environment(data_dir, hf_cache, monkeypatch, aneel_ds):
    monkeypatch.setenv("RAGCOV_DATA_DIR", str(data_dir))
    ds = load_dataset("aneel_taesa", cache_dir=hf_cache, show_progress=False)
    assert ds["corpus"]["_id"] == aneel_ds["corpus"]["_id"]


def test_changed_source_rebuilds(tmp_path, write_jsonl, words):
    src = write_jsonl(tmp_path / "a.jsonl", [{"doc_id": "d1", "text": words(250)}])
    cache = tmp_path / "cache"
    first = load_dataset("aneel_taesa", data_files=src, cache_dir=cache, show_progress=False)
    assert first.num_rows["corpus"] == 3
    write_jsonl(src, [{"doc_id": "d1", "text": words(450)}])
    second = load_dataset("aneel_taesa", data_files=src, cache_dir=cache, show_progress=False)
    assert second.num_rows["corpus"] == 5
    assert manifest_of(first)["sources"][0]["sha256"] != manifest_of(second)["sources"][0]["sha256"]


def test_several_files_in_order(tmp_path, write_jsonl, words):
    a = write_jsonl(tmp_path / "a.jsonl", [{"doc_id": "b", "text": words(300), "kind": "x"}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"doc_id": "a", "text": words(300), "other": 1}])
    ds = load_dataset("aneel_taesa", data_files=[a, b], cache_dir=tmp_path / "c", show_progress=False)
    corpus = ds["corpus"].to_pandas()
    assert list(corpus["doc_id"].unique()) == ["b", "a"]
    assert corpus.loc[corpus["doc_id"] == "b", "kind"].eq("x").all()
    assert corpus.loc[corpus["doc_id"] == "a", "kind"].isna().all()
    assert corpus.loc[corpus["doc_id"] == "a", "other"].eq("1").all()


def test_load_dataset_iv(data_dir, tmp_path):
    with pytest.raises(RagcovError, match=r"unknown dataset 'aneel'.*Did you mean 'aneel_taesa'"):
        load_dataset("aneel", data_dir=data_dir)
    with pytest.raises(RagcovError, match=r"`chunk_word` is not a config field of 'aneel_taesa'.*'chunk_words'"):
        load_dataset("aneel_taesa", data_dir=data_dir, chunk_word=10, cache_dir=tmp_path)
    with pytest.raises(RagcovError, match=r"`chunk_words` \(10\) must be >= `query_words` \(20\)"):
        load_dataset("aneel_taesa", data_dir=data_dir, chunk_words=10, cache_dir=tmp_path)
    with pytest.raises(RagcovError, match="has no aneel/aneel_fulltext.jsonl"):
        load_dataset("aneel_taesa", data_dir=tmp_path, cache_dir=tmp_path)
    with pytest.raises(RagcovError, match=r"`chunk_words` \(7\) must be >= `query_words` \(20\)"):
        load_dataset("aneel_taesa", "chunks-7", data_dir=data_dir, cache_dir=tmp_path)  # any chunks-N names a size
    with pytest.raises(RagcovError, match=r"BuilderConfig 'chunk-400' not found"):
        load_dataset("aneel_taesa", "chunk-400", data_dir=data_dir, cache_dir=tmp_path)


def test_no_data_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("RAGCOV_DATA_DIR", raising=False)
    with pytest.raises(RagcovError, match=r"no data folder given: pass `data_dir=`"):
        load_dataset("aneel_taesa", cache_dir=tmp_path)


def test_import_is_cheap():
    import subprocess
    import sys

    code = ("import sys, ragcov_data; ragcov_data.load_dataset; ragcov_data.Task;"
            "print(json.dumps([m in sys.modules for m in ('torch', 'datasets', 'ir_datasets')]))")
    out = subprocess.run([sys.executable, "-c", "import json;" + code], capture_output=True, text=True, check=True)
    torch_loaded, datasets_loaded, irds_loaded = json.loads(out.stdout)
    assert not torch_loaded and not irds_loaded
    assert ragcov_data.__all__ and "load_dataset" in dir(ragcov_data)
