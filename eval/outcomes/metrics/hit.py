"""hit@k (success@k): does a relevant document appear in the top ``k``?

.. math:: \\mathrm{hit@}k(q) = \\mathbb{1}[\\exists\\, i \\le k : \\mathrm{rel}(d_i) \\ge \\theta]

Ties follow the lists' tie policy (see :mod:`ragcov_data.eval.outcomes.metrics._lists`): ``trec_eval`` and
``run`` read the order as it is; ``pessimistic`` counts a tie with a non-relevant document as a miss
(at k = 1: 1 only if every document tied at the top is relevant); ``optimistic`` the reverse;
``expected`` is the exact mean over every order of the tied documents (at k = 1: the share of relevant
documents among those tied at the top).
"""
from __future__ import annotations

import pandas as pd

from ragcov_data.eval.outcomes.metrics import _expected
from ragcov_data.eval.outcomes.metrics._lists import RankedLists


def hit(lists: RankedLists, k: int) -> pd.Series:
    """hit@k per query (queries without run rows are left out; the caller fills 0)."""
    if lists.expected:
        return _expected.hit(lists, k)
    return lists.top(k).groupby("qidx", sort=False)["rel"].max().astype(float)
