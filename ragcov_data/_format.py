"""One number formatter for every view (console, markdown, HTML, LaTeX): fixed decimals, an optional
sign, a dash for a missing or non-finite value, and never a negative zero (``-0.000`` reads as a
difference below zero where there is none)."""
from __future__ import annotations

import math
from typing import Any

__all__ = ["num", "pct"]


def _finite(x: Any) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def num(x: Any, nd: int = 4, sign: bool = False, missing: str = "–") -> str:
    """``x`` with ``nd`` decimals (``sign``: a leading ``+`` on non-negative values); ``missing`` for None,
    NaN or infinity; a value that rounds to zero prints as zero, never ``-0.000``.

    >>> num(-0.00004, 3), num(-0.00004, 3, sign=True), num(0.12345), num(float("nan"))
    ('0.000', '+0.000', '0.1235', '–')
    """
    if not _finite(x):
        return missing
    v = round(float(x), nd)
    if v == 0:
        v = 0.0  # drops the sign of -0.0
    return f"{v:+.{nd}f}" if sign else f"{v:.{nd}f}"


def pct(x: Any, nd: int = 1, missing: str = "–") -> str:
    """``x`` (a share) as a percentage with ``nd`` decimals: ``pct(0.9345) == '93.5%'`` (never ``-0.0%``)."""
    if not _finite(x):
        return missing
    return num(100 * float(x), nd) + "%"
