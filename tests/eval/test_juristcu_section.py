"""The JurisTCU report section: group-wise intervals and family-wise paired comparisons on the shared files."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ragcov_data.baselines import BM25, TfIdf
from ragcov_data.errors import RagcovError
from ragcov_data.reporting.juristcu import SUBSET_NOTE, juristcu_section
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.loaders.juristcu import read_juristcu

METRICS = ("ndcg@10", "p@10", "r@10", "mrr@10")


@pytest.fixture(scope="module")
def task(juristcu_dir):
    return read_juristcu(juristcu_dir)[0]


@pytest.fixture(scope="module")
def runs(task):
    return {name: r.index(task["corpus"]).search(task["queries"], k=10, show_progress=False)
            for name, r in {"bm25": BM25(), "tfidf": TfIdf()}.items()}


@pytest.fixture(scope="module")
def section(task, runs):
    return juristcu_section(task, runs, METRICS, level=0.95, seed=0, n_resamples=400)


def test_shape_and_labels(section):
    est, cmp_ = section["estimates"], section["comparisons"]
    assert len(est) == 2 * 4 * 4 * 2  # retrievers x metrics x groups x methods
    assert len(cmp_) == 1 * 4 * 4  # pairs x metrics x groups, one family-wise row each
    assert (cmp_["method"] == "simultaneous").all() and cmp_["p_adj"].notna().all()
    assert (cmp_["family"] == "simultaneous hull + its adjusted p, 1 pair").all()
    assert list(est["group"].unique()) == ["G1", "G2", "G3", "overall"]
    g = est[est["group"] != "overall"]
    assert set(g["method"]) == {"t", "bootstrap"} and (g["unit"] == "query").all()
    assert (g["n_queries"] == 50).all() and (g["n_clusters"] == 50).all()
    o = est[est["group"] == "overall"]
    assert set(o["method"]) == {"cr2", "bootstrap"} and (o["unit"] == "source_key").all()
    assert (o["n_queries"] == 150).all() and (o["n_clusters"] == 100).all()  # 50 G1 + 50 G2/G3 pairs
    assert (est["relevance_threshold"] == 1).all() and (est["low"] <= est["estimate"]).all()
    assert est.attrs["corpus_note"] == SUBSET_NOTE and cmp_.attrs["corpus_note"] == SUBSET_NOTE


def test_group_t_interval_matches_scipy(section, task, runs):
    q = task["queries"]
    est = section["estimates"].set_index(["retriever", "metric", "group", "method"])
    for name in runs:
        for metric in METRICS:
            values = per_query(runs[name], task["qrels"], metric, query_ids=q["_id"])
            for g in ("G1", "G2", "G3"):
                v = values[q.loc[q["group"] == g, "_id"]].to_numpy()
                low, high = stats.t.interval(0.95, len(v) - 1, loc=v.mean(), scale=stats.sem(v))
                row = est.loc[(name, metric, g, "t")]
                assert row["estimate"] == pytest.approx(v.mean(), abs=1e-12)
                assert (row["low"], row["high"]) == pytest.approx((low, high), abs=1e-10)
            row = est.loc[(name, metric, "overall", "cr2")]
            assert row["estimate"] == pytest.approx(values.mean(), abs=1e-12)


def test_paired_comparisons_match_scipy(section, task, runs):
    """Two retrievers: a family of one pair, so p_adj = p = the paired t test, and the simultaneous
    interval is the t interval with a bootstrap critical value (close to the t one)."""
    q = task["queries"]
    cmp_ = section["comparisons"].set_index(["metric", "group"])
    for metric in METRICS:
        a = per_query(runs["bm25"], task["qrels"], metric, query_ids=q["_id"])
        b = per_query(runs["tfidf"], task["qrels"], metric, query_ids=q["_id"])
        for g in ("G1", "G2", "G3"):
            ids = q.loc[q["group"] == g, "_id"]
            d = (a[ids] - b[ids]).to_numpy()
            row = cmp_.loc[(metric, g)]
            assert (row["retriever_a"], row["retriever_b"]) == ("bm25", "tfidf")  # runs order, whatever ranks first
            assert row["estimate"] == pytest.approx(d.mean(), abs=1e-12)
            assert row["mean_a"] - row["mean_b"] == pytest.approx(d.mean(), abs=1e-12)
            assert row["low"] <= row["estimate"] <= row["high"]
            if d.std() > 0:
                test = stats.ttest_1samp(d, 0.0)
                assert row["p"] == pytest.approx(test.pvalue, rel=1e-9)
                assert row["p_adj"] >= row["p"] - 1e-15  # the interval's own adjusted p: below 5% iff it excludes 0
                assert (row["p_adj"] < 1 - 0.95) == (row["low"] > 0 or row["high"] < 0)
                low, high = test.confidence_interval(0.95)
                assert 0.8 < (row["high"] - row["low"]) / (high - low) < 1.25
            assert row["wins"] + row["losses"] + row["ties"] == 50
            assert row["wins"] == int((d > 1e-12).sum())




def test_three_retrievers_one_family_per_metric_and_group(task, runs):
    """Three runs: each metric x group is one family of 3 pairs; p_adj is the simultaneous interval's own
    adjusted p-value: below 1 - level exactly when the interval excludes 0, never below p."""
    three = {**runs, "bm25_top3": runs["bm25"][runs["bm25"]["rank"] <= 3]}
    sec = juristcu_section(task, three, ("ndcg@10", "p@10"), n_resamples=200)
    cmp_ = sec["comparisons"]
    assert len(cmp_) == 3 * 2 * 4 and (cmp_["family"] == "simultaneous hull + its adjusted p, 3 pairs").all()
    assert list(cmp_.drop_duplicates(["retriever_a", "retriever_b"])[["retriever_a", "retriever_b"]]
                .itertuples(index=False, name=None)) == [("bm25", "tfidf"), ("bm25", "bm25_top3"), ("tfidf", "bm25_top3")]
    for _, fam in cmp_.groupby(["metric", "group"]):
        excl = ((fam["low"] > 0) | (fam["high"] < 0)).to_numpy()
        np.testing.assert_array_equal(fam["p_adj"].to_numpy() < 1 - 0.95, excl)
        assert (fam["p_adj"] >= fam["p"] - 1e-15).all()
    lb = sec["leaderboards"]["ndcg@10"]
    assert set(lb.systems["group"]) == {"__all__", "G1", "G2", "G3"}
    n_sig = int(lb.pairs.loc[lb.pairs["group"] == "__all__", "significant"].sum())
    assert lb.separable().startswith(f"{n_sig} of 3 pairs of 3 systems")


def test_clustering_pairs_changes_overall_interval(task, runs):
    """Source-key clustering is the default and what the overall interval uses; 150 iid queries differ."""
    from ragcov_data.eval import evaluate

    default = evaluate(runs["bm25"], task, "ndcg@10", methods=("cr2",))
    clustered = evaluate(runs["bm25"], task, "ndcg@10", cluster="source_key", methods=("cr2",))
    iid = evaluate(runs["bm25"], task, "ndcg@10", cluster="_id", methods=("cr2",))
    assert default.cluster == "source_key" and default.unit == "source"
    assert default.interval() == clustered.interval("micro", "cr2")
    wc = clustered.estimates.query("estimator == 'micro'")["width"].iloc[0]
    # one query a cluster: a single estimator, the mean (CR2 equals t there)
    assert list(iid.estimates["estimator"]) == ["mean"] and iid.unit == "query"
    wi = iid.estimates["width"].iloc[0]
    assert wc != pytest.approx(wi, rel=1e-6)


def test_deterministic_for_seed(task, runs, section):
    again = juristcu_section(task, runs, METRICS, seed=0, n_resamples=400)
    pd.testing.assert_frame_equal(again["estimates"], section["estimates"])
    pd.testing.assert_frame_equal(again["comparisons"], section["comparisons"])


def test_relevance_threshold_recorded_and_used(task, runs):
    strict = juristcu_section(task, {"bm25": runs["bm25"]}, ("p@10",), relevance_threshold=3, n_resamples=100)
    loose = juristcu_section(task, {"bm25": runs["bm25"]}, ("p@10",), n_resamples=100)
    s, lo = strict["estimates"], loose["estimates"]
    assert (s["relevance_threshold"] == 3).all() and strict["comparisons"].empty and strict["leaderboards"] == {}
    assert (s["estimate"].to_numpy() <= lo["estimate"].to_numpy() + 1e-12).all()
    assert (s["estimate"].to_numpy() < lo["estimate"].to_numpy()).any()


def test_section_iv(task, runs):
    with pytest.raises(RagcovError, match=r"`runs` must be a non-empty dict"):
        juristcu_section(task, {})
    with pytest.raises(RagcovError, match=r"`runs` values must be DataFrames.*\['x'\]"):
        juristcu_section(task, {"x": [1, 2]})
    with pytest.raises(RagcovError, match=r"unknown metric 'map'"):
        juristcu_section(task, runs, ("map@10",))
    with pytest.raises(RagcovError, match=r"`level` must be in \(0, 1\)"):
        juristcu_section(task, runs, level=95)
    bad = {k: v for k, v in task.items()}
    bad["queries"] = task["queries"].drop(columns="source_key")
    with pytest.raises(RagcovError, match=r"lacks \['source_key'\]"):
        juristcu_section(bad, runs)
