"""Design diagnostics: how much the document clustering shrinks the information in N queries."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval.estimates.interval import _interval_iv, sufficient_stats
from ragcov_data.eval.estimates.results import DesignEffectResult

__all__ = ["design_effect", "autocorrelation", "lag1_autocorr", "QUANTILES"]

#: Quantiles of the per-document rates reported beside the mean.
QUANTILES = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)


def autocorrelation(values: Any, clusters: Any, order: Any = None, max_lag: int = 1) -> np.ndarray:
    """Pooled within-cluster autocorrelation of residuals from cluster means at lags ``1..max_lag``.

    ``r_i = y_i - mean_d(i)``; queries are ordered within each cluster (document) by ``order`` (e.g. the
    chunk index) or by their position. ``rho_l = sum_d sum_t r_dt r_d(t+l) / sum_d sum_t r_dt^2``: pairs
    ``l`` apart in the same document over the total within-document variation. Every lag is nan when
    every residual is 0 (no within-document variation). The one implementation: the design diagnostics
    (lag 1), the twin's calibration and the benchmark report's correlogram use it.

    Returns
    -------
    ndarray of float, shape (max_lag,)
    """
    if not isinstance(max_lag, (int, np.integer)) or max_lag < 1:
        raise ValueError(f"`max_lag` must be a positive integer; got {max_lag!r}.")
    y = np.asarray(values, dtype=float)
    codes, _ = pd.factorize(pd.Series(np.asarray(clusters)), sort=True)
    pos = np.arange(len(y))
    o = pos if order is None else np.asarray(order)
    if order is not None and o.dtype == object:  # mixed or missing positions: pandas' rank puts NaN last
        o = pd.Series(o).rank(method="first", na_option="bottom").to_numpy()
    idx = np.lexsort((pos, o, codes))  # by cluster, then order, then input position
    c, y = codes[idx], y[idx]
    K = int(c.max()) + 1 if len(c) else 0
    means = np.bincount(c, weights=y, minlength=K) / np.maximum(np.bincount(c, minlength=K), 1)
    r = y - means[c]
    den = float((r * r).sum())
    out = np.full(int(max_lag), np.nan)
    if den <= 0:
        return out
    for lag in range(1, int(max_lag) + 1):
        if lag >= len(r):
            out[lag - 1] = 0.0
            continue
        same = c[lag:] == c[:-lag]
        out[lag - 1] = float((r[lag:] * r[:-lag])[same].sum() / den)
    return out


def lag1_autocorr(values: np.ndarray, clusters: np.ndarray, order: Any = None) -> float:
    """Pooled within-document lag-1 autocorrelation of residuals from document means (lag 1 of
    :func:`autocorrelation`). Returns nan when every residual is 0 (no within-document variation)."""
    return float(autocorrelation(values, clusters, order, 1)[0])


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
        ``icc`` (one-way ANOVA, unequal sizes; reported as estimated, possibly negative),
        ``deff = 1 + ((cv^2 + 1) * mean_size - 1) * max(icc, 0)``, ``cv`` (sd/mean of sizes,
        ddof = 0), ``mean_size``, ``n_eff = N / deff``, plus ``lag1_autocorr``, ``share_never_hit``
        (documents whose values are all 0), ``quantiles`` of the per-document rates and ``flags``.

    Notes
    -----
    With unequal sizes the balanced ``1 + (m - 1) icc`` understates DEFF; ``(cv^2 + 1) mean_size``
    equals ``sum n_d^2 / N`` (Eldridge, Ashby & Kerry 2006). DEFF is a model-based variance
    reference for the micro mean, not a count of independent documents.

    A negative ANOVA ICC (documents *less* alike inside than across: between-document mean square
    below the within one) is flagged ``negative_icc`` and truncated at 0 for DEFF and N_eff, so
    DEFF = 1 and N_eff = N. Why truncate rather than report ``1 + (...) icc`` as is: the estimator's
    floor ``-1/(n0 - 1)`` times ``sum n_d^2 / N - 1`` easily passes -1 with large documents, giving
    DEFF <= 0 and a negative or infinite N_eff that is no variance ratio at all; a negative estimate
    is, for documents sampled at random, mostly noise around a small non-negative ICC (the usual
    convention sets it to 0), and it is the same rule ``deff_wald`` applies. The raw ICC stays in
    ``icc``. Other cases never give a silent nan: ``k_lt_2`` (one document) and ``zero_variance``
    (every value equal) leave ICC, DEFF and N_eff nan and say so; ``icc_undefined`` (every document
    has a single query, so there is no within-document variation to compare) leaves ICC nan while
    DEFF = 1 and N_eff = N exactly (``sum n_d^2 / N = 1``).

    Examples
    --------
    >>> d = design_effect([1, 1, 0, 0, 1, 0], ["a", "a", "b", "b", "c", "c"])
    >>> round(d.deff, 3), d.n_clusters
    (1.5, 3)
    >>> d = design_effect([0, 1, 0, 1, 1, 0], ["a", "a", "b", "b", "c", "c"])  # every document half hits
    >>> round(d.icc, 3), d.deff, d.n_eff, d.flags
    (-1.0, 1.0, 6.0, ('negative_icc',))
    """
    v, c = _interval_iv(values, clusters, 0.95, 1)
    _, n, s, q = sufficient_stats(v, c)
    K, N = len(n), float(n.sum())
    icc = float(_kernels.anova_icc(n, s, q)[0]) if K >= 2 else float("nan")
    mean_size = N / K
    cv = float(n.std(ddof=0) / mean_size)
    size_term = (cv * cv + 1.0) * mean_size - 1.0  # sum n^2 / N - 1, 0 when every document has one query
    flags: list[str] = []
    if K < 2:
        flags.append("k_lt_2")
        deff = float("nan")
    elif np.allclose(v, v[0]):
        flags.append("zero_variance")
        deff = float("nan")
    elif not np.isfinite(icc):  # no within-document variation to compare with (all singletons)
        flags.append("icc_undefined")
        deff = 1.0
    else:
        if icc < 0:
            flags.append("negative_icc")
        deff = 1.0 + size_term * max(icc, 0.0)
    rates = s / n
    return DesignEffectResult(
        icc=icc, deff=float(deff), cv=cv, mean_size=mean_size,
        n_eff=float(N / deff) if np.isfinite(deff) else float("nan"),
        n_obs=int(N), n_clusters=K,
        lag1_autocorr=lag1_autocorr(v, c, order),
        share_never_hit=float(np.mean(q == 0)),
        quantiles={f"q{int(round(p * 100)):02d}": float(x) for p, x in zip(QUANTILES, np.quantile(rates, QUANTILES))},
        flags=tuple(flags),
    )
