"""The ``ragcov`` CLI end to end on the shared JurisTCU files."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ragcov_data.baselines import BM25, save_run
from ragcov_data.eval import evaluate
from ragcov_data.loaders.juristcu import read_juristcu


def _ragcov(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_DATASETS_CACHE": str(cwd / "hf-cache")}
    return subprocess.run([sys.executable, "-m", "ragcov_data", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600)


@pytest.fixture(scope="module")
def bm25_run(juristcu_dir, tmp_path_factory):
    task = read_juristcu(juristcu_dir)[0]
    run = BM25().index(task["corpus"]).search(task["queries"], k=10, show_progress=False)
    path = tmp_path_factory.mktemp("runs") / "bm25.trec"
    save_run(run, path)
    return task, run, path


def test_eval_juristcu_by_group(bm25_run, data_dir, tmp_path):
    task, run, path = bm25_run
    out = tmp_path / "eval.json"
    res = _ragcov("eval", str(path), "--dataset", "juristcu", "--data-dir", str(data_dir), "--metric", "ndcg@10",
                  "--by", "group", "--methods", "t,cluster_bootstrap", "--n-resamples", "300", "--json", str(out),
                  cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "ndcg@10" in res.stdout and "G1" in res.stdout
    rep = json.loads(out.read_text())
    assert rep["metric"] == "ndcg@10" and rep["relevance_threshold"] == 1 and rep["n_queries"] == 150
    assert rep["cluster"] == "_id"  # JurisTCU queries are the unit
    est = rep["estimates"]
    rows = est if isinstance(est, list) else [dict(zip(est["columns"], r)) for r in est["data"]]
    groups = {r["group"] for r in rows}
    assert {"G1", "G2", "G3"} <= groups
    ref = evaluate(run, task, "ndcg@10", by="group", methods=("t",))
    want = ref.estimates.query("group == 'G1' and method == 't'")["estimate"].iloc[0]
    got = [r["estimate"] for r in rows if r["group"] == "G1" and r["method"] == "t"][0]
    assert got == pytest.approx(want, abs=1e-6)  # TREC file round trip keeps the ranking


def test_eval_juristcu_clustered_by_source_key(bm25_run, data_dir, tmp_path):
    _, _, path = bm25_run
    res = _ragcov("eval", str(path), "--dataset", "juristcu", "--data-dir", str(data_dir), "--metric", "p@10",
                  "--cluster", "source_key", "--methods", "cr2", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "cluster=source_key" in res.stdout and "K=100" in res.stdout


def test_eval_juristcu_bad_config_is_one_line_error(bm25_run, tmp_path):
    _, _, path = bm25_run
    res = _ragcov("eval", str(path), "--dataset", "juristcu", "--data-dir", str(tmp_path), "--metric", "ndcg@10",
                  cwd=tmp_path)
    assert res.returncode == 2
    assert "lacks ['doc.csv', 'query.csv', 'qrel.csv']" in res.stderr and "Traceback" not in res.stderr
