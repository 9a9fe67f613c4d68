"""CR2 + Satterthwaite against R clubSandwich 0.5.8 (script and output in tests/reference/)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ragcov_data.eval import interval

REF = Path(__file__).resolve().parents[1] / "reference"
DATA = pd.read_csv(REF / "cr2_data.csv")
EXPECTED = pd.read_csv(REF / "cr2_reference.csv", skipinitialspace=True)
DATASETS = ["unequal", "heavy_tailed", "many_zero", "k5", "dominant", "continuous"]


def _row(dataset, model):
    return EXPECTED[(EXPECTED["dataset"] == dataset) & (EXPECTED["model"] == model)].iloc[0]


@pytest.mark.parametrize("dataset", DATASETS)
def test_micro_cr2_matches_clubsandwich(dataset):
    d = DATA[DATA["dataset"] == dataset]
    r = interval(d["y"].to_numpy(), d["cluster"].to_numpy(), "micro", "cr2")
    ref = _row(dataset, "micro_ols")
    assert r.estimate == pytest.approx(ref["estimate"], rel=1e-10)
    assert r.se == pytest.approx(ref["se"], rel=1e-9)
    assert r.df == pytest.approx(ref["df"], rel=1e-9)
    assert (r.low, r.high) == pytest.approx((ref["low"], ref["high"]), rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("method", ["cr2", "t", "cr1"])
def test_macro_matches_clubsandwich_cluster_level_regression(dataset, method):
    d = DATA[DATA["dataset"] == dataset]
    r = interval(d["y"].to_numpy(), d["cluster"].to_numpy(), "macro", method)
    ref = _row(dataset, "macro_cluster_level")
    assert r.estimate == pytest.approx(ref["estimate"], rel=1e-10)
    assert r.se == pytest.approx(ref["se"], rel=1e-9)
    assert r.df == pytest.approx(ref["df"], rel=1e-9)
    assert (r.low, r.high) == pytest.approx((ref["low"], ref["high"]), rel=1e-8, abs=1e-10)


def test_reference_covers_the_hard_cases():
    sizes = DATA.groupby(["dataset", "cluster"]).size()
    assert sizes["k5"].size == 5
    assert sizes["dominant"].max() / sizes["dominant"].sum() > 0.9
    rates = DATA.groupby(["dataset", "cluster"])["y"].mean()
    assert (rates["many_zero"] == 0).sum() >= 10
    assert not np.isin(DATA.loc[DATA["dataset"] == "continuous", "y"], [0, 1]).all()
