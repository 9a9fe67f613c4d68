"""A population twin of the ANEEL–TAESA self-retrieval study, so coverage studies run without data.

The article's corpus is not public, but its population is described: 1,300 documents, 33,503 chunks,
a median of 7 chunks a document, the 10% largest documents holding 59% of the chunks, micro hit@1 18.46%,
macro 15.96%, intraclass correlation 0.293 (design effect 33.2), about half the documents never hit,
per-type rates from ~0% (dividend notices) to over 40% (normative resolutions, despachos) and a
within-document lag-1 autocorrelation of about 0.17. :func:`simulate_population` generates a per-chunk
outcome table with those figures (calibrated, seeded, every parameter overridable) and
:func:`population_figures` measures them on any population.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import optimize, signal, special, stats

from ragcov_data.errors import RagcovError
from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval.estimates.design import autocorrelation

__all__ = ["simulate_population", "population_figures", "DocType", "DEFAULT_DOC_TYPES"]


@dataclass(frozen=True)
class DocType:
    """One document type of the twin.

    Attributes
    ----------
    name : str
        Type label (goes to the ``doc_type`` column).
    n_docs : int
        Number of documents of this type.
    rate : float
        Relative mean hit rate of its documents (scaled by a common factor during calibration;
        ``0`` means the type is never hit).
    size_scale : float
        Log-scale tendency to be long (positive) or short (negative); documents are ranked by
        ``size_scale + N(0, 1)`` before receiving sizes.
    """

    name: str
    n_docs: int
    rate: float
    size_scale: float = 0.0


#: Default types: 931 ANEEL acts and 369 TAESA investor-relations documents (1,300 in all).
DEFAULT_DOC_TYPES: tuple[DocType, ...] = (
    DocType("despacho", 180, 0.42, -0.5),
    DocType("resolucao_normativa", 80, 0.45, 1.5),
    DocType("resolucao_autorizativa", 250, 0.10, -0.3),
    DocType("resolucao_homologatoria", 151, 0.12, 0.3),
    DocType("portaria", 270, 0.06, -0.8),
    DocType("demonstracoes_contabeis_regulatorias", 25, 0.04, 2.0),
    DocType("formulario_referencia", 25, 0.06, 2.0),
    DocType("aviso_dividendos", 25, 0.0, -1.0),
    DocType("itr", 50, 0.08, 1.5),
    DocType("fato_relevante", 60, 0.20, -0.5),
    DocType("comunicado_mercado", 60, 0.15, -0.5),
    DocType("rating", 25, 0.10, 0.5),
    DocType("ata_assembleia", 50, 0.20, 0.0),
    DocType("apresentacao_resultados", 49, 0.10, 0.5),
)


# --------------------------------------------------------------------------------------------------
# Figures of a population
# --------------------------------------------------------------------------------------------------
def _doc_stats(doc_codes: np.ndarray, values: np.ndarray, n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    n = np.bincount(doc_codes, minlength=n_docs).astype(float)
    s = np.bincount(doc_codes, weights=values, minlength=n_docs)
    return n, s


def _icc_anova(n: np.ndarray, s: np.ndarray, ss: np.ndarray) -> float:
    """One-way ANOVA intraclass correlation for unequal cluster sizes: the core's :func:`_kernels.anova_icc`."""
    if len(n) < 2:
        return float("nan")
    icc = float(_kernels.anova_icc(n, s, ss)[0])
    return icc if np.isfinite(icc) else float("nan")


def _lag1(values: np.ndarray, doc_codes: np.ndarray, doc_means: np.ndarray | None = None) -> float:
    """Pooled lag-1 autocorrelation of outcomes after removing each document's mean
    (:func:`ragcov_data.eval.estimates.design.autocorrelation`); rows in chunk order within each document."""
    return float(autocorrelation(values, doc_codes, None, 1)[0])


def population_figures(population: pd.DataFrame) -> dict[str, float]:
    """Summary figures of a per-chunk outcome population.

    Parameters
    ----------
    population : pandas.DataFrame
        Columns ``doc_id`` and ``value`` (and optionally ``chunk_index``, used to order chunks inside
        a document for the autocorrelation).

    Returns
    -------
    dict
        ``n_docs``, ``n_chunks``, ``median_size``, ``top10_share`` (share of chunks in the 10% largest
        documents), ``micro``, ``macro``, ``icc`` (one-way ANOVA), ``deff`` (Kish: ``1 + (Σn²/N − 1)·icc``),
        ``never_hit_share`` (documents with no hit) and ``lag1`` (pooled within-document lag-1
        autocorrelation of the demeaned outcomes).
    """
    for col in ("doc_id", "value"):
        if col not in population.columns:
            raise RagcovError(f"`population` lacks column {col!r}; found {list(population.columns)}.")
    df = population
    if "chunk_index" in df.columns:
        df = df.sort_values(["doc_id", "chunk_index"], kind="stable")
    else:
        df = df.sort_values("doc_id", kind="stable")
    codes, _ = pd.factorize(df["doc_id"], sort=False)
    values = df["value"].to_numpy(float)
    D = int(codes.max()) + 1
    n, s = _doc_stats(codes, values, D)
    ss = np.bincount(codes, weights=values**2, minlength=D)
    N = n.sum()
    icc = _icc_anova(n, s, ss)
    sizes = np.sort(n)[::-1]
    top = max(1, int(round(0.1 * D)))
    return {
        "n_docs": D,
        "n_chunks": int(N),
        "median_size": float(np.median(n)),
        "top10_share": float(sizes[:top].sum() / N),
        "micro": float(s.sum() / N),
        "macro": float(np.mean(s / n)),
        "icc": icc,
        "deff": float(1 + (np.sum(n**2) / N - 1) * icc),
        "never_hit_share": float(np.mean(s == 0)),
        "lag1": _lag1(values, codes, s / n),
    }


# --------------------------------------------------------------------------------------------------
# Sizes
# --------------------------------------------------------------------------------------------------
def _sizes(n_docs: int, n_chunks: int, median_size: float, top10_share: float, sumsq_ratio: float) -> np.ndarray:
    """Document sizes (sorted ascending) with the given total, median, top-10% share and Σn²/N.

    The 90% smallest documents follow quantiles of ``2 + lognormal`` (median fixed, spread solved for
    their total); the 10% largest follow lognormal quantiles scaled to their total, spread solved for
    Σn². Rounding residue goes to the largest documents so the total is exact.
    """
    n_top = max(1, int(round(0.1 * n_docs)))
    n_bot = n_docs - n_top
    sum_top = top10_share * n_chunks
    sum_bot = n_chunks - sum_top
    if median_size <= 2 or sum_bot / max(n_bot, 1) <= 2:
        raise RagcovError(
            f"`median_size`={median_size} and `top10_share`={top10_share} leave no room for documents of "
            "at least 2 chunks; raise `n_chunks` or lower `top10_share`."
        )
    z_b = stats.norm.ppf((np.arange(n_bot) + 0.5) / n_bot * (n_bot / n_docs))

    def bottom(sig: float) -> np.ndarray:
        return 2 + np.exp(np.log(median_size - 2) + sig * z_b)

    try:
        sig_b = optimize.brentq(lambda s: bottom(s).sum() - sum_bot, 1e-6, 8)
    except ValueError as exc:
        raise RagcovError(
            f"cannot reach {sum_bot:.0f} chunks in the 90% smallest documents with median {median_size}; "
            "check `n_chunks`, `median_size` and `top10_share`."
        ) from exc
    b = np.maximum(np.round(bottom(sig_b)), 2)
    z_t = stats.norm.ppf((np.arange(n_top) + 0.5) / n_top)
    mean_t = sum_top / n_top
    target_sq = max(sumsq_ratio * n_chunks - np.sum(b**2), n_top * mean_t**2 * (1 + 1e-6))

    def top(sig: float) -> np.ndarray:
        x = np.exp(sig * z_t)
        return x / x.sum() * sum_top

    try:
        sig_t = optimize.brentq(lambda s: np.sum(top(s) ** 2) - target_sq, 1e-8, 10)
    except ValueError:
        sig_t = 1.0
    t = np.maximum(np.round(top(sig_t)), 2)
    sizes = np.sort(np.concatenate([b, t])).astype(np.int64)
    diff = int(n_chunks - sizes.sum())
    # spread the rounding residue over the largest documents, one chunk each
    step = 1 if diff > 0 else -1
    i = len(sizes) - 1
    while diff != 0:
        if sizes[i] + step >= 2:
            sizes[i] += step
            diff -= step
        i = i - 1 if i > 0 else len(sizes) - 1
    return np.sort(sizes)


# --------------------------------------------------------------------------------------------------
# The twin
# --------------------------------------------------------------------------------------------------
def _ar1_latent(innov: np.ndarray, starts: np.ndarray, lengths: np.ndarray, rho: float) -> np.ndarray:
    """Stationary AR(1) N(0, 1) series restarted at each document (vectorised with one filter)."""
    if rho == 0:
        return innov.copy()
    c = np.sqrt(1 - rho**2)
    y = signal.lfilter([c], [1, -rho], innov)
    # remove what the previous document carried in and give each start the stationary variance
    pos = np.arange(len(innov)) - np.repeat(starts, lengths)
    start_of = np.repeat(starts, lengths)
    prev = np.where(start_of > 0, y[np.maximum(start_of - 1, 0)], 0.0)
    e0 = innov[start_of]
    return y - rho ** (pos + 1) * prev + rho**pos * e0 * (1 - c)


def simulate_population(n_docs: int = 1300, n_chunks: int = 33503, median_size: float = 7, top10_share: float = 0.59,
                        micro: float = 0.1846, macro: float = 0.1596, icc: float = 0.293,
                        never_hit_share: float = 0.5, lag1: float | None = 0.17, deff: float | None = 33.2,
                        types: Sequence[DocType] | None = None, seed: int = 0, calibrate: bool = True,
                        ) -> pd.DataFrame:
    """Simulate a per-chunk hit@1 population matching the ANEEL–TAESA figures.

    Model: document sizes from calibrated quantiles (see Notes); each document's rate is zero with
    probability ``pi`` (always zero for types with ``rate=0``), else Beta-distributed around the type's
    scaled rate, linked to the document's size by a Gaussian copula; chunk outcomes threshold a
    within-document AR(1) Gaussian series, so neighbouring chunks move together. Five parameters
    (rate scale, ``pi``, Beta precision, size–rate correlation, AR coefficient) are calibrated so the
    realised population hits ``macro``, ``never_hit_share``, ``icc``, ``micro`` and ``lag1``.

    Parameters
    ----------
    n_docs, n_chunks : int, default: 1300, 33503
        Documents and chunks (exact).
    median_size : float, default: 7
        Median chunks per document (documents have at least 2 chunks, as in self-retrieval).
    top10_share : float, default: 0.59
        Share of chunks held by the 10% largest documents.
    micro, macro : float, default: 0.1846, 0.1596
        Target chunk-weighted and document-averaged hit rates.
    icc : float, default: 0.293
        Target one-way ANOVA intraclass correlation of the outcomes.
    never_hit_share : float, default: 0.5
        Target share of documents with no hit at all.
    lag1 : float or None, default: 0.17
        Target pooled within-document lag-1 autocorrelation (``None``: independent chunks).
    deff : float or None, default: 33.2
        Kish design effect ``1 + (Σn²/N − 1)·icc``, which fixes the spread of the largest documents
        (``None``: continue the lognormal shape of the smaller ones).
    types : sequence of DocType, optional
        Document types; counts must sum to ``n_docs`` (default :data:`DEFAULT_DOC_TYPES` when
        ``n_docs`` is 1300, else the default proportions rescaled).
    seed : int, default: 0
        Seed; the same arguments always give the same population.
    calibrate : bool, default: True
        Tune the five latent parameters (about a second); ``False`` uses untuned starting values.

    Returns
    -------
    pandas.DataFrame
        One row per chunk: ``query-id`` (``"<doc_id>#<chunk_index:04d>"``), ``doc_id``, ``doc_type``,
        ``chunk_index``, ``value`` (0/1). ``attrs["params"]`` holds the calibrated parameters and
        ``attrs["figures"]`` the realised :func:`population_figures`.

    Notes
    -----
    Sizes: the 90% smallest documents take quantiles of ``2 + exp(log(median−2) + σ z)`` with σ solved
    for their total; the 10% largest take lognormal quantiles scaled to ``top10_share·n_chunks`` with
    spread solved for Σn² = ((deff−1)/icc + 1)·N. Sizes are then dealt to documents ranked by
    ``size_scale + N(0, 1)``. The figures are matched to the tolerances checked in the tests
    (rates ±0.003, ICC ±0.02, never-hit share ±0.03, lag-1 ±0.03, median exact, top-10% share ±0.01).

    Examples
    --------
    >>> pop = simulate_population(seed=1)
    >>> round(float(pop["value"].mean()), 3)
    0.185
    """
    _simulate_iv(n_docs, n_chunks, median_size, top10_share, micro, macro, icc, never_hit_share, lag1, deff)
    types = _resolve_types(types, n_docs)
    rng = np.random.default_rng(seed)
    sizes, type_idx = _deal_sizes(rng, types, n_docs, n_chunks, median_size, top10_share, icc, deff)
    rel_rate = np.array([t.rate for t in types])[type_idx]
    realise, starts = _realiser(rng, sizes, rel_rate, n_docs)
    theta = np.array([macro / max(np.mean(rel_rate), 1e-9), 0.3, np.log(2.0), 0.3, 0.3 if lag1 else 0.0])
    if calibrate:
        theta = _calibrate(theta, realise, micro, macro, icc, never_hit_share, lag1)
    values, _ = realise(theta)
    pop = _population_frame(values, sizes, starts, types, type_idx, n_docs)
    pop.attrs["params"] = dict(
        zip(["rate_scale", "pi_zero", "beta_precision", "size_rate_corr", "ar1"],
            [float(theta[0]), float(theta[1]), float(np.exp(theta[2])), float(theta[3]), float(theta[4])])
    )
    pop.attrs["seed"] = seed
    pop.attrs["figures"] = population_figures(pop)
    return pop


def _deal_sizes(rng: np.random.Generator, types: Sequence[DocType], n_docs: int, n_chunks: int,
                median_size: float, top10_share: float, icc: float, deff: float | None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Document sizes (:func:`_sizes`) dealt to documents ranked by ``size_scale + N(0, 1)`` (one draw a
    document), and each document's type index."""
    sumsq_ratio = ((deff - 1) / icc + 1) if deff is not None else 0.0
    sizes_sorted = _sizes(n_docs, n_chunks, median_size, top10_share, sumsq_ratio)
    type_idx = np.repeat(np.arange(len(types)), [t.n_docs for t in types])
    scale = np.array([t.size_scale for t in types])[type_idx]
    order = np.argsort(scale + rng.standard_normal(n_docs), kind="stable")
    sizes = np.empty(n_docs, dtype=np.int64)
    sizes[order] = sizes_sorted
    return sizes, type_idx


def _realiser(rng: np.random.Generator, sizes: np.ndarray, rel_rate: np.ndarray, n_docs: int
              ) -> tuple[Callable[[np.ndarray], tuple[np.ndarray, dict[str, float]]], np.ndarray]:
    """The outcomes and figures for a parameter vector ``theta``, and each document's first chunk.

    Common random numbers: the uniforms and innovations are drawn once here, so every calibration step
    reuses them."""
    never = rel_rate <= 0
    size_z = stats.norm.ppf((stats.rankdata(sizes) - 0.5) / n_docs)
    u_zero = rng.random(n_docs)
    e_rate = rng.standard_normal(n_docs)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    innov = rng.standard_normal(int(sizes.sum()))
    doc_codes = np.repeat(np.arange(n_docs), sizes)

    def realise(theta: np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
        a, pi, log_phi, r_s, r_ar = theta
        phi = np.exp(log_phi)
        mean = np.clip(a * rel_rate / (1 - pi), 1e-4, 0.95)
        u = stats.norm.cdf(r_s * size_z + np.sqrt(1 - r_s**2) * e_rate)
        p = special.betaincinv(mean * phi, (1 - mean) * phi, u)
        p = np.where((u_zero < pi) | never, 0.0, p)
        z = _ar1_latent(innov, starts, sizes, r_ar)
        thr = stats.norm.ppf(np.clip(p, 1e-12, 1 - 1e-12))
        vals = (z < thr[doc_codes]).astype(float)
        n, s = _doc_stats(doc_codes, vals, n_docs)
        figs = {
            "micro": s.sum() / n.sum(),
            "macro": float(np.mean(s / n)),
            "icc": _icc_anova(n, s, s),
            "never_hit_share": float(np.mean(s == 0)),
            "lag1": _lag1(vals, doc_codes, s / n),
        }
        return vals, figs

    return realise, starts


def _population_frame(values: np.ndarray, sizes: np.ndarray, starts: np.ndarray, types: Sequence[DocType],
                      type_idx: np.ndarray, n_docs: int) -> pd.DataFrame:
    """The per-chunk table: ``query-id``, ``doc_id``, ``doc_type``, ``chunk_index``, ``value``."""
    doc_codes = np.repeat(np.arange(n_docs), sizes)
    doc_ids = np.array([f"twin_{i:04d}" for i in range(n_docs)])
    chunk_index = np.arange(len(values)) - np.repeat(starts, sizes)
    type_names = np.array([t.name for t in types])
    return pd.DataFrame(
        {
            "query-id": [f"{d}#{c:04d}" for d, c in zip(doc_ids[doc_codes], chunk_index)],
            "doc_id": doc_ids[doc_codes],
            "doc_type": type_names[type_idx][doc_codes],
            "chunk_index": chunk_index.astype(np.int64),
            "value": values,
        }
    )


def _calibrate(theta, realise, micro, macro, icc, never_hit_share, lag1, iters: int = 60) -> np.ndarray:
    """Damped fixed-point updates: each parameter answers mainly to one target figure."""
    best, best_err = theta.copy(), np.inf
    for _ in range(iters):
        _, f = realise(theta)
        err = np.array([
            (f["macro"] - macro) / 0.003,
            (f["never_hit_share"] - never_hit_share) / 0.03,
            (f["icc"] - icc) / 0.02,
            (f["micro"] - micro) / 0.003,
            ((f["lag1"] - lag1) / 0.03) if lag1 is not None else 0.0,
        ])
        score = float(np.max(np.abs(err)))
        if score < best_err:
            best, best_err = theta.copy(), score
        if score < 0.25:
            break
        a, pi, log_phi, r_s, r_ar = theta
        a *= (macro / max(f["macro"], 1e-6)) ** 0.8
        pi = float(np.clip(pi + 0.8 * (never_hit_share - f["never_hit_share"]), 0.0, 0.95))
        log_phi = float(np.clip(log_phi + 2.0 * (f["icc"] - icc), np.log(0.05), np.log(500)))
        r_s = float(np.clip(r_s + 4.0 * (micro - f["micro"]), -0.95, 0.95))
        if lag1 is not None:
            r_ar = float(np.clip(r_ar + 1.0 * (lag1 - f["lag1"]), 0.0, 0.98))
        theta = np.array([a, pi, log_phi, r_s, r_ar])
    return best


def _resolve_types(types: Sequence[DocType] | None, n_docs: int) -> list[DocType]:
    if types is None:
        types = list(DEFAULT_DOC_TYPES)
        total = sum(t.n_docs for t in types)
        if total != n_docs:  # rescale the default proportions
            counts = np.floor(np.array([t.n_docs for t in types]) * n_docs / total).astype(int)
            counts[np.argmax(counts)] += n_docs - counts.sum()
            types = [DocType(t.name, int(c), t.rate, t.size_scale) for t, c in zip(types, counts) if c > 0]
    types = list(types)
    if not types or any(not isinstance(t, DocType) for t in types):
        raise RagcovError("`types` must be a non-empty sequence of DocType(name, n_docs, rate, size_scale).")
    if sum(t.n_docs for t in types) != n_docs:
        raise RagcovError(
            f"`types` hold {sum(t.n_docs for t in types)} documents but `n_docs`={n_docs}; make the counts "
            "add up to `n_docs`."
        )
    if any(t.rate < 0 or t.n_docs < 0 for t in types):
        raise RagcovError("every DocType needs `n_docs` >= 0 and `rate` >= 0.")
    if all(t.rate == 0 for t in types):
        raise RagcovError("at least one DocType needs `rate` > 0.")
    return types


def _simulate_iv(n_docs, n_chunks, median_size, top10_share, micro, macro, icc, never_hit_share, lag1, deff):
    if not (isinstance(n_docs, (int, np.integer)) and n_docs >= 10):
        raise RagcovError(f"`n_docs` must be an integer >= 10; got {n_docs!r}.")
    if not (isinstance(n_chunks, (int, np.integer)) and n_chunks >= 2 * n_docs):
        raise RagcovError(
            f"`n_chunks` must be an integer >= 2·n_docs ({2 * n_docs}): every document has at least 2 chunks; "
            f"got {n_chunks!r}."
        )
    for name, v in {"top10_share": top10_share, "micro": micro, "macro": macro, "icc": icc,
                    "never_hit_share": never_hit_share}.items():
        if not (0 < float(v) < 1):
            raise RagcovError(f"`{name}` must be in (0, 1); got {v!r}.")
    if lag1 is not None and not (0 <= lag1 < 0.9):
        raise RagcovError(f"`lag1` must be in [0, 0.9) or None; got {lag1!r}.")
    if deff is not None and deff < 1:
        raise RagcovError(f"`deff` must be >= 1 or None; got {deff!r}.")
    if median_size <= 2:
        raise RagcovError(f"`median_size` must be > 2 (documents have at least 2 chunks); got {median_size!r}.")
