"""Coverage study: how often does a 95% interval contain the population value?

With a whole population's outcomes known (a census run, or the :mod:`twin <ragcov_data.eval.planning.twin>`), the study
repeats what an evaluator does in practice — sample K documents, build an interval — ``reps`` times and counts
how often the interval contains the truth. Every interval comes from the evaluator's own statistical core
(:func:`ragcov_data.eval.estimates._kernels.interval_batch`), vectorised over replicates, so the study measures exactly the
code that :func:`ragcov_data.eval.evaluate` runs.
"""
from __future__ import annotations

import zlib
from collections import Counter
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.estimates import _kernels as _stat_core
from ragcov_data.eval.estimates._kernels import ESTIMATORS

__all__ = ["coverage_study", "population_counts", "DESIGNS"]

#: Sampling designs understood by :func:`coverage_study`.
DESIGNS = ("srs", "two-stage")
#: Methods that resample documents (their draws are shared within a K to save time).
_DOC_BOOTSTRAPS = ("cluster_bootstrap", "bootstrap_t")
#: Largest shared count array (int8 elements, R x K x B) kept in memory (~400 MB).
_SHARED_COUNTS_MAX = 400_000_000
COLUMNS = ["estimator", "method", "k", "coverage", "mc_margin", "mean_width", "median_width", "degenerate_share"]


# --------------------------------------------------------------------------------------------------
# The statistical core (one implementation, shared with `interval` / `evaluate`)
# --------------------------------------------------------------------------------------------------
def _core():
    """The evaluator's statistical core module (the one every interval here comes from)."""
    return _stat_core


#: Core flags that make a replicate's interval degenerate (no usable interval or a collapsed one).
DEGENERATE_FLAGS = ("k_lt_2", "zero_variance", "boot_t_unstable")


def _call_core(core, n, s, q, *, estimator, method, level, n_resamples, rng, extra) -> dict[str, np.ndarray]:
    res = core.interval_batch(n, s, q, estimator=estimator, method=method, level=level,
                              n_resamples=n_resamples, rng=rng, **extra)
    return {key: np.asarray(res[key]) for key in ("estimate", "low", "high", "flags")}


def _call_stratified(core, n, s, q, idx, extra, **kw) -> dict[str, np.ndarray]:
    """Two-stage calls, grouped by the highest type code drawn.

    The core reads per-type population sizes as an array over the codes present (``0..max code``), so
    replicates are grouped by their highest code and each group gets the matching slice of sizes.
    """
    strata, popsizes = extra["strata"], extra["population"]
    top = strata.max(axis=1)
    out: dict[str, np.ndarray] = {}
    for h in np.unique(top):
        rows = np.flatnonzero(top == h)
        sub = {"strata": strata[rows],
               "population": {"documents": popsizes["documents"][: h + 1], "strata": popsizes["strata"]}}
        r = _call_core(core, n[idx[rows]], s[idx[rows]], q[idx[rows]], n_resamples=1, rng=None, extra=sub, **kw)
        for key, v in r.items():
            if key not in out:
                out[key] = np.empty(len(idx), dtype=v.dtype)
            out[key][rows] = v
    return out


# --------------------------------------------------------------------------------------------------
# Populations
# --------------------------------------------------------------------------------------------------
def population_counts(population: Any) -> pd.DataFrame:
    """Per-document sufficient statistics of a population.

    Parameters
    ----------
    population : DataFrame or EvaluationResult
        Either a per-query outcome table (``query-id``, ``doc_id``, ``value`` [, ``doc_type``]), per-document
        counts (``doc_id``, ``n``, ``hits`` [, ``doc_type``]; ``hits`` may be fractional, then ``q`` =
        sum of squared values may be given), or an object with a ``per_query`` table of the first kind
        (an :class:`~ragcov_data.eval.EvaluationResult`, whose ``cluster`` column is taken as ``doc_id``).

    Returns
    -------
    pandas.DataFrame
        One row per document: ``doc_id``, ``n``, ``s`` (sum of values), ``q`` (sum of squared values) and
        ``doc_type`` (``"all"`` when absent), ordered by ``doc_id``.
    """
    if hasattr(population, "per_query") and not isinstance(population, pd.DataFrame):
        population = population.per_query
        if callable(population):
            population = population()
        if isinstance(population, pd.DataFrame) and "cluster" in population.columns and "doc_id" not in population:
            population = population.rename(columns={"cluster": "doc_id"})  # evaluate's cluster is the document
    if not isinstance(population, pd.DataFrame):
        raise RagcovError(
            f"`population` must be a DataFrame or an EvaluationResult; got {type(population).__name__}. "
            "Pass a per-query table (query-id, doc_id, value) or per-document counts (doc_id, n, hits)."
        )
    if population.empty:
        raise RagcovError("`population` is empty; pass the per-query outcomes of a full run (the census).")
    cols = set(population.columns)
    if {"doc_id", "n", "hits"} <= cols:
        df = population
        n = df["n"].to_numpy(float)
        s = df["hits"].to_numpy(float)
        bad = np.flatnonzero(~np.isfinite(n) | ~np.isfinite(s) | (n < 1) | (s < 0) | (s > n))
        if bad.size:
            i = bad[0]
            raise RagcovError(
                f"`population` row {i} (doc_id {df['doc_id'].iloc[i]!r}) has n={n[i]}, hits={s[i]}; every "
                "document needs n >= 1 and 0 <= hits <= n."
            )
        q = df["q"].to_numpy(float) if "q" in cols else s.copy()
        if "q" not in cols and not np.allclose(s, np.round(s)):
            raise RagcovError(
                "`population` has fractional `hits` but no `q` (sum of squared values per document); add `q` "
                "or pass the per-query table instead."
            )
        out = pd.DataFrame({"doc_id": df["doc_id"].astype(str).to_numpy(), "n": n, "s": s, "q": q,
                            "doc_type": df["doc_type"].astype(str).to_numpy() if "doc_type" in cols else "all"})
        if out["doc_id"].duplicated().any():
            dup = out.loc[out["doc_id"].duplicated(), "doc_id"].iloc[0]
            raise RagcovError(f"`population` lists document {dup!r} twice; give one row per document.")
        return out.sort_values("doc_id", kind="stable").reset_index(drop=True)
    if {"doc_id", "value"} <= cols:
        v = population["value"].to_numpy(float)
        bad = np.flatnonzero(~np.isfinite(v))
        if bad.size:
            raise RagcovError(
                f"`population` row {bad[0]} has value {v[bad[0]]!r}; every per-query value must be a finite number."
            )
        df = pd.DataFrame({"doc_id": population["doc_id"].astype(str).to_numpy(), "v": v})
        if "doc_type" in cols:
            df["doc_type"] = population["doc_type"].astype(str).to_numpy()
        g = df.groupby("doc_id", sort=True)
        out = pd.DataFrame({"n": g.size().astype(float), "s": g["v"].sum(), "q": g["v"].apply(lambda x: float(np.sum(x**2)))})
        out["doc_type"] = g["doc_type"].first() if "doc_type" in df else "all"
        if "doc_type" in df and (g["doc_type"].nunique() > 1).any():
            d = (g["doc_type"].nunique() > 1).idxmax()
            raise RagcovError(f"`population` gives document {d!r} more than one doc_type; a document has one type.")
        return out.reset_index()
    raise RagcovError(
        f"`population` lacks the columns of either accepted layout; found {sorted(cols)}. Pass a per-query table "
        "with (query-id, doc_id, value) or per-document counts with (doc_id, n, hits)."
    )


def _eligible(pop: pd.DataFrame, design: str, k: int, n_types: int) -> pd.DataFrame:
    """The documents a design can draw: for two-stage, those of types with at least K / n_types documents."""
    if design == "srs":
        return pop
    counts = pop["doc_type"].map(pop["doc_type"].value_counts())
    return pop[counts >= k // n_types]


def _truth(pop: pd.DataFrame, estimator: str, design: str) -> float:
    n, s = pop["n"].to_numpy(), pop["s"].to_numpy()
    if design == "srs":
        return float(s.sum() / n.sum()) if estimator == "micro" else float(np.mean(s / n))
    g = pop.assign(r=s / n).groupby("doc_type")
    per_type = (g["s"].sum() / g["n"].sum()) if estimator == "micro" else g["r"].mean()
    return float(per_type.mean())


# --------------------------------------------------------------------------------------------------
# Sampling designs
# --------------------------------------------------------------------------------------------------
def _srs(rng: np.random.Generator, n_units: int, k: int, reps: int, block: int = 1000) -> np.ndarray:
    """(reps, k) indices: each row a simple random sample of k of n_units, without replacement."""
    out = np.empty((reps, k), dtype=np.int64)
    for a in range(0, reps, block):
        b = min(reps, a + block)
        u = rng.random((b - a, n_units))
        out[a:b] = np.argpartition(u, k - 1, axis=1)[:, :k] if k < n_units else np.argsort(u, axis=1)
    return out


def _two_stage(rng, pop: pd.DataFrame, n_types: int, per_type: int, reps: int):
    """Two-stage samples over the eligible types (those with at least ``per_type`` documents).

    Returns ``idx`` (R, K) document indices grouped by type, ``strata`` (R, K) type codes among the eligible
    types, and the core's ``population`` mapping (documents per type code, number of eligible types) for
    both finite-population corrections.
    """
    sizes = pop["doc_type"].value_counts()
    eligible = sorted(sizes.index[sizes >= per_type])
    members = [np.flatnonzero(pop["doc_type"].to_numpy() == t) for t in eligible]
    T = len(eligible)
    idx = np.empty((reps, n_types * per_type), dtype=np.int64)
    chosen = np.sort(_srs(rng, T, n_types, reps), axis=1)
    for j in range(n_types):
        cols = slice(j * per_type, (j + 1) * per_type)
        for t in range(T):
            rows = np.flatnonzero(chosen[:, j] == t)
            if rows.size:
                idx[rows, cols] = members[t][_srs(rng, len(members[t]), per_type, rows.size)]
    strata = np.repeat(chosen, per_type, axis=1)
    population = {"documents": np.array([len(m) for m in members], dtype=float), "strata": T}
    return idx, strata, population


# --------------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------------
def coverage_study(population: Any, k: int | Sequence[int] = 20, reps: int = 5000,
                   methods: str | Sequence[str] | None = None, estimators: str | Sequence[str] = ESTIMATORS,
                   design: str = "srs", level: float = 0.95, seed: int = 0, n_resamples: int = 999,
                   show_progress: bool = False, n_types: int = 6, fpc: bool = False) -> pd.DataFrame:
    """Monte-Carlo coverage of every interval method when K documents are sampled from a known population.

    Parameters
    ----------
    population : DataFrame or EvaluationResult
        The census: per-query outcomes (``query-id``, ``doc_id``, ``value`` [, ``doc_type``]) or per-document
        counts (``doc_id``, ``n``, ``hits`` [, ``doc_type``]); see :func:`population_counts`.
    k : int or sequence of int, default: 20
        Documents per sample; a list (e.g. ``[5, 10, 20, 40, 80]``) runs every size in one call.
    reps : int, default: 5000
        Replicates (samples) per K. The Monte-Carlo margin of a coverage ``c`` is ``1.96·sqrt(c(1−c)/reps)``.
    methods : str or sequence of str, optional
        Interval methods (the evaluator's names). Default: every method the core offers for each estimator.
        A method that does not apply to an estimator is skipped for it.
    estimators : str or sequence of str, default: ("micro", "macro")
        ``micro`` (chunk-weighted ratio) and/or ``macro`` (mean of per-document rates).
    design : {"srs", "two-stage"}, default: "srs"
        ``srs``: K documents without replacement. ``two-stage``: ``n_types`` document types without
        replacement, then ``K / n_types`` documents without replacement inside each; the target is then the
        mean over types (of type micro or of type macro), and intervals use the core's two-stage variance
        with both finite-population corrections.
    level : float, default: 0.95
        Nominal coverage of each interval.
    seed : int, default: 0
        Seed: the same call gives the same table. Samples are shared by all methods (common random numbers).
    n_resamples : int, default: 999
        Bootstrap resamples per replicate for resampling methods (at least ``ceil(2 / (1 - level)) - 1``).
    show_progress : bool, default: False
        Show a tqdm bar over (K, estimator, method).
    n_types : int, default: 6
        Types drawn at the first stage of the two-stage design.
    fpc : bool, default: False
        SRS only: apply the finite-population correction ``1 − K/D`` to the analytic document-level
        methods (as ``evaluate`` does when told the population size). Off by default, as in a typical
        evaluation that does not know its population; the two-stage design always applies both corrections.

    Returns
    -------
    pandas.DataFrame
        One row per estimator × method × K with columns ``estimator``, ``method``, ``k``, ``coverage``,
        ``mc_margin``, ``mean_width``, ``median_width``, ``degenerate_share``. ``attrs`` holds ``truth``
        (estimator → population value), ``design``, ``seed``, ``reps``, ``level``, ``n_docs``, ``n_resamples``
        and ``fpc`` (whether the finite-population correction was applied; always for two-stage).

    Raises
    ------
    RagcovError
        Unknown method / estimator / design, K not smaller than the population (a sample that is the census
        always "covers") or smaller than 2, too few bootstrap replicates for ``level``
        (:func:`ragcov_data.eval.estimates._kernels.min_resamples`), or a population in neither accepted layout.

    Notes
    -----
    A replicate covers when ``low <= truth <= high``. Replicates whose interval is not finite count as not
    covering, and as degenerate; the core's flags (e.g. zero variance, all-equal outcomes) also count as
    degenerate. Widths are averaged over finite intervals.

    Examples
    --------
    >>> from ragcov_data.eval.planning.twin import simulate_population
    >>> table = coverage_study(simulate_population(), k=20, reps=500, methods=["wald_iid"],
    ...                        estimators="micro", show_progress=False)  # doctest: +SKIP
    """
    pop = population_counts(population)
    ks, methods_req, ests, n_resamples = _coverage_iv(pop, k, reps, methods, estimators, design, level, n_resamples,
                                                      n_types)
    core = _core()
    plan = _plan(core, ks, ests, methods_req, design)
    truth = {(kk, est): _truth(_eligible(pop, design, kk, n_types), est, design) for kk in ks for est in ests}
    rows = _run_plan(core, pop, plan, truth, reps=reps, design=design, level=level, seed=seed,
                     n_resamples=n_resamples, show_progress=show_progress, n_types=n_types, fpc=fpc)
    return _table(rows, truth, ks, ests, design=design, seed=seed, reps=reps, level=level, n_docs=len(pop),
                  n_resamples=n_resamples, n_types=n_types, fpc=fpc)


def _table(rows: list[dict], truth: dict[tuple[int, str], float], ks: list[int], ests: list[str], *, design: str,
           seed: int, reps: int, level: float, n_docs: int, n_resamples: int, n_types: int, fpc: bool
           ) -> pd.DataFrame:
    """The study's table with its settings and the truth in ``attrs``."""
    table = pd.DataFrame(rows, columns=COLUMNS)
    truth_by_est = {est: truth[(ks[0], est)] for est in ests}
    table.attrs.update(truth=truth_by_est, truth_by_k={f"{kk}/{est}": v for (kk, est), v in truth.items()},
                       design=design, seed=seed, reps=reps, level=level, n_docs=n_docs,
                       n_resamples=n_resamples, n_types=n_types if design == "two-stage" else None,
                       fpc=bool(fpc) if design == "srs" else True)
    return table


def _plan(core, ks: list[int], ests: list[str], methods_req: list[str] | None, design: str
          ) -> list[tuple[int, str, str]]:
    """Every (K, estimator, method) the study runs, in order; an error when no requested method applies."""
    plan = [(kk, est, m) for kk in ks for est in ests for m in _methods(core, est, methods_req, design)]
    if not plan:
        raise RagcovError(f"none of the methods {methods_req} applies to estimators {list(ests)}.")
    return plan


def _draw_samples(pop: pd.DataFrame, kk: int, *, design: str, reps: int, seed: int, n_types: int, fpc: bool
                  ) -> tuple[np.ndarray, dict[str, Any]]:
    """The ``reps`` samples of K documents (seeded by K alone, shared by every method) and the design
    arguments of the core."""
    srng = np.random.default_rng([seed, kk, 0])
    if design == "srs":
        return _srs(srng, len(pop), kk, reps), ({"population": {"documents": len(pop)}} if fpc else {})
    idx, strata, popsizes = _two_stage(srng, pop, n_types, kk // n_types, reps)
    return idx, {"strata": strata, "population": popsizes}


def _run_plan(core, pop: pd.DataFrame, plan: list[tuple[int, str, str]], truth: dict[tuple[int, str], float], *,
              reps: int, design: str, level: float, seed: int, n_resamples: int, show_progress: bool,
              n_types: int, fpc: bool) -> list[dict]:
    """One summary row per (K, estimator, method): its intervals on the shared samples against the truth."""
    from tqdm.auto import tqdm

    n_arr, s_arr, q_arr = (pop[c].to_numpy(float) for c in ("n", "s", "q"))
    degenerate_bits = sum(core.FLAGS[f] for f in DEGENERATE_FLAGS)
    rows = []
    samples: dict[int, Any] = {}
    boot_counts: dict[int, np.ndarray] = {}
    n_doc_boot = Counter(kk for kk, _, m in plan if m in _DOC_BOOTSTRAPS)  # document bootstraps per K
    bar = tqdm(plan, desc="coverage", disable=None if show_progress else True, unit="method")  # terminal only
    for kk, est, m in bar:
        bar.set_postfix_str(f"K={kk} {est} {m}")
        if kk not in samples:
            samples[kk] = _draw_samples(pop, kk, design=design, reps=reps, seed=seed, n_types=n_types, fpc=fpc)
        idx, extra = samples[kk]
        mrng = np.random.default_rng([seed, kk, zlib.crc32(f"{est}/{m}".encode())])
        if m in _DOC_BOOTSTRAPS and "strata" not in extra and kk <= 127:
            # one set of document-resampling counts per K, shared by every document bootstrap
            if n_doc_boot[kk] > 1 and reps * kk * n_resamples <= _SHARED_COUNTS_MAX:
                if kk not in boot_counts:
                    boot_counts.clear()
                    boot_counts[kk] = core.bootstrap_counts(reps, kk, n_resamples, np.random.default_rng([seed, kk, 1]))
                extra = {**extra, "boot_counts": boot_counts[kk]}
        if "strata" in extra:
            res = _call_stratified(core, n_arr, s_arr, q_arr, idx, extra, estimator=est, method=m, level=level)
        else:
            res = _call_core(core, n_arr[idx], s_arr[idx], q_arr[idx], estimator=est, method=m, level=level,
                             n_resamples=n_resamples, rng=mrng, extra=extra)
        rows.append(_summarise(res, truth[(kk, est)], est, m, kk, reps, degenerate_bits))
    return rows


def _summarise(res: dict[str, np.ndarray], truth: float, est: str, method: str, k: int, reps: int,
               degenerate_bits: int) -> dict:
    low, high = res["low"].astype(float), res["high"].astype(float)
    finite = np.isfinite(low) & np.isfinite(high)
    covered = finite & (low <= truth + 1e-12) & (truth - 1e-12 <= high)
    c = float(covered.mean())
    width = (high - low)[finite]
    degenerate = ~finite | ((res["flags"].astype(np.int64) & degenerate_bits) != 0)
    return {
        "estimator": est,
        "method": method,
        "k": int(k),
        "coverage": c,
        "mc_margin": float(1.96 * np.sqrt(c * (1 - c) / reps)),
        "mean_width": float(width.mean()) if width.size else float("nan"),
        "median_width": float(np.median(width)) if width.size else float("nan"),
        "degenerate_share": float(degenerate.mean()),
    }


def _methods(core, est: str, requested: list[str] | None, design: str) -> list[str]:
    avail = list(core.valid_methods(est, stratified=design == "two-stage"))
    if requested is None:
        return avail
    return [m for m in requested if m in avail]


def _as_list(x, name: str) -> list:
    if isinstance(x, (str, int, np.integer)):
        return [x]
    if isinstance(x, Iterable):
        out = list(x)
        if not out:
            raise RagcovError(f"`{name}` is empty; pass at least one value.")
        return out
    raise RagcovError(f"`{name}` must be a value or a list of values; got {x!r}.")


def _coverage_iv(pop, k, reps, methods, estimators, design, level, n_resamples, n_types):
    import difflib

    D = len(pop)
    if design not in DESIGNS:
        raise RagcovError(f"`design` must be one of {list(DESIGNS)}; got {design!r}.")
    ests = _as_list(estimators, "estimators")
    for e in ests:
        if e not in ESTIMATORS:
            raise RagcovError(f"`estimators` must be drawn from {list(ESTIMATORS)}; got {e!r}.")
    ks = _as_list(k, "k")
    for kk in ks:
        if not isinstance(kk, (int, np.integer)) or isinstance(kk, bool) or kk < 2:
            raise RagcovError(f"`k` must be an integer >= 2 (documents per sample); got {kk!r}.")
        if kk > D:
            raise RagcovError(
                f"`k`={kk} is larger than the population ({D} documents); pick K < {D}."
            )
        if kk == D and design == "srs":
            raise RagcovError(
                f"`k`={kk} equals the population ({D} documents): every sample would be the census itself, "
                "so every estimate equals the truth and coverage says nothing about the methods (with the "
                f"finite-population correction the variance would be exactly 0). Pick K < {D}."
            )
    if not isinstance(reps, (int, np.integer)) or reps < 10:
        raise RagcovError(f"`reps` must be an integer >= 10; got {reps!r}.")
    _core().check_level(level, float_only=True)
    known = list(_core().METHODS)
    n_resamples = _core().check_resamples(n_resamples, level, methods, stratified=design == "two-stage")
    req = None
    if methods is not None:
        req = _as_list(methods, "methods")
        for m in req:
            if m not in known:
                close = difflib.get_close_matches(str(m), known, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise RagcovError(f"`methods` must be drawn from {known}; got {m!r}.{hint}")
    if design == "two-stage":
        types = pop["doc_type"].value_counts()
        for kk in ks:
            if kk % n_types:
                raise RagcovError(
                    f"two-stage `k`={kk} is not a multiple of `n_types`={n_types}; pass K = n_types × documents "
                    f"per type (e.g. {n_types * max(1, kk // n_types)})."
                )
            eligible = int((types >= kk // n_types).sum())
            if eligible < n_types:
                raise RagcovError(
                    f"two-stage design needs {n_types} types with at least {kk // n_types} documents each; the "
                    f"population has {eligible}. Lower `n_types` or `k`."
                )
            if eligible == n_types and (types[types >= kk // n_types] == kk // n_types).all():
                raise RagcovError(
                    f"two-stage `k`={kk} draws all {n_types} eligible types and every document of each "
                    f"({kk // n_types}): every sample would be the census itself, so coverage says nothing. "
                    "Lower `k` (fewer documents per type) or `n_types`."
                )
    return [int(x) for x in ks], req, ests, n_resamples
