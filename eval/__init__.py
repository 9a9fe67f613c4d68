"""Document-clustered evaluation: estimates and intervals that respect the sampled unit.

Public API::

    from ragcov_data.eval import interval, design_effect, evaluate, compare
    r = interval(values, clusters, estimator="micro", method="cr2", level=0.95, seed=0)
    r.confidence_interval()                      # ConfidenceInterval(low, high)
    d = design_effect(values, clusters)          # icc, deff, cv, mean_size, n_eff
    report = evaluate(run, task, metric="hit@1") # per_query, per_document, estimates, diagnostics
    diff = compare(run_a, run_b, task)           # paired differences, tied documents
    table = outcomes(run, task, "hit@1")         # the per-query outcomes every verb scores from

Every interval goes through one vectorised core, :mod:`ragcov_data.eval.estimates._kernels`.
"""
from __future__ import annotations

from ragcov_data.eval.estimates._kernels import ESTIMATORS, METHODS
from ragcov_data.eval.comparisons.compare import compare
from ragcov_data.eval.estimates.design import design_effect
from ragcov_data.eval.estimates.evaluator import evaluate
from ragcov_data.eval.estimates.interval import interval
from ragcov_data.eval.estimates.results import (
    ComparisonResult,
    ConfidenceInterval,
    DesignEffectResult,
    EvaluationResult,
    IntervalResult,
    from_json,
)

__all__ = [
    "interval",
    "design_effect",
    "evaluate",
    "compare",
    "IntervalResult",
    "DesignEffectResult",
    "EvaluationResult",
    "ComparisonResult",
    "ConfidenceInterval",
    "METHODS",
    "ESTIMATORS",
    "from_json",
]

# ---- exports of the coverage / planning modules (coverage_study, simulate_population, plan,
# ---- recommend) go below this line --------------------------------------------------------------
from ragcov_data.eval.planning.coverage import coverage_study  # noqa: E402
from ragcov_data.eval.planning.planner import PlanResult, RecommendResult, plan, recommend  # noqa: E402
from ragcov_data.eval.planning.twin import population_figures, simulate_population  # noqa: E402

__all__ += ["coverage_study", "simulate_population", "population_figures", "plan", "recommend", "PlanResult",
            "RecommendResult"]
from ragcov_data.eval.planning.power import PowerResult, plan_difference  # noqa: E402

__all__ += ["plan_difference", "PowerResult"]
from ragcov_data.eval.comparisons.leaderboard import LeaderboardResult, leaderboard, null_family_rates  # noqa: E402

__all__ += ["leaderboard", "LeaderboardResult", "null_family_rates"]
from ragcov_data.eval.misses.analysis import MissesResult, misses  # noqa: E402

__all__ += ["misses", "MissesResult"]
from ragcov_data.eval.outcomes.table import OutcomeSet, OutcomeTable  # noqa: E402
from ragcov_data.eval.outcomes.stage import outcomes_many  # noqa: E402
import ragcov_data.eval.outcomes as outcomes  # noqa: E402  (the stage's module, callable as its function)

__all__ += ["outcomes", "outcomes_many", "OutcomeTable", "OutcomeSet"]
from ragcov_data.eval.comparisons.proxy import ProxyAgreement, Side, proxy_agreement  # noqa: E402
from ragcov_data.eval.planning.proxy_coverage import proxy_coverage  # noqa: E402

__all__ += ["proxy_agreement", "ProxyAgreement", "Side", "proxy_coverage"]
