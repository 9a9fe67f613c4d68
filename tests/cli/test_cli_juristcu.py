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


def test_build_run_eval_end_to_end(bm25_run, data_dir, tmp_path):
    """build -> run -> eval through the CLI alone; the CLI's run equals the library's run."""
    _, lib_run, _ = bm25_run
    built = _ragcov("build", "--dataset", "juristcu", "--data-dir", str(data_dir), "--json", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    summary = json.loads(built.stdout)
    assert summary["rows"] == {"corpus": 3022, "queries": 150, "qrels": 2250}
    assert summary["counts"]["grades"] == {"0": 430, "1": 528, "2": 513, "3": 779}
    assert "3,022-document subset" in summary["note"]

    run_path = tmp_path / "bm25.parquet"
    ran = _ragcov("run", "--dataset", "juristcu", "--data-dir", str(data_dir), "--retriever", "bm25",
                  "--k", "10", "--quiet", "--out", str(run_path), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    from ragcov_data.baselines import load_run

    cli_run = load_run(run_path)
    assert cli_run[["query-id", "corpus-id", "rank"]].reset_index(drop=True).equals(
        lib_run[["query-id", "corpus-id", "rank"]].reset_index(drop=True))

    out = tmp_path / "eval.json"
    ev = _ragcov("eval", str(run_path), "--dataset", "juristcu", "--data-dir", str(data_dir), "--metric",
                 "ndcg@10", "--by", "group", "--methods", "t", "--json", str(out), cwd=tmp_path)
    assert ev.returncode == 0, ev.stderr
    assert json.loads(out.read_text())["n_queries"] == 150
