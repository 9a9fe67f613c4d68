"""Bounded quantities stay in bounds: intervals of rates inside [0, 1], of differences inside [-1, 1].

Construction: the interval of a method is computed on the raw scale (its coverage is what
:mod:`ragcov_data.eval.estimates.verify` measures) and then intersected with the range the quantity can take:
``[0, 1]`` for the mean of per-query values in ``[0, 1]`` (hit@k, MRR, nDCG, P@k, R@k, shares) and
``[-1, 1]`` for a mean paired difference of such values. The clipped interval covers exactly when the raw
one does, because the true value lies inside the range (its coverage *is* the raw interval's, measured),
and is never wider. Tables keep the method's raw endpoints in ``low`` / ``high`` and add the printed ones,
``low_bounded`` / ``high_bounded``, with a boolean ``clipped`` where an endpoint moved, so nothing is hidden.

A zero-variance interval (flag ``zero_variance``: every cluster has the same mean, e.g. no query was ever
hit) is the point ``[est, est]``; it is never shown alone as ``[0, 0]``: :func:`no_variation_text` says
what it is ("no variation: all 40 values 0").
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["value_range", "clip_table", "no_variation_text", "CLIPPED_FLAG"]

#: Column marking a row whose interval was cut to the quantity's range.
CLIPPED_FLAG = "clipped"


def value_range(values: Any) -> tuple[float, float] | None:
    """``(0, 1)`` when every value is in [0, 1], ``(-1, 1)`` when every value is in [-1, 1], else None."""
    v = np.asarray(values, dtype=float)
    if v.size == 0 or not np.all(np.isfinite(v)):
        return None
    if v.min() >= 0 and v.max() <= 1:
        return (0.0, 1.0)
    if v.min() >= -1 and v.max() <= 1:
        return (-1.0, 1.0)
    return None


def clip_table(table: pd.DataFrame, bounds: tuple[float, float] | None) -> pd.DataFrame:
    """``table`` with ``low_bounded``/``high_bounded`` (``low``/``high`` intersected with ``bounds``) and a
    boolean ``clipped`` (an endpoint moved) added; ``low``/``high`` stay the method's raw endpoints.
    ``bounds=None`` (values outside [-1, 1]): the bounded columns equal the raw ones."""
    out = table.copy()
    if out.empty or "low" not in out.columns:
        return out
    low, high = out["low"].astype(float), out["high"].astype(float)
    if bounds is not None:
        low, high = low.clip(lower=bounds[0], upper=bounds[1]), high.clip(lower=bounds[0], upper=bounds[1])
    out["low_bounded"], out["high_bounded"] = low, high
    out["clipped"] = ((low != out["low"]) | (high != out["high"])) & out["low"].notna()
    return out


def no_variation_text(values: Any) -> str:
    """What a zero-variance interval means, e.g. ``"no variation: all 40 values 0"``."""
    v = np.asarray(values, dtype=float)
    u = np.unique(v)
    if u.size == 1:
        return f"no variation: all {v.size} values {u[0]:g}"
    return f"no variation between clusters: every cluster's mean is the same ({v.size} values)"
