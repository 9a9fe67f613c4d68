"""``ragcov misses`` end to end on the hand-made task of tests/eval/test_misses.py."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
from test_misses import EXPECTED, FLAGS, tiny_run, tiny_task  # noqa: E402

from ragcov_data.cli import main  # noqa: E402

SMALL = ["--boilerplate-min-docs", "3", "--boilerplate-doc-share", "0.01", "--edition-overlap", "0.3"]


@pytest.fixture()
def task_dir(tmp_path):
    for split, df in tiny_task().items():
        df.to_parquet(tmp_path / f"{split}.parquet")
    run = tiny_run()
    (tmp_path / "run.trec").write_text("".join(f"{q} Q0 {c} {r} {s} t\n" for q, c, r, s in run.itertuples(index=False)))
    return tmp_path


def test_misses_prints_shares_and_writes_json_and_csv(task_dir, capsys):
    out_json, out_csv = task_dir / "m.json", task_dir / "m.csv"
    rc = main(["misses", str(task_dir / "run.trec"), "--data-dir", str(task_dir), *SMALL,
               "--json", str(out_json), "--csv", str(out_csv)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "hit@1 misses: 7 of 10 queries" in out and "by doc_type" in out
    assert all(f in out for f in FLAGS)
    d = json.loads(out_json.read_text())
    assert d["n_misses"] == 7 and [r["name"] for r in d["flags"]] == FLAGS
    table = pd.read_csv(out_csv, dtype={"query-id": str})
    assert sorted(table["query-id"]) == sorted(EXPECTED)
    assert {"query-id", "corpus-id", "query_doc", "retrieved_doc", *FLAGS} <= set(table.columns)
    got = table.set_index("query-id")
    for q, exp in EXPECTED.items():
        assert [bool(got.loc[q, f]) for f in FLAGS] == [bool(exp[f]) for f in FLAGS], q


def test_misses_tie_policy_option(task_dir, capsys):
    out_json = task_dir / "p.json"
    rc = main(["misses", str(task_dir / "run.trec"), "--data-dir", str(task_dir), *SMALL,
               "--tie-policy", "pessimistic", "--json", str(out_json)])
    assert rc == 0 and "tie policy pessimistic" in capsys.readouterr().out
    d = json.loads(out_json.read_text())
    assert d["n_misses"] == 8 and "C#0000" in {r["query-id"] for r in d["misses"]}


def test_misses_thresholds_reach_the_flags(task_dir, capsys):
    out_json = task_dir / "t.json"
    rc = main(["misses", str(task_dir / "run.trec"), "--data-dir", str(task_dir), "--boilerplate-min-docs", "4",
               "--near-duplicate", "0.9", "--json", str(out_json)])
    assert rc == 0
    d = json.loads(out_json.read_text())
    shares = {r["name"]: r["share"] for r in d["flags"]}
    assert shares["boilerplate"] == 0 and shares["near_duplicate"] == pytest.approx(2 / 7)  # only the 25/27 pairs
    assert d["definitions"]["near_duplicate_threshold"] == 0.9


def test_misses_unwritable_csv_fails_before_work(task_dir, capsys):
    rc = main(["misses", str(task_dir / "run.trec"), "--data-dir", str(task_dir), "--csv", str(task_dir)])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("ragcov misses: error: cannot write") and "Traceback" not in err


def test_misses_bad_threshold_is_one_line(task_dir, capsys):
    rc = main(["misses", str(task_dir / "run.trec"), "--data-dir", str(task_dir), "--boilerplate-share", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and "`boilerplate_share` must be a share in (0, 1]; got 2.0" in err and len(err.splitlines()) == 1
