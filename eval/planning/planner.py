"""Design planner: how many documents for a target precision, and which interval method to trust.

:func:`plan` turns a pilot (or a population: a census run or the twin) into the number of documents K
needed for a target half-width, for micro (via the design effect of the ratio estimator) and macro
(via the between-document variance of rates), then confirms it by simulation. :func:`recommend` runs the
coverage study at the user's K and picks, per estimator, the method whose verified coverage is closest to
nominal without under-covering, with the evidence.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ragcov_data.errors import RagcovError
from ragcov_data.eval.estimates._kernels import METHODS, check_level, check_resamples
from ragcov_data.eval.planning.coverage import ESTIMATORS, coverage_study, population_counts

__all__ = ["plan", "recommend", "choose_methods", "PlanResult", "RecommendResult", "DEFAULT_METHODS"]

#: Method used to confirm a plan by simulation, per estimator.
DEFAULT_METHODS = {"micro": "cr2", "macro": "t"}


@dataclass
class PlanResult:
    """Documents needed for a target half-width, per estimator.

    Attributes
    ----------
    target_halfwidth, level : float
        The requested half-width and confidence level.
    rows : list of dict
        Per estimator: ``estimator``, ``estimate`` (pilot value), ``k`` (documents needed), ``deff``
        (micro: design effect of the ratio estimator relative to independent chunks; macro: nan),
        ``sd_unit`` (SD of the per-document score that drives the variance), ``predicted_halfwidth`` at
        ``k``, and, when confirmed, ``method``, ``achieved_halfwidth`` (mean simulated half-width at ``k``),
        ``coverage`` and ``mc_margin``. ``feasible`` is False when ``k`` exceeds the pilot's documents.
    """

    target_halfwidth: float
    level: float
    n_docs: int
    rows: list[dict[str, Any]] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """The plan as a DataFrame, one row per estimator."""
        return pd.DataFrame(self.rows)

    def __repr__(self) -> str:
        lines = [f"PlanResult(target_halfwidth={self.target_halfwidth:g}, level={self.level:g}, "
                 f"pilot documents={self.n_docs})"]
        for r in self.rows:
            s = (f"  {r['estimator']}: K = {r['k']} documents (estimate {r['estimate']:.4f}, predicted "
                 f"half-width {r['predicted_halfwidth']:.4f}")
            if not math.isnan(r.get("deff", float("nan"))):
                s += f", DEFF {r['deff']:.1f}"
            s += ")"
            if r.get("achieved_halfwidth") is not None:
                s += (f"; simulated with {r['method']}: mean half-width {r['achieved_halfwidth']:.4f}, "
                      f"coverage {r['coverage']:.1%} ± {r['mc_margin']:.1%}")
            if not r["feasible"]:
                s += f"  [needs more documents than the pilot's {self.n_docs}: not confirmed]"
            elif r["k"] == self.n_docs:
                s += f"  [K is every one of the pilot's {self.n_docs} documents (a census): not confirmed]"
            lines.append(s)
        return "\n".join(lines)


def _k_needed(var_unit: float, h: float, level: float, k_max: int = 10**7) -> int:
    """Smallest K with t_{K-1} * sqrt(var_unit / K) <= h (df = K - 1, as the document-level intervals use)."""
    if var_unit <= 0:
        return 2
    z = stats.norm.ppf(0.5 + level / 2)
    k = max(2, math.ceil(z * z * var_unit / h**2))
    while k < k_max and stats.t.ppf(0.5 + level / 2, k - 1) * math.sqrt(var_unit / k) > h:
        k += 1
    return k


def plan(pilot: Any, target_halfwidth: float, level: float = 0.95, estimators: str | Sequence[str] = ESTIMATORS,
         confirm: bool = True, seed: int = 0, reps: int = 1000, methods: dict[str, str] | None = None,
         show_progress: bool = False, n_resamples: int = 999) -> PlanResult:
    """Documents K needed for a target interval half-width, confirmed by simulation.

    Parameters
    ----------
    pilot : DataFrame or EvaluationResult
        Per-query outcomes or per-document counts (see :func:`~ragcov_data.eval.planning.coverage.population_counts`)
        of a pilot sample or a population.
    target_halfwidth : float
        Desired half-width of the interval (e.g. ``0.05`` for ±5 points).
    level : float, default: 0.95
        Confidence level.
    estimators : str or sequence, default: ("micro", "macro")
    confirm : bool, default: True
        Re-sample K documents from the pilot ``reps`` times with the coverage-study machinery and report the
        mean achieved half-width and the coverage of ``methods[estimator]`` at that K.
    seed, reps : int, default: 0, 1000
        Simulation seed and replicates.
    methods : dict, optional
        Method per estimator for the confirmation (default :data:`DEFAULT_METHODS`).
    show_progress : bool, default: False
    n_resamples : int, default: 999
        Bootstrap resamples when a confirming method resamples (at least ``ceil(2 / (1 - level)) - 1``,
        :func:`ragcov_data.eval.estimates._kernels.min_resamples`).

    Returns
    -------
    PlanResult

    Notes
    -----
    Micro is a ratio estimator; with residuals ``u_d = s_d − p·n_d`` its variance for K documents drawn at
    random is ``S_u² / (K·n̄²)``, i.e. the independent-chunks variance ``p(1−p)/(K·n̄)`` times the design
    effect ``DEFF = S_u² / (n̄·σ²)`` (``σ²`` the per-chunk variance). Macro is a mean of K document rates,
    variance ``S_p² / K``. K is the smallest integer with ``t_{K−1, (1+level)/2}·SE(K) ≤ target``. No finite
    population correction is assumed (conservative when K is a large share of the population).

    Examples
    --------
    >>> from ragcov_data.eval.planning.twin import simulate_population
    >>> plan(simulate_population(), 0.05, confirm=False)  # doctest: +SKIP
    """
    pop = population_counts(pilot)
    ests = [estimators] if isinstance(estimators, str) else list(estimators)
    methods = _plan_iv(pop, ests, target_halfwidth, level, confirm, methods, n_resamples)
    n, s, q = (pop[c].to_numpy(float) for c in ("n", "s", "q"))
    D = len(pop)
    result = PlanResult(float(target_halfwidth), level, D)
    for est in ests:
        p, var_unit, deff = _unit_variance(est, n, s, q)
        k = _k_needed(var_unit, target_halfwidth, level)
        row = {
            "estimator": est, "estimate": float(p), "k": int(k), "deff": deff, "sd_unit": float(np.sqrt(var_unit)),
            "predicted_halfwidth": float(stats.t.ppf(0.5 + level / 2, k - 1) * np.sqrt(var_unit / k)),
            "feasible": bool(k <= D), "method": methods[est], "achieved_halfwidth": None,
            "coverage": None, "mc_margin": None,
        }
        if confirm and k < D:  # K = D samples the whole pilot: a census, nothing to simulate
            tab = coverage_study(pop.rename(columns={"s": "hits"}), k=int(k), reps=reps, methods=[methods[est]],
                                 estimators=est, level=level, seed=seed, show_progress=show_progress,
                                 n_resamples=n_resamples)
            r = tab.iloc[0]
            row.update(achieved_halfwidth=float(r["mean_width"] / 2), coverage=float(r["coverage"]),
                       mc_margin=float(r["mc_margin"]))
        result.rows.append(row)
    return result


def _plan_iv(pop: pd.DataFrame, ests: list[str], target_halfwidth: Any, level: Any, confirm: bool,
             methods: dict[str, str] | None, n_resamples: Any) -> dict[str, str]:
    """Check the arguments of :func:`plan` (first bad one: a clear error); return the method per estimator."""
    if not (isinstance(target_halfwidth, (int, float)) and 0 < target_halfwidth < 1):
        raise RagcovError(f"`target_halfwidth` must be in (0, 1), e.g. 0.05 for ±5 points; got {target_halfwidth!r}.")
    check_level(level, float_only=True)
    for e in ests:
        if e not in ESTIMATORS:
            raise RagcovError(f"`estimators` must be drawn from {list(ESTIMATORS)}; got {e!r}.")
    if len(pop) < 2:
        raise RagcovError(f"`pilot` has {len(pop)} document; a plan needs at least 2 documents.")
    methods = {**DEFAULT_METHODS, **(methods or {})}
    if confirm:
        check_resamples(n_resamples, level, [methods[e] for e in ests if e in methods])
    return methods


def _unit_variance(est: str, n: np.ndarray, s: np.ndarray, q: np.ndarray) -> tuple[float, float, float]:
    """The pilot's estimate, its variance per document (``var_unit``: the estimate's variance over K
    documents is ``var_unit / K``) and, for micro, the ratio estimator's design effect (see :func:`plan`)."""
    if est == "micro":
        p = s.sum() / n.sum()
        nbar = n.mean()
        u = s - p * n
        var_unit = np.var(u, ddof=1) / nbar**2
        sigma2 = q.sum() / n.sum() - p * p
        deff = float(np.var(u, ddof=1) / (nbar * sigma2)) if sigma2 > 0 else float("nan")
    else:
        p = float(np.mean(s / n))
        var_unit = float(np.var(s / n, ddof=1))
        deff = float("nan")
    return p, var_unit, deff


@dataclass
class RecommendResult:
    """Recommended interval method per estimator at a given K, with the evidence.

    Attributes
    ----------
    k, level : int, float
        Documents per sample and nominal level.
    choices : dict
        estimator -> dict(``method``, ``coverage``, ``mc_margin``, ``mean_width``, ``qualified`` (coverage +
        margin >= level), ``reason``).
    table : pandas.DataFrame
        The full coverage study behind the choice.
    """

    k: int
    level: float
    choices: dict[str, dict[str, Any]]
    table: pd.DataFrame

    def to_frame(self) -> pd.DataFrame:
        """One row per estimator: the recommended method and its evidence."""
        return pd.DataFrame([{"estimator": e, **c} for e, c in self.choices.items()])

    def __repr__(self) -> str:
        lines = [f"RecommendResult(k={self.k}, level={self.level:g}, reps={self.table.attrs.get('reps')})"]
        for e, c in self.choices.items():
            mark = "" if c["qualified"] else "  WARNING: no method reaches nominal coverage at this K"
            lines.append(f"  {e}: {c['method']} — coverage {c['coverage']:.1%} ± {c['mc_margin']:.1%}, "
                         f"mean width {c['mean_width']:.4f}{mark}")
        return "\n".join(lines)


def recommend(
    population: Any,
    k: int,
    level: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
    estimators: str | Sequence[str] = ESTIMATORS,
    include_naive: bool = False,
    n_resamples: int = 999,
    show_progress: bool = False,
) -> RecommendResult:
    """Recommend, per estimator, the interval method verified to cover at K documents.

    The coverage study is run at ``k`` on ``population``. A method *qualifies* when its coverage plus its
    Monte-Carlo margin reaches ``level`` (it is not shown to under-cover). Among qualifying methods the one
    closest to nominal wins; methods whose coverage is within the winner's Monte-Carlo margin of it count as
    tied, and the narrowest mean width breaks the tie. When none qualifies the highest-coverage method is
    returned with ``qualified=False`` and a warning: no method can be trusted at this K, so sample more
    documents (see :func:`plan`).

    Parameters
    ----------
    population : DataFrame or EvaluationResult
        The census (per-query outcomes or per-document counts).
    k : int
        Documents the evaluation will sample.
    level, reps, seed, n_resamples, show_progress
        As in :func:`~ragcov_data.eval.planning.coverage.coverage_study`.
    estimators : str or sequence, default: ("micro", "macro")
    include_naive : bool, default: False
        Also consider methods that treat chunks as independent (off: their coverage on one population says
        nothing about the next retriever's, whose clustering may be stronger).

    Returns
    -------
    RecommendResult
    """
    check_level(level, float_only=True)
    check_resamples(n_resamples, level, None)
    table = coverage_study(population, k=k, reps=reps, estimators=estimators, level=level, seed=seed,
                           n_resamples=n_resamples, show_progress=show_progress)
    choices = choose_methods(table, level, include_naive=include_naive, warn=True)
    return RecommendResult(int(k), level, choices, table)


def choose_methods(table: pd.DataFrame, level: float = 0.95, include_naive: bool = False,
                   warn: bool = False) -> dict[str, dict[str, Any]]:
    """The selection rule of :func:`recommend`, applied to a coverage table at one K.

    Returns estimator -> dict(``method``, ``coverage``, ``mc_margin``, ``mean_width``, ``qualified``,
    ``reason``).
    """
    if table["k"].nunique() != 1:
        raise RagcovError(f"`table` must hold one K; got K = {sorted(table['k'].unique())}.")
    k = int(table["k"].iloc[0])
    choices = {}
    for est, sub in table.groupby("estimator", sort=False):
        if not include_naive:
            sub = sub[~sub["method"].map(lambda m: METHODS[m]["naive"])]
        sub = sub.assign(dist=(sub["coverage"] - level).abs(),
                         qualified=sub["coverage"] + sub["mc_margin"] >= level)
        ok = sub[sub["qualified"]]
        if len(ok):
            best = ok.loc[ok["dist"].idxmin()]
            tied = ok[(ok["coverage"] - best["coverage"]).abs() <= best["mc_margin"]]
            pick = tied.loc[tied["mean_width"].idxmin()]
            reason = (f"coverage {pick['coverage']:.1%} ± {pick['mc_margin']:.1%} does not fall short of "
                      f"{level:.0%}" + (f"; narrowest of {len(tied)} methods with indistinguishable coverage"
                                        if len(tied) > 1 else "; closest to nominal"))
        else:
            pick = sub.loc[sub["coverage"].idxmax()]
            reason = (f"no method reaches {level:.0%} at K={k} (best: {pick['method']} at "
                      f"{pick['coverage']:.1%} ± {pick['mc_margin']:.1%}); sample more documents")
            if warn:
                warnings.warn(f"recommend: for {est}, {reason}.", RuntimeWarning, stacklevel=3)
        choices[est] = {"method": pick["method"], "coverage": float(pick["coverage"]),
                        "mc_margin": float(pick["mc_margin"]), "mean_width": float(pick["mean_width"]),
                        "qualified": bool(pick["qualified"]), "reason": reason}
    return choices
