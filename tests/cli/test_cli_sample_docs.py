"""``--sample-docs K --seed S [--strata COL]`` on build and run; ``ragcov eval`` applies the correction itself."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from ragcov_data.baselines import load_run
from ragcov_data.cli import main
from ragcov_data.tasks.record import read_task


def _eval_json(tmp_path, name, *args):
    out = tmp_path / f"{name}.json"
    assert main(["eval", *args, "--methods", "cr2,t", "--json", str(out)]) == 0
    return json.loads(out.read_text())


def _se(doc, est, method):
    return next(e["se"] for e in doc["estimates"] if e["estimator"] == est and e["method"] == method)


def test_build_run_eval_of_a_sample(tmp_path, data_dir, capsys):
    task = tmp_path / "task"
    assert main(["build", "--data-dir", str(data_dir), "--sample-docs", "25", "--seed", "2", "--out", str(task)]) == 0
    assert "sample: 25 of 147 documents (seed 2)" in capsys.readouterr().out
    t = read_task(task)
    assert t.manifest["sample"]["k"] == 25 and t.queries["doc_id"].nunique() == 25 and len(t.corpus) == 2312
    run = tmp_path / "bm25.parquet"
    assert main(["run", "--retriever", "bm25", "--task", str(task), "--out", str(run), "--quiet"]) == 0
    assert load_run(run).attrs["sample"] == t.manifest["sample"]  # the sample travels in the run's metadata
    fpc = _eval_json(tmp_path, "fpc", str(run), "--task", str(task))
    nofpc = _eval_json(tmp_path, "nofpc", str(run), "--task", str(task), "--no-fpc")
    assert fpc["population_clusters"] == 147 and nofpc["population_clusters"] is None
    assert fpc["n_clusters"] == 25 and fpc["info"]["sample"]["fpc"] is True
    assert _se(fpc, "macro", "t") == pytest.approx(_se(nofpc, "macro", "t") * np.sqrt(1 - 25 / 147), rel=1e-12)
    assert _se(fpc, "micro", "cr2") == _se(nofpc, "micro", "cr2")  # micro: the correction under-covers, not applied
    # the same run scored against the whole data folder: its metadata names the sample
    whole = _eval_json(tmp_path, "whole", str(run), "--data-dir", str(data_dir))
    assert whole["estimates"] == fpc["estimates"]


def test_trec_run_of_a_sample_carries_its_spec_in_the_tag(tmp_path, data_dir, capsys):
    run = tmp_path / "tfidf.trec"
    assert main(["run", "--retriever", "tfidf", "--data-dir", str(data_dir), "--sample-docs", "25", "--seed", "2",
                 "--out", str(run), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "sample: 25 of 147 documents (seed 2)" in out
    tag = run.read_text().split("\n", 1)[0].split()[-1]
    # the task's fingerprint, then the sample spec
    assert re.match(r"tfidf\|rc:[0-9a-f]{12}@aneel_taesa/chunks-100;sample:k=25,seed=2,docs=", tag), tag
    task = tmp_path / "task"
    assert main(["build", "--data-dir", str(data_dir), "--sample-docs", "25", "--seed", "2", "--out", str(task)]) == 0
    on_data = _eval_json(tmp_path, "d", str(run), "--data-dir", str(data_dir))
    on_task = _eval_json(tmp_path, "t", str(run), "--task", str(task))
    assert on_data["estimates"] == on_task["estimates"] and on_data["population_clusters"] == 147
    # a sample of another seed is another task: refused, not mixed
    other = tmp_path / "other"
    assert main(["build", "--data-dir", str(data_dir), "--sample-docs", "25", "--seed", "5", "--out", str(other)]) == 0
    capsys.readouterr()
    assert main(["eval", str(run), "--task", str(other)]) == 2
    assert "the run was made on another document sample (k=25, seed=2) than the task's (k=25, seed=5)" in \
        capsys.readouterr().err


def test_stratified_sample_from_the_cli(tmp_path, data_dir, capsys):
    task = tmp_path / "task"
    assert main(["build", "--data-dir", str(data_dir), "--sample-docs", "40", "--seed", "0", "--strata", "doc_type",
                 "--out", str(task), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rec = read_task(task).manifest["sample"]
    assert rec["strata"] == "doc_type" and sum(rec["allocation"].values()) == 40
    assert summary["sample"] == {k: v for k, v in rec.items() if k != "documents"}
    per = read_task(task).corpus.drop_duplicates("doc_id")["doc_type"].value_counts().to_dict()
    assert summary["sample"]["population"]["per_stratum"] == per


def test_sample_of_a_census_task_folder(tmp_path, data_dir):
    full, part = tmp_path / "full", tmp_path / "part"
    assert main(["build", "--data-dir", str(data_dir), "--out", str(full)]) == 0
    assert main(["build", "--task", str(full), "--sample-docs", "10", "--seed", "4", "--out", str(part)]) == 0
    direct = tmp_path / "direct"
    assert main(["build", "--data-dir", str(data_dir), "--sample-docs", "10", "--seed", "4", "--out", str(direct)]) == 0
    assert read_task(part).queries.equals(read_task(direct).queries)


@pytest.mark.parametrize("args, message", [
    (["build", "--seed", "3"], "--seed describes the document sample; give --sample-docs K too"),
    (["build", "--strata", "doc_type"], "--strata describes the document sample; give --sample-docs K too"),
    (["build", "--dataset", "juristcu", "--sample-docs", "5"],
     "--sample-docs applies to the chunked self-retrieval task (aneel_taesa), not to --dataset juristcu"),
    (["run", "--retriever", "bm25", "--dataset", "juristcu", "--sample-docs", "5", "--out", "{tmp}/r.trec"],
     "--sample-docs does not apply to --dataset juristcu"),
    (["build", "--sample-docs", "1"], "`sample_docs` must be at least 2"),
    (["run", "--retriever", "bm25", "--engine", "local", "--workers", "2", "--out", "{tmp}/r.trec"],
     "`workers` applies to engine='ray' only"),
])
def test_bad_sample_options(tmp_path, data_dir, capsys, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert main([*args, "--data-dir", str(data_dir)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_no_fpc_conflicts_with_a_population_size(tmp_path, data_dir, capsys):
    run = tmp_path / "r.trec"
    assert main(["run", "--retriever", "bm25", "--data-dir", str(data_dir), "--sample-docs", "10",
                 "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["eval", str(run), "--data-dir", str(data_dir), "--no-fpc", "--population-size", "500"]) == 2
    assert "--no-fpc turns the finite-population correction off, but --population-size" in capsys.readouterr().err
