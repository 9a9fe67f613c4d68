"""How concentrated a design's queries are among its clusters, and when a census check is blind for micro.

The micro estimate (mean over queries) is a ratio ``sum s / sum n`` over clusters (documents): cluster ``j``
weighs ``f_j = n_j / N`` in it, ``f_j`` is also its leverage in the intercept-only regression of the query
values clustered by document. A census check (:mod:`.verify`) resamples the census's own clusters: it cannot
see a cluster larger than the ones at hand, yet when one cluster already holds a large share of the queries,
the superpopulation it was drawn from plausibly holds clusters like it in numbers the census does not show, and
micro moves with each of them. Three diagnostics of that risk:

largest share ``max_j f_j``
    the largest leverage (MacKinnon, Nielsen & Webb 2023; ``summclust``). Under equal sizes it is ``1 / G``.
effective number of clusters ``G*``
    Carter, Schnepel & Steigerwald (2017): ``G* = G / (1 + Gamma)``, ``Gamma`` the squared coefficient of
    variation (ddof 0) of ``gamma_j``, cluster j's contribution to the variance of the estimate. For the micro
    mean with within-cluster correlation ``rho`` (equicorrelated, common variance),
    ``gamma_j ∝ rho n_j^2 + (1 - rho) n_j``. ``rho = 0`` gives the ICC-free form
    ``G / (1 + cv(n)^2) = N^2 / sum n_j^2 = 1 / sum f_j^2`` (Kish's effective size over clusters, the inverse
    Herfindahl index of the shares); ``rho = 1`` gives ``(sum n_j^2)^2 / sum n_j^4``, the worst case.
concentration ``max_j f_j * G^b``
    the largest share against a bound that falls with G: the standard error of micro falls like ``1 / sqrt(G)``,
    so a cluster holding a share comparable to it moves micro by about a standard error by itself, and whether
    the census happens to hold one such cluster, two or none decides its coverage. ``b = 1/2`` is that
    heuristic; the grid below prefers a flatter bound (:data:`CONCENTRATION_POWER`).

:func:`is_concentrated` applies the rule ``max_j f_j > CONCENTRATION_C / G^CONCENTRATION_POWER`` (and
``> 2 / G``, so equal sizes are never concentrated at a handful of clusters). Form and constants were chosen on
a simulation grid of superpopulations (``benchmarks/bench_verified_criterion.py``,
``docs/results/verified-criterion.md``), not on ragcov's own tasks: Pareto cluster sizes with tail exponents
1.2-3, with and without one dominant cluster holding 2-25% of the queries, G from 20 to 500. Among the rules
tried (largest share times ``G^b`` for b from 0.2 to 0.6, the share alone, ``G*``, the CV of sizes, Hill's tail
exponent), the family ``share * G^b`` marks the fewest rows unverifiable where the check alone was right while
leaving no design's verified micro rows shown short of 0.93, with a plateau from b = 0.25 to 0.4 (b = 0.3 is one
point of it; b = 1/2 costs more); see that page for the numbers and what no rule on the census's sizes can see (a
superpopulation type of cluster the census happens to lack).

References: Carter, A. V., Schnepel, K. T. & Steigerwald, D. G. (2017). Asymptotic behavior of a t-test robust to
cluster heterogeneity. Review of Economics and Statistics 99(4), 698-709. MacKinnon, J. G., Nielsen, M. O. &
Webb, M. D. (2023). Leverage, influence, and the jackknife in clustered regression models: reliable inference
using summclust. Stata Journal 23(4), 942-982. Sasaki, Y. & Wang, Y. (2022). Non-robustness of the
cluster-robust inference: with a proposal of a new robust method. arXiv:2210.16991.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["largest_share", "effective_clusters", "concentration", "is_concentrated", "concentration_text",
           "plural", "CONCENTRATION_C", "CONCENTRATION_POWER"]

#: A census check is blind for micro when the largest cluster holds more than ``CONCENTRATION_C / G^b`` of the
#: queries, ``b`` = :data:`CONCENTRATION_POWER` (both chosen on the grid of
#: ``benchmarks/bench_verified_criterion.py``; see the module docstring).
CONCENTRATION_C = 0.19
CONCENTRATION_POWER = 0.3


def _sizes(sizes: Any) -> np.ndarray:
    x = np.asarray(sizes, float).ravel()
    return x[x > 0]  # a cluster without queries takes no part in micro


def largest_share(sizes: Any) -> float:
    """The largest cluster's share of the queries, ``max n_j / sum n_j`` (0 for no queries)."""
    x = _sizes(sizes)
    return float(x.max() / x.sum()) if len(x) else 0.0


def effective_clusters(sizes: Any, rho: float = 0.0) -> float:
    """Carter, Schnepel & Steigerwald's effective number of clusters ``G / (1 + Gamma)`` for the micro mean,
    ``Gamma`` the squared CV (ddof 0) of ``rho n_j^2 + (1 - rho) n_j``; ``rho = 0``: ``N^2 / sum n_j^2``."""
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"rho must lie in [0, 1], got {rho}")
    x = _sizes(sizes)
    if not len(x):
        return 0.0
    g = rho * x ** 2 + (1 - rho) * x
    return float(len(x) / (1.0 + g.var() / g.mean() ** 2))


def concentration(sizes: Any, power: float = CONCENTRATION_POWER) -> float:
    """``largest_share * G^power``: the rule's statistic (:func:`is_concentrated`); ``G^(power - 1)`` under
    equal sizes."""
    x = _sizes(sizes)
    return largest_share(x) * len(x) ** power


def plural(unit: str) -> str:
    """``unit``'s plural: ``queries`` for ``query``, else an ``s`` added (``documents``, ``exams``, ``topics``)."""
    return "queries" if unit == "query" else unit + "s"


def concentration_text(sizes: Any, c: float = CONCENTRATION_C, power: float = CONCENTRATION_POWER,
                       unit: str = "document") -> str:
    """``one document holds 18.4% of the queries, more than 0.19 / 147^0.3 = 4.2% for 147 documents``; ``unit``
    names the cluster (the task's unit of inference: ``"exam"``, ``"topic"``, ``"source"``, ...)."""
    x = _sizes(sizes)
    G = len(x)
    bound = c / max(G, 1) ** power
    return (f"one {unit} holds {largest_share(x):.1%} of the queries, more than {c:g} / {G}^{power:g} = "
            f"{bound:.1%} for {G} {plural(unit)}")


def is_concentrated(sizes: Any, c: float = CONCENTRATION_C, power: float = CONCENTRATION_POWER,
                    unit: str = "document") -> tuple[bool, str]:
    """Whether a census check is blind for micro at these cluster sizes, and why (the reason is "" when not;
    ``unit`` names the cluster in it, :func:`concentration_text`).

    True when the largest cluster holds more than ``c / G^power`` of the queries (:data:`CONCENTRATION_C`,
    :data:`CONCENTRATION_POWER`):
    then whether a census holds one such cluster, two or none moves micro by about a standard error, and a
    check that resamples the census's own clusters cannot see the ones it lacks. A largest cluster holding at
    most twice an equal share (``2 / G``) is not concentrated whatever G: equal sizes never are (below
    ``G = (2 / c)^(1 / (1 - power))``, 29 at the defaults, ``c / G^power`` falls under ``2 / G``)."""
    x = _sizes(sizes)
    if len(x) < 2 or concentration(x, power) <= c or largest_share(x) <= 2.0 / len(x):
        return False, ""
    return True, concentration_text(x, c, power, unit)
