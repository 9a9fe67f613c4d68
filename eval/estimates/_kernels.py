"""Vectorised statistical core: one implementation of every interval method.

Everything here works on *cluster-level sufficient statistics* of a batch of ``R`` samples of ``K``
clusters (documents): ``n`` (queries per document), ``s`` (sum of per-query values), ``q`` (sum of
squared values), each of shape ``(R, K)``. A single sample is ``R = 1``. Results are arrays of shape
``(R,)``. There is no Python loop per sample or per bootstrap replicate: bootstraps draw integer
resampling counts of shape ``(R, K, B)`` (chunked over ``R`` to bound memory) and reduce them with
batched matrix products.

Public-within-package API (stable; used by :func:`ragcov_data.eval.interval` and
:func:`ragcov_data.eval.coverage_study`)::

    interval_batch(n, s, q, *, estimator, method, level=0.95, n_resamples=999, rng=None,
                   strata=None, population=None, value_counts=None, boot_counts=None)
        -> dict(estimate, se, df, low, high, flags)     # arrays of shape (R,); flags is an int bitmask
    applicable(estimator, method) -> bool
    METHODS                  # {method: {"estimators": (...), "naive": bool, "kind": str, "doc": str}}
    ESTIMATORS               # ("micro", "macro")
    bootstrap_counts(R, K, n_resamples, rng) -> int8 array (R, K, B)   # share draws across methods
    decode_flags(bitmask) -> tuple[str, ...]
    min_resamples(level) -> int                      # fewest bootstrap replicates for a level
    check_resamples(n_resamples, level, methods=None, stratified=False)   # the one validator of B

Estimators
----------
micro
    ``sum(s) / sum(n)``: every query weighs the same (a ratio estimator over documents).
macro
    ``mean(s / n)``: every document weighs the same.

Methods (``SE`` formulas; ``u_j = s_j - ybar * n_j``, ``N = sum n_j``, ``f_j = n_j / N``)
----------------------------------------------------------------------------------------
wald_iid (micro, naive)
    ``se^2 = (Q/N - ybar^2) / N`` (queries as independent draws; ``p(1-p)/N`` for 0/1 values),
    normal quantile, df = inf.
chunk_bootstrap (micro, naive)
    percentile bootstrap resampling the ``N`` queries with replacement, ignoring documents. Exact and
    fast by drawing the replicate total: ``Binomial(N, ybar)`` for 0/1 values, a multinomial over the
    distinct values otherwise (``value_counts`` required). ``se`` = sd of replicates; df = nan.
cluster_bootstrap (micro, macro)
    percentile bootstrap resampling ``K`` documents with replacement, each carrying all its queries;
    every replicate recomputes the chosen estimator. df = nan.
bootstrap_t (micro, macro)
    studentized bootstrap by document. Replicate ``b`` gives ``t_b = (est_b - est) / se_b`` and the
    interval is ``[est - t_(1-a/2) se, est - t_(a/2) se]``. The SE used in the sample and in every
    replicate is, for micro, the ratio-estimator linearisation SE with CR1 scaling
    ``se^2 = K/(K-1) * sum u_j^2 / N^2`` (equal to ``cr1``) and, for macro, ``sd(p_d) / sqrt(K)``.
    Replicates with zero SE (e.g. every drawn document has the same rate) have no defined ``t_b``:
    they are dropped from the ``t`` quantiles and the result carries flag ``zero_se_replicates``
    (``boot_t_unstable`` when more than half were dropped).
cr1 (micro, macro)
    ``se^2 = K/(K-1) * sum u_j^2 / N^2``, t on ``K-1`` df (statsmodels ``cov_type="cluster"``
    convention: for an intercept-only model its factor ``G/(G-1) * (N-1)/(N-p)`` is ``K/(K-1)``).
cr2 (micro, macro)
    Bell–McCaffrey bias-reduced linearisation with Satterthwaite df, as R clubSandwich
    ``coef_test(vcov = "CR2", test = "Satterthwaite")`` on an intercept-only ``lm``. For micro
    (one row per query, clustered by document) the hat matrix is ``J/N``, so
    ``(I - H_jj)^(-1/2)`` scales each cluster's residual sum by ``(1 - f_j)^(-1/2)``:
    ``se^2 = sum u_j^2 / (1 - f_j) / N^2``. Satterthwaite df under the working model
    ``Phi = I`` (Pustejovsky & Tipton 2018, eq. 11) has the closed form
    ``df = 1 / (sum f_j^2 + (sum t_j)^2 - sum t_j^2)`` with ``t_j = f_j^2 / (1 - f_j)``
    (``= K - 1`` for equal sizes; it lies in ``[1, K - 1]`` and tends to 1 as one document
    dominates, so ``df_lt_1`` cannot occur here, only in user-supplied designs). For macro the model is the cluster-level regression
    ``p_d ~ 1`` (one row per document); then CR2 = CR1 = the ``t`` method exactly.
deff_wald (micro)
    Wald with the effective size ``N_eff = N / DEFF``, ``DEFF = 1 + ((CV^2 + 1) mbar - 1) ICC``
    (``(CV^2+1) mbar = sum n_j^2 / N``; CV with ddof = 0), ICC from one-way ANOVA (negative ICC is
    truncated at 0 and flagged). ``se^2 = (Q/N - ybar^2) / N_eff``, normal quantile, df = inf.
t (macro; and any estimator under a stratified design)
    ``mean(p_d) +- t(K-1) sd(p_d) / sqrt(K)``.
wild_cluster (micro, macro)
    wild cluster restricted bootstrap (WCR; Rademacher weights, Webb six-point for ``K <= 12``;
    ``B = n_resamples``, all ``2^K`` sign vectors when ``2^K <= B``) of the intercept-only regression
    (micro: one row per query; macro: one row per document), interval by inverting its test
    (:mod:`ragcov_data.eval.estimates._wild`). ``se`` is CR1's, df = nan. Unlike the ``t`` reference of
    ``cr2``, the test keeps its size when a few documents hold most queries (MacKinnon & Webb 2017):
    on null pairs of the ANEEL census (two systems exchanged within documents) the micro CR2 test
    rejects 8%, the WCR 5.3% +- 0.2 at 5%. It is a test-based interval: its coverage when the
    estimate's sampling distribution is bimodal (one dominant document in or out of the sample) is no
    better than CR2's; that is measured per design (:mod:`ragcov_data.eval.estimates.verify`).

Bootstrap replicates
--------------------
A bootstrap interval at ``level`` reads the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of
``B`` replicates (percentile: of the estimates; bootstrap-t: of the studentized ``t_b``). Each tail
must hold at least one replicate, i.e. ``(B + 1) (1 - level) / 2 >= 1``
(the order-statistic rule of Davison & Hinkley 1997, ch. 5, which is why 999 is the usual B at
95%): ``B >= ceil(2 / (1 - level)) - 1`` = 39 at 95%, 19 at 90%, 199 at 99%
(:func:`min_resamples`). Fewer replicates give intervals made of a handful of order statistics (B = 1
is a zero-width interval at one replicate, which need not contain the estimate), so
:func:`check_resamples` refuses them; every entry point (``interval``, ``evaluate``, ``compare``,
``coverage_study``, ``plan``, ``recommend``) calls it. The minimum is a floor, not a recommendation:
endpoints settle at B of a few thousand.

Few documents
-------------
Flag ``few_clusters`` marks intervals whose reference distribution does not account for a small
number of documents: the document bootstraps (``cluster_bootstrap``, ``bootstrap_t``; with K
documents there are only ``C(2K-1, K)`` distinct resamples, 3 at K = 2, and the percentile bootstrap
variance is biased by ``(K-1)/K``, so it under-covers at small K) and ``deff_wald`` (a normal
quantile whatever K is), when ``K <`` :data:`FEW_CLUSTERS` (10). At K = 2 the cluster bootstrap can
be an order of magnitude narrower than CR2. The t-referenced methods (``cr1``, ``cr2``, ``t``) carry
the small-sample penalty in their df (``K - 1`` or Satterthwaite) and are not flagged; naive methods
are flagged ``naive`` already.

Designs
-------
Simple random sample of documents (default). ``population={"documents": M}`` applies the finite
population correction ``1 - K/M`` to the variance of the analytic macro methods (``t``, ``cr1``, ``cr2``
on the document means). It is not applied, and the row is flagged ``fpc_ignored``, for the micro (ratio)
estimator — measured drawing K of the 147 ANEEL census documents without replacement, micro CR2 with the
correction covered 88%, 86%, 79% and 81% at K = 20, 40, 80, 120 against 90%, 90%, 94% and 96% without it
(``benchmarks/bench_coverage_sampled.py``): with very unequal documents the linearised SE is already too
short, and shrinking it makes it worse, while the macro t with the correction holds (94-96%) — nor for
wald/deff (they model queries) or the bootstraps.

Known document sizes (``known_sizes``, micro only; ``population={"documents": M, "sizes": x}`` with ``x``
the number of queries of each of the M population documents, sampled or not). A document sample of a
task whose corpus is whole knows every document's size; the ratio estimator's linearised variance
``S2_E / (K xbar^2)`` is estimated with the residual variance modelled as ``sigma^2 x_j^2``:
``sigma^2 = sum_s u_d^2 / sum_s n_d^2`` (``u_d = s_d - est n_d``) from the sample and
``S2_E = sigma^2 sum_U x_j^2 / (M - 1)``, ``xbar`` = the mean of ``x`` over the population
(model-assisted; Sarndal, Swensson & Wretman 1992, ch. 7; Royall & Cumberland 1981), t on K - 1 df.
Sample-only estimators (CR2, the bootstraps) cannot see a dominant document the sample missed; this one
reads it in ``x``. No finite-population correction (flagged ``fpc_ignored``): with it the interval
under-covered at K = 120 of 147. Measured on the ANEEL census drawn without replacement
(``benchmarks/bench_coverage_sampled.py``, three chunkings): 93-99% at K = 40, 98-100% at K = 80 and 120.

Two-stage / stratified (``strata`` = integer stratum code of each document, shape ``(R, K)``):
the target is the mean over strata of per-stratum estimates ``theta_h`` (micro or macro within the
stratum), only method ``t`` applies. With ``H`` strata sampled, ``k_h`` documents in stratum ``h``,
``f1 = H / H_pop`` and ``f2h = k_h / M_h`` (0 when the population size is not given),
``s_b^2`` the sample variance of the ``theta_h`` and ``s_h^2`` the within-stratum variance of the
document scores ``z_d`` (``p_d`` for macro; the ratio linearisation ``(s_d - theta_h n_d) / nbar_h`` for
micro), Cochran's unbiased two-stage estimator (Cochran 1977, ch. 10-11) is
``v = (1 - f1) s_b^2 / H + f1 / H^2 * sum_h (1 - f2h) s_h^2 / k_h``
with Welch–Satterthwaite df from the components (``H-1`` and ``k_h-1`` df). ``H_pop`` equal to ``H``
is a stratified design (all strata observed); ``H_pop`` unknown treats strata as drawn from a large
population (``v = s_b^2 / H``, df ``H - 1``).

References
----------
Bell, R. M. & McCaffrey, D. F. (2002). Bias reduction in standard errors for linear regression with
multi-stage samples. Survey Methodology 28(2), 169-181.
Pustejovsky, J. E. & Tipton, E. (2018). Small-sample methods for cluster-robust variance estimation
and hypothesis testing in fixed effects models. J. Business & Economic Statistics 36(4), 672-683.
Cochran, W. G. (1977). Sampling Techniques, 3rd ed. Wiley. Ch. 10-11 (two-stage sampling).
Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their Application. Cambridge
University Press. Ch. 5 (choice of B for percentile and studentized intervals).
Eldridge, S. M., Ashby, D. & Kerry, S. (2006). Sample size for cluster randomized trials: effect of
coefficient of variation of cluster size and analysis method. Int. J. Epidemiology 35, 1292-1300.
"""
from __future__ import annotations

from typing import Any, Mapping

import math

import numpy as np
from scipy import stats

from ragcov_data.errors import RagcovError
from ragcov_data.eval.estimates._wild import wild_interval, wild_weights

__all__ = [
    "ESTIMATORS",
    "METHODS",
    "FLAGS",
    "applicable",
    "valid_methods",
    "interval_batch",
    "bootstrap_counts",
    "decode_flags",
    "min_resamples",
    "check_resamples",
    "check_level",
    "FEW_CLUSTERS",
    "SIZE_METHODS",
    "anova_icc",
    "cr2_df",
]

ESTIMATORS = ("micro", "macro")

METHODS: dict[str, dict[str, Any]] = {
    "wald_iid": {"estimators": ("micro",), "naive": True, "kind": "analytic",
                 "doc": "queries treated as independent (naive contrast)"},
    "chunk_bootstrap": {"estimators": ("micro",), "naive": True, "kind": "bootstrap",
                        "doc": "percentile bootstrap of queries (naive contrast)"},
    "cluster_bootstrap": {"estimators": ("micro", "macro"), "naive": False, "kind": "bootstrap",
                          "doc": "percentile bootstrap of documents"},
    "bootstrap_t": {"estimators": ("micro", "macro"), "naive": False, "kind": "bootstrap",
                    "doc": "studentized bootstrap of documents"},
    "cr2": {"estimators": ("micro", "macro"), "naive": False, "kind": "analytic",
            "doc": "Bell-McCaffrey CR2 with Satterthwaite df"},
    "cr1": {"estimators": ("micro", "macro"), "naive": False, "kind": "analytic",
            "doc": "cluster-robust CR1 with t on K-1 df"},
    "deff_wald": {"estimators": ("micro",), "naive": False, "kind": "analytic",
                  "doc": "Wald with effective size N/DEFF (ANOVA ICC)"},
    "t": {"estimators": ("macro",), "naive": False, "kind": "analytic",
          "doc": "t on K-1 df over document rates"},
    "wild_cluster": {"estimators": ("micro", "macro"), "naive": False, "kind": "wild",
                     "doc": "wild cluster restricted bootstrap (test inversion)"},
    "known_sizes": {"estimators": ("micro",), "naive": False, "kind": "analytic", "needs_sizes": True,
                    "doc": "ratio variance with the population's document sizes (document-sampled tasks)"},
}

#: Methods that need every population document's size (``population["sizes"]``): a document-sampled task.
SIZE_METHODS = tuple(m for m, spec in METHODS.items() if spec.get("needs_sizes"))

#: Methods available under a stratified / two-stage design (both estimators).
STRATIFIED_METHODS = ("t",)

#: Flag bits of the ``flags`` output, by name.
FLAGS: dict[str, int] = {
    "naive": 1,                 # method ignores the document clustering
    "k_lt_2": 2,                # fewer than two documents (or strata): no interval, NaN values
    "zero_variance": 4,         # SE is 0: the interval collapses to the estimate
    "df_lt_1": 8,               # Satterthwaite df below 1: interval very wide and unreliable
    "zero_se_replicates": 16,   # bootstrap-t replicates with zero SE were dropped
    "boot_t_unstable": 32,      # more than half the bootstrap-t replicates were dropped
    "negative_icc": 64,         # ANOVA ICC < 0, truncated at 0 for DEFF
    "singleton_stratum": 128,   # a stratum with one document: its within variance is taken as 0
    "fpc_ignored": 256,         # a finite population correction was given but the method ignores it
    "few_clusters": 512,        # K < FEW_CLUSTERS for a method whose reference ignores K (see module doc)
}

#: Below this many documents, bootstraps and ``deff_wald`` are flagged ``few_clusters``.
FEW_CLUSTERS = 10
#: Methods flagged ``few_clusters`` at small K: no small-sample (df) correction in their reference.
_FEW_CLUSTER_METHODS = ("cluster_bootstrap", "bootstrap_t", "deff_wald")

_CHUNK_ELEMENTS = 1 << 23  # bound on R_chunk * K * B elements per bootstrap chunk


def valid_methods(estimator: str, stratified: bool = False, sizes: bool = False) -> tuple[str, ...]:
    """Methods that apply to ``estimator`` (under a stratified design only :data:`STRATIFIED_METHODS`;
    :data:`SIZE_METHODS` only when every population document's size is known, ``sizes=True``)."""
    if stratified:
        return STRATIFIED_METHODS
    return tuple(m for m, spec in METHODS.items()
                 if estimator in spec["estimators"] and (sizes or not spec.get("needs_sizes")))


def applicable(estimator: str, method: str, stratified: bool = False, sizes: bool = False) -> bool:
    """Does ``method`` apply to ``estimator`` (under the given design)?"""
    return estimator in ESTIMATORS and method in valid_methods(estimator, stratified, sizes)


def _check_pair(estimator: str, method: str, stratified: bool, sizes: bool = False) -> None:
    if estimator not in ESTIMATORS:
        raise RagcovError(f"`estimator` must be one of {ESTIMATORS}; got {estimator!r}.")
    if method not in METHODS:
        raise RagcovError(f"`method` must be one of {tuple(METHODS)}; got {method!r}.")
    if method in SIZE_METHODS and not sizes and not stratified and estimator in METHODS[method]["estimators"]:
        raise RagcovError(f"`method={method!r}` needs every population document's size (population['sizes'] / "
                          "a document-sampled task, which records them); use 'bootstrap_t' or 'cr2' otherwise.")
    if not applicable(estimator, method, stratified, sizes):
        design = "a stratified design" if stratified else f"estimator={estimator!r}"
        raise RagcovError(
            f"`method={method!r}` does not apply to {design}; valid methods: "
            f"{valid_methods(estimator, stratified)}."
        )


def decode_flags(bits: int) -> tuple[str, ...]:
    """Names of the flags set in one ``flags`` bitmask value."""
    bits = int(bits)
    return tuple(name for name, bit in FLAGS.items() if bits & bit)


def min_resamples(level: float) -> int:
    """Fewest bootstrap replicates for a two-sided interval at ``level``: ``ceil(2 / (1 - level)) - 1``.

    The rule ``(B + 1) (1 - level) / 2 >= 1`` puts at least one replicate in each tail read by the
    interval (39 at 95%, 19 at 90%, 199 at 99%); see the module docstring.
    """
    # the tolerance keeps 2 / 0.05 = 39.999... (float) from rounding up to a 41st replicate
    return max(1, math.ceil(2.0 / (1.0 - level) - 1e-9) - 1)


def check_level(level: Any, *, float_only: bool = False) -> float:
    """``level`` (the confidence level of an interval, e.g. 0.95) as a float in (0, 1), else the one error
    every caller gives: a :class:`~ragcov_data.errors.RagcovError` (a ``ValueError``). ``float_only``: the
    planning functions take a float only (an int there is a typo for a percentage)."""
    kinds = (float, np.floating) if float_only else (int, float, np.integer, np.floating)
    ok = isinstance(level, kinds) and not isinstance(level, (bool, np.bool_))
    if not ok or not 0 < float(level) < 1:
        raise RagcovError(f"`level` must be {'a float ' if float_only else ''}in (0, 1), e.g. 0.95; got {level!r}.")
    return float(level)


def check_resamples(n_resamples: Any, level: float, methods: Any = None, stratified: bool = False) -> int:
    """Validate the bootstrap replicates ``n_resamples`` for ``methods`` at ``level``; return it as int.

    ``n_resamples`` must be a positive integer; when any of ``methods`` (default: every method of the
    design) resamples, it must also reach :func:`min_resamples` of ``level``. Unknown method names
    are left to the caller's own check. ``level`` must already be valid (in (0, 1)).
    """
    try:
        ok = not isinstance(n_resamples, bool) and int(n_resamples) == n_resamples and n_resamples >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise RagcovError(f"`n_resamples` must be a positive integer; got {n_resamples!r}.")
    if methods is None:
        methods = valid_methods("micro", stratified) + valid_methods("macro", stratified)
    elif isinstance(methods, str):
        methods = (methods,)
    try:
        methods = tuple(methods)
    except TypeError:  # not a list of names: the caller's method check reports it
        methods = ()
    boot = sorted({m for m in methods if m in METHODS and METHODS[m]["kind"] in ("bootstrap", "wild")})
    need = min_resamples(level)
    if boot and int(n_resamples) < need:
        raise RagcovError(
            f"`n_resamples`={int(n_resamples)} is too few bootstrap replicates for a {level:g} interval "
            f"({', '.join(boot)}): at least {need} are needed so that each tail of the interval holds a "
            f"replicate (B >= 2/(1 - level) - 1). Use n_resamples >= {need}; more gives steadier endpoints."
        )
    return int(n_resamples)


def _rng(rng: Any) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def bootstrap_counts(R: int, K: int, n_resamples: int, rng: Any = None) -> np.ndarray:
    """Document resampling counts: ``c[r, k, b]`` = times document ``k`` is drawn in replicate ``b``.

    Each replicate draws ``K`` documents uniformly with replacement (multinomial counts), as int8
    of shape ``(R, K, B)``. Pass the result as ``boot_counts=`` to several :func:`interval_batch`
    calls to share draws across methods. ``K`` must be at most 127.
    """
    gen = _rng(rng)
    if K > 127:
        raise ValueError("bootstrap_counts stores counts as int8; K must be <= 127 (use interval_batch).")
    B = n_resamples
    idx = gen.integers(0, K, size=(R, K, B), dtype=np.int8)
    if K <= 40 and R > 1:  # few documents over many replicates: K passes over the int8 draws are cheapest
        out = np.empty((R, K, B), dtype=np.int8)
        for k in range(K):
            np.sum(idx == k, axis=1, dtype=np.int8, out=out[:, k, :])
        return out
    # else one bincount over (replicate, resample, document) cells (2-8x faster from 50 documents): the same counts
    flat = idx.astype(np.intp)
    flat += (np.arange(R, dtype=np.intp)[:, None, None] * B + np.arange(B, dtype=np.intp)[None, None, :]) * K
    counts = np.bincount(flat.ravel(), minlength=R * B * K).reshape(R, B, K)
    return counts.transpose(0, 2, 1).astype(np.int8, order="C")  # laid out as the draws: sums read it alike


def _counts_chunk(R: int, K: int, B: int, gen: np.random.Generator) -> np.ndarray:
    """Float64 resampling counts of shape (R, K, B); a bincount path for large K."""
    if K <= 64:
        return bootstrap_counts(R, K, B, gen).astype(np.float64)
    idx = gen.integers(0, K, size=(R, K, B), dtype=np.int64)  # draw j of replicate b -> document idx
    idx *= B
    idx += np.arange(B, dtype=np.int64)
    idx += (np.arange(R, dtype=np.int64) * (K * B))[:, None, None]
    return np.bincount(idx.ravel(), minlength=R * K * B).reshape(R, K, B).astype(np.float64)


def anova_icc(n: np.ndarray, s: np.ndarray, q: np.ndarray) -> np.ndarray:
    """One-way ANOVA intraclass correlation per sample (unequal sizes, ``n0`` of Snedecor–Cochran).

    ``MSB = sum n_j (p_j - ybar)^2 / (K-1)``, ``MSW = sum (q_j - s_j^2/n_j) / (N-K)``,
    ``n0 = (N - sum n_j^2 / N) / (K-1)``, ``ICC = (MSB - MSW) / (MSB + (n0 - 1) MSW)``.
    Undefined (nan) when ``K < 2``, ``N = K`` or both mean squares are 0.
    """
    n, s, q = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (n, s, q))
    K = n.shape[1]
    N = n.sum(1)
    ybar = s.sum(1) / N
    p = s / n
    with np.errstate(divide="ignore", invalid="ignore"):
        msb = (n * (p - ybar[:, None]) ** 2).sum(1) / (K - 1)
        msw = np.maximum((q - s * s / n).sum(1), 0.0) / (N - K)
        n0 = (N - (n * n).sum(1) / N) / (K - 1)
        icc = (msb - msw) / (msb + (n0 - 1) * msw)
    return icc


def cr2_df(n: np.ndarray) -> np.ndarray:
    """Satterthwaite df of the CR2 test of an intercept-only OLS clustered by document.

    ``df = 1 / (sum f_j^2 + (sum t_j)^2 - sum t_j^2)``, ``f_j = n_j / N``, ``t_j = f_j^2 / (1 - f_j)``.
    Derivation: with ``p_j = (I-H)_{.j} A_j X_j M`` the Satterthwaite df is
    ``(sum_j p_j'p_j)^2 / sum_ij (p_i'p_j)^2``; here ``p_i'p_j = a_i a_j (n_i [i=j] - n_i n_j / N) / N^2``
    with ``a_j = (1 - f_j)^(-1/2)``, which simplifies to the expression above.
    """
    n = np.atleast_2d(np.asarray(n, dtype=float))
    total = n.sum(1, keepdims=True)
    f = n / total
    # Written without cancellation: 1 - f_j = (N - n_j)/N, and (sum t)^2 - sum t^2 = sum_j t_j * (sum of
    # the other t), each "sum of the others" from prefix + suffix sums (a dominant document makes the
    # naive forms lose digits and push the df below its bound of 1).
    with np.errstate(divide="ignore", invalid="ignore"):
        t = n * n / (total * (total - n))
        t0 = np.where(np.isfinite(t), t, 0.0)
        zero = np.zeros_like(t0[:, :1])
        prefix = np.concatenate([zero, np.cumsum(t0, axis=1)[:, :-1]], axis=1)  # exclusive sums
        suffix = np.concatenate([np.cumsum(t0[:, ::-1], axis=1)[:, -2::-1], zero], axis=1)
        cross = (t * (prefix + suffix)).sum(1)
        return 1.0 / ((f * f).sum(1) + cross)


def _tq(level: float, df: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return stats.t.ppf(0.5 + level / 2.0, df)


def _finish(est, se, df, crit, flags) -> dict[str, np.ndarray]:
    """Symmetric interval ``est +- crit * se`` with degenerate cases flagged."""
    se = np.asarray(se, dtype=float)
    zero = np.isfinite(se) & (se == 0)
    flags = flags | np.where(zero, FLAGS["zero_variance"], 0)
    half = np.where(zero, 0.0, crit * se)
    return {"estimate": est, "se": se, "df": np.broadcast_to(np.asarray(df, float), est.shape).copy(),
            "low": est - half, "high": est + half, "flags": flags}


def _as_2d(a: Any, name: str) -> np.ndarray:
    arr = np.asarray(a, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must have shape (R, K) or (K,); got shape {arr.shape}.")
    return arr


def interval_batch(
    n: Any,
    s: Any,
    q: Any,
    *,
    estimator: str,
    method: str,
    level: float = 0.95,
    n_resamples: int = 999,
    rng: Any = None,
    strata: Any = None,
    population: Mapping[str, Any] | None = None,
    value_counts: tuple[Any, Any] | None = None,
    boot_counts: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Point estimate, SE, df and interval for a batch of samples.

    Parameters
    ----------
    n, s, q : array_like, shape (R, K) or (K,)
        Per-document number of queries (>= 1), sum of values and sum of squared values.
    estimator : {"micro", "macro"}
    method : str
        A key of :data:`METHODS` valid for ``estimator`` (see :func:`valid_methods`).
    level : float, default: 0.95
        Confidence level in (0, 1).
    n_resamples : int, default: 999
        Bootstrap replicates ``B`` (bootstrap methods only).
    rng : int, numpy.random.Generator or None
        Seed or generator for bootstraps. Results are deterministic for a seed.
    strata : array_like of int, shape (R, K), optional
        Stratum code (0..H-1) of each document: two-stage / stratified design (method ``t`` only).
    population : mapping, optional
        Finite population sizes. SRS: ``{"documents": M}`` (documents in the population).
        Stratified: ``{"documents": array of M_h indexed by stratum code (may be longer than the
        codes present), "strata": H_pop}`` (either key optional).
    value_counts : (levels, counts), optional
        Distinct per-query values ``(V,)`` and their counts ``(R, V)``; needed by
        ``chunk_bootstrap`` when values are not all 0/1.
    boot_counts : ndarray, shape (R, K, B), optional
        Precomputed document resampling counts (:func:`bootstrap_counts`) to share draws between
        methods; overrides ``n_resamples`` and ``rng`` for document bootstraps.

    Returns
    -------
    dict of ndarray, each of shape (R,)
        ``estimate``, ``se``, ``df`` (inf for normal-quantile methods, nan for percentile
        bootstraps), ``low``, ``high`` (raw, not clipped) and ``flags`` (int bitmask of
        :data:`FLAGS`; decode with :func:`decode_flags`). Samples with fewer than two documents
        get nan values and flag ``k_lt_2``.
    """
    stratified = strata is not None
    n, s, q, flags = _batch_inputs(n, s, q, estimator, method, level, n_resamples, stratified, population,
                                   boot_counts)
    population = dict(population or {})

    if stratified:
        return _stratified_t(n, s, q, np.asarray(strata), estimator, level, population, flags)

    R, K = n.shape
    N = n.sum(1)
    p = s / n
    est = s.sum(1) / N if estimator == "micro" else p.mean(1)

    if K < 2 and method not in ("wald_iid", "chunk_bootstrap"):
        nan = np.full(R, np.nan)
        return {"estimate": est, "se": nan, "df": nan.copy(), "low": nan.copy(), "high": nan.copy(),
                "flags": flags | FLAGS["k_lt_2"]}
    if K < FEW_CLUSTERS and method in _FEW_CLUSTER_METHODS:
        flags |= FLAGS["few_clusters"]
    fpc, flags = _fpc(population, estimator, method, K, flags)
    gen = _rng(rng)

    if METHODS[method]["kind"] == "analytic":
        return _analytic(n, s, q, est, p, estimator, method, level, fpc, population, flags)
    if method == "wild_cluster":
        return _wild_cluster(n, s, p, estimator, level, n_resamples, gen, flags)
    if method == "chunk_bootstrap":
        return _chunk_bootstrap(n, s, q, est, level, n_resamples, gen, value_counts, flags)
    return _cluster_bootstrap(n, s, p, est, estimator, method, level, n_resamples, gen, boot_counts, flags)


def _batch_inputs(n: Any, s: Any, q: Any, estimator: str, method: str, level: float, n_resamples: int,
                  stratified: bool, population: Mapping[str, Any] | None, boot_counts: np.ndarray | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validate the inputs of :func:`interval_batch`; return ``n, s, q`` as (R, K) floats and the starting
    flags (``naive`` for a naive method)."""
    _check_pair(estimator, method, stratified, sizes=(population or {}).get("sizes") is not None)
    check_level(level)
    n, s, q = _as_2d(n, "n"), _as_2d(s, "s"), _as_2d(q, "q")
    if not (n.shape == s.shape == q.shape):
        raise ValueError(f"`n`, `s`, `q` must have one shape; got {n.shape}, {s.shape}, {q.shape}.")
    if np.any(n < 1):
        raise ValueError("`n` must be >= 1 for every document (documents without queries carry no data).")
    if METHODS[method]["kind"] in ("bootstrap", "wild") and not stratified:
        B = boot_counts.shape[-1] if boot_counts is not None and method != "chunk_bootstrap" else n_resamples
        check_resamples(B, level, (method,))
    flags = np.full(n.shape[0], FLAGS["naive"] if METHODS[method]["naive"] else 0, dtype=np.int64)
    return n, s, q, flags


def _fpc(population: Mapping[str, Any], estimator: str, method: str, K: int, flags: np.ndarray
         ) -> tuple[float, np.ndarray]:
    """The variance factor ``1 - K/M`` of a finite population of M documents (1 when unknown or when the
    method ignores it, then flagged ``fpc_ignored``)."""
    fpc = 1.0
    if population.get("documents") is not None:
        M = float(np.asarray(population["documents"]))
        if M < K:
            raise ValueError(f"`population['documents']` ({M:g}) is smaller than the sample (K={K}).")
        if METHODS[method]["kind"] == "analytic" and method not in ("wald_iid", "deff_wald") and estimator != "micro":
            fpc = 1.0 - K / M
        else:  # micro: measured to under-cover with it (see the module docstring), so never applied
            flags |= FLAGS["fpc_ignored"]
    return fpc, flags


def _analytic(n, s, q, est, p, estimator, method, level, fpc, population, flags):
    """The closed-form intervals: ``wald_iid``, ``deff_wald``, ``cr1``, ``cr2``, ``t`` and ``known_sizes``."""
    R, K = n.shape
    N, Q = n.sum(1), q.sum(1)
    if method in ("wald_iid", "deff_wald"):
        z = stats.norm.ppf(0.5 + level / 2.0)
        var = np.maximum(Q / N - est**2, 0.0)
        if method == "wald_iid":
            return _finish(est, np.sqrt(var / N), np.inf, z, flags)
        icc = anova_icc(n, s, q)
        neg = icc < 0
        flags |= np.where(neg, FLAGS["negative_icc"], 0)
        icc = np.where(neg | ~np.isfinite(icc), 0.0, icc)
        deff = 1.0 + ((n * n).sum(1) / N - 1.0) * icc
        return _finish(est, np.sqrt(var * deff / N), np.inf, z, flags)

    if method in ("cr1", "cr2", "t"):
        if estimator == "micro":
            u = s - est[:, None] * n
            if method == "cr1":
                var = K / (K - 1) * (u * u).sum(1) / N**2
                df = np.full(R, K - 1.0)
            else:
                f = n / N[:, None]
                var = (u * u / (1.0 - f)).sum(1) / N**2
                df = cr2_df(n)
                flags |= np.where(df < 1 - 1e-9, FLAGS["df_lt_1"], 0)
        else:  # macro: cluster-level intercept-only regression, all three coincide
            var = p.var(1, ddof=1) / K
            df = np.full(R, K - 1.0)
        return _finish(est, np.sqrt(var * fpc), df, _tq(level, df), flags)

    # known_sizes
    sizes = population.get("sizes")
    if sizes is None:
        raise ValueError("method 'known_sizes' needs every population document's size "
                         "(population['sizes']): it applies to a document-sampled task.")
    x = np.asarray(sizes, dtype=float)
    if x.ndim != 1 or len(x) < 2 or len(x) < K:
        raise ValueError(f"`population['sizes']` must hold one size per population document (at least "
                         f"the K={K} sampled); got shape {x.shape}.")
    u = s - est[:, None] * n
    sigma2 = (u * u).sum(1) / (n * n).sum(1)
    var = sigma2 * (x * x).sum() / (len(x) - 1) / K / x.mean() ** 2
    return _finish(est, np.sqrt(var), np.full(R, K - 1.0), _tq(level, K - 1.0), flags)


def _wild_cluster(n, s, p, estimator, level, B, gen, flags):
    """Wild cluster restricted bootstrap interval by test inversion (:mod:`._wild`); one weight matrix
    for the whole batch (micro: the query-level regression; macro: the document-level one)."""
    R, K = n.shape
    v = lambda: wild_weights(K, B, gen)  # noqa: E731  (a fresh draw for every chunk of samples)
    if estimator == "micro":
        est, se, low, high = wild_interval(n, s, level, v)
    else:
        est, se, low, high = wild_interval(np.ones_like(p), p, level, v)
    zero = ~(se > 0)
    flags = flags | np.where(zero, FLAGS["zero_variance"], 0)
    return {"estimate": est, "se": se, "df": np.full(R, np.nan), "low": low, "high": high, "flags": flags}


def _chunk_bootstrap(n, s, q, est, level, B, gen, value_counts, flags):
    R = n.shape[0]
    N = n.sum(1)
    if np.allclose(q, s):  # every value is 0 or 1: replicate total ~ Binomial(N, ybar)
        Ni = np.rint(N).astype(np.int64)
        reps = gen.binomial(Ni[:, None], np.clip(est, 0, 1)[:, None], size=(R, B)) / N[:, None]
    else:
        if value_counts is None:
            raise ValueError("`chunk_bootstrap` on values other than 0/1 needs `value_counts=(levels, counts)`.")
        levels = np.asarray(value_counts[0], dtype=float)
        counts = np.atleast_2d(np.asarray(value_counts[1], dtype=np.int64))
        Ni = counts.sum(1)
        if len(levels) <= 64:  # few distinct values: multinomial over them
            pv = counts / Ni[:, None]
            draws = gen.multinomial(Ni[None, :], pv[None, :, :], size=(B, R))  # (B, R, V)
            reps = (draws @ levels).T / Ni[:, None]
        else:  # many distinct values: resample query indices (chunked over replicates)
            reps = np.empty((R, B))
            for r in range(R):
                vals = np.repeat(levels, counts[r])
                step = max(1, _CHUNK_ELEMENTS // len(vals))
                for lo in range(0, B, step):
                    hi = min(B, lo + step)
                    reps[r, lo:hi] = vals[gen.integers(0, len(vals), size=(hi - lo, len(vals)))].mean(1)
    return _percentile(est, reps, level, flags)


def _percentile(est, reps, level, flags):
    a = (1.0 - level) / 2.0
    low, high = np.quantile(reps, [a, 1.0 - a], axis=1)
    se = reps.std(1, ddof=1)
    flags = flags | np.where(se == 0, FLAGS["zero_variance"], 0)
    return {"estimate": est, "se": se, "df": np.full(est.shape, np.nan), "low": low, "high": high,
            "flags": flags}


def _micro_se2(N, S, SS, SN, NN, K):
    """CR1-scaled linearisation variance from resampled sums (vectorised over any shape)."""
    y = S / N
    ssq = np.maximum(SS - 2.0 * y * SN + y * y * NN, 0.0)
    return K / (K - 1) * ssq / (N * N)


def _cluster_bootstrap(n, s, p, est, estimator, method, level, B, gen, boot_counts, flags):
    R, K = n.shape
    if estimator == "micro":
        feats = [n, s] if method == "cluster_bootstrap" else [n, s, s * s, s * n, n * n]
    else:
        feats = [p] if method == "cluster_bootstrap" else [p, p * p]
    X = np.stack(feats, axis=1)  # (R, F, K)
    if boot_counts is not None:
        B = boot_counts.shape[2]
        if boot_counts.shape[:2] != (R, K):
            raise ValueError(f"`boot_counts` must have shape (R, K, B) = ({R}, {K}, B); got {boot_counts.shape}.")
    step = max(1, _CHUNK_ELEMENTS // (K * B))
    est_b = np.empty((R, B))
    se_b = np.empty((R, B)) if method == "bootstrap_t" else None
    for lo in range(0, R, step):
        hi = min(R, lo + step)
        if boot_counts is not None:
            w = boot_counts[lo:hi].astype(np.float64)
        else:
            w = _counts_chunk(hi - lo, K, B, gen)
        G = np.matmul(X[lo:hi], w)  # (r, F, B): resampled sums
        if estimator == "micro":
            est_b[lo:hi] = G[:, 1] / G[:, 0]
            if se_b is not None:
                se_b[lo:hi] = np.sqrt(_micro_se2(G[:, 0], G[:, 1], G[:, 2], G[:, 3], G[:, 4], K))
        else:
            est_b[lo:hi] = G[:, 0] / K
            if se_b is not None:
                se_b[lo:hi] = np.sqrt(np.maximum(G[:, 1] - K * est_b[lo:hi] ** 2, 0.0) / (K - 1) / K)
    if method == "cluster_bootstrap":
        return _percentile(est, est_b, level, flags)

    # bootstrap-t: studentize each replicate; drop replicates with zero SE (t undefined).
    if estimator == "micro":
        N = n.sum(1)
        se = np.sqrt(_micro_se2(N, s.sum(1), (s * s).sum(1), (s * n).sum(1), (n * n).sum(1), K))
    else:
        se = p.std(1, ddof=1) / np.sqrt(K)
    tol = 1e-12 * np.maximum(1.0, np.abs(est))[:, None]
    bad = ~(se_b > tol)
    with np.errstate(divide="ignore", invalid="ignore"):
        tb = np.where(bad, np.nan, (est_b - est[:, None]) / se_b)
    nbad = bad.sum(1)
    flags = flags | np.where(nbad > 0, FLAGS["zero_se_replicates"], 0)
    flags = flags | np.where(nbad > B / 2, FLAGS["boot_t_unstable"], 0)
    a = (1.0 - level) / 2.0
    allbad = nbad == B
    tb[allbad] = 0.0
    with np.errstate(invalid="ignore"):
        tq = np.nanquantile(tb, [a, 1.0 - a], axis=1)
    zero = se == 0
    flags = flags | np.where(zero, FLAGS["zero_variance"], 0)
    low = np.where(zero, est, est - tq[1] * se)
    high = np.where(zero, est, est - tq[0] * se)
    return {"estimate": est, "se": se, "df": np.full(R, np.nan), "low": low, "high": high, "flags": flags}


def _stratified_t(n, s, q, strata, estimator, level, population, flags):
    """Two-stage / stratified ``t`` interval (see the module docstring)."""
    R, K = n.shape
    strata = np.broadcast_to(np.atleast_2d(strata), (R, K)).astype(np.int64)
    if strata.min() < 0:
        raise ValueError("`strata` codes must be integers 0..H-1.")
    H_codes = int(strata.max()) + 1
    onehot = (strata[:, :, None] == np.arange(H_codes)).astype(float)  # (R, K, H)
    k_h = onehot.sum(1)  # (R, H)
    present = k_h > 0
    H = present.sum(1).astype(float)
    p = s / n
    with np.errstate(divide="ignore", invalid="ignore"):
        if estimator == "micro":
            N_h = np.einsum("rk,rkh->rh", n, onehot)
            S_h = np.einsum("rk,rkh->rh", s, onehot)
            theta = S_h / N_h
            nbar = N_h / k_h
            th_d = np.einsum("rh,rkh->rk", np.nan_to_num(theta), onehot)
            nb_d = np.einsum("rh,rkh->rk", np.nan_to_num(nbar), onehot)
            z = (s - th_d * n) / nb_d
        else:
            theta = np.einsum("rk,rkh->rh", p, onehot) / k_h
            th_d = np.einsum("rh,rkh->rk", np.nan_to_num(theta), onehot)
            z = p - th_d
        ss_h = np.einsum("rk,rkh->rh", z * z, onehot)
        s2_h = np.where(k_h > 1, ss_h / (k_h - 1), 0.0)
    flags = flags | np.where((present & (k_h == 1)).any(1), FLAGS["singleton_stratum"], 0)
    theta0 = np.where(present, theta, 0.0)
    est = theta0.sum(1) / H
    with np.errstate(divide="ignore", invalid="ignore"):
        sb2 = (np.where(present, (theta0 - est[:, None]) ** 2, 0.0)).sum(1) / (H - 1)

    H_pop = population.get("strata")
    f1 = np.zeros(R) if H_pop is None else H / float(H_pop)
    if H_pop is not None and np.any(f1 > 1):
        raise ValueError(f"`population['strata']` ({H_pop}) is smaller than the number of sampled strata.")
    M = population.get("documents")
    if M is None:
        f2 = np.zeros((R, H_codes))
    else:
        M = np.atleast_1d(np.asarray(M, dtype=float))
        M = M[:H_codes] if M.size >= H_codes else np.broadcast_to(M, (H_codes,))  # sizes by code 0..
        f2 = np.where(present, k_h / M[None, :], 0.0)
        if np.any(f2 > 1):
            raise ValueError("`population['documents']` is smaller than the documents sampled in a stratum.")
    a_comp = (1.0 - f1) * np.where(H > 1, sb2, 0.0) / H
    with np.errstate(divide="ignore", invalid="ignore"):
        c_h = np.where(present, f1[:, None] * (1.0 - f2) * s2_h / k_h, 0.0) / (H * H)[:, None]
        var = a_comp + c_h.sum(1)
        den = np.where(f1 < 1, a_comp**2 / (H - 1), 0.0) + np.where(k_h > 1, c_h**2 / (k_h - 1), 0.0).sum(1)
        df = var**2 / den
    degenerate = (H < 2) & (f1 < 1)
    df = np.where(var == 0, np.where(f1 < 1, H - 1, np.nan), df)
    flags = flags | np.where(df < 1 - 1e-9, FLAGS["df_lt_1"], 0)
    out = _finish(est, np.sqrt(var), df, _tq(level, df), flags)
    if degenerate.any():
        for key in ("se", "df", "low", "high"):
            out[key] = np.where(degenerate, np.nan, out[key])
        out["flags"] = out["flags"] | np.where(degenerate, FLAGS["k_lt_2"], 0)
    return out
