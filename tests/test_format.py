"""The one number formatter: fixed decimals, a sign on request, a dash for missing values, no negative zero."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ragcov_data._format import num, pct


@pytest.mark.parametrize("x,nd,sign,want", [
    (-0.00004, 3, False, "0.000"), (-0.00004, 3, True, "+0.000"), (-0.0005001, 3, False, "-0.001"),
    (0.12345, 4, False, "0.1235"), (0.25, 2, True, "+0.25"), (-0.25, 2, True, "-0.25"), (np.float64(-0.0), 4, False, "0.0000"),
    (3, 1, False, "3.0"), (None, 4, False, "–"), (float("nan"), 4, False, "–"), (math.inf, 2, True, "–"),
    ("x", 2, False, "–")])
def test_num(x, nd, sign, want):
    assert num(x, nd, sign=sign) == want


def test_never_a_negative_zero_on_a_grid():
    for x in np.linspace(-0.001, 0.001, 2001):
        for nd in (1, 2, 3, 4):
            s = num(x, nd)
            assert not (s.startswith("-") and float(s) == 0.0), (x, nd, s)
            assert abs(float(s) - x) <= 0.5 * 10 ** -nd + 1e-12, (x, nd, s)  # correctly rounded


def test_pct():
    assert pct(0.9345) == "93.5%" and pct(-0.00001) == "0.0%" and pct(None) == "–" and pct(0.5, 0) == "50%"
