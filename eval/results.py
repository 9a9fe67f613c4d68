"""Result objects of the evaluator, in the style of ``scipy.stats`` results.

Each has named attributes, ``confidence_interval()`` where an interval exists, a readable ``repr``
and ``to_dict()`` / ``to_frame()`` / ``to_json()``. Non-finite numbers become ``null`` in JSON.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd


class ConfidenceInterval(NamedTuple):
    """Lower and upper bound of an interval (raw: may extend beyond [0, 1])."""

    low: float
    high: float


def _clean(obj: Any) -> Any:
    """JSON-safe copy: numpy scalars to Python, non-finite floats to None, frames to records."""
    if isinstance(obj, pd.DataFrame):
        return [_clean(r) for r in obj.to_dict(orient="records")]
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def _fmt(x: float, nd: int = 4) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}g}"


class _JsonMixin:
    """``to_json`` for every result: JSON text of ``to_dict()`` (NaN/inf as null), optionally written."""

    _json_indent: int | None = None

    def to_json(self, path: str | None = None, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict`; also written (atomically) to ``path`` when given."""
        kwargs.setdefault("indent", self._json_indent)
        text = json.dumps(_clean(self.to_dict()), **kwargs)  # type: ignore[attr-defined]
        if path is not None:
            from ragcov_data._atomic import atomic_write

            atomic_write(path, text + "\n")
        return text


@dataclass(frozen=True)
class IntervalResult(_JsonMixin):
    """Estimate and interval of one estimator by one method.

    Attributes
    ----------
    estimate : float
        Micro or macro average.
    se : float
        Standard error (bootstrap: sd of the replicates; bootstrap-t: the studentizing SE).
    df : float
        Degrees of freedom of the t reference (inf for normal quantiles, nan where none applies).
    low, high : float
        Raw interval bounds (not clipped to [0, 1]; see :meth:`clipped`).
    estimator, method : str
    level : float
    n_clusters, n_obs : int
        Number of documents (clusters) and of queries.
    flags : tuple of str
        Degenerate or naive conditions (see ``ragcov_data.eval._core.FLAGS``).
    naive : bool
        The method ignores the document clustering (kept only as a contrast).
    """

    estimate: float
    se: float
    df: float
    low: float
    high: float
    estimator: str
    method: str
    level: float
    n_clusters: int
    n_obs: int
    flags: tuple[str, ...] = ()
    naive: bool = False

    def confidence_interval(self) -> ConfidenceInterval:
        """The raw interval as ``ConfidenceInterval(low, high)``."""
        return ConfidenceInterval(self.low, self.high)

    def clipped(self) -> ConfidenceInterval:
        """The interval intersected with [0, 1] (a labelled view; the raw interval is the result)."""
        return ConfidenceInterval(max(0.0, min(1.0, self.low)), max(0.0, min(1.0, self.high)))

    @property
    def width(self) -> float:
        return self.high - self.low

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["flags"] = list(self.flags)
        d["width"] = self.width
        return d

    def to_frame(self) -> pd.DataFrame:
        d = self.to_dict()
        d["flags"] = ",".join(self.flags)
        return pd.DataFrame([d])

    def __repr__(self) -> str:
        flags = f", flags={self.flags}" if self.flags else ""
        return (f"IntervalResult(estimator={self.estimator!r}, method={self.method!r}, "
                f"estimate={_fmt(self.estimate)}, se={_fmt(self.se)}, df={_fmt(self.df)}, "
                f"ci=({_fmt(self.low)}, {_fmt(self.high)}), level={self.level}, "
                f"K={self.n_clusters}, N={self.n_obs}{flags})")


@dataclass(frozen=True)
class DesignEffectResult(_JsonMixin):
    """Design diagnostics of per-query values clustered by document.

    Attributes
    ----------
    icc : float
        One-way ANOVA intraclass correlation (may be negative).
    deff : float
        ``1 + ((cv^2 + 1) * mean_size - 1) * icc``.
    cv : float
        Coefficient of variation of document sizes (ddof = 0).
    mean_size : float
        Mean queries per document.
    n_eff : float
        ``N / deff``.
    n_obs, n_clusters : int
    lag1_autocorr : float
        Within-document lag-1 autocorrelation of residuals after removing document means (nan when
        no order is known or no document has two queries).
    share_never_hit : float
        Share of documents whose values are all 0.
    quantiles : dict
        Quantiles of the per-document rates (0, 0.1, 0.25, 0.5, 0.75, 0.9, 1).
    """

    icc: float
    deff: float
    cv: float
    mean_size: float
    n_eff: float
    n_obs: int
    n_clusters: int
    lag1_autocorr: float = float("nan")
    share_never_hit: float = float("nan")
    quantiles: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def to_frame(self) -> pd.DataFrame:
        d = self.to_dict()
        q = d.pop("quantiles")
        d.update({f"rate_{k}": v for k, v in q.items()})
        return pd.DataFrame([d])

    def __repr__(self) -> str:
        return (f"DesignEffectResult(icc={_fmt(self.icc)}, deff={_fmt(self.deff)}, cv={_fmt(self.cv)}, "
                f"mean_size={_fmt(self.mean_size)}, n_eff={_fmt(self.n_eff)}, N={self.n_obs}, "
                f"K={self.n_clusters}, lag1_autocorr={_fmt(self.lag1_autocorr)}, "
                f"share_never_hit={_fmt(self.share_never_hit)})")


def _estimates_table(df: pd.DataFrame) -> str:
    show = df.copy()
    show["method"] = [m + (" (naive)" if nv else "") for m, nv in zip(show["method"], show["naive"])]
    cols = [c for c in ("group", "estimator", "method", "estimate", "se", "df", "low", "high", "width",
                        "flags") if c in show.columns]
    return show[cols].to_string(index=False, float_format=lambda x: f"{x:.4f}")


@dataclass
class EvaluationResult(_JsonMixin):
    """Everything :func:`ragcov_data.eval.evaluate` computed for one run.

    Attributes
    ----------
    per_query : DataFrame
        ``query-id``, ``cluster``, ``value`` (and ``group`` with ``by=``).
    per_document : DataFrame
        ``cluster``, ``n``, ``sum``, ``rate``.
    estimates : DataFrame
        One row per (group,) estimator and method: ``estimate, se, df, low, high, width, flags,
        naive`` (``naive`` marks the contrasts that ignore clustering).
    diagnostics : dict
        ``icc, deff, cv, mean_size, n_eff, lag1_autocorr, share_never_hit, quantiles`` (overall).
    metric, tie_policy, relevance_threshold, level, cluster : recorded settings.
    info : dict
        Further recorded facts (run attributes, missing-query handling, n_resamples, seed).
    """

    _json_indent: ClassVar[int] = 2

    per_query: pd.DataFrame
    per_document: pd.DataFrame
    estimates: pd.DataFrame
    diagnostics: dict[str, Any]
    metric: str
    tie_policy: str
    relevance_threshold: int
    level: float
    cluster: str
    info: dict[str, Any] = field(default_factory=dict)

    def interval(self, estimator: str = "micro", method: str = "cr2", group: str | None = None) -> ConfidenceInterval:
        """Raw interval of one row of :attr:`estimates`."""
        row = self._row(estimator, method, group)
        return ConfidenceInterval(float(row["low"]), float(row["high"]))

    def _row(self, estimator: str, method: str, group: str | None) -> pd.Series:
        e = self.estimates
        mask = (e["estimator"] == estimator) & (e["method"] == method)
        if "group" in e.columns:
            mask &= e["group"] == (group if group is not None else "__all__")
        if not mask.any():
            from ragcov_data.errors import RagcovError

            raise RagcovError(f"no estimate for estimator={estimator!r}, method={method!r}, group={group!r}.")
        return e[mask].iloc[0]

    def to_frame(self) -> pd.DataFrame:
        """The estimates table (one row per estimator × method)."""
        return self.estimates.copy()

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric, "tie_policy": self.tie_policy,
            "relevance_threshold": self.relevance_threshold, "level": self.level, "cluster": self.cluster,
            "n_queries": int(len(self.per_query)), "n_clusters": int(len(self.per_document)),
            "estimates": self.estimates, "diagnostics": self.diagnostics, "info": self.info,
        }

    def summary(self) -> str:
        """Human-readable table of estimates and diagnostics."""
        d = self.diagnostics
        lines = [
            f"metric={self.metric} tie_policy={self.tie_policy} relevance_threshold={self.relevance_threshold} "
            f"cluster={self.cluster} level={self.level} N={len(self.per_query)} K={len(self.per_document)}",
            _estimates_table(self.estimates),
            "(naive) = ignores document clustering; shown only as a contrast. Intervals are raw (not clipped).",
            "diagnostics: " + ", ".join(f"{k}={_fmt(v)}" for k, v in d.items() if not isinstance(v, dict)),
        ]
        share = (self.info or {}).get("top_tie_share")
        if share is not None:
            lines.append(f"top score tied in {share:.1%} of queries (tie policy {self.tie_policy!r} decides them)")
        if isinstance(d.get("quantiles"), dict):
            lines.append("per-document rate quantiles: " + ", ".join(f"{k}={_fmt(v, 3)}" for k, v in d["quantiles"].items()))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"EvaluationResult(metric={self.metric!r}, N={len(self.per_query)}, K={len(self.per_document)})\n{self.summary()}"


@dataclass
class ComparisonResult(_JsonMixin):
    """Paired comparison of two runs on the same queries (A minus B).

    Attributes
    ----------
    per_query : DataFrame
        ``query-id``, ``cluster``, ``value_a``, ``value_b``, ``diff``.
    estimates : DataFrame
        Interval for the mean difference by estimator × method (same columns as evaluate).
    share_docs_tied : float
        Share of documents where both runs have the identical per-document rate.
    wins, losses, ties : int
        Per-query counts of ``diff > 0``, ``< 0``, ``== 0``.
    metric, tie_policy, level : recorded settings.
    info : dict
    """

    _json_indent: ClassVar[int] = 2

    per_query: pd.DataFrame
    estimates: pd.DataFrame
    share_docs_tied: float
    wins: int
    losses: int
    ties: int
    metric: str
    tie_policy: str
    level: float
    info: dict[str, Any] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        return self.estimates.copy()

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "tie_policy": self.tie_policy, "level": self.level,
                "share_docs_tied": self.share_docs_tied, "wins": self.wins, "losses": self.losses,
                "ties": self.ties, "estimates": self.estimates, "info": self.info}

    def summary(self) -> str:
        return "\n".join([
            f"paired difference (A - B), metric={self.metric} level={self.level} N={len(self.per_query)}",
            _estimates_table(self.estimates),
            f"query wins/losses/ties: {self.wins}/{self.losses}/{self.ties}; "
            f"documents with identical rate: {self.share_docs_tied:.1%}",
        ])

    def __repr__(self) -> str:
        return f"ComparisonResult(metric={self.metric!r})\n{self.summary()}"
