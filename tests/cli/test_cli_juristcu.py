"""The ``ragcov`` CLI end to end on the shared JurisTCU files."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

from ragcov_data.baselines import BM25, TfIdf, save_run
from ragcov_data.eval import compare, evaluate
from ragcov_data.reporting.juristcu import juristcu_section
from ragcov_data.loaders.juristcu import read_juristcu


def _ragcov(*args: str, cwd) -> subprocess.CompletedProcess:
    """The CLI as a user starts it: a new process, offline, its own datasets cache (the end-to-end test)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_DATASETS_CACHE": str(cwd / "hf-cache")}
    return subprocess.run([sys.executable, "-m", "ragcov_data", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600)


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(capsys):
    """The CLI's entry point in process (the verbs' output and exit code; the subprocess start-up is tested once,
    end to end, below)."""
    from ragcov_data.cli import main

    def run(*args: str) -> Ran:
        capsys.readouterr()
        code = main(list(args))
        out = capsys.readouterr()
        return Ran(code, out.out, out.err)

    return run


@pytest.fixture(scope="module")
def bm25_run(juristcu_dir, tmp_path_factory):
    task = read_juristcu(juristcu_dir)[0]
    run = BM25().index(task["corpus"]).search(task["queries"], k=10, show_progress=False)
    path = tmp_path_factory.mktemp("runs") / "bm25.trec"
    save_run(run, path)
    return task, run, path


def test_eval_juristcu_by_group(bm25_run, data_dir, tmp_path, cli):
    task, run, path = bm25_run
    out = tmp_path / "eval.json"
    res = cli("eval", str(path), "--dataset", "juristcu", "--data-dir", str(data_dir), "--metric", "ndcg@10",
                  "--by", "group", "--methods", "t,cluster_bootstrap", "--n-resamples", "300", "--json", str(out))
    assert res.returncode == 0, res.stderr
    assert "ndcg@10" in res.stdout and "G1" in res.stdout
    rep = json.loads(out.read_text())
    assert rep["metric"] == "ndcg@10" and rep["relevance_threshold"] == 1 and rep["n_queries"] == 150
    assert rep["cluster"] == "source_key"  # overall: G2 i and G3 i+50 share a source; per group one query a source
    est = rep["estimates"]
    rows = est if isinstance(est, list) else [dict(zip(est["columns"], r)) for r in est["data"]]
    groups = {r["group"] for r in rows}
    assert {"G1", "G2", "G3"} <= groups
    ref = evaluate(run, task, "ndcg@10", by="group", methods=("t",))
    want = ref.estimates.query("group == 'G1' and method == 't'")["estimate"].iloc[0]
    got = [r["estimate"] for r in rows if r["group"] == "G1" and r["method"] == "t"][0]
    assert got == pytest.approx(want, abs=1e-6)  # TREC file round trip keeps the ranking


def test_eval_juristcu_clustered_by_source_key(bm25_run, data_dir, tmp_path, cli):
    _, _, path = bm25_run
    res = cli("eval", str(path), "--dataset", "juristcu", "--data-dir", str(data_dir), "--metric", "p@10",
                  "--cluster", "source_key", "--methods", "cr2")
    assert res.returncode == 0, res.stderr
    assert "cluster=source_key" in res.stdout and "K=100" in res.stdout


def test_eval_juristcu_bad_config_is_one_line_error(bm25_run, tmp_path, cli):
    _, _, path = bm25_run
    res = cli("eval", str(path), "--dataset", "juristcu", "--data-dir", str(tmp_path), "--metric", "ndcg@10")
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


FORBIDDEN = ("per-document", "share_never_hit", "documents with identical rate")


def _clean_text(out: str) -> None:
    """JurisTCU output: no nan, no words of the document unit."""
    assert re.search(r"\bnan\b", out, flags=re.IGNORECASE) is None, out
    for word in FORBIDDEN:
        assert word not in out, (word, out)


@pytest.fixture(scope="module")
def tfidf_path(bm25_run, tmp_path_factory):
    task = bm25_run[0]
    run = TfIdf().index(task["corpus"]).search(task["queries"], k=10, show_progress=False)
    path = tmp_path_factory.mktemp("runs") / "tfidf.trec"
    save_run(run, path)
    return run, path


def test_cli_api_and_section_agree_on_the_overall_interval(bm25_run, data_dir, tmp_path, cli):
    """`ragcov eval --dataset juristcu`, `evaluate` and `juristcu_section` give one overall interval."""
    task, run, path = bm25_run
    out = tmp_path / "eval.json"
    res = cli("eval", str(path), "--dataset", "juristcu", "--data-dir", str(data_dir), "--metric", "ndcg@10",
                  "--by", "group", "--n-resamples", "400", "--json", str(out))
    assert res.returncode == 0, res.stderr
    rep = json.loads(out.read_text())
    cli = [r for r in rep["estimates"] if r["group"] == "__all__" and r["estimator"] == "micro" and r["method"] == "cr2"][0]
    api = evaluate(run, task, "ndcg@10", by="group", n_resamples=400).interval("micro", "cr2")
    sec = juristcu_section(task, {"bm25": run}, ("ndcg@10",), n_resamples=400)["estimates"]
    sec = sec[(sec["group"] == "overall") & (sec["method"] == "cr2")].iloc[0]
    assert (cli["low"], cli["high"]) == pytest.approx(tuple(api), abs=1e-6)
    assert (sec["low"], sec["high"]) == pytest.approx(tuple(api), abs=1e-12)
    assert rep["cluster"] == "source_key" and rep["unit"] == "source" and rep["n_clusters"] == sec["n_clusters"] == 100
    # per group one query a cluster: the single estimator mean, whose t interval is the section's
    g1 = [r for r in rep["estimates"] if r["group"] == "G1" and r["method"] == "t"]
    sg1 = juristcu_section(task, {"bm25": run}, ("ndcg@10",), n_resamples=400)["estimates"]
    sg1 = sg1[(sg1["group"] == "G1") & (sg1["method"] == "t")].iloc[0]
    assert [r["estimator"] for r in g1] == ["mean"] and g1[0]["low"] == pytest.approx(sg1["low"], abs=1e-6)
    assert len(rep["per_query"]) == 150 and set(rep["per_query"][0]) == {"query-id", "cluster", "value", "group"}


def test_eval_juristcu_output_fits_the_design(bm25_run, data_dir, tmp_path, cli):
    _, _, path = bm25_run
    res = cli("eval", str(path), "--dataset", "juristcu", "--data-dir", str(data_dir), "--metric", "ndcg@10",
                  "--by", "group", "--n-resamples", "200")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    _clean_text(out)
    rows = [ln.split()[:3] for ln in out.splitlines() if ln.split()[:1] in (["__all__"], ["G1"], ["G2"], ["G3"])]
    # the printed micro row is the narrowest method verified at this design (cr2 or a narrower verified one)
    assert rows[0][:2] == ["__all__", "micro"] and rows[0][2] in ("cr2", "cr1", "wild_cluster", "bootstrap_t")
    assert rows[1][:2] == ["__all__", "macro"] and rows[1][2] in ("t", "wild_cluster", "cluster_bootstrap")
    assert [r[:2] for r in rows[2:]] == [["G1", "mean"], ["G2", "mean"], ["G3", "mean"]]  # one query a cluster
    assert all(r[2] in ("t", "wild_cluster", "cluster_bootstrap", "bootstrap_t") for r in rows[2:])
    assert "unit: source (100 sources, 150 queries); groups G1, G2, G3: one query a cluster" in out
    every = cli("eval", str(path), "--dataset", "juristcu", "--data-dir", str(data_dir), "--metric", "ndcg@10",
                    "--by", "group", "--n-resamples", "200", "--methods", "all")
    assert every.returncode == 0, every.stderr
    _clean_text(every.stdout)
    g1 = [ln.split()[2] for ln in every.stdout.splitlines() if ln.split()[:1] == ["G1"]]
    assert g1 == ["cluster_bootstrap", "bootstrap_t", "t", "wild_cluster"]  # no naive, no deff_wald, t once (= cr1 = cr2)


def test_compare_juristcu_output_fits_the_design(bm25_run, tfidf_path, data_dir, tmp_path, cli):
    task, bm25, path_a = bm25_run
    tfidf, path_b = tfidf_path
    out_json = tmp_path / "cmp.json"
    res = cli("compare", str(path_a), str(path_b), "--dataset", "juristcu", "--data-dir", str(data_dir),
                  "--metric", "ndcg@10", "--by", "group", "--n-resamples", "200", "--json", str(out_json))
    assert res.returncode == 0, res.stderr
    _clean_text(res.stdout)
    assert "sources with identical mean:" in res.stdout
    rows = [ln for ln in res.stdout.splitlines() if ln.split()[:1] in (["__all__"], ["G1"], ["G2"], ["G3"])]
    assert len(rows) == 5  # was 48: every method twice (micro and macro) for every group
    js = json.loads(out_json.read_text())
    assert js["cluster"] == "source_key" and js["n_clusters"] == 100
    api = compare(bm25, tfidf, task, "ndcg@10", by="group", n_resamples=200)
    cli = [r for r in js["estimates"] if r["group"] == "__all__" and r["estimator"] == "micro" and r["method"] == "cr2"][0]
    assert (cli["low"], cli["high"]) == pytest.approx(tuple(api.interval("micro", "cr2")), abs=1e-6)


def test_population_size_is_checked_against_the_default_unit_source_key(bm25_run, data_dir, tmp_path, capsys):
    """The CLI's check of --population-size uses the evaluator's default unit (source_key: 100 sources for 150
    queries), not the query: 120 sources is a valid population, 99 is not."""
    from ragcov_data.cli import main

    _, _, path = bm25_run
    base = ["eval", str(path), "--dataset", "juristcu", "--data-dir", str(data_dir), "--metric", "ndcg@10",
            "--methods", "t", "--n-resamples", "300"]
    assert main([*base, "--population-size", "120"]) == 0
    capsys.readouterr()
    assert main([*base, "--population-size", "99"]) == 2
    assert "smaller than the 100 units (source_key)" in capsys.readouterr().err
