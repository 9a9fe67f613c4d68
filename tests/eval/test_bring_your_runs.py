"""Runs from other toolkits, in every format, score exactly as pytrec_eval (trec_eval) scores them.

pytrec_eval holds scores as float32; the tied runs here use scores exact in float32 (multiples of
1/8), so its ties are ragcov's ties and the per-query values must agree to 1e-12.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import ragcov_data
from ragcov_data.baselines import BM25, TfIdf
from ragcov_data.errors import QrelsRunMismatchError
from ragcov_data.eval import compare, evaluate
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.runs import load_run, save_run

pytrec_eval = pytest.importorskip("pytrec_eval")  # a [test] dependency: installed wherever tests run

MEASURES = {"ndcg@10": "ndcg_cut_10", "p@10": "P_10", "r@10": "recall_10", "hit@1": "success_1",
            "hit@5": "success_5"}


@pytest.fixture(scope="module")
def juris(data_dir):
    return ragcov_data.load_dataset("juristcu", data_dir=str(data_dir), show_progress=False)


@pytest.fixture(scope="module")
def juris_runs(juris):
    bm = BM25(show_progress=False).index(juris["corpus"]).search(juris["queries"], k=30, show_progress=False)
    tf = TfIdf(show_progress=False).index(juris["corpus"]).search(juris["queries"], k=30, show_progress=False)
    return bm, tf


def _qrels_dict(task) -> dict:
    q = task["qrels"].to_pandas()
    out: dict = {}
    for qid, did, g in zip(q["query-id"], q["corpus-id"], q["score"]):
        out.setdefault(str(qid), {})[str(did)] = int(g)
    return out


def _trec_eval(run: pd.DataFrame, task, measure: str) -> dict:
    ev = pytrec_eval.RelevanceEvaluator(_qrels_dict(task), {measure.rsplit("_", 1)[0]})
    d: dict = {}
    for q, doc, s in zip(run["query-id"], run["corpus-id"], run["score"]):
        d.setdefault(str(q), {})[str(doc)] = float(s)
    return {q: v[measure] for q, v in ev.evaluate(d).items()}


def _assert_same(run_like, reference: pd.DataFrame, task, **kw):
    """Every metric of ragcov on `run_like` (any format) equals pytrec_eval on the reference run."""
    qids = task["queries"]["_id"]
    for metric, measure in MEASURES.items():
        ours = per_query(load_run(run_like, **kw), task, metric, query_ids=qids)
        ref = _trec_eval(reference, task, measure)
        assert set(ref) <= set(ours.index)
        np.testing.assert_allclose([ours[q] for q in ref], list(ref.values()), rtol=0, atol=1e-12, err_msg=metric)


def _tied(run: pd.DataFrame) -> pd.DataFrame:
    """Scores on a 1/8 grid: many exact ties, exact in float32 too."""
    t = run.copy()
    t["score"] = np.floor(t["score"] * 8 / t["score"].max()) / 8
    assert (t.groupby("query-id")["score"].transform(lambda s: s.duplicated(keep=False)).mean()) > 0.3
    return t


def test_trec_gzip_run_equals_pytrec_eval(juris, juris_runs, tmp_path):
    bm, _ = juris_runs
    path = save_run(bm, tmp_path / "bm25.trec.gz")
    _assert_same(path, bm, juris)


def test_tied_run_equals_pytrec_eval_not_corpus_order(juris, juris_runs, tmp_path):
    tied = _tied(juris_runs[0])
    # written with deliberately wrong ranks (reversed): trec_eval reads the scores, and so does ragcov
    shuffled = tied.sample(frac=1.0, random_state=0)
    shuffled["rank"] = np.arange(len(shuffled), 0, -1)
    path = tmp_path / "tied.trec"
    path.write_text("".join(f"{q}\tQ0\t{d}\t{r}\t{s!r}\tx\n" for q, d, r, s in
                            zip(shuffled["query-id"], shuffled["corpus-id"], shuffled["rank"], shuffled["score"])))
    _assert_same(path, tied, juris)
    # the file's own (wrong) ranks are one policy away, and give other numbers
    by_file = per_query(load_run(path), juris, "ndcg@10", tie_policy="run", query_ids=juris["queries"]["_id"])
    by_trec = per_query(load_run(path), juris, "ndcg@10", query_ids=juris["queries"]["_id"])
    assert not np.allclose(by_file.to_numpy(), by_trec.to_numpy())


def test_csv_run_with_other_names_and_order(juris, juris_runs, tmp_path):
    bm, _ = juris_runs
    df = pd.DataFrame({"DOC_ID": bm["corpus-id"], "extra": "x", "Score": bm["score"], "QUERY_ID": bm["query-id"]})
    path = tmp_path / "run.csv"
    df.to_csv(path, index=False)
    _assert_same(path, bm, juris)


def test_rank_only_run_like_published_juristcu_runs(juris, juris_runs, tmp_path):
    bm, _ = juris_runs
    df = pd.DataFrame({"QUERY_ID": bm["query-id"], "RANK": bm["rank"], "DOC_ID": bm["corpus-id"], "ENGINE": "bm25"})
    path = tmp_path / "bm25_rank_only.csv"
    df.to_csv(path, index=False)
    as_scores = bm.assign(score=-bm["rank"].astype(float))  # what trec_eval sees after converting ranks
    _assert_same(path, as_scores, juris)
    run = load_run(path)
    assert run.attrs["score_from"] == "rank"


def test_dict_runs_json_and_python(juris, juris_runs, tmp_path):
    _, tf = juris_runs
    d: dict = {}
    for q, doc, s in zip(tf["query-id"], tf["corpus-id"], tf["score"]):
        d.setdefault(q, {})[doc] = float(s)
    _assert_same(d, tf, juris)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(d))
    _assert_same(path, tf, juris)


def test_expected_tie_policy_is_the_mean_of_the_extreme_orders_bounds(juris, juris_runs):
    tied = _tied(juris_runs[0])
    qids = juris["queries"]["_id"]
    vals = {p: per_query(tied, juris, "ndcg@10", tie_policy=p, query_ids=qids).to_numpy()
            for p in ("pessimistic", "expected", "optimistic", "trec_eval")}
    assert (vals["pessimistic"] <= vals["expected"] + 1e-12).all()
    assert (vals["expected"] <= vals["optimistic"] + 1e-12).all()
    assert (vals["pessimistic"] <= vals["trec_eval"] + 1e-12).all() and (vals["trec_eval"] <= vals["optimistic"] + 1e-12).all()
    assert vals["pessimistic"].mean() < vals["optimistic"].mean()


# ---- bad input: clear errors or announced results ---------------------------------------------
def test_run_made_on_another_chunk_size_is_refused(data_dir):
    t100 = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), chunk_words=100, show_progress=False)
    t400 = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), chunk_words=400, show_progress=False)
    run = BM25(show_progress=False).index(t100["corpus"]).search(t100["queries"], k=5, exclude_self=True,
                                                                  show_progress=False)
    # the run records the corpus its retriever indexed: refused by that fingerprint
    with pytest.raises(QrelsRunMismatchError, match=r"made on another task.*2,312 chunks.*aneel_taesa/chunks-400"):
        evaluate(run, t400, on_missing="zero")
    run.attrs.pop("task_fingerprint")  # a run from elsewhere: refused by its ids
    with pytest.raises(QrelsRunMismatchError, match=r"corpus-id ids lie past their document's last chunk in this "
                                                    r"task \(first: .*finer cut"):
        evaluate(run, t400, on_missing="zero")


def test_juristcu_subset_documents_are_a_notice_not_an_error(juris, juris_runs):
    bm, _ = juris_runs
    outside = bm.copy()
    outside.loc[outside.index[:3], "corpus-id"] = ["999991", "999992", "999993"]
    rep = evaluate(outside, juris, "ndcg@10", n_resamples=199)
    notes = rep.info["notices"]
    assert any("3 run rows name documents outside the shipped corpus" in n and "subset" in n for n in notes)
    assert "notice: 3 run rows" in rep.summary()
    # and a dict task (no manifest, so the corpus counts as complete) refuses the same run
    plain = {k: juris[k].to_pandas() for k in ("corpus", "queries", "qrels")}
    with pytest.raises(QrelsRunMismatchError, match="3 of"):
        evaluate(outside, plain, "ndcg@10", n_resamples=199)


def test_queries_without_judgments_are_left_out_with_a_notice(juris, juris_runs):
    bm, tf = juris_runs
    plain = {k: juris[k].to_pandas() for k in ("corpus", "queries", "qrels")}
    q = plain["qrels"]
    plain["qrels"] = q[~q["query-id"].isin(["1", "2"])]
    rep = evaluate(bm, plain, "ndcg@10", n_resamples=199)
    assert len(rep.per_query) == 148 and not rep.per_query["query-id"].isin(["1", "2"]).any()
    assert any("2 of 150 queries have no judgment" in n for n in rep.info["notices"])
    # the mean is pytrec_eval's: it averages only the judged queries
    ref = _trec_eval(bm, {"qrels": datasets_like(plain["qrels"])}, "ndcg_cut_10")
    assert rep.per_query["value"].mean() == pytest.approx(np.mean(list(ref.values())), abs=1e-12)
    res = compare(bm, tf, plain, "ndcg@10", n_resamples=199)
    assert len(res.per_query) == 148 and any("no judgment" in n for n in res.info["notices"])


class datasets_like:
    """The sliver of a datasets.Dataset that _qrels_dict needs."""

    def __init__(self, df):
        self.df = df

    def to_pandas(self):
        return self.df


def test_non_integer_grades_in_table_qrels(juris, juris_runs):
    plain = {k: juris[k].to_pandas() for k in ("corpus", "queries", "qrels")}
    plain["qrels"] = plain["qrels"].astype({"score": object})
    plain["qrels"].loc[plain["qrels"].index[4], "score"] = "alto"
    with pytest.raises(ragcov_data.RagcovError, match=r"row 5 has score 'alto' \(not a number"):
        evaluate(juris_runs[0], plain, "ndcg@10", n_resamples=199)


def test_bom_and_gzip_task_tables_through_the_cli(juris, juris_runs, tmp_path):
    from ragcov_data.cli import main

    plain = {k: juris[k].to_pandas() for k in ("queries", "qrels")}
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "queries.jsonl").write_bytes(b"\xef\xbb\xbf" + plain["queries"].to_json(orient="records", lines=True,
                                                                                      force_ascii=False).encode())
    plain["qrels"].to_csv(folder / "qrels.csv", index=False)
    run = save_run(juris_runs[0], tmp_path / "bm25.trec.gz")
    out = tmp_path / "rep.json"
    assert main(["eval", str(run), "--data-dir", str(folder), "--metric", "ndcg@10", "--n-resamples", "199",
                 "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    ref = _trec_eval(juris_runs[0], juris, "ndcg_cut_10")
    assert np.mean([r["value"] for r in rep["per_query"]]) == pytest.approx(np.mean(list(ref.values())), abs=1e-12)


def test_distance_scored_run_needs_its_order_named(tmp_path, capsys):
    """Scores rising with rank in every query (a distance) were read as similarities and silently reversed;
    now the run is refused until --order says which column orders it, and each order gives its own result."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_evaluate import HITS, make_run, tiny_task

    from ragcov_data.cli import main

    task = tiny_task()
    for split, df in task.items():
        df.to_parquet(tmp_path / f"{split}.parquet")
    run = make_run(task, HITS)
    dist = tmp_path / "dist.trec"
    dist.write_text("".join(f"{q} Q0 {c} {r} {3.0 - s} t\n" for q, c, r, s in run.itertuples(index=False)))
    base = ["eval", str(dist), "--data-dir", str(tmp_path), "--n-resamples", "200"]
    assert main(base) == 2
    err = capsys.readouterr().err
    assert "scores rise with rank in 100% of queries (17 of 17; a distance?): pass --order rank" in err
    values = {}
    for order in ("rank", "score"):
        out = tmp_path / f"{order}.json"
        assert main([*base, "--order", order, "--json", str(out)]) == 0
        rep = json.loads(out.read_text())
        values[order] = [r for r in rep["estimates"] if r["estimator"] == "micro"][0]["estimate"]
    assert values["rank"] == pytest.approx(8 / 17)  # the run as ranked: its similarity twin's hit@1
    assert values["score"] == pytest.approx(9 / 17)  # higher distance first: the reversed run
    direct = evaluate(load_run(dist, order="rank"), task, "hit@1", n_resamples=200)
    assert direct.per_query["value"].sum() == 8
