"""Precision at k, as trec_eval's ``P_k``.

.. math:: P@k(q) = \\frac{|\\{i \\le k : \\mathrm{rel}(d_i) \\ge \\theta\\}|}{k}

The denominator is always ``k``, even when the run has fewer than ``k`` rows for the query.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ragcov_data.eval.outcomes.metrics import _expected
from ragcov_data.eval.outcomes.metrics._lists import RankedLists


def precision(lists: RankedLists, k: int) -> pd.Series:
    """P@k per query (queries without run rows are left out; the caller fills 0)."""
    if lists.expected:
        w = np.full(k + 1, 1.0 / k)
        return _expected.weighted_sum(lists, k, lists.ranked["rel"].to_numpy(dtype=float), w)
    return lists.top(k).groupby("qidx", sort=False)["rel"].sum().astype(float) / k
