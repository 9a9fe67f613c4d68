"""``known_sizes``: the micro interval of a document-sampled task that reads every population document's
size (eval/_kernels.py). Its formula against a plain computation, its coverage where the sample-only methods
fail (a dominant document the sample can miss), its errors, and the sizes a sampled task records."""
import numpy as np
import pytest
from scipy import stats

from ragcov_data.errors import RagcovError
from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval import interval


def _dominant_population(seed: int = 5, D: int = 80):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 20, D).astype(float)
    sizes[0] = 400  # one document holds about 30% of the queries, with a low hit rate
    rate = rng.uniform(0.2, 0.9, D)
    rate[0] = 0.15
    return sizes, rng.binomial(sizes.astype(int), rate).astype(float)


def test_formula_equals_a_plain_computation():
    sizes, s_all = _dominant_population()
    pick = np.r_[3, 7, 11, 20, 31, 44, 52, 60, 71, 79]
    n, s = sizes[pick], s_all[pick]
    out = _kernels.interval_batch(n, s, s, estimator="micro", method="known_sizes",
                               population={"documents": len(sizes), "sizes": sizes})
    r = s.sum() / n.sum()
    sigma2 = sum((si - r * ni) ** 2 for si, ni in zip(s, n)) / sum(ni ** 2 for ni in n)
    s2_pop = sigma2 * sum(x ** 2 for x in sizes) / (len(sizes) - 1)
    se = np.sqrt(s2_pop / len(pick)) / np.mean(sizes)
    half = stats.t.ppf(0.975, len(pick) - 1) * se
    assert out["estimate"][0] == pytest.approx(r, abs=1e-15)
    assert out["se"][0] == pytest.approx(se, rel=1e-12)
    assert (out["low"][0], out["high"][0]) == pytest.approx((r - half, r + half), rel=1e-12)
    assert out["df"][0] == len(pick) - 1
    assert "fpc_ignored" in _kernels.decode_flags(out["flags"][0])  # the correction is not applied (measured)


def test_covers_where_sample_only_methods_miss_a_dominant_document():
    """K = 20 of 80 documents without replacement; the dominant document is missed 75% of the time."""
    sizes, s_all = _dominant_population()
    truth = s_all.sum() / sizes.sum()
    rng = np.random.default_rng(0)
    R, K = 600, 20
    idx = np.argsort(rng.random((R, len(sizes))), axis=1)[:, :K]
    cover = {}
    for m in ("cr2", "known_sizes"):
        o = _kernels.interval_batch(sizes[idx], s_all[idx], s_all[idx], estimator="micro", method=m,
                                 population={"documents": len(sizes), "sizes": sizes})
        cover[m] = float(np.mean((o["low"] <= truth) & (truth <= o["high"])))
    assert cover["known_sizes"] >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / R)
    assert cover["cr2"] < 0.8  # the case the method is for


def test_without_sizes_the_error_says_what_it_needs():
    v = np.r_[np.ones(5), np.zeros(5)]
    c = np.repeat(np.arange(5), 2)
    with pytest.raises(RagcovError, match="needs every population document's size"):
        interval(v, c, "micro", "known_sizes")
    with pytest.raises(RagcovError, match="needs every population document's size"):
        interval(v, c, "micro", "known_sizes", population_sizes=50)
    r = interval(v, c, "micro", "known_sizes", population_sizes={"documents": 6, "sizes": [2, 2, 2, 2, 2, 9]})
    assert np.isfinite(r.se) and r.se > 0
    assert "known_sizes" not in _kernels.valid_methods("micro")  # not among the default methods of a census
    assert "known_sizes" in _kernels.valid_methods("micro", sizes=True)
    assert "known_sizes" not in _kernels.valid_methods("macro", sizes=True)


def test_sampled_task_records_sizes_and_evaluate_uses_them(data_dir):
    import ragcov_data
    from ragcov_data.baselines import BM25
    from ragcov_data.eval import evaluate
    from ragcov_data.tasks.sampling import sample_of

    full = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), show_progress=False)
    part = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), sample_docs=30, sample_seed=1,
                                    show_progress=False)
    rec = sample_of(part)
    sizes = rec["population"]["sizes"]
    q = full["queries"].to_pandas()
    assert len(sizes) == rec["population"]["documents"] == q["doc_id"].nunique()
    assert sum(sizes.values()) == rec["population"]["queries"] == len(q)
    assert all(sizes[d] == n for d, n in q["doc_id"].value_counts().items())
    run = BM25(show_progress=False).index(part["corpus"]).search(part["queries"], k=10, exclude_self=True,
                                                                 show_progress=False)
    rep = evaluate(run, part, n_resamples=199)
    e = rep.estimates.set_index(["estimator", "method"])
    row = e.loc[("micro", "known_sizes")]
    assert np.isfinite(row["verified_coverage"]) and row["recommended"] in (True, False)
    rec_rows = rep.estimates[rep.estimates["recommended"]]
    assert set(rec_rows["estimator"]) == {"micro", "macro"}
    census_run = BM25(show_progress=False).index(full["corpus"]).search(full["queries"], k=10, exclude_self=True,
                                                                       show_progress=False)
    with pytest.raises(RagcovError, match="needs every population document's size"):
        evaluate(census_run, full, methods=["known_sizes"], n_resamples=199)
    # without the correction the task is read as a draw from an infinite population: no sizes, no method
    assert "known_sizes" not in set(evaluate(run, part, fpc=False, n_resamples=199).estimates["method"])


def test_document_population_is_a_float_that_keeps_its_sizes():
    import copy
    import pickle

    from ragcov_data.tasks.sampling import DocumentPopulation

    p = DocumentPopulation(5, [1, 2, 3, 4, 5])
    assert isinstance(p, float) and p == 5.0 and float(p) + 1 == 6.0
    for q in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        assert q == 5.0 and list(q.sizes) == [1, 2, 3, 4, 5]


def test_seed1_sample_recommends_known_sizes(data_dir, tmp_path, monkeypatch):
    """ANEEL at 75 words, 40 documents (seed 1), a sample that missed the act holding 18% of the queries: CR2
    covers 83% of such samples against the census; the check says so (not verified) and the recommended,
    printed row is ``known_sizes`` (census coverage 97%), verified on the same replicates."""
    import ragcov_data
    from ragcov_data.baselines import BM25
    from ragcov_data.eval import evaluate
    from ragcov_data.eval.estimates import verify as V

    monkeypatch.setenv(V.ENV_VAR, str(tmp_path / "vcache"))
    part = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), chunk_words=75, sample_docs=40,
                                    sample_seed=1, show_progress=False)
    run = BM25(show_progress=False).index(part["corpus"]).search(part["queries"], k=10, exclude_self=True,
                                                                 show_progress=False)
    rep = evaluate(run, part, n_resamples=199)
    e = rep.estimates[rep.estimates["estimator"] == "micro"].set_index("method")
    assert e.loc["known_sizes", "recommended"] and e.loc["known_sizes", "verified_status"] == "verified"
    assert e.loc["cr2", "verified_status"] != "verified" and e.loc["cr2", "verified"] is not True
    chk = e[e["verified_coverage"].notna()]  # every checked method on the same count of replicates
    assert len(chk) >= 4
    c = chk["verified_coverage"].astype(float)
    np.testing.assert_allclose(chk["verified_mc_se"].astype(float), np.sqrt(c * (1 - c) / V.VERIFY_REPS))
    shown = rep.summary(methods="recommended")
    micro_lines = [ln for ln in shown.splitlines() if ln.strip().startswith("micro")]
    assert len(micro_lines) == 1 and "known_sizes" in micro_lines[0]


def test_leaderboard_systems_on_a_sample_carry_the_twin_check(data_dir, tmp_path, monkeypatch):
    """A leaderboard on a document sample checks each system's interval as evaluate does: on twins of the
    whole population (verified_status set; verified True only when the status is verified)."""
    import ragcov_data
    from ragcov_data.baselines import BM25, TfIdf
    from ragcov_data.eval import evaluate, leaderboard
    from ragcov_data.eval.estimates import verify as V

    monkeypatch.setenv(V.ENV_VAR, str(tmp_path / "vcache"))
    part = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), chunk_words=75, sample_docs=40,
                                    sample_seed=1, show_progress=False)
    runs = {name: make(show_progress=False).index(part["corpus"]).search(part["queries"], k=10, exclude_self=True,
                                                                        show_progress=False)
            for name, make in (("bm25", BM25), ("tfidf", TfIdf))}
    board = leaderboard(runs, part, metric="hit@1", n_resamples=199)
    sy = board.systems.set_index("name")
    assert set(sy["method"]) == {"known_sizes"}
    assert set(sy["verified_status"]) <= set(V.STATUSES) and sy["verified_status"].notna().all()
    assert ((sy["verified"] == True) == (sy["verified_status"] == "verified")).all()  # noqa: E712
    ev = evaluate(runs["bm25"], part, methods=["known_sizes"], n_resamples=199).estimates.set_index("method")
    assert sy.loc["bm25", "verified_status"] == ev.loc["known_sizes", "verified_status"]
    assert sy.loc["bm25", "verified_coverage"] == pytest.approx(ev.loc["known_sizes", "verified_coverage"])
