"""Document-sampled tasks: the draw, the task (whole corpus, sampled queries), and the finite-population
correction the evaluator applies from the sample's record."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ragcov_data
from ragcov_data.baselines import BM25
from ragcov_data.errors import QrelsRunMismatchError, RagcovError
from ragcov_data.eval import evaluate, interval
from ragcov_data.tasks.sampling import (ALLOCATION_RULE, allocate, design_weights, docs_sha256, draw, eval_info,
                                  micro_estimates, population_for_eval, restrict_frames, sample_task,
                                  unequal_probabilities)
from ragcov_data.tasks.record import manifest_of


@pytest.fixture(scope="module")
def full(aneel_fulltext):
    return ragcov_data.build_task(aneel_fulltext, chunk_words=100)


@pytest.fixture(scope="module")
def sampled(aneel_fulltext):
    return ragcov_data.build_task(aneel_fulltext, chunk_words=100, sample_docs=20, sample_seed=3)


@pytest.fixture(scope="module")
def run(full):
    return BM25(show_progress=False).index(full.corpus).search(full.queries, k=10, exclude_self=True)


# ---------------------------------------------------------------------------------------------- the draw
def test_draw_is_reproducible_and_order_free():
    ids = [f"d{i}" for i in range(50)]
    a = draw(ids, 7, seed=11)
    assert draw(ids[::-1], 7, seed=11)["documents"] == a["documents"]  # order of the population is irrelevant
    assert draw(ids, 7, seed=12)["documents"] != a["documents"]
    assert len(a["documents"]) == 7 and set(a["documents"]) <= set(ids)
    assert a["population"] == {"documents": 50, "per_stratum": None}
    assert a["documents_sha256"] == docs_sha256(a["documents"])


def test_draw_is_a_simple_random_sample():
    ids = [f"doc-{i}" for i in range(10)]
    reps = 3000
    tally = dict.fromkeys(ids, 0)  # counted in a dict: a pandas update per draw cost more than the draw
    pairs = 0
    for seed in range(reps):
        docs = draw(ids, 3, seed=seed)["documents"]
        for d in docs:
            tally[d] += 1
        pairs += {"doc-0", "doc-1"} <= set(docs)
    counts = pd.Series(tally)
    # inclusion probability K/N = 0.3 for every document (sd 0.0084 at 3000 draws), pairs K(K-1)/(N(N-1))
    assert np.all(np.abs(counts / reps - 0.3) < 0.035)
    assert abs(pairs / reps - 3 * 2 / (10 * 9)) < 0.02


def test_proportional_allocation_by_largest_remainder():
    # quotas 2.5, 1.5, 1.0: floors 2, 1, 1; the one left goes to the larger of the equal remainders (a)
    assert allocate(5, {"a": 5, "b": 3, "c": 2}) == {"a": 3, "b": 1, "c": 1}
    # the fixed rounding of earlier versions (no seed): a stratum whose quota rounds to 0 gets none
    assert allocate(4, {"big": 90, "mid": 9, "tiny": 1}) == {"big": 4, "mid": 0, "tiny": 0}
    labels = [h for h, n in {"x": 12, "y": 6, "z": 2}.items() for _ in range(n)]
    rec = draw([f"{h}{i}" for i, h in enumerate(labels)], 10, seed=0, strata=labels)
    assert rec["allocation"] == {"x": 6, "y": 3, "z": 1}
    assert rec["population"]["per_stratum"] == {"x": 12, "y": 6, "z": 2}
    assert sum(d.startswith("x") for d in rec["documents"]) == 6


def test_systematic_allocation_gives_every_stratum_its_expected_share():
    sizes = {"big": 90, "mid": 9, "tiny": 1, "one": 1, "pair": 2}
    n, k, reps = sum(sizes.values()), 4, 4000
    quota = {h: k * m / n for h, m in sizes.items()}
    got = pd.DataFrame([allocate(k, sizes, seed=s) for s in range(reps)])
    assert (got.sum(axis=1) == k).all()  # always K documents
    for h, q in quota.items():  # k_h is floor(q_h) or ceil(q_h), and E[k_h] = q_h
        assert set(got[h]) <= {int(np.floor(q)), int(np.ceil(q))}
        assert abs(got[h].mean() - q) < 4 * 0.5 / np.sqrt(reps), (h, got[h].mean(), q)
    # strata of quota < 1 are drawn in that share of the seeds (0.04 for a singleton here): none is left out
    for h in ("mid", "tiny", "one", "pair"):
        assert got[h].gt(0).any() and abs(got[h].gt(0).mean() - quota[h]) < 4 * np.sqrt(quota[h] / reps) + 0.005
    # whole quotas are kept exactly whatever the seed
    assert {tuple(allocate(10, {"x": 12, "y": 6, "z": 2}, seed=s).values()) for s in range(50)} == {(6, 3, 1)}


def test_every_document_has_inclusion_probability_k_over_n_and_the_seed_always_matters():
    labels = ["a"] * 12 + ["b"] * 5 + ["c"] + ["d"] + ["e"] * 2  # singleton strata c and d
    ids = [f"doc{i}" for i in range(len(labels))]
    k, reps = 5, 3000
    tally = dict.fromkeys(ids, 0)
    for seed in range(reps):
        rec = draw(ids, k, seed=seed, strata=labels)
        for d in rec["documents"]:
            tally[d] += 1
        assert len(rec["documents"]) == k and set(rec["inclusion_probabilities"]) == set(rec["documents"])
        assert set(rec["inclusion_probabilities"].values()) == {k / len(ids)}
    counts = pd.Series(tally)
    p = k / len(ids)
    assert np.all(np.abs(counts / reps - p) < 4 * np.sqrt(p * (1 - p) / reps)), (counts / reps).round(3).to_dict()
    # a singleton stratum is in some samples and not in others: the seed decides
    assert {("doc17" in draw(ids, k, seed=s, strata=labels)["documents"]) for s in range(40)} == {True, False}


def test_the_record_holds_the_design_of_each_stratum(aneel_fulltext, full):
    t = ragcov_data.build_task(aneel_fulltext, sample_docs=20, sample_seed=7, sample_strata="doc_type")
    rec = t.manifest["sample"]
    per = full.corpus.drop_duplicates("doc_id")["doc_type"].value_counts().to_dict()
    n = sum(per.values())
    assert rec["allocation_scheme"] == "systematic" and rec["allocation_rule"] == ALLOCATION_RULE
    assert set(rec["design"]) == set(per)
    for h, d in rec["design"].items():
        assert d["documents"] == per[h] and d["k"] == rec["allocation"][h]
        assert d["expected_k"] == pytest.approx(20 * per[h] / n) and d["k"] in (np.floor(d["expected_k"]),
                                                                                  np.ceil(d["expected_k"]))
        assert d["inclusion_probability"] == pytest.approx(20 / n) and d["k_over_n"] == pytest.approx(d["k"] / per[h])
    assert rec["population"]["queries"] == len(full.queries)
    assert design_weights(rec) == {doc: n / 20 for doc in rec["documents"]}
    assert unequal_probabilities(rec) is None
    info = eval_info(rec, None, True)["sample"]
    assert info["weights"]["equal"] is True and set(info["weights"]["per_stratum"].values()) == {n / 20}


def _hit1(task, run):
    top = run[run["rank"] == 1].set_index("query-id")["corpus-id"]
    doc = task.corpus.set_index("_id")["doc_id"]
    q = task.queries.set_index("_id")["doc_id"]
    hit = pd.Series(0.0, index=q.index)
    hit[top.index] = (doc.reindex(top.to_numpy()).to_numpy() == q[top.index].to_numpy()).astype(float)
    return pd.DataFrame({"doc_id": q.to_numpy(), "value": hit.to_numpy()})


@pytest.mark.slow
def test_weighted_micro_over_stratified_draws_is_centred_on_the_census(full, run):
    """500 stratified draws of K=40 of the 147 ANEEL acts: the Horvitz-Thompson micro hit@1 of BM25 averages
    to the census value within Monte-Carlo error; every stratum turns up with its expected frequency."""
    per_query = _hit1(full, run)
    census = per_query["value"].mean()
    docs = full.corpus.drop_duplicates("doc_id")
    ids, labels = docs["doc_id"].tolist(), docs["doc_type"].tolist()
    k, reps = 40, 500
    ht, hajek, drawn = [], [], []
    for seed in range(reps):
        rec = draw(ids, k, seed=seed, strata=labels)
        rec["population"]["queries"] = len(full.queries)
        sub = per_query[per_query["doc_id"].isin(rec["documents"])]
        est = micro_estimates(sub["value"], sub["doc_id"], rec)
        assert est["hajek"] == pytest.approx(sub["value"].mean())  # equal weights: the plain mean
        ht.append(est["horvitz_thompson"])
        hajek.append(est["hajek"])
        drawn.append(rec["allocation"])
    ht = np.asarray(ht)
    assert abs(ht.mean() - census) < 4 * ht.std(ddof=1) / np.sqrt(reps), (ht.mean(), census)
    drawn = pd.DataFrame(drawn)
    n, sizes = len(ids), pd.Series(labels).value_counts()
    for h, n_h in sizes.items():
        q = k * n_h / n
        assert abs(drawn[h].mean() - q) < 4 * 0.5 / np.sqrt(reps) + 1e-9, (h, drawn[h].mean(), q)
        assert drawn[h].gt(0).any()  # every stratum is drawn, the singletons included


def test_a_legacy_stratified_sample_is_refused_unweighted_and_recognised_from_its_tag(full, run):
    docs = full.corpus.drop_duplicates("doc_id")
    ids, labels = docs["doc_id"].tolist(), docs["doc_type"].tolist()
    legacy = draw(ids, 20, seed=0, strata=labels, scheme="largest-remainder")
    assert 0 in legacy["allocation"].values()  # strata whose quota rounded to 0
    message = unequal_probabilities({**legacy, "strata": "doc_type"})
    assert "could never be drawn" in message and "--strata doc_type" in message
    with pytest.raises(RagcovError, match="inclusion probabilities differ"):
        population_for_eval({**legacy, "strata": "doc_type"}, "doc_id", None, [])
    assert population_for_eval({**legacy, "strata": "doc_type"}, "doc_id", None, [], weighted=True) == 147.0
    # a TREC run of an earlier version carries only the spec: the old draw is recognised, then refused
    sub = run[run["query-id"].isin(set(full.queries.loc[full.queries["doc_id"].isin(legacy["documents"]), "_id"]))]
    sub = sub.reset_index(drop=True)
    sub.attrs = {"tag": f"bm25;sample:k=20,seed=0,strata=doc_type,docs={legacy['documents_sha256'][:12]}"}
    with pytest.raises(RagcovError, match="drawn within 'doc_type' by a fixed allocation of an earlier ragcov"):
        evaluate(sub, full, methods=["t"])
    with pytest.raises(RagcovError, match="an unweighted mean over them is biased"):  # without the correction too
        evaluate(sub, full, methods=["t"], fpc=False)
    # a parquet run of an earlier version carries the whole record, without the new fields
    old_record = {k: v for k, v in legacy.items() if k not in ("allocation_scheme", "design",
                                                               "inclusion_probabilities")}
    sub.attrs = {"sample": {**old_record, "strata": "doc_type"}}
    with pytest.raises(RagcovError, match="drawn within 'doc_type' by a fixed allocation of an earlier ragcov"):
        evaluate(sub, full, methods=["t"])
    sub.attrs = {"tag": f"bm25;sample:k=20,seed=0,strata=doc_type,docs={legacy['documents_sha256'][:12]}"}
    rep = evaluate(sub, full, methods=["t"], strata="doc_type")  # stratified: the drawn strata only, said so
    assert any("got no document in the sample" in m for m in rep.info["notices"])


def test_restrict_frames_hands_the_evaluator_the_weights(sampled, run):
    frames = {"queries": sampled.queries, "qrels": sampled.qrels, "corpus": sampled.corpus}
    _, rec = restrict_frames(sampled, dict(run.attrs), frames)
    assert rec["weights"] == {d: 147 / 20 for d in rec["documents"]}


# ---------------------------------------------------------------------------------------------- the task
def test_sampled_task_keeps_the_whole_corpus(full, sampled):
    pd.testing.assert_frame_equal(sampled.corpus, full.corpus)
    rec = sampled.manifest["sample"]
    assert rec["k"] == 20 and rec["seed"] == 3 and rec["unit"] == "doc_id"
    assert rec["population"]["documents"] == full.manifest["counts"]["documents_eligible"] == 147
    docs = set(rec["documents"])
    want = full.queries[full.queries["doc_id"].isin(docs)].reset_index(drop=True)
    pd.testing.assert_frame_equal(sampled.queries, want)
    assert set(sampled.queries["doc_id"]) == docs and rec["queries"] == len(want)
    assert set(sampled.qrels["query-id"]) == set(want["_id"])
    assert len(sampled.qrels) == full.qrels["query-id"].isin(set(want["_id"])).sum()
    assert sampled.manifest["counts"]["queries"] == len(want)


def test_stratified_sample_records_the_population_per_stratum(aneel_fulltext, full):
    t = ragcov_data.build_task(aneel_fulltext, sample_docs=40, sample_seed=0, sample_strata="doc_type")
    rec = t.manifest["sample"]
    per = full.corpus.drop_duplicates("doc_id")["doc_type"].value_counts().sort_index()
    assert rec["population"]["per_stratum"] == per.to_dict() and rec["strata"] == "doc_type"
    got = t.queries.drop_duplicates("doc_id")["doc_type"].value_counts().to_dict()
    assert got == {h: k for h, k in rec["allocation"].items() if k} and sum(rec["allocation"].values()) == 40


def test_load_dataset_sample_docs(data_dir, sampled, tmp_path):
    ds = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), cache_dir=tmp_path, show_progress=False,
                                  sample_docs=20, sample_seed=3)
    assert ds["queries"]["_id"] == sampled.queries["_id"].tolist()
    assert len(ds["corpus"]) == len(sampled.corpus)
    assert manifest_of(ds)["sample"] == sampled.manifest["sample"]
    whole = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), cache_dir=tmp_path, show_progress=False)
    assert len(whole["queries"]) == len(sampled.corpus) and "sample" not in manifest_of(whole)  # another cache entry


@pytest.mark.parametrize("kwargs, message", [
    ({"sample_docs": 1}, r"`sample_docs` must be at least 2 \(an interval needs two documents\); got 1"),
    ({"sample_docs": 500}, r"`sample_docs` \(500\) is larger than the 147 eligible documents; give at most 147"),
    ({"sample_docs": 2.5}, r"`sample_docs` must be a whole number of documents; got 2.5"),
    ({"sample_docs": 5, "sample_strata": "kind"}, r"strata column 'kind' is not a column of the task's corpus"),
    ({"sample_docs": 5, "sample_seed": "x"}, r"the sample seed must be an integer; got 'x'"),
])
def test_bad_sample_arguments(aneel_fulltext, kwargs, message):
    with pytest.raises(RagcovError, match=message):
        ragcov_data.build_task(aneel_fulltext, **kwargs)


def test_a_sample_is_not_sampled_again(sampled):
    with pytest.raises(RagcovError, match="already a document sample"):
        sample_task(sampled, 5)


def test_strata_with_missing_labels_are_refused(full):
    corpus = full.corpus.copy()
    corpus.loc[corpus["doc_id"] == corpus["doc_id"].iloc[0], "doc_type"] = None
    t = type(full)(corpus, full.queries, full.qrels, dict(full.manifest))
    with pytest.raises(RagcovError, match=r"strata column 'doc_type' is missing for 1 eligible documents \(first: "):
        sample_task(t, 10, strata="doc_type")


# ---------------------------------------------------------------------------------------------- the evaluator
def _se(rep, estimator, method):
    e = rep.estimates
    return float(e[(e.estimator == estimator) & (e.method == method)]["se"].iloc[0])


def test_fpc_scales_the_macro_standard_error_by_sqrt_1_minus_k_over_n(sampled, run):
    k, n = 20, 147
    with_fpc = evaluate(run, sampled, methods=["cr2", "t", "cluster_bootstrap"])
    without = evaluate(run, sampled, methods=["cr2", "t", "cluster_bootstrap"], fpc=False)
    assert set(with_fpc.per_query["query-id"]) == set(sampled.queries["_id"])  # the sampled queries only
    values, clusters = without.per_query["value"].to_numpy(), without.per_query["cluster"].to_numpy()
    assert _se(with_fpc, "micro", "cr2") == _se(without, "micro", "cr2")  # micro: never corrected (under-covers)
    for est, method, shrink in [("micro", "cr2", 1.0), ("macro", "t", np.sqrt(1 - k / n))]:
        assert _se(with_fpc, est, method) == pytest.approx(_se(without, est, method) * shrink, rel=1e-12)
        core_fpc = interval(values, clusters, estimator=est, method=method, population_sizes=n)
        core = interval(values, clusters, estimator=est, method=method)
        assert _se(with_fpc, est, method) == pytest.approx(core_fpc.se, rel=1e-12)
        assert _se(without, est, method) == pytest.approx(core.se, rel=1e-12)
    assert "fpc_ignored" in with_fpc.estimates.set_index("method").loc["cluster_bootstrap", "flags"].iloc[0]
    assert with_fpc.info["population_clusters"] == n and without.info["population_clusters"] is None
    assert with_fpc.info["sample"]["fpc"] is True and without.info["sample"]["fpc"] is False
    assert with_fpc.to_dict()["population_clusters"] == n
    assert any("1 - K/N = 0.8639" in m for m in with_fpc.info["notices"])


def test_a_run_carrying_its_sample_is_scored_on_the_whole_task(full, sampled, run):
    sub = run[run["query-id"].isin(set(sampled.queries["_id"]))].reset_index(drop=True)
    sub.attrs = {**run.attrs, "sample": sampled.manifest["sample"]}
    on_whole = evaluate(sub, full, methods=["cr2", "t"])
    on_sample = evaluate(sub, sampled, methods=["cr2", "t"])
    pd.testing.assert_frame_equal(on_whole.estimates, on_sample.estimates)
    # a TREC run: only the spec in its tag
    sub.attrs = {"tag": f"bm25;sample:k=20,seed=3,docs={sampled.manifest['sample']['documents_sha256'][:12]}"}
    pd.testing.assert_frame_equal(evaluate(sub, full, methods=["cr2", "t"]).estimates, on_sample.estimates)
    sub.attrs = {"tag": "bm25;sample:k=20,seed=3,docs=000000000000", "source": "x.trec"}
    with pytest.raises(QrelsRunMismatchError, match=r"x.trec was made on a sample of 20 documents \(seed 3\) of "
                                                    "another task"):
        evaluate(sub, full)


def test_stratified_evaluation_uses_the_population_per_stratum(aneel_fulltext, full, run):
    t = ragcov_data.build_task(aneel_fulltext, sample_docs=60, sample_seed=1, sample_strata="doc_type")
    rec = t.manifest["sample"]
    rep = evaluate(run, t, methods=["t"], strata="doc_type")
    pq = rep.per_query.merge(t.queries[["_id", "doc_type"]], left_on="query-id", right_on="_id")
    kept = {h: float(n) for h, n in rec["population"]["per_stratum"].items() if rec["allocation"][h] > 0}
    for est in ("micro", "macro"):
        core = interval(pq["value"], pq["cluster"], estimator=est, method="t", strata=pq["doc_type"],
                        population_sizes={"documents": kept, "strata": len(kept)})
        assert _se(rep, est, "t") == pytest.approx(core.se, rel=1e-12)
    empty = [h for h, k in rec["allocation"].items() if k == 0]
    assert any(f"{len(empty)} strata of 'doc_type' got no document" in m for m in rep.info["notices"]) == bool(empty)


def test_other_cluster_gets_no_correction(sampled, run):
    rep = evaluate(run, sampled, methods=["t"], cluster="_id")
    assert rep.info["population_clusters"] is None
    assert any("clusters by '_id': no finite-population correction" in m for m in rep.info["notices"])
