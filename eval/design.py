"""Design diagnostics: how much the document clustering shrinks the information in N queries."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from . import _core
from .interval import _interval_iv, sufficient_stats
from .results import DesignEffectResult

__all__ = ["design_effect", "lag1_autocorr", "QUANTILES"]

#: Quantiles of the per-document rates reported beside the mean.
QUANTILES = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)


def lag1_autocorr(values: np.ndarray, clusters: np.ndarray, order: Any = None) -> float:
    """Pooled within-document lag-1 autocorrelation of residuals from document means.

    ``r_i = y_i - mean_d(i)``; queries are ordered within each document by ``order`` (e.g. the chunk
    index) or by their position. ``rho_1 = sum_d sum_t r_dt r_d(t+1) / sum_d sum_t r_dt^2``.
    Returns nan when every residual is 0 (no within-document variation).
    """
    df = pd.DataFrame({"c": clusters, "y": values, "o": np.arange(len(values)) if order is None else np.asarray(order)})
    df["pos"] = np.arange(len(df))
    df = df.sort_values(["c", "o", "pos"], kind="stable")
    r = (df["y"] - df.groupby("c", sort=False)["y"].transform("mean")).to_numpy()
    same = (df["c"].to_numpy()[1:] == df["c"].to_numpy()[:-1])
    den = float((r * r).sum())
    if den <= 0:
        return float("nan")
    return float((r[1:] * r[:-1])[same].sum() / den)


def design_effect(values: Any, clusters: Any, *, order: Any = None) -> DesignEffectResult:
    """ICC, design effect and effective sample size of per-query values clustered by document.

    Parameters
    ----------
    values : array_like of float
        One outcome per query.
    clusters : array_like
        Document of each query.
    order : array_like, optional
        Position of each query within its document (chunk index) for the lag-1 autocorrelation;
        default: input order.

    Returns
    -------
    DesignEffectResult
        ``icc`` (one-way ANOVA, unequal sizes), ``deff = 1 + ((cv^2 + 1) * mean_size - 1) * icc``,
        ``cv`` (sd/mean of sizes, ddof = 0), ``mean_size``, ``n_eff = N / deff``, plus
        ``lag1_autocorr``, ``share_never_hit`` (documents whose values are all 0) and ``quantiles``
        of the per-document rates.

    Notes
    -----
    With unequal sizes the balanced ``1 + (m - 1) icc`` understates DEFF; ``(cv^2 + 1) mean_size``
    equals ``sum n_d^2 / N`` (Eldridge, Ashby & Kerry 2006). DEFF is a model-based variance
    reference for the micro mean, not a count of independent documents.

    Examples
    --------
    >>> d = design_effect([1, 1, 0, 0, 1, 0], ["a", "a", "b", "b", "c", "c"])
    >>> round(d.deff, 3), d.n_clusters
    (1.5, 3)
    """
    v, c = _interval_iv(values, clusters, 0.95, 1)
    _, n, s, q = sufficient_stats(v, c)
    K, N = len(n), float(n.sum())
    icc = float(_core.anova_icc(n, s, q)[0]) if K >= 2 else float("nan")
    mean_size = N / K
    cv = float(n.std(ddof=0) / mean_size)
    deff = 1.0 + ((cv * cv + 1.0) * mean_size - 1.0) * icc
    rates = s / n
    return DesignEffectResult(
        icc=icc, deff=float(deff), cv=cv, mean_size=mean_size,
        n_eff=float(N / deff) if np.isfinite(deff) and deff > 0 else float("nan"),
        n_obs=int(N), n_clusters=K,
        lag1_autocorr=lag1_autocorr(v, c, order),
        share_never_hit=float(np.mean(q == 0)),
        quantiles={f"q{int(round(p * 100)):02d}": float(x) for p, x in zip(QUANTILES, np.quantile(rates, QUANTILES))},
    )
