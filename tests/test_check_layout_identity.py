"""The layout-identity check (benchmarks/check_layout_identity.py): which command it reads from a README, which
fields it may drop, and that any other difference between two results.json fails with its JSON path."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import check_layout_identity as C  # noqa: E402


def test_the_readme_first_benchmark_command_is_read_with_its_options(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("ragcov benchmark --quick (prose, not a command)\n```bash\npython3 -m venv .venv && "
                      ".venv/bin/ragcov benchmark --data-dir ../shared/data --seed 3 && echo done\n```\n"
                      "```bash\nragcov benchmark --quick\n```\n", encoding="utf-8")
    args = C.readme_benchmark_args(readme)
    assert args == ["--data-dir", "../shared/data", "--seed", "3"]
    assert C.job_args(args, "/data", Path("/o")) == ["benchmark", "--seed", "3", "--data-dir", "/data", "--out", "/o"]
    assert C.job_args(["--out=x", "--data-dir=y", "--quick"], "/d", Path("/o")) == \
        ["benchmark", "--quick", "--data-dir", "/d", "--out", "/o"]


def _doc() -> dict:
    return {"meta": {"created": "2026-12-03T22:00:00", "elapsed_s": 190.2, "timings_s": {"task": 1.0}, "seed": 0},
            "retrievers": [{"name": "bm25", "estimates": [{"hi": 0.7, "lo": float("nan")}]}], "irpf": None}


def test_only_the_named_timing_and_date_fields_are_dropped():
    d = _doc()
    assert sorted(C.strip_volatile(d)) == ["meta.created", "meta.elapsed_s", "meta.timings_s"]
    assert d["meta"] == {"seed": 0} and "retrievers" in d


def test_every_other_difference_is_a_json_path():
    a, b = _doc(), _doc()
    b["meta"]["elapsed_s"] = 12.0  # dropped: not a difference
    for doc in (a, b):
        C.strip_volatile(doc)
    assert list(C.diff_paths(a, b)) == []  # NaN equals NaN
    b["retrievers"][0]["estimates"][0]["hi"] = 0.7000000000000001
    b["meta"]["seed"] = 0.0  # the same number written as another JSON type
    b["irpf"] = {}
    b["retrievers"].append({"name": "tfidf"})
    b["retrievers"][0]["extra"] = 1
    got = list(C.diff_paths(a, b))
    assert got == ["$.irpf (NoneType vs dict)", "$.meta.seed (int vs float)", "$.retrievers (length 1 vs 2)",
                   "$.retrievers[0].estimates[0].hi (0.7 vs 0.7000000000000001)", "$.retrievers[0].extra (only in B)"]
    del b["meta"]["seed"]
    assert "$.meta.seed (only in A)" in list(C.diff_paths(a, b))
    assert list(C.diff_paths({"x": math.nan}, {"x": 1.0})) == ["$.x (nan vs 1.0)"]
    assert list(C.diff_paths({"x": True}, {"x": 1})) == ["$.x (bool vs int)"]


def test_compare_files_exit_status(tmp_path, capsys):
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(_doc()))
    b = _doc()
    b["meta"]["created"] = "2026-12-04T01:00:00"
    pb.write_text(json.dumps(b))
    assert C.main(["--compare", str(pa), str(pb)]) == 0
    assert "IDENTICAL" in capsys.readouterr().out
    b["retrievers"][0]["name"] = "bm25-pt"
    pb.write_text(json.dumps(b))
    assert C.main(["--compare", str(pa), str(pb)]) == 1
    out = capsys.readouterr().out
    assert "DIFFERENT: 1 JSON paths differ" in out and "$.retrievers[0].name ('bm25' vs 'bm25-pt')" in out
