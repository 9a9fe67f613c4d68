"""Coverage of the proxy study's interval for tau, on simulated pairs of tasks whose true agreement is known.

:func:`ragcov_data.eval.comparisons.proxy.proxy_agreement` gives an interval for Kendall's tau-b between two
tasks' true orders of a family of systems. Whether it contains the truth as often as it says is measured
here on pairs of tasks built from real ones (a *plasmode*):

- **Populations.** Each task's observed per-query values (a :class:`~ragcov_data.eval.comparisons.proxy.Side`:
  documents for self-retrieval, questions clustered by topic or exam) are taken as the population; the true
  score of every system is its population estimate (micro: the mean over rows; macro: the mean of cluster
  means), so the systems' true scores are spaced exactly like the real ones (``spread`` > 1 widens the gaps:
  every value of system ``s`` moves by ``(spread - 1) (theta_s - mean theta)``, so its truth moves by as much).
- **Samples.** Each replicate draws, independently, as many clusters as each task has (with replacement,
  a drawn cluster bringing all its rows, a cluster drawn twice counted as two): a new pair of tasks of the
  real designs.
- **True agreement.** The proxy's systems are relabelled before the truth is read, which plants the true
  order relation: ``identical`` (the proxy system of true rank r plays the real system of true rank r: tau =
  1 up to true ties), ``reversed`` (tau = -1), ``independent`` (a uniformly random relabelling each
  replicate; its tau is that replicate's truth), ``known`` (one fixed relabelling whose tau is the
  nearest to ``known_tau``).
- **Intervals.** Each replicate runs the study's own procedures: the compatible-orders interval (both
  families at ``sqrt(level)``, :func:`..comparisons._orders.compatible_bounds`) and the joint bootstrap's
  percentile interval; a replicate covers when its interval holds its truth. The relabelling only permutes
  systems, so each replicate's families and bootstrap are computed once and read under every scenario.

Returned per scenario and method: ``coverage`` with its Monte-Carlo SE, the mean truth and estimate, the
mean width, the share of intervals that exclude 0 and the share at the widest ``[-1, 1]``.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.comparisons import _orders
from ragcov_data.eval.comparisons.proxy import Side, _forced_signs

__all__ = ["proxy_coverage", "SCENARIOS", "COLUMNS", "draw_clusters", "population_truth"]

SCENARIOS = ("identical", "reversed", "independent", "known")
METHODS = ("compatible_orders", "bootstrap_percentile")
COLUMNS = ["scenario", "method", "reps", "true_tau", "tau_hat", "coverage", "mc_se", "mean_width",
           "excludes_0", "low_above_0", "widest"]


def population_truth(side: Side) -> np.ndarray:
    """Every system's population score (micro: mean over rows; macro: mean of cluster means)."""
    V = side.matrix()
    if side.estimator == "micro":
        return V.mean(1)
    codes, K = side.codes()
    n = np.bincount(codes, minlength=K)
    return np.stack([np.bincount(codes, weights=v, minlength=K) / n for v in V]).mean(1)


def _spread(side: Side, factor: float) -> Side:
    """The side with every system's gap to the mean of the systems' truths multiplied by ``factor``."""
    if factor == 1.0:
        return side
    th = population_truth(side)
    shift = (factor - 1.0) * (th - th.mean())
    return Side(side.values + shift[None, :], side.clusters, side.metric, side.task, side.cluster_name,
                side.estimator)


def draw_clusters(side: Side, rng: np.random.Generator) -> Side:
    """A sample of the side's design: as many clusters as it has, drawn with replacement, each bringing all
    its rows (a cluster drawn twice is two clusters)."""
    codes, K = side.codes()
    rows = [np.flatnonzero(codes == k) for k in range(K)] if K < len(codes) else [np.array([i]) for i in
                                                                                    np.argsort(codes)]
    pick = rng.integers(0, K, size=K)
    idx = np.concatenate([rows[k] for k in pick])
    new = np.repeat(np.arange(K), [len(rows[k]) for k in pick])
    vals = side.values.iloc[idx].reset_index(drop=True)
    return Side(vals, new, side.metric, side.task, side.cluster_name, side.estimator)


def _permutation(scenario: str, tp: np.ndarray, tr: np.ndarray, fixed: np.ndarray,
                 rng: np.random.Generator) -> np.ndarray:
    """``perm[s]`` = the proxy system playing real system ``s`` under ``scenario``."""
    if scenario == "independent":
        return rng.permutation(len(tr))
    if scenario == "known":
        return fixed
    by_p = np.argsort(-tp, kind="stable")  # proxy systems, best first
    rank_r = np.empty(len(tr), dtype=int)
    rank_r[np.argsort(-tr, kind="stable")] = np.arange(len(tr))  # real rank of each system
    perm = by_p[rank_r]
    return perm if scenario == "identical" else by_p[::-1][rank_r]


def _known(tp: np.ndarray, tr: np.ndarray, target: float, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """A relabelling whose true tau-b is the nearest to ``target`` (every one for up to 8 systems, else 20,000
    random ones), and that tau."""
    S = len(tr)
    cands = (np.array(list(itertools.permutations(range(S)))) if S <= _orders.EXACT_MAX_SYSTEMS else
             np.array([rng.permutation(S) for _ in range(20_000)]))
    taus = _orders.tau_b_rows(tp[cands], np.broadcast_to(tr, cands.shape))
    k = int(np.nanargmin(np.abs(taus - target)))
    return cands[k], float(taus[k])


def _matrix(sign: np.ndarray, S: int) -> np.ndarray:
    ia, ib = _orders.pair_index(S)
    M = np.zeros((S, S), dtype=np.int8)
    M[ia, ib], M[ib, ia] = sign, -sign
    return M


def _check(proxy: Side, real: Side, scenarios: Sequence[str], reps: int, spread: float) -> list[str]:
    names = [str(c) for c in real.values.columns]
    if sorted(map(str, proxy.values.columns)) != sorted(names):
        raise RagcovError("the two sides must score the same systems.")
    bad = [s for s in scenarios if s not in SCENARIOS]
    if bad or not scenarios:
        raise RagcovError(f"`scenarios` must be among {list(SCENARIOS)}; got {list(scenarios)}.")
    if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or reps < 1:
        raise RagcovError(f"`reps` must be a positive integer; got {reps!r}.")
    if not (isinstance(spread, (int, float)) and spread > 0):
        raise RagcovError(f"`spread` must be a positive number; got {spread!r}.")
    return names


def proxy_coverage(proxy: Side, real: Side, *, scenarios: Sequence[str] = SCENARIOS, known_tau: float = 0.5,
                   spread: float = 1.0, reps: int = 500, level: float = 0.95, n_resamples: int = 499,
                   seed: int = 0, show_progress: bool = False) -> pd.DataFrame:
    """Coverage of the proxy study's intervals for tau on simulated pairs of tasks (see the module docstring).

    Parameters
    ----------
    proxy, real : Side
        The observed values of each task (the populations the pairs are drawn from), same systems.
    scenarios : sequence of str
        Of :data:`SCENARIOS`.
    known_tau : float
        The target of the ``known`` scenario (its relabelling's actual tau is in ``true_tau``).
    spread : float
        Multiplies the gaps between the systems' true scores on both tasks (1: as observed).
    reps, level, n_resamples, seed
        Simulated pairs; the level; bootstrap replicates of every family and joint bootstrap; the seed.

    Returns
    -------
    DataFrame
        :data:`COLUMNS`, one row per (scenario, method); ``attrs``: the settings, each side's clusters and
        the ``known`` relabelling's tau.
    """
    from tqdm.auto import tqdm

    names = _check(proxy, real, scenarios, reps, spread)
    proxy, real = _spread(_reorder(proxy, names), spread), _spread(_reorder(real, names), spread)
    tp, tr = population_truth(proxy), population_truth(real)
    S, side_level, a = len(names), math.sqrt(level), 1.0 - level
    rng = np.random.default_rng([int(seed), 31337])
    fixed, fixed_tau = _known(tp, tr, known_tau, rng)
    rec: dict[tuple[str, str], list[tuple]] = {(s, m): [] for s in scenarios for m in METHODS}
    for _ in tqdm(range(int(reps)), desc="proxy coverage", disable=None if show_progress else True, unit="pair"):
        sp, sr = draw_clusters(proxy, rng), draw_clusters(real, rng)
        Mp = _matrix(_forced_signs(sp, names, side_level, n_resamples, rng), S)
        fr = _forced_signs(sr, names, side_level, n_resamples, rng)
        ep, er = population_truth(sp), population_truth(sr)
        boots = [_orders.resampled_estimates(s.matrix(), *s.codes(), s.estimator, int(n_resamples), rng)
                 for s in (sp, sr)]
        for scen in scenarios:
            perm = _permutation(scen, tp, tr, fixed, rng)
            truth = _orders.kendall_tau_b(tp[perm], tr)
            ia, ib = _orders.pair_index(S)
            lo, hi, _ = _orders.compatible_bounds(Mp[np.ix_(perm, perm)][ia, ib], fr, S)
            hat = _orders.kendall_tau_b(ep[perm], er)
            taus = _orders.tau_b_rows(boots[0][perm].T, boots[1].T)
            taus = taus[np.isfinite(taus)]
            blo, bhi = np.quantile(taus, [a / 2, 1 - a / 2]) if len(taus) else (np.nan, np.nan)
            for m, (l, h) in zip(METHODS, ((lo, hi), (blo, bhi))):
                rec[(scen, m)].append((truth, hat, l, h))
    rows = [_row(s, m, np.array(v, dtype=float)) for (s, m), v in rec.items()]
    out = pd.DataFrame(rows, columns=COLUMNS)
    out.attrs.update(level=level, reps=int(reps), spread=float(spread), n_resamples=int(n_resamples), seed=seed,
                     systems=names, known_tau=fixed_tau, proxy_clusters=int(proxy.codes()[1]),
                     real_clusters=int(real.codes()[1]))
    return out


def _reorder(side: Side, names: Sequence[str]) -> Side:
    return Side(side.values[list(names)], side.clusters, side.metric, side.task, side.cluster_name, side.estimator)


def _row(scenario: str, method: str, v: np.ndarray) -> list[Any]:
    """One row of :data:`COLUMNS` from ``(truth, estimate, low, high)`` per replicate (nan truths left out)."""
    v = v[np.isfinite(v[:, 0])]
    n = len(v)
    truth, hat, lo, hi = v.T if n else (np.array([]),) * 4
    ok = np.isfinite(lo) & np.isfinite(hi)
    cover = float(((lo <= truth + 1e-12) & (truth - 1e-12 <= hi) & ok).mean()) if n else float("nan")
    return [scenario, method, n, float(truth.mean()) if n else np.nan, float(np.nanmean(hat)) if n else np.nan,
            cover, math.sqrt(cover * (1 - cover) / n) if n else np.nan, float(np.nanmean(hi - lo)) if n else np.nan,
            float(((lo > 0) | (hi < 0)).mean()) if n else np.nan, float((lo > 0).mean()) if n else np.nan,
            float(((lo <= -1 + 1e-12) & (hi >= 1 - 1e-12)).mean()) if n else np.nan]
