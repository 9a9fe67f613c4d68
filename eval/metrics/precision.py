"""Precision at k, as trec_eval's ``P_k``.

.. math:: P@k(q) = \\frac{|\\{i \\le k : \\mathrm{rel}(d_i) \\ge \\theta\\}|}{k}

The denominator is always ``k``, even when the run has fewer than ``k`` rows for the query.
"""
from __future__ import annotations

import pandas as pd

from ragcov_data.eval.metrics._lists import RankedLists


def precision(lists: RankedLists, k: int) -> pd.Series:
    """P@k per query (queries without run rows are left out; the caller fills 0)."""
    return lists.top(k).groupby("qidx", sort=False)["rel"].sum().astype(float) / k
