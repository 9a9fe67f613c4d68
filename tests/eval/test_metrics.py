"""Hand-computed cases, tie policies and validation of ragcov_data.eval.outcomes.metrics."""
from __future__ import annotations

import math

import datasets
import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.eval.outcomes.metrics import METRICS, MetricSpec, parse_metric, per_query


def _run(rows):
    """rows: (query-id, corpus-id, score); ranks follow the listed order within a query."""
    df = pd.DataFrame(rows, columns=["query-id", "corpus-id", "score"])
    df["rank"] = df.groupby("query-id").cumcount() + 1
    return df[["query-id", "corpus-id", "rank", "score"]]


def _qrels(rows):
    return pd.DataFrame(rows, columns=["query-id", "corpus-id", "score"])


# q1: a(3) b(unjudged) c(0) d(2); e(1) judged but not retrieved.
# q2: x, y unjudged, then d(1) at position 3. q3: judged only non-relevant. q4: judged, no run rows.
RUN = _run([
    ("q1", "a", 9.0), ("q1", "b", 8.0), ("q1", "c", 7.0), ("q1", "d", 6.0),
    ("q2", "x", 5.0), ("q2", "y", 4.0), ("q2", "d", 3.0),
    ("q3", "a", 1.0),
])
QRELS = _qrels([
    ("q1", "a", 3), ("q1", "c", 0), ("q1", "d", 2), ("q1", "e", 1),
    ("q2", "d", 1),
    ("q3", "a", 0),
    ("q4", "a", 2),
])


def L(i):  # noqa: E743 - discount of position i
    return math.log2(i + 1)


def test_ndcg_linear_gain_hand_computed():
    s = per_query(RUN, QRELS, "ndcg@10")
    dcg = 3 / L(1) + 2 / L(4)
    idcg = 3 / L(1) + 2 / L(2) + 1 / L(3)
    assert s["q1"] == pytest.approx(dcg / idcg, abs=1e-12)
    assert s["q2"] == pytest.approx((1 / L(3)) / 1.0, abs=1e-12)
    assert s["q3"] == 0.0 and s["q4"] == 0.0
    assert s.name == "ndcg@10" and s.attrs["gain"] == "linear"
    s2 = per_query(RUN, QRELS, "ndcg@2")
    assert s2["q1"] == pytest.approx(3 / (3 + 2 / L(2)), abs=1e-12)


def test_ndcg_exponential_gain_only_when_named():
    s = per_query(RUN, QRELS, "ndcg_exp@10")
    dcg = 7 / L(1) + 3 / L(4)
    idcg = 7 / L(1) + 3 / L(2) + 1 / L(3)
    assert s["q1"] == pytest.approx(dcg / idcg, abs=1e-12)
    assert s.attrs["gain"] == "exponential"
    assert s["q1"] != pytest.approx(per_query(RUN, QRELS, "ndcg@10")["q1"])


def test_precision_recall_mrr_hit_hand_computed():
    p = per_query(RUN, QRELS, "p@10")
    assert p.to_dict() == pytest.approx({"q1": 0.2, "q2": 0.1, "q3": 0.0, "q4": 0.0})
    assert per_query(RUN, QRELS, "p@2")["q1"] == pytest.approx(0.5)
    r = per_query(RUN, QRELS, "r@10")
    assert r.to_dict() == pytest.approx({"q1": 2 / 3, "q2": 1.0, "q3": 0.0, "q4": 0.0})
    assert per_query(RUN, QRELS, "r@3")["q1"] == pytest.approx(1 / 3)
    m = per_query(RUN, QRELS, "mrr@10")
    assert m.to_dict() == pytest.approx({"q1": 1.0, "q2": 1 / 3, "q3": 0.0, "q4": 0.0})
    assert per_query(RUN, QRELS, "mrr@2")["q2"] == 0.0
    h = per_query(RUN, QRELS, "hit@1")
    assert h.to_dict() == {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 0.0}
    assert per_query(RUN, QRELS, "hit@3")["q2"] == 1.0


def test_relevance_threshold_changes_binary_metrics_and_is_recorded():
    r2 = per_query(RUN, QRELS, "r@10", relevance_threshold=2)
    assert r2["q1"] == pytest.approx(1.0)  # relevant: a(3), d(2)
    assert r2["q2"] == 0.0  # d has grade 1 for q2
    assert r2.attrs["relevance_threshold"] == 2
    p3 = per_query(RUN, QRELS, "p@10", relevance_threshold=3)
    assert p3["q1"] == pytest.approx(0.1)
    # nDCG uses grades, not the threshold (as trec_eval)
    assert per_query(RUN, QRELS, "ndcg@10", relevance_threshold=3)["q1"] == per_query(RUN, QRELS, "ndcg@10")["q1"]


def test_unjudged_skip_condenses_the_list():
    skip = per_query(RUN, QRELS, "mrr@10", unjudged="skip")
    assert skip["q2"] == 1.0  # x, y unjudged are removed; d moves to position 1
    assert per_query(RUN, QRELS, "p@1", unjudged="skip")["q2"] == 1.0
    assert per_query(RUN, QRELS, "p@1")["q2"] == 0.0
    nd = per_query(RUN, QRELS, "ndcg@10", unjudged="skip")
    dcg = 3 / L(1) + 2 / L(3)  # b removed: c at 2, d at 3
    assert nd["q1"] == pytest.approx(dcg / (3 + 2 / L(2) + 1 / L(3)), abs=1e-12)
    assert nd.attrs["unjudged"] == "skip"


def test_query_ids_queries_without_run_and_without_relevant():
    s = per_query(RUN, QRELS, "p@10", query_ids=["q4", "q2", "q9"])
    assert list(s.index) == ["q4", "q2", "q9"]
    assert s["q4"] == 0.0 and s["q9"] == 0.0
    assert s.attrs["n_no_run"] == 2  # q4, q9
    assert s.attrs["n_no_relevant"] == 1 and s.attrs["no_relevant"] == ["q9"]
    assert s.attrs["n_run_only"] == 2  # q1, q3 in the run but not scored
    full = per_query(RUN, QRELS, "p@10")
    assert full.attrs["no_relevant"] == ["q3"] and full.attrs["n_queries"] == 4


def test_order_follows_trec_eval_unless_the_run_policy_is_asked():
    run = pd.DataFrame({"query-id": ["q"] * 3, "corpus-id": ["z", "m", "a"],
                        "rank": [3, 1, 2], "score": [9.0, 1.0, 1.0]})
    qrels = _qrels([("q", "m", 1)])
    # trec_eval ignores ranks: z (9), then m and a tied at 1 -> id descending: m before a
    assert per_query(run, qrels, "mrr@10")["q"] == 0.5
    assert per_query(run, qrels, "mrr@10", tie_policy="trec_eval")["q"] == 0.5
    assert per_query(run, qrels, "mrr@10", tie_policy="run")["q"] == 1.0   # the file's ranks
    assert per_query(run, qrels, "mrr@10", tie_policy="first")["q"] == 1.0  # old name of "run"
    assert per_query(run.drop(columns="rank"), qrels, "mrr@10")["q"] == 0.5
    only_rank = run.drop(columns="score")  # rank-only: ordered by rank
    assert per_query(only_rank, qrels, "mrr@10")["q"] == 1.0
    tied_ranks = only_rank.assign(rank=[2, 1, 1])  # equal ranks tie; broken by id descending
    assert per_query(tied_ranks, qrels, "mrr@10")["q"] == 1.0
    assert per_query(tied_ranks, qrels, "mrr@10", tie_policy="pessimistic")["q"] == 0.5
    assert per_query(tied_ranks, qrels, "mrr@10", tie_policy="expected")["q"] == pytest.approx(0.75)


def test_ids_are_compared_as_strings():
    run = pd.DataFrame({"query-id": [1, 1], "corpus-id": [10, 20], "rank": [1, 2], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"query-id": ["1"], "corpus-id": ["20"], "score": [1]})
    s = per_query(run, qrels, "mrr@10")
    assert s.to_dict() == {"1": 0.5}


# ---- tie policies ------------------------------------------------------------------------
TIE_RUN = _run([
    ("t1", "a", 5.0), ("t1", "b", 5.0), ("t1", "c", 5.0), ("t1", "d", 1.0),  # three tied, a, c relevant
    ("t2", "a", 5.0), ("t2", "b", 4.9),  # no tie at the top
    ("t3", "b", 2.0), ("t3", "a", 2.0),  # tie; listed first: b (relevant); by id descending: b too
    ("t4", "a", 3.0), ("t4", "b", 3.0),  # tie, both relevant
    ("t5", "b", 2.0), ("t5", "a", 2.0),  # tie; relevant a listed second and smaller id
])
TIE_QRELS = _qrels([("t1", "a", 1), ("t1", "c", 2), ("t1", "d", 1), ("t2", "a", 1), ("t3", "b", 1),
                    ("t4", "a", 1), ("t4", "b", 3), ("t5", "a", 1)])


@pytest.mark.parametrize(
    "policy, expected",
    [
        ("trec_eval", {"t1": 1.0, "t2": 1.0, "t3": 1.0, "t4": 1.0, "t5": 0.0}),   # c, b, b, b, b first
        ("run", {"t1": 1.0, "t2": 1.0, "t3": 1.0, "t4": 1.0, "t5": 0.0}),         # a, a, b, a, b first
        ("pessimistic", {"t1": 0.0, "t2": 1.0, "t3": 0.0, "t4": 1.0, "t5": 0.0}),
        ("optimistic", {"t1": 1.0, "t2": 1.0, "t3": 1.0, "t4": 1.0, "t5": 1.0}),
        ("expected", {"t1": 2 / 3, "t2": 1.0, "t3": 0.5, "t4": 1.0, "t5": 0.5}),
    ],
)
def test_hit_at_1_tie_policies(policy, expected):
    s = per_query(TIE_RUN, TIE_QRELS, "hit@1", tie_policy=policy)
    assert s.to_dict() == pytest.approx(expected)
    assert s.attrs["tie_policy"] == policy


def test_ties_are_exact_doubles():
    # scores 1e-12 apart are different for trec_eval 10 (double precision), and for ragcov
    run = _run([("q", "b", 5.0), ("q", "a", 5.0 + 1e-12)])
    qrels = _qrels([("q", "b", 1)])
    assert per_query(run, qrels, "hit@1")["q"] == 0.0
    assert per_query(run, qrels, "hit@1", tie_policy="expected")["q"] == 0.0


def test_tie_policy_group_uses_scores_not_ranks():
    # d (relevant, score 1.0) is outside the top tie group even though it is in the run
    s = per_query(TIE_RUN, TIE_QRELS, "hit@1", tie_policy="expected")
    assert s["t1"] == pytest.approx(2 / 3)
    # at hit@4 every order reaches d: 1 whatever the ties
    assert per_query(TIE_RUN, TIE_QRELS, "hit@4", tie_policy="pessimistic")["t1"] == 1.0


@pytest.mark.parametrize("metric", ["ndcg@3", "p@2", "r@2", "mrr@3", "hit@2", "ndcg_exp@4"])
def test_every_metric_under_every_order_of_ties(metric):
    """expected = mean over all orders of each tie group; pessimistic/optimistic = min/max (brute force)."""
    import itertools

    rng = np.random.default_rng(hash(metric) % 2**32)
    docs = [f"d{i}" for i in range(5)]
    for _ in range(15):
        sc = rng.integers(0, 3, size=5).astype(float)
        grades = rng.integers(0, 4, size=5)
        judged = rng.random(5) < 0.8
        judged[0] = True
        qrels = _qrels([("q", d, int(g)) for d, g, j in zip(docs, grades, judged) if j])
        run = pd.DataFrame({"query-id": "q", "corpus-id": docs, "score": sc})
        orders = [sorted(range(5), key=lambda i: (-sc[i], perm[i])) for perm in itertools.permutations(range(5))]
        every = pd.DataFrame({"query-id": np.repeat([f"p{j}" for j in range(len(orders))], 5),
                              "corpus-id": [docs[i] for o in orders for i in o],
                              "rank": np.tile(np.arange(1, 6), len(orders)),
                              "score": np.concatenate([sc[o] for o in orders])})
        every_qrels = pd.concat([qrels.assign(**{"query-id": f"p{j}"}) for j in range(len(orders))])
        vals = per_query(every, every_qrels, metric, tie_policy="run").to_numpy()  # one query an order
        assert per_query(run, qrels, metric, tie_policy="expected")["q"] == pytest.approx(np.mean(vals), abs=1e-12)
        assert per_query(run, qrels, metric, tie_policy="pessimistic")["q"] == pytest.approx(min(vals), abs=1e-12)
        assert per_query(run, qrels, metric, tie_policy="optimistic")["q"] == pytest.approx(max(vals), abs=1e-12)


# ---- parsing and validation -------------------------------------------------------------
def test_parse_metric():
    assert parse_metric("ndcg@10") == MetricSpec("ndcg", 10)
    assert parse_metric("P@5") == MetricSpec("p", 5)
    assert parse_metric("recall@100") == MetricSpec("r", 100)
    assert parse_metric("RR@10") == MetricSpec("mrr", 10)
    assert str(parse_metric("hit@1")) == "hit@1"
    assert set(METRICS) >= {"hit", "ndcg", "p", "r", "mrr"}


@pytest.mark.parametrize(
    "metric, match",
    [
        ("ndgc@10", r"unknown metric 'ndgc'.*valid: hit@k, ndcg@k.*Did you mean 'ndcg'"),
        ("map@10", r"unknown metric 'map'.*valid: .*mrr@k"),
        ("ndcg@0", r"must be an integer >= 1; got 0"),
        ("ndcg@-3", r">= 1; got -3"),
        ("ndcg", r"must look like 'name@k'"),
        ("ndcg@ten", r"must look like 'name@k'"),
    ],
)
def test_parse_metric_iv(metric, match):
    with pytest.raises(RagcovError, match=match):
        parse_metric(metric)
    with pytest.raises(RagcovError, match=match):
        per_query(RUN, QRELS, metric)


def test_per_query_iv():
    with pytest.raises(RagcovError, match=r"`run` lacks column\(s\) \['corpus-id'\]"):
        per_query(RUN.drop(columns="corpus-id"), QRELS, "p@10")
    with pytest.raises(RagcovError, match=r"needs a `rank` or a `score`"):
        per_query(RUN.drop(columns=["rank", "score"]), QRELS, "p@10")
    with pytest.raises(RagcovError, match=r"`qrels` lacks column\(s\) \['score'\]"):
        per_query(RUN, QRELS.drop(columns="score"), "p@10")
    with pytest.raises(RagcovError, match=r"`tie_policy` must be one of"):
        per_query(RUN, QRELS, "hit@1", tie_policy="random")
    with pytest.raises(RagcovError, match=r"`unjudged` must be one of \('irrelevant', 'skip', 'relevant'\)"):
        per_query(RUN, QRELS, "p@10", unjudged="ignore")
    with pytest.raises(RagcovError, match=r"`relevance_threshold` must be a finite number"):
        per_query(RUN, QRELS, "p@10", relevance_threshold=float("nan"))
    with pytest.raises(RagcovError, match=r"lists the same document twice.*'q1', 'a'"):
        per_query(pd.concat([RUN, RUN.iloc[:1]]), QRELS, "p@10")
    with pytest.raises(RagcovError, match=r"judges the same \(query-id, corpus-id\) pair"):
        per_query(RUN, pd.concat([QRELS, QRELS.iloc[:1]]), "p@10")
    bad = QRELS.astype({"score": object})
    bad.loc[2, "score"] = "high"
    with pytest.raises(RagcovError, match=r"non-numeric or missing `score`.*row 2: 'high'"):
        per_query(RUN, bad, "p@10")
    with pytest.raises(RagcovError, match=r"`query_ids` must be a list"):
        per_query(RUN, QRELS, "p@10", query_ids="q1")
    with pytest.raises(RagcovError, match=r"`query_ids` has duplicates"):
        per_query(RUN, QRELS, "p@10", query_ids=["q1", "q1"])


def test_accepts_datasets_and_task_dicts():
    ref = per_query(RUN, QRELS, "ndcg@10")
    ds_qrels = datasets.Dataset.from_pandas(QRELS)
    pd.testing.assert_series_equal(per_query(RUN, ds_qrels, "ndcg@10"), ref)
    task = datasets.DatasetDict({"qrels": ds_qrels})
    pd.testing.assert_series_equal(per_query(RUN, task, "ndcg@10"), ref)
    pd.testing.assert_series_equal(per_query(RUN, {"qrels": QRELS}, "ndcg@10"), ref)


def test_empty_run_scores_zero():
    s = per_query(RUN.iloc[:0], QRELS, "ndcg@10")
    assert (s == 0).all() and len(s) == 4 and s.attrs["n_no_run"] == 4


def test_values_in_unit_interval_on_random_input():
    rng = np.random.default_rng(1)
    run = pd.DataFrame({"query-id": rng.integers(0, 20, 400).astype(str),
                        "corpus-id": rng.integers(0, 50, 400).astype(str),
                        "score": rng.normal(size=400)}).drop_duplicates(["query-id", "corpus-id"])
    qrels = pd.DataFrame({"query-id": rng.integers(0, 20, 300).astype(str),
                          "corpus-id": rng.integers(0, 50, 300).astype(str),
                          "score": rng.integers(0, 4, 300)}).drop_duplicates(["query-id", "corpus-id"])
    for m in ["hit@1", "hit@5", "ndcg@10", "ndcg_exp@10", "p@10", "r@10", "mrr@10"]:
        s = per_query(run, qrels, m)
        assert ((s >= 0) & (s <= 1)).all(), m
