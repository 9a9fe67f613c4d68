"""``interval``: one estimate and interval from per-query values clustered by document."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError

from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval.estimates.results import IntervalResult

__all__ = ["interval", "sufficient_stats"]


def _interval_iv(values: Any, clusters: Any, level: float, n_resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate inputs of :func:`interval` / :func:`design_effect`; return float values and cluster labels."""
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise RagcovError(f"`values` must be numbers; got {exc}.") from None
    c = np.asarray(clusters)
    if v.ndim != 1 or c.ndim != 1:
        raise RagcovError(f"`values` and `clusters` must be 1-D; got shapes {v.shape} and {c.shape}.")
    if len(v) != len(c):
        raise RagcovError(f"`values` and `clusters` must have equal length; got {len(v)} and {len(c)}.")
    if len(v) == 0:
        raise RagcovError("`values` is empty; need at least one query.")
    bad = np.flatnonzero(~np.isfinite(v))
    if bad.size:
        raise RagcovError(f"`values` has {bad.size} non-finite entries (first at position {bad[0]}); "
                          "drop or fill them before computing an interval.")
    if np.any(pd.isna(c)):
        raise RagcovError(f"`clusters` has {int(pd.isna(c).sum())} missing labels; every query needs a document.")
    _kernels.check_level(level)
    _kernels.check_resamples(n_resamples, level, methods=())  # positive integer; the minimum needs the method
    return v, c


def sufficient_stats(values: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-cluster ``(labels, n, s, q)`` in order of first appearance."""
    codes, labels = pd.factorize(pd.Series(clusters), sort=False)
    K = len(labels)
    n = np.bincount(codes, minlength=K).astype(float)
    s = np.bincount(codes, weights=values, minlength=K)
    q = np.bincount(codes, weights=values * values, minlength=K)
    return np.asarray(labels), n, s, q


def _strata_codes(strata: Any, clusters: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stratum code per cluster (labels order) and the stratum labels; a cluster must sit in one stratum."""
    st = np.asarray(strata)
    if st.shape != clusters.shape:
        raise RagcovError(f"`strata` must have one label per query ({len(clusters)}); got shape {st.shape}.")
    df = pd.DataFrame({"c": clusters, "h": st})
    per = df.groupby("c", sort=False)["h"].nunique()
    mixed = per[per > 1]
    if len(mixed):
        raise RagcovError(f"`strata` must be constant within a document; {len(mixed)} documents span several "
                          f"strata (first: {mixed.index[0]!r}).")
    first = df.drop_duplicates("c").set_index("c")["h"]
    codes, hlabels = pd.factorize(first.loc[labels].to_numpy(), sort=True)
    return codes, np.asarray(hlabels)


def _population(population_sizes: Any, stratified: bool, hlabels: np.ndarray | None) -> dict[str, Any]:
    """Normalise ``population_sizes`` to the core's ``population`` mapping."""
    if population_sizes is None:
        return {}
    if not stratified:
        if isinstance(population_sizes, Mapping):
            return {"documents": population_sizes.get("documents"), "sizes": population_sizes.get("sizes")}
        # a document sample's population may also know every document's size (sampling.DocumentPopulation)
        return {"documents": float(population_sizes), "sizes": getattr(population_sizes, "sizes", None)}
    if not isinstance(population_sizes, Mapping):
        raise RagcovError("`population_sizes` for a stratified design must be a mapping "
                          "{'documents': {stratum: M_h}, 'strata': H_pop} (either key optional).")
    out: dict[str, Any] = {"strata": population_sizes.get("strata")}
    docs = population_sizes.get("documents")
    if docs is not None:
        if not isinstance(docs, Mapping):
            raise RagcovError("`population_sizes['documents']` must map each stratum label to its number of "
                              "documents in the population.")
        missing = [h for h in hlabels if h not in docs]
        if missing:
            raise RagcovError(f"`population_sizes['documents']` lacks strata {missing[:3]}; give M_h for every stratum.")
        out["documents"] = np.array([float(docs[h]) for h in hlabels])
    return out


def interval(
    values: Any,
    clusters: Any,
    estimator: str = "micro",
    method: str = "cr2",
    level: float = 0.95,
    seed: int | np.random.Generator | None = 0,
    n_resamples: int = 5000,
    *,
    strata: Any = None,
    population_sizes: Any = None,
) -> IntervalResult:
    """Estimate and confidence interval of the mean of per-query values sampled by document.

    Parameters
    ----------
    values : array_like of float
        One outcome per query (any value in [0, 1]: hit@1, fractional tie credit, nDCG@10, ...).
    clusters : array_like
        Document (cluster) label of each query, same length as ``values``.
    estimator : {"micro", "macro"}, default: "micro"
        ``micro`` = mean over queries; ``macro`` = mean over documents of per-document rates.
    method : str, default: "cr2"
        ``wald_iid``, ``chunk_bootstrap`` (naive contrasts, micro only), ``cluster_bootstrap``,
        ``bootstrap_t``, ``cr2``, ``cr1``, ``deff_wald`` (micro only), ``t`` (macro only; the only
        method under a stratified design). Formulas: ``ragcov_data.eval.estimates._kernels``.
    level : float, default: 0.95
    seed : int, Generator or None, default: 0
        Seed of the bootstrap methods (results are reproducible for a seed).
    n_resamples : int, default: 5000
        Bootstrap replicates; bootstrap methods need at least ``ceil(2 / (1 - level)) - 1`` (39 at
        95%, :func:`ragcov_data.eval.estimates._kernels.min_resamples`).
    strata : array_like, optional
        Stratum (e.g. document type) of each query, constant within a document: a two-stage /
        stratified design whose target is the mean over strata of per-stratum estimates.
    population_sizes : float or mapping, optional
        Finite population sizes. Simple random sample: number of documents in the population.
        Stratified: ``{"documents": {stratum: M_h}, "strata": H_pop}``.

    Returns
    -------
    IntervalResult
        ``flags`` names degenerate or fragile conditions, e.g. ``few_clusters`` for a bootstrap with
        fewer than 10 documents (see :data:`ragcov_data.eval.estimates._kernels.FLAGS`).

    Raises
    ------
    RagcovError
        Bad inputs, an estimator/method pair that does not apply (the message lists the valid
        methods), too few bootstrap replicates for ``level``, or fewer than two documents for a
        document-level method.

    Examples
    --------
    >>> import numpy as np
    >>> values = np.r_[np.zeros(500 * 10), np.tile(np.r_[np.ones(200), np.zeros(300)], 10)]
    >>> clusters = np.repeat(np.arange(20), 500)
    >>> r = interval(values, clusters, estimator="macro", method="t")
    >>> round(r.se, 4), [round(x, 3) for x in r.confidence_interval()]
    (0.0459, [0.104, 0.296])
    """
    v, c = _interval_iv(values, clusters, level, n_resamples)
    stratified = strata is not None
    sizes = (population_sizes.get("sizes") if isinstance(population_sizes, Mapping)
             else getattr(population_sizes, "sizes", None)) is not None
    _kernels._check_pair(estimator, method, stratified, sizes)
    _kernels.check_resamples(n_resamples, level, (method,), stratified)
    labels, n, s, q = sufficient_stats(v, c)
    K = len(labels)
    if K < 2 and method not in ("wald_iid", "chunk_bootstrap"):
        raise RagcovError(f"`method={method!r}` needs at least 2 documents (clusters); got {K}.")
    kwargs = _batch_kwargs(v, c, labels, s, q, method, strata, population_sizes)
    out = _run_batch(n, s, q, estimator, method, level, n_resamples, seed, kwargs)
    return IntervalResult(
        estimate=float(out["estimate"][0]), se=float(out["se"][0]), df=float(out["df"][0]),
        low=float(out["low"][0]), high=float(out["high"][0]), estimator=estimator, method=method,
        level=level, n_clusters=K, n_obs=len(v), flags=_kernels.decode_flags(out["flags"][0]),
        naive=bool(_kernels.METHODS[method]["naive"]),
    )


def _batch_kwargs(v: np.ndarray, c: np.ndarray, labels: np.ndarray, s: np.ndarray, q: np.ndarray, method: str,
                  strata: Any, population_sizes: Any) -> dict[str, Any]:
    """The design arguments of the core for :func:`interval`: stratum codes, population sizes and, for the
    query bootstrap on values other than 0/1, the distinct values and their counts."""
    kwargs: dict[str, Any] = {}
    hlabels = None
    stratified = strata is not None
    if stratified:
        codes, hlabels = _strata_codes(strata, c, labels)
        kwargs["strata"] = codes[None, :]
    kwargs["population"] = _population(population_sizes, stratified, hlabels)
    if method == "chunk_bootstrap" and not np.allclose(q, s):
        lv, cnt = np.unique(v, return_counts=True)
        kwargs["value_counts"] = (lv, cnt[None, :])
    return kwargs


def _run_batch(n: np.ndarray, s: np.ndarray, q: np.ndarray, estimator: str, method: str, level: float,
               n_resamples: int, seed: Any, kwargs: dict[str, Any]) -> dict[str, np.ndarray]:
    """One sample through :func:`_kernels.interval_batch`; its input errors become :class:`RagcovError`."""
    try:
        return _kernels.interval_batch(n, s, q, estimator=estimator, method=method, level=level,
                                    n_resamples=int(n_resamples), rng=seed, **kwargs)
    except ValueError as exc:
        if isinstance(exc, RagcovError):
            raise
        raise RagcovError(str(exc)) from None
