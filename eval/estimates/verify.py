"""Every interval carries its own check: the coverage of its method at this design, measured.

An interval method's nominal level is a claim; whether it holds depends on the design (K documents, how
unequal they are, the metric's spread, whether K of N were drawn without replacement). This module
measures it, for the design at hand, on a population built from the task itself:

census task (no finite population given)
    the population is the task's own documents (their per-query outcomes); a replicate draws K of them
    with replacement (the sampling model of every document-level method), applies the method, and
    covers when the interval contains the population value (micro or macro of the task). This is the
    coverage "in the bootstrap world": the method judged on a population shaped exactly like the data.
sampled task (K documents drawn without replacement from N), the population's sizes not known
    the population twin is the finite-population bootstrap population of Booth, Butler & Hall (1994): each
    sampled document copied ``N / K`` times (the remainder filled by a seeded draw of distinct documents),
    so it has N documents shaped like the sample; a replicate draws K of its N documents without
    replacement and applies the method exactly as ``evaluate`` does for that task (with the correction
    ``1 - K/N`` where the method uses it). When N exceeds 50 K the twin is not built: K of its N documents
    without replacement are then, to within ``K/N``, K draws with replacement from the sampled documents.

what these populations cannot show
    both hold only documents shaped like the ones at hand: they check macro (every document one unit), but
    micro moves with any larger document the data lack. On a sample without the sizes a micro row that passes
    is ``unverifiable`` (``verified_reason``: :data:`UNSEEN_SIZES`; measured with
    ``benchmarks/bench_verified_sampled.py`` / ``bench_verified_grid.py``: on ANEEL samples of 40 and 80 acts,
    rows that twin passed covered the census value 62-89%). On a census it is ``unverifiable`` where the queries
    are concentrated in one document (:func:`.concentration.is_concentrated`: the largest holds more than
    ``0.19 / G^0.3`` of them; :data:`UNEQUAL_SIZES`, which states the design's share and bound). The rule was
    chosen on a grid of superpopulations, not on ragcov's tasks (``benchmarks/bench_verified_criterion.py``,
    ``docs/results/verified-criterion.md``: Pareto cluster sizes of tail exponent 1.2-3, with and without a
    dominant cluster holding 2-25% of the queries, G 20-500, 300 censuses a design): on the 160 designs whose
    risk a census can show, the micro CR2 / CR1 rows it leaves verified cover 0.934 / 0.933 pooled and no
    design's are shown short of 0.93, while rows the check passed on censuses it marks concentrated cover
    0.85 (0.28 in the worst design). It replaces a CV-of-sizes rule (above 0.5) that marked the LGPD exams
    (489 exams, the largest 2.3% of the questions, CV 0.81) although resampled exams cover 0.94 there, and
    that left two grid designs short. What neither sees: a type of document the superpopulation holds and this
    census happens to lack (on grid designs whose dominant cluster is drawn, present in a census as often as
    not, the verified rows of 9 of 128 designs are shown short; of 600 draws of the ANEEL acts, the 26 that lack
    the act holding 18% and look unconcentrated get micro rows verified that cover the acts' value 0.36-0.54,
    where the CV rule marked every draw; no bound of this form separates those draws, statistic 0.126-0.189,
    from the LGPD exams, 0.147).
    A row shown to fall short stays ``not_verified``.

sampled task whose population sizes are known (a ``--sample-docs`` task records every document's size)
    what the sample did not see must widen the check, not vanish: a twin of the *whole* population holds
    the K sampled documents and the N - K unseen ones, their sizes read from the record and their outcomes
    borrowed from sampled documents of similar size (a donor drawn among the nearest half of the sample in
    log size; for an unseen large document, donors spanning the sample's range of rates), :data:`SIZED_TWINS`
    twins each with other donors. A replicate holds exactly the large
    documents (more than :data:`LARGE_SHARE` of the queries) that the sample holds and draws the rest of its
    K without replacement: the coverage is the one *conditional on what the sample drew*. A sample that
    missed a dominant document sees it in every twin, scored differently in each; one that holds it is
    judged holding it. Measured (``benchmarks/bench_verified_sampled.py``): on the ANEEL census, flags on
    a sample computed without the sizes marked CR2 verified on samples whose census coverage was 0.77-0.83.

``verified_coverage`` is the share of replicates whose interval contains the population value (non-finite
intervals do not cover), ``verified_mc_se = sqrt(c (1 - c) / reps)`` its Monte-Carlo SE. Every method of
a design is checked on the same draws and the same count :data:`VERIFY_REPS` (comparable checks: a method
never passes by a noisier check; bootstraps use ``n_resamples`` = :data:`VERIFY_RESAMPLES`, which changes
the noise of an endpoint, not the method). ``verified_status`` is one of :data:`STATUSES`:

* one population (census, or a sample without sizes): ``verified`` when ``coverage + 2 * mc_se >= level``
  (not shown to under-cover), else ``not_verified``;
* twins (sampled with sizes): ``verified`` when the coverage of the worst quarter of the twins is not
  shown to fall short (+ 2 SE >= level), ``not_verified`` when even the best quarter's is shown to fall
  short, else ``unverifiable``: the coverage depends on what the sample did not see, and the row says so
  instead of ``verified``. ``verified_coverage`` is the pooled coverage over every twin.

The boolean ``verified`` is True exactly when the status is ``verified`` (False when ``unverifiable``).
Stratified designs are not verified (``verified`` and ``verified_status`` None; the output says so).

Results are cached on disk, one JSON file per design keyed by the sha256 of its content (cluster sizes and
sums, K, N, level, replicates, seed, code version, the census rule's constants), written atomically; the folder is
``$RAGCOV_VERIFY_CACHE_DIR`` if set, else ``~/.cache/ragcov/verify``.

Reference: Booth, J. G., Butler, R. W. & Hall, P. (1994). Bootstrap methods for finite populations.
JASA 89(428), 1282-1289.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import zlib
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ragcov_data._atomic import atomic_write
from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval.estimates._bounds import clip_table, no_variation_text, value_range
from ragcov_data.eval.estimates.concentration import (CONCENTRATION_C, CONCENTRATION_POWER, concentration_text,
                                                      is_concentrated, plural)
from ragcov_data.eval.estimates.interval import sufficient_stats
from ragcov_data.eval.estimates.results import mark_recommended
from ragcov_data.eval.outcomes.table import ALL_GROUP

__all__ = ["verify_design", "verify_intervals", "design_of", "default_cache_dir", "VERIFY_REPS",
           "VERIFY_RESAMPLES", "VERIFY_FIELDS"]

#: Replicates per verification of an analytic method (Monte-Carlo SE about 0.7 points at 95%).
VERIFY_REPS = 1000
#: Kept for callers of earlier versions: every method now gets :data:`VERIFY_REPS` (comparable checks).
VERIFY_REPS_RESAMPLING = VERIFY_REPS
#: Bootstrap replicates inside each verification replicate of a resampling method.
VERIFY_RESAMPLES = 99
#: Columns added to an estimates table.
VERIFY_FIELDS = ("verified_coverage", "verified_mc_se", "verified", "verified_status")
#: Values of ``verified_status`` (None where no check ran).
STATUSES = ("verified", "not_verified", "unverifiable")
_VERSION = 5
ENV_VAR = "RAGCOV_VERIFY_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$RAGCOV_VERIFY_CACHE_DIR`` if set, else ``~/.cache/ragcov/verify``."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "ragcov" / "verify"


def design_of(values: Any, clusters: Any, *, population: float | None = None, level: float = 0.95,
              seed: int | None = 0, sizes: Any = None, unit: str | None = None) -> dict[str, Any]:
    """The design record of one sample: per-cluster ``n, s, q``, ``population`` (N or None), level, seed,
    where the sample records them ``sizes`` (every population document's number of queries) and, where the
    caller knows it, ``unit``, the cluster's name in the reasons the check writes (None: ``"document"``)."""
    v = np.asarray(values, dtype=float)
    _, n, s, q = sufficient_stats(v, np.asarray(clusters))
    return {"n": n, "s": s, "q": q, "population": None if population is None else float(population),
            "level": float(level), "seed": 0 if seed is None else int(seed),
            "sizes": None if sizes is None else np.asarray(sizes, float), "unit": unit}


def _key(design: Mapping[str, Any], reps: int, B: int) -> str:
    h = hashlib.sha256()
    for name in ("n", "s", "q"):
        h.update(np.ascontiguousarray(np.round(np.asarray(design[name], float), 12)).tobytes())
    if design.get("sizes") is not None:
        h.update(np.ascontiguousarray(np.sort(np.asarray(design["sizes"], float))).tobytes())
    h.update(json.dumps({"population": design.get("population"), "level": design["level"],
                         "seed": design.get("seed", 0), "reps": reps, "B": B, "v": _VERSION,
                         "rule": [CONCENTRATION_C, CONCENTRATION_POWER]},  # never read under another census rule
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


#: Population twins per check of a sampled task whose population sizes are known (see :func:`_simulate_sized`).
SIZED_TWINS = 20
#: Donors of a document the sample did not see: that many sampled documents nearest to it in log size.
SIZED_DONORS = 3
#: ... or that share of the sample, if more: what an unseen document scores is not pinned by its size.
SIZED_DONOR_SHARE = 0.5


def _unseen_sizes(sample_n: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The population's sizes less the sample's own (as a multiset): the sizes of the N - K unseen documents.

    A sampled size absent from ``sizes`` (a population recorded otherwise) removes the nearest size instead;
    documents without queries are left out (no query of theirs can be drawn)."""
    rest = list(np.sort(np.asarray(sizes, float)))
    for x in np.sort(sample_n):
        if not rest:
            break
        i = int(np.argmin(np.abs(np.asarray(rest) - x)))
        rest.pop(i)
    out = np.asarray(rest, float)
    return out[out > 0]


def _sized_twins(n, s, q, sizes, P: int, rng: np.random.Generator):
    """``P`` population twins of a sampled task, each ``(n, s, q)`` of K + U documents.

    The K sampled documents as they are; each of the U unseen documents (sizes from the record, see
    :func:`_unseen_sizes`) takes the per-query rate and mean square of a donor drawn among the
    sampled documents nearest in log size (:data:`SIZED_DONORS`, :data:`SIZED_DONOR_SHARE`), its sums scaled
    to its own size. An unseen *large* document (:func:`large_documents`) has no sampled peer of its size
    and moves the population value by itself: over the twins its donors span the sample's range of document
    rates, lowest to highest. So a document the sample missed, however large, is in every twin, and what it
    scores varies between twins: the check sees what the sample cannot, as a spread over twins, not a gap."""
    xu = _unseen_sizes(n, sizes)
    K, U = len(n), len(xu)
    d = min(max(SIZED_DONORS, int(SIZED_DONOR_SHARE * K)), K)
    near = np.argsort(np.abs(np.log(xu)[:, None] - np.log(n)[None, :]), axis=1, kind="stable")[:, :d]  # (U, d)
    large = large_documents(np.concatenate([n, xu]))[K:]
    rate, sq = s / n, q / n
    # an unseen large document: in twin t the sampled document of rank (t + 1/2) / P in rate, so the twins span
    # the sample's whole range of rates, its extremes included (each large document with its own offset)
    by_rate = np.argsort(rate, kind="stable")
    offset = rng.integers(0, P, int(large.sum()))
    for t in range(P):
        donor = near[np.arange(U), rng.integers(0, d, U)] if U else np.zeros(0, int)
        donor[large] = by_rate[(((t + offset) % P + 0.5) / P * K).astype(int)]
        yield (np.concatenate([n, xu]), np.concatenate([s, rate[donor] * xu]), np.concatenate([q, sq[donor] * xu]))


def _status(per_twin: np.ndarray, R: int, level: float) -> tuple[str, float, float]:
    """Status of one method from its coverage in each twin (``R`` replicates each): ``verified`` when the mean
    coverage of the worst quarter of the twins is not shown to fall short (+ 2 SE >= level), ``not_verified``
    when even the best quarter's is shown to fall short, else ``unverifiable`` (the coverage depends on what
    the sample did not see). Returns the status, the pooled coverage and its Monte-Carlo SE."""
    c = float(per_twin.mean())
    se = math.sqrt(c * (1 - c) / (R * len(per_twin)))
    m = max(1, len(per_twin) // 4)
    srt = np.sort(per_twin)

    def passes(x: float) -> bool:
        return x + 2 * math.sqrt(max(x * (1 - x), 1.0 / (R * m)) / (R * m)) >= level

    if passes(float(srt[:m].mean())):
        return "verified", c, se
    if not passes(float(srt[-m:].mean())):
        return "not_verified", c, se
    return "unverifiable", c, se


#: Kept for callers of earlier versions (the check no longer reads it; :func:`.concentration.is_concentrated`
#: decides): queries per document whose coefficient of variation was at most this counted as "near-equal".
NEAR_EQUAL_CV = 0.5
#: Why a micro row on a sample without the population's sizes is never ``verified`` (``{units}``, ``{unit}``: the
#: cluster's name, plural and singular; ``{record}``: where the sizes come from, for documents; see
#: :func:`unseen_sizes_reason`).
UNSEEN_SIZES_TEMPLATE = ("the sizes of the {units} the sample did not draw are unknown, and one it missed may hold a "
                         "large share of the queries: a check built from the sample cannot see that (on ANEEL samples "
                         "of 40-80 of 147 acts, micro rows such a check passed covered the census value 62-89%); give "
                         "every population {unit}'s size{record} to check micro, or read macro")
#: :data:`UNSEEN_SIZES_TEMPLATE` for documents, the cluster of every task's default (how the check stores it).
UNSEEN_SIZES = UNSEEN_SIZES_TEMPLATE.format(units="documents", unit="document",
                                            record=" (a --sample-docs task records them)")


def unseen_sizes_reason(unit: str | None = None) -> str:
    """:data:`UNSEEN_SIZES_TEMPLATE` for a sample of clusters named ``unit`` (None: ``"document"``, whose sizes a
    ``--sample-docs`` task records; other units' sizes are given by the caller)."""
    if unit in (None, "document"):
        return UNSEEN_SIZES
    return UNSEEN_SIZES_TEMPLATE.format(units=plural(unit), unit=unit, record="")


#: Why a micro row of a census whose queries are concentrated in one document is never ``verified``
#: (``{concentration}``: :func:`.concentration.concentration_text` of the design, ``{units}``: the cluster's name,
#: plural; see :func:`unequal_sizes_reason`).
UNEQUAL_SIZES = ("{concentration}, and a check built from these {units} cannot see the ones like it they lack, "
                 "which would move micro (on a grid of superpopulations, micro rows such a check passed on censuses "
                 "this concentrated covered 0.85, 0.28 in the worst design; on draws of the ANEEL acts, 0.61); "
                 "read macro")


def unequal_sizes_reason(n: Any, unit: str | None = None) -> str:
    """:data:`UNEQUAL_SIZES` for a census whose clusters hold ``n`` queries each, the cluster named ``unit``
    (None: ``"document"``)."""
    unit = unit or "document"
    return UNEQUAL_SIZES.format(concentration=concentration_text(n, unit=unit), units=plural(unit))


def size_cv(n: Any) -> float:
    """Coefficient of variation of the queries per document (0 for fewer than two documents)."""
    x = np.asarray(n, float)
    return float(x.std() / x.mean()) if len(x) > 1 and x.mean() > 0 else 0.0


#: A document holding more than this share of the population's queries is "large": whether a sample holds
#: it moves a micro estimate by more than a sample-only SE can see (ANEEL: one act holds 18% of the queries).
LARGE_SHARE = 0.10


def large_documents(sizes: np.ndarray) -> np.ndarray:
    """Mask of the documents holding more than :data:`LARGE_SHARE` of the queries of ``sizes``."""
    x = np.asarray(sizes, float)
    return x > LARGE_SHARE * x.sum()


def _conditional_draws(rng: np.random.Generator, R: int, K: int, M: int, large: np.ndarray) -> np.ndarray:
    """``(R, K)`` draws from a twin of M documents (the K sampled first) that hold exactly the large documents
    the sample holds: those, plus K - h documents drawn without replacement from the twin's other ones."""
    keep = np.flatnonzero(large[:K])
    pool = np.flatnonzero(~large)
    rest = _draws(rng, R, K - len(keep), len(pool))
    return np.concatenate([np.broadcast_to(keep, (R, len(keep))), pool[rest]], axis=1)


def _simulate_sized(design: Mapping[str, Any], pairs: list[tuple[str, str]], reps: int, B: int) -> dict[str, dict]:
    """Coverage on :data:`SIZED_TWINS` twins of the whole population (:func:`_sized_twins`), ``reps`` replicates
    in all, the same draws for every method (comparable checks). A replicate holds exactly the large
    documents (:func:`large_documents`) the sample holds and draws the rest: the coverage is the one
    conditional on what the sample drew, against the twin's whole population."""
    n, s, q = (np.asarray(design[c], float) for c in ("n", "s", "q"))
    sizes = np.asarray(design["sizes"], float)
    K, level, seed = len(n), float(design["level"]), int(design.get("seed", 0))
    rng = np.random.default_rng([seed, 7919, 1])
    P = SIZED_TWINS
    R = max(1, reps // P)
    twins = list(_sized_twins(n, s, q, sizes, P, rng))
    M = len(twins[0][0])
    large = large_documents(twins[0][0])
    idx = [_conditional_draws(rng, R, K, M, large) for _ in range(P)]
    pop = {"documents": float(len(sizes)), "sizes": sizes}
    out: dict[str, dict] = {}
    for est, m in pairs:
        core_est = "macro" if est == "mean" else est
        if m == "chunk_bootstrap":
            continue  # needs per-query values of documents the sample did not see; left unverified
        cov = np.empty(P)
        for t, (pn, ps, pq) in enumerate(twins):
            truth = ps.sum() / pn.sum() if core_est == "micro" else (ps / pn).mean()
            sub = idx[t]
            # the bootstrap's seed is the method's own: a pair checked alone or with others gets the same number
            r = _kernels.interval_batch(pn[sub], ps[sub], pq[sub], estimator=core_est, method=m, level=level,
                                     n_resamples=B, rng=np.random.default_rng([seed, zlib.crc32(m.encode()), t]),
                                     population=pop)
            lo, hi = r["low"], r["high"]
            cov[t] = np.mean(np.isfinite(lo) & np.isfinite(hi) & (lo <= truth + 1e-12) & (truth - 1e-12 <= hi))
        status, c, se = _status(cov, R, level)
        out[f"{est}/{m}"] = {"verified_coverage": c, "verified_mc_se": se, "verified": status == "verified",
                             "verified_status": status, "reps": R * P, "twins": P,
                             "twin_coverage_quartiles": [float(x) for x in np.quantile(cov, [0.25, 0.5, 0.75])]}
    return out


def _simulate(design: Mapping[str, Any], pairs: list[tuple[str, str]], reps: int, B: int) -> dict[str, dict]:
    if design.get("sizes") is not None and design.get("population") is not None \
            and design["population"] > len(design["n"]):
        return _simulate_sized(design, pairs, reps, B)
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
        if m in _kernels.SIZE_METHODS and (pop or {}).get("sizes") is None:
            continue  # needs the population's sizes: the twin was not built; left unverified
        R = reps  # every method on the same draws and count: no check passes by its noise (mark_recommended)
        mrng = np.random.default_rng([int(design.get("seed", 0)), len(out)])
        t = truth[core_est]
        hits = 0
        for lo_ in range(0, R, step):
            sub = idx[lo_:min(R, lo_ + step)]
            r = _kernels.interval_batch(pn[sub], ps[sub], pq[sub], estimator=core_est, method=m, level=level,
                                     n_resamples=B, rng=mrng, population=pop)
            lo, hi = r["low"], r["high"]
            hits += int((np.isfinite(lo) & np.isfinite(hi) & (lo <= t + 1e-12) & (t - 1e-12 <= hi)).sum())
        c = hits / R
        se = math.sqrt(c * (1 - c) / R)
        ok = bool(c + 2 * se >= level)
        status = "verified" if ok else "not_verified"
        blind = None if core_est != "micro" else UNSEEN_SIZES if M is not None and M > K else \
            unequal_sizes_reason(n) if is_concentrated(n)[0] else None  # worded for the unit on reading
        if blind and status == "verified":  # built from these documents only: it cannot see a larger one
            status, ok = "unverifiable", False
        out[f"{est}/{m}"] = {"verified_coverage": c, "verified_mc_se": se, "verified": ok,
                             "verified_status": status, "reps": R,
                             **({"verified_reason": blind} if blind else {})}
    return out


def verify_design(design: Mapping[str, Any], pairs: list[tuple[str, str]], *, reps: int = VERIFY_REPS,
                  n_resamples: int = VERIFY_RESAMPLES, cache_dir: str | os.PathLike | None = None,
                  use_cache: bool = True) -> dict[str, dict]:
    """Coverage of each ``(estimator, method)`` of ``pairs`` at ``design`` (see the module docstring).

    Returns ``{"estimator/method": {"verified_coverage", "verified_mc_se", "verified", "verified_status",
    "reps"}}`` (twins: also ``twins`` and ``twin_coverage_quartiles``); pairs
    that cannot be verified from cluster sums (``chunk_bootstrap`` on non-binary values) are absent.
    Cached: a design computed once is read back, missing pairs are added to its file.
    """
    B = max(int(n_resamples), _kernels.min_resamples(float(design["level"])))
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
    return {k: _in_words_of(v, design) for k, v in have.items() if tuple(k.split("/")) in set(pairs)}


def _in_words_of(entry: dict, design: Mapping[str, Any]) -> dict:
    """A check's entry with its reason (a census's concentration, a sample's unseen sizes) naming the design's unit:
    the check and its cache entry are the unit's whatever its name (evaluate says "source" where the leaderboard
    says "source summary"), so the entry is stored in a document's words and worded for the unit here."""
    unit = design.get("unit")
    why = entry.get("verified_reason")
    if unit in (None, "document") or not why:
        return entry
    if why == UNSEEN_SIZES:
        return {**entry, "verified_reason": unseen_sizes_reason(unit)}
    if why == unequal_sizes_reason(design["n"]):
        return {**entry, "verified_reason": unequal_sizes_reason(design["n"], unit)}
    return entry


def verify_intervals(table: pd.DataFrame, design: Mapping[str, Any] | None, **kw: Any) -> pd.DataFrame:
    """``table`` (rows estimator x method [x group]) with ``verified_coverage``, ``verified_mc_se``,
    ``verified`` and ``verified_status`` added (``verified`` is True only where the status is ``verified``).

    ``design`` is a :func:`design_of` record, or a mapping group label -> record when ``table`` has a
    ``group`` column; None (e.g. a stratified design) leaves the fields empty (``verified`` None).
    Keyword arguments go to :func:`verify_design`.
    """
    out = table.copy()
    cov = np.full(len(out), np.nan)
    se = np.full(len(out), np.nan)
    ok: list[Any] = [None] * len(out)
    status: list[Any] = [None] * len(out)
    why: list[str] = [""] * len(out)
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
                    status[i] = r.get("verified_status", "verified" if r["verified"] else "not_verified")
                    why[i] = r.get("verified_reason", "")
    out["verified_coverage"] = cov
    out["verified_mc_se"] = se
    out["verified"] = pd.Series(ok, index=out.index, dtype=object)
    out["verified_status"] = pd.Series(status, index=out.index, dtype=object)
    out["verified_reason"] = why
    return out


def verify_for_evaluate(estimates: pd.DataFrame, values: np.ndarray, clusters: np.ndarray, groups: Any,
                        population_sizes: Any, strata: Any, level: float, seed: int | None,
                        unit: str | None = None) -> pd.DataFrame:
    """The evaluator's hook: :func:`verify_intervals` on its estimates table, one design per group (``unit``:
    the cluster's name in the reasons, :func:`design_of`).

    A stratified design or a per-stratum population is not verified (fields left empty).
    """
    if strata is not None or isinstance(population_sizes, Mapping):
        return verify_intervals(estimates, None)
    pop = None if population_sizes is None else float(population_sizes)
    sizes = getattr(population_sizes, "sizes", None)
    if groups is None:
        return verify_intervals(estimates, design_of(values, clusters, population=pop, level=level, seed=seed,
                                                     sizes=sizes, unit=unit))
    designs = {ALL_GROUP: design_of(values, clusters, population=pop, level=level, seed=seed, sizes=sizes,
                                    unit=unit)}
    for g in pd.unique(groups):
        m = groups == g
        designs[str(g)] = design_of(values[m], clusters[m], population=None, level=level, seed=seed, unit=unit)
    return verify_intervals(estimates, designs)


def is_sampled(population_sizes: Any, strata: Any = None) -> bool:
    """A one-stage document sample with its finite population (the design whose micro method order is
    :data:`.results.RECOMMENDED_SAMPLED`)."""
    return population_sizes is not None and strata is None and not isinstance(population_sizes, Mapping)


def finish_estimates(estimates: pd.DataFrame, values: np.ndarray, clusters: np.ndarray, groups: Any,
                     population_sizes: Any, strata: Any, level: float, seed: int | None,
                     unit: str | None = None) -> pd.DataFrame:
    """The evaluator's one hook: verification (:func:`verify_for_evaluate`; ``unit`` names the cluster in its
    reasons), intervals cut to the range of the values (:func:`._bounds.clip_table`) and a ``no_variation``
    text on zero-variance rows."""
    out = verify_for_evaluate(estimates, values, clusters, groups, population_sizes, strata, level, seed, unit)
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
