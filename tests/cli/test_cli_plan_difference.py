"""``ragcov plan --difference``: the power plan from a ``compare --json`` pilot, a table or two runs."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import ragcov_data
from ragcov_data.baselines import BM25, TfIdf
from ragcov_data.cli import main
from ragcov_data.eval import compare, plan_difference
from ragcov_data.runs import save_run


@pytest.fixture(scope="module")
def pilot(tmp_path_factory, data_dir):
    """BM25 and TF-IDF run files on ANEEL, and the JSON `ragcov compare --json` writes for them."""
    out = tmp_path_factory.mktemp("pilot")
    ds = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir))
    paths = []
    for name, cls in (("bm25", BM25), ("tfidf", TfIdf)):
        r = cls()
        r.index(ds["corpus"])
        paths.append(out / f"{name}.trec")
        save_run(r.search(ds["queries"], k=10, exclude_self=True), paths[-1])
    cmp_json = out / "cmp.json"
    assert main(["compare", str(paths[0]), str(paths[1]), "--data-dir", str(data_dir), "--methods", "cr2,t",
                 "--json", str(cmp_json)]) == 0
    return {"runs": paths, "json": cmp_json, "ds": ds}


def test_compare_json_carries_per_query_differences(pilot):
    data = json.loads(pilot["json"].read_text())
    recs = data["per_query"]
    assert len(recs) == data["n_queries"] == 2312
    assert set(recs[0]) == {"query-id", "cluster", "value_a", "value_b", "diff"}
    assert all(r["diff"] == r["value_a"] - r["value_b"] for r in recs)
    assert data["wins"] == sum(r["diff"] > 0 for r in recs)


def test_plan_difference_from_compare_json(pilot, tmp_path, capsys):
    capsys.readouterr()
    out = tmp_path / "power.json"
    assert main(["plan", str(pilot["json"]), "--difference", "0.02", "--systems", "5", "--reps", "500",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "systems=5 (10 pairs)" in text and "each pair at alpha=0.005" in text
    assert "micro: K =" in text and "macro: K =" in text and "needed: micro K =" in text
    data = json.loads(out.read_text())
    # the same plan as the API on the same differences
    frame = pd.DataFrame(json.loads(pilot["json"].read_text())["per_query"])
    api = plan_difference(frame, 0.02, n_systems=5, reps=500)
    assert {r["estimator"]: r["k"] for r in data["rows"]} == api.k
    assert {r["estimator"]: r["k_simulated"] for r in data["rows"]} == api.k_needed
    assert data["cluster"] == "doc_id" and "147 documents" in text


def test_plan_difference_from_two_runs_matches_the_json_pilot(pilot, data_dir, capsys):
    capsys.readouterr()
    assert main(["plan", "--difference", "0.05", "--runs", *map(str, pilot["runs"]), "--data-dir", str(data_dir),
                 "--no-confirm"]) == 0
    text = capsys.readouterr().out
    api = plan_difference(compare(*[ragcov_data.runs.load_run(p) for p in pilot["runs"]], pilot["ds"]), 0.05,
                          simulate=False)
    assert f"micro: K = {api.k['micro']} documents" in text and "analytic, not simulated" in text


def test_plan_difference_from_a_table(pilot, tmp_path, capsys):
    table = tmp_path / "diffs.csv"
    pd.DataFrame(json.loads(pilot["json"].read_text())["per_query"]).rename(
        columns={"cluster": "doc_id"}).to_csv(table, index=False)
    capsys.readouterr()
    assert main(["plan", str(table), "--difference", "0.05", "--estimators", "micro", "--no-confirm"]) == 0
    text = capsys.readouterr().out
    assert "micro: K =" in text and "macro" not in text.split("\n", 1)[1]


def test_halfwidth_plan_unchanged(tmp_path, capsys):
    """Without --difference, plan is the half-width planner it always was (defaults 0.05, 1000 reps)."""
    capsys.readouterr()
    assert main(["plan", "--twin", "--no-confirm", "--estimators", "micro"]) == 0
    assert "target_halfwidth=0.05" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["plan", "{json}", "--difference", "0.02", "--k", "5"], "--k applies to the half-width plan"),
        (["plan", "{json}", "--difference", "0.02", "--halfwidth", "0.1"], "--halfwidth applies to the half-width"),
        (["plan", "--twin", "--difference", "0.02"], "--twin applies to the half-width plan"),
        (["plan", "{json}", "--difference", "0.02", "--runs", "a", "b"], "give a pilot file"),
        (["plan", "{json}", "--difference", "0.02", "--data-dir", "{data}"], "--data-dir applies to --runs A B"),
        (["plan", "{json}", "--difference", "0.02", "--metric", "ndcg@10"], "--metric applies to --runs A B"),
        (["plan", "--difference", "0.02"], "--difference needs a pilot"),
        (["plan", "{json}", "--json", "{tmp}/x.json"], "--json applies to the power plan; add --difference"),
        (["plan", "{json}", "--difference", "0"], "`difference` must be a non-zero number"),
        (["plan", "{json}", "--difference", "0.02", "--systems", "1"], "`n_systems` must be an integer >= 2"),
        (["plan", "{eval}", "--difference", "0.02"], "lacks column(s) ['diff']"),
        (["plan", "{nopq}", "--difference", "0.02"], "has no `per_query` records of paired differences"),
        (["plan", "{badrow}", "--difference", "0.02"], "row 1 (query-id 'q2') has diff 'x'"),
        (["plan", "{tmp}/missing.json", "--difference", "0.02"], "pilot file"),
        (["plan", "{json}", "--difference", "0.02", "--json", "/proc/nope/x.json"], "cannot write"),
    ],
)
def test_bad_input_is_one_line(argv, message, pilot, tmp_path, data_dir, capsys):
    (tmp_path / "eval.json").write_text(json.dumps({"per_query": [{"query-id": "q1", "cluster": "d", "value": 1}]}))
    (tmp_path / "nopq.json").write_text(json.dumps({"metric": "hit@1", "estimates": []}))
    (tmp_path / "badrow.csv").write_text("query-id,cluster,diff\nq1,d1,1\nq2,d2,x\n")
    fill = dict(json=pilot["json"], data=data_dir, tmp=tmp_path, eval=tmp_path / "eval.json",
                nopq=tmp_path / "nopq.json", badrow=tmp_path / "badrow.csv")
    capsys.readouterr()
    assert main([a.format(**fill) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


def test_help_documents_the_power_plan(capsys):
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps the epilog
    assert "--difference D" in out and "--systems N" in out and "--runs RUN_A RUN_B" in out
    assert "ragcov plan --difference 0.02 --systems 5" in out
