"""evaluate() and compare() on a tiny self-retrieval task and a JurisTCU-like iid task."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import QrelsRunMismatchError, RagcovError
from ragcov_data.eval import compare, evaluate, interval
from ragcov_data.eval.estimates import _kernels

SIZES = {"A": 4, "B": 3, "C": 5, "D": 2, "E": 3}


def tiny_task():
    rows = [(f"{d}#{i:04d}", d, i, t) for t, (d, n) in enumerate(SIZES.items()) for i in range(n)]
    corpus = pd.DataFrame(rows, columns=["_id", "doc_id", "chunk_index", "type"])
    corpus["doc_type"] = np.where(corpus["doc_id"].isin(["A", "B"]), "res", "desp")
    queries = corpus[["_id", "doc_id", "doc_type"]].copy()
    queries["chunk_id"] = queries["_id"]
    queries["text"] = "q"
    qrels = pd.DataFrame([(q, c, 1) for q, d in zip(corpus["_id"], corpus["doc_id"])
                          for c, d2 in zip(corpus["_id"], corpus["doc_id"]) if d2 == d and c != q],
                         columns=["query-id", "corpus-id", "score"])
    return {"corpus": corpus, "queries": queries, "qrels": qrels}


def make_run(task, hit_docs, seed=0):
    """Rank 1 is a sibling chunk for queries of ``hit_docs`` (first chunks), else a chunk of another doc."""
    rng = np.random.default_rng(seed)
    corpus = task["corpus"]
    rows = []
    for qid, doc in zip(task["queries"]["_id"], task["queries"]["doc_id"]):
        sib = corpus["_id"][(corpus["doc_id"] == doc) & (corpus["_id"] != qid)].iloc[0]
        other = corpus["_id"][corpus["doc_id"] != doc].iloc[int(rng.integers(0, 5))]
        hit = hit_docs.get(doc, lambda i: False)(int(qid[-4:]))
        first, second = (sib, other) if hit else (other, sib)
        rows += [(qid, first, 1, 2.0), (qid, second, 2, 1.0)]
    return pd.DataFrame(rows, columns=["query-id", "corpus-id", "rank", "score"])


HITS = {"A": lambda i: True, "B": lambda i: i < 1, "C": lambda i: i % 2 == 0, "D": lambda i: False}


def test_evaluate_self_retrieval_end_to_end():
    task = tiny_task()
    run = make_run(task, HITS)
    rep = evaluate(run, task, "hit@1", n_resamples=300)
    expected = {"A": 4, "B": 1, "C": 3, "D": 0, "E": 0}
    assert list(rep.per_query.columns) == ["query-id", "cluster", "value"]
    assert rep.per_document.set_index("cluster")["sum"].to_dict() == expected
    assert rep.per_document.set_index("cluster")["n"].to_dict() == SIZES
    assert rep.cluster == "doc_id" and rep.metric == "hit@1" and rep.tie_policy == "trec_eval"
    e = rep.estimates.set_index(["estimator", "method"])
    # every applicable pair present, naive ones marked
    pairs = {(est, m) for est in _kernels.ESTIMATORS for m in _kernels.valid_methods(est)}
    assert set(e.index) == pairs
    assert e.loc[("micro", "wald_iid"), "naive"] and not e.loc[("micro", "cr2"), "naive"]
    # estimates equal interval() on the per-query values
    r = interval(rep.per_query["value"], rep.per_query["cluster"], "micro", "cr2")
    assert e.loc[("micro", "cr2"), "estimate"] == pytest.approx(8 / 17)
    assert e.loc[("micro", "cr2"), ["se", "df", "low", "high"]].tolist() == pytest.approx([r.se, r.df, r.low, r.high])
    assert e.loc[("macro", "t"), "estimate"] == pytest.approx(np.mean([1, 1 / 3, 3 / 5, 0, 0]))
    d = rep.diagnostics
    assert d["share_never_hit"] == pytest.approx(2 / 5)
    for key in ("icc", "deff", "cv", "mean_size", "n_eff", "lag1_autocorr", "quantiles"):
        assert key in d
    js = json.loads(rep.to_json())
    assert js["metric"] == "hit@1" and len(js["estimates"]) == len(pairs)
    assert "(naive)" in rep.summary("all") and "(naive)" not in rep.summary()  # default: what `ragcov eval` shows


def test_evaluate_own_chunk_rows_removed():
    task = tiny_task()
    run = make_run(task, HITS)
    own = pd.DataFrame({"query-id": task["queries"]["_id"], "corpus-id": task["queries"]["_id"],
                        "rank": 0, "score": 9.0})
    rep = evaluate(pd.concat([own, run]), task, n_resamples=100, methods=["cr2"])
    base = evaluate(run, task, n_resamples=100, methods=["cr2"])
    assert rep.info["n_self_rows_removed"] == 17
    assert rep.per_query["value"].tolist() == base.per_query["value"].tolist()


def test_evaluate_by_group_and_iid_cluster_default():
    task = tiny_task()
    run = make_run(task, HITS)
    rep = evaluate(run, task, by="doc_type", methods=["cr2", "t"], n_resamples=100)
    assert set(rep.estimates["group"]) == {"__all__", "res", "desp"}
    res = rep.estimates[(rep.estimates["group"] == "res") & (rep.estimates["method"] == "cr2")
                        & (rep.estimates["estimator"] == "micro")].iloc[0]
    assert res["estimate"] == pytest.approx(5 / 7) and res["n_clusters"] == 2
    # without doc_id the query is the unit (JurisTCU)
    q = task["queries"].drop(columns=["doc_id", "chunk_id"])
    rep2 = evaluate(run, {**task, "queries": q}, methods=["cr2"], n_resamples=100)
    assert rep2.cluster == "_id" and len(rep2.per_document) == 17
    # one query a cluster: a single estimator, the mean (CR2 = t on N - 1 df)
    mean = rep2.estimates.set_index(["estimator", "method"]).loc[("mean", "cr2")]
    assert mean["df"] == pytest.approx(16)


def test_evaluate_stratified_design():
    task = tiny_task()
    run = make_run(task, HITS)
    rep = evaluate(run, task, strata="doc_type", n_resamples=100)
    assert set(rep.estimates["method"]) == {"t"}
    micro = rep.estimates.set_index("estimator").loc["micro"]
    assert micro["estimate"] == pytest.approx(np.mean([5 / 7, 3 / 10]))


def test_evaluate_missing_queries_and_bad_inputs():
    task = tiny_task()
    run = make_run(task, HITS)
    part = run[~run["query-id"].isin(["A#0000", "B#0001"])]
    with pytest.raises(QrelsRunMismatchError, match=r"no rows for 2 of the task's 17 queries .*A#0000"):
        evaluate(part, task)
    rep = evaluate(part, task, on_missing="zero", methods=["cr2"])
    assert rep.info["n_missing_queries"] == 2
    assert rep.per_query.set_index("query-id").loc["A#0000", "value"] == 0
    with pytest.raises(RagcovError, match="the run has no rows"):
        evaluate(run.iloc[:0], task)
    with pytest.raises(RagcovError, match=r"unknown method\(s\) \['cr3'\] in `methods`; valid: "):
        evaluate(run, task, methods=["cr3"])
    with pytest.raises(RagcovError, match=r"`cluster='source_key'` is not a column"):
        evaluate(run, task, cluster="source_key")
    with pytest.raises(RagcovError, match="`on_missing` must be one of"):
        evaluate(part, task, on_missing="skip")
    with pytest.raises(RagcovError, match="no 'qrels' split"):
        evaluate(run, {"queries": task["queries"]})


def test_evaluate_reads_trec_run_file(tmp_path):
    task = tiny_task()
    run = make_run(task, HITS)
    path = tmp_path / "run.trec"
    path.write_text("".join(f"{q} Q0 {c} {r} {s} test\n" for q, c, r, s in run.itertuples(index=False)))
    a = evaluate(path, task, methods=["cr2"]).estimates
    b = evaluate(run, task, methods=["cr2"]).estimates
    assert a["estimate"].tolist() == pytest.approx(b["estimate"].tolist())


def test_compare_paired_differences():
    task = tiny_task()
    ra = make_run(task, HITS)
    rb = make_run(task, {"A": lambda i: True, "B": lambda i: True, "C": lambda i: False})
    cmp = compare(ra, rb, task, n_resamples=200)
    a = evaluate(ra, task, methods=["cr2"]).per_query["value"].to_numpy()
    b = evaluate(rb, task, methods=["cr2"]).per_query["value"].to_numpy()
    e = cmp.estimates.set_index(["estimator", "method"])
    assert e.loc[("micro", "cr2"), "estimate"] == pytest.approx((a - b).mean())
    r = interval(a - b, cmp.per_query["cluster"], "micro", "cr2")
    assert e.loc[("micro", "cr2"), "se"] == pytest.approx(r.se)
    # documents A, D, E identical rates (A all hit, D/E none); B and C differ
    assert cmp.share_docs_tied == pytest.approx(3 / 5)
    assert (cmp.wins, cmp.losses, cmp.ties) == (3, 2, 12)
    assert json.loads(cmp.to_json())["share_docs_tied"] == pytest.approx(0.6)


def test_compare_query_set_mismatch():
    task = tiny_task()
    ra = make_run(task, HITS)
    rb = ra[ra["query-id"] != "C#0002"]
    with pytest.raises(QrelsRunMismatchError, match=r"1 only in run_a .*C#0002.*on_mismatch='intersect'"):
        compare(ra, rb, task)
    cmp = compare(ra, rb, task, on_mismatch="intersect", methods=["cr2"])
    assert cmp.info["n_dropped_mismatch"] == 1 and len(cmp.per_query) == 16
    assert cmp.ties == 16


def test_top_tie_share_is_recorded_and_reported():
    import pandas as pd

    from ragcov_data.eval import evaluate

    queries = pd.DataFrame({"_id": ["a#0", "a#1", "b#0", "b#1"], "text": ["x"] * 4, "doc_id": ["a", "a", "b", "b"],
                            "chunk_id": ["a#0", "a#1", "b#0", "b#1"]})
    qrels = pd.DataFrame({"query-id": ["a#0", "a#1", "b#0", "b#1"], "corpus-id": ["a#1", "a#0", "b#1", "b#0"],
                          "score": [1] * 4})
    run = pd.DataFrame({"query-id": ["a#0", "a#0", "a#1", "b#0", "b#1", "b#1"],
                        "corpus-id": ["a#1", "b#0", "a#0", "b#1", "a#0", "b#0"],
                        "score": [2.0, 2.0, 1.0, 3.0, 1.0, 1.0]})
    task = {"queries": queries, "qrels": qrels}
    first = evaluate(run, task, "hit@1", tie_policy="first", methods=("cr2",))
    pess = evaluate(run, task, "hit@1", tie_policy="pessimistic", methods=("cr2",))
    assert first.info["top_tie_share"] == 0.5  # a#0 and b#1 have a tied top
    assert "top score tied in 50.0% of queries" in first.summary()
    assert pess.per_query["value"].sum() < first.per_query["value"].sum()


# ------------------------------------------------------------------ output that fits the design (issue 11)
def _iid_task(source_key: bool = False):
    """The tiny task as JurisTCU-like queries: no doc_id; optionally pairs of queries sharing a source."""
    task = tiny_task()
    q = task["queries"].drop(columns=["doc_id", "chunk_id"])
    if source_key:  # queries 2i and 2i+1 share a source; the last one is alone
        q["source_key"] = [f"s{i // 2}" for i in range(len(q))]
    return {**task, "queries": q}


def _no_nan(text: str) -> bool:
    import re

    return re.search(r"\bnan\b", text, flags=re.IGNORECASE) is None


def test_singleton_design_collapses_micro_macro_to_mean():
    task = tiny_task()
    run = make_run(task, HITS)
    rep = evaluate(run, _iid_task(), n_resamples=200)
    e = rep.estimates
    assert set(e["estimator"]) == {"mean"}
    # naive methods, deff_wald and the copies of t (cr1, cr2) are left out; one row per method
    assert list(e["method"]) == ["cluster_bootstrap", "bootstrap_t", "t", "wild_cluster"]
    v = rep.per_query["value"].to_numpy()
    r = interval(v, rep.per_query["query-id"], "macro", "t")
    assert e.set_index("method").loc["t", ["estimate", "low", "high"]].tolist() == pytest.approx([r.estimate, r.low, r.high])
    d = rep.diagnostics
    for key in ("icc", "deff", "n_eff", "lag1_autocorr", "share_never_hit", "micro", "macro"):
        assert key not in d
    assert d["mean"] == pytest.approx(v.mean()) and "quantiles" in d
    text = rep.summary()
    assert _no_nan(text) and "per-document" not in text and "share_never_hit" not in text and "(naive)" not in text
    assert "unit: query (17 queries, each its own cluster)" in text and "per-query value quantiles" in text
    assert rep.interval(method="t") == pytest.approx((r.low, r.high))
    # the default is the printed (recommended) row: t when verified at this design, else the first verified
    rec = e[e["recommended"]]
    assert len(rec) == 1 and rep.interval() == pytest.approx((rec["low"].iloc[0], rec["high"].iloc[0]))
    if e.set_index("method").loc["t", "verified"]:
        assert rec["method"].iloc[0] == "t"
    elif e["verified"].map(lambda x: bool(x) if x is not None else False).any():
        assert bool(rec["verified"].iloc[0])
    assert rec["method"].iloc[0] in rep.summary(methods="recommended")


def test_self_retrieval_keeps_micro_and_macro():
    task = tiny_task()
    rep = evaluate(make_run(task, HITS), task, n_resamples=200)
    assert set(rep.estimates["estimator"]) == {"micro", "macro"} and rep.unit == "document"
    rec = rep.summary("recommended")
    table = rec.splitlines()[2:5]
    assert table[1].split()[:2] == ["micro", "cr2"] and table[2].split()[:2] == ["macro", "t"]
    assert "wald_iid" not in rec and "shown: the recommended method per estimator" in rec
    assert rep.summary() == rec  # the default is what `ragcov eval` prints; every method on request
    full = rep.summary(methods="all")
    assert "wald_iid (naive)" in full and "ignores the document clustering" in full
    assert "per-document rate quantiles" in full and "share_never_hit=" in full and "lag1_autocorr=" in full
    assert rep.interval() == rep.interval("micro", "cr2")


def test_singleton_methods_that_do_not_apply():
    run = make_run(tiny_task(), HITS)
    with pytest.raises(RagcovError, match=r"methods \['wald_iid', 'deff_wald'\] do not apply when every cluster "
                                          r"holds one query \(17 clusters\).*use 't', 'cluster_bootstrap'"):
        evaluate(run, _iid_task(), methods=["wald_iid", "deff_wald"])
    rep = evaluate(run, _iid_task(), methods=["cr1", "cr2", "wald_iid"])
    assert list(rep.estimates["method"]) == ["cr2"]  # cr1 = cr2 = t here: kept once
    with pytest.raises(RagcovError, match=r"no estimate for estimator='micro', method='cr2'.*\('mean', 'cr2'\)"):
        rep.interval("micro", "cr2")


def test_default_cluster_is_source_key_and_groups_are_per_query():
    task = tiny_task()
    run = make_run(task, HITS)
    st = _iid_task(source_key=True)
    st["queries"]["group"] = ["g1" if i % 2 == 0 else "g2" for i in range(17)]  # one query a source per group
    rep = evaluate(run, st, by="group", n_resamples=200)
    assert rep.cluster == "source_key" and rep.unit == "source" and len(rep.per_document) == 9
    e = rep.estimates
    assert set(e.loc[e["group"] == "__all__", "estimator"]) == {"micro", "macro"}
    assert set(e.loc[e["group"] != "__all__", "estimator"]) == {"mean"}
    explicit = evaluate(run, st, cluster="source_key", by="group", n_resamples=200)
    pd.testing.assert_frame_equal(rep.estimates, explicit.estimates)
    text = rep.summary("recommended")
    assert "unit: source (9 sources, 17 queries); groups g1, g2: one query a cluster (mean, per query)" in text
    assert _no_nan(text) and "share_never_hit" not in text and "per-source mean quantiles" in text
    assert "share_all_zero" in rep.diagnostics and "share_never_hit" not in rep.diagnostics
    assert "lag1_autocorr" not in rep.diagnostics  # no within-source order is known
    assert evaluate(run, task, methods=["cr2"]).cluster == "doc_id"  # self-retrieval: documents


def test_json_carries_per_query_records_and_the_unit():
    task = tiny_task()
    run = make_run(task, HITS)
    js = json.loads(evaluate(run, task, by="doc_type", n_resamples=200).to_json())
    assert js["cluster"] == "doc_id" and js["unit"] == "document" and js["n_clusters"] == 5
    assert {"estimator", "estimate", "method", "low", "high"} <= set(js["estimates"][0])
    assert len(js["per_query"]) == 17 and set(js["per_query"][0]) == {"query-id", "cluster", "value", "group"}
    rec = {r["query-id"]: r for r in js["per_query"]}
    assert rec["A#0000"] == {"query-id": "A#0000", "cluster": "A", "value": 1.0, "group": "res"}
    js2 = json.loads(evaluate(run, _iid_task(), n_resamples=200).to_json())
    assert set(js2["per_query"][0]) == {"query-id", "cluster", "value"} and js2["unit"] == "query"
    assert {r["estimator"] for r in js2["estimates"]} == {"mean"} and js2["n_clusters"] == 17


def test_compare_words_follow_the_unit():
    task = tiny_task()
    ra = make_run(task, HITS)
    rb = make_run(task, {"A": lambda i: True, "B": lambda i: True, "C": lambda i: False})
    docs = compare(ra, rb, task, n_resamples=200)
    assert "documents with identical rate: 60.0%" in docs.summary()
    js = json.loads(docs.to_json())
    assert js["cluster"] == "doc_id" and js["n_clusters"] == 5 and js["share_clusters_tied"] == pytest.approx(0.6)
    iid = compare(ra, rb, _iid_task(), n_resamples=200)
    text = iid.summary()
    assert set(iid.estimates["estimator"]) == {"mean"} and "identical" not in text and _no_nan(text)
    assert "wins/losses/ties: 3/2/12" in text
    src = compare(ra, rb, _iid_task(source_key=True), n_resamples=200)
    assert src.info["cluster"] == "source_key" and "sources with identical mean:" in src.summary()
    assert "documents" not in src.summary()
