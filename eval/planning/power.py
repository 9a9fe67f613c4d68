"""Power planner: documents needed to detect a paired difference among N systems, family-wise.

:func:`plan_difference` takes a pilot of paired per-query differences between two systems (the
``per_query`` of :func:`ragcov_data.eval.compare`, a table, or two runs and a task), and returns the
number of clusters (documents, sources) K at which a difference ``D`` is detected with the target power
when N systems are compared pairwise with the family-wise error held at ``1 − level``. The analytic K
comes from the pilot's paired variance and design effect; a simulation that re-samples K of the pilot's
clusters, with the differences shifted to mean ``D``, checks it with the evaluator's own interval core and
searches the K at which the simulated power reaches the target (``k_simulated``). The analytic K treats the
per-cluster differences as roughly normal; when they are heavy-tailed (a few documents carry most of the
disagreements, as between BM25 and TF-IDF on ANEEL) it falls some 5–20% short, and ``k_simulated`` is the
number to plan for.

Family-wise level
-----------------
N systems give ``m = N(N−1)/2`` pairs. Bonferroni tests each pair at ``α/m``; Holm's step-down tests the
smallest p-value at ``α/m`` and the others at larger levels. A pair's difference is therefore declared
(under either method) whenever its own test rejects at ``α/m``, so a K with the target power at ``α/m`` is
sufficient for Holm too: the guarantee that holds for the smallest p-value, whatever the other pairs do.
With several true differences Holm rejects more often, so the plan is conservative for it.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ragcov_data.errors import RagcovError

from ragcov_data.eval.comparisons.compare import compare
from ragcov_data.eval.estimates._kernels import ESTIMATORS, check_level, interval_batch
from ragcov_data.eval.estimates.design import design_effect
from ragcov_data.eval.estimates.results import ComparisonResult, _JsonMixin

__all__ = ["plan_difference", "PowerResult", "FAMILIES", "POWER_METHODS"]

#: Family-wise adjustments the plan holds (both test the most significant pair at α/m).
FAMILIES = ("holm", "bonferroni")
#: Interval method of the simulated test, per estimator (the evaluator's recommended ones).
POWER_METHODS = {"micro": "cr2", "macro": "t"}
_CHUNK = 4_000_000  # bound on replicates x K elements per simulation chunk
_K_MAX = 10**7


@dataclass
class PowerResult(_JsonMixin):
    """Clusters needed to detect a paired difference at the family-wise level, per estimator.

    Attributes
    ----------
    difference, power, level : float
        The difference to detect (A − B), the target power and the family-wise confidence level.
    n_systems, n_pairs : int
        Systems compared and pairs ``m = N(N−1)/2``.
    family : str
        ``"holm"`` or ``"bonferroni"`` (the plan is the same for both; see the module docstring).
    alpha_pair : float
        Per-pair two-sided level ``(1 − level) / m`` the plan tests at.
    n_clusters, n_queries : int
        The pilot's clusters and queries.
    cluster : str
        What a cluster is in the pilot (e.g. ``doc_id``).
    rows : list of dict
        Per estimator: ``estimator``, ``k`` (clusters needed), ``observed`` (the pilot's mean difference),
        ``sd`` (per-query SD of the differences), ``sd_unit`` (SD per cluster that drives the variance:
        micro ``sd·sqrt(deff/mean_size)``, macro the SD of per-cluster mean differences), ``deff`` (micro:
        design effect of the ratio estimator, as :func:`~ragcov_data.eval.plan` uses; macro: nan),
        ``icc``, ``deff_icc``, ``cv``, ``mean_size`` (from :func:`~ragcov_data.eval.design_effect` on the
        differences), ``df`` (reference df at K), ``se`` at K, ``predicted_power`` at K, ``method`` of the
        simulated test, ``simulated_power`` and ``mc_margin`` (None when not simulated) and
        ``exceeds_pilot`` (K is more clusters than the pilot has: the simulation then re-uses its clusters,
        assuming new ones resemble them).
    flags : tuple of str
        ``negative_icc`` when the differences' ICC is below 0 (truncated at 0 for ``deff_icc``).
    """

    _json_indent: ClassVar[int] = 2

    difference: float
    n_systems: int
    n_pairs: int
    power: float
    level: float
    family: str
    alpha_pair: float
    n_clusters: int
    n_queries: int
    cluster: str
    reps: int | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    flags: tuple[str, ...] = ()

    @property
    def k(self) -> dict[str, int]:
        """Analytic clusters needed, by estimator."""
        return {r["estimator"]: int(r["k"]) for r in self.rows}

    @property
    def k_needed(self) -> dict[str, int]:
        """Clusters to plan for, by estimator: the simulated K where simulated, else the analytic one."""
        return {r["estimator"]: int(r["k_simulated"] if r["k_simulated"] is not None else r["k"]) for r in self.rows}

    def to_frame(self) -> pd.DataFrame:
        """The plan as a DataFrame, one row per estimator."""
        return pd.DataFrame(self.rows)

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("rows", "flags")}
        return {**d, "flags": list(self.flags), "rows": self.rows}

    def __repr__(self) -> str:
        one = {"doc_id": "document", "source_key": "source"}.get(self.cluster, "cluster")
        unit = one + "s"
        lines = [
            f"PowerResult(difference={self.difference:g}, power={self.power:g}, systems={self.n_systems} "
            f"({self.n_pairs} pair{'s' if self.n_pairs > 1 else ''}), family-wise level={self.level:g}, "
            f"{self.family}: each pair at alpha={self.alpha_pair:.4g}; pilot {self.n_clusters} {unit}, "
            f"{self.n_queries} queries)"
        ]
        for r in self.rows:
            s = f"  {r['estimator']}: K = {r['k']} {unit} analytic (pilot difference {r['observed']:+.4f}, "
            if r["estimator"] == "micro":
                s += (f"SD per query {r['sd']:.4f}, DEFF {r['deff']:.2f}, ICC {r['icc']:.3f}, "
                      f"{r['mean_size']:.1f} queries a {one}")
            else:
                s += f"SD of {one} mean differences {r['sd_unit']:.4f}"
            lines.append(s + f"; predicted power {r['predicted_power']:.1%})")
            if r["simulated_power"] is not None:
                lines.append(
                    f"    simulated ({r['method']} at level {1 - self.alpha_pair:.4g}, {self.reps} samples of "
                    f"K {unit}): power {r['simulated_power']:.1%} ± {r['mc_margin']:.1%} at K = {r['k']}; "
                    f"{self.power:.0%} reached at K ≈ {r['k_simulated']} ({r['power_at_k_simulated']:.1%})")
            if max(r["k"], r["k_simulated"] or 0) > self.n_clusters:
                lines.append(f"    [more {unit} than the pilot's {self.n_clusters}: the simulation re-uses them, "
                             "assuming new ones resemble them]")
        if "negative_icc" in self.flags:
            lines.append("  note: the differences' ICC is negative (truncated at 0 for the ICC design effect).")
        what = "simulated" if self.reps else "analytic, not simulated"
        lines.append("  needed: " + ", ".join(f"{e} K = {k}" for e, k in self.k_needed.items())
                     + f" {unit} ({what}) to detect {self.difference:g} between any two of {self.n_systems} "
                     f"systems with {self.power:.0%} power")
        return "\n".join(lines)


def _pilot_frame(pilot: Any, task: Any, metric: str | None, cluster: str | None,
                 tie_policy: str | None) -> tuple[pd.DataFrame, str]:
    """The pilot as ``cluster``, ``diff`` (one row a query), and the name of its cluster column."""
    if isinstance(pilot, tuple) and len(pilot) == 2:
        if task is None:
            raise RagcovError("`pilot` is two runs: pass the `task` they were run on (task=...).")
        kw = {"tie_policy": tie_policy} if tie_policy else {}
        pilot = compare(pilot[0], pilot[1], task, metric or "hit@1", cluster=cluster, methods=["cr2", "t"], **kw)
    else:
        for name, value in (("task", task), ("metric", metric), ("cluster", cluster), ("tie_policy", tie_policy)):
            if value is not None:
                raise RagcovError(f"`{name}` applies only when `pilot` is a pair of runs (run_a, run_b); the "
                                  "differences of a table or ComparisonResult are already scored.")
    name = None
    if isinstance(pilot, ComparisonResult):
        name = pilot.cluster
        pilot = pilot.per_query
    if not isinstance(pilot, pd.DataFrame):
        raise RagcovError(
            f"`pilot` must be a ComparisonResult, a DataFrame of paired differences (query-id, cluster or doc_id, "
            f"diff) or a pair of runs with `task=`; got {type(pilot).__name__}.")
    col = "cluster" if "cluster" in pilot.columns else "doc_id" if "doc_id" in pilot.columns else None
    missing = [c for c, ok in (("cluster (or doc_id)", col), ("diff", "diff" in pilot.columns)) if not ok]
    if missing:
        raise RagcovError(
            f"`pilot` lacks column(s) {missing} (found {sorted(map(str, pilot.columns))}); give one row a query "
            "with its cluster and the paired difference A − B, e.g. the per_query of ragcov_data.eval.compare.")
    diff = pd.to_numeric(pilot["diff"], errors="coerce").to_numpy(float)
    bad = ~np.isfinite(diff)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        qid = pilot["query-id"].iloc[i] if "query-id" in pilot.columns else i
        raise RagcovError(f"`pilot` row {i} (query-id {qid!r}) has diff {str(pilot['diff'].iloc[i])!r}; every paired "
                          "difference must be a finite number.")
    if pilot[col].isna().any():
        i = int(np.flatnonzero(pilot[col].isna().to_numpy())[0])
        raise RagcovError(f"`pilot` row {i} has no {col}; every query needs the cluster it belongs to.")
    name = name or (pilot.attrs.get("cluster") if isinstance(pilot.attrs.get("cluster"), str) else None) or col
    return pd.DataFrame({"cluster": pilot[col].astype(str).to_numpy(), "diff": diff}), name


def _check(difference: Any, n_systems: Any, power: Any, level: Any, family: Any, ests: list[str],
           reps: Any, seed: Any, simulate: bool) -> None:
    """One clear error for the first bad argument of :func:`plan_difference`."""
    if not (isinstance(difference, (int, float)) and not isinstance(difference, bool)
            and math.isfinite(difference) and 0 < abs(difference) < 1):
        raise RagcovError(f"`difference` must be a non-zero number in (-1, 1), e.g. 0.02 for 2 points; "
                          f"got {difference!r}.")
    if not (isinstance(n_systems, (int, np.integer)) and not isinstance(n_systems, bool) and n_systems >= 2):
        raise RagcovError(f"`n_systems` must be an integer >= 2 (the systems to be compared pairwise); "
                          f"got {n_systems!r}.")
    if not (isinstance(power, float) and 0 < power < 1):
        raise RagcovError(f"`power` must be a float in (0, 1), e.g. 0.8; got {power!r}.")
    check_level(level, float_only=True)  # family-wise
    if family not in FAMILIES:
        raise RagcovError(f"`family` must be one of {FAMILIES}; got {family!r}.")
    for e in ests:
        if e not in ESTIMATORS:
            raise RagcovError(f"`estimators` must be drawn from {list(ESTIMATORS)}; got {e!r}.")
    if simulate and not (isinstance(reps, (int, np.integer)) and not isinstance(reps, bool) and reps >= 1):
        raise RagcovError(f"`reps` must be a positive integer (simulated samples); got {reps!r}.")
    if simulate and not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        raise RagcovError(f"`seed` must be a non-negative integer; got {seed!r}.")


def _micro_df(k: int, size_ratio: float) -> float:
    """Reference df of CR2 at K clusters: the Satterthwaite df's large-K form ``K / (1 + cv²)``, in [1, K−1].

    ``1 + cv² = mean(n²) / mean(n)²`` of the pilot's sizes; the closed-form df (see ``_kernels.cr2_df``) is
    ``1 / (Σf² + ...)`` with ``Σf² ≈ (1 + cv²) / K``. Below a few hundred clusters this undershoots the
    typical df of a sample (conservative: a larger K).
    """
    return float(min(k - 1.0, max(1.0, k / size_ratio)))


def _k_for_power(sd_unit: float, d: float, alpha: float, power: float, df_of) -> int:
    """Smallest K with ``(t_{1−α/2, df} + t_{power, df}) · sd_unit / sqrt(K) <= |D|``.

    The left side falls with K (both quantiles fall with df, and 1/sqrt(K)), so doubling then bisection
    finds it.
    """
    def ok(k: int) -> bool:
        df = df_of(k)
        return (stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * sd_unit / math.sqrt(k) <= abs(d)

    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    lo = max(2, math.ceil((z * sd_unit / abs(d)) ** 2))  # the normal-quantile K: never more than needed
    if ok(lo):
        return lo
    hi = lo * 2
    while not ok(hi):
        if hi > _K_MAX:
            raise RagcovError(f"detecting {d:g} needs more than {_K_MAX} clusters at this variance; plan for a "
                              "larger difference.")
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _simulate(n: np.ndarray, s: np.ndarray, q: np.ndarray, k: int, estimator: str, alpha: float, d: float,
              reps: int, seed: int) -> tuple[float, float]:
    """Share of ``reps`` samples of K clusters (with replacement) whose interval at ``1 − α`` excludes 0
    on the side of ``d``, and its Monte-Carlo margin (1.96 binomial SE, as the coverage study)."""
    rng = np.random.default_rng([seed, k, ESTIMATORS.index(estimator)])
    hits = 0
    step = max(1, _CHUNK // k)
    for lo in range(0, reps, step):
        idx = rng.integers(0, len(n), size=(min(step, reps - lo), k))
        r = interval_batch(n[idx], s[idx], q[idx], estimator=estimator, method=POWER_METHODS[estimator],
                           level=1.0 - alpha)
        hits += int(np.sum(r["low"] > 0) if d > 0 else np.sum(r["high"] < 0))
    p = hits / reps
    return p, float(1.96 * math.sqrt(p * (1 - p) / reps))


def _k_by_simulation(sim, k: int, power: float, p_k: float) -> tuple[int, float]:
    """Smallest K (to the search's resolution) whose simulated power reaches ``power``, searched from the
    analytic ``k`` (simulated power ``p_k``): step by ×1.25 to bracket the target, then bisect.

    Simulated power is noisy (± its Monte-Carlo margin), so the result is an estimate of where the power
    curve crosses the target, not an exact minimum.
    """
    if p_k >= power:  # bracket downwards
        hi, p_hi, lo = k, p_k, k
        while lo > 2:
            lo = max(2, int(lo / 1.25))
            p_lo = sim(lo)[0]
            if p_lo < power:
                break
            hi, p_hi = lo, p_lo
        else:
            return hi, p_hi
    else:  # bracket upwards
        lo, hi = k, k
        while True:
            hi = max(hi + 1, math.ceil(hi * 1.25))
            if hi > _K_MAX:
                raise RagcovError(f"the simulated power stays below {power:g} up to {_K_MAX} clusters.")
            p_hi = sim(hi)[0]
            if p_hi >= power:
                break
            lo = hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        p_mid = sim(mid)[0]
        if p_mid >= power:
            hi, p_hi = mid, p_mid
        else:
            lo = mid
    return hi, p_hi


def plan_difference(pilot: Any, difference: float, *, n_systems: int = 2, power: float = 0.8, level: float = 0.95,
                    family: str = "holm", estimators: str | Sequence[str] = ESTIMATORS, simulate: bool = True,
                    reps: int = 2000, seed: int = 0, task: Any = None, metric: str | None = None,
                    cluster: str | None = None, tie_policy: str | None = None) -> PowerResult:
    """Clusters K needed to detect a paired difference ``D`` among N systems, family-wise, with a check.

    Parameters
    ----------
    pilot : ComparisonResult, DataFrame or (run_a, run_b)
        Paired per-query differences of two systems: the result of :func:`ragcov_data.eval.compare`, its
        ``per_query`` (or any table with ``cluster`` or ``doc_id`` and ``diff``), or two runs to compare
        on ``task`` with ``metric`` / ``cluster`` / ``tie_policy``.
    difference : float
        The difference A − B to detect, in metric units (0.02 = 2 points).
    n_systems : int, default: 2
        Systems to be compared pairwise: ``m = N(N−1)/2`` pairs.
    power : float, default: 0.8
        Target probability of declaring the difference.
    level : float, default: 0.95
        Family-wise confidence level: every pair is tested at ``α/m``, ``α = 1 − level``.
    family : {"holm", "bonferroni"}, default: "holm"
        Adjustment the comparison will use (the same K for both; see the module docstring).
    estimators : str or sequence, default: ("micro", "macro")
    simulate : bool, default: True
        Check K by re-sampling ``reps`` samples of K of the pilot's clusters with replacement, the
        differences shifted by ``D − observed`` so their mean is ``D``, and counting how often the
        interval of :data:`POWER_METHODS` (CR2 for micro, t for macro) at ``1 − α/m`` excludes 0 on D's side.
    reps, seed : int, default: 2000, 0
    task, metric, cluster, tie_policy
        Only with a pair of runs: passed to :func:`~ragcov_data.eval.compare` (metric default ``"hit@1"``).

    Returns
    -------
    PowerResult

    Notes
    -----
    Micro (mean over queries) is a ratio estimator: with cluster sums ``s_d``, sizes ``n_d`` and
    ``u_d = s_d − d̄·n_d``, its variance over K clusters is ``S_u² / (K·m̄²) = σ²·DEFF / (K·m̄)``, with
    ``σ²`` the per-query variance of the differences, ``m̄`` the mean cluster size and
    ``DEFF = S_u² / (m̄·σ²)`` (the ratio-estimator design effect that :func:`~ragcov_data.eval.plan` uses and
    the CR2 interval estimates; ``deff_icc = 1 + ((cv² + 1)·m̄ − 1)·ICC`` from
    :func:`~ragcov_data.eval.design_effect` is reported beside it). Macro (mean of cluster means) has variance
    ``S_p² / K``. With ``sd_unit`` the square root of the per-cluster variance,
    ``K = ((t_{1−α/(2m), df} + t_{power, df}) · sd_unit / |D|)²``, smallest integer; df = K − 1 for macro,
    ``K / (1 + cv²)`` for micro (the CR2 Satterthwaite df's large-K form). The normal-quantile version is
    ``((z_{1−α/(2m)} + z_{power}) · σ·sqrt(DEFF/m̄) / |D|)²``. The variance is the pilot's, taken as the same
    under the alternative; no finite-population correction. The simulation (``simulated_power`` at K, and
    ``k_simulated``: step ×1.25 from K to bracket the target, then bisect) needs no normality; its K is to
    within the Monte-Carlo margin of the power.

    Examples
    --------
    >>> from ragcov_data.eval import compare, plan_difference
    >>> plan_difference(compare(run_a, run_b, task), 0.02, n_systems=5).k_needed  # doctest: +SKIP
    {'micro': 206, 'macro': 293}
    """
    ests = [estimators] if isinstance(estimators, str) else list(estimators)
    _check(difference, n_systems, power, level, family, ests, reps, seed, simulate)
    pq, cluster_name = _pilot_frame(pilot, task, metric, cluster, tie_policy)
    n, s, q, d_all = _pilot_sums(pq)
    C = len(n)
    m = n_systems * (n_systems - 1) // 2
    alpha = float(f"{(1.0 - level) / m:.12g}")  # 0.005, not 0.0050000000000000044
    de = design_effect(d_all, pq["cluster"].to_numpy())
    sigma = float(d_all.std())  # per-query SD (ddof 0, the σ² of the ratio DEFF)
    size_ratio = float((n * n).mean() / n.mean() ** 2)  # 1 + cv²
    res = PowerResult(float(difference), int(n_systems), m, power, level, family, alpha, C, int(n.sum()),
                      cluster_name, int(reps) if simulate else None,
                      flags=("negative_icc",) if "negative_icc" in de.flags else ())
    for est in ests:
        row = _estimator_row(est, n, s, sigma, size_ratio, de, difference, alpha, power)
        if simulate:
            _simulate_row(row, n, s, q, est, alpha, difference, power, reps, seed)
        res.rows.append(row)
    return res


def _pilot_sums(pq: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-cluster size, sum and sum of squares of the pilot's differences, and every difference; an error
    for fewer than 2 clusters or differences that never vary."""
    g = pq.groupby("cluster", sort=False)["diff"]
    n = g.size().to_numpy(float)
    s = g.sum().to_numpy(float)
    q = pq.assign(d2=pq["diff"] ** 2).groupby("cluster", sort=False)["d2"].sum().to_numpy(float)
    C = len(n)
    if C < 2:
        raise RagcovError(f"`pilot` has {C} cluster; a power plan needs at least 2 clusters.")
    d_all = pq["diff"].to_numpy()
    if np.allclose(d_all, d_all[0], rtol=0, atol=1e-12):
        raise RagcovError(
            f"every paired difference in the pilot equals {d_all[0]:g}: the two systems never disagree, so there is "
            "no variance to plan from; use a pilot of two runs that differ on some queries.")
    return n, s, q, d_all


def _estimator_row(est: str, n: np.ndarray, s: np.ndarray, sigma: float, size_ratio: float, de: Any,
                   difference: float, alpha: float, power: float) -> dict[str, Any]:
    """One estimator's analytic plan (the row of :attr:`PowerResult.rows`, simulation fields still None)."""
    if est == "micro":
        obs = float(s.sum() / n.sum())
        u = s - obs * n
        var_unit = float(np.var(u, ddof=1) / n.mean() ** 2)
        deff = float(var_unit * n.mean() / sigma**2)
        df_of = lambda k: _micro_df(k, size_ratio)  # noqa: E731
    else:
        obs = float(np.mean(s / n))
        var_unit = float(np.var(s / n, ddof=1))
        deff = float("nan")
        df_of = lambda k: k - 1.0  # noqa: E731
    if var_unit <= 0:
        raise RagcovError(f"the pilot's {est} difference has no between-cluster variance (every cluster's "
                          "difference is the same); a power plan needs clusters that vary.")
    sd_unit = math.sqrt(var_unit)
    k = _k_for_power(sd_unit, difference, alpha, power, df_of)
    df, se = df_of(k), sd_unit / math.sqrt(k)
    pred = float(stats.t.cdf(abs(difference) / se - stats.t.ppf(1 - alpha / 2, df), df))
    return {"estimator": est, "k": int(k), "observed": obs, "sd": sigma, "sd_unit": sd_unit, "deff": deff,
            "icc": de.icc, "deff_icc": de.deff, "cv": de.cv, "mean_size": de.mean_size, "df": df, "se": se,
            "predicted_power": pred, "method": POWER_METHODS[est], "simulated_power": None,
            "mc_margin": None, "k_simulated": None, "power_at_k_simulated": None, "exceeds_pilot": bool(k > len(n))}


def _simulate_row(row: dict[str, Any], n: np.ndarray, s: np.ndarray, q: np.ndarray, est: str, alpha: float,
                  difference: float, power: float, reps: int, seed: int) -> None:
    """Fill ``row``'s simulated power at its K and the simulated K (:func:`_k_by_simulation`)."""
    k = row["k"]
    shift = difference - row["observed"]  # every query's difference moves by D − observed: the mean becomes D
    s2, q2 = s + shift * n, q + 2 * shift * s + shift * shift * n

    def sim(kk: int) -> tuple[float, float]:
        return _simulate(n, s2, q2, kk, est, alpha, difference, reps, seed)

    row["simulated_power"], row["mc_margin"] = sim(k)
    row["k_simulated"], row["power_at_k_simulated"] = _k_by_simulation(sim, k, power, row["simulated_power"])
