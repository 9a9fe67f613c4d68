"""``ragcov run``: a baseline on a task -> a run file."""
from __future__ import annotations

import pytest

from ragcov_data.baselines import load_run
from ragcov_data.cli import main


@pytest.mark.parametrize("retriever, suffix", [("bm25", ".parquet"), ("tfidf", ".trec")])
def test_run_self_retrieval(tmp_path, data_dir, retriever, suffix, capsys):
    out = tmp_path / f"run{suffix}"
    rc = main(["run", "--retriever", retriever, "--data-dir", str(data_dir), "--chunk-words", "400",
               "--k", "5", "--cache-dir", str(tmp_path / "cache"), "--out", str(out), "--quiet"])
    assert rc == 0
    assert f"-> {out}" in capsys.readouterr().out
    run = load_run(out)
    assert run.groupby("query-id")["rank"].min().eq(1).all()
    assert not (run["query-id"] == run["corpus-id"]).any()  # exclude_self: own chunk never returned
    assert (run.groupby("query-id").size() >= 1).all() and run["score"].gt(0).all()
    if suffix == ".parquet":
        assert run.attrs["retriever"] == retriever and run.attrs["exclude_self"] is True
        assert run.attrs["dataset"] == "aneel_taesa" and run.attrs["chunk_words"] == 400


def test_run_juristcu_no_exclusion(tmp_path, data_dir):
    out = tmp_path / "j.parquet"
    assert main(["run", "--retriever", "bm25", "--variant", "lucene", "--dataset", "juristcu", "--data-dir",
                 str(data_dir), "--cache-dir", str(tmp_path / "cache"), "--out", str(out), "--quiet"]) == 0
    run = load_run(out)
    assert run.attrs["exclude_self"] is False and run.attrs["params"]["variant"] == "lucene"
    assert run["query-id"].nunique() == 150


def test_run_errors(tmp_path, data_dir, capsys):
    rc = main(["run", "--retriever", "bm25", "--model", "x", "--data-dir", str(data_dir),
               "--out", str(tmp_path / "r.trec")])
    assert rc == 2 and "--model` applies to --retriever dense only" in capsys.readouterr().err
    rc = main(["run", "--retriever", "bm25", "--variant", "okpi", "--data-dir", str(data_dir),
               "--out", str(tmp_path / "r.trec")])
    assert rc == 2 and "`variant` must be one of" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "--retriever", "splade", "--out", "x"])
