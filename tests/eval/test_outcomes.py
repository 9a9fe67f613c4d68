"""The outcome stage: one path from a run to its per-query outcomes for every verb, and the bad inputs it names."""
from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_misses as tm  # noqa: E402
from test_evaluate import HITS, make_run, tiny_task  # noqa: E402

from ragcov_data.errors import QrelsRunMismatchError  # noqa: E402
from ragcov_data.eval import compare, evaluate, leaderboard, misses  # noqa: E402
from ragcov_data.eval.outcomes.stage import outcomes, outcomes_many
from ragcov_data.eval.outcomes.table import OutcomeTable  # noqa: E402
from ragcov_data.tasks.record import Task  # noqa: E402

ALL_RUNS = {"A": lambda i: True, "B": lambda i: True, "C": lambda i: True, "D": lambda i: True,
            "E": lambda i: True}


def _task_with_manifest(**config) -> Task:
    t = tiny_task()
    return Task(t["corpus"], t["queries"], t["qrels"], {"config": {"chunk_words": 100, "query_words": 20, **config}})


# ---------------------------------------------------------------------------------- the one table
def test_outcome_table_equals_evaluate_and_feeds_every_verb():
    task = tiny_task()
    run = make_run(task, HITS)
    table = outcomes(run, task, "hit@1")
    assert isinstance(table, OutcomeTable) and table.name == "run" and table.n_missing == 0
    rep = evaluate(run, task, n_resamples=199)
    pd.testing.assert_frame_equal(table.per_query, rep.per_query)
    other = make_run(task, ALL_RUNS)
    many = outcomes_many({"a": run, "b": other}, task, "hit@1")
    assert many.matrix().shape == (2, 17)
    np.testing.assert_array_equal(many.tables["a"].values, table.values)
    cmp = compare(run, other, task, n_resamples=199)
    np.testing.assert_array_equal(cmp.per_query["diff"].to_numpy(), many.matrix()[0] - many.matrix()[1])
    board = leaderboard({"a": run, "b": other}, task, metric="hit@1", n_resamples=199)
    est = board.systems.set_index("name")["estimate"]
    assert est["a"] == pytest.approx(table.values.mean()) and est["b"] == pytest.approx(1.0)


def test_task_frames_and_qrels_are_prepared_once_for_many_runs(monkeypatch):
    import importlib

    lists = importlib.import_module("ragcov_data.eval.outcomes.metrics._lists")
    stage = importlib.import_module("ragcov_data.eval.outcomes.prepare")  # where the task is read (prepare_task)

    calls = {"frames": 0, "prepare": 0}
    frames, prepare = stage.load_task_frames, lists.prepare_qrels

    def count_frames(*a, **k):
        calls["frames"] += 1
        return frames(*a, **k)

    def count_prepare(q):
        if not isinstance(q, lists.PreparedQrels):
            calls["prepare"] += 1
        return prepare(q)

    monkeypatch.setattr(stage, "load_task_frames", count_frames)
    monkeypatch.setattr(lists, "prepare_qrels", count_prepare)
    task = tiny_task()
    runs = {f"r{i}": make_run(task, HITS, seed=i) for i in range(5)}
    many = outcomes_many(runs, task, "ndcg@10")
    assert calls == {"frames": 1, "prepare": 1} and many.matrix().shape == (5, 17)


def test_sampled_run_gets_one_interval_from_eval_leaderboard_and_compare(tmp_path, data_dir, capsys):
    """A run made with --sample-docs: ``eval`` and ``leaderboard`` print the same interval for it (both
    restricted to the sample and corrected for the finite population), and ``compare`` corrects too."""
    from ragcov_data.cli import main

    runs = {}
    for name in ("bm25", "tfidf"):
        runs[name] = tmp_path / f"{name}.parquet"
        assert main(["run", "--retriever", name, "--data-dir", str(data_dir), "--sample-docs", "25", "--seed", "2",
                     "--out", str(runs[name]), "--quiet"]) == 0
    ev = tmp_path / "eval.json"
    assert main(["eval", str(runs["bm25"]), "--data-dir", str(data_dir), "--n-resamples", "999",
                 "--json", str(ev)]) == 0
    rep = json.loads(ev.read_text())
    assert rep["population_clusters"] == 147
    # on a sampled task the recommended micro row is known_sizes (the census's document sizes in the variance)
    row = next(e for e in rep["estimates"] if e["estimator"] == "micro" and e["recommended"])
    assert row["method"] == "known_sizes"
    lb = tmp_path / "board.json"
    assert main(["leaderboard", str(runs["bm25"]), str(runs["tfidf"]), "--data-dir", str(data_dir),
                 "--n-resamples", "999", "--estimator", "micro", "--json", str(lb)]) == 0
    board = json.loads(lb.read_text())
    sys_row = next(s for s in board["systems"] if s["name"] == "bm25" and s["group"] == "__all__")
    assert sys_row["method"] == "known_sizes"
    assert (sys_row["low"], sys_row["high"]) == pytest.approx((row["low"], row["high"]), abs=1e-12)
    assert sys_row["estimate"] == pytest.approx(row["estimate"], abs=1e-12)
    assert board["info"]["population_clusters"] == 147
    assert any("finite-population correction" in n for n in board["info"]["notices"])
    # compare: the paired difference reads the same sample; its micro SE is not shrunk (the correction is for
    # the macro estimator only: with it micro CR2 under-covers)
    import ragcov_data

    task = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), show_progress=False)
    fpc = compare(str(runs["bm25"]), str(runs["tfidf"]), task, methods=["cr2"], n_resamples=199)
    a = evaluate(str(runs["bm25"]), task, methods=["cr2"], fpc=False, n_resamples=199).per_query["value"].to_numpy()
    b = evaluate(str(runs["tfidf"]), task, methods=["cr2"], fpc=False, n_resamples=199).per_query["value"].to_numpy()
    from ragcov_data.eval import interval

    raw = interval(a - b, fpc.per_query["cluster"].to_numpy(), "micro", "cr2")
    se = fpc.estimates.set_index(["estimator", "method"]).loc[("micro", "cr2"), "se"]
    assert se == pytest.approx(raw.se, rel=1e-10)
    assert "fpc_ignored" in fpc.estimates.set_index(["estimator", "method"]).loc[("micro", "cr2"), "flags"]
    assert len(fpc.per_query) == len(a) and fpc.info["population_clusters"] == 147
    # misses scores the same sampled queries (it did not restrict to the sample before the outcome stage)
    assert misses(str(runs["bm25"]), task).n_queries == len(a)


# ---------------------------------------------------------------------------------- zeroed queries
def test_zeroed_queries_are_counted_in_every_output():
    task = tiny_task()
    run = make_run(task, HITS)
    part = run[~run["query-id"].isin(["A#0000", "B#0001", "C#0002"])]
    rep = evaluate(part, task, on_missing="zero", methods=["cr2"], n_resamples=199)
    assert rep.info["n_missing_queries"] == 3 and sorted(rep.info["missing_queries"]) == ["A#0000", "B#0001", "C#0002"]
    assert "run 'run' lacked 3 of 17 queries (scored 0)" in rep.summary()
    cmp = compare(part, part, task, on_missing="zero", n_resamples=199)
    assert cmp.info["n_missing_queries"] == {"run_a": 3, "run_b": 3}
    assert "run 'run_a' lacked 3 of 17 queries (scored 0)" in cmp.summary()
    full = make_run(task, ALL_RUNS)
    board = leaderboard({"cut": part, "full": full}, task, metric="hit@1", by="doc_type", n_resamples=199,
                        on_missing="zero")
    s = board.systems.set_index(["group", "name"])["n_missing"]
    assert s[("__all__", "cut")] == 3 and s[("res", "cut")] == 2 and s[("desp", "cut")] == 1
    assert s[("__all__", "full")] == 0
    assert board.groups["res"]["n_missing"] == {"cut": 2} and board.groups["__all__"]["n_missing"] == {"cut": 3}
    note = next(n for n in board.info["notices"] if "lacked" in n)
    assert note == "run 'cut' lacked 3 of 17 queries (scored 0); by group: res 2 of 7, desp 1 of 10."
    assert note in board.summary() and note in board.to_markdown()


def test_misses_leave_zeroed_queries_out_of_the_shares():
    run = tm.tiny_run()
    base = misses(run, tm.tiny_task(), **tm.SMALL)
    cut = run[run["query-id"] != "E#0001"]
    res = misses(cut, tm.tiny_task(), on_missing="zero", **tm.SMALL)
    assert res.n_misses == base.n_misses + 1 and res.info["n_zeroed_excluded"] == 1
    # the shares are over the misses with a retrieved chunk: the same as without the lacking query
    pd.testing.assert_series_equal(res.flags["share"], base.flags["share"])
    assert (res.flags["n_misses"] == base.n_misses).all()
    text = res.summary()
    assert "run 'run' lacked 1 of 10 queries (scored 0)" in text
    assert "1 of the 8 misses are queries run 'run' lacked (scored 0): they have no retrieved chunk, so they are " \
           "left out of the shares (over the other 7)" in text


def test_eval_json_with_zeroed_queries_is_said_by_coverage_and_plan(tmp_path, capsys):
    from ragcov_data.cli import main

    task = tiny_task()
    part = make_run(task, HITS)
    part = part[part["query-id"] != "A#0000"]
    path = tmp_path / "ev.json"
    evaluate(part, task, on_missing="zero", n_resamples=199).to_json(path)
    assert main(["coverage", str(path), "--k", "3", "--reps", "20", "--methods", "t", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "note: ev.json: run 'run' lacked 1 of 17 queries (scored 0)" in out


# ---------------------------------------------------------------------------------- task parameters
def test_run_made_at_another_chunk_size_is_refused_naming_both_values():
    task = _task_with_manifest()
    run = make_run(tiny_task(), HITS)
    run.attrs.update(chunk_words=120, dataset="aneel_taesa")
    msg = (r"run '\w+': run made at chunk_words=120, task has chunk_words=100: evaluate it on its own task "
           r"\(--chunk-words 120\)")
    mt = tm.tiny_task()
    mtask = Task(mt["corpus"], mt["queries"], mt["qrels"], {"config": {"chunk_words": 100}})
    mrun = tm.tiny_run()
    mrun.attrs.update(chunk_words=120)
    for call in (lambda: evaluate(run, task, on_missing="zero"), lambda: compare(run, run, task),
                 lambda: leaderboard({"x": run, "y": run}, task, metric="hit@1"), lambda: misses(mrun, mtask)):
        with pytest.raises(QrelsRunMismatchError, match=msg) as err:
            call()
        assert "on-missing" not in str(err.value) and "on_missing" not in str(err.value)
    run.attrs.update(chunk_words=100, chunking="dispositivo")
    with pytest.raises(QrelsRunMismatchError, match=r"run made at chunking=dispositivo, task has chunking=words: "
                                                    r"evaluate it on its own task \(--chunking dispositivo\)"):
        evaluate(run, task)
    run.attrs.update(chunking="words")
    assert evaluate(run, task, n_resamples=199).info["n_missing_queries"] == 0  # same parameters: scored


def test_cli_run_at_120_words_scored_on_the_100_word_task(tmp_path, data_dir, capsys):
    from ragcov_data.cli import main

    run = tmp_path / "r120.parquet"
    assert main(["run", "--retriever", "tfidf", "--data-dir", str(data_dir), "--chunk-words", "120", "--out",
                 str(run), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["eval", str(run), "--data-dir", str(data_dir), "--on-missing", "zero"]) == 2
    err = capsys.readouterr().err
    assert "run made at chunk_words=120, task has chunk_words=100: evaluate it on its own task (--chunk-words 120)" \
        in err and "--on-missing zero" not in err and len(err.strip().splitlines()) == 1


def test_missing_queries_of_a_run_from_another_task_do_not_suggest_zero():
    task = tiny_task()
    run = make_run(task, HITS)
    run = run[run["query-id"] != "A#0000"].copy()
    extra = run.iloc[:2].copy()
    extra["query-id"] = ["Z#0000", "Z#0000"]
    other = pd.concat([run, extra], ignore_index=True)
    with pytest.raises(QrelsRunMismatchError, match=r"has no rows for 1 of the task's 17 queries .* and 1 queries the "
                                                    r"task lacks: it was made on another task") as err:
        evaluate(other, task)
    assert "zero" not in str(err.value)


# ---------------------------------------------------------------------------------- Unicode ids
def _accented_task():
    docs = {"ação": 3, "índice": 3, "três": 2}
    rows = [(f"{d}#{i:04d}", d, i) for d, n in docs.items() for i in range(n)]
    corpus = pd.DataFrame(rows, columns=["_id", "doc_id", "chunk_index"])
    queries = corpus[["_id", "doc_id"]].assign(chunk_id=corpus["_id"])
    qrels = pd.DataFrame([(q, c, 1) for q, d in zip(corpus["_id"], corpus["doc_id"])
                          for c, d2 in zip(corpus["_id"], corpus["doc_id"]) if d2 == d and c != q],
                         columns=["query-id", "corpus-id", "score"])
    task = {"corpus": corpus, "queries": queries, "qrels": qrels}
    run = pd.DataFrame([(q, c, 1, 1.0) for q, c in qrels.drop_duplicates("query-id")[["query-id", "corpus-id"]]
                        .itertuples(index=False)], columns=["query-id", "corpus-id", "rank", "score"])
    return task, run


def test_ids_in_another_unicode_normalisation_are_named_as_such():
    task, run = _accented_task()
    assert evaluate(run, task, n_resamples=199).per_query["value"].mean() == 1.0
    nfd = run.assign(**{"corpus-id": [unicodedata.normalize("NFD", x) for x in run["corpus-id"]]})
    msg = r"document ids differ from the task's only by Unicode normalisation \(the run writes them in NFD, the task in NFC"
    with pytest.raises(QrelsRunMismatchError, match=msg) as e:
        evaluate(nfd, task)
    assert "normalise the run's ids to NFC" in str(e.value) and "another task" not in str(e.value)
    nfd_q = run.assign(**{"query-id": [unicodedata.normalize("NFD", x) for x in run["query-id"]]})
    with pytest.raises(QrelsRunMismatchError, match=r"query ids differ from the task's only by Unicode normalisation"):
        evaluate(nfd_q, task, on_missing="zero")
    with pytest.raises(QrelsRunMismatchError, match="Unicode normalisation"):
        leaderboard({"a": run, "b": nfd_q}, task, metric="hit@1", on_missing="zero")


# ---------------------------------------------------------------------------------- ties
def test_all_tied_runs_are_noticed_wherever_scored():
    task = tiny_task()
    flat = make_run(task, HITS).assign(score=0.0)
    say = "run 'flat': every query's candidates share one score; order comes from the tie policy alone"
    t = outcomes(flat, task, name="flat")
    assert t.info["all_tied_share"] == 1.0 and t.info["top_tie_share"] == 1.0 and any(say in n for n in t.notices)
    rep = evaluate(flat, task, n_resamples=199)
    assert rep.info["all_tied_share"] == 1.0
    assert "run 'run': every query's candidates share one score" in rep.summary()
    good = make_run(task, HITS)
    assert evaluate(good, task, n_resamples=199).info["all_tied_share"] == 0.0
    cmp = compare(flat, good, task, n_resamples=199)
    assert any("run 'run_a': every query's" in n for n in cmp.info["notices"])
    board = leaderboard({"flat": flat, "good": good}, task, metric="hit@1", n_resamples=199)
    assert say in board.summary() and board.info["all_tied_share"] == {"flat": 1.0, "good": 0.0}
    mrun = tm.tiny_run().assign(score=0.0)
    res = misses(mrun, tm.tiny_task(), **tm.SMALL)
    assert any("every query's candidates share one score" in n for n in res.info["notices"])
    # most, not all: the share is said
    part = good.copy()
    part.loc[part["query-id"].isin(part["query-id"].unique()[:12]), "score"] = 1.0
    assert "71% of the queries' candidates share one score" in evaluate(part, task, n_resamples=199).summary()


def test_rank_only_runs_are_not_called_tied():
    task = tiny_task()
    run = make_run(task, HITS).drop(columns="score")
    t = outcomes(run, task)
    assert t.info["all_tied_share"] == 0.0 and not any("share one score" in n for n in t.notices)


def test_tie_profile_by_hand_and_equal_to_the_run_module_share():
    from ragcov_data.eval.outcomes.table import tie_profile

    run = pd.DataFrame({
        "query-id": ["q1", "q1", "q1", "q2", "q2", "q3", "q3", "q3", "q4"],
        "corpus-id": ["a", "b", "c", "a", "b", "a", "b", "c", "a"],
        "score": [2.0, 2.0, 1.0, 3.0, 1.0, 5.0, 5.0 * (1 + 1e-12), 5.0, 1.0],
    })
    # q1: best score shared; q3: every candidate shares one score (within the tie tolerance); q4: one candidate
    assert tie_profile(run, 4) == (0.5, 0.25)
    assert tie_profile(run, 8) == (0.25, 0.125)  # shares of the task's queries


def test_unjudged_task_queries_in_a_run_are_not_taken_for_another_task():
    task = tiny_task()
    task["qrels"] = task["qrels"][task["qrels"]["query-id"] != "E#0002"]  # a task query without judgments
    run = make_run(task, HITS)
    part = run[run["query-id"] != "A#0000"]  # still holds E#0002's rows: a task query, not another task's
    with pytest.raises(QrelsRunMismatchError, match=r"no rows for 1 of the task's 16 queries .*on_missing='zero'"):
        evaluate(part, task)
