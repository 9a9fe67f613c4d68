"""The proxy study's coverage simulation: planted true orders, truths read as built, determinism for a seed."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ragcov_data.errors import RagcovError
from ragcov_data.eval.comparisons.proxy import Side
from ragcov_data.eval.planning.proxy_coverage import _known, _permutation, population_truth, proxy_coverage


def _sides(gap_p=0.2, gap_r=0.2, noise=0.0, seed=0):
    """Four systems: proxy per document (40), real per question (60, clustered by pairs); true orders
    a > b > c > d on the proxy, b > a > d > c on the real task."""
    rng = np.random.default_rng(seed)
    tp = {"a": 4, "b": 3, "c": 2, "d": 1}
    tr = {"a": 3, "b": 4, "c": 1, "d": 2}
    P = pd.DataFrame({k: gap_p * v + rng.normal(0, noise, 40) for k, v in tp.items()})
    R = pd.DataFrame({k: gap_r * v + rng.normal(0, noise, 60) for k, v in tr.items()})
    return Side(P, metric="p"), Side(R, clusters=np.repeat(np.arange(30), 2), metric="r")


def test_planted_orders_give_the_truth_they_promise():
    tp, tr = np.array([4.0, 3, 2, 1]), np.array([3.0, 4, 1, 2])
    rng = np.random.default_rng(0)
    same = _permutation("identical", tp, tr, None, rng)
    assert stats.kendalltau(tp[same], tr).statistic == pytest.approx(1.0)
    rev = _permutation("reversed", tp, tr, None, rng)
    assert stats.kendalltau(tp[rev], tr).statistic == pytest.approx(-1.0)
    perm, tau = _known(tp, tr, 0.5, rng)
    every = [stats.kendalltau(tp[list(p)], tr).statistic for p in itertools.permutations(range(4))]
    assert abs(tau - 0.5) == pytest.approx(min(abs(t - 0.5) for t in every))  # 1/3 and 2/3 are equally near
    assert stats.kendalltau(tp[perm], tr).statistic == pytest.approx(tau)


def test_clear_separations_cover_and_pin_tau():
    # every per-row difference is constant: both families separate every pair, the interval is the truth itself
    proxy, real = _sides(noise=0.0)
    tab = proxy_coverage(proxy, real, reps=15, n_resamples=199, seed=1)
    comp = tab[tab["method"] == "compatible_orders"].set_index("scenario")
    assert (comp["coverage"] == 1.0).all() and (comp["mean_width"] < 1e-9).all()
    assert comp.loc["identical", "true_tau"] == pytest.approx(1.0)
    assert comp.loc["reversed", "true_tau"] == pytest.approx(-1.0)
    assert comp.loc["identical", "low_above_0"] == 1.0 and comp.loc["reversed", "excludes_0"] == 1.0


def test_noise_widens_the_interval_and_a_seed_repeats():
    proxy, real = _sides(gap_p=0.01, gap_r=0.01, noise=0.5)
    one = proxy_coverage(proxy, real, reps=20, n_resamples=199, seed=3)
    assert one.equals(proxy_coverage(proxy, real, reps=20, n_resamples=199, seed=3))
    comp = one[one["method"] == "compatible_orders"]
    assert (comp["widest"] > 0.5).all() and (comp["coverage"] == 1.0).all()
    other = proxy_coverage(proxy, real, reps=20, n_resamples=199, seed=4)
    assert not one.equals(other)


def test_spread_moves_the_truths_by_the_factor():
    proxy, real = _sides(noise=0.3)
    from ragcov_data.eval.planning.proxy_coverage import _spread

    th = population_truth(proxy)
    wide = population_truth(_spread(proxy, 3.0))
    assert np.allclose(wide - wide.mean(), 3.0 * (th - th.mean()))
    macro = Side(real.values, real.clusters, estimator="macro")
    assert np.allclose(population_truth(macro), real.values.groupby(real.clusters).mean().mean().to_numpy())


def test_bad_arguments_are_named():
    proxy, real = _sides()
    with pytest.raises(RagcovError, match="scenarios"):
        proxy_coverage(proxy, real, scenarios=("same",), reps=2)
    with pytest.raises(RagcovError, match="reps"):
        proxy_coverage(proxy, real, reps=0)
    with pytest.raises(RagcovError, match="same systems"):
        proxy_coverage(proxy, Side(real.values.rename(columns={"a": "z"})), reps=2)
