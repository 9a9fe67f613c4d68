"""The leaderboard: per-system intervals equal evaluate's, pairs equal compare's, family-wise error held on
null families built from real per-query data, coherent ranks and tiers, judged@k, outputs (JSON, markdown,
HTML in headless Chromium)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ragcov_data
from ragcov_data.baselines import BM25, TfIdf
from ragcov_data.errors import RagcovError
from ragcov_data.eval import compare, evaluate, leaderboard, null_family_rates
from ragcov_data.eval.comparisons._family import family, holm, letters
from ragcov_data.eval.comparisons.leaderboard import JUDGED_THRESHOLD, PAIR_COLUMNS, SYSTEM_COLUMNS
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.loaders.juristcu import read_juristcu

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
VARIANTS = ("okapi", "robertson", "bm25l", "bm25+")


def _five(task, **kw):
    runs = {v: BM25(variant=v).index(task["corpus"]).search(task["queries"], k=10, show_progress=False, **kw)
            for v in VARIANTS}
    runs["tfidf"] = TfIdf().index(task["corpus"]).search(task["queries"], k=10, show_progress=False, **kw)
    return runs


@pytest.fixture(scope="module")
def aneel(data_dir):
    return ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), show_progress=False)


@pytest.fixture(scope="module")
def aneel_runs(aneel):
    return _five(aneel, exclude_self=True)


@pytest.fixture(scope="module")
def jtask(juristcu_dir):
    return read_juristcu(juristcu_dir)[0]


@pytest.fixture(scope="module")
def jruns(jtask):
    return _five(jtask)


@pytest.fixture(scope="module")
def jboard(jtask, jruns):
    return leaderboard(jruns, jtask, metric="ndcg@10", by="group", n_resamples=999)


@pytest.fixture(scope="module")
def aboard(aneel, aneel_runs):
    return leaderboard(aneel_runs, aneel, metric="hit@1", n_resamples=999)


def _row(frame, **eq):
    m = np.ones(len(frame), dtype=bool)
    for k, v in eq.items():
        m &= (frame[k] == v).to_numpy()
    assert m.sum() == 1, eq
    return frame[m].iloc[0]


# ------------------------------------------------------------------------------- equal to evaluate/compare
@pytest.mark.parametrize("estimator,method", [("micro", "cr2"), ("macro", "t")])
def test_system_interval_is_evaluates_recommended_row(aneel, aneel_runs, estimator, method):
    board = leaderboard(aneel_runs, aneel, metric="hit@1", estimator=estimator, n_resamples=199)
    for name in ("okapi", "bm25l", "tfidf"):
        ev = evaluate(aneel_runs[name], aneel, "hit@1", methods=[method], n_resamples=199).estimates
        want = _row(ev, estimator=estimator, method=method)
        got = _row(board.systems, name=name)
        assert got["method"] == method and got["estimator"] == estimator
        for k in ("estimate", "low", "high", "se", "df"):
            assert got[k] == pytest.approx(want[k], rel=1e-12, abs=1e-14), (name, k)


def test_juristcu_groups_equal_evaluate(jtask, jruns, jboard):
    assert list(pd.unique(jboard.systems["group"])) == ["__all__", "G1", "G2", "G3"]
    for name, run in jruns.items():
        ev = evaluate(run, jtask, "ndcg@10", by="group", methods=["cr2", "t"], n_resamples=199).estimates
        for g in ("__all__", "G1", "G2", "G3"):
            est, meth = ("micro", "cr2") if g == "__all__" else ("mean", "t")
            want = _row(ev, group=g, estimator=est, method=meth)
            got = _row(jboard.systems, name=name, group=g)
            assert (got["estimator"], got["method"]) == (est, meth)
            for k in ("estimate", "low", "high"):
                assert got[k] == pytest.approx(want[k], rel=1e-12)
    assert jboard.cluster == "source_key" and jboard.n_clusters == 100 and jboard.n_queries == 150


def test_pairs_equal_compare(jtask, jruns, jboard):
    pr = jboard.pairs[jboard.pairs["group"] == "__all__"]
    assert len(pr) == 10
    for r in pr.itertuples(index=False):
        c = compare(jruns[r.a], jruns[r.b], jtask, "ndcg@10", methods=["cr2"], n_resamples=199)
        row = _row(c.estimates, estimator="micro", method="cr2")
        assert r.diff == pytest.approx(row["estimate"], abs=1e-12)
        assert r.se == pytest.approx(row["se"], rel=1e-10) and r.df == pytest.approx(row["df"], rel=1e-10)
        p = 2 * stats.t.sf(abs(row["estimate"] / row["se"]), row["df"])
        assert r.p_cr2 == pytest.approx(p, rel=1e-9)  # compare's test, kept as a named column
        assert r.p >= r.p_cr2 - 1e-15 and r.p == r.p_family  # p: the hull's test, rejecting only where CR2 does
        assert (r.wins, r.losses, r.ties) == (c.wins, c.losses, c.ties)
        assert r.diff >= 0  # a is ranked above b


def test_holm_equals_statsmodels(jboard):
    from statsmodels.stats.multitest import multipletests

    for g, sub in jboard.pairs.groupby("group"):
        want = multipletests(sub["p"].to_numpy(), method="holm")[1]
        np.testing.assert_allclose(holm(sub["p"].to_numpy()), want, rtol=1e-12)


def _agrees_with_verdict(pairs: pd.DataFrame, level: float, hull: bool = False) -> None:
    """p_adj, significant_holm and significant are one decision: the simultaneous interval's. ``hull``: a micro
    family, whose ``p`` is the larger of its CR2 and wild cluster p-values (macro's is its bootstrap's own)."""
    excl = ((pairs["low"] > 0) | (pairs["high"] < 0)).to_numpy()
    np.testing.assert_array_equal(pairs["significant"].to_numpy(bool), excl)
    have = pairs["p_adj"].notna().to_numpy()  # null only where the wild inversion and its own p-value differ
    assert have.mean() >= 0.9
    np.testing.assert_array_equal((pairs["p_adj"] < 1 - level).to_numpy()[have], excl[have])
    np.testing.assert_array_equal(pairs["significant_holm"].to_numpy(bool), excl)
    assert (pairs["p_adj"][have] >= pairs["p"][have] - 1e-15).all()
    if hull:
        assert (pairs["p"] >= pairs["p_cr2"] - 1e-15).all()


def test_p_columns_come_from_the_verdicts_test(jboard, jtask, jruns):
    _agrees_with_verdict(jboard.pairs, jboard.level)
    for k in (2, 3):
        sub = {n: jruns[n] for n in list(jruns)[:k]}
        for est in ("micro", "macro"):
            board = leaderboard(sub, jtask, metric="ndcg@10", estimator=est, n_resamples=199, level=0.9)
            _agrees_with_verdict(board.pairs, 0.9, hull=board.groups["__all__"]["pair_method"] == "wild_cluster+cr2")


def test_family_hull_p_adj_is_exactly_its_interval_on_many_families():
    """Random families (2-10 systems, one dominant cluster or none, one-query clusters, micro and macro, both
    pair tests, three levels): the hull-adjusted p-value is below alpha exactly where the interval excludes 0,
    computed from the tests themselves (the rounding guard moves at most a boundary case)."""
    rng = np.random.default_rng(5)
    dropped = total = 0
    if True:
        for trial in range(24):
            S = int(rng.choice([2, 3, 5, 10]))
            K = int(rng.integers(6, 40))
            n = rng.integers(1, 12, K) if trial % 3 else np.ones(K, int)
            if trial % 2:
                n[0] = int(rng.integers(50, 300))
            codes = np.repeat(np.arange(K), n)
            base = rng.random(K)
            V = np.array([(rng.random(len(codes)) < np.clip(base[codes] + rng.normal(0, 0.15), 0, 1)).astype(float)
                          for _ in range(S)])
            for est in ("micro", "macro"):
                for pt in ("cr2", "wild_cluster"):
                    level = (0.9, 0.95, 0.99)[trial % 3]
                    f = family(V, codes, K, estimator=est, level=level, n_resamples=199,
                               rng=np.random.default_rng(trial), pair_test=pt)
                    pr = f["pairs"]
                    excl = (pr["low"] > 0) | (pr["high"] < 0)
                    have = np.isfinite(pr["p_hull"])
                    np.testing.assert_array_equal(pr["p_hull"][have] < 1 - level, excl[have])
                    assert (pr["p_hull"][have] >= pr["p"][have] - 1e-15).all()
                    dropped += int((~have).sum())
                    total += len(excl)
    assert total > 500 and dropped <= total // 100  # left out (null) only where the wild inversion and its p differ


# ------------------------------------------------------------------------------- simultaneous intervals
def test_two_systems_simultaneous_interval_is_near_the_pair_interval(jtask, jruns):
    two = {k: jruns[k] for k in ("okapi", "tfidf")}
    board = leaderboard(two, jtask, metric="ndcg@10", n_resamples=5000)
    r = board.pairs.iloc[0]
    c = compare(two[r["a"]], two[r["b"]], jtask, "ndcg@10", methods=["cr2"], n_resamples=199)
    row = _row(c.estimates, estimator="micro", method="cr2")
    half = (row["high"] - row["low"]) / 2
    assert abs(r["low"] - row["low"]) < 0.05 * half and abs(r["high"] - row["high"]) < 0.05 * half


def test_simultaneous_intervals_wider_and_coherent_with_maxt(jboard):
    pr = jboard.pairs
    t_half = stats.t.isf(0.025, pr["df"]) * pr["se"]
    assert ((pr["high"] - pr["low"]) / 2 > t_half).all()  # a family of 10 pairs needs more than 1.96 se
    assert ((pr["low"] <= pr["diff"]) & (pr["diff"] <= pr["high"])).all()
    excl = (pr["low"] > 0) | (pr["high"] < 0)
    far = (pr["p_adj_maxt"] - 0.05).abs() > 0.01  # off the boundary (B resolution)
    assert (excl[far] == (pr["p_adj_maxt"][far] < 0.05)).all()
    assert (pr["p_adj_maxt"] >= pr["p"]).all() and (pr["p_adj"] >= pr["p"]).all()


def test_seed_reproducible_and_changes_only_bootstrap_numbers(jtask, jruns, jboard):
    again = leaderboard(jruns, jtask, metric="ndcg@10", by="group", n_resamples=999)
    pd.testing.assert_frame_equal(again.pairs, jboard.pairs)
    other = leaderboard(jruns, jtask, metric="ndcg@10", by="group", n_resamples=999, seed=7)
    analytic = ["name", "group", "estimate", "low", "high", "se", "df", "rank"]  # system intervals: no bootstrap
    pd.testing.assert_frame_equal(other.systems[analytic], jboard.systems[analytic])
    np.testing.assert_array_equal(other.pairs["p_cr2"], jboard.pairs["p_cr2"])  # the analytic test: no bootstrap
    # the seed moves the bootstrap part only (the macro family is a bootstrap: its intervals move, its points not)
    assert not np.allclose(other.pairs["p_adj_maxt"], jboard.pairs["p_adj_maxt"])
    assert not np.allclose(other.pairs["high"], jboard.pairs["high"])
    np.testing.assert_array_equal(other.pairs["diff"], jboard.pairs["diff"])
    # a micro family is never narrower than Bonferroni's on the same CR2 tests, whatever the seed
    for seed in (0, 7):
        board = leaderboard(jruns, jtask, metric="ndcg@10", by="group", n_resamples=499, seed=seed,
                            estimator="micro")
        hulls = [g for g, info in board.groups.items() if info["pair_method"] == "wild_cluster+cr2"]
        assert hulls  # groups whose clusters all hold one query are macro families: not this check
        pr = board.pairs[board.pairs["group"].isin(hulls)]
        m = pr.groupby("group")["a"].transform("size").to_numpy()
        bonf = stats.t.isf((1 - board.level) / m / 2, pr["df"].to_numpy()) * pr["se"].to_numpy()
        assert ((pr["high"] - pr["diff"]).to_numpy() >= bonf - 1e-12).all()
        assert (pr["p_adj_maxt"].to_numpy() >= np.minimum(1.0, m * pr["p_cr2"].to_numpy()) - 1e-15).all()


# ------------------------------------------------------------------------------- ranks and tiers
def test_every_verdict_is_its_printed_interval(jboard, aboard):
    """One procedure: a pair is separable exactly when its simultaneous interval excludes 0 — never a
    Holm decision beside an interval that contains 0 (or the reverse)."""
    for board in (jboard, aboard):
        pr = board.pairs
        excl = ((pr["low"] > 0) | (pr["high"] < 0)).to_numpy()
        np.testing.assert_array_equal(pr["significant"].to_numpy(), excl)
        assert board.family["decision"] == "simultaneous_interval_excludes_0"


def test_best_set_is_the_systems_nobody_is_separably_above(jboard):
    d = json.loads(jboard.to_json())
    assert d["best_set"] == jboard.best_set()
    for g, sy in jboard.systems.groupby("group", sort=False):
        pr = jboard.pairs[jboard.pairs["group"] == g]
        beaten = {b for b, s in zip(pr["b"], pr["significant"]) if s}
        want = [n for n in sy["name"] if n not in beaten]
        assert jboard.best_set(g) == want == list(sy.loc[sy["rank_low"] == 1, "name"])
        assert want[0] == sy["name"].iloc[0]  # the top system always could be best


def test_ranks_and_tiers_follow_the_interval_decisions(jboard):
    for g, sy in jboard.systems.groupby("group", sort=False):
        pr = jboard.pairs[jboard.pairs["group"] == g]
        sig = {(a, b) for a, b, s in zip(pr["a"], pr["b"], pr["significant"]) if s}
        tier = dict(zip(sy["name"], sy["tier"]))
        for r in sy.itertuples(index=False):
            assert r.rank_low <= r.rank <= r.rank_high
            assert r.rank_low == 1 + sum((o, r.name) in sig for o in sy["name"])
            assert r.rank_high == len(sy) - sum((r.name, o) in sig for o in sy["name"])
        for a, b, s in zip(pr["a"], pr["b"], pr["significant"]):
            assert s == (not set(tier[a]) & set(tier[b])), (g, a, b)
        assert list(sy["rank"]) == sorted(sy["rank"])


@pytest.mark.parametrize("seed", range(12))
def test_letters_share_a_letter_iff_not_separated(seed):
    rng = np.random.default_rng(seed)
    S = int(rng.integers(2, 9))
    upper = np.triu(rng.random((S, S)) < rng.random(), 1)
    sep = upper | upper.T
    order = list(rng.permutation(S))
    tiers = letters(order, sep)
    for i in range(S):
        assert tiers[i]
        for j in range(i + 1, S):
            assert bool(set(tiers[i]) & set(tiers[j])) == (not sep[i, j]), (sep, tiers)


# ------------------------------------------------------------------------------- judged@k and condensed
def test_judged_equals_ir_measures_and_condensed_equals_judged_only_ndcg(jtask, jruns, jboard):
    import ir_measures
    import pytrec_eval

    qrels = jtask["qrels"]
    qd = {}
    for q, d, s in zip(qrels["query-id"].astype(str), qrels["corpus-id"].astype(str), qrels["score"]):
        qd.setdefault(q, {})[d] = int(s)
    for name, run in jruns.items():
        rd = {}
        for q, d, s in zip(run["query-id"].astype(str), run["corpus-id"].astype(str), run["score"]):
            rd.setdefault(q, {})[d] = float(s)
        judged = [m.value for m in ir_measures.iter_calc([ir_measures.Judged @ 10], qd, rd)]
        row = _row(jboard.systems, name=name, group="__all__")
        assert row["judged"] == pytest.approx(np.sum(judged) / 150, abs=1e-12)
        assert row["judged_flag"] == (row["judged"] < JUDGED_THRESHOLD)
        only = {q: {d: s for d, s in docs.items() if d in qd.get(q, {})} for q, docs in rd.items()}
        ev = pytrec_eval.RelevanceEvaluator(qd, {"ndcg_cut.10"}).evaluate({q: v for q, v in only.items() if v})
        assert row["condensed"] == pytest.approx(sum(v["ndcg_cut_10"] for v in ev.values()) / 150, abs=1e-12)
        assert row["condensed"] > row["estimate"]  # unjudged documents cost BM25 points on a pooled task


def test_judged_on_short_runs_equals_ir_measures_per_query(jtask, jruns):
    """judged@k divides by the documents retrieved up to k (ir_measures' Judged@k), not by k: on runs that
    return fewer than k documents for most queries the two readings differ widely."""
    import ir_measures
    from ragcov_data.eval.comparisons.leaderboard import _judged_qrels, judged_at_k

    qrels = jtask["qrels"]
    qd = {}
    for q, d, s in zip(qrels["query-id"].astype(str), qrels["corpus-id"].astype(str), qrels["score"]):
        qd.setdefault(q, {})[d] = int(s)
    run = jruns["okapi"]
    rng = np.random.default_rng(0)
    depth = dict(zip(run["query-id"].unique(), rng.integers(1, 12, run["query-id"].nunique())))
    short = run[run.groupby("query-id").cumcount() < run["query-id"].map(depth)]
    qids = sorted(qd)
    ours = judged_at_k(short, _judged_qrels(qrels), 10, query_ids=qids)
    rd = {}
    for q, d, s in zip(short["query-id"].astype(str), short["corpus-id"].astype(str), short["score"]):
        rd.setdefault(q, {})[d] = float(s)
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.Judged @ 10], qd, rd)}
    np.testing.assert_allclose(ours, [theirs.get(q, 0.0) for q in qids], rtol=0, atol=1e-12)
    p_at_k = per_query(short, _judged_qrels(qrels), "p@10", query_ids=qids).to_numpy()
    assert (short.groupby("query-id").size() < 10).mean() > 0.5
    assert ours.mean() > p_at_k.mean() + 0.1  # dividing by k would understate how much was judged


def test_self_retrieval_omits_judged_and_says_why(aboard):
    assert aboard.judged_k is None and aboard.systems["judged"].isna().all()
    assert any("judged@k not applicable" in n for n in aboard.info["notices"])
    assert "judged@" not in aboard.summary().split("family:")[0]


# ------------------------------------------------------------------------------- missing queries
def test_missing_queries_error_names_run_and_count(jtask, jruns):
    runs = dict(jruns)
    runs["okapi"] = runs["okapi"][~runs["okapi"]["query-id"].isin(["1", "2", "3"])]
    with pytest.raises(RagcovError, match=r"'okapi' lacks 3 of 150.*on_missing='zero'.*'intersect'"):
        leaderboard(runs, jtask, metric="ndcg@10", n_resamples=199)
    z = leaderboard(runs, jtask, metric="ndcg@10", n_resamples=199, on_missing="zero")
    full = per_query(jruns["okapi"], jtask["qrels"], "ndcg@10", query_ids=jtask["queries"]["_id"])
    assert _row(z.systems, name="okapi")["estimate"] == pytest.approx(full.drop(["1", "2", "3"]).sum() / 150)
    assert z.info["n_missing"]["okapi"] == 3 and _row(z.systems, name="okapi")["n_missing"] == 3
    i = leaderboard(runs, jtask, metric="ndcg@10", n_resamples=199, on_missing="intersect")
    assert i.n_queries == 147 and i.info["n_dropped"] == 3
    assert any("dropped 3 of 150" in n for n in i.info["notices"])
    assert _row(i.systems, name="okapi")["estimate"] == pytest.approx(full.drop(["1", "2", "3"]).mean())


@pytest.mark.parametrize("kw,msg", [
    ({"runs": ["a", "b"]}, "`runs` must map names to runs"),
    ({"runs": "one"}, "`runs` must map names to runs"),
    ({"estimator": "median"}, "`estimator` must be one of"),
    ({"on_missing": "skip"}, "`on_missing` must be one of"),
    ({"level": 1.5}, r"`level` must be in \(0, 1\)"),
    ({"n_resamples": 10}, "39"),
    ({"judged_k": 0}, "`judged_k` must be a positive integer"),
    ({"metric": "ndgc@10"}, "unknown metric"),
    ({"cluster": "nope"}, "`cluster='nope'` is not a column"),
])
def test_bad_input_is_one_clear_error(jtask, jruns, kw, msg):
    args = {"runs": jruns, "metric": "ndcg@10", **kw}
    runs = args.pop("runs")
    with pytest.raises(RagcovError, match=msg):
        leaderboard(runs, jtask, **args)


def test_one_run_is_an_error(jtask, jruns):
    with pytest.raises(RagcovError, match="at least 2 runs; got 1"):
        leaderboard({"okapi": jruns["okapi"]}, jtask, metric="ndcg@10")


# ------------------------------------------------------------------------------- validity on null families
def _real_values(task, runs, metric):
    qids = task["queries"]["_id"]
    return np.array([per_query(r, task["qrels"], metric, query_ids=qids).to_numpy() for r in runs.values()])


def test_family_wise_error_held_on_null_families(aneel, aneel_runs, capsys):
    """Null families from the real ANEEL per-query hit@1 of five retrievers, labels permuted within each
    document; Holm, the max-|t| p-values and the simultaneous intervals keep the FWER within Monte-Carlo error
    of 5%; unadjusted per-pair tests do not."""
    V = _real_values(aneel, aneel_runs, "hit@1")
    docs = aneel["queries"]["doc_id"]
    n = 400
    bound = 0.05 + 3 * np.sqrt(0.05 * 0.95 / n)
    for est in ("micro", "macro"):
        r = null_family_rates(V, docs, n_families=n, n_resamples=199, estimator=est, seed=3)
        with capsys.disabled():
            print(f"\nnull families ({est}, K={r['n_clusters']}, {n}): holm {r['holm']:.3f}, simultaneous "
                  f"{r['simultaneous']:.3f}, maxt {r['maxt']:.3f}, unadjusted {r['unadjusted']:.3f}")
        assert r["holm"] <= bound and r["simultaneous"] <= bound and r["maxt"] <= bound, r
        assert r["unadjusted"] > bound + 0.05, r


def test_family_wise_error_held_with_few_documents():
    """30 documents of unequal size (the issue's simulation): the small-K regime."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 40, 30)
    codes = np.repeat(np.arange(30), sizes)
    p = rng.beta(1, 2, 30)[codes]
    V = (rng.random((5, len(codes))) < p).astype(float)
    n = 400
    bound = 0.05 + 3 * np.sqrt(0.05 * 0.95 / n)
    r = null_family_rates(V, codes, n_families=n, n_resamples=199, seed=4)
    assert r["holm"] <= bound and r["simultaneous"] <= bound and r["maxt"] <= bound, r
    assert r["unadjusted"] > bound + 0.05, r
    assert (r["n_systems"], r["n_pairs"], r["n_clusters"]) == (5, 10, 30)


def test_null_permutation_keeps_each_cluster_a_relabelling():
    from ragcov_data.eval.comparisons._nullfamily import permute_within_clusters

    rng = np.random.default_rng(1)
    V = rng.random((4, 12))
    codes = np.repeat(np.arange(3), 4)
    P = permute_within_clusters(V, codes, 3, rng)
    for c in range(3):
        cols = codes == c
        rows = [next(i for i in range(4) if np.array_equal(P[s, cols], V[i, cols])) for s in range(4)]
        assert sorted(rows) == [0, 1, 2, 3]


def test_core_speed_20_systems_2312_queries_B5000():
    rng = np.random.default_rng(0)
    codes = np.sort(rng.integers(0, 147, 2312))
    codes = pd.factorize(codes)[0]
    V = rng.random((20, 2312))
    t = time.perf_counter()
    f = family(V, codes, int(codes.max()) + 1, estimator="micro", level=0.95, n_resamples=5000, rng=rng)
    assert time.perf_counter() - t < 2.0
    assert len(f["ia"]) == 190 and np.isfinite(f["pairs"]["low"]).all()


# ------------------------------------------------------------------------------- outputs
def test_json_fields_and_frames(jboard):
    d = json.loads(jboard.to_json())
    for k in ("metric", "level", "cluster", "n_clusters", "n_queries", "family", "systems", "pairs"):
        assert k in d
    assert d["family"]["p_adj"].startswith("hull_adjusted") and "p_cr2" in d["family"]
    need_s = {"name", "group", "estimate", "low", "high", "rank", "rank_low", "rank_high", "tier", "judged"}
    need_p = {"a", "b", "group", "diff", "low", "high", "p", "p_adj"}
    assert need_s <= set(d["systems"][0]) and need_p <= set(d["pairs"][0])
    assert list(jboard.systems.columns) == SYSTEM_COLUMNS == list(d["systems"][0])
    assert list(jboard.pairs.columns) == PAIR_COLUMNS == list(d["pairs"][0])
    assert len(d["systems"]) == 20 and len(d["pairs"]) == 40


def test_text_and_markdown_name_every_system_and_group(jboard):
    txt, md = repr(jboard), jboard.to_markdown()
    for name in jboard.systems["name"]:
        assert name in txt and name in md
    for g in ("G1", "G2", "G3"):
        assert f"group {g}" in txt and f"## {g}" in md
    n_sig = int(jboard.pairs[jboard.pairs["group"] == "__all__"]["significant"].sum())
    n_sig -= len((jboard.info.get("pool") or {}).get("groups", {}).get("__all__", {}).get("depends") or [])
    assert jboard.separable().startswith(f"{n_sig} of 10 pairs of 5 systems are separable")
    assert "judged@10" in txt and "its adjusted p-value" in txt.lower()


def test_html_renders_in_chromium(jboard, tmp_path):
    from _browser import chromium

    CHROMIUM = chromium()  # skipped with the install hint where no browser exists (never in CI)
    path = tmp_path / "board.html"
    text = jboard.to_html(path)
    assert "<link " not in text and not re.findall(r'src="(?!data:)', text)  # self-contained
    assert text.count('class="panel"') == 4 and text.count('<svg class="forest"') == 4
    assert text.count('<svg class="judged"') == 4 and text.count('<table class="pairs"') == 4
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=3000", "--dump-dom", path.as_uri()]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    body = re.search(r"<body[^>]*>", dom)
    assert body, "Chromium returned no DOM"
    assert 'data-leaderboard="ok"' in body.group(0) and 'data-panels-ok="4"' in body.group(0), body.group(0)
    n_sig = int(jboard.pairs["significant"].sum())
    assert dom.count('<td class="sig"') == n_sig and dom.count('<td class="ns"') == len(jboard.pairs) - n_sig


def test_null_family_rates_superpopulation_and_power():
    """Superpopulation null: the systems' census means made equal, clusters redrawn; a known shift on system 0
    is found (power) while the other pairs still measure the family-wise error; the new columns are counted."""
    from ragcov_data.eval.comparisons._nullfamily import _centered

    rng = np.random.default_rng(2)
    K = 30
    n = rng.integers(2, 12, K)
    codes = np.repeat(np.arange(K), n)
    V = np.array([(rng.random(len(codes)) < p).astype(float) for p in (0.3, 0.5, 0.6)])
    for est in ("micro", "macro"):
        Vc = _centered(V, codes, K, est)
        m = Vc.mean(1) if est == "micro" else np.array(
            [(np.bincount(codes, weights=v) / n).mean() for v in Vc])
        np.testing.assert_allclose(m, m.mean(), atol=1e-12)
    r = null_family_rates(V, codes, n_families=30, n_resamples=199, null="superpopulation", shift=0.3, seed=1)
    assert r["null"] == "superpopulation" and r["shift"] == 0.3
    assert r["power_p_adj"] > 0.9 and r["power_unadjusted"] >= r["power_p_adj"] - 1e-12
    assert r["p_adj"] == r["simultaneous"]  # the leaderboard's p_adj column decides as the interval
    assert 0 <= r["holm_cr2"] <= 1 and r["simultaneous"] <= 0.3
    two = null_family_rates(V[:2], codes, n_families=5, n_resamples=199, shift=0.1)
    assert two["simultaneous"] is None and two["power_simultaneous"] is not None  # no null pair left
    with pytest.raises(RagcovError, match="`null` must be one of"):
        null_family_rates(V, codes, n_families=5, null="bootstrap")


# ------------------------------------------------------------------ the headline follows what is verified
def _values_board(sizes, rates, shift, seed=0, estimator="auto"):
    """Three systems on synthetic self-retrieval-like values: documents of ``sizes`` queries at ``rates``."""
    rng = np.random.default_rng(seed)
    cl = np.repeat(np.arange(len(sizes)), sizes)
    base = np.repeat(rates, sizes)
    qids = [f"q{i}" for i in range(len(cl))]
    task = {"queries": pd.DataFrame({"_id": qids, "doc_id": [f"d{c}" for c in cl]}),
            "qrels": pd.DataFrame({"query-id": qids, "corpus-id": "rel", "score": 1})}
    runs = {}
    for k in range(3):
        y = rng.random(len(cl)) < np.clip(base + k * shift, 0, 1)
        runs[f"s{k}"] = pd.DataFrame({"query-id": qids, "corpus-id": np.where(y, "rel", "other"), "score": 1.0})
    return leaderboard(runs, task, metric="hit@1", estimator=estimator, n_resamples=199)


def test_auto_keeps_micro_where_it_is_verified():
    rng = np.random.default_rng(1)
    board = _values_board(rng.integers(8, 12, 60), rng.beta(2, 2, 60), 0.02)
    assert board.estimator == "micro" and "micro_line" not in board.info
    assert board.info["headline"].startswith("micro")
    same = _values_board(rng.integers(8, 12, 60), rng.beta(2, 2, 60), 0.02, estimator="micro")
    assert same.systems["estimate"].notna().all()


def test_auto_headlines_macro_where_micro_is_not_verified_and_keeps_trec_evals_numbers():
    # one document holds half the queries at a rate far from the rest: micro intervals cannot hold here
    rng = np.random.default_rng(2)
    sizes = np.r_[600, rng.integers(2, 8, 40)]
    rates = np.r_[0.95, rng.beta(1, 3, 40)]
    auto = _values_board(sizes, rates, 0.03)
    micro = _values_board(sizes, rates, 0.03, estimator="micro")
    assert auto.estimator == "macro" and auto.info["headline"].startswith("macro")
    line = auto.info["micro_line"]
    overall = micro.systems[micro.systems["group"] == "__all__"]
    assert [r["name"] for r in line["systems"]] == list(overall["name"])
    assert np.allclose([r["estimate"] for r in line["systems"]], overall["estimate"])  # trec_eval's numbers
    assert not overall["verified"].map(lambda v: v is True).all()
    assert auto.systems.loc[auto.systems["group"] == "__all__", "verified"].map(lambda v: v is True).all()
    assert "the largest holds" in line["reason"] and "CV" in line["reason"]
    text = auto.summary()
    assert "mean of per-document means" in text and "micro (mean over queries, trec_eval's number): s" in text
    assert line["reason"] in text and line["reason"] in auto.to_markdown()
    assert "micro is not verified at this design" in auto.to_latex() and "CV" in auto.to_latex()
    assert auto.to_dict()["info"]["micro_line"]["systems"][0]["name"] == line["systems"][0]["name"]


def test_estimator_names_auto_in_its_error():
    with pytest.raises(ragcov_data.errors.RagcovError, match="auto"):
        leaderboard({"a": {}, "b": {}}, {}, estimator="median")


def test_micro_line_says_short_only_of_rows_shown_short():
    from types import SimpleNamespace

    from ragcov_data.eval.comparisons.headline import micro_line

    systems = pd.DataFrame({"name": ["a", "b"], "group": "__all__", "estimate": [0.6, 0.5], "low": [0.5, 0.4],
                            "high": [0.7, 0.6], "method": "cr2", "verified_coverage": [0.97, 0.81],
                            "verified": [False, False], "verified_status": ["unverifiable", "not_verified"]})
    clusters = np.repeat(np.arange(10), [50, 1, 1, 1, 1, 1, 1, 1, 1, 2])
    line = micro_line(SimpleNamespace(systems=systems, level=0.95), clusters, "document")
    assert "cover 81.0%–81.0%, short of 95%" in line["reason"]  # 97% is not called short
    assert "for the others the check cannot vouch here" in line["reason"]
    assert "the largest holds 83% of them" in line["reason"]
    why = "queries per document are unequal here"  # the check's own reason, carried as it wrote it
    blind = micro_line(SimpleNamespace(systems=systems.assign(verified_status="unverifiable", verified_reason=why),
                                       level=0.95), clusters, "document")
    assert "short of" not in blind["reason"] and f"the check cannot vouch here: {why}" in blind["reason"]
    assert [r["mark"] for r in blind["systems"]] == ["‡", "‡"] and blind["systems"][0]["verified_reason"] == why
