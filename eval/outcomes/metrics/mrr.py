"""Reciprocal rank of the first relevant document within the top k (MRR@k once averaged).

.. math:: RR@k(q) = \\max_{i \\le k,\\ \\mathrm{rel}(d_i) \\ge \\theta} \\frac{1}{i} \\quad (0 \\text{ if none})

Equals ir_measures' ``RR@k`` and trec_eval's ``recip_rank`` on runs truncated to ``k`` rows.
"""
from __future__ import annotations

import pandas as pd

from ragcov_data.eval.outcomes.metrics import _expected
from ragcov_data.eval.outcomes.metrics._lists import RankedLists


def mrr(lists: RankedLists, k: int) -> pd.Series:
    """RR@k per query (queries without run rows are left out; the caller fills 0)."""
    if lists.expected:
        return _expected.reciprocal_rank(lists, k)
    top = lists.top(k)
    rr = (1.0 / top["pos"]).where(top["rel"], 0.0)
    return rr.groupby(top["qidx"], sort=False).max().astype(float)
