"""hit@k (success@k): does a relevant document appear in the top ``k``?

.. math:: \\mathrm{hit@}k(q) = \\mathbb{1}[\\exists\\, i \\le k : \\mathrm{rel}(d_i) \\ge \\theta]

For ``k = 1`` a tie policy decides what a tie at the top means. The *top tie group* is every row whose
score ties the rank-1 score under :func:`ragcov_data.ties.tied` (retrievers keep such rows beyond ``k``):

- ``first``: the rank-1 row alone decides (the run's order: score, then corpus order);
- ``pessimistic``: 1 only if every row of the top tie group is relevant (a tie with a non-relevant
  document counts as a miss);
- ``expected``: the share of relevant rows in the top tie group (the expected hit@1 of a uniformly
  random tie break).
"""
from __future__ import annotations

import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.metrics._lists import RankedLists
from ragcov_data.ties import TIE_POLICIES, tied


def hit(lists: RankedLists, k: int, *, tie_policy: str = "first") -> pd.Series:
    """hit@k per query (queries without run rows are left out; the caller fills 0)."""
    if tie_policy not in TIE_POLICIES:
        raise RagcovError(f"`tie_policy` must be one of {TIE_POLICIES}; got {tie_policy!r}.")
    r = lists.ranked
    if tie_policy == "first":
        return lists.top(k).groupby("qidx", sort=False)["rel"].max().astype(float)
    if k != 1:
        raise RagcovError(
            f"`tie_policy={tie_policy!r}` is defined for hit@1 only; got hit@{k}. Use tie_policy='first'."
        )
    top_score = r.loc[r["pos"] == 1].set_index("qidx")["score"]
    in_group = tied(r["score"].to_numpy(), top_score.reindex(r["qidx"]).to_numpy())
    group = r.loc[in_group, ["qidx", "rel"]]
    by = group.groupby("qidx", sort=False)["rel"]
    return (by.min() if tie_policy == "pessimistic" else by.mean()).astype(float)
