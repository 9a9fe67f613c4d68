"""Power planner: K to detect a paired difference among N systems, checked against theory and simulation."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ragcov_data
from ragcov_data.baselines import BM25, TfIdf
from ragcov_data.errors import RagcovError
from ragcov_data.eval import compare, plan_difference


@pytest.fixture(scope="module")
def aneel(data_dir):
    """BM25 vs TF-IDF on the ANEEL self-retrieval task (hit@1), the task and both runs."""
    ds = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir))
    runs = []
    for cls in (BM25, TfIdf):
        r = cls()
        r.index(ds["corpus"])
        runs.append(r.search(ds["queries"], k=10, exclude_self=True))
    return ds, runs, compare(runs[0], runs[1], ds, "hit@1", methods=["cr2", "t"])


def _iid_pilot(n_clusters=4000, size=4, p_disagree=0.2, seed=0) -> pd.DataFrame:
    """Equal clusters of independent differences in {-1, 0, 1} (ICC 0): σ² = p_disagree, DEFF 1."""
    rng = np.random.default_rng(seed)
    d = rng.choice([-1.0, 0.0, 1.0], p=[p_disagree / 2, 1 - p_disagree, p_disagree / 2], size=n_clusters * size)
    return pd.DataFrame({"query-id": np.arange(d.size).astype(str), "cluster": np.repeat(np.arange(n_clusters), size),
                         "diff": d})


def _textbook_k(pilot: pd.DataFrame, d: float, n_systems: int, power: float = 0.8, level: float = 0.95) -> float:
    """((z_{1−α/(2m)} + z_power)·σ·sqrt(DEFF/m̄) / D)², computed here from the pilot with the ratio DEFF."""
    m = n_systems * (n_systems - 1) / 2
    g = pilot.groupby("cluster")["diff"]
    n, s = g.size().to_numpy(float), g.sum().to_numpy(float)
    u = s - s.sum() / n.sum() * n
    sigma2 = pilot["diff"].var(ddof=0)
    deff = np.var(u, ddof=1) / (n.mean() * sigma2)
    z = stats.norm.ppf(1 - (1 - level) / (2 * m)) + stats.norm.ppf(power)
    return (z * math.sqrt(sigma2 * deff / n.mean()) / d) ** 2


def test_iid_pilot_matches_the_textbook_formula():
    pilot = _iid_pilot()
    for n_systems in (2, 5):
        r = plan_difference(pilot, 0.02, n_systems=n_systems, simulate=False, estimators="micro").rows[0]
        k_z = _textbook_k(pilot, 0.02, n_systems)
        # σ² ≈ 0.2 spread over 4 queries a cluster: K ≈ 7.85·0.05/0.0004 ≈ 980 for one pair
        assert k_z <= r["k"] <= k_z * 1.02, (n_systems, r["k"], k_z)
        assert abs(r["deff"] - 1) < 0.1 and r["mean_size"] == 4


def test_k_scales_with_pairs_and_difference():
    pilot = _iid_pilot()
    k2 = plan_difference(pilot, 0.02, n_systems=2, simulate=False).k
    k5 = plan_difference(pilot, 0.02, n_systems=5, simulate=False).k
    k2_half = plan_difference(pilot, 0.01, n_systems=2, simulate=False).k
    ratio = ((stats.norm.ppf(1 - 0.05 / 20) + stats.norm.ppf(0.8)) / (stats.norm.ppf(0.975) + stats.norm.ppf(0.8))) ** 2
    for est in ("micro", "macro"):
        assert abs(k5[est] / k2[est] - ratio) / ratio < 0.03, (est, k5[est] / k2[est], ratio)
        assert 3.9 < k2_half[est] / k2[est] < 4.1
    # Holm and Bonferroni test the most significant pair at α/m: the same plan
    holm = plan_difference(pilot, 0.02, n_systems=5, family="holm", simulate=False)
    bonf = plan_difference(pilot, 0.02, n_systems=5, family="bonferroni", simulate=False)
    assert holm.k == bonf.k and holm.alpha_pair == bonf.alpha_pair == 0.005


def test_macro_simulation_agrees_with_an_independent_t_test(aneel):
    """The simulated macro power equals the rejection rate of scipy's one-sample t-test on re-sampled clusters."""
    _, _, cmp = aneel
    d, n_systems = 0.05, 5
    res = plan_difference(cmp, d, n_systems=n_systems, estimators="macro", reps=2000, seed=3)
    r = res.rows[0]
    means = cmp.per_query.groupby("cluster")["diff"].mean().to_numpy()
    means = means + (d - means.mean())  # the plan's shift: every query moves by D − observed
    rng = np.random.default_rng(11)
    samples = means[rng.integers(0, len(means), size=(3000, r["k"]))]
    t = stats.ttest_1samp(samples, 0.0, axis=1, alternative="greater")
    independent = float(np.mean(t.pvalue < res.alpha_pair / 2))
    margin = 1.96 * math.sqrt(independent * (1 - independent) * (1 / 3000 + 1 / 2000))
    assert abs(r["simulated_power"] - independent) < margin + 0.005, (r["simulated_power"], independent)


@pytest.mark.parametrize("n_systems", [2, 5])
@pytest.mark.parametrize("d", [0.02, 0.05])
def test_analytic_k_has_about_the_target_power_on_aneel(aneel, d, n_systems):
    _, _, cmp = aneel
    res = plan_difference(cmp, d, n_systems=n_systems, reps=2000)
    for r in res.rows:
        assert 0.72 <= r["simulated_power"] <= 0.90, (r["estimator"], r["k"], r["simulated_power"])
        # the searched K reaches the target and is not far above the analytic one
        assert r["power_at_k_simulated"] >= 0.8 and r["k"] * 0.8 <= r["k_simulated"] <= r["k"] * 1.3
        assert 0.78 <= r["predicted_power"] < 0.9
    assert res.cluster == "doc_id" and res.n_clusters == 147 and res.n_queries == 2312
    assert res.k_needed == {r["estimator"]: r["k_simulated"] for r in res.rows}
    assert f"between any two of {n_systems} systems" in repr(res) and "documents" in repr(res)


def test_simulated_power_falls_with_more_pairs_at_the_same_k(aneel):
    """A K planned for one pair has too little power once the level is split over 10 pairs."""
    _, _, cmp = aneel
    one = plan_difference(cmp, 0.05, n_systems=2, estimators="micro", reps=2000)
    k = one.rows[0]["k_simulated"]
    from ragcov_data.eval.planning.power import _simulate

    pq = cmp.per_query
    g = pq.groupby("cluster")["diff"]
    n, s = g.size().to_numpy(float), g.sum().to_numpy(float)
    q = (pq["diff"] ** 2).groupby(pq["cluster"]).sum().to_numpy(float)
    sh = 0.05 - s.sum() / n.sum()
    p10, _ = _simulate(n, s + sh * n, q + 2 * sh * s + sh * sh * n, k, "micro", 0.005, 0.05, 2000, 0)
    assert p10 < one.rows[0]["power_at_k_simulated"] - 0.15


def test_every_pilot_form_gives_the_same_plan(aneel):
    ds, runs, cmp = aneel
    kw = dict(n_systems=3, simulate=False)
    a = plan_difference(cmp, 0.03, **kw)
    b = plan_difference(cmp.per_query, 0.03, **kw)
    c = plan_difference((runs[0], runs[1]), 0.03, task=ds, **kw)
    d = plan_difference(cmp.per_query.rename(columns={"cluster": "doc_id"}), 0.03, **kw)
    assert a.k == b.k == c.k == d.k
    assert a.cluster == c.cluster == "doc_id"


def test_negative_difference_is_detected_on_its_side(aneel):
    _, _, cmp = aneel
    pos = plan_difference(cmp, 0.05, estimators="micro", reps=1000).rows[0]
    neg = plan_difference(cmp, -0.05, estimators="micro", reps=1000).rows[0]
    # the analytic K ignores the sign; the simulation counts rejections on D's side only, and the skewed
    # per-document differences make the two sides differ
    assert pos["k"] == neg["k"] and 0.72 <= neg["simulated_power"] <= 0.97
    assert pos["simulated_power"] != neg["simulated_power"]


def test_to_json_holds_inputs_and_results(aneel):
    _, _, cmp = aneel
    res = plan_difference(cmp, 0.02, n_systems=5, reps=500)
    data = json.loads(res.to_json())
    assert {"difference", "n_systems", "n_pairs", "power", "level", "family", "alpha_pair", "n_clusters",
            "cluster", "rows", "flags"} <= set(data) and "_json_indent" not in data
    assert data["n_pairs"] == 10 and data["alpha_pair"] == 0.005
    row = data["rows"][0]
    for key in ("k", "sd", "icc", "deff", "deff_icc", "mean_size", "cv", "simulated_power", "mc_margin", "k_simulated"):
        assert row[key] is not None, key
    assert res.to_frame().shape[0] == 2


def test_no_simulation_leaves_simulated_fields_empty():
    res = plan_difference(_iid_pilot(400), 0.05, simulate=False)
    assert all(r["simulated_power"] is None and r["k_simulated"] is None for r in res.rows)
    assert res.k_needed == res.k and "analytic, not simulated" in repr(res)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(difference=0.0), "`difference` must be a non-zero number in (-1, 1)"),
        (dict(difference=1.5), "got 1.5"),
        (dict(n_systems=1), "`n_systems` must be an integer >= 2"),
        (dict(power=1.0), "`power` must be a float in (0, 1)"),
        (dict(level=95.0), "`level` must be a float in (0, 1)"),
        (dict(family="tukey"), "`family` must be one of ('holm', 'bonferroni'); got 'tukey'"),
        (dict(estimators="median"), "got 'median'"),
        (dict(reps=0), "`reps` must be a positive integer"),
        (dict(task="x"), "`task` applies only when `pilot` is a pair of runs"),
        (dict(cluster="doc_id"), "`cluster` applies only when `pilot` is a pair of runs"),
        (dict(seed=-1), "`seed` must be a non-negative integer; got -1"),
    ],
)
def test_bad_arguments(kwargs, message):
    kw = {"difference": 0.02, **kwargs}
    with pytest.raises(RagcovError) as exc:
        plan_difference(_iid_pilot(50), kw.pop("difference"), **kw)
    assert message in str(exc.value)


def test_bad_pilots():
    with pytest.raises(RagcovError, match=r"lacks column\(s\) \['diff'\]"):
        plan_difference(pd.DataFrame({"cluster": ["a", "b"], "value": [1, 0]}), 0.02)
    bad = _iid_pilot(50)
    bad.loc[7, "diff"] = np.nan
    with pytest.raises(RagcovError, match=r"row 7 \(query-id '7'\) has diff 'nan'"):
        plan_difference(bad, 0.02)
    same = _iid_pilot(50).assign(diff=0.0)
    with pytest.raises(RagcovError, match="the two systems never disagree"):
        plan_difference(same, 0.02)
    with pytest.raises(RagcovError, match="a power plan needs at least 2 clusters"):
        plan_difference(pd.DataFrame({"cluster": ["a", "a"], "diff": [1.0, 0.0]}), 0.02)
    with pytest.raises(RagcovError, match="pass the `task` they were run on"):
        plan_difference((pd.DataFrame(), pd.DataFrame()), 0.02)
    with pytest.raises(RagcovError, match="got list"):
        plan_difference([1, 2, 3], 0.02)
