"""Every interval in every JSON output carries its check: compare, misses, the chunking comparisons, the
leaderboard (per system and per family), with the rule ``verified = coverage + 2 SE >= level``."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_chunkings import _task_and_run  # noqa: E402  (the shared tiny self-retrieval task)
from test_misses import SMALL, tiny_run, tiny_task  # noqa: E402  (the hand-made miss task)

import ragcov_data.eval.comparisons._family as fam  # noqa: E402

from ragcov_data.eval import compare, evaluate, leaderboard, misses  # noqa: E402
from ragcov_data.eval.estimates import verify as V  # noqa: E402
from ragcov_data.eval.comparisons import verify_family as VF  # noqa: E402
from ragcov_data.eval.comparisons._nullfamily import null_family_rates  # noqa: E402
from ragcov_data.eval.comparisons.paired_chunkings import compare_chunkings  # noqa: E402
from ragcov_data.eval.comparisons.cited import leaderboard_from_values  # noqa: E402
from ragcov_data.eval.comparisons.leaderboard import PAIR_TEST  # noqa: E402
from ragcov_data.eval.comparisons.verify_family import check_notices  # noqa: E402
from ragcov_data.eval.estimates.results import recommended_rows  # noqa: E402
from ragcov_data.eval.misses.analysis import _checks, _finish  # noqa: E402

FIELDS = ("verified_coverage", "verified_mc_se", "verified")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv(V.ENV_VAR, str(tmp_path / "vcache"))
    return tmp_path / "vcache"


def _random_hits(sizes, p, rng):
    return {d: list((rng.random(n) < p[d]).astype(int)) for d, n in sizes.items()}


def _check_records(records, level=0.95, where=""):
    """Every record carries the three fields; where checked, ``verified`` follows the rule."""
    assert records, f"no records in {where}"
    n_checked = 0
    for r in records:
        assert set(FIELDS) <= set(r), f"{where}: {sorted(r)}"
        if r["verified"] is None:
            continue
        n_checked += 1
        c, se = r["verified_coverage"], r["verified_mc_se"]
        assert 0 <= c <= 1 and se >= 0
        assert r["verified"] is (c + 2 * se >= level), where
    return n_checked


# ------------------------------------------------------------------------------------------ compare
def test_compare_json_carries_the_checks_and_bounds():
    rng = np.random.default_rng(0)
    sizes = {f"D{i}": int(rng.integers(2, 9)) for i in range(25)}
    p = {d: rng.beta(1, 1) for d in sizes}
    task, ra = _task_and_run(sizes, _random_hits(sizes, p, rng))
    _, rb = _task_and_run(sizes, _random_hits(sizes, {d: 0.0 for d in sizes}, rng))  # B never hits: A - B >= 0
    res = compare(ra, rb, task, n_resamples=199)
    d = json.loads(res.to_json())
    assert _check_records(d["estimates"], where="compare") >= 3
    e = res.estimates
    # differences live in [-1, 1]: cut there (not to [0, 1], though every difference here is >= 0)
    assert (e["low_bounded"] >= -1).all() and (e["high_bounded"] <= 1).all()
    assert (e["low_bounded"] == e["low"].clip(-1, 1)).all()
    # the check is the one verify_intervals computes for the design of the differences
    dd = res.per_query["diff"].to_numpy()
    ref = V.verify_intervals(e.drop(columns=list(FIELDS)), V.design_of(dd, res.per_query["cluster"].to_numpy()))
    np.testing.assert_allclose(e["verified_coverage"].astype(float), ref["verified_coverage"].astype(float))


def test_compare_summary_marks_an_unverified_difference():
    # few very unequal documents: micro CR2 under-covers at this design
    rng = np.random.default_rng(3)
    sizes = {"D0": 120, **{f"D{i}": 2 for i in range(1, 7)}}
    p = {d: (0.9 if d == "D0" else rng.choice([0.0, 1.0])) for d in sizes}
    task, ra = _task_and_run(sizes, _random_hits(sizes, p, rng))
    _, rb = _task_and_run(sizes, _random_hits(sizes, {d: 0.3 for d in sizes}, rng))
    res = compare(ra, rb, task, methods=["cr2"], n_resamples=199)
    row = res.estimates[(res.estimates["estimator"] == "micro")].iloc[0]
    assert row["verified"] is False or row["verified"] is np.False_
    assert "NOT VERIFIED: micro cr2" in res.summary()


# ------------------------------------------------------------------------------------------ misses
def test_misses_every_share_record_has_its_check_and_stays_in_bounds():
    res = misses(tiny_run(), tiny_task(), **SMALL)
    d = json.loads(res.to_json())
    _check_records(d["flags"], where="flags")
    _check_records(d["by_type"], where="by_type")
    _check_records(d["by_type_flags"], where="by_type_flags")
    for r in d["flags"] + d["by_type_flags"]:
        assert {"low_bounded", "high_bounded", "clipped"} <= set(r)
        if r["low"] is not None:
            assert 0 <= r["low_bounded"] <= r["high_bounded"] <= 1
            assert r["clipped"] is (r["low"] < 0 or r["high"] > 1)
    for r in d["by_type"]:
        for pre in ("hit_", "share_"):
            assert {pre + f for f in FIELDS} <= set(r)
            if r[pre + "low"] is not None:
                assert 0 <= r[pre + "low_bounded"] <= r[pre + "high_bounded"] <= 1
    # the share's check is verify_design of micro CR2 on the 0/1 flags clustered by the query's document
    m = res.misses
    m = m[m["corpus-id"].notna()]
    flag = res.flags.iloc[0]
    ref = V.verify_design(V.design_of(m[flag["name"]].astype(float).to_numpy(), m["query_doc"].to_numpy()),
                          [("micro", "cr2")])["micro/cr2"]
    assert flag["verified_coverage"] == pytest.approx(ref["verified_coverage"])


def test_misses_out_of_bounds_share_is_clipped_and_flagged():
    rec = {"name": ["x"], "share": [0.03], "low": [-0.004], "high": [0.056]}
    out = _finish(pd.DataFrame(rec), np.array([[0, 0, 1, 0, 0, 0]]), np.array(list("AABBCC")), 0.95, 0)
    assert out["low_bounded"].iloc[0] == 0.0 and out["high_bounded"].iloc[0] == 0.056 and bool(out["clipped"].iloc[0])


def test_misses_check_fails_where_cr2_undercovers():
    rng = np.random.default_rng(0)
    cl = np.repeat(np.arange(6), [200, 3, 3, 2, 2, 2])
    y = np.r_[(rng.random(200) < 0.5), np.zeros(12, bool)]
    good_cl = np.repeat(np.arange(60), 5)
    good_y = rng.random(300) < 0.3
    bad, good = _checks(y[None, :], cl, 0.95, 0)[0], _checks(good_y[None, :], good_cl, 0.95, 0)[0]
    assert bad["verified"] is False and bad["verified_coverage"] < 0.9
    assert good["verified"] is True


# ------------------------------------------------------------------------------------------ chunkings
def test_chunking_comparison_carries_checks_in_json():
    rng = np.random.default_rng(2)
    docs = [f"D{i}" for i in range(20)]
    size_a = {d: int(rng.integers(2, 9)) for d in docs}
    size_b = {d: int(rng.integers(2, 5)) for d in docs}
    p = {d: rng.beta(1, 1) for d in docs}
    ta, ra = _task_and_run(size_a, _random_hits(size_a, p, rng))
    tb, rb = _task_and_run(size_b, _random_hits(size_b, p, rng))
    a, b = evaluate(ra, ta, n_resamples=199), evaluate(rb, tb, n_resamples=199)
    c = compare_chunkings({"A": a, "B": b}, n_resamples=999)
    d = json.loads(c.to_json())
    assert _check_records(d["differences"], where="differences") == 3
    _check_records([d["difference"]], where="difference")
    _check_records([r for ch in d["chunkings"] for r in ch["estimates"]], where="chunkings")
    # the macro t difference's check equals verify_design's macro t on the per-document differences
    diff = c.per_document["diff"].to_numpy()
    ref = VF.verify_chunking_differences(np.ones(20), diff, np.ones(20), np.zeros(20), [("macro", "t")])
    assert d["difference"]["verified_coverage"] == pytest.approx(ref["macro/t"]["verified_coverage"])


def test_chunking_check_is_an_independent_coverage_count():
    """The macro t check by hand: resample documents, t interval, count coverage of the documents' mean."""
    rng = np.random.default_rng(5)
    K = 15
    na, nb = rng.integers(1, 6, K).astype(float), rng.integers(1, 6, K).astype(float)
    sa, sb = rng.binomial(na.astype(int), 0.5).astype(float), rng.binomial(nb.astype(int), 0.4).astype(float)
    got = VF.verify_chunking_differences(na, sa, nb, sb, [("macro", "t")], use_cache=False)["macro/t"]
    d = sa / na - sb / nb
    idx = np.random.default_rng([0, 7919]).integers(0, K, size=(V.VERIFY_REPS, K))
    cover = 0
    for row in idx:
        ci = stats.ttest_1samp(d[row], 0.0).confidence_interval(0.95)
        cover += ci.low <= d.mean() + 1e-12 and d.mean() - 1e-12 <= ci.high
    assert got["verified_coverage"] == pytest.approx(cover / V.VERIFY_REPS, abs=1e-12)


# ------------------------------------------------------------------------------------------ leaderboard
def _values(S=4, K=30, seed=0, big=None):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 8, K)
    if big:
        sizes[0] = big
    cl = np.repeat([f"d{k}" for k in range(K)], sizes)
    p = np.repeat(rng.beta(1, 1, K), sizes)
    vals = pd.DataFrame({f"s{j}": (rng.random(len(cl)) < np.clip(p + 0.05 * j, 0, 1)).astype(float)
                         for j in range(S)}, index=[f"q{i}" for i in range(len(cl))])
    return vals, cl


def test_leaderboard_records_and_family_check(monkeypatch):
    vals, cl = _values()
    lb = leaderboard_from_values(vals, metric="hit@1", clusters=cl, n_resamples=999)
    d = json.loads(lb.to_json())
    _check_records(d["systems"], where="systems")
    assert _check_records(d["pairs"], where="pairs") == 6
    fc = d["family_check"]
    assert fc["n_families"] == VF.FAMILY_REPS and fc["n_resamples"] == VF.FAMILY_RESAMPLES
    assert d["groups"]["__all__"]["family_check"] == fc
    for r in d["pairs"]:  # every pair carries its family's check: 1 - FWER
        assert r["verified_coverage"] == pytest.approx(1 - fc["fwer"]) and r["verified_mc_se"] == fc["mc_se"]
    # a system row's check is evaluate's: verify_design of its (estimator, method) at its design
    s0 = lb.systems[lb.systems["name"] == "s0"].iloc[0]
    ref = V.verify_design(V.design_of(vals["s0"].to_numpy(), cl), [("micro", "cr2")])["micro/cr2"]
    assert s0["verified_coverage"] == pytest.approx(ref["verified_coverage"])


def test_family_check_is_the_null_family_simultaneous_rate():
    """Same seed stream and pair test as null_family_rates: the check's FWER is its ``simultaneous`` rate."""
    vals, cl = _values(S=3, K=20, seed=4)
    Vm = vals.to_numpy().T
    got = VF.family_check(Vm, cl, n_families=40, n_resamples=199, seed=0, use_cache=False)
    ref = null_family_rates(Vm, cl, n_families=40, n_resamples=199, seed=[0, 104729], pair_test=PAIR_TEST)
    assert got["fwer"] == pytest.approx(ref["simultaneous"]) and got["mc_se"] == pytest.approx(ref["simultaneous_se"])
    assert got["verified"] is (got["verified_coverage"] + 2 * got["verified_mc_se"] >= 0.95)


def test_family_check_fails_where_the_family_over_rejects(monkeypatch):
    """A family whose simultaneous intervals are too narrow (here: the unadjusted per-pair CR2 intervals of
    five systems on 40 unequal documents, which reject for some pair in about a third of null families)
    is caught: FWER far above 5%, verified False; the leaderboard's own intervals pass on the same data."""
    rng = np.random.default_rng(1)
    sizes = np.r_[40, rng.integers(2, 5, 39)]
    cl = np.repeat(np.arange(40), sizes)
    base = np.repeat(rng.random(40), sizes)
    Vm = np.stack([(rng.random(len(cl)) < base) for _ in range(5)]).astype(float)
    honest = VF.family_check(Vm, cl, n_families=100, n_resamples=199, use_cache=False)
    real = fam.family

    def unadjusted(*a, **k):
        f = real(*a, **k)
        pr = f["pairs"]
        half = stats.t.isf(0.025, pr["df"]) * pr["se"]
        pr["low"], pr["high"] = pr["diff"] - half, pr["diff"] + half
        return f

    monkeypatch.setattr(fam, "family", unadjusted)
    narrow = VF.family_check(Vm, cl, n_families=100, n_resamples=199, use_cache=False)
    assert narrow["fwer"] > 0.15 and narrow["verified"] is False
    assert honest["fwer"] <= 0.08 and honest["verified"] is True


def _count_calls(monkeypatch, owner, name: str) -> dict[str, int]:
    """Patch ``owner.name`` with a wrapper that counts its calls (in the returned ``{"n": calls}``)."""
    calls = {"n": 0}
    real = getattr(owner, name)

    def counting(*a, **k):
        calls["n"] += 1
        return real(*a, **k)

    monkeypatch.setattr(owner, name, counting)
    return calls


def test_family_check_is_cached(_cache, monkeypatch):
    vals, cl = _values(S=3, K=15, seed=6)
    calls = _count_calls(monkeypatch, fam, "family")
    first = VF.family_check(vals.to_numpy().T, cl, n_families=30, n_resamples=199)
    assert calls["n"] == 30 and any(_cache.glob("family-*.json"))
    second = VF.family_check(vals.to_numpy().T, cl, n_families=30, n_resamples=199)
    assert calls["n"] == 30 and second == first  # read back, no simulation
    VF.family_check(vals.to_numpy().T, cl, n_families=30, n_resamples=199, level=0.9)
    assert calls["n"] == 60  # another design: computed


def test_chunking_check_is_cached(_cache, monkeypatch):
    calls = _count_calls(monkeypatch, VF, "_chunking_intervals")
    args = (np.full(8, 3.0), np.array([1, 2, 0, 3, 1, 1, 2, 0.0]), np.full(8, 2.0), np.array([1, 1, 0, 2, 0, 1, 1, 0.0]))
    a = VF.verify_chunking_differences(*args, [("macro", "t"), ("micro", "linearised_t")])
    b = VF.verify_chunking_differences(*args, [("macro", "t"), ("micro", "linearised_t")])
    assert calls["n"] == 2 and a == b


def test_leaderboard_function_json_has_every_check():
    rng = np.random.default_rng(8)
    sizes = {f"D{i}": int(rng.integers(2, 9)) for i in range(20)}
    p = {d: rng.beta(1, 1) for d in sizes}
    task = None
    runs = {}
    for j, name in enumerate(("a", "b", "c")):
        task, runs[name] = _task_and_run(sizes, _random_hits(sizes, {d: min(1.0, v + 0.1 * j) for d, v in p.items()},
                                                             rng))
    lb = leaderboard(runs, task, metric="hit@1", n_resamples=999)
    d = json.loads(lb.to_json())
    assert _check_records(d["systems"], where="systems") == 3
    assert _check_records(d["pairs"], where="pairs") == 3
    assert d["family_check"]["n_families"] == VF.FAMILY_REPS
    assert 0 <= d["family_check"]["fwer"] <= 1


def test_leaderboard_notices_say_what_the_checks_found():
    systems = pd.DataFrame({"group": ["__all__"] * 3, "estimator": "micro", "method": "cr2", "name": ["x", "y", "z"],
                            "verified_coverage": [0.83, 0.95, 0.85], "verified": [False, True, False]})
    lines = check_notices(systems, {"__all__": {"fwer": 0.12, "mc_se": 0.02, "n_families": 200,
                                                "n_resamples": 499}}, 0.95)
    assert "12.0% ± 4.0%" in lines[0] and "NOT VERIFIED" in lines[0] and "barely excludes 0" in lines[0]
    # the per-system checks are each row's mark and the footnotes under its table, not a notice
    assert len(lines) == 1 and check_notices(systems.assign(verified=[True, True, False]), {"__all__": {}}, 0.95) == []
    ok = check_notices(systems.assign(verified=True), {"__all__": {"fwer": 0.04, "mc_se": 0.014,
                                                                   "n_families": 200, "n_resamples": 499}}, 0.95)
    assert len(ok) == 1 and "NOT VERIFIED" not in ok[0] and "nothing to do" in ok[0]
    # 8.0% ± 3.8% against a nominal 5%: within the Monte Carlo error, yet above nominal, so not called fine
    above = check_notices(systems.assign(verified=True), {"__all__": {"fwer": 0.08, "mc_se": 0.019,
                                                                      "n_families": 200, "n_resamples": 499}}, 0.95)
    assert "8.0% ± 3.8%" in above[0] and "nothing to do" not in above[0] and "NOT VERIFIED" not in above[0]
    assert "above nominal" in above[0] and "Monte Carlo error" in above[0]
    # how the check works is said once; each group's line gives its own numbers
    two = check_notices(pd.DataFrame({"group": ["__all__", "G1"], "verified": True}),
                        {"__all__": {"fwer": 0.04, "mc_se": 0.014, "n_families": 200, "n_resamples": 499},
                         "G1": {"fwer": 0.05, "mc_se": 0.015, "n_families": 200, "n_resamples": 499}}, 0.95)
    assert len(two) == 2 and sum("simulated null families" in x for x in two) == 1
    assert two[1].startswith("family check (group G1): the simultaneous intervals separated some pair 5.0% ± 3.0%")


def test_chunking_own_rows_are_evaluates_recommended_rows():
    rng = np.random.default_rng(9)
    sizes = {"D0": 90, **{f"D{i}": int(rng.integers(2, 5)) for i in range(1, 12)}}  # micro CR2 may fail here
    p = {d: rng.beta(1, 1) for d in sizes}
    ta, ra = _task_and_run(sizes, _random_hits(sizes, p, rng))
    tb, rb = _task_and_run(sizes, _random_hits(sizes, p, rng))
    a, b = evaluate(ra, ta, n_resamples=199), evaluate(rb, tb, n_resamples=199)
    c = compare_chunkings({"A": a, "B": b}, n_resamples=999)
    for name, res in (("A", a), ("B", b)):
        rec = recommended_rows(res.estimates).set_index("estimator")
        own = c.chunkings[c.chunkings["name"] == name].set_index("estimator")
        for est in ("micro", "macro"):
            assert own.loc[est, "method"] == rec.loc[est, "method"]
            assert own.loc[est, "verified_coverage"] == pytest.approx(rec.loc[est, "verified_coverage"])


def test_large_micro_family_runs_its_own_hull():
    """Beyond EXACT_MAX_PAIRS the null families run the leaderboard's hull without inverting its wild tests (the
    decisions read from its adjusted p-value): the same family-wise error as the inverted intervals on the same null
    families, and no upper bound claimed."""
    vals, cl = _values(S=7, K=15, seed=10)
    Vm = vals.to_numpy().T
    big = VF.family_check(Vm, cl, n_families=20, n_resamples=199, use_cache=False)
    assert big["upper_bound"] is False and big["pair_test"] == PAIR_TEST
    ref = null_family_rates(Vm, cl, n_families=20, n_resamples=199, seed=[0, 104729], pair_test=PAIR_TEST)
    assert big["fwer"] == pytest.approx(ref["simultaneous"])
    small = VF.family_check(Vm[:3], cl, n_families=5, n_resamples=199, use_cache=False)
    assert small["upper_bound"] is False and small["pair_test"] == PAIR_TEST


def test_large_macro_family_runs_itself():
    """A macro family is no hull of its t part, so the null families run the printed family at any size (no
    upper bound), and the FWER equals null_family_rates on the leaderboard's own pair test."""
    vals, cl = _values(S=7, K=15, seed=10)
    Vm = vals.to_numpy().T
    big = VF.family_check(Vm, cl, estimator="macro", n_families=20, n_resamples=199, use_cache=False)
    assert big["upper_bound"] is False and big["pair_test"] == PAIR_TEST
    ref = null_family_rates(Vm, cl, n_families=20, n_resamples=199, seed=[0, 104729], pair_test=PAIR_TEST,
                            estimator="macro")
    assert big["fwer"] == pytest.approx(ref["simultaneous"])
