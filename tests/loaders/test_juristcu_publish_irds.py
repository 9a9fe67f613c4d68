"""JurisTCU through the generic bridges: ``publish`` (plain ``datasets`` offline) and ``ir_datasets``."""
from __future__ import annotations

import collections

import datasets
import pytest

import ragcov_data


@pytest.fixture(scope="module")
def juristcu_ds(data_dir, tmp_path_factory):
    cache = tmp_path_factory.mktemp("hf-juristcu")
    return ragcov_data.load_dataset("juristcu", data_dir=data_dir, cache_dir=cache, show_progress=False), cache


def test_ir_datasets_juristcu_graded(juristcu_ds, data_dir):
    import ir_datasets

    ds, cache = juristcu_ds
    ragcov_data.register_ir_datasets(data_dir, cache_dir=cache)
    irds = ir_datasets.load("ragcov/juristcu")
    assert (irds.docs_count(), irds.queries_count(), irds.qrels_count()) == (3022, 150, 2250)
    grades = collections.Counter(q.relevance for q in irds.qrels_iter())
    assert grades == {0: 430, 1: 528, 2: 513, 3: 779}
    queries = {q.query_id: q for q in irds.queries_iter()}
    assert queries["51"].group == "G2" and queries["101"].group == "G3"
    assert queries["51"].source_key == queries["101"].source_key
    assert {d.doc_id for d in irds.docs_iter()} == set(ds["corpus"]["_id"])


def test_publish_juristcu_loads_with_plain_datasets(juristcu_ds, tmp_path, monkeypatch):
    ds, _ = juristcu_ds
    out = ragcov_data.publish(ds, tmp_path / "juristcu")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    queries = datasets.load_dataset(str(out), "queries", cache_dir=str(tmp_path / "c"))
    split = next(iter(queries.values()))
    assert split.num_rows == 150
    assert collections.Counter(split["group"]) == {"G1": 50, "G2": 50, "G3": 50}
    qrels = next(iter(datasets.load_dataset(str(out), "qrels", cache_dir=str(tmp_path / "c")).values()))
    assert sorted(collections.Counter(qrels["score"]).items()) == [(0, 430), (1, 528), (2, 513), (3, 779)]
