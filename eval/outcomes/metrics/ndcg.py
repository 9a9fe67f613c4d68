"""Normalised discounted cumulative gain at k, as trec_eval's ``ndcg_cut_k``.

.. math::

    DCG@k(q) = \\sum_{i=1}^{k} \\frac{g(d_i)}{\\log_2(i + 1)}, \\qquad
    nDCG@k(q) = \\frac{DCG@k(q)}{IDCG@k(q)}

with linear gain :math:`g(d) = \\max(\\mathrm{grade}(d), 0)` (unjudged documents gain 0) for ``ndcg@k``,
and exponential gain :math:`g(d) = 2^{\\mathrm{grade}(d)} - 1` for the explicitly named ``ndcg_exp@k``.
The ideal DCG sorts *all* judged grades of the query (retrieved or not) in decreasing order. Graded
gains do not use the relevance threshold (as trec_eval). A query whose judged grades are all 0 has
IDCG = 0 and scores 0.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ragcov_data.eval.outcomes.metrics import _expected
from ragcov_data.eval.outcomes.metrics._lists import RankedLists


def _gain(grade: np.ndarray, exponential: bool) -> np.ndarray:
    g = np.clip(np.nan_to_num(grade, nan=0.0), 0.0, None)
    return np.exp2(g) - 1.0 if exponential else g


def _ndcg(lists: RankedLists, k: int, exponential: bool) -> pd.Series:
    if lists.expected:
        disc = np.concatenate(([0.0], 1.0 / np.log2(np.arange(1, k + 1) + 1.0)))
        dcg = _expected.weighted_sum(lists, k, _gain(lists.ranked["grade"].to_numpy(), exponential), disc)
    else:
        top = lists.top(k)
        disc = 1.0 / np.log2(top["pos"].to_numpy(dtype=float) + 1.0)
        dcg = pd.Series(_gain(top["grade"].to_numpy(), exponential) * disc).groupby(
            top["qidx"].to_numpy(), sort=False).sum()
    j = lists.judged.sort_values(["qidx", "grade"], ascending=[True, False], kind="mergesort")
    ipos = j.groupby("qidx", sort=False).cumcount().to_numpy() + 1
    keep = ipos <= k
    igain = _gain(j["grade"].to_numpy()[keep], exponential) / np.log2(ipos[keep] + 1.0)
    idcg = pd.Series(igain).groupby(j["qidx"].to_numpy()[keep], sort=False).sum()
    idcg = idcg.reindex(dcg.index, fill_value=0.0).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(idcg > 0, dcg.to_numpy() / np.where(idcg > 0, idcg, 1.0), 0.0)
    return pd.Series(out, index=dcg.index)


def ndcg(lists: RankedLists, k: int) -> pd.Series:
    """nDCG@k with linear gain (trec_eval ``ndcg_cut``), per query; the caller fills 0 for absent queries."""
    return _ndcg(lists, k, exponential=False)


def ndcg_exp(lists: RankedLists, k: int) -> pd.Series:
    """nDCG@k with exponential gain ``2**grade - 1`` (Burges et al. 2005), per query."""
    return _ndcg(lists, k, exponential=True)
