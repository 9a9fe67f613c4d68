"""Every interval carries its own check: the coverage of its method at this design, measured.

An interval method's nominal level is a claim; whether it holds depends on the design (K documents, how
unequal they are, the metric's spread, whether K of N were drawn without replacement). This module
measures it, for the design at hand, on a population built from the task itself:

census task (no finite population given)
    the population is the task's own documents (their per-query outcomes); a replicate draws K of them
    with replacement (the sampling model of every document-level method), applies the method, and
    covers when the interval contains the population value (micro or macro of the task). This is the
    coverage "in the bootstrap world": the method judged on a population shaped exactly like the data.
sampled task (K documents drawn without replacement from N)
    the population twin is the finite-population bootstrap population of Booth, Butler & Hall (1994): each
    sampled document copied ``N / K`` times (the remainder filled by a seeded draw of distinct documents),
    so it has N documents shaped like the sample; a replicate draws K of its N documents without
    replacement and applies the method exactly as ``evaluate`` does for that task (with the correction
    ``1 - K/N`` where the method uses it). When N exceeds 50 K the twin is not built: K of its N documents
    without replacement are then, to within ``K/N``, K draws with replacement from the sampled documents.

``verified_coverage`` is the share of ``reps`` replicates whose interval contains the population value
(non-finite intervals do not cover), ``verified_mc_se = sqrt(c (1 - c) / reps)`` its Monte-Carlo SE,
and ``verified`` is ``coverage + 2 * mc_se >= level`` (the method is not shown to under-cover; the rule of
``recommend`` with a 2-SE margin). Analytic methods get :data:`VERIFY_REPS` replicates; resampling methods
:data:`VERIFY_REPS_RESAMPLING`, each with ``n_resamples`` = :data:`VERIFY_RESAMPLES` (B changes the
Monte-Carlo noise of an endpoint, not the method; the budget keeps a cold ``evaluate`` within seconds).
Stratified designs are not verified (``verified`` is None; the output says so).

Results are cached on disk, one JSON file per design keyed by the sha256 of its content (cluster sizes and
sums, K, N, level, replicates, seed, code version), written atomically; the folder is
``$RAGCOV_VERIFY_CACHE_DIR`` if set, else ``~/.cache/ragcov/verify``.

Reference: Booth, J. G., Butler, R. W. & Hall, P. (1994). Bootstrap methods for finite populations.
JASA 89(428), 1282-1289.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ragcov_data.eval.estimates import _core

__all__ = ["verify_design", "verify_intervals", "design_of", "default_cache_dir", "VERIFY_REPS",
           "VERIFY_RESAMPLES", "VERIFY_FIELDS"]

#: Replicates per verification of an analytic method (Monte-Carlo SE about 0.7 points at 95%).
VERIFY_REPS = 1000
#: Replicates per verification of a resampling method (each costs a bootstrap; MC SE about 1.1 points).
VERIFY_REPS_RESAMPLING = 400
#: Bootstrap replicates inside each verification replicate of a resampling method.
VERIFY_RESAMPLES = 99
#: Columns added to an estimates table.
VERIFY_FIELDS = ("verified_coverage", "verified_mc_se", "verified")
_VERSION = 1
ENV_VAR = "RAGCOV_VERIFY_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$RAGCOV_VERIFY_CACHE_DIR`` if set, else ``~/.cache/ragcov/verify``."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "ragcov" / "verify"


def design_of(values: Any, clusters: Any, *, population: float | None = None, level: float = 0.95,
              seed: int | None = 0) -> dict[str, Any]:
    """The design record of one sample: per-cluster ``n, s, q``, ``population`` (N or None), level, seed."""
    from ragcov_data.eval.estimates.interval import sufficient_stats

    v = np.asarray(values, dtype=float)
    _, n, s, q = sufficient_stats(v, np.asarray(clusters))
    return {"n": n, "s": s, "q": q, "population": None if population is None else float(population),
            "level": float(level), "seed": 0 if seed is None else int(seed)}


def _key(design: Mapping[str, Any], reps: int, B: int) -> str:
    h = hashlib.sha256()
    for name in ("n", "s", "q"):
        h.update(np.ascontiguousarray(np.round(np.asarray(design[name], float), 12)).tobytes())
    h.update(json.dumps({"population": design.get("population"), "level": design["level"],
                         "seed": design.get("seed", 0), "reps": reps, "B": B, "v": _VERSION},
                        sort_keys=True).encode())
    return h.hexdigest()


def _twin_population(n, s, q, N: int, rng: np.random.Generator):
    """Booth-Butler-Hall population: each of the K documents copied N // K times, plus N mod K distinct ones."""
    K = len(n)
    reps = np.full(K, N // K)
    reps[rng.choice(K, N % K, replace=False)] += 1
    idx = np.repeat(np.arange(K), reps)
    return n[idx], s[idx], q[idx]


#: Above this many times K documents, the population twin is not built (see :func:`_simulate`).
_TWIN_MAX_RATIO = 50
#: Bound on replicates x documents held at once (memory: a few arrays of this many floats).
_BLOCK = 1 << 21


def _draws(rng: np.random.Generator, R: int, K: int, M: int | None) -> np.ndarray:
    """``(R, K)`` document indices: K of M without replacement (M given), else K of K with replacement."""
    if M is None:
        return rng.integers(0, K, size=(R, K))
    if K <= M // 4:  # few of many: rejection-free partial shuffle by sorting random keys of a chunk
        return np.argsort(rng.random((R, M)), axis=1)[:, :K] if R * M <= _BLOCK else np.stack(
            [rng.choice(M, K, replace=False) for _ in range(R)])
    return np.stack([rng.permutation(M)[:K] for _ in range(R)]) if R * M > _BLOCK else \
        np.argsort(rng.random((R, M)), axis=1)[:, :K]


def _simulate(design: Mapping[str, Any], pairs: list[tuple[str, str]], reps: int, B: int) -> dict[str, dict]:
    n, s, q = (np.asarray(design[c], float) for c in ("n", "s", "q"))
    K, level = len(n), float(design["level"])
    M = design.get("population")
    rng = np.random.default_rng([int(design.get("seed", 0)), 7919])
    if M is not None and M > _TWIN_MAX_RATIO * K:
        # a population this much larger than the sample: drawing K of its N documents without replacement
        # is drawing with replacement from the twin's K distinct documents (the twin is never built)
        pn, ps, pq = n, s, q
        idx = _draws(rng, reps, K, None)
        pop = {"documents": float(M)}
    elif M is not None and M > K:
        Mi = int(round(M))
        pn, ps, pq = _twin_population(n, s, q, Mi, rng)
        idx = _draws(rng, reps, K, Mi)  # K of N without replacement
        pop = {"documents": float(Mi), "sizes": pn}  # the twin's own documents' sizes (known_sizes)
    else:
        pn, ps, pq = n, s, q
        idx = _draws(rng, reps, K, None)
        pop = None
    truth = {"micro": ps.sum() / pn.sum(), "macro": (ps / pn).mean()}
    step = max(1, _BLOCK // max(K, 1))  # replicates per block: bounded memory on large designs
    out = {}
    for est, m in pairs:
        core_est = "macro" if est == "mean" else est
        if m == "chunk_bootstrap" and not np.allclose(pq, ps):
            continue  # needs per-query values; left unverified
        if m in _core.SIZE_METHODS and (pop or {}).get("sizes") is None:
            continue  # needs the population's sizes: the twin was not built; left unverified
        R = reps if _core.METHODS[m]["kind"] == "analytic" else min(reps, VERIFY_REPS_RESAMPLING)
        mrng = np.random.default_rng([int(design.get("seed", 0)), len(out)])
        t = truth[core_est]
        hits = 0
        for lo_ in range(0, R, step):
            sub = idx[lo_:min(R, lo_ + step)]
            r = _core.interval_batch(pn[sub], ps[sub], pq[sub], estimator=core_est, method=m, level=level,
                                     n_resamples=B, rng=mrng, population=pop)
            lo, hi = r["low"], r["high"]
            hits += int((np.isfinite(lo) & np.isfinite(hi) & (lo <= t + 1e-12) & (t - 1e-12 <= hi)).sum())
        c = hits / R
        se = math.sqrt(c * (1 - c) / R)
        out[f"{est}/{m}"] = {"verified_coverage": c, "verified_mc_se": se, "verified": bool(c + 2 * se >= level),
                             "reps": R}
    return out


def verify_design(design: Mapping[str, Any], pairs: list[tuple[str, str]], *, reps: int = VERIFY_REPS,
                  n_resamples: int = VERIFY_RESAMPLES, cache_dir: str | os.PathLike | None = None,
                  use_cache: bool = True) -> dict[str, dict]:
    """Coverage of each ``(estimator, method)`` of ``pairs`` at ``design`` (see the module docstring).

    Returns ``{"estimator/method": {"verified_coverage", "verified_mc_se", "verified", "reps"}}``; pairs
    that cannot be verified from cluster sums (``chunk_bootstrap`` on non-binary values) are absent.
    Cached: a design computed once is read back, missing pairs are added to its file.
    """
    from ragcov_data._atomic import atomic_write

    B = max(int(n_resamples), _core.min_resamples(float(design["level"])))
    path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    f = path / f"{_key(design, reps, B)}.json"
    have: dict[str, dict] = {}
    if use_cache and f.is_file():
        try:
            have = json.loads(f.read_text())
        except (OSError, ValueError):
            have = {}
    todo = [p for p in pairs if f"{p[0]}/{p[1]}" not in have]
    if todo:
        have.update(_simulate(design, todo, reps, B))
        if use_cache:
            try:
                atomic_write(f, json.dumps(have, sort_keys=True))
            except OSError:  # a read-only cache folder costs speed, not results
                pass
    return {k: v for k, v in have.items() if tuple(k.split("/")) in set(pairs)}


def verify_intervals(table: pd.DataFrame, design: Mapping[str, Any] | None, **kw: Any) -> pd.DataFrame:
    """``table`` (rows estimator x method [x group]) with ``verified_coverage``, ``verified_mc_se`` and
    ``verified`` added.

    ``design`` is a :func:`design_of` record, or a mapping group label -> record when ``table`` has a
    ``group`` column; None (e.g. a stratified design) leaves the fields empty (``verified`` None).
    Keyword arguments go to :func:`verify_design`.
    """
    out = table.copy()
    cov = np.full(len(out), np.nan)
    se = np.full(len(out), np.nan)
    ok: list[Any] = [None] * len(out)
    if design is not None and len(out):
        grouped = "group" in out.columns and "n" not in design
        keys = out["group"] if grouped else pd.Series([None] * len(out), index=out.index)
        for g in pd.unique(keys):
            d = design.get(g) if grouped else design
            if d is None or len(d["n"]) < 2:
                continue
            pos = np.flatnonzero((keys == g).to_numpy() if grouped else np.ones(len(out), bool))
            pairs = sorted({(out["estimator"].iloc[i], out["method"].iloc[i]) for i in pos})
            res = verify_design(d, pairs, **kw)
            for i in pos:
                r = res.get(f"{out['estimator'].iloc[i]}/{out['method'].iloc[i]}")
                if r is not None:
                    cov[i], se[i], ok[i] = r["verified_coverage"], r["verified_mc_se"], r["verified"]
    out["verified_coverage"] = cov
    out["verified_mc_se"] = se
    out["verified"] = pd.Series(ok, index=out.index, dtype=object)
    return out


def verify_for_evaluate(estimates: pd.DataFrame, values: np.ndarray, clusters: np.ndarray, groups: Any,
                        population_sizes: Any, strata: Any, level: float, seed: int | None) -> pd.DataFrame:
    """The evaluator's hook: :func:`verify_intervals` on its estimates table, one design per group.

    A stratified design or a per-stratum population is not verified (fields left empty).
    """
    if strata is not None or isinstance(population_sizes, Mapping):
        return verify_intervals(estimates, None)
    pop = None if population_sizes is None else float(population_sizes)
    if groups is None:
        return verify_intervals(estimates, design_of(values, clusters, population=pop, level=level, seed=seed))
    from ragcov_data.eval.outcomes.table import ALL_GROUP

    designs = {ALL_GROUP: design_of(values, clusters, population=pop, level=level, seed=seed)}
    for g in pd.unique(groups):
        m = groups == g
        designs[str(g)] = design_of(values[m], clusters[m], population=None, level=level, seed=seed)
    return verify_intervals(estimates, designs)


def is_sampled(population_sizes: Any, strata: Any = None) -> bool:
    """A one-stage document sample with its finite population (the design whose micro method order is
    :data:`.results.RECOMMENDED_SAMPLED`)."""
    return population_sizes is not None and strata is None and not isinstance(population_sizes, Mapping)


def finish_estimates(estimates: pd.DataFrame, values: np.ndarray, clusters: np.ndarray, groups: Any,
                     population_sizes: Any, strata: Any, level: float, seed: int | None) -> pd.DataFrame:
    """The evaluator's one hook: verification (:func:`verify_for_evaluate`), intervals cut to the range of
    the values (:func:`._bounds.clip_table`) and a ``no_variation`` text on zero-variance rows."""
    from ragcov_data.eval.estimates._bounds import clip_table, no_variation_text, value_range
    from ragcov_data.eval.estimates.results import mark_recommended

    out = verify_for_evaluate(estimates, values, clusters, groups, population_sizes, strata, level, seed)
    out = mark_recommended(out, sampled=is_sampled(population_sizes, strata))
    out = clip_table(out, value_range(values))
    if "flags" in out.columns:
        zero = out["flags"].str.contains("zero_variance", regex=False)
        texts = []
        for i, z in zip(out.index, zero):
            if not z:
                texts.append("")
                continue
            g = out.at[i, "group"] if "group" in out.columns else None
            v = values if groups is None or g is None or g == "__all__" else values[groups == g]
            texts.append(no_variation_text(v))
        out["no_variation"] = texts
    return out
