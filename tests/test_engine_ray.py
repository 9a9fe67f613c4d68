"""The Ray engine: the same run as one process (bm25, tfidf exactly; dense to 1e-6), on a local cluster.

One local Ray cluster (2 CPUs, loopback only, no dashboard) serves the whole session; the tests of binding
and reaching a cluster run ``ragcov`` in child processes (one more short-lived local cluster). CI installs
the ``[ray]`` extra, so these tests run there; nothing here skips on Linux.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from ragcov_data.execution import engine
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


def _assert_ray_run_equals_local(remote: pd.DataFrame, local: pd.DataFrame, stats: dict, n_queries: int,
                                 workers: int) -> None:
    """The Ray run is the local one (rows, ranks and scores bit for bit; the retriever's attrs), stamped with the
    engine, searched in ``workers`` even shards that each report a speed."""
    pd.testing.assert_frame_equal(remote, local, check_exact=True)  # same rows, ranks and scores, bit for bit
    assert remote.attrs["retriever"] == local.attrs["retriever"] and remote.attrs["params"] == local.attrs["params"]
    assert remote.attrs["engine"] == "ray" and remote.attrs["workers"] == workers
    assert stats["engine"] == "ray" and stats["workers"] == workers
    assert [s["queries"] for s in stats["shards"]] == [n_queries // workers] * workers
    assert all(s["queries_per_s"] > 0 for s in stats["shards"])


# workers=2 for each retriever is test_run_task_on_ray_equals_run_task_here[BM25|TfIdf]: the same engine.search
# call (run_task indexes here, then searches the task's queries with exclude_self on 2 workers), with every check
# below and the fingerprint besides.
@pytest.mark.parametrize("klass", [BM25, TfIdf])
@pytest.mark.parametrize("workers", [1])
def test_lexical_ray_run_equals_local(ray_cluster, task, klass, workers):
    r = klass(show_progress=False).index(task.corpus)
    local = r.search(task.queries, k=10, exclude_self=True)
    stats: dict = {}
    remote = engine.search(r, task.queries, k=10, exclude_self=True, engine="ray", workers=workers, stats=stats)
    _assert_ray_run_equals_local(remote, local, stats, len(task.queries), workers)


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


# --------------------------------------------------------------------------- binding, reaching, sizing

_LISTENERS = r'''
import json, os, sys
import ray  # imported first, as `ragcov run` does: Ray reads its single-node switch at import
from ragcov_data.execution import engine

engine.ensure_ray(workers=1)


def tree(pid):
    out = {pid}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            children = open(f"/proc/{pid}/task/{task}/children").read().split()
        except OSError:
            continue
        for c in children:
            out |= tree(int(c))
    return out


inodes = set()
for pid in tree(os.getpid()):
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])


def address(hexaddr):
    host, port = hexaddr.split(":")
    raw = bytes.fromhex(host)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))  # each 32-bit word little-endian
    if len(words) == 4:
        return ".".join(map(str, words)), int(port, 16)
    if words[:12] == bytes(10) + b"\xff\xff":
        return "::ffff:" + ".".join(map(str, words[12:])), int(port, 16)
    return ":".join(words[i:i + 2].hex() for i in range(0, 16, 2)), int(port, 16)


found = []
for table, listening in (("tcp", "0A"), ("tcp6", "0A"), ("udp", "07"), ("udp6", "07")):
    for row in open(f"/proc/net/{table}").read().splitlines()[1:]:
        cols = row.split()
        if cols[3] == listening and cols[9] in inodes:
            found.append([table, *address(cols[1])])
print(json.dumps({"gcs": ray.get_runtime_context().gcs_address, "listeners": found}))
engine.shutdown()
'''


@pytest.mark.skipif(not os.path.isdir("/proc/net"), reason="reads the listening sockets from Linux's /proc")
def test_local_cluster_listens_on_the_loopback_interface_only(tmp_path):
    import json
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    res = subprocess.run([sys.executable, "-c", _LISTENERS], capture_output=True, text=True, timeout=300, env=env,
                         cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["gcs"].startswith("127.0.0.1:")
    hosts = {host for _, host, _ in got["listeners"]}
    assert len(got["listeners"]) >= 3, got  # GCS, raylet, runtime-env agent at least: the reader sees them
    assert hosts <= {"127.0.0.1", "::ffff:127.0.0.1"}, got["listeners"]


def _cli(tmp_path, *args, timeout=120):
    import subprocess
    import time

    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "ragcov_data", "run", "--retriever", "bm25", "--data-dir",
                          str(tmp_path), "--engine", "ray", *args, "--out", str(tmp_path / "r.trec")],
                         capture_output=True, text=True, timeout=timeout, cwd=tmp_path)
    return res, time.monotonic() - t0


def test_an_unreachable_address_fails_at_once_with_one_line(tmp_path):
    res, seconds = _cli(tmp_path, "--address", "127.0.0.1:1")
    assert res.returncode == 2 and seconds < 30, (seconds, res.stderr)
    assert res.stderr.strip() == ("ragcov run: error: could not reach a Ray cluster at 127.0.0.1:1 within 30 s; "
                                  "start one with `ray start --head` or omit --address")
    assert not (tmp_path / "r.trec").exists()


def test_an_address_that_never_answers_as_ray_times_out(tmp_path):
    import socket

    with socket.socket() as silent:  # accepts connections, never speaks Ray's protocol
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        res, seconds = _cli(tmp_path, "--address", f"127.0.0.1:{port}", "--connect-timeout", "3")
    assert res.returncode == 2 and seconds < 25, (seconds, res.stderr)
    assert "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1] == (
        f"ragcov run: error: could not reach a Ray cluster at 127.0.0.1:{port} within 3 s; start one with "
        "`ray start --head` or omit --address")


@pytest.mark.parametrize("value, message", [
    (0, "`connect_timeout` must be a positive number of seconds; got 0"),
    ("x", "`connect_timeout` must be a positive number of seconds; got 'x'"),
])
def test_connect_timeout_is_checked(value, message):
    with pytest.raises(RagcovError, match=message):
        engine.connect_timeout_s(value)


def test_connect_timeout_default_and_environment(monkeypatch):
    monkeypatch.delenv("RAGCOV_RAY_CONNECT_TIMEOUT", raising=False)
    assert engine.connect_timeout_s() == engine.CONNECT_TIMEOUT_S == 30
    monkeypatch.setenv("RAGCOV_RAY_CONNECT_TIMEOUT", "7.5")
    assert engine.connect_timeout_s() == 7.5
    monkeypatch.setenv("RAGCOV_RAY_CONNECT_TIMEOUT", "soon")
    with pytest.raises(RagcovError, match=r"\$RAGCOV_RAY_CONNECT_TIMEOUT must be a number of seconds; got 'soon'"):
        engine.connect_timeout_s()


def test_workers_beyond_the_cores_warn_once(monkeypatch, capsys):
    import argparse

    from ragcov_data.cli.run import engine_kwargs

    monkeypatch.setattr(engine.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(engine, "_WARNED", set())
    args = argparse.Namespace(engine="ray", workers=100, address=None, connect_timeout=None, verb="run")
    assert engine_kwargs(args)["workers"] == 100
    assert capsys.readouterr().err.strip() == (
        "ragcov run: warning: --workers 100 exceeds the 2 cores here: expect it to run slower (the shards wait for "
        "CPUs, and every worker process costs start-up time and memory)")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second warning would raise here
        assert engine.check_workers(100) is not None  # the same setting: said once per process
        assert engine.check_workers(2) is None  # within the cores: nothing to say
    engine_kwargs(args)
    assert capsys.readouterr().err == ""
    with pytest.warns(RuntimeWarning, match="--workers 3 exceeds the 1 cores in the cluster"):
        engine.check_workers(3, 1, "in the cluster")


@pytest.mark.parametrize("klass", [BM25, TfIdf])
def test_run_task_on_ray_equals_run_task_here(ray_cluster, task, klass):
    """The one entry point gives the same run on Ray as here, fingerprint included (and, on 2 workers, every
    check of test_lexical_ray_run_equals_local)."""
    local = engine.run_task(klass(show_progress=False), task, k=10)
    stats: dict = {}
    remote = engine.run_task(klass(show_progress=False), task, k=10, engine="ray", workers=2, stats=stats)
    _assert_ray_run_equals_local(remote, local, stats, len(task.queries), 2)
    assert remote.attrs["task_fingerprint"] == local.attrs["task_fingerprint"]


def test_the_benchmark_runs_on_ray_through_the_same_entry_point(ray_cluster, task):
    """``ragcov benchmark --engine ray`` makes each run with engine.run_task: the run equals the local one."""
    from ragcov_data.jobs import benchmark as pipeline

    local = pipeline._run("bm25", task, False, None, exclude_self=True)
    remote = pipeline._run("bm25", task, False, {"engine": "ray", "workers": 2, "address": None}, exclude_self=True)
    pd.testing.assert_frame_equal(remote, local, check_exact=True)
    assert remote.attrs["engine"] == "ray" and "engine" not in local.attrs
