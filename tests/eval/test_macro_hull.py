"""The macro family's studentized max-|t| hull (eval/_family.py): the replicate arithmetic against a plain
loop, the hull's relation to the t family, and its simultaneous coverage on skewed per-document differences."""
import numpy as np
import pytest

from ragcov_data.eval.comparisons._family import _studentized_hull, draw_weights, family


def _skewed_population(rng: np.random.Generator, D: int = 150, S: int = 4):
    """Per-query hit@1-like outcomes of S systems whose per-document differences are mostly 0 and, in a few
    documents, large: the shape of the ANEEL census where the t family read at Bonferroni's level is short."""
    sizes = rng.integers(3, 25, D)
    cl = np.repeat(np.arange(D), sizes)
    base = np.repeat(rng.uniform(0.2, 0.95, D), sizes)
    V = [(rng.random(len(cl)) < base).astype(float)]
    for s in range(1, S):
        hot = np.repeat(rng.random(D) < 0.25, sizes)  # a quarter of the documents move, by a lot
        flip = hot & (rng.random(len(cl)) < 0.6 + 0.1 * s)
        V.append(np.where(flip, 1.0 - V[0], V[0]))
    return np.vstack(V), cl, sizes


def test_replicates_equal_a_plain_loop():
    rng = np.random.default_rng(3)
    K, P, B = 12, 3, 99
    X = rng.normal(size=(P, K)) ** 3  # skewed cluster means of three pairs
    d, se = X.mean(1), X.std(1, ddof=1) / np.sqrt(K)
    live = np.ones(P, bool)
    zero, inf = np.zeros(P), np.full(P, np.inf)  # a neutral t family: the hull is then the bootstrap family
    p, _, low, high, pmax, phull = _studentized_hull(X, d, se, live, 0.95, B, np.random.default_rng(5), zero, inf,
                                                     -inf, zero, zero)
    M, T = [], []
    for W in draw_weights(K, B, np.random.default_rng(5)):
        for b in range(W.shape[1]):
            idx = np.repeat(np.arange(K), W[:, b].astype(int))
            row = []
            for k in range(P):
                x = X[k, idx]
                s_ = x.std(ddof=1) / np.sqrt(K)
                row.append(abs(x.mean() - d[k]) / s_ if s_ > 0 else 0.0)
            T.append(row)
            M.append(max(row))
    M, T = np.sort(M), np.array(T)
    c = M[int(np.ceil(0.95 * (B + 1))) - 1]
    np.testing.assert_allclose(low, d - c * se, rtol=0, atol=1e-12)
    np.testing.assert_allclose(high, d + c * se, rtol=0, atol=1e-12)
    tobs = np.abs(d) / se
    np.testing.assert_allclose(pmax, (1 + (M[:, None] >= tobs).sum(0)) / (B + 1), atol=1e-12)
    np.testing.assert_allclose(p, (1 + (T >= tobs).sum(0)) / (B + 1), atol=1e-12)
    # the hull's adjusted p-value is below the family's level exactly where its interval excludes 0
    np.testing.assert_array_equal(phull < 0.05, (low > 0) | (high < 0))


def test_hull_contains_the_t_family_and_verdicts_follow_it():
    rng = np.random.default_rng(11)
    V, cl, _ = _skewed_population(rng, D=60)
    t = family(V, cl, 60, estimator="macro", level=0.95, n_resamples=499, rng=np.random.default_rng(1),
               pair_test="cr2")
    h = family(V, cl, 60, estimator="macro", level=0.95, n_resamples=499, rng=np.random.default_rng(1),
               pair_test="wild_cluster")
    assert h["pair_method"] == "studentized_max_t+t" and t["pair_method"] == "t"
    assert (h["pairs"]["low"] <= t["pairs"]["low"] + 1e-12).all()
    assert (h["pairs"]["high"] >= t["pairs"]["high"] - 1e-12).all()
    assert (h["pairs"]["p"] >= t["pairs"]["p"] - 1e-12).all()
    np.testing.assert_allclose(h["systems"]["low"], t["systems"]["low"])  # systems keep their t intervals


@pytest.mark.parametrize("K", [20])
def test_simultaneous_coverage_on_skewed_documents(K):
    """A smaller bench_coverage_sampled part 2 for macro: K documents drawn with replacement; the hull covers
    all six differences at the nominal level (within 3 MC SE), where the t family read at Bonferroni's level
    falls short (about 89% here)."""
    rng = np.random.default_rng(21)
    V, cl, sizes = _skewed_population(rng)
    D = len(sizes)
    means = np.vstack([np.bincount(cl, weights=v) / sizes for v in V])
    ia, ib = np.triu_indices(len(V), 1)
    truth = means.mean(1)[ia] - means.mean(1)[ib]
    members = [np.flatnonzero(cl == k) for k in range(D)]
    R, hit = 200, {"cr2": 0, "wild_cluster": 0}
    for r in range(R):
        pick = rng.integers(0, D, K)
        rows = np.concatenate([members[k] for k in pick])
        cc = np.repeat(np.arange(K), sizes[pick])
        for pt in hit:
            pr = family(V[:, rows], cc, K, estimator="macro", level=0.95, n_resamples=199,
                        rng=np.random.default_rng([r, 1]), pair_test=pt)["pairs"]
            hit[pt] += bool(np.all((pr["low"] <= truth + 1e-12) & (truth - 1e-12 <= pr["high"])))
    assert hit["wild_cluster"] / R >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / R)
    assert hit["wild_cluster"] >= hit["cr2"]
    assert hit["cr2"] / R < 0.95 - 2 * np.sqrt(0.05 * 0.95 / R)  # the case the hull is for
