"""Planner: K from the design effect agrees with simulation; recommend picks verified methods."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.eval.planning.planner import plan, recommend
from ragcov_data.eval.planning.twin import simulate_population


@pytest.fixture(scope="module")
def twin():
    return simulate_population(n_docs=600, n_chunks=15000, seed=2)


def test_plan_k_consistent_with_simulation(twin):
    res = plan(twin, 0.06, reps=600, seed=1)
    df = res.to_frame().set_index("estimator")
    for est in ("micro", "macro"):
        r = df.loc[est]
        assert r["feasible"] and r["predicted_halfwidth"] <= 0.06
        # the simulated mean half-width at K is within 12% of the target
        assert abs(r["achieved_halfwidth"] - 0.06) / 0.06 < 0.12, (est, r["achieved_halfwidth"])
        assert r["coverage"] > 0.85
    assert df.loc["micro", "deff"] > 5  # strongly clustered twin
    assert "K =" in repr(res)


def test_plan_k_is_minimal_and_scales_with_precision(twin):
    a = plan(twin, 0.08, confirm=False).to_frame().set_index("estimator")
    b = plan(twin, 0.04, confirm=False).to_frame().set_index("estimator")
    for est in ("micro", "macro"):
        assert 3.2 < b.loc[est, "k"] / a.loc[est, "k"] < 4.8  # half the width, ~4x the documents


def test_plan_iid_documents_have_deff_near_one():
    rng = np.random.default_rng(0)
    pop = pd.DataFrame({"doc_id": np.repeat(np.arange(2000), 4), "value": rng.random(8000) < 0.3})
    r = plan(pop, 0.05, confirm=False, estimators="micro").rows[0]
    assert abs(r["deff"] - 1) < 0.15
    # independent chunks: K * 4 chunks ~ 1.96^2 p(1-p) / h^2
    assert abs(r["k"] * 4 - 1.96**2 * 0.21 / 0.05**2) / (1.96**2 * 0.21 / 0.05**2) < 0.15


def test_plan_infeasible_is_reported_not_simulated(twin):
    r = plan(twin, 0.005, estimators="micro").rows[0]
    assert not r["feasible"] and r["achieved_halfwidth"] is None
    assert "not confirmed" in repr(plan(twin, 0.005, estimators="micro"))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_recommend_picks_qualified_method_with_evidence(twin):
    res = recommend(twin, k=60, reps=600, n_resamples=199, show_progress=False)
    tab = res.table
    for est, c in res.choices.items():
        row = tab[(tab["estimator"] == est) & (tab["method"] == c["method"])].iloc[0]
        assert c["coverage"] == row["coverage"] and c["mean_width"] == row["mean_width"]
        if c["qualified"]:
            assert c["coverage"] + c["mc_margin"] >= 0.95
        assert c["method"] not in ("wald_iid", "chunk_bootstrap")
    assert set(res.to_frame()["estimator"]) == {"micro", "macro"}


def test_recommend_warns_when_nothing_qualifies():
    pop = simulate_population(n_docs=300, n_chunks=8000, seed=0)
    with pytest.warns(RuntimeWarning, match="no method reaches"):
        res = recommend(pop, k=5, reps=400, n_resamples=99, estimators="micro", show_progress=False)
    assert not res.choices["micro"]["qualified"]
    assert "WARNING" in repr(res)


@pytest.mark.parametrize("kwargs, match", [({"target_halfwidth": 2.0}, "target_halfwidth"),
                                           ({"target_halfwidth": 0.05, "estimators": "mean"}, "estimators"),
                                           ({"target_halfwidth": 0.05, "level": 2}, "level")])
def test_plan_iv(twin, kwargs, match):
    with pytest.raises(RagcovError, match=match):
        plan(twin, **kwargs)
