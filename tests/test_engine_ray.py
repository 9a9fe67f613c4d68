"""The Ray engine: the same run as one process (bm25, tfidf exactly; dense to 1e-6), on a local cluster.

One local Ray cluster (2 CPUs, loopback only, no dashboard) serves the whole session. CI installs the
``[ray]`` extra, so these tests run there; nothing here skips.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pandas as pd
import pytest

from ragcov_data import engine
from ragcov_data.baselines import BM25, Dense, TfIdf
from ragcov_data.errors import RagcovError


@pytest.fixture(scope="session")
def ray_cluster():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # every Ray address on 127.0.0.1
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    assert ray.get_runtime_context().gcs_address.startswith("127.0.0.1:")
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def task(aneel_fulltext):
    import ragcov_data

    return ragcov_data.build_task(aneel_fulltext, chunk_words=100)


@pytest.mark.parametrize("klass", [BM25, TfIdf])
@pytest.mark.parametrize("workers", [1, 2])
def test_lexical_ray_run_equals_local(ray_cluster, task, klass, workers):
    r = klass(show_progress=False).index(task.corpus)
    local = r.search(task.queries, k=10, exclude_self=True)
    stats: dict = {}
    remote = engine.search(r, task.queries, k=10, exclude_self=True, engine="ray", workers=workers, stats=stats)
    pd.testing.assert_frame_equal(remote, local, check_exact=True)  # same rows, ranks and scores, bit for bit
    assert remote.attrs["retriever"] == local.attrs["retriever"] and remote.attrs["params"] == local.attrs["params"]
    assert remote.attrs["engine"] == "ray" and remote.attrs["workers"] == workers
    assert [s["queries"] for s in stats["shards"]] == [len(task.queries) // workers] * workers
    assert all(s["queries_per_s"] > 0 for s in stats["shards"])


def test_shards_are_contiguous_and_cover_every_query():
    for n, w in [(10, 3), (2312, 2), (3, 8), (1, 1)]:
        shards = engine._shards(n, w)
        assert shards[0][0] == 0 and shards[-1][1] == n
        assert all(a < b for a, b in shards) and all(b == c for (_, b), (c, _) in zip(shards, shards[1:]))
        assert len(shards) == min(n, w) and max(b - a for a, b in shards) - min(b - a for a, b in shards) <= 1


def test_dense_ray_matches_local_and_fills_the_cache(ray_cluster, task, tmp_path):
    docs = task.corpus["doc_id"].drop_duplicates().iloc[:4]
    corpus = task.corpus[task.corpus["doc_id"].isin(docs)].reset_index(drop=True)
    queries = task.queries[task.queries["doc_id"].isin(docs)].reset_index(drop=True)
    local = Dense("use-multilingual", cache_dir=tmp_path / "local", show_progress=False).index(corpus)
    run_local = local.search(queries, k=5, exclude_self=True)

    dense = Dense("use-multilingual", cache_dir=tmp_path / "ray", show_progress=False)
    engine.index(dense, corpus, engine="ray", workers=2)
    assert dense.map_batches is None  # the hook is set only while the engine runs
    np.testing.assert_allclose(dense.corpus_embeddings, local.corpus_embeddings, atol=1e-6)
    run_ray = engine.search(dense, queries, k=5, exclude_self=True, engine="ray", workers=2)
    assert run_ray[["query-id", "corpus-id", "rank"]].equals(run_local[["query-id", "corpus-id", "rank"]])
    np.testing.assert_allclose(run_ray["score"], run_local["score"], atol=1e-6, rtol=0)
    # every vector the workers computed is in this process's cache: a local run now encodes nothing
    again = Dense("use-multilingual", cache_dir=tmp_path / "ray", show_progress=False)

    def no_encoding(*_a, **_k):
        raise AssertionError("encoded a text the Ray run should have cached")

    again.encoder.encode_passages = again.encoder.encode_queries = no_encoding
    pd.testing.assert_frame_equal(again.index(corpus).search(queries, k=5, exclude_self=True)[["query-id", "corpus-id"]],
                                  run_local[["query-id", "corpus-id"]])


def test_worker_error_is_the_one_line_error(ray_cluster, task):
    r = BM25(show_progress=False).index(task.corpus.iloc[:50])
    with pytest.raises(RagcovError, match=r"query `chunk_id` value\(s\) are not in the indexed corpus"):
        engine.search(r, task.queries.iloc[60:80], k=5, exclude_self=True, engine="ray", workers=2)


def test_cli_run_engine_ray_writes_the_local_run(ray_cluster, tmp_path, data_dir, capsys):
    from ragcov_data.baselines import load_run
    from ragcov_data.cli import main

    args = ["run", "--retriever", "bm25", "--data-dir", str(data_dir), "--chunk-words", "400",
            "--cache-dir", str(tmp_path / "c"), "--quiet"]
    assert main([*args, "--out", str(tmp_path / "local.parquet")]) == 0
    assert main([*args, "--engine", "ray", "--workers", "2", "--out", str(tmp_path / "ray.parquet")]) == 0
    assert "[ray, 2 workers]" in capsys.readouterr().out
    pd.testing.assert_frame_equal(load_run(tmp_path / "ray.parquet"), load_run(tmp_path / "local.parquet"),
                                  check_exact=True)
    assert ray_cluster.is_initialized()  # the CLI stops only a cluster it started


def test_engine_options_are_checked(task):
    r = BM25(show_progress=False).index(task.corpus.iloc[:30])
    with pytest.raises(RagcovError, match=r"`engine` must be one of \('local', 'ray'\); got 'spark'"):
        engine.search(r, task.queries.iloc[:3], engine="spark")
    with pytest.raises(RagcovError, match="`workers` applies to engine='ray' only"):
        engine.search(r, task.queries.iloc[:3], workers=2)
    with pytest.raises(RagcovError, match="`workers` must be a positive integer; got 0"):
        engine.search(r, task.queries.iloc[:3], engine="ray", workers=0)


def test_without_ray_one_line_error_names_the_extra(monkeypatch, tmp_path, data_dir, capsys):
    from ragcov_data.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if it were not installed
    with pytest.raises(RagcovError, match=r"needs Ray, which is not installed: pip install 'ragcov-data\[ray\]'"):
        engine.import_ray()
    rc = main(["run", "--retriever", "bm25", "--data-dir", str(data_dir), "--engine", "ray",
               "--out", str(tmp_path / "r.trec")])
    err = capsys.readouterr().err
    assert rc == 2 and "pip install 'ragcov-data[ray]'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.trec").exists()
