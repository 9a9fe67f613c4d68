"""One unit of inference per task, read from its queries columns, used by every verb alike.

IRPF's unit is the topic: ``ragcov eval`` and ``ragcov chunking`` give one run, metric and budget the same
interval, with the same check and the same mark. LGPD's unit is the exam, by default. A unit other than the
task's own is said in the output. ``leaderboard()`` in Python and ``ragcov leaderboard`` share the default
estimator.
"""
from __future__ import annotations

import inspect
import json
import re

import pytest

from ragcov_data.cli import build_parser, main
from ragcov_data.eval import leaderboard
from ragcov_data.eval.comparisons.cited import cited_chunking_study

MARK = {"verified": "", "not_verified": "*", "unverifiable": "‡"}


@pytest.fixture(scope="module")
def irpf_outputs(data_dir, tmp_path_factory):
    """``ragcov chunking`` on IRPF's article chunks (bm25, tfidf) within 1,000 words and at recall@10, and
    ``ragcov eval`` of a bm25 run of the same task on both metrics, every method (JSON)."""
    out = tmp_path_factory.mktemp("irpf-units")
    d = str(data_dir)
    assert main(["chunking", "--dataset", "irpf", "--data-dir", d, "--chunking", "article", "--retriever", "bm25,tfidf",
                 "--budgets", "1000", "--metrics", "recall@10", "--n-resamples", "499", "--quiet",
                 "--json", str(out / "chunking.json")]) == 0
    assert main(["run", "--dataset", "irpf", "--data-dir", d, "--retriever", "bm25", "--k", "300",
                 "--out", str(out / "bm25.trec")]) == 0
    evals = {}
    for metric in ("recall@1000w", "recall@10"):
        path = out / f"eval-{metric}.json"
        assert main(["eval", str(out / "bm25.trec"), "--dataset", "irpf", "--data-dir", d, "--metric", metric,
                     "--methods", "all", "--n-resamples", "499", "--json", str(path)]) == 0
        evals[metric] = json.loads(path.read_text())
    return json.loads((out / "chunking.json").read_text()), evals, out


def test_eval_and_chunking_give_one_irpf_run_one_interval(irpf_outputs, data_dir, capsys):
    chunking, evals, out = irpf_outputs
    capsys.readouterr()
    for metric, ev in evals.items():
        board = chunking["leaderboards"][metric]
        row = next(r for r in board["systems"] if r["name"] == "article/bm25" and r["group"] == "__all__")
        assert ev["cluster"] == "topic" and board["cluster"] == "topic"  # the task's unit, in both
        assert ev["n_clusters"] == board["n_clusters"] == 162 and ev["n_queries"] == board["n_queries"] == 174
        same = next(e for e in ev["estimates"] if (e["estimator"], e["method"]) == (row["estimator"], row["method"]))
        for k in ("estimate", "low", "high", "se", "df"):
            assert same[k] == pytest.approx(row[k], rel=1e-12, abs=1e-14), (metric, k)
        assert same["verified_status"] == row["verified_status"] and same["verified_reason"] == row["verified_reason"]
        assert MARK[row["verified_status"]] == row["mark"] == MARK[same["verified_status"]]
        # printed: eval's row of that method carries the chunking's interval and mark
        assert main(["eval", str(out / "bm25.trec"), "--dataset", "irpf", "--data-dir", str(data_dir), "--metric",
                     metric, "--methods", row["method"], "--n-resamples", "499"]) == 0
        text = capsys.readouterr().out
        line = next(x for x in text.splitlines() if x.split()[:2] == [row["estimator"], row["method"]])
        assert f"{row['low']:.4f} {row['high']:.4f}" in re.sub(r"\s+", " ", line)
        tail = line.split(f"{row['high'] - row['low']:.4f}", 1)[1].split()
        assert (tail[0] if tail and tail[0] in ("*", "‡") else "") == row["mark"]
        assert "unit: topic (162 topics, 174 queries)" in text and "chosen" not in text
    assert "unit of inference: the topic (the task's unit)" in chunking["icc"]["sentence"]
    assert chunking["icc"]["unit"] == "topic" and chunking["icc"]["task_unit"] == "topic"


def test_another_unit_is_said(irpf_outputs, data_dir, capsys):
    _, _, out = irpf_outputs
    capsys.readouterr()
    assert main(["eval", str(out / "bm25.trec"), "--dataset", "irpf", "--data-dir", str(data_dir), "--metric",
                 "recall@10", "--cluster", "_id", "--n-resamples", "499"]) == 0
    text = capsys.readouterr().out
    assert "unit: query (174 queries, each its own cluster); chosen (cluster='_id'): the task's unit is the topic" in text


def test_lgpd_is_clustered_by_the_exam(data_dir, tmp_path, capsys):
    d = str(data_dir)
    assert main(["run", "--dataset", "lgpd", "--data-dir", d, "--retriever", "bm25", "--out",
                 str(tmp_path / "lgpd.trec")]) == 0
    assert main(["eval", str(tmp_path / "lgpd.trec"), "--dataset", "lgpd", "--data-dir", d, "--metric", "recall@10",
                 "--n-resamples", "499", "--json", str(tmp_path / "ev.json")]) == 0
    text = capsys.readouterr().out
    ev = json.loads((tmp_path / "ev.json").read_text())
    assert ev["cluster"] == "exam" and ev["n_clusters"] == 249 and "unit: exam (249 exams, 350 queries)" in text
    assert ev["info"]["task_cluster"] == "exam"


def test_the_python_leaderboard_and_the_cli_share_the_default_estimator():
    assert inspect.signature(leaderboard).parameters["estimator"].default == "auto"
    args = build_parser().parse_args(["leaderboard", "a.trec", "b.trec"])
    assert args.estimator == inspect.signature(leaderboard).parameters["estimator"].default
    assert inspect.signature(cited_chunking_study).parameters["cluster"].default is None  # the task's unit
    args = build_parser().parse_args(["chunking", "--dataset", "irpf"])
    assert args.cluster is None
