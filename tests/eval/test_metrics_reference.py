"""Per-query agreement with pytrec_eval (trec_eval) and ir_measures, to 1e-9, on real and random runs.

Real runs: TF-IDF cosine (scikit-learn) over the shared JurisTCU files. trec_eval orders by score held
in *single* precision and breaks score ties by document id (descending); ragcov orders by rank. So the
reference side gets the scores ``1e6 - rank`` (exact in float32) and both tools see one order. The
score-only ordering (no ``rank`` column) is checked on a run whose scores are far apart in float32.
"""
from __future__ import annotations

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from sklearn.feature_extraction.text import TfidfVectorizer

from ragcov_data.eval.outcomes.metrics import per_query

MEASURES = {"ndcg_cut.10", "P.10", "recall.10", "recip_rank"}
TOL = 1e-9


def _rank(run: pd.DataFrame) -> pd.DataFrame:
    run = run.sort_values(["query-id", "score"], ascending=[True, False], kind="mergesort")
    run["rank"] = run.groupby("query-id").cumcount() + 1
    return run.reset_index(drop=True)


@pytest.fixture(scope="module")
def juristcu_run(juristcu_dir):
    docs = pd.read_csv(juristcu_dir / "doc.csv", dtype=str)
    queries = pd.read_csv(juristcu_dir / "query.csv", dtype=str)
    qrels = pd.read_csv(juristcu_dir / "qrel.csv", dtype={"QUERY_ID": str, "DOC_ID": str})
    qrels = qrels.rename(columns={"QUERY_ID": "query-id", "DOC_ID": "corpus-id", "SCORE": "score"})
    vec = TfidfVectorizer(sublinear_tf=True)
    D = vec.fit_transform(docs["TEXT"])
    Q = vec.transform(queries["TEXT"])
    S = (Q @ D.T).toarray()
    rng = np.random.default_rng(0)
    S = S + rng.uniform(0, 1e-7, S.shape)  # tie-free
    top = np.argsort(-S, axis=1)[:, :30]
    rows = np.repeat(np.arange(len(queries)), top.shape[1])
    run = pd.DataFrame({
        "query-id": queries["ID"].to_numpy()[rows],
        "corpus-id": docs["ID"].to_numpy()[top.ravel()],
        "score": S[rows, top.ravel()],
    })
    return _rank(run), qrels[["query-id", "corpus-id", "score"]]


@pytest.fixture(scope="module")
def random_run():
    """Random graded qrels (0-3, some queries without relevant documents) and a run with unjudged rows."""
    rng = np.random.default_rng(42)
    qrow = []
    for q in range(60):
        n = rng.integers(1, 25)
        docs = rng.choice(200, size=n, replace=False)
        hi = 1 if q % 10 == 0 else 4  # every 10th query: grades 0 only
        qrow += [(f"q{q}", f"d{d}", int(rng.integers(0, hi))) for d in docs]
    qrels = pd.DataFrame(qrow, columns=["query-id", "corpus-id", "score"])
    rrow = []
    for q in range(55):  # q55..q59 have no run rows
        docs = rng.choice(200, size=rng.integers(3, 40), replace=False)
        rrow += [(f"q{q}", f"d{d}", float(s)) for d, s in zip(docs, rng.permutation(len(docs)) + rng.random())]
    return _rank(pd.DataFrame(rrow, columns=["query-id", "corpus-id", "score"])), qrels


def _trec(run, qrels, measures, **kw):
    qd = {}
    for q, d, s in qrels.itertuples(index=False):
        qd.setdefault(str(q), {})[str(d)] = int(s)
    rd = {}
    for q, d, r in run[["query-id", "corpus-id", "rank"]].itertuples(index=False):
        rd.setdefault(str(q), {})[str(d)] = 1e6 - float(r)  # float32-exact, same order as `rank`
    return pytrec_eval.RelevanceEvaluator(qd, measures, **kw).evaluate(rd)


def _check(run, qrels, *, threshold=1, unjudged="irrelevant"):
    kw = {"relevance_level": threshold, "judged_docs_only_flag": unjudged == "skip"}
    ref = _trec(run, qrels, MEASURES, **kw)
    ref10 = _trec(run[run["rank"] <= 10] if unjudged == "irrelevant" else run, qrels, {"recip_rank"}, **kw)
    assert len(ref) > 20
    pairs = [("ndcg@10", "ndcg_cut_10"), ("p@10", "P_10"), ("r@10", "recall_10")]
    opts = dict(relevance_threshold=threshold, unjudged=unjudged)
    for metric, name in pairs:
        ours = per_query(run, qrels, metric, **opts)
        for q, vals in ref.items():
            assert abs(ours[q] - vals[name]) <= TOL, (metric, q, ours[q], vals[name])
    ours = per_query(run, qrels, "mrr@10", **opts)
    if unjudged == "irrelevant":
        for q, vals in ref10.items():
            assert abs(ours[q] - vals["recip_rank"]) <= TOL, ("mrr@10", q)
    return ref


def test_real_run_matches_pytrec_eval(juristcu_run):
    run, qrels = juristcu_run
    ref = _check(run, qrels)
    assert len(ref) == 150
    nd = per_query(run, qrels, "ndcg@10")
    assert 0.05 < nd.mean() < 0.95  # a real, non-degenerate run
    assert nd.nunique() > 50


def test_real_run_threshold_2_matches_pytrec_eval(juristcu_run):
    run, qrels = juristcu_run
    _check(run, qrels, threshold=2)


def test_real_run_judged_only_matches_trec_eval_J(juristcu_run):
    run, qrels = juristcu_run
    _check(run, qrels, unjudged="skip")


def test_random_graded_qrels_match_pytrec_eval(random_run):
    run, qrels = random_run
    _check(run, qrels)
    _check(run, qrels, threshold=3)
    _check(run, qrels, unjudged="skip")


def test_score_only_ordering_matches_pytrec_eval(random_run):
    run, qrels = random_run
    no_rank = run.drop(columns="rank").sample(frac=1.0, random_state=3)  # order comes from scores alone
    ref = _trec(run, qrels, {"ndcg_cut.10", "P.10"})
    for metric, name in (("ndcg@10", "ndcg_cut_10"), ("p@10", "P_10")):
        ours = per_query(no_rank, qrels, metric)
        for q, vals in ref.items():
            assert abs(ours[q] - vals[name]) <= TOL, (metric, q)


def test_random_queries_outside_run_score_zero(random_run):
    run, qrels = random_run
    s = per_query(run, qrels, "ndcg@10")
    assert (s[[f"q{i}" for i in range(55, 60)]] == 0).all()
    assert s.attrs["n_no_run"] == 5
    assert s.attrs["n_no_relevant"] >= 6  # q0, q10, ..., q50 have grades 0 only


def test_mrr_at_10_matches_ir_measures_rr10(juristcu_run, random_run):
    for run, qrels in (juristcu_run, random_run):
        irq = qrels.rename(columns={"query-id": "query_id", "corpus-id": "doc_id", "score": "relevance"})
        irr = run.rename(columns={"query-id": "query_id", "corpus-id": "doc_id"})[["query_id", "doc_id"]]
        irr = irr.assign(score=1e6 - run["rank"].to_numpy(dtype=float))
        measures = [ir_measures.RR @ 10, ir_measures.nDCG @ 10, ir_measures.P @ 10, ir_measures.R @ 10]
        names = {str(ir_measures.RR @ 10): "mrr@10", str(ir_measures.nDCG @ 10): "ndcg@10",
                 str(ir_measures.P @ 10): "p@10", str(ir_measures.R @ 10): "r@10"}
        ours = {m: per_query(run, qrels, m) for m in names.values()}
        n = 0
        for rec in ir_measures.iter_calc(measures, irq, irr):
            assert abs(ours[names[str(rec.measure)]][rec.query_id] - rec.value) <= TOL
            n += 1
        assert n >= 4 * 50
