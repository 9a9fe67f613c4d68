"""Recall at k, as trec_eval's ``recall_k``.

.. math:: R@k(q) = \\frac{|\\{i \\le k : \\mathrm{rel}(d_i) \\ge \\theta\\}|}{|\\{d : \\mathrm{rel}(d) \\ge \\theta\\}|}

The denominator counts every judged relevant document of the query, retrieved or not. A query without
relevant judged documents scores 0 (as trec_eval).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ragcov_data.eval.outcomes.metrics import _expected
from ragcov_data.eval.outcomes.metrics._lists import RankedLists


def recall(lists: RankedLists, k: int) -> pd.Series:
    """R@k per query (queries without run rows are left out; the caller fills 0)."""
    if lists.expected:
        hits = _expected.weighted_sum(lists, k, lists.ranked["rel"].to_numpy(dtype=float), np.ones(k + 1))
    else:
        hits = lists.top(k).groupby("qidx", sort=False)["rel"].sum().astype(float)
    n_rel = lists.n_relevant()[hits.index.to_numpy()].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(n_rel > 0, hits.to_numpy() / np.where(n_rel > 0, n_rel, 1.0), 0.0)
    return pd.Series(out, index=hits.index)
