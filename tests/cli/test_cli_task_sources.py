"""Every verb takes the same task sources; task folders are verified; outputs checked before work."""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from ragcov_data import build_task
from ragcov_data.baselines import BM25, load_run
from ragcov_data.cli import main

CHUNK = ["--chunk-words", "40", "--query-words", "10"]


def _acervo(path, n_docs=6, seed=0):
    """Documents drawing words from a shared vocabulary plus their own, so hit@1 varies across queries."""
    rng = random.Random(seed)
    shared = [f"s{i}" for i in range(60)]
    recs = []
    for j in range(n_docs):
        own = [f"d{j}w{i}" for i in range(25)]
        text = " ".join(rng.choice(own if rng.random() < 0.35 else shared) for _ in range(120 + 30 * j))
        recs.append({"doc_id": f"doc{j}", "doc_type": "A" if j % 2 else "B", "text": text})
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


@pytest.fixture()
def acervo(tmp_path):
    return _acervo(tmp_path / "acervo.jsonl")


@pytest.fixture()
def task_dir(acervo, tmp_path, capsys):
    out = tmp_path / "task"
    assert main(["build", "--data-files", str(acervo), *CHUNK, "--out", str(out)]) == 0
    capsys.readouterr()
    return out


def _err_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def _hit1(run: pd.DataFrame) -> pd.Series:
    """hit@1 per query from the run's own ranks: is the rank-1 chunk another chunk of the query's document?"""
    top = run[run["rank"] == 1].set_index("query-id")["corpus-id"]
    doc = lambda ids: ids.str.rsplit("#", n=1).str[0]  # noqa: E731 - ids are '<doc_id>#<chunk_index>'
    return pd.Series((doc(top.index.to_series()) == doc(top)).to_numpy(), index=top.index).astype(float)


def _estimate(rep: dict, estimator: str, method: str) -> dict:
    return next(r for r in rep["estimates"] if r["estimator"] == estimator and r["method"] == method)


# --------------------------------------------------------------------------- run / eval on every source


def test_run_data_files_is_the_library_run(acervo, tmp_path, capsys):
    out = tmp_path / "bm25.parquet"
    assert main(["run", "--retriever", "bm25", "--data-files", str(acervo), *CHUNK, "--k", "5", "--quiet",
                 "--out", str(out)]) == 0
    assert f"-> {out}" in capsys.readouterr().out
    task = build_task(acervo, chunk_words=40, query_words=10)
    lib = BM25(show_progress=False).index(task.corpus).search(task.queries, k=5, exclude_self=True)
    cli = load_run(out)
    cols = ["query-id", "corpus-id", "rank"]
    assert cli[cols].reset_index(drop=True).equals(lib[cols].reset_index(drop=True))
    assert cli.attrs["dataset"] == "aneel_taesa" and cli.attrs["chunk_words"] == 40


def test_run_and_eval_on_a_task_folder(acervo, task_dir, tmp_path, capsys):
    runs = {}
    for name, source in (("files", ["--data-files", str(acervo), *CHUNK]), ("dir", ["--data-dir", str(task_dir)]),
                         ("task", ["--task", str(task_dir)])):
        runs[name] = tmp_path / f"{name}.trec"
        assert main(["run", "--retriever", "bm25", *source, "--quiet", "--out", str(runs[name])]) == 0
    assert runs["files"].read_bytes() == runs["dir"].read_bytes() == runs["task"].read_bytes()
    capsys.readouterr()

    hits = _hit1(load_run(runs["dir"]))
    assert 0 < hits.mean() < 1  # the acervo is not trivial
    per_doc = hits.groupby(hits.index.str.rsplit("#", n=1).str[0]).mean()
    for source in (["--data-dir", str(task_dir)], ["--data-files", str(acervo), *CHUNK]):
        out = tmp_path / "rep.json"
        assert main(["eval", str(runs["dir"]), *source, "--tie-policy", "run", "--methods", "cr2,t",
                     "--n-resamples", "50", "--json", str(out)]) == 0
        rep = json.loads(out.read_text())
        assert _estimate(rep, "micro", "cr2")["estimate"] == pytest.approx(hits.mean())
        assert _estimate(rep, "macro", "t")["estimate"] == pytest.approx(per_doc.mean())
    capsys.readouterr()


def test_mixed_task_folder_is_refused_by_every_verb(acervo, task_dir, tmp_path, capsys):
    run = tmp_path / "r.trec"
    assert main(["run", "--retriever", "bm25", "--task", str(task_dir), "--quiet", "--out", str(run)]) == 0
    old = tmp_path / "old"
    assert main(["build", "--data-files", str(acervo), "--chunk-words", "25", "--query-words", "10",
                 "--out", str(old)]) == 0
    capsys.readouterr()
    shutil.copy(old / "qrels.parquet", task_dir / "qrels.parquet")  # old qrels beside the new corpus and queries
    for argv in (["eval", str(run), "--data-dir", str(task_dir)],
                 ["run", "--retriever", "tfidf", "--data-dir", str(task_dir), "--out", str(tmp_path / "x.trec")],
                 ["build", "--task", str(task_dir)]):
        assert main(argv) == 2
        err = _err_line(capsys)
        assert "qrels.parquet does not match manifest.json" in err and "ragcov build" in err, err
    assert not (tmp_path / "x.trec").exists()


def test_one_document_acervo_is_an_error_not_an_empty_run(tmp_path, capsys):
    one = _acervo(tmp_path / "one.jsonl", n_docs=1)
    out = tmp_path / "one.trec"
    assert main(["run", "--retriever", "bm25", "--data-files", str(one), *CHUNK, "--out", str(out)]) == 2
    err = _err_line(capsys)
    assert "queries all come from one document ('doc0')" in err and "add documents" in err
    assert not out.exists()


def test_conflicting_sources_are_one_line_errors(acervo, task_dir, tmp_path, capsys):
    out = str(tmp_path / "r.trec")
    cases = [
        (["--task", str(task_dir), "--data-dir", str(task_dir)], "give --task or --data-dir, not both"),
        (["--data-dir", str(task_dir), "--chunk-words", "50"], "--chunk-words does not apply to the task folder"),
        (["--task", str(task_dir), "--data-files", str(acervo)], "--data-files does not apply to the task folder"),
        (["--data-files", str(acervo), "--dataset", "juristcu"], "--data-files builds the chunked self-retrieval"),
        (["--data-files", str(acervo), "--data-dir", str(tmp_path)], "give --data-files or --data-dir, not both"),
        (["--task", str(tmp_path / "nowhere")], "does not exist"),
    ]
    for source, message in cases:
        assert main(["run", "--retriever", "bm25", *source, "--out", out]) == 2
        assert message in _err_line(capsys)


# --------------------------------------------------------------------------- outputs checked before work


@pytest.mark.parametrize("argv", [
    ["run", "--retriever", "bm25", "--data-files", "{missing}", "--out", "{bad}/run.trec"],
    ["eval", "{missing}", "--data-files", "{missing}", "--json", "{bad}/rep.json"],
    ["build", "--data-files", "{missing}", "--out", "{bad}/task"],
    ["benchmark", "--data-dir", "{missing}", "--out", "{bad}/reports"],
    ["report", "{missing}", "--out", "{bad}/reports"],
    ["publish", "{bad}/pub", "--data-dir", "{missing}"],
])
def test_unwritable_output_is_refused_before_any_work(argv, tmp_path, capsys):
    blocker = tmp_path / "file.txt"
    blocker.write_text("a file, so nothing can be created under it")
    missing = tmp_path / "missing.jsonl"  # the work would fail on it: the output check must come first
    argv = [a.format(bad=blocker, missing=missing) for a in argv]
    assert main(argv) == 2
    err = _err_line(capsys)
    out = next(a for a in argv if a.startswith(str(blocker)))
    assert f"error: cannot write {out}: {str(blocker)!r} is a file, not a folder; choose a writable path" in err


def test_build_out_over_a_folder_with_other_files_is_refused(acervo, tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    assert main(["build", "--data-files", str(acervo), *CHUNK, "--out", str(folder)]) == 2
    assert "holds files that are not part of a task (notes.txt)" in _err_line(capsys)
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


# --------------------------------------------------------------------------- sampling design options


def _eval_json(run, task_dir, tmp_path, *extra) -> dict:
    out = tmp_path / "design.json"
    assert main(["eval", str(run), "--data-dir", str(task_dir), "--tie-policy", "run", "--n-resamples", "50",
                 "--json", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_population_size_and_strata_reach_evaluate(task_dir, tmp_path, capsys):
    run = tmp_path / "r.trec"
    assert main(["run", "--retriever", "bm25", "--task", str(task_dir), "--quiet", "--out", str(run)]) == 0
    n_docs = pd.read_parquet(task_dir / "queries.parquet")["doc_id"].nunique()
    plain = _eval_json(run, task_dir, tmp_path, "--methods", "cr2,t")
    # a census (population = the sampled documents): the finite-population correction leaves no variance
    census = _eval_json(run, task_dir, tmp_path, "--methods", "cr2,t", "--population-size", str(n_docs))
    big = _eval_json(run, task_dir, tmp_path, "--methods", "cr2,t", "--population-size", "1e9")
    for est, method in (("micro", "cr2"), ("macro", "t")):
        assert _estimate(plain, est, method)["high"] > _estimate(plain, est, method)["low"]
        assert _estimate(big, est, method)["high"] == pytest.approx(_estimate(plain, est, method)["high"], abs=1e-6)
    # the correction reaches the macro estimator (a census leaves it no variance) and, by design, not micro
    assert _estimate(census, "macro", "t")["high"] == pytest.approx(_estimate(census, "macro", "t")["low"])
    assert _estimate(census, "micro", "cr2")["high"] == pytest.approx(_estimate(plain, "micro", "cr2")["high"])
    assert "fpc_ignored" in _estimate(census, "micro", "cr2")["flags"]

    q = pd.read_parquet(task_dir / "queries.parquet").drop_duplicates("doc_id")
    per_type = q["doc_type"].value_counts()
    spec = ",".join(f"{t}={n}" for t, n in per_type.items())
    every = _eval_json(run, task_dir, tmp_path, "--methods", "t", "--strata", "doc_type", "--stratum-sizes", spec,
                       "--population-strata", str(len(per_type)))
    # stratified: the target is the mean over strata and t applies to micro too (SRS: macro only)
    assert {(r["estimator"], r["method"]) for r in every["estimates"]} == {("micro", "t"), ("macro", "t")}
    t = _estimate(every, "macro", "t")
    assert t["high"] == pytest.approx(t["low"])  # every document of every stratum observed
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("stratum,documents\n" + "".join(f"{k},{10 * v}\n" for k, v in per_type.items()))
    sampled = _eval_json(run, task_dir, tmp_path, "--methods", "t", "--strata", "doc_type", "--stratum-sizes",
                         str(sizes))
    assert _estimate(sampled, "macro", "t")["high"] > _estimate(sampled, "macro", "t")["low"]
    capsys.readouterr()


@pytest.mark.parametrize("extra, message", [
    (["--stratum-sizes", "A=3"], "--stratum-sizes describes strata; give --strata COL too"),
    (["--strata", "doc_type", "--population-size", "10"], "--population-size is for a one-stage design"),
    (["--strata", "doc_type", "--stratum-sizes", "A3"], "item 'A3' is not LABEL=N"),
    (["--strata", "doc_type", "--stratum-sizes", "A=-1"], "stratum 'A' has size '-1'"),
    (["--strata", "doc_type", "--stratum-sizes", "nope.json"], "--stratum-sizes file 'nope.json' not found"),
    (["--population-size", "2"], "--population-size 2 is smaller than the 6 units (doc_id) the task samples"),
])
def test_design_option_errors(extra, message, task_dir, tmp_path, capsys):
    assert main(["eval", str(tmp_path / "r.trec"), "--data-dir", str(task_dir), *extra]) == 2
    assert message in _err_line(capsys)


# --------------------------------------------------------------------------- no traceback anywhere


def test_bad_invocations_never_print_a_traceback(acervo, task_dir, tmp_path):
    shutil.copy(task_dir / "corpus.parquet", task_dir / "queries.parquet")  # a corrupted folder
    cases = [
        ["run", "--retriever", "bm25", "--dataset", "nosuch", "--data-dir", str(tmp_path), "--out", "r.trec"],
        ["run", "--retriever", "bm25", "--task", str(task_dir), "--out", "r.trec"],
        ["eval", "missing.trec", "--data-files", str(acervo), *CHUNK],
        ["build", "--data-files", str(tmp_path / "none.jsonl")],
        ["compare", "a.trec", "b.trec", "--data-dir", str(tmp_path / "nowhere")],
        ["report", str(tmp_path / "none.json")],
    ]
    for argv in cases:
        res = subprocess.run([sys.executable, "-m", "ragcov_data", *argv], capture_output=True, text=True,
                             cwd=tmp_path, timeout=300)
        assert res.returncode == 2, (argv, res.stderr)
        assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1, (argv, res.stderr)
        assert res.stderr.startswith(f"ragcov {argv[0]}: error: "), res.stderr


def test_unexpected_errors_and_interrupts_are_one_line(monkeypatch, capsys):
    import ragcov_data.cli.report as report

    def boom(args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(report, "run", boom)
    assert main(["report", "x.json"]) == 1
    err = _err_line(capsys)
    assert err.startswith("ragcov report: internal error: ZeroDivisionError: division by zero")
    assert "this is a bug" in err and "RAGCOV_DEBUG=1" in err
    monkeypatch.setenv("RAGCOV_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        main(["report", "x.json"])
    monkeypatch.delenv("RAGCOV_DEBUG")

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "run", interrupted)
    assert main(["report", "x.json"]) == 130
    assert _err_line(capsys) == "ragcov report: interrupted"


def test_benchmark_on_a_task_folder_says_what_to_run_instead(task_dir, tmp_path, capsys):
    assert main(["benchmark", "--data-dir", str(task_dir), "--out", str(tmp_path / "rep")]) == 2
    err = _err_line(capsys)
    assert "is a task folder" in err and "ragcov run --task DIR" in err


# --------------------------------------------------------------------------- the library resolves, the CLI maps


def test_resolve_task_is_the_library_call_behind_every_source(acervo, task_dir, tmp_path):
    from ragcov_data.tasks.sources import resolve_task
    from ragcov_data.tasks.record import read_task

    built = resolve_task(data_files=[acervo], chunk_words=40, query_words=10)
    assert built.kind == "data_files" and built.attrs == {"dataset": "aneel_taesa", "chunk_words": 40}
    direct = build_task(acervo, chunk_words=40, query_words=10)
    pd.testing.assert_frame_equal(built.task.qrels, direct.qrels)
    folder = resolve_task(task=task_dir)
    assert folder.kind == "task" and folder.attrs["task_folder"] == str(task_dir)
    pd.testing.assert_frame_equal(folder.task.queries, read_task(task_dir).queries)
    assert resolve_task(data_dir=task_dir).kind == "task"  # a --data-dir holding a manifest is a task folder
    sampled = resolve_task(data_dir=task_dir, sample_docs=3, seed=5)
    assert sampled.attrs["sample"]["k"] == 3 and sampled.attrs["sample"]["seed"] == 5
    assert set(sampled.task.queries["doc_id"]) == set(sampled.attrs["sample"]["documents"])
    tables = tmp_path / "tables"
    tables.mkdir()
    direct.queries.to_csv(tables / "queries.csv", index=False)
    direct.qrels.to_csv(tables / "qrels.csv", index=False)
    got = resolve_task(data_dir=tables)
    assert got.kind == "tables" and got.task["qrels"]["query-id"].tolist() == direct.qrels["query-id"].tolist()


@pytest.mark.parametrize("kwargs, message", [
    ({"task": "T", "chunk_words": 50}, "--chunk-words does not apply to the task folder"),
    ({"task": "T", "data_dir": "T"}, "give --task or --data-dir, not both"),
    ({"data_files": ["A"], "dataset": "juristcu"}, "--data-files builds the chunked self-retrieval task"),
    ({"data_files": ["A"], "seed": 3}, "--seed describes the document sample; give --sample-docs K too"),
    ({"data_files": ["A"], "min_words": 5}, "--min-words applies to --chunking dispositivo"),
    ({"dataset": "juristcu", "chunk_words": 50}, "--chunk-words does not apply to --dataset juristcu"),
])
def test_resolve_task_conflicts_are_one_error(kwargs, message, acervo, task_dir):
    from ragcov_data.errors import RagcovError
    from ragcov_data.tasks.sources import resolve_task

    subst = {"T": str(task_dir), "A": str(acervo)}
    kwargs = {k: ([subst[x] for x in v] if isinstance(v, list) else subst.get(v, v)) for k, v in kwargs.items()}
    with pytest.raises(RagcovError, match=message.replace("(", r"\(").replace(")", r"\)")):
        resolve_task(**kwargs)


def test_the_cli_resolves_a_task_with_one_library_call(acervo, tmp_path, monkeypatch, capsys):
    import ragcov_data.tasks.sources as sources

    calls = []
    real = sources.resolve_task

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(sources, "resolve_task", spy)
    run = tmp_path / "r.trec"
    assert main(["run", "--retriever", "bm25", "--data-files", str(acervo), *CHUNK, "--sample-docs", "3", "--seed",
                 "2", "--out", str(run), "--quiet"]) == 0
    assert len(calls) == 1
    assert {k: calls[0][k] for k in ("data_files", "chunk_words", "query_words", "sample_docs", "seed")} == {
        "data_files": [str(acervo)], "chunk_words": 40, "query_words": 10, "sample_docs": 3, "seed": 2}
    assert main(["build", "--data-files", str(acervo), *CHUNK, "--json"]) == 0
    assert len(calls) == 2 and calls[1]["as_task"] is True
    capsys.readouterr()


def test_population_size_check_uses_the_evaluators_default_cluster(tmp_path, capsys):
    """The CLI's check of --population-size counts the evaluator's default unit: source_key before doc_id."""
    tables = tmp_path / "tables"
    tables.mkdir()
    pd.DataFrame({"_id": ["q1", "q2", "q3", "q4"], "text": ["a", "b", "c", "d"],
                  "source_key": ["s1", "s1", "s2", "s2"], "doc_id": ["d1", "d2", "d3", "d4"]}
                 ).to_csv(tables / "queries.csv", index=False)
    pd.DataFrame({"query-id": ["q1", "q2", "q3", "q4"], "corpus-id": ["c1", "c2", "c3", "c4"], "score": 1}
                 ).to_csv(tables / "qrels.csv", index=False)
    assert main(["eval", str(tmp_path / "r.trec"), "--data-dir", str(tables), "--population-size", "1"]) == 2
    assert "--population-size 1 is smaller than the 2 units (source_key) the task samples" in _err_line(capsys)
