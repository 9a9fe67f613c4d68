"""The proxy study's statistics: tau-b against scipy, the orders a family allows against brute force, the joint
resampling's draws (planted clusters), pair agreement on a hand-built example, determinism for a seed."""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ragcov_data.eval.comparisons import _orders
from ragcov_data.eval.comparisons.proxy import Side, pair_agreement, proxy_agreement
from ragcov_data.errors import RagcovError


# ------------------------------------------------------------------------------------------ tau-b
@pytest.mark.parametrize("S", [2, 3, 5, 7, 13])
def test_tau_b_equals_scipy_with_and_without_ties(S):
    rng = np.random.default_rng(S)
    for _ in range(200):
        x = rng.integers(0, 4, S).astype(float)  # many ties
        y = rng.integers(0, 4, S).astype(float) if rng.random() < 0.5 else rng.normal(size=S)
        ref = stats.kendalltau(x, y, variant="b").statistic
        got = _orders.kendall_tau_b(x, y)
        assert (math.isnan(ref) and math.isnan(got)) or got == pytest.approx(ref, abs=1e-12)


def test_tau_b_rows_is_the_scalar_on_every_row():
    rng = np.random.default_rng(0)
    X, Y = rng.integers(0, 5, (300, 6)).astype(float), rng.normal(size=(300, 6))
    rows = _orders.tau_b_rows(X, Y)
    ref = [stats.kendalltau(x, y).statistic for x, y in zip(X, Y)]
    assert np.allclose(rows, ref, equal_nan=True)


# ------------------------------------------------------------------------------------------ compatible orders
def _brute(sp, sr, S):
    """Min and max tau over every pair of strict orders keeping each side's forced signs (plain loops)."""
    ia, ib = np.triu_indices(S, 1)

    def ok(order, forced):  # order: rank of each system
        return all(f == 0 or np.sign(order[j] - order[i]) == f for f, i, j in zip(forced, ia, ib))

    ords = [np.array(p) for p in itertools.permutations(range(S))]
    xs, ys = [o for o in ords if ok(o, sp)], [o for o in ords if ok(o, sr)]
    taus = [stats.kendalltau(-x, -y).statistic for x in xs for y in ys]
    return min(taus), max(taus)


def _random_verdicts(rng, S, share):
    """The verdicts of a family whose estimates are a random order: each pair separated with probability share."""
    est = rng.permutation(S).astype(float)
    sign = _orders.signs(est)
    return np.where(rng.random(len(sign)) < share, sign, 0).astype(np.int8)


@pytest.mark.parametrize("S", [3, 4, 5])
def test_compatible_bounds_equal_brute_force(S):
    rng = np.random.default_rng(S)
    for _ in range(25):
        sp, sr = _random_verdicts(rng, S, 0.5), _random_verdicts(rng, S, 0.6)
        lo, hi, exact = _orders.compatible_bounds(sp, sr, S)
        assert exact
        blo, bhi = _brute(sp, sr, S)
        assert (lo, hi) == pytest.approx((blo, bhi), abs=1e-12)
        rlo, rhi = _orders.relaxed_bounds(_orders.closure(sp, S), _orders.closure(sr, S))
        assert rlo <= lo + 1e-12 and hi <= rhi + 1e-12  # the relaxation never narrows the range


def test_the_relaxation_is_loose_where_transitivity_binds():
    # proxy: a > b > c separated (so a > c); real: c > a only. Relaxed says tau <= 1/3; every pair of orders
    # has (a, c) discordant and one of (a, b), (b, c) discordant too: tau <= -1/3.
    sp, sr = np.array([1, 1, 1], np.int8), np.array([0, -1, 0], np.int8)
    assert _orders.relaxed_bounds(sp, sr) == pytest.approx((-1.0, 1 / 3))
    lo, hi, exact = _orders.compatible_bounds(sp, sr, 3)
    assert exact and (lo, hi) == pytest.approx(_brute(sp, sr, 3))
    assert (lo, hi) == pytest.approx((-1.0, -1 / 3))


def test_nothing_separated_allows_every_order():
    assert _orders.compatible_bounds(np.zeros(21, np.int8), _orders.signs(np.arange(7.0)), 7)[:2] == (-1.0, 1.0)


def test_a_cycle_of_verdicts_is_refused():
    with pytest.raises(ValueError, match="cycle"):
        _orders.closure(np.array([1, -1, 1], np.int8), 3)  # a > b, c > a, b > c


@pytest.mark.parametrize("S", [3, 4, 5, 6, 7])
def test_permutation_critical_tau_against_enumeration(S):
    perms = list(itertools.permutations(range(S)))
    taus = np.array([stats.kendalltau(range(S), p).statistic for p in perms])
    for alpha in (0.05, 0.01, 0.2):
        ok = [t for t in np.unique(taus) if (taus >= t - 1e-12).mean() <= alpha]
        assert _orders.permutation_critical_tau(S, alpha) == (pytest.approx(min(ok)) if ok else None)


# ------------------------------------------------------------------------------------------ resampling
def test_resampling_draws_whole_clusters_of_its_design():
    # planted clusters: system j is 1 on cluster j's rows, 0 elsewhere; a micro replicate then reads
    # count_j * n_j / sum_k count_k n_k, so the counts are recoverable and must be K whole clusters
    sizes = np.array([3, 1, 4, 2, 5])
    K = len(sizes)
    codes = np.repeat(np.arange(K), sizes)
    V = (codes[None, :] == np.arange(K)[:, None]).astype(float)
    est = _orders.resampled_estimates(V, codes, K, "micro", 400, np.random.default_rng(1))
    c = est / sizes[:, None]  # proportional to each replicate's counts
    k = c / c.sum(0) * K  # scaled to K draws
    assert np.allclose(k, np.round(k), atol=1e-9)
    assert (np.round(k) == 0).any() and (np.round(k) >= 2).any()  # with replacement: some left out, some twice
    # macro: the mean of the drawn clusters' means = count_j / K
    est = _orders.resampled_estimates(V, codes, K, "macro", 400, np.random.default_rng(2))
    assert np.allclose(est * K, np.round(est * K)) and np.allclose((est * K).sum(0), K)


def _side(values, clusters=None, metric="m", estimator="micro"):
    return Side(pd.DataFrame(values), clusters=clusters, metric=metric, task="t", estimator=estimator)


def test_the_two_designs_are_drawn_independently():
    # the same close systems on both sides: shared draws would give tau* = 1 on every replicate
    rng = np.random.default_rng(3)
    vals = {f"s{i}": rng.random(40) + 0.01 * i for i in range(4)}
    cl = np.repeat(np.arange(20), 2)
    res = proxy_agreement(_side(vals, cl), _side(vals, cl), n_resamples=499, check=False)
    assert res.tau["estimate"] == pytest.approx(1.0)
    assert res.bootstrap["low"] < 1.0 and res.bootstrap["p_positive"] < 1.0


def test_draw_clusters_brings_every_row_of_a_drawn_cluster():
    from ragcov_data.eval.planning.proxy_coverage import draw_clusters

    cl = np.array(["a", "a", "b", "c", "c", "c"])
    vals = pd.DataFrame({"x": [1.0, 1.0, 2.0, 3.0, 3.0, 3.0]})
    for seed in range(20):
        d = draw_clusters(Side(vals, cl), np.random.default_rng(seed))
        codes, K = d.codes()
        assert K == 3
        for k in range(K):  # each drawn cluster is one of the planted ones, whole
            rows = d.values["x"].to_numpy()[codes == k]
            assert len(set(rows)) == 1 and len(rows) == {1.0: 2, 2.0: 1, 3.0: 3}[rows[0]]


# ------------------------------------------------------------------------------------------ agreement
def test_pair_agreement_statuses():
    sp = np.array([1, 1, 0, -1, 0], np.int8)
    sr = np.array([1, -1, 1, 0, 0], np.int8)
    assert list(pair_agreement(sp, sr)) == ["agree", "disagree", "proxy_not_separable", "real_not_separable",
                                            "neither_separable"]


def test_a_hand_built_family_reads_as_built():
    # constant per-document differences: every pair that differs is separable, equal systems are not.
    # proxy: d > a > b = c; real: a = b > c > d
    n = 30
    proxy = _side({"a": np.full(n, .8), "b": np.full(n, .5), "c": np.full(n, .5), "d": np.full(n, .9)})
    real = _side({"a": np.full(n, .7), "b": np.full(n, .7), "c": np.full(n, .4), "d": np.full(n, .1)},
                 np.repeat(np.arange(15), 2))
    res = proxy_agreement(proxy, real, n_resamples=499, check=False)
    st = {(r.a, r.b): r.status for r in res.pairs.itertuples()}
    want = {("a", "c"): "agree", ("b", "c"): "proxy_not_separable", ("a", "d"): "disagree",
            ("b", "d"): "disagree", ("c", "d"): "disagree"}
    for (a, b), s in want.items():
        assert st.get((a, b), st.get((b, a))) == s
    ab = st.get(("a", "b"), st.get(("b", "a")))
    assert ab == "real_not_separable"
    assert res.agreement["agree"] == 1 and res.agreement["disagree"] == 3 and res.agreement["undetermined"] == 2
    assert res.winners["proxy"] == "d" and res.winners["real"] in ("a", "b") and not res.winners["same"]
    est_p = res.systems.set_index("name")["proxy_estimate"]
    est_r = res.systems.set_index("name")["real_estimate"]
    names = list(est_p.index)
    assert res.tau["estimate"] == pytest.approx(stats.kendalltau(est_p[names], est_r[names]).statistic)
    # the true orders are known exactly here (no noise): the interval holds the tau of the two truths
    assert res.tau["low"] <= res.tau["estimate"] <= res.tau["high"]


def test_same_seed_same_result_and_another_seed_moves_the_bootstrap():
    rng = np.random.default_rng(5)
    vals = {f"s{i}": rng.random(60) + 0.03 * i for i in range(5)}
    proxy, real = _side(vals), _side({k: v[::-1] + rng.normal(0, .1, 60) for k, v in vals.items()},
                                     np.repeat(np.arange(30), 2))
    one = proxy_agreement(proxy, real, n_resamples=499, seed=7, check=False).to_json()
    assert one == proxy_agreement(proxy, real, n_resamples=499, seed=7, check=False).to_json()
    other = json.loads(proxy_agreement(proxy, real, n_resamples=499, seed=8, check=False).to_json())
    assert other["bootstrap"] != json.loads(one)["bootstrap"]
    assert other["tau"]["estimate"] == json.loads(one)["tau"]["estimate"]


def test_bad_input_is_named():
    a = _side({"x": [1.0, 2.0], "y": [2.0, 1.0]})
    with pytest.raises(RagcovError, match="same systems"):
        proxy_agreement(a, _side({"x": [1.0, 2.0], "z": [2.0, 1.0]}), check=False)
    with pytest.raises(RagcovError, match="missing values"):
        proxy_agreement(a, _side({"x": [1.0, np.nan], "y": [2.0, 1.0]}), check=False)
    with pytest.raises(RagcovError, match="at least 2 systems"):
        proxy_agreement(_side({"x": [1.0]}), _side({"x": [1.0]}), check=False)


def test_a_side_of_two_documents_forces_no_order():
    # two documents: however clear its differences look, the interval takes none of its verdicts
    proxy = _side({"a": [0.9, 0.8], "b": [0.5, 0.4], "c": [0.2, 0.1]})
    real = _side({"a": np.full(20, .9), "b": np.full(20, .5), "c": np.full(20, .1)}, np.repeat(np.arange(10), 2))
    res = proxy_agreement(proxy, real, n_resamples=499, check=False)
    assert (res.tau["low"], res.tau["high"]) == (-1.0, 1.0) and res.tau["forced_pairs"]["proxy"] == 0
    assert res.tau["verified_status"] == "unverifiable" and "fewer than 3 clusters" in res.tau["reason"]
