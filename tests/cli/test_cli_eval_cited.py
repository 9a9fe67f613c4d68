"""`ragcov eval --dataset irpf`: recall@k means the share of cited provisions, as in `ragcov chunking` and the
API; the budgeted measures score through the same per-question code; trec_eval's chunk recall has its own name."""
from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

from ragcov_data.baselines import BM25
from ragcov_data.cli import main
from ragcov_data.eval import evaluate
from ragcov_data.eval.comparisons.cited import per_query_values
from ragcov_data.runs import save_run


@pytest.fixture(scope="module")
def irpf(data_dir, tmp_path_factory):
    from ragcov_data.tasks.sources import resolve_task

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = resolve_task(dataset="irpf", data_dir=str(data_dir), chunk_words=None, query_words=None).task
    corpus, queries = ds["corpus"].to_pandas(), ds["queries"].to_pandas()
    run = BM25(show_progress=False).index(corpus).search(queries[["_id", "text"]], k=100, show_progress=False)
    path = tmp_path_factory.mktemp("irpf") / "bm25.trec"
    save_run(run, path)
    task = {"corpus": corpus, "queries": queries, "qrels": ds["qrels"].to_pandas(),
            "citations": ds["citations"].to_pandas(), "documents": ds["documents"].to_pandas()}
    return ds, task, run, path


def _per_query(path):
    got = json.loads(path.read_text())
    return got, {r["query-id"]: r["value"] for r in got["per_query"]}


def test_eval_recall_is_provision_recall(irpf, data_dir, tmp_path, capsys):
    ds, task, run, path = irpf
    from ragcov_data.tasks.record import manifest_of

    gran = manifest_of(ds)["config"]["granularity"]
    ref = per_query_values(run, task, metrics=["recall@10", "recall@1000w", "iou@1000w"], granularity=gran)
    for metric in ("recall@10", "r@10", "recall@1000w", "iou@1000w"):
        out = tmp_path / f"{metric}.json"
        assert main(["eval", str(path), "--dataset", "irpf", "--data-dir", str(data_dir), "--metric", metric,
                     "--n-resamples", "999", "--json", str(out)]) == 0
        text = capsys.readouterr().out
        name = metric.replace("r@", "recall@") if metric.startswith("r@") else metric
        assert f"{name} = share of" in text or f"{name} = characters" in text  # the output says what it is
        got, pq = _per_query(out)
        assert len(pq) == len(ref) == 174
        col = ref[name]
        assert all(pq[q] == pytest.approx(col[q], abs=1e-12) for q in col.index)
    # the API says the same
    rep = evaluate(run, ds, "recall@1000w", n_resamples=999)
    assert rep.per_query.set_index("query-id")["value"].to_dict() == pytest.approx(ref["recall@1000w"].to_dict())


def test_chunk_recall_is_trec_eval(irpf, data_dir, tmp_path, capsys):
    import pytrec_eval

    ds, task, run, path = irpf
    out = tmp_path / "chunk.json"
    assert main(["eval", str(path), "--dataset", "irpf", "--data-dir", str(data_dir), "--metric", "chunk_recall@10",
                 "--n-resamples", "999", "--json", str(out)]) == 0
    capsys.readouterr()
    _, pq = _per_query(out)
    qrels = {}
    for q, d, g in zip(task["qrels"]["query-id"], task["qrels"]["corpus-id"], task["qrels"]["score"]):
        qrels.setdefault(str(q), {})[str(d)] = int(g)
    trec = {}
    for q, d, s in zip(run["query-id"], run["corpus-id"], run["score"]):
        trec.setdefault(str(q), {})[str(d)] = float(s)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recall_10"}).evaluate(trec)
    assert len(pq) == len(qrels)
    assert all(pq[q] == pytest.approx(ref[q]["recall_10"], abs=1e-12) for q in pq)
    # and it is not the provision-level number
    prov = per_query_values(run, task, metrics=["recall@10"])["recall@10"]
    assert any(abs(pq[q] - prov[q]) > 1e-6 for q in prov.index)


def test_hit_is_provision_hit_and_chunk_hit_is_the_qrels(irpf):
    from ragcov_data.eval.outcomes.metrics import per_query

    ds, task, run, path = irpf
    prov = per_query_values(run, task, metrics=["hit@1"])["hit@1"]
    rep = evaluate(run, ds, "hit@1", n_resamples=999)
    got = rep.per_query.set_index("query-id")["value"]
    assert len(got) == len(prov) and all(got[q] == prov[q] for q in prov.index)
    assert any(n.startswith("hit@1 = 1 if a chunk in the top 1 chunks overlaps a cited provision") for n in
               rep.info["notices"])
    chunk = evaluate(run, ds, "chunk_hit@1", n_resamples=999).per_query.set_index("query-id")["value"]
    ref = per_query(run, task["qrels"], "hit@1", query_ids=list(chunk.index))
    assert chunk.to_dict() == ref.to_dict()


def test_eval_cited_bad_input(irpf, data_dir, capsys):
    ds, task, run, path = irpf
    assert main(["eval", str(path), "--dataset", "irpf", "--data-dir", str(data_dir), "--metric", "recall@10",
                 "--tie-policy", "pessimistic"]) == 2
    assert "drop the tie policy 'pessimistic'" in capsys.readouterr().err
    with pytest.raises(Exception, match="budgeted measure"):
        evaluate(run, {k: v for k, v in task.items() if k != "citations"}, "recall@1000w")
    short = run.groupby("query-id").head(3)  # three chunks rarely fill 2,000 words
    rep = evaluate(short, ds, "recall@2000w", n_resamples=999)
    assert any("too few chunks to fill the 2,000-word context" in n for n in rep.info["notices"])
    assert isinstance(rep.per_query, pd.DataFrame)


def test_leaderboard_on_a_cited_task_scores_the_cited_provisions(irpf):
    from ragcov_data.baselines import TfIdf
    from ragcov_data.eval import leaderboard

    ds, task, run, path = irpf
    other = TfIdf(show_progress=False).index(task["corpus"]).search(task["queries"][["_id", "text"]], k=100,
                                                                    show_progress=False)
    for metric in ("recall@10", "iou@1000w"):
        lb = leaderboard({"bm25": run, "tfidf": other}, ds, metric=metric, n_resamples=999, estimator="micro")
        est = lb.systems[lb.systems["group"] == "__all__"].set_index("name")["estimate"]
        for name, r in (("bm25", run), ("tfidf", other)):
            ref = per_query_values(r, task, metrics=[metric])[metric]
            assert est[name] == pytest.approx(ref.mean(), abs=1e-12) and lb.n_queries == len(ref)
        assert lb.metric == metric and lb.judged_k is None
        assert any(n.startswith(f"{metric} = ") for n in lb.info["notices"])
