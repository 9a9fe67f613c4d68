"""Result objects of the evaluator, in the style of ``scipy.stats`` results.

Each has named attributes, ``confidence_interval()`` where an interval exists, a readable ``repr``
and ``to_dict()`` / ``to_frame()`` / ``to_json()``. Non-finite numbers become ``null`` in JSON.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ragcov_data._atomic import atomic_write
from ragcov_data._json import to_jsonable
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.eval.estimates import marks
from ragcov_data.eval.estimates.concentration import plural
from ragcov_data.eval.estimates._kernels import METHODS
from ragcov_data.eval.outcomes.context import context_line


#: The one signature of ``confidence_interval`` on every result that holds intervals: which row (estimator, method,
#: group), each optional, returning :class:`ConfidenceInterval`.
CI_SIGNATURE = ("estimator", "method", "group")


class ConfidenceInterval(NamedTuple):
    """Lower and upper bound of an interval (raw: may extend beyond [0, 1])."""

    low: float
    high: float


def _clean(obj: Any) -> Any:
    """JSON-safe copy (:func:`ragcov_data._json.to_jsonable`, the one JSON cleaning)."""
    return to_jsonable(obj)


def _fmt(x: float, nd: int = 4) -> str:
    if isinstance(x, (list, tuple)):  # flag names
        return ",".join(map(str, x)) or "none"
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}g}"


#: Result class name -> class: the one registry :func:`from_json` reads a result's JSON back through.
RESULT_TYPES: dict[str, type] = {}


class _JsonMixin:
    """``to_json`` / ``from_json`` for every result: JSON text of ``to_dict()`` (NaN/inf as null, the class
    named in ``result_type``), optionally written, and read back into the same class."""

    _json_indent: int | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        RESULT_TYPES[cls.__name__] = cls

    def to_json(self, path: str | None = None, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict` (plus ``result_type``); also written (atomically) to ``path`` when given."""
        kwargs.setdefault("indent", self._json_indent)
        data = _clean(self.to_dict())  # type: ignore[attr-defined]
        if isinstance(data, dict):
            data.setdefault("result_type", type(self).__name__)
        text = json.dumps(data, **kwargs)
        if path is not None:
            atomic_write(path, text + "\n")
        return text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Any:
        """The result from its :meth:`to_dict` form: the dataclass fields read back (records into DataFrames,
        lists into tuples where the field is a tuple); keys derived for readers (``unit``, ``width``...) ignored."""
        return _from_fields(cls, data)

    @classmethod
    def from_json(cls, source: str | os.PathLike) -> Any:
        """Read a result written by :meth:`to_json` (a path or the JSON text). On the base class, or when the
        file names its class, the class comes from ``result_type`` through :data:`RESULT_TYPES`."""
        data = _read_json(source)
        name = data.get("result_type") if isinstance(data, dict) else None
        target = RESULT_TYPES.get(name) if name else None
        if target is None:
            if cls is _JsonMixin:
                raise RagcovError(f"{_where(source)} names no result type ({name!r}); known: "
                                  f"{', '.join(sorted(RESULT_TYPES))}. Read it with the result class itself.")
            target = cls
        elif cls is not _JsonMixin and not issubclass(target, cls):
            raise RagcovError(f"{_where(source)} holds a {name}, not a {cls.__name__}; read it with "
                              f"{name}.from_json or ragcov_data.eval.from_json.")
        return target.from_dict(data)


def _where(source: Any) -> str:
    return f"{str(source)!r}" if isinstance(source, os.PathLike) or (
        isinstance(source, str) and not source.lstrip().startswith("{")) else "the JSON text"


def _read_json(source: str | os.PathLike) -> Any:
    text = source
    if isinstance(source, os.PathLike) or not str(source).lstrip().startswith("{"):
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise InputFileError(f"cannot read the result file {str(path)!r}: {e.strerror or e}.") from e
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputFileError(f"{_where(source)} is not JSON (line {e.lineno}, column {e.colno}: {e.msg}); pass "
                             "a file written by a result's to_json / a ragcov --json option.") from e


def _from_fields(cls: type, data: Mapping[str, Any]) -> Any:
    """Build dataclass ``cls`` from a dict, typed by its annotations (strings under postponed evaluation)."""
    import dataclasses

    kwargs: dict[str, Any] = {}
    missing = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
                missing.append(f.name)
            continue
        value, kind = data[f.name], str(f.type)
        if "DataFrame" in kind and not isinstance(value, pd.DataFrame):
            value = pd.DataFrame.from_records(value) if value is not None else pd.DataFrame()
        elif kind.startswith("tuple") and isinstance(value, list):
            value = tuple(value)
        elif kind == "float" and value is None:
            value = float("nan")  # JSON null stands for a non-finite number
        kwargs[f.name] = value
    if missing:
        raise RagcovError(f"the JSON of a {cls.__name__} lacks {', '.join(missing)}; it was not written by "
                          f"{cls.__name__}.to_json.")
    return cls(**kwargs)


def per_cluster(per_query: pd.DataFrame) -> pd.DataFrame:
    """``cluster, n, sum, rate`` per cluster of the ``per_query`` table (first-seen order)."""
    pdoc = per_query.groupby("cluster", sort=False)["value"].agg(n="size", sum="sum").reset_index()
    pdoc["n"] = pdoc["n"].astype(int)
    pdoc["rate"] = pdoc["sum"] / pdoc["n"]
    return pdoc


def from_json(source: str | os.PathLike) -> Any:
    """Any ragcov result read back from its JSON (path or text), as the class its ``result_type`` names."""
    return _JsonMixin.from_json(source)


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
        Degenerate or naive conditions (see ``ragcov_data.eval.estimates._kernels.FLAGS``).
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

    def confidence_interval(self, estimator: str | None = None, method: str | None = None,
                            group: str | None = None) -> ConfidenceInterval:
        """The raw interval as ``ConfidenceInterval(low, high)``.

        The signature is every result's (:data:`CI_SIGNATURE`); a result of one row only checks that the
        estimator and method asked for are its own (there are no groups)."""
        for name, asked, have in (("estimator", estimator, self.estimator), ("method", method, self.method)):
            if asked is not None and asked != have:
                raise RagcovError(f"this interval is {self.estimator}/{self.method}; asked for {name}={asked!r}. "
                                  "Compute that one with ragcov_data.eval.interval(...).")
        if group is not None:
            raise RagcovError(f"an IntervalResult has no groups; asked for group={group!r}.")
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
        One-way ANOVA intraclass correlation, as estimated (may be negative: flag ``negative_icc``).
    deff : float
        ``1 + ((cv^2 + 1) * mean_size - 1) * max(icc, 0)``: a negative ICC is truncated at 0, so
        DEFF >= 1 (see :func:`ragcov_data.eval.design_effect`).
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
    flags : tuple of str
        ``negative_icc`` (ICC < 0, truncated at 0 for DEFF and N_eff), ``icc_undefined`` (every
        document has one query: ICC is nan, DEFF = 1), ``zero_variance`` (all values equal: nan),
        ``k_lt_2`` (one document: nan).
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
    flags: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["flags"] = list(self.flags)
        return d

    def to_frame(self) -> pd.DataFrame:
        d = self.to_dict()
        d["flags"] = ",".join(self.flags)
        q = d.pop("quantiles")
        d.update({f"rate_{k}": v for k, v in q.items()})
        return pd.DataFrame([d])

    def __repr__(self) -> str:
        return (f"DesignEffectResult(icc={_fmt(self.icc)}, deff={_fmt(self.deff)}, cv={_fmt(self.cv)}, "
                f"mean_size={_fmt(self.mean_size)}, n_eff={_fmt(self.n_eff)}, N={self.n_obs}, "
                f"K={self.n_clusters}, lag1_autocorr={_fmt(self.lag1_autocorr)}, "
                f"share_never_hit={_fmt(self.share_never_hit)}"
                + (f", flags={self.flags}" if self.flags else "") + ")")


#: Unit named by each cluster column, for printed text ("per document", "per source", "per query").
UNIT_NAMES = {"doc_id": "document", "source_key": "source", "_id": "query"}

#: Method printed by default for each estimator, in order of preference (the first one computed):
#: CR2 for micro, t for macro and for the singleton-design mean (the README and report conventions;
#: ``ragcov_data.eval.recommend`` verifies a method by coverage at a given K).
RECOMMENDED = {
    "micro": ("cr2", "cr1", "bootstrap_t", "wild_cluster", "cluster_bootstrap", "t"),
    "macro": ("t", "cr2", "cr1", "bootstrap_t", "wild_cluster", "cluster_bootstrap"),
    "mean": ("t", "cr2", "cr1", "bootstrap_t", "wild_cluster", "cluster_bootstrap"),
}


#: The order on a document-sampled task (K of N documents drawn without replacement, the finite population
#: given): for micro, ``known_sizes`` (every population document's size in the variance, where the sample
#: record has them), then the bootstrap-t. Measured on the ANEEL census (``benchmarks/bench_coverage_sampled.py``),
#: both cover more than CR2, ``known_sizes`` at every K from 40 (one document holds 18% of the queries; a
#: sample that missed it cannot see it, the sizes can).
RECOMMENDED_SAMPLED = {**RECOMMENDED, "micro": ("known_sizes", "bootstrap_t", "cr2", "cr1", "wild_cluster",
                                                 "cluster_bootstrap", "t")}


def recommended_order(estimator: str, sampled: bool = False) -> tuple[str, ...]:
    """Methods of ``estimator`` in order of preference (:data:`RECOMMENDED`, or :data:`RECOMMENDED_SAMPLED`
    on a document-sampled task)."""
    return (RECOMMENDED_SAMPLED if sampled else RECOMMENDED).get(estimator, ())


def _status_of(row: Any) -> str | None:
    """A row's ``verified_status`` (older tables: from ``verified``); None where no check ran (:mod:`.marks`)."""
    return marks.status_of(row)


def _naive(method: str) -> bool:
    return bool(METHODS.get(method, {}).get("naive", False))


def mark_recommended(estimates: pd.DataFrame, sampled: bool = False) -> pd.DataFrame:
    """``estimates`` with a boolean ``recommended`` column: per (group,) estimator, among the methods of
    :func:`recommended_order` whose check passed (``verified_status`` "verified"), the narrowest interval
    (ties: the earlier in the order); if none passed, the first of the order not shown to fall short
    ("unverifiable" or unchecked), else the first computed. The checks of one design run every method on the
    same replicates (:mod:`.verify`), so a method never wins by a noisier check. Every view (the printed
    table, ``interval()``, the chunking comparison, the JSON) reads this column."""
    out = estimates.copy()
    out["recommended"] = False
    if out.empty:
        return out
    keys = ["group", "estimator"] if "group" in out.columns else ["estimator"]
    checked = "verified" in out.columns or "verified_status" in out.columns
    for _, sub in out.groupby(keys, sort=False):
        order = recommended_order(str(sub["estimator"].iloc[0]), sampled)
        methods = list(sub["method"])
        pick = next((m for m in order if m in methods), None)
        if checked:
            rows = {m: sub.iloc[methods.index(m)] for m in order if m in methods}
            status = {m: _status_of(r) for m, r in rows.items()}
            passed = [m for m in rows if status[m] == "verified" and not _naive(m)]
            if passed:
                width = {m: float(rows[m]["high"] - rows[m]["low"]) if "high" in rows[m] else 0.0 for m in passed}
                pick = min(passed, key=lambda m: (width[m] if math.isfinite(width[m]) else math.inf,
                                                  order.index(m)))
            else:
                pick = next((m for m in rows if status[m] != "not_verified"), pick)
        if pick is not None:
            out.loc[sub.index[[m == pick for m in methods]][:1], "recommended"] = True
    return out


def unit_of(cluster: str, singleton: bool = False) -> str:
    """Word for the sampled unit: ``"query"`` when every cluster holds one query, else by column."""
    return "query" if singleton else UNIT_NAMES.get(cluster, str(cluster))


#: Why ``compare`` and ``leaderboard`` give one pair different intervals (both print it).
PAIR_ALONE = ("this interval holds for this one pair alone; `ragcov leaderboard` gives each pair a simultaneous "
              "interval that holds for all its pairs together, so it is wider for the same pair.")


def recommended_rows(estimates: pd.DataFrame) -> pd.DataFrame:
    """One row per (group,) estimator: the row marked ``recommended`` (:func:`mark_recommended`, applied here
    to a table that lacks the column); all its rows when none was computed."""
    if estimates.empty:
        return estimates
    marked = estimates if "recommended" in estimates.columns else mark_recommended(estimates)
    keys = ["group", "estimator"] if "group" in marked.columns else ["estimator"]
    keep = []
    for _, sub in marked.groupby(keys, sort=False):
        rec = sub["recommended"].astype(bool).to_numpy()
        keep.extend(sub.index[rec][:1] if rec.any() else sub.index)
    return estimates.loc[sorted(keep)]


def _select(estimates: pd.DataFrame, methods: Any) -> pd.DataFrame:
    if methods is None or methods == "all":
        return estimates
    if methods == "recommended":
        return recommended_rows(estimates)
    wanted = [methods] if isinstance(methods, str) else list(methods)
    return estimates[estimates["method"].isin(wanted)]


def _estimates_table(df: pd.DataFrame) -> str:
    show = df.copy()
    if "clipped" in show.columns:  # print the interval cut to the values' range, marked (eval/_bounds.py)
        show["low"], show["high"] = show["low_bounded"], show["high_bounded"]
        show["width"] = show["high"] - show["low"]
        if "flags" in show.columns:
            show["flags"] = [(f + "," if f and c else f) + ("clipped" if c else "")
                             for f, c in zip(show["flags"], show["clipped"])]
    show["method"] = [m + (" (naive)" if nv else "") for m, nv in zip(show["method"], show["naive"])]
    show["check"] = [marks.mark(r) for _, r in df.iterrows()]  # the check's mark, explained under the table
    cols = [c for c in ("group", "estimator", "method", "estimate", "se", "df", "low", "high", "width",
                        "check", "flags") if c in show.columns
            and not (c in ("flags", "check") and not show[c].astype(bool).any())]
    # undefined numbers (a bootstrap has no df) print as "-", never "nan"
    return show[cols].to_string(index=False, na_rep="-", float_format=lambda x: f"{x:.4f}")


def _with_marks(estimates: pd.DataFrame) -> pd.DataFrame:
    """The estimates table for JSON: each row's ``mark`` beside its ``verified_status`` (:mod:`.marks`)."""
    if estimates.empty or not ({"verified", "verified_status"} & set(estimates.columns)):
        return estimates
    return estimates.assign(mark=[marks.mark(r) for _, r in estimates.iterrows()])


def _row_label(r: Any) -> str:
    """``micro cr2`` (``G1 micro cr2`` in a group): how a footnote names an estimates row."""
    g = r.get("group") if hasattr(r, "get") else None
    return (f"{g} " if isinstance(g, str) and g != "__all__" else "") + f"{r['estimator']} {r['method']}"


def _notes(shown: pd.DataFrame, full: pd.DataFrame, unit: str, methods: Any, level: float = 0.95) -> list[str]:
    """Footnotes that apply to the rows shown: naive contrasts, the default selection, each mark of the
    check (:mod:`.marks`), raw intervals."""
    out = []
    if methods == "recommended" and len(shown) < len(full):
        out.append("shown: the recommended method per estimator (the narrowest interval whose check at this design "
                   "passed, every method checked on the same replicates; if none passed, the first not shown to "
                   "fall short of: micro cr2, or known_sizes then bootstrap_t on a document-sampled task; macro, "
                   "mean: t); every method is in the JSON (CLI: --methods all).")
    if "naive" in shown.columns and shown["naive"].any():
        out.append(f"(naive) = ignores the {unit} clustering; shown only as a contrast.")
    if "mean" in set(shown.get("estimator", ())):
        out.append("mean = one query a cluster: micro and macro are the same number.")
    if "verified" in shown.columns:  # each interval's measured coverage at this design (eval/verify.py)
        out += marks.footnotes(((_row_label(r), r) for _, r in shown.iterrows()), level)
        if shown["verified"].isna().all():
            out.append("intervals not verified at this design (stratified or per-stratum population).")
    if "no_variation" in shown.columns:
        for r in shown[shown["no_variation"].astype(bool)].itertuples(index=False):
            out.append(f"{r.estimator} {r.method}: {r.no_variation} (zero_variance: the interval is the point).")
    if "clipped" in shown.columns:
        out.append("Intervals are cut to the range of the values (flag clipped; raw endpoints: low, high in "
                   "the JSON)." if shown["clipped"].any() else "Intervals are raw (none reaches the range of the values).")
    else:
        out.append("Intervals are raw (not clipped).")
    return out


def _diag_text(d: dict[str, Any]) -> str:
    """``k=v`` for the finite numbers of ``d`` (undefined ones are left out) and non-empty flag lists."""
    parts = []
    for k, v in d.items():
        if isinstance(v, (list, tuple)) and v:
            parts.append(f"{k}={','.join(map(str, v))}")
        elif isinstance(v, (int, float, np.number)) and not isinstance(v, bool) and math.isfinite(float(v)):
            parts.append(f"{k}={_fmt(v)}")
    return ", ".join(parts)


def _find_row(e: pd.DataFrame, estimator: str | None, method: str | None, group: str | None) -> pd.Series:
    if "group" in e.columns:
        e = e[e["group"] == (group if group is not None else "__all__")]
    if estimator is None:
        estimator = "micro" if (e["estimator"] == "micro").any() else "mean"
    sub = e[e["estimator"] == estimator]
    if method is None and "recommended" in sub.columns and sub["recommended"].astype(bool).any():
        method = str(sub.loc[sub["recommended"].astype(bool), "method"].iloc[0])
    if method is None:
        method = next((m for m in RECOMMENDED.get(estimator, ()) if (sub["method"] == m).any()), "cr2")
    sub = sub[sub["method"] == method]
    if sub.empty:
        have = sorted(set(map(tuple, e[["estimator", "method"]].to_numpy().tolist())))
        raise RagcovError(f"no estimate for estimator={estimator!r}, method={method!r}, group={group!r}; "
                          f"available (estimator, method): {have}.")
    return sub.iloc[0]


def chosen_unit_words(cluster: str, info: Mapping[str, Any] | None) -> str:
    """``; chosen (cluster='_id'): the task's unit is the topic`` where the unit used is not the task's own
    (``info["task_cluster"]``, read from its queries columns), else ``""``."""
    own = (info or {}).get("task_cluster")
    if not own or own == cluster:
        return ""
    return f"; chosen (cluster={cluster!r}): the task's unit is the {unit_of(own)}"


def _unit_line(unit: str, n_clusters: int, n_queries: int, singleton: bool, estimates: pd.DataFrame,
               per_query: pd.DataFrame, chosen: str = "") -> str:
    """``unit: source (100 sources, 150 queries); groups G1, G2, G3: one query a cluster (mean, per query)``;
    ``chosen`` (:func:`chosen_unit_words`) says where the unit is not the task's own."""
    if singleton:
        return f"unit: query ({n_queries} queries, each its own cluster){chosen}"
    line = f"unit: {unit} ({n_clusters} {plural(unit)}, {n_queries} queries){chosen}"
    if "group" in estimates.columns and "group" in per_query.columns:
        single = [str(g) for g, sub in per_query.groupby("group", sort=False) if sub["cluster"].is_unique]
        if single:
            line += f"; group{'s' if len(single) > 1 else ''} {', '.join(single)}: one query a cluster (mean, per query)"
    return line


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
        naive`` (``naive`` marks the contrasts that ignore clustering). The estimators are ``micro``
        and ``macro``, or the single ``mean`` where every cluster holds one query.
    diagnostics : dict
        ``icc, deff, cv, mean_size, n_eff, lag1_autocorr, share_never_hit, quantiles`` (overall), only
        those defined for the design: ``mean`` and ``quantiles`` alone when every cluster holds one query,
        no ``lag1_autocorr`` without a within-cluster order, ``share_all_zero`` in place of
        ``share_never_hit`` when the unit is not the document.
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

    def interval(self, estimator: str | None = None, method: str | None = None,
                 group: str | None = None) -> ConfidenceInterval:
        """Raw interval of one row of :attr:`estimates`.

        ``estimator`` defaults to ``micro`` (``mean`` when every cluster holds one query) and ``method``
        to its recommended one (the ``recommended`` row: :data:`RECOMMENDED`, cr2 for micro and t for macro and
        mean, or :data:`RECOMMENDED_SAMPLED` on a document-sampled task, known_sizes then bootstrap_t for micro).
        """
        row = self._row(estimator, method, group)
        return ConfidenceInterval(float(row["low"]), float(row["high"]))

    def confidence_interval(self, estimator: str | None = None, method: str | None = None,
                            group: str | None = None) -> ConfidenceInterval:
        """The raw interval of one estimates row: :meth:`interval` under every result's one signature."""
        return self.interval(estimator, method, group)

    def _row(self, estimator: str | None, method: str | None, group: str | None) -> pd.Series:
        return _find_row(self.estimates, estimator, method, group)

    @property
    def singleton(self) -> bool:
        """Every cluster holds exactly one query (overall): one estimator, ``mean``."""
        return bool(len(self.per_document)) and bool((self.per_document["n"] == 1).all())

    @property
    def unit(self) -> str:
        """The sampled unit in words: ``document``, ``source``, ``query`` (or the cluster column)."""
        return unit_of(self.cluster, self.singleton)

    def to_frame(self) -> pd.DataFrame:
        """The estimates table (one row per estimator × method)."""
        return self.estimates.copy()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "EvaluationResult":
        """Read back from :meth:`to_dict`; ``per_document`` is recomputed from the ``per_query`` records."""
        data = dict(data)
        data["per_document"] = per_cluster(pd.DataFrame.from_records(data.get("per_query") or [],
                                                                     columns=["query-id", "cluster", "value"]))
        return _from_fields(cls, data)

    def to_dict(self) -> dict[str, Any]:
        """Settings, ``estimates`` (every computed row), ``diagnostics``, ``info`` and ``per_query``
        (records ``query-id, cluster, value [, group]``, readable by ``ragcov coverage`` / ``plan``)."""
        pq_cols = [c for c in ("query-id", "cluster", "value", "group") if c in self.per_query.columns]
        return {
            "metric": self.metric, "tie_policy": self.tie_policy,
            "relevance_threshold": self.relevance_threshold, "level": self.level, "cluster": self.cluster,
            "unit": self.unit, "n_queries": int(len(self.per_query)), "n_clusters": int(len(self.per_document)),
            # documents in the population the clusters were drawn from (None: treated as infinite)
            "population_clusters": (self.info or {}).get("population_clusters"),
            "estimates": _with_marks(self.estimates), "diagnostics": self.diagnostics, "info": self.info,
            "per_query": self.per_query[pq_cols],
        }

    def summary(self, methods: str | Sequence[str] | None = "recommended") -> str:
        """Human-readable table of estimates and diagnostics, worded by the sampled unit: what ``ragcov eval``
        prints.

        ``methods``: ``"recommended"`` (default: one row per estimator, see :func:`recommended_rows`), ``"all"``
        (every computed row) or method names to show. Each row carries its check's mark (:mod:`.marks`).
        """
        d = self.diagnostics
        unit = self.unit
        shown = _select(self.estimates, methods)
        lines = [
            f"metric={self.metric} tie_policy={self.tie_policy} relevance_threshold={self.relevance_threshold} "
            f"cluster={self.cluster} level={self.level} N={len(self.per_query)} K={len(self.per_document)}",
            _unit_line(unit, len(self.per_document), len(self.per_query), self.singleton, self.estimates,
                       self.per_query, chosen_unit_words(self.cluster, self.info)),
            _estimates_table(shown),
            *_notes(shown, self.estimates, unit, methods, self.level),
        ]
        diag = _diag_text(d)
        if diag:
            lines.append(f"diagnostics (per {unit}): {diag}")
        share = (self.info or {}).get("top_tie_share")
        if share is not None and "passages" not in (self.info or {}):  # a passage run is ordered by its ranks
            lines.append(f"top score tied in {share:.1%} of queries (tie policy {self.tie_policy!r} decides them)")
        words = context_line(self.info or {})
        if words:
            lines.append(words)
        lines += [f"notice: {n}" for n in (self.info or {}).get("notices", [])]
        if isinstance(d.get("quantiles"), dict):
            what = "rate" if unit == "document" else "value" if unit == "query" else "mean"
            lines.append(f"per-{unit} {what} quantiles: " + ", ".join(f"{k}={_fmt(v, 3)}" for k, v in d["quantiles"].items()))
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
        Share of clusters (documents, sources) where both runs have the identical mean (historical
        name; JSON also carries it as ``share_clusters_tied``).
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

    @property
    def cluster(self) -> str:
        """Queries column of the sampled unit (``info["cluster"]``)."""
        return str((self.info or {}).get("cluster", "cluster"))

    @property
    def n_clusters(self) -> int:
        return int(self.per_query["cluster"].nunique())

    @property
    def singleton(self) -> bool:
        """Every cluster holds exactly one query: one estimator, ``mean``; no per-cluster ties to report."""
        return bool(len(self.per_query)) and self.n_clusters == len(self.per_query)

    @property
    def unit(self) -> str:
        return unit_of(self.cluster, self.singleton)

    def interval(self, estimator: str | None = None, method: str | None = None,
                 group: str | None = None) -> ConfidenceInterval:
        """Raw interval of the mean difference (defaults as :meth:`EvaluationResult.interval`)."""
        row = _find_row(self.estimates, estimator, method, group)
        return ConfidenceInterval(float(row["low"]), float(row["high"]))

    def confidence_interval(self, estimator: str | None = None, method: str | None = None,
                            group: str | None = None) -> ConfidenceInterval:
        """The raw interval of the mean difference: :meth:`interval` under every result's one signature."""
        return self.interval(estimator, method, group)

    def to_dict(self) -> dict[str, Any]:
        """Settings, counts, ``estimates``, ``info`` and ``per_query`` (records ``query-id, cluster, value_a,
        value_b, diff [, group]``, the pilot ``ragcov plan --difference`` reads)."""
        pq_cols = [c for c in ("query-id", "cluster", "value_a", "value_b", "diff", "group")
                   if c in self.per_query.columns]
        return {"metric": self.metric, "tie_policy": self.tie_policy, "level": self.level,
                "cluster": self.cluster, "unit": self.unit, "n_queries": int(len(self.per_query)),
                "n_clusters": self.n_clusters, "share_docs_tied": self.share_docs_tied,
                "share_clusters_tied": self.share_docs_tied, "wins": self.wins, "losses": self.losses,
                "ties": self.ties, "estimates": _with_marks(self.estimates), "info": self.info,
                "per_query": self.per_query[pq_cols]}

    def summary(self, methods: str | Sequence[str] | None = "recommended") -> str:
        """Table of the mean difference and the win/loss counts, worded by the sampled unit: what ``ragcov
        compare`` prints (``methods`` as in :meth:`EvaluationResult.summary`: the recommended rows by default)."""
        unit = self.unit
        shown = _select(self.estimates, methods)
        counts = f"query wins/losses/ties: {self.wins}/{self.losses}/{self.ties}"
        if not self.singleton:
            what = "rate" if unit == "document" else "mean"
            counts += f"; {plural(unit)} with identical {what}: {self.share_docs_tied:.1%}"
        info = self.info or {}
        who = (f"A = {info['name_a']}, B = {info['name_b']} (a positive difference favours A)"
               if info.get("name_a") else "")
        return "\n".join([
            f"paired difference (A - B), metric={self.metric} level={self.level} N={len(self.per_query)} "
            f"cluster={self.cluster} K={self.n_clusters}",
            *([who] if who else []),
            _unit_line(unit, self.n_clusters, len(self.per_query), self.singleton, self.estimates, self.per_query,
                       chosen_unit_words(self.cluster, self.info)),
            _estimates_table(shown),
            *_notes(shown, self.estimates, unit, methods, self.level),
            counts,
            *[x for x in [context_line(self.info or {})] if x],
            *[f"notice: {n}" for n in (self.info or {}).get("notices", [])],
            PAIR_ALONE,
        ])

    def __repr__(self) -> str:
        return f"ComparisonResult(metric={self.metric!r})\n{self.summary()}"
