"""Exact expectations over every order of tied documents (McSherry & Najork 2008), in closed form.

Within a query, documents with equal scores form a *tie group* occupying positions ``s+1 .. s+t``.
Under a uniformly random order of each group:

- a document of the group sits at each of those positions with probability ``1/t``, so a metric that
  sums ``gain(d) * w(position)`` (DCG, P@k, R@k) has expectation
  ``sum_d gain(d) * (W(min(s+t, k)) - W(min(s, k))) / t`` with ``W`` the cumulative weight;
- the first relevant document lies in the first group holding one (``r`` relevant of ``t``); the
  chance that none of its ``m = k - s`` positions inside the cutoff is relevant is
  ``C(t-r, m) / C(t, m)`` (hit@k), and the first relevant of the group is at offset ``j`` with
  probability ``C(t-j, r-1) / C(t, r)`` (reciprocal rank).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import gammaln

from ragcov_data.eval.outcomes.metrics._lists import RankedLists


def _lcomb(n: np.ndarray, m: np.ndarray) -> np.ndarray:
    """log C(n, m) (``-inf`` where ``m > n`` or ``m < 0``)."""
    n, m = np.asarray(n, dtype=float), np.asarray(m, dtype=float)
    ok = (m >= 0) & (m <= n)
    out = np.full(np.broadcast(n, m).shape, -np.inf)
    nn, mm = np.broadcast_arrays(n, m)
    out[ok] = gammaln(nn[ok] + 1) - gammaln(mm[ok] + 1) - gammaln(nn[ok] - mm[ok] + 1)
    return out


def weighted_sum(lists: RankedLists, k: int, gain: np.ndarray, weight: np.ndarray) -> pd.Series:
    """Expected ``sum_d gain(d) * weight[position(d)]`` over positions ``1..k``, per query.

    ``weight[p]`` is the weight of position ``p`` (``weight[0]`` unused); positions past ``k`` weigh 0.
    """
    r = lists.ranked
    s = r["gstart"].to_numpy()
    t = r["gsize"].to_numpy()
    cum = np.concatenate(([0.0], np.cumsum(weight[1:k + 1])))  # W(n), n = 0..k
    hi = cum[np.minimum(s + t, k)]
    lo = cum[np.minimum(s, k)]
    contrib = gain * (hi - lo) / t
    return pd.Series(contrib).groupby(r["qidx"].to_numpy(), sort=False).sum()


def first_relevant_group(lists: RankedLists) -> pd.DataFrame:
    """Per query with a relevant retrieved document: ``s`` (positions before its first tie group holding a
    relevant document), ``t`` (that group's size) and ``r`` (relevant documents in it); index ``qidx``."""
    r = lists.ranked
    rel = r[r["rel"].to_numpy()]
    g = rel.groupby(["qidx", "gstart"], sort=True).agg(t=("gsize", "first"), r=("rel", "size")).reset_index()
    g = g.drop_duplicates("qidx", keep="first")  # the smallest gstart of each query
    return g.rename(columns={"gstart": "s"}).set_index("qidx")


def hit(lists: RankedLists, k: int) -> pd.Series:
    """Expected hit@k: 1 - P(no relevant document within the cutoff)."""
    g = first_relevant_group(lists)
    s, t, rr = (g[c].to_numpy(dtype=float) for c in ("s", "t", "r"))
    out = np.where(s + t <= k, 1.0, 0.0)
    cut = (s < k) & (s + t > k)  # the cutoff falls inside the group: m of its t positions count
    m = k - s[cut]
    out[cut] = 1.0 - np.exp(_lcomb(t[cut] - rr[cut], m) - _lcomb(t[cut], m))
    return pd.Series(out, index=g.index)


def reciprocal_rank(lists: RankedLists, k: int) -> pd.Series:
    """Expected RR@k: the first relevant document's position averaged over the orders of its group."""
    g = first_relevant_group(lists)
    s, t, rr = (g[c].to_numpy(dtype=np.int64) for c in ("s", "t", "r"))
    span = np.clip(np.minimum(t - rr + 1, k - s), 0, None)  # offsets j = 1..span are inside the cutoff
    qi = np.repeat(np.arange(len(g)), span)
    j = np.arange(span.sum()) - np.repeat(np.cumsum(span) - span, span) + 1
    p = np.exp(_lcomb(t[qi] - j, rr[qi] - 1) - _lcomb(t[qi], rr[qi]))
    val = np.bincount(qi, weights=p / (s[qi] + j), minlength=len(g))
    return pd.Series(val, index=g.index)
