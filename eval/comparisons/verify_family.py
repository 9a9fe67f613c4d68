"""The check of a family's simultaneous intervals, and of the chunking comparison's difference, at this design.

:mod:`.verify` measures the coverage of one interval method on a population shaped like the data. A
leaderboard prints a *family*: simultaneous intervals for every pair, read together. Its check is the
family-wise error of those intervals at this design, measured on null families built from the
leaderboard's own per-query matrix (:func:`._nullfamily.permute_within_clusters`: in every cluster the
system labels are permuted, so no system is better than another and any interval excluding 0 is a false
positive). Over :data:`FAMILY_REPS` null families, each run through the leaderboard's own family machinery
(:func:`._family.family`) with ``B =`` :data:`FAMILY_RESAMPLES`:

- ``fwer``: the share of null families with at least one simultaneous interval excluding 0, ``mc_se`` its
  Monte-Carlo SE ``sqrt(fwer (1 - fwer) / n_families)``;
- every pair's ``verified_coverage = 1 - fwer`` (the simultaneous coverage under the null),
  ``verified_mc_se = mc_se`` and ``verified = coverage + 2 * mc_se >= level`` (the rule of :mod:`.verify`).

For a micro family whose pairs use the wild-cluster hull (:data:`.leaderboard.PAIR_TEST`) the null families
run that hull itself up to :data:`EXACT_MAX_PAIRS` pairs (6 systems; a macro family always runs itself: it is
no hull, and its bootstrap is cheap); a larger micro family's null families run the same hull without inverting
its wild cluster tests (``family(..., intervals=False)``: the decisions read from the hull's adjusted p-value,
which the printed interval agrees with; half the time at 190 pairs). Both are the printed procedure:
``family_check["upper_bound"]`` is false (up to version 3 the larger families ran the CR2 part of the hull alone,
whose family-wise error only bounds the hull's).

Per-system intervals get :func:`.verify.verify_design` of their (estimator, method) at their design, the
check ``evaluate`` prints for its recommended row.

The chunking comparison's differences (two chunkings' hit rates paired by document,
:func:`.chunkings.compare_chunkings`) are checked by :func:`verify_chunking_differences`: the shared
documents drawn with replacement (the census design of :mod:`.verify`), each method applied as
``compare_chunkings`` applies it, covering when its interval holds the documents' own difference.

Results are cached on disk as :mod:`.verify`'s are (same folder, :func:`.verify.default_cache_dir`; one JSON
file per design keyed by the sha256 of its content; written atomically), so a warm leaderboard pays nothing.
Cost cold on the ANEEL task (2,312 queries, 147 documents): about 20 s for 20 systems, 5 s for 5 systems;
warm: 0.04 s.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ragcov_data.eval.estimates.marks import mark
from ragcov_data.eval.estimates.verify import VERIFY_FIELDS, VERIFY_REPS, VERIFY_REPS_RESAMPLING, VERIFY_RESAMPLES, default_cache_dir

__all__ = ["family_check", "check_leaderboard", "check_family_rows", "check_notices", "verify_chunking_differences",
           "FAMILY_REPS", "FAMILY_RESAMPLES"]

#: Null families per family check (Monte-Carlo SE about 1.5 points at a 5% family-wise error).
FAMILY_REPS = 200
#: Bootstrap replicates of each null family's simultaneous intervals.
FAMILY_RESAMPLES = 499
#: Largest family (pairs) whose null families invert the leaderboard's wild-cluster tests; larger ones read the same
#: hull's decisions from its adjusted p-value (no interval needed for a family-wise error).
EXACT_MAX_PAIRS = 15
_VERSION = 4  # 2: macro families are the hull with the studentized max-|t| family; 3: the guarded Hall family;
# 4: every family runs the printed procedure (a large micro hull without inverting its wild tests)


def _cached(kind: str, parts: Sequence[Any], meta: Mapping[str, Any], compute: Callable[[], dict],
            cache_dir: str | os.PathLike | None, use_cache: bool) -> dict:
    """``compute()`` read from / written to the verification cache under the sha256 of ``parts`` + ``meta``."""
    from ragcov_data._atomic import atomic_write

    h = hashlib.sha256(kind.encode())
    for a in parts:
        h.update(np.ascontiguousarray(np.round(np.asarray(a, float), 12)).tobytes())
        h.update(b"|")
    h.update(json.dumps({**meta, "v": _VERSION}, sort_keys=True, default=str).encode())
    f = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / f"{kind}-{h.hexdigest()}.json"
    if use_cache and f.is_file():
        try:
            return json.loads(f.read_text())
        except (OSError, ValueError):
            pass
    out = compute()
    if use_cache:
        try:
            atomic_write(f, json.dumps(out, sort_keys=True))
        except OSError:  # a read-only cache costs speed, not results
            pass
    return out


def _verdict(coverage: float, se: float, level: float) -> dict[str, Any]:
    ok = bool(coverage + 2 * se >= level)
    return {"verified_coverage": float(coverage), "verified_mc_se": float(se), "verified": ok,
            "verified_status": "verified" if ok else "not_verified"}


# ------------------------------------------------------------------------------------------ family
def family_check(V: Any, clusters: Any, *, estimator: str = "micro", level: float = 0.95, seed: int | None = 0,
                 n_families: int = FAMILY_REPS, n_resamples: int = FAMILY_RESAMPLES, pair_test: str | None = None,
                 cache_dir: str | os.PathLike | None = None, use_cache: bool = True) -> dict[str, Any]:
    """Family-wise error of the leaderboard's simultaneous intervals on null families of ``V`` (S x N).

    ``pair_test`` is the family's micro pair test (:func:`._family.family`; default: the leaderboard's,
    :data:`.leaderboard.PAIR_TEST`), so the null families run exactly the procedure the leaderboard prints.
    Returns ``fwer``, ``mc_se``, ``n_families``, ``n_resamples`` and the pair check
    ``verified_coverage = 1 - fwer``, ``verified_mc_se``, ``verified`` (see the module docstring); with
    fewer than 2 systems or 2 clusters, None fields (nothing to check).
    """
    from ragcov_data.eval.comparisons._family import family
    from ragcov_data.eval.comparisons._nullfamily import permute_within_clusters

    if pair_test is None:
        from ragcov_data.eval.comparisons._family import LEADERBOARD_PAIR_TEST as pair_test
    V = np.asarray(V, dtype=float)
    codes, labels = pd.factorize(pd.Series(np.asarray(clusters)), sort=False)
    K = len(labels)
    if V.ndim != 2 or V.shape[0] < 2 or K < 2:
        return {"fwer": None, "mc_se": None, "n_families": 0, "n_resamples": int(n_resamples),
                "verified_coverage": None, "verified_mc_se": None, "verified": None, "verified_status": None}
    # beyond EXACT_MAX_PAIRS a micro hull's null families skip inverting its wild tests (the decisions are its
    # adjusted p-value's); a macro family (or one-query clusters) is no hull and always runs itself
    n_pairs = V.shape[0] * (V.shape[0] - 1) // 2
    macro = estimator == "macro" or bool((np.bincount(codes, minlength=K) == 1).all())
    invert = pair_test == "cr2" or n_pairs <= EXACT_MAX_PAIRS or macro
    alpha = 1.0 - level

    def compute() -> dict[str, Any]:
        rng = np.random.default_rng([0 if seed is None else int(seed), 104729])
        hits = 0
        for _ in range(int(n_families)):
            Vp = permute_within_clusters(V, codes, K, rng)
            pr = family(Vp, codes, K, estimator=estimator, level=level, n_resamples=int(n_resamples), rng=rng,
                        pair_test=pair_test, intervals=invert)["pairs"]
            excl = (pr["low"] > 0) | (pr["high"] < 0) if invert else pr["p_hull"] < alpha
            hits += bool(excl.any())
        fwer = hits / int(n_families)
        se = math.sqrt(fwer * (1 - fwer) / int(n_families))
        return {"fwer": fwer, "mc_se": se, "n_families": int(n_families), "n_resamples": int(n_resamples),
                "pair_test": pair_test, "upper_bound": False, **_verdict(1 - fwer, se, level)}

    meta = {"estimator": estimator, "level": float(level), "seed": seed, "families": int(n_families),
            "B": int(n_resamples), "S": int(V.shape[0]), "pair_test": pair_test}
    return _cached("family", [V, codes], meta, compute, cache_dir, use_cache)


def check_family_rows(systems: pd.DataFrame, pairs: pd.DataFrame, V: np.ndarray, clusters: np.ndarray,
                      names: Sequence[str], parts: Sequence[tuple[str, np.ndarray]], *, estimator: str,
                      level: float, seed: int | None, population_sizes: Any = None, unit: str | None = None,
                      **kw: Any) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict]]:
    """``systems`` and ``pairs`` with the three check fields, and each group's ``family_check``.

    ``V`` (S x N) holds the per-query values in ``names`` order, ``parts`` the ``(group label, query
    mask)`` of each family. A system row's check is :func:`.verify.verify_design` of its (estimator,
    method) at its design (with the sample's finite population, as its interval); a pair row's is its
    group's :func:`family_check`. ``unit`` names the cluster in the check's reasons.
    """
    from ragcov_data.eval.estimates.verify import design_of, verify_design

    systems, pairs = systems.copy(), pairs.copy()
    for t in (systems, pairs):
        t["verified_coverage"] = np.nan
        t["verified_mc_se"] = np.nan
        t["verified"] = pd.Series([None] * len(t), index=t.index, dtype=object)
        t["verified_status"] = pd.Series([None] * len(t), index=t.index, dtype=object)
    systems["verified_reason"] = ""  # why the check cannot vouch, as it wrote it (an unverifiable row)
    pop = None if population_sizes is None or isinstance(population_sizes, Mapping) else float(population_sizes)
    sizes = getattr(population_sizes, "sizes", None)  # a document sample's record: the check of .verify with twins
    idx = {n: i for i, n in enumerate(names)}
    checks: dict[str, dict] = {}
    for label, mask in parts:
        Vg, cg = V[:, mask], np.asarray(clusters)[mask]
        if len(pd.unique(pd.Series(cg))) >= 2:
            gpop = pop if label == parts[0][0] else None
            gsizes = sizes if label == parts[0][0] else None
            for i in np.flatnonzero((systems["group"] == label).to_numpy()):
                r = systems.iloc[i]
                est, m = str(r["estimator"]), str(r["method"])
                res = verify_design(design_of(Vg[idx[r["name"]]], cg, population=gpop, level=level, seed=seed,
                                              sizes=gsizes, unit=unit), [(est, m)]).get(f"{est}/{m}")
                if res is not None:
                    for k in (*VERIFY_FIELDS, "verified_reason"):
                        systems.iat[i, systems.columns.get_loc(k)] = res.get(k, "" if k == "verified_reason" else None)
        fc = family_check(Vg, cg, estimator=estimator, level=level, seed=seed, **kw)
        checks[label] = {k: fc.get(k) for k in ("fwer", "mc_se", "n_families", "n_resamples", "pair_test",
                                                "upper_bound")}
        rows = np.flatnonzero((pairs["group"] == label).to_numpy())
        for k in VERIFY_FIELDS:
            for i in rows:
                pairs.iat[i, pairs.columns.get_loc(k)] = fc.get(k)
    systems["mark"] = [mark(r) for r in systems.to_dict(orient="records")]  # the mark every output prints
    return systems, pairs, checks


def check_leaderboard(systems: pd.DataFrame, pairs: pd.DataFrame, group_info: dict[str, dict], V: np.ndarray,
                      clusters: np.ndarray, names: Sequence[str], parts: Sequence[tuple[str, np.ndarray]], *,
                      estimator: str, level: float, seed: int | None = 0, population_sizes: Any = None,
                      notices: list[str] | None = None, unit: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The leaderboard's hook: :func:`check_family_rows`, each group's ``family_check`` written into
    ``group_info[label]`` (so the JSON's ``groups`` carry it); ``unit`` names the cluster in the reasons.

    The check's seed is its own (default 0, as ``evaluate``'s default): the check is a property of the
    design, so the leaderboard's bootstrap seed moves its bootstrap numbers only."""
    systems, pairs, checks = check_family_rows(systems, pairs, V, clusters, names, parts, estimator=estimator,
                                               level=level, seed=seed, population_sizes=population_sizes, unit=unit)
    for label, c in checks.items():
        group_info.setdefault(label, {})["family_check"] = c
    if notices is not None:
        notices.extend(check_notices(systems, checks, level))
    return systems, pairs


def _fwer_verdict(fwer: float, ok: bool, level: float) -> str:
    """The closing words of a family check, from the estimate and its Monte Carlo error: at or below nominal is
    fine; above nominal but within the error is not called fine (it is not shown to exceed nominal either)."""
    if not ok:
        return (" — NOT VERIFIED: the pairs' verdicts may be false positives; read a separation whose "
                "interval barely excludes 0 as not separable.")
    if fwer <= 1 - level:
        return "; the pairs' verdicts hold at the stated family-wise level, nothing to do."
    return ("; above nominal, but within the check's Monte Carlo error, so not shown to exceed it: read a "
            "separation whose interval barely excludes 0 with care.")


def check_notices(systems: pd.DataFrame, checks: Mapping[str, Mapping[str, Any]], level: float) -> list[str]:
    """One line per group on what its family check found (the leaderboard prints its notices in every format):
    the family-wise error measured. The per-system checks are said by each row's mark and the footnotes under
    its table (:mod:`ragcov_data.eval.estimates.marks`), in every format."""
    out = []
    said = False  # how the check works is said once, on its first line; the groups' lines give their numbers
    for label, c in checks.items():
        where = "" if label == "__all__" else f" (group {label})"
        if c.get("fwer") is not None:
            ok = (1 - c["fwer"]) + 2 * c["mc_se"] >= level
            how = ("" if said else f"on {c['n_families']} simulated null families of this design (no true "
                   f"difference; B = {c['n_resamples']} bootstrap resamples each) ")
            said = True
            out.append(f"family check{where}: {how}the simultaneous intervals separated some pair "
                       f"{c['fwer']:.1%} ± {2 * c['mc_se']:.1%} of the time (nominal at most {1 - level:.0%})"
                       + _fwer_verdict(c["fwer"], ok, level))
    return out


# ------------------------------------------------------------------------------------------ chunkings
def _chunking_intervals(na, sa, nb, sb, method: str, level: float, B: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Intervals (R,) of ``compare_chunkings``'s ``method`` on R samples of K documents (arrays (R, K))."""
    R, K = na.shape
    crit = stats.t.ppf(0.5 + level / 2, K - 1)
    if method == "t":  # macro: mean of per-document differences, t on K - 1 df
        d = sa / na - sb / nb
        m, se = d.mean(1), d.std(1, ddof=1) / math.sqrt(K)
        return m - crit * se, m + crit * se
    Na, Nb = na.sum(1, keepdims=True), nb.sum(1, keepdims=True)
    ma, mb = sa.sum(1, keepdims=True) / Na, sb.sum(1, keepdims=True) / Nb
    est = (ma - mb)[:, 0]
    if method == "linearised_t":
        u = (sa - ma * na) / Na - (sb - mb * nb) / Nb
        se = np.sqrt(K / (K - 1) * (u ** 2).sum(1))
        return est - crit * se, est + crit * se
    lo, hi = np.empty(R), np.empty(R)  # cluster_bootstrap: percentile of documents resampled
    for r in range(R):
        c = rng.multinomial(K, np.full(K, 1.0 / K), size=B).astype(float)
        reps = c @ sa[r] / (c @ na[r]) - c @ sb[r] / (c @ nb[r])
        lo[r], hi[r] = np.quantile(reps, [0.5 - level / 2, 0.5 + level / 2])
    return lo, hi


def verify_chunking_differences(na: Any, sa: Any, nb: Any, sb: Any, methods: Sequence[tuple[str, str]], *,
                                level: float = 0.95, seed: int | None = 0,
                                cache_dir: str | os.PathLike | None = None,
                                use_cache: bool = True) -> dict[str, dict]:
    """Coverage of each ``(estimator, method)`` of the chunking difference at this design.

    The population is the K shared documents (per-document query counts and hits under each chunking);
    a replicate draws K of them with replacement and applies the method as ``compare_chunkings`` does;
    it covers when the interval holds the population's difference (macro: mean of rate differences;
    micro: difference of pooled rates). Analytic methods get :data:`.verify.VERIFY_REPS` replicates, the
    bootstrap :data:`.verify.VERIFY_REPS_RESAMPLING` with B = :data:`.verify.VERIFY_RESAMPLES`.
    Returns ``{"estimator/method": {verified_coverage, verified_mc_se, verified, reps}}``.
    """
    arrs = [np.asarray(x, float) for x in (na, sa, nb, sb)]
    K = len(arrs[0])
    if K < 2:
        return {}

    def compute() -> dict[str, dict]:
        rng = np.random.default_rng([0 if seed is None else int(seed), 7919])
        idx = rng.integers(0, K, size=(VERIFY_REPS, K))
        a_n, a_s, b_n, b_s = arrs
        truth = {"macro": float((a_s / a_n - b_s / b_n).mean()), "micro": float(a_s.sum() / a_n.sum() - b_s.sum() / b_n.sum())}
        out = {}
        for est, m in methods:
            R = VERIFY_REPS if m != "cluster_bootstrap" else VERIFY_REPS_RESAMPLING
            sub = idx[:R]
            lo, hi = _chunking_intervals(a_n[sub], a_s[sub], b_n[sub], b_s[sub], m, level, VERIFY_RESAMPLES, rng)
            t = truth[est]
            cover = np.isfinite(lo) & np.isfinite(hi) & (lo <= t + 1e-12) & (t - 1e-12 <= hi)
            c = float(cover.mean())
            out[f"{est}/{m}"] = {**_verdict(c, math.sqrt(c * (1 - c) / R), level), "reps": R}
        return out

    meta = {"level": float(level), "seed": seed, "methods": sorted(f"{e}/{m}" for e, m in methods),
            "reps": VERIFY_REPS, "B": VERIFY_RESAMPLES}
    return _cached("chunkings", arrs, meta, compute, cache_dir, use_cache)
