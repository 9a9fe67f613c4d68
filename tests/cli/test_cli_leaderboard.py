"""``ragcov leaderboard``: run files named by stem or NAME=PATH, every output written, errors in one line."""
from __future__ import annotations

import json

import pytest

from ragcov_data.baselines import BM25, TfIdf
from ragcov_data.cli import main
from ragcov_data.cli.leaderboard import parse_runs, run_name
from ragcov_data.errors import RagcovError
from ragcov_data.eval import leaderboard
from ragcov_data.loaders.juristcu import read_juristcu
from ragcov_data.runs import save_run


@pytest.fixture(scope="module")
def jtask(juristcu_dir):
    return read_juristcu(juristcu_dir)[0]


@pytest.fixture(scope="module")
def run_files(tmp_path_factory, jtask):
    d = tmp_path_factory.mktemp("runs")
    out = {}
    for name, r in {"okapi": BM25(), "bm25l": BM25(variant="bm25l"), "tfidf": TfIdf()}.items():
        run = r.index(jtask["corpus"]).search(jtask["queries"], k=10, show_progress=False)
        out[name] = save_run(run, d / f"{name}.trec.gz" if name == "tfidf" else d / f"{name}.trec")
    return out


def _base(data_dir):
    return ["--dataset", "juristcu", "--data-dir", str(data_dir), "--metric", "ndcg@10", "--n-resamples", "199"]


def test_writes_json_html_markdown_and_prints_table(run_files, data_dir, jtask, tmp_path, capsys):
    js, ht, md = tmp_path / "b.json", tmp_path / "b.html", tmp_path / "b.md"
    code = main(["leaderboard", f"first={run_files['okapi']}", str(run_files["bm25l"]), str(run_files["tfidf"]),
                 *_base(data_dir), "--by", "group", "--json", str(js), "--html", str(ht), "--markdown", str(md)])
    out = capsys.readouterr().out
    assert code == 0
    d = json.loads(js.read_text(encoding="utf-8"))
    assert {s["name"] for s in d["systems"]} == {"first", "bm25l", "tfidf"}
    assert {s["group"] for s in d["systems"]} == {"__all__", "G1", "G2", "G3"}
    # the CLI gives what the API gives on the same runs
    api = leaderboard({"first": str(run_files["okapi"]), "bm25l": str(run_files["bm25l"]),
                       "tfidf": str(run_files["tfidf"])}, jtask, metric="ndcg@10", by="group", n_resamples=199)
    assert d["systems"] == json.loads(api.to_json())["systems"]
    assert "data-leaderboard" in ht.read_text(encoding="utf-8") and "## G2" in md.read_text(encoding="utf-8")
    assert "judged@10" in out and "pairs (row − column" in out and f"wrote {js}" in out


def test_run_names_from_stems_and_pairs(run_files):
    assert run_name("runs/bm25.trec.gz") == "bm25" and run_name("x/dense.parquet") == "dense"
    got = parse_runs([f"a={run_files['okapi']}", str(run_files["tfidf"])])
    assert got == {"a": str(run_files["okapi"]), "tfidf": str(run_files["tfidf"])}
    with pytest.raises(RagcovError, match="two runs are named 'okapi'"):
        parse_runs([str(run_files["okapi"]), str(run_files["okapi"])])
    with pytest.raises(RagcovError, match="run file 'nope.trec' not found"):
        parse_runs(["x=nope.trec", str(run_files["okapi"])])
    with pytest.raises(RagcovError, match="at least 2 runs; got 1"):
        parse_runs([str(run_files["okapi"])])


def test_unwritable_output_fails_before_work(run_files, data_dir, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(["leaderboard", str(run_files["okapi"]), str(run_files["tfidf"]), *_base(data_dir),
                 "--html", str(blocker / "b.html")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot write" in err and err.count("\n") == 1


def test_on_missing_intersect_says_how_many_were_dropped(run_files, data_dir, tmp_path, capsys):
    from ragcov_data.runs import load_run

    run = load_run(run_files["okapi"])
    cut = tmp_path / "cut.trec"
    save_run(run[~run["query-id"].isin(["1", "2"])], cut)
    code = main(["leaderboard", str(cut), str(run_files["tfidf"]), *_base(data_dir)])
    err = capsys.readouterr().err
    assert code == 2 and "'cut' lacks 2 of 150" in err and "--on-missing" in err
    code = main(["leaderboard", str(cut), str(run_files["tfidf"]), *_base(data_dir), "--on-missing", "intersect"])
    out = capsys.readouterr().out
    assert code == 0 and "dropped 2 of 150" in out


def test_latex_is_booktabs_and_never_overwrites_an_input(run_files, data_dir, tmp_path, capsys):
    import re

    tex = tmp_path / "board.tex"
    code = main(["leaderboard", str(run_files["okapi"]), str(run_files["bm25l"]), str(run_files["tfidf"]),
                 *_base(data_dir), "--by", "group", "--latex", str(tex)])
    out = capsys.readouterr().out
    assert code == 0 and f"wrote {tex}" in out
    # the console prints each pair's difference with its simultaneous interval, not only the point
    assert "each pair's difference with its simultaneous 95% interval" in out
    body = tex.read_text(encoding="utf-8")
    floats = re.findall(r"\\begin\{table\}.*?\\end\{table\}", body, flags=re.S)
    assert len(floats) == 8  # systems + pairs for all queries and groups G1, G2, G3
    for f in floats:
        assert f.count("\\toprule") == f.count("\\midrule") == f.count("\\bottomrule") == 1
        assert f.index("\\toprule") < f.index("\\midrule") < f.index("\\bottomrule")
        assert f.count("\\begin{tabular}") == f.count("\\end{tabular}") == 1
        cols = len(re.search(r"\\begin\{tabular\}\{(\w+)\}", f).group(1))
        rows = f.split("\\midrule")[1].split("\\bottomrule")[0].strip().splitlines()
        assert all(r.endswith("\\\\") and r.count(" & ") == cols - 1 for r in rows)
    text = re.sub(r"\\[_%&#$]", "", body)  # no unescaped special character left in the cells
    assert "_" not in re.sub(r"\\label\{[^}]*\}", "", text).replace("\\usepackage", "")
    assert "%" not in "".join(ln for ln in text.splitlines() if not ln.startswith("%"))
    assert "-0.0000" not in body and "−" not in body
    before = run_files["okapi"].read_bytes()
    code = main(["leaderboard", str(run_files["okapi"]), str(run_files["bm25l"]), *_base(data_dir),
                 "--latex", str(run_files["okapi"])])
    err = capsys.readouterr().err
    assert code == 2 and "--latex" in err and err.count("\n") == 1
    assert run_files["okapi"].read_bytes() == before


def test_latex_escapes_names_and_signs():
    from ragcov_data.eval.comparisons.leaderboard_latex import escape, _n

    assert escape("bm25_pt 50% & #1 {x}") == r"bm25\_pt 50\% \& \#1 \{x\}"
    assert escape("a − b") == "a $-$ b" and _n(-0.00001, 4, True) == "+0.0000" and _n(-0.25, 2) == "$-$0.25"
