"""``ragcov eval`` and ``ragcov compare`` end to end on a tiny task."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
from test_evaluate import HITS, make_run, tiny_task  # noqa: E402

from ragcov_data.cli import main  # noqa: E402


@pytest.fixture()
def task_dir(tmp_path):
    task = tiny_task()
    for split, df in task.items():
        df.to_parquet(tmp_path / f"{split}.parquet")
    run_a = make_run(task, HITS)
    run_b = make_run(task, {"A": lambda i: True, "B": lambda i: True})
    for name, run in (("a.trec", run_a), ("b.trec", run_b)):
        (tmp_path / name).write_text("".join(f"{q} Q0 {c} {r} {s} t\n" for q, c, r, s in run.itertuples(index=False)))
    return tmp_path


def test_eval_prints_table_and_writes_json(task_dir, capsys):
    out_json = task_dir / "rep.json"
    rc = main(["eval", str(task_dir / "a.trec"), "--data-dir", str(task_dir), "--n-resamples", "200",
               "--json", str(out_json)])
    out = capsys.readouterr().out
    assert rc == 0
    # default: the recommended method per estimator (micro cr2, macro t); naive contrasts only with --methods all
    assert "wald_iid" not in out and "cr2" in out and "icc=" in out
    rep = json.loads(out_json.read_text())
    cr2 = [r for r in rep["estimates"] if r["estimator"] == "micro" and r["method"] == "cr2"][0]
    assert cr2["estimate"] == pytest.approx(8 / 17)
    assert {r["method"] for r in rep["estimates"]} >= {"wald_iid", "deff_wald", "t"}  # JSON: every computed row
    assert len(rep["per_query"]) == 17 and set(rep["per_query"][0]) == {"query-id", "cluster", "value"}


def test_eval_methods_all_prints_every_method(task_dir, capsys):
    rc = main(["eval", str(task_dir / "a.trec"), "--data-dir", str(task_dir), "--n-resamples", "200"])
    default = capsys.readouterr().out
    rc_all = main(["eval", str(task_dir / "a.trec"), "--data-dir", str(task_dir), "--n-resamples", "200",
                   "--methods", "all"])
    every = capsys.readouterr().out
    assert rc == 0 and rc_all == 0
    rows = lambda text: [ln.split()[:2] for ln in text.splitlines() if ln.split()[:1] in (["micro"], ["macro"])]
    assert rows(default) == [["micro", "cr2"], ["macro", "t"]]
    assert len(rows(every)) == 14 and ["micro", "wald_iid"] in rows(every) and "wald_iid (naive)" in every
    assert "shown: the recommended method" in default and "shown: the recommended method" not in every


def test_eval_by_group(task_dir, capsys):
    rc = main(["eval", str(task_dir / "a.trec"), "--data-dir", str(task_dir), "--by", "doc_type",
               "--methods", "cr2,t"])
    out = capsys.readouterr().out
    assert rc == 0 and "res" in out and "desp" in out and "__all__" in out


def test_compare_prints_difference(task_dir, capsys):
    rc = main(["compare", str(task_dir / "a.trec"), str(task_dir / "b.trec"), "--data-dir", str(task_dir),
               "--n-resamples", "200"])
    out = capsys.readouterr().out
    assert rc == 0 and "paired difference" in out and "wins/losses/ties: 3/2/12" in out
    # which run is A and which B, and why the leaderboard's interval for the same pair is wider
    assert "A = a.trec, B = b.trec (a positive difference favours A)" in out
    assert "this one pair alone" in out and "simultaneous" in out
    # no paragraph printed twice
    paras = [ln for ln in out.splitlines() if len(ln) > 120]
    assert len(paras) == len(set(paras))


def test_bad_arguments_give_one_line_error(task_dir, capsys):
    rc = main(["eval", str(task_dir / "a.trec"), "--data-dir", str(task_dir), "--methods", "cr3"])
    err = capsys.readouterr().err
    assert rc != 0 and "unknown method" in err and "cr3" in err and len(err.strip().splitlines()) == 1
    (task_dir / "empty.trec").write_text("")
    rc = main(["eval", str(task_dir / "empty.trec"), "--data-dir", str(task_dir)])
    err = capsys.readouterr().err
    assert rc != 0 and "empty" in err and len(err.strip().splitlines()) == 1
    rc = main(["compare", str(task_dir / "a.trec"), str(task_dir / "missing.trec"), "--data-dir", str(task_dir)])
    err = capsys.readouterr().err
    assert rc != 0 and "missing.trec" in err and len(err.strip().splitlines()) == 1


def test_cli_reads_only_the_rows_the_metric_sees_and_scores_the_same(juristcu_dir, tmp_path, capsys):
    """The CLI reads a deep run k + 1 rows a query (plus boundary ties): per-query values equal the API's on
    the whole run, for nDCG@10 and for a tied run scored under every tie policy."""
    from ragcov_data.baselines import BM25, save_run
    from ragcov_data.eval import evaluate
    from ragcov_data.loaders.juristcu import read_juristcu

    task = read_juristcu(juristcu_dir)[0]
    run = BM25().index(task["corpus"]).search(task["queries"], k=60, show_progress=False)
    run["score"] = run["score"].round(0)  # coarse scores: ties straddle rank 10 in many queries
    path = tmp_path / "deep.trec"
    save_run(run, path)
    for policy in ("trec_eval", "pessimistic", "expected"):
        out = tmp_path / f"{policy}.json"
        rc = main(["eval", str(path), "--dataset", "juristcu", "--data-dir", str(juristcu_dir.parent), "--metric",
                   "ndcg@10", "--tie-policy", policy, "--n-resamples", "199", "--json", str(out)])
        capsys.readouterr()
        assert rc == 0
        got = {r["query-id"]: r["value"] for r in json.loads(out.read_text())["per_query"]}
        want = evaluate(run, task, "ndcg@10", tie_policy=policy, n_resamples=199).per_query
        assert got == pytest.approx(dict(zip(want["query-id"], want["value"])), abs=1e-12)


def test_zeroed_queries_are_stated_by_eval_and_compare(task_dir, capsys):
    lines = (task_dir / "a.trec").read_text().splitlines(keepends=True)
    (task_dir / "cut.trec").write_text("".join(x for x in lines if not x.startswith(("A#0000 ", "C#0001 "))))
    out_json = task_dir / "cut.json"
    assert main(["eval", str(task_dir / "cut.trec"), "--data-dir", str(task_dir), "--n-resamples", "200",
                 "--on-missing", "zero", "--json", str(out_json)]) == 0
    assert "notice: run 'cut.trec' lacked 2 of 17 queries (scored 0)." in capsys.readouterr().out
    info = json.loads(out_json.read_text())["info"]
    assert info["n_missing_queries"] == 2 and sorted(info["missing_queries"]) == ["A#0000", "C#0001"]
    assert main(["compare", str(task_dir / "cut.trec"), str(task_dir / "cut.trec"), "--data-dir", str(task_dir),
                 "--n-resamples", "200"]) == 2
    assert "lacks 2 of 17" in capsys.readouterr().err
    assert main(["compare", str(task_dir / "cut.trec"), str(task_dir / "cut.trec"), "--data-dir", str(task_dir),
                 "--n-resamples", "200", "--on-missing", "zero"]) == 0
    out = capsys.readouterr().out
    assert "run 'run_a' lacked 2 of 17 queries (scored 0)" in out and "run 'run_b' lacked 2 of 17" in out
