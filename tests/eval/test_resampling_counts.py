"""The bootstrap's building blocks against brute force: resampling counts (each replicate K draws with
replacement, counted per document) and cluster sums (each cluster's total of a row of values)."""
from __future__ import annotations

import numpy as np
import pytest

from ragcov_data.eval.comparisons._family import cluster_sums
from ragcov_data.eval.estimates import _kernels


@pytest.mark.parametrize("R, K, B", [(1, 1, 7), (1, 50, 499), (3, 64, 99), (100, 30, 39), (2, 127, 11)])
def test_bootstrap_counts_count_the_draws_of_the_generator(R, K, B):
    """c[r, k, b] is how often document k is among replicate b's K draws, read from the same generator's draws,
    so the counts (and every interval built on them) are those of counting the draws one by one."""
    got = _kernels.bootstrap_counts(R, K, B, np.random.default_rng(11))
    draws = np.random.default_rng(11).integers(0, K, size=(R, K, B), dtype=np.int8)
    ref = np.zeros((R, K, B), dtype=np.int8)
    for r in range(R):
        for b in range(B):
            for d in draws[r, :, b]:
                ref[r, d, b] += 1
    assert got.dtype == np.int8 and got.flags.c_contiguous and np.array_equal(got, ref)
    assert (got.sum(axis=1) == K).all()
    with pytest.raises(ValueError, match="K must be <= 127"):
        _kernels.bootstrap_counts(1, 128, 3, 0)


def test_counts_chunk_is_the_same_counts_either_side_of_64_documents():
    for K in (64, 65, 300):
        got = _kernels._counts_chunk(2, K, 17, np.random.default_rng(3))
        assert got.dtype == np.float64 and got.shape == (2, K, 17) and (got.sum(axis=1) == K).all()


def test_cluster_sums_are_each_clusters_total_whatever_the_order_of_calls():
    """The membership matrix is built once per codes and kept: sums for other codes, other K, or the same codes
    again equal the per-cluster totals computed directly, to the last bit."""
    rng = np.random.default_rng(5)
    cases = [(rng.integers(0, K, N), K) for N, K in ((200, 13), (50, 50), (200, 13), (31, 40))]
    cases.append((cases[0][0], 20))  # the same codes with empty clusters after them
    for codes, K in cases * 2:
        V = rng.normal(size=(3, len(codes)))
        ref = np.stack([[v[codes == k].sum() if (codes == k).any() else 0.0 for k in range(K)] for v in V])
        got = cluster_sums(V, codes, K)
        assert got.shape == (3, K) and np.allclose(got, ref, rtol=0, atol=1e-12)
        assert np.array_equal(got, cluster_sums(V.copy(), codes.copy(), K))
