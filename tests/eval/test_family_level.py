"""Level of the leaderboard's macro family on synthetic null families, and the macro candidates of
``benchmarks/bench_null_families.py --candidates`` against brute-force references."""
import sys
from itertools import product
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ragcov_data.eval import null_family_rates

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_null_families import _order_stat, macro_crits  # noqa: E402


def _population(rng: np.random.Generator, D: int = 40, S: int = 4):
    """S exchangeable systems on D documents of 2-11 queries: a document effect, a system-by-document effect
    and query noise (smooth, symmetric per-document differences)."""
    sizes = rng.integers(2, 12, D)
    cl = np.repeat(np.arange(D), sizes)
    base = np.repeat(rng.normal(0.5, 0.15, D), sizes)
    V = np.vstack([base + np.repeat(rng.normal(0, 0.05, D), sizes) + rng.normal(0, 0.1, len(cl))
                   for _ in range(S)])
    return V, cl


@pytest.mark.parametrize("null", ["permutation", "superpopulation"])
def test_macro_family_holds_its_level_on_null_families(null):
    """Four systems, six pairs, 400 null families: the verdict's family-wise error is within 3 MC SE of the
    nominal 5% on either side (above: invalid; below: conservative, lost power); p_adj decides as the interval."""
    V, cl = _population(np.random.default_rng(7))
    r = null_family_rates(V, cl, n_families=400, n_resamples=199, estimator="macro", seed=1, null=null)
    se = np.sqrt(0.05 * 0.95 / 400)
    assert abs(r["simultaneous"] - 0.05) <= 3 * se, r["simultaneous"]
    assert r["p_adj"] == r["simultaneous"]


def test_sign_flip_critical_value_equals_full_enumeration():
    """K = 8 documents: the Rademacher weights are all 2^8 sign vectors, so ``c`` is the order statistic of
    the max over pairs of the one-sample t statistics (scipy) of the sign-flipped differences."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3, 8)) ** 3
    X[2, :5] = 0.0  # a pair with exact-zero documents
    c = macro_crits(X, 0.95, 999, np.random.default_rng(0))
    M = []
    for w in product([-1.0, 1.0], repeat=8):
        t = [stats.ttest_1samp(np.asarray(w) * x, 0.0).statistic for x in X]
        M.append(np.nanmax(np.abs(t)))
    M = np.sort(M)
    assert c["sign-flip Rademacher"] == pytest.approx(M[int(np.ceil(0.95 * (len(M) + 1))) - 1], rel=1e-10)
    assert c["t Bonferroni"] == pytest.approx(stats.t.isf(0.05 / 3 / 2, 7))
    assert c["t + studentized hull (earlier)"] == max(c["t Bonferroni"], c["studentized bootstrap"])


def test_order_statistic_is_the_studentized_hull_rule():
    T = np.arange(20.0).reshape(1, 20)
    assert _order_stat(T, 0.95) == 19.0  # ceil(0.95 * 21) = 20th of 20
    assert _order_stat(T, 0.5) == 10.0  # ceil(0.5 * 21) = 11th


def test_hall_bootstrap_critical_value_equals_a_plain_loop():
    """The Hall candidate's ``c`` from sums of x, x^2, x^3 under resampling counts equals a loop that resamples
    each replicate's documents and computes mean, SD (ddof 1), third central moment and the transform directly."""
    from ragcov_data.eval.comparisons._family import draw_weights

    rng = np.random.default_rng(4)
    X = rng.exponential(size=(3, 15)) - 1.0  # skewed per-document differences
    X[1, :9] = 0.0
    B = 199
    c = macro_crits(X, 0.95, B, np.random.default_rng(8))["Hall bootstrap"]
    d = X.mean(1)
    M = []
    for W in draw_weights(15, B, np.random.default_rng(8)):
        for b in range(W.shape[1]):
            idx = np.repeat(np.arange(15), W[:, b].astype(int))
            row = []
            for k in range(3):
                x = X[k, idx]
                s = x.std(ddof=1)
                if s <= 0:
                    row.append(0.0)
                    continue
                g = np.mean((x - x.mean()) ** 3) / s ** 3
                w = (x.mean() - d[k]) / s
                row.append(abs(np.sqrt(15) * (w + g * w ** 2 / 3 + g ** 2 * w ** 3 / 27 + g / 90)))
            M.append(max(row))
    M = np.sort(M)
    assert c == pytest.approx(M[int(np.ceil(0.95 * (B + 1))) - 1], rel=1e-9)
    assert np.isfinite(c) and c > 0


def test_hall_statistic_is_monotone_and_removes_nothing_without_skew():
    from bench_null_families import hall_stat

    w = np.linspace(-6, 6, 241)
    for g in (-2.0, 0.0, 0.7, 3.0):
        t = hall_stat(w, np.ones_like(w), np.full_like(w, g), 0.0, 25)
        assert np.all(np.diff(t) >= -1e-12)  # derivative (1 + g W / 3)^2 >= 0
    np.testing.assert_allclose(hall_stat(w, np.ones_like(w), np.zeros_like(w), 0.0, 25), 5.0 * w)


def test_gain_on_queries_raises_the_mean_by_the_shift_on_some_queries():
    """``shift_on='some_queries'``: only queries below 1 change, each to 1, and the fewest that raise the mean by the
    shift (one fewer would not); values outside [0, 1] are refused."""
    from ragcov_data.eval.comparisons._nullfamily import gain_on_queries
    from ragcov_data.errors import RagcovError

    rng = np.random.default_rng(3)
    v = np.where(rng.random(400) < 0.6, 1.0, rng.uniform(0, 1, 400) * (rng.random(400) < 0.5))
    for shift in (0.005, 0.02, 0.05):
        out = gain_on_queries(v, shift, np.random.default_rng(1))
        changed = out != v
        assert np.all(v[changed] < 1) and np.all(out[changed] == 1.0)
        assert out.mean() - v.mean() >= shift - 1e-12
        # the changed queries are the first k of a random order of the queries below 1, k the fewest that suffice
        order = np.random.default_rng(1).permutation(np.flatnonzero(v < 1))
        k = int(changed.sum())
        assert set(np.flatnonzero(changed)) == set(order[:k].tolist())
        gain = 1.0 - v[order]
        assert gain[:k - 1].sum() < shift * len(v) <= gain[:k].sum() + 1e-12
    V = np.vstack([v, v[::-1]]) * 5
    with pytest.raises(RagcovError, match="shift_on='every_query'"):
        null_family_rates(V, np.arange(400) % 40, n_families=2, shift=0.02, shift_on="some_queries")
