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
    assert c["hull (today)"] == max(c["t Bonferroni"], c["studentized bootstrap"])


def test_order_statistic_is_the_studentized_hull_rule():
    T = np.arange(20.0).reshape(1, 20)
    assert _order_stat(T, 0.95) == 19.0  # ceil(0.95 * 21) = 20th of 20
    assert _order_stat(T, 0.5) == 10.0  # ceil(0.5 * 21) = 11th
