"""The outcome stage in three steps: a task prepared once, each run scored on it, the runs aligned; and the
cited-questions values going through the same steps (run checks, missing-question policy)."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_evaluate import HITS, make_run, tiny_task  # noqa: E402

from ragcov_data.errors import QrelsRunMismatchError, RagcovError  # noqa: E402
from ragcov_data.eval.comparisons.cited import per_query_values  # noqa: E402
from ragcov_data.eval.outcomes.align import align  # noqa: E402
from ragcov_data.eval.outcomes.args import check_outcome_args  # noqa: E402
from ragcov_data.eval.outcomes.metrics import per_query  # noqa: E402
from ragcov_data.eval.outcomes.prepare import prepare_task  # noqa: E402
from ragcov_data.eval.outcomes.score import score_run  # noqa: E402
from ragcov_data.eval.outcomes.stage import outcomes, outcomes_many  # noqa: E402
from ragcov_data.runs import load_run  # noqa: E402


def _same_set(a, b) -> None:
    """Two OutcomeSets hold the same tables, queries, counts, notices and info."""
    assert a.names == b.names and a.cluster == b.cluster and a.n_dropped == b.n_dropped
    assert a.n_missing == b.n_missing and a.notices == b.notices
    pd.testing.assert_frame_equal(a.queries, b.queries)
    assert a.info.keys() == b.info.keys()
    np.testing.assert_array_equal(a.info["order"], b.info["order"])
    for name in a.names:
        ta, tb = a.tables[name], b.tables[name]
        pd.testing.assert_frame_equal(ta.per_query, tb.per_query)
        np.testing.assert_array_equal(ta.missing, tb.missing)
        assert ta.info == tb.info and ta.notices == tb.notices and ta.metric == tb.metric
        pd.testing.assert_frame_equal(ta.run, tb.run)


def _lacking(task, run, docs=("C",)):
    """``run`` without the rows of the queries of ``docs`` (a run that lacks some task queries)."""
    drop = set(task["queries"]["_id"][task["queries"]["doc_id"].isin(docs)])
    return run[~run["query-id"].isin(drop)].reset_index(drop=True)


@pytest.mark.parametrize("on_missing", ["zero", "intersect"])
def test_prepared_once_scored_twice_equals_outcomes_many(monkeypatch, on_missing):
    task = tiny_task()
    a, b = make_run(task, HITS, seed=0), _lacking(task, make_run(task, {"A": lambda i: False}, seed=1))
    ref = outcomes_many({"a": a, "b": b}, task, "ndcg@3", on_missing=on_missing, by="doc_type")

    prep_mod = importlib.import_module("ragcov_data.eval.outcomes.prepare")
    calls = _count_calls(monkeypatch, prep_mod, "load_task_frames", prep_mod.load_task_frames, "frames")
    prepared = prepare_task(task, "ndcg@3", by="doc_type")
    # each run read once (the run reader), checked and scored here, not by a wrapper
    scored = [score_run(prepared, load_run(a), "a"), score_run(prepared, load_run(b), "b")]
    got = align(prepared, scored, on_missing=on_missing)
    assert calls["frames"] == 1  # the task is read once for both runs
    _same_set(got, ref)
    # the values are the metric's on the kept queries, the lacking ones 0 (zero) or dropped (intersect)
    kept = got.query_ids
    assert len(kept) == (17 if on_missing == "zero" else 12)
    for name, run in (("a", a), ("b", b)):
        want = per_query(run, task["qrels"], "ndcg@3", query_ids=list(kept)).to_numpy()
        np.testing.assert_allclose(got.tables[name].values, want)
    assert got.n_missing == {"a": 0, "b": 5}
    if on_missing == "intersect":  # counts are of the kept queries, as when the stage was one function
        assert got.tables["a"].info["n_run_only"] == 5 and got.n_dropped == 5
        assert any("kept the 12 queries every run has; dropped 5 of 17" in n for n in got.notices)


def test_prepared_task_is_run_independent_and_reused():
    """A prepared task scores a run it has not seen, like a fresh outcomes() call; a mismatch and the
    missing-query policy are decided in align, not when scoring."""
    task = tiny_task()
    prepared = prepare_task(task, "hit@1", single=True)
    assert prepared.cluster == "doc_id" and len(prepared.queries) == 17 and prepared.sample is None
    for seed in (0, 3):
        run = make_run(task, HITS, seed=seed)
        one = align(prepared, [score_run(prepared, load_run(run), "run")])
        table = outcomes(run, task, "hit@1", name="run")
        pd.testing.assert_frame_equal(one.tables["run"].per_query, table.per_query)
        assert one.tables["run"].info == {k: v for k, v in table.info.items() if k != "order"}
    part = _lacking(task, make_run(task, HITS))
    scored = score_run(prepared, load_run(part), "run")  # scoring a run that lacks queries is not an error ...
    assert scored.scores.shape == (17,)
    with pytest.raises(QrelsRunMismatchError, match="has no rows for 5 of the task's 17 queries"):
        align(prepared, [scored])  # ... the policy in align is
    zero = align(prepared, [scored], on_missing="zero").tables["run"]
    assert zero.n_missing == 5 and zero.info["missing_queries"] == sorted(
        task["queries"]["_id"][task["queries"]["doc_id"] == "C"])
    with pytest.raises(RagcovError, match=r"`on_missing` must be one of \('error', 'zero'\)"):
        align(prepared, [scored], on_missing="intersect")  # one run: no intersect
    with pytest.raises(RagcovError, match="same prepared task"):
        align(prepare_task(task, "hit@1", query_ids=["A#0000", "B#0001"]), [scored])


def test_score_run_checks_the_run_and_align_checks_mismatch():
    task = tiny_task()
    prepared = prepare_task(task, "hit@1")
    with pytest.raises(RagcovError, match="takes a run already read"):
        score_run(prepared, "run.trec", "x")
    with pytest.raises(RagcovError, match=r"lacks columns \['corpus-id'\]"):
        score_run(prepared, pd.DataFrame({"query-id": ["A#0000"], "score": [1.0]}), "x")
    other = make_run(task, HITS).replace({"corpus-id": {"A#0001": "A#0009"}})  # a chunk past A's last: finer cut
    with pytest.raises(QrelsRunMismatchError, match="past their document's last chunk"):
        score_run(prepared, other, "x")
    a = score_run(prepared, make_run(task, HITS), "a")
    b = score_run(prepared, _lacking(task, make_run(task, HITS)), "b")
    with pytest.raises(QrelsRunMismatchError, match="`a` and `b` cover different queries: 5 only in a"):
        align(prepared, [a, b], on_mismatch="error")
    shared = align(prepared, [a, b], on_mismatch="intersect")
    assert len(shared.queries) == 12 and shared.info["n_dropped_mismatch"] == 5
    with pytest.raises(RagcovError, match="`on_mismatch` must be one of"):
        align(prepared, [a, b], on_mismatch="zero")


def test_one_check_of_the_policy_arguments():
    assert check_outcome_args("zero", "first") == "run"  # the alias resolved
    with pytest.raises(RagcovError, match=r"`on_missing` must be one of \('error', 'zero', 'intersect'\)"):
        check_outcome_args("drop", "trec_eval")
    with pytest.raises(RagcovError, match=r"must be one of \('error', 'zero'\); got 'intersect'"):
        check_outcome_args("intersect", "trec_eval", single=True)
    with pytest.raises(RagcovError, match="`tie_policy` must be one of"):
        check_outcome_args("error", "random")
    # every verb refuses the same way
    from ragcov_data.eval import compare, evaluate, leaderboard, misses

    task, run = tiny_task(), make_run(tiny_task(), HITS)
    for call in (lambda: evaluate(run, task, on_missing="drop"), lambda: compare(run, run, task, on_missing="drop"),
                 lambda: leaderboard({"a": run, "b": run}, task, on_missing="drop"),
                 lambda: misses(run, task, on_missing="drop"), lambda: outcomes_many({"a": run}, task, on_missing="drop")):
        with pytest.raises(RagcovError, match="`on_missing` must be one of"):
            call()


# ------------------------------------------------------------------------------ cited questions
@pytest.fixture()
def cited():
    """Two acts cut into chunks ``A#0000``..., two questions citing provisions in them."""
    corpus = pd.DataFrame({"_id": ["A#0000", "A#0001", "A#0002", "B#0000", "B#0001"],
                           "doc_id": ["A", "A", "A", "B", "B"], "chunk_index": [0, 1, 2, 0, 1]})
    citations = pd.DataFrame([
        {"query-id": "q1", "doc_id": "A", "status": "resolved", "chunks": ["A#0001"],
         "article_chunks": ["A#0000", "A#0001"]},
        {"query-id": "q2", "doc_id": "B", "status": "resolved", "chunks": ["B#0001"], "article_chunks": ["B#0001"]},
    ])
    queries = pd.DataFrame({"_id": ["q1", "q2"], "text": ["x", "y"]})
    run = pd.DataFrame({"query-id": ["q1", "q1", "q2"], "corpus-id": ["A#0001", "B#0000", "A#0002"],
                        "score": [2.0, 1.0, 1.0]})
    return {"corpus": corpus, "queries": queries, "citations": citations}, run


def test_cited_values_refuse_a_run_of_another_cut(cited):
    task, run = cited
    v = per_query_values(run, task, metrics=["recall@1", "hit@2", "ndcg@2"])
    assert v["recall@1"].to_dict() == {"q1": 1.0, "q2": 0.0} and v["hit@2"].to_dict() == {"q1": 1.0, "q2": 0.0}
    assert v.attrs["excluded"] == [] and v.attrs["granularity"] == "dispositivo"
    finer = run.replace({"corpus-id": {"A#0002": "A#0007"}})  # ids of a finer cut of act A
    with pytest.raises(QrelsRunMismatchError, match="past their document's last chunk"):
        per_query_values(finer, task, metrics=["recall@1"])
    outside = run.replace({"corpus-id": {"A#0002": "Z#0000"}})  # a chunk of an act the corpus lacks
    with pytest.raises(QrelsRunMismatchError, match="not in the task's corpus"):
        per_query_values(outside, task, metrics=["recall@1"])


def test_cited_values_apply_on_missing(cited):
    task, run = cited
    part = run[run["query-id"] == "q1"]
    zero = per_query_values(part, task, metrics=["recall@1", "ndcg@2"])  # default: scored 0, and said
    assert zero.loc["q2"].tolist() == [0.0, 0.0]
    assert any("lacked 1 of 2 queries (scored 0)" in n for n in zero.attrs["notices"])
    with pytest.raises(QrelsRunMismatchError, match=r"has no rows for 1 of the task's 2 queries \(first 3: \['q2'\]\)"):
        per_query_values(part, task, metrics=["recall@1"], on_missing="error")
    only = per_query_values(part, task, metrics=["recall@1"], query_ids=["q1"], on_missing="error")
    assert only["recall@1"].to_dict() == {"q1": 1.0}
    with pytest.raises(RagcovError, match="`on_missing` must be one of"):
        per_query_values(part, task, on_missing="intersect")


def test_a_run_made_on_a_document_sample_is_prepared_with(tmp_path, data_dir):
    """The sample a run records restricts the prepared queries when the run is given to prepare_task; a task
    prepared without it refuses the run rather than scoring the sample's run on the whole task."""
    import ragcov_data
    from ragcov_data.cli import main

    path = tmp_path / "bm25.parquet"
    assert main(["run", "--retriever", "bm25", "--data-dir", str(data_dir), "--sample-docs", "20", "--seed", "3",
                 "--out", str(path), "--quiet"]) == 0
    task = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), show_progress=False)
    run = load_run(path)
    prepared = prepare_task(task, "hit@1", runs={"bm25": run}, single=True)
    assert prepared.sample is not None and prepared.pop_info["population_clusters"] == 147
    assert set(prepared.queries["doc_id"]) <= set(task["queries"].to_pandas()["doc_id"])
    assert prepared.queries["doc_id"].nunique() == 20
    got = align(prepared, [score_run(prepared, run, "bm25")]).tables["bm25"]
    ref = outcomes(path, task, "hit@1", name="bm25")
    pd.testing.assert_frame_equal(got.per_query, ref.per_query)
    assert got.population_sizes == ref.population_sizes and got.notices == ref.notices
    with pytest.raises(QrelsRunMismatchError, match="made on a document sample .* not prepared for"):
        score_run(prepare_task(task, "hit@1", single=True), run, "bm25")


def test_the_stage_module_is_not_shadowed_by_its_function():
    """``import ragcov_data.eval.outcomes as o`` gives the stage (its module), and the public function keeps
    working under the same name: the module is callable as :func:`outcomes`."""
    import inspect
    import types

    import ragcov_data.eval as E
    import ragcov_data.eval.outcomes as o
    from ragcov_data.eval import outcomes as public
    from ragcov_data.eval.outcomes.stage import outcomes as fn

    assert isinstance(o, types.ModuleType) and o.__name__ == "ragcov_data.eval.outcomes"
    assert o.OutcomeTable is not None and o.align is not None and o.prepare_task is not None
    assert E.outcomes is o and public is o and callable(public)
    assert inspect.signature(public) == inspect.signature(fn)


def test_align_scores_each_run_once_on_the_intersect_path(monkeypatch):
    """On ``intersect`` the kept queries' values and counts come from the one scoring of each run: the
    metric is not computed again, and the counts equal the metric's own on the kept queries."""
    task = tiny_task()
    a, b = make_run(task, HITS, seed=0), _lacking(task, make_run(task, {"A": lambda i: False}, seed=1))
    metrics = importlib.import_module("ragcov_data.eval.outcomes.metrics")
    score_mod = importlib.import_module("ragcov_data.eval.outcomes.score")
    calls = _count_calls(monkeypatch, score_mod, "per_query", metrics.per_query, "n")
    prepared = prepare_task(task, "ndcg@3")
    scored = [score_run(prepared, load_run(a), "a"), score_run(prepared, load_run(b), "b")]
    assert calls["n"] == 2
    got = align(prepared, scored, on_missing="intersect")
    assert calls["n"] == 2  # scored once each, not again on the kept queries
    kept = list(got.query_ids)
    assert len(kept) == 12
    for name, run in (("a", a), ("b", b)):
        want = metrics.per_query(load_run(run), task["qrels"], "ndcg@3", query_ids=kept)
        np.testing.assert_allclose(got.tables[name].values, want.to_numpy())
        assert got.tables[name].info["n_run_only"] == want.attrs["n_run_only"]
        assert got.tables[name].info["n_no_relevant"] == want.attrs["n_no_relevant"]
    assert got.tables["a"].info["n_run_only"] == 5


def _count_calls(monkeypatch, module, attr: str, real, key: str) -> dict:
    """Replace ``module.attr`` by ``real`` wrapped to count its calls in the returned dict's ``key``."""
    calls = {key: 0}

    def count(*args, **kw):
        calls[key] += 1
        return real(*args, **kw)

    monkeypatch.setattr(module, attr, count)
    return calls
