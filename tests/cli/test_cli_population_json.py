"""``ragcov coverage`` / ``plan`` read the JSON of ``ragcov eval --json``; ``coverage --fpc``; guards."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
from test_evaluate import HITS, make_run, tiny_task  # noqa: E402

from ragcov_data.cli import main  # noqa: E402
from ragcov_data.eval import coverage_study, evaluate  # noqa: E402

COV = ["--reps", "60", "--methods", "cr2,t,cluster_bootstrap", "--n-resamples", "99", "--no-progress"]


@pytest.fixture()
def eval_json(tmp_path):
    """The JSON ``evaluate(...).to_json`` writes for a 5-document task, and the result itself."""
    task = tiny_task()
    rep = evaluate(make_run(task, HITS), task, "hit@1", n_resamples=199)
    path = tmp_path / "report.json"
    rep.to_json(path)
    return path, rep


def _hand_json(tmp_path, records, **top):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps({"metric": "hit@1", "cluster": "doc_id", **top, "per_query": records}))
    return path


def test_coverage_reads_eval_json_per_query_values(eval_json, tmp_path, capsys):
    path, rep = eval_json
    assert {"query-id", "cluster", "value"} <= set(json.loads(path.read_text())["per_query"][0])
    out = tmp_path / "cov.csv"
    assert main(["coverage", str(path), "--k", "3", "--out", str(out), *COV]) == 0
    assert "population: 5 documents" in capsys.readouterr().out
    # the same study on the evaluation's per-query table, its cluster taken as the document
    pop = rep.per_query.rename(columns={"cluster": "doc_id"})
    direct = coverage_study(pop, k=3, reps=60, methods=["cr2", "t", "cluster_bootstrap"], n_resamples=99,
                            show_progress=False)
    pd.testing.assert_frame_equal(pd.read_csv(out), direct, check_dtype=False)
    # and straight from the EvaluationResult object
    pd.testing.assert_frame_equal(
        coverage_study(rep, k=3, reps=60, methods=["cr2", "t", "cluster_bootstrap"], n_resamples=99,
                       show_progress=False), direct)


def test_plan_reads_eval_json(eval_json, capsys):
    path, _ = eval_json
    assert main(["plan", str(path), "--halfwidth", "0.45", "--reps", "30", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "pilot documents=5" in out and "micro: K =" in out and "macro: K =" in out


def test_hand_built_eval_json_with_the_same_fields(tmp_path, capsys):
    rng = np.random.default_rng(0)
    recs = [{"query-id": f"d{d}#{i}", "cluster": f"d{d}", "value": float(rng.random() < 0.4), "group": "g"}
            for d in range(12) for i in range(d % 4 + 1)]
    path = _hand_json(tmp_path, recs, n_queries=len(recs))
    out = tmp_path / "cov.csv"
    assert main(["coverage", str(path), "--k", "4,8", "--out", str(out), *COV]) == 0
    assert "12 documents" in capsys.readouterr().out
    pop = pd.DataFrame(recs).rename(columns={"cluster": "doc_id"})
    direct = coverage_study(pop, k=[4, 8], reps=60, methods=["cr2", "t", "cluster_bootstrap"], n_resamples=99,
                            show_progress=False)
    pd.testing.assert_frame_equal(pd.read_csv(out), direct, check_dtype=False)


def test_coverage_fpc_flag_shrinks_macro_analytic_widths(tmp_path, capsys):
    rng = np.random.default_rng(1)
    n = rng.integers(2, 12, 40)
    pop = tmp_path / "pop.csv"
    pd.DataFrame({"doc_id": [f"d{i}" for i in range(40)], "n": n, "hits": rng.binomial(n, 0.3)}).to_csv(pop, index=False)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert main(["coverage", str(pop), "--k", "10", "--out", str(a), *COV]) == 0
    assert "finite-population correction" not in capsys.readouterr().out
    assert main(["coverage", str(pop), "--k", "10", "--fpc", "--out", str(b), *COV]) == 0
    assert "finite-population correction" in capsys.readouterr().out
    plain, fpc = (pd.read_csv(p).set_index(["estimator", "method"]) for p in (a, b))
    for key in [("macro", "cr2"), ("macro", "t")]:
        assert fpc.loc[key, "mean_width"] == pytest.approx(plain.loc[key, "mean_width"] * np.sqrt(1 - 10 / 40))
    for key in [("micro", "cr2"), ("micro", "cluster_bootstrap")]:  # micro: never corrected (it under-covers)
        assert fpc.loc[key, "mean_width"] == plain.loc[key, "mean_width"]


@pytest.mark.parametrize(
    "content, message",
    [
        ({"metric": "hit@1", "estimates": []}, "JSON without per-query values (found ['estimates', 'metric'])"),
        ({"per_query": [{"query-id": "q", "cluster": "a"}]}, "records lack ['value']"),
        ({"per_query": [{"query-id": "q1", "cluster": "a", "value": 1}, {"query-id": "q2", "cluster": "b",
                                                                      "value": None}]},
         "record 1 (query-id 'q2') has value None"),
        ({"n_queries": 3, "per_query": [{"query-id": "q", "cluster": "a", "value": 1}]},
         "declares n_queries=3 but holds 1"),
        ({"per_query": "oops"}, "must be a list of records"),
    ],
)
def test_bad_eval_json_is_one_clear_line(content, message, tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    assert main(["coverage", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "bad.json" in err, err


def test_not_json_is_an_input_error(tmp_path, capsys):
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    assert main(["plan", str(path)]) == 2
    assert "not valid UTF-8 JSON" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--k", "5"], "`k`=5 equals the population (5 documents)"),
        (["--k", "3", "--n-resamples", "1"], "at least 39 are needed"),
        (["--k", "3", "--n-resamples", "10", "--level", "0.9"], "at least 19 are needed"),
    ],
)
def test_coverage_guards_from_the_cli(extra, message, eval_json, capsys):
    path, _ = eval_json
    assert main(["coverage", str(path), "--no-progress", "--reps", "20", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
