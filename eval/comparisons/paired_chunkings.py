"""Two chunkings of one acervo, compared honestly: paired by document.

Cutting the same documents two ways (fixed word windows, dispositivos) gives two tasks whose queries
differ, so no query is paired with another. What both share is the sampled unit, the document: each
document has a hit rate under each chunking. The comparison therefore pairs documents:

- **macro**: ``mean_d (p_A(d) - p_B(d))`` over the documents present in both tasks, a t interval on
  ``K - 1`` df (the document-level regression, where CR2 = CR1 = t);
- **micro**: ``S_A/N_A - S_B/N_B`` (each chunking's queries weigh the same, as its own micro does), with
  two intervals: the ratio-estimator linearisation ``u_d = (s_A - m_A n_A)/N_A - (s_B - m_B n_B)/N_B``,
  ``se^2 = K/(K-1) sum u_d^2``, t on ``K - 1`` df (``linearised_t``); and a percentile bootstrap of
  documents carrying both chunkings' queries (``cluster_bootstrap``, the headline: it needs no
  linearisation).

Each chunking's own estimates (its queries, its documents) are reported beside the difference.
Documents present in only one task (e.g. a single dispositivo chunk under one cut, two windows under the
other) are counted and left out of the difference.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np
import pandas as pd
from scipy import stats

from ragcov_data.errors import RagcovError

from ragcov_data.eval.comparisons.verify_family import verify_chunking_differences
from ragcov_data.eval.estimates import _kernels, marks
from ragcov_data.eval.estimates._bounds import clip_table
from ragcov_data.eval.estimates._kernels import check_level, check_resamples
from ragcov_data.eval.estimates.interval import interval
from ragcov_data.eval.estimates.verify import VERIFY_FIELDS
from ragcov_data.eval.estimates.results import ConfidenceInterval, EvaluationResult, RECOMMENDED, _JsonMixin, _fmt

__all__ = ["compare_chunkings", "ChunkingComparison"]

#: The difference reported as ``difference`` (the headline): estimator -> method.
HEADLINE = {"macro": "t", "micro": "cluster_bootstrap"}


@dataclass
class ChunkingComparison(_JsonMixin):
    """Result of :func:`compare_chunkings` (``A - B``).

    Attributes
    ----------
    names : tuple of str
        ``(A, B)``.
    chunkings : DataFrame
        Each chunking's own recommended estimates: ``name, estimator, method, estimate, low, high,
        n_queries, n_documents``.
    differences : DataFrame
        ``estimator, method, estimate, se, df, low, high, n_documents`` of ``A - B`` over the shared
        documents.
    difference : dict
        The headline (macro, t): ``estimate, low, high, method, estimator, n_documents``.
    per_document : DataFrame
        ``doc_id, n_A, rate_A, n_B, rate_B, diff`` for the shared documents.
    only_in : dict
        Documents present in one task only, by chunking name.
    metric, level : recorded settings.
    """

    _json_indent: ClassVar[int] = 2

    names: tuple[str, str]
    chunkings: pd.DataFrame
    differences: pd.DataFrame
    difference: dict[str, Any]
    per_document: pd.DataFrame
    only_in: dict[str, int]
    metric: str
    level: float
    info: dict[str, Any] = field(default_factory=dict)

    def confidence_interval(self, estimator: str | None = None, method: str | None = None,
                            group: str | None = None) -> ConfidenceInterval:
        """Interval of the difference for one estimator (default ``macro``; default method: the headline's).
        No groups: ``group`` is accepted for the one signature of every result and must be None."""
        if group is not None:
            raise RagcovError(f"a chunking comparison has no groups; asked for group={group!r}.")
        estimator = estimator or "macro"
        row = self._row(estimator, method or HEADLINE[estimator])
        return ConfidenceInterval(float(row["low"]), float(row["high"]))

    def _row(self, estimator: str, method: str) -> pd.Series:
        d = self.differences
        m = (d["estimator"] == estimator) & (d["method"] == method)
        if not m.any():
            raise RagcovError(f"no difference for estimator={estimator!r}, method={method!r}; have "
                              f"{list(zip(d['estimator'], d['method']))}.")
        return d[m].iloc[0]

    def to_frame(self) -> pd.DataFrame:
        return self.differences.copy()

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "level": self.level, "names": list(self.names),
                "chunkings": [{"name": n, "estimates": g.drop(columns="name")}
                              for n, g in self.chunkings.groupby("name", sort=False)],
                "difference": self.difference, "differences": self.differences,
                "only_in": self.only_in, "per_document": self.per_document, "info": self.info}

    def summary(self) -> str:
        a, b = self.names
        lines = [f"{self.metric}: {a} vs {b}, paired by document ({self.difference['n_documents']} documents in "
                 f"both; only in {a}: {self.only_in[a]}, only in {b}: {self.only_in[b]}); level {self.level}"]
        labelled = []  # (label, row) of every interval printed: its mark's words under the table
        for _, r in self.chunkings.iterrows():
            lo, hi = r.get("low_bounded", r["low"]), r.get("high_bounded", r["high"])
            lines.append(f"  {r['name']:<14} {r['estimator']:<5} {r['estimate']:.4f} [{lo:.4f}, {hi:.4f}]"
                         f"{_check_mark(r)} ({r['method']}; {int(r['n_queries'])} queries, "
                         f"{int(r['n_documents'])} documents)")
            labelled.append((f"{r['name']} {r['estimator']} {r['method']}", r))
        for _, r in self.differences.iterrows():
            flags = [m for m in (r.get("flags") or "", "clipped" if r.get("clipped") is True else "") if m]
            flag = f" [{','.join(flags)}]" if flags else ""
            lo, hi = r.get("low_bounded", r["low"]), r.get("high_bounded", r["high"])
            lines.append(f"  {a} - {b} {r['estimator']:<5} {r['estimate']:+.4f} [{lo:+.4f}, {hi:+.4f}]"
                         f"{_check_mark(r)} ({r['method']}){flag}")
            labelled.append((f"{a} - {b} {r['estimator']} {r['method']}", r))
        lines += ["  " + x for x in marks.footnotes(labelled, self.level)]
        if "verified" in self.differences:
            lines.append("  each interval's check (verified_coverage, verified_mc_se, verified, verified_status in the "
                         "JSON): its method's measured coverage at this design (the documents resampled).")
        lines += [f"notice: {n}" for n in (self.info or {}).get("notices", [])]
        return "\n".join(lines)

    def __repr__(self) -> str:
        d = self.difference
        return (f"ChunkingComparison({self.names[0]!r} - {self.names[1]!r}, metric={self.metric!r}, "
                f"{d['estimator']}={_fmt(d['estimate'])}, ci=({_fmt(d['low'])}, {_fmt(d['high'])}), "
                f"K={d['n_documents']})\n{self.summary()}")


def _check_mark(r: Any) -> str:
    """`` *`` / `` ‡`` beside an interval by its check's status (:mod:`ragcov_data.eval.estimates.marks`)."""
    m = marks.mark(r)
    return f" {m}" if m else ""


def _per_doc(result: EvaluationResult, name: str) -> pd.DataFrame:
    if not isinstance(result, EvaluationResult):
        raise RagcovError(f"`results[{name!r}]` must be an EvaluationResult from evaluate(); "
                          f"got {type(result).__name__}.")
    if result.cluster != "doc_id":
        raise RagcovError(f"`results[{name!r}]` is clustered by {result.cluster!r}; chunkings are paired by "
                          "document: evaluate with cluster='doc_id' (the self-retrieval default).")
    pd_ = result.per_document
    return pd.DataFrame({"doc_id": pd_["cluster"].astype(str), "n": pd_["n"].to_numpy(), "s": pd_["sum"].to_numpy()})


def _checked(differences: pd.DataFrame, na: np.ndarray, sa: np.ndarray, nb: np.ndarray, sb: np.ndarray,
             level: float) -> pd.DataFrame:
    """The differences with each method's check at this design (:func:`.verify_family.verify_chunking_differences`:
    the shared documents resampled) and the interval cut to [-1, 1] with the flag ``clipped``."""
    out = differences.copy()
    pairs = list(zip(out["estimator"], out["method"]))
    res = verify_chunking_differences(na, sa, nb, sb, pairs, level=level)
    for k in VERIFY_FIELDS:
        vals = [res.get(f"{e}/{m}", {}).get(k) for e, m in pairs]
        out[k] = pd.Series(vals, index=out.index, dtype=object if k in ("verified", "verified_status") else float)
    out["verified_reason"] = [res.get(f"{e}/{m}", {}).get("verified_reason", "") for e, m in pairs]
    out["mark"] = [marks.mark(r) for r in out.to_dict(orient="records")]
    return clip_table(out, (-1.0, 1.0))


def _own_estimates(result: EvaluationResult, name: str) -> list[dict[str, Any]]:
    rows = []
    e = result.estimates
    if "group" in e.columns:
        e = e[e["group"] == "__all__"]
    if "verified" in e.columns:  # evaluate's recommended row: the first of RECOMMENDED verified at this design
        verified = set(zip(e.loc[e["verified"].map(lambda x: x is True or x is np.True_), "estimator"],
                           e.loc[e["verified"].map(lambda x: x is True or x is np.True_), "method"]))
    else:
        verified = set()
    rec = e[e["recommended"].astype(bool)] if "recommended" in e.columns else e.iloc[:0]
    marked = set(zip(rec["estimator"], rec["method"]))  # evaluate's recommended row at this design
    for est in ("micro", "macro"):
        order = list(RECOMMENDED.get(est, ()))
        order = [m for m in order if (est, m) in verified] + [m for m in order if (est, m) not in verified]
        order = [m for e_, m in sorted(marked) if e_ == est] + [m for m in order if (est, m) not in marked]
        for m in order:
            hit = e[(e["estimator"] == est) & (e["method"] == m)]
            if len(hit):
                r = hit.iloc[0]
                rows.append({"name": name, "estimator": est, "method": m, "estimate": float(r["estimate"]),
                             "low": float(r["low"]), "high": float(r["high"]),
                             "n_queries": int(len(result.per_query)), "n_documents": int(len(result.per_document)),
                             # its check and bounds, as evaluate printed them (absent: not checked there)
                             **{k: r.get(k, None if k in ("verified", "verified_status") else np.nan) for k in VERIFY_FIELDS},
                             "verified_reason": r.get("verified_reason", ""), "mark": marks.mark(r),
                             **{k: r[k] for k in ("low_bounded", "high_bounded", "clipped") if k in r.index}})
                break
    return rows


def compare_chunkings(
    results: Mapping[str, EvaluationResult],
    *,
    level: float = 0.95,
    n_resamples: int = 5000,
    seed: int | None = 0,
) -> ChunkingComparison:
    """Compare two chunkings of the same documents, paired by document (``A - B``, in ``results`` order).

    Each chunking's per-document outcomes are those of its :class:`EvaluationResult` (the outcome stage,
    :mod:`ragcov_data.eval.outcomes`). What the comparison can and cannot say is stated in ``notices``
    (``info["notices"]``) and in the summary: a dispositivo task whose every document fell back to word
    windows (an acervo with no artigo) compares word windows with word windows (``info["fallback"]``);
    with fewer than :data:`~ragcov_data.eval.estimates._kernels.FEW_CLUSTERS` shared documents the document bootstrap,
    whose reference ignores K, is flagged ``few_clusters`` (column ``flags``), as ``evaluate`` flags it.

    Parameters
    ----------
    results : mapping of two names to EvaluationResult
        ``evaluate(run, task)`` of each chunking's task (clustered by ``doc_id``), same metric.
    level, n_resamples, seed
        Confidence level; bootstrap replicates and seed for the micro document bootstrap.

    Returns
    -------
    ChunkingComparison
    """
    check_level(level)
    if not isinstance(results, Mapping) or len(results) != 2:
        raise RagcovError("`results` must map exactly two chunking names to their EvaluationResult.")
    check_resamples(n_resamples, level, ["cluster_bootstrap"])
    (a, ra), (b, rb) = results.items()
    if ra.metric != rb.metric:
        raise RagcovError(f"the two results score different metrics ({ra.metric!r}, {rb.metric!r}); use one.")
    da, db = _per_doc(ra, a), _per_doc(rb, b)
    both = da.merge(db, on="doc_id", suffixes=("_a", "_b"))
    K = len(both)
    if K < 2:
        raise RagcovError(f"only {K} document(s) have queries under both chunkings; a paired comparison needs 2+.")
    na, sa = both["n_a"].to_numpy(float), both["s_a"].to_numpy(float)
    nb, sb = both["n_b"].to_numpy(float), both["s_b"].to_numpy(float)
    pa, pb = sa / na, sb / nb
    diff = pa - pb
    few = K < _kernels.FEW_CLUSTERS
    rows = _difference_rows(both["doc_id"].to_numpy(), na, sa, nb, sb, diff, level, n_resamples, seed)
    differences = _checked(pd.DataFrame(rows), na, sa, nb, sb, level)
    difference = _headline(differences, K)
    per_document = pd.DataFrame({"doc_id": both["doc_id"], f"n_{a}": na.astype(int), f"rate_{a}": pa,
                                 f"n_{b}": nb.astype(int), f"rate_{b}": pb, "diff": diff})
    only_in = {a: int((~da["doc_id"].isin(db["doc_id"])).sum()), b: int((~db["doc_id"].isin(da["doc_id"])).sum())}
    chunk_rows = pd.DataFrame(_own_estimates(ra, a) + _own_estimates(rb, b))
    notices, fallback = _comparison_notices({a: ra, b: rb}, K)
    return ChunkingComparison(names=(a, b), chunkings=chunk_rows, differences=differences, difference=difference,
                              per_document=per_document, only_in=only_in, metric=ra.metric, level=level,
                              info={"n_resamples": int(n_resamples), "seed": seed, "fallback": fallback,
                                    "few_clusters": bool(few), "notices": notices,
                                    "chunking": {n: (r.info or {}).get("task") for n, r in ((a, ra), (b, rb))}})


def _difference_rows(doc_ids: np.ndarray, na: np.ndarray, sa: np.ndarray, nb: np.ndarray, sb: np.ndarray,
                     diff: np.ndarray, level: float, n_resamples: int, seed: int | None) -> list[dict[str, Any]]:
    """The paired difference's three intervals (macro t; micro linearised t and document bootstrap), each
    flagged ``few_clusters`` by the core's rule."""
    K = len(doc_ids)
    rows = []
    mac = interval(diff, doc_ids, estimator="macro", method="t", level=level)
    rows.append({"estimator": "macro", "method": "t", "estimate": mac.estimate, "se": mac.se, "df": mac.df,
                 "low": mac.low, "high": mac.high, "n_documents": K})
    Na, Nb = na.sum(), nb.sum()
    ma, mb = sa.sum() / Na, sb.sum() / Nb
    est = ma - mb
    u = (sa - ma * na) / Na - (sb - mb * nb) / Nb
    se = float(np.sqrt(K / (K - 1) * np.sum(u ** 2)))
    crit = stats.t.ppf(0.5 + level / 2, K - 1)
    rows.append({"estimator": "micro", "method": "linearised_t", "estimate": est, "se": se, "df": float(K - 1),
                 "low": est - crit * se, "high": est + crit * se, "n_documents": K})
    gen = np.random.default_rng(seed)
    counts = gen.multinomial(K, np.full(K, 1.0 / K), size=int(n_resamples)).astype(float)  # (B, K)
    reps = counts @ sa / (counts @ na) - counts @ sb / (counts @ nb)
    lo, hi = np.quantile(reps, [0.5 - level / 2, 0.5 + level / 2])
    rows.append({"estimator": "micro", "method": "cluster_bootstrap", "estimate": est, "se": float(reps.std(ddof=1)),
                 "df": float("nan"), "low": float(lo), "high": float(hi), "n_documents": K})
    few = K < _kernels.FEW_CLUSTERS
    for r in rows:  # the core's rule: methods whose reference ignores K are flagged below FEW_CLUSTERS
        r["flags"] = "few_clusters" if few and r["method"] in _kernels._FEW_CLUSTER_METHODS else ""
    return rows


def _headline(differences: pd.DataFrame, K: int) -> dict[str, Any]:
    """The headline difference (macro t) with its bounds and check, as plain Python values."""
    head = differences[(differences["estimator"] == "macro")].iloc[0]
    difference = {"estimate": float(head["estimate"]), "low": float(head["low"]), "high": float(head["high"]),
                  "method": "t", "estimator": "macro", "n_documents": K,
                  **{k: head[k] for k in ("low_bounded", "high_bounded", "clipped", *VERIFY_FIELDS, "verified_reason",
                                          "mark")}}
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in difference.items()}


def _comparison_notices(results: Mapping[str, EvaluationResult], K: int) -> tuple[list[str], dict[str, Any]]:
    """What the comparison can and cannot say: word-window fallbacks, few shared documents, and each
    chunking's own notices (once each); with the fallback record."""
    notices, fallback = _fallback_notices(results)
    if K < _kernels.FEW_CLUSTERS:
        notices.append(f"only {K} documents are shared (fewer than {_kernels.FEW_CLUSTERS}): the document bootstrap "
                       "interval is flagged few_clusters (its reference ignores how few documents there are); "
                       "read the t intervals.")
    for r in results.values():
        notices += [n for n in (r.info or {}).get("notices", []) if n not in notices]
    return notices, fallback


def _word_windows(result: EvaluationResult) -> tuple[bool, int, int]:
    """``(all word windows, documents fallen back, documents read)`` of the task behind ``result``: a word
    chunking, or a dispositivo chunking where no document had an artigo to cut at."""
    task = (result.info or {}).get("task") or {}
    if (task.get("chunking") or "words") != "dispositivo":
        return bool(task), 0, 0
    fell, read = int(task.get("documents_fallback") or 0), int(task.get("documents_read") or 0)
    return bool(read) and task.get("documents_structured", read - fell) == 0, fell, read


def _fallback_notices(results: Mapping[str, EvaluationResult]) -> tuple[list[str], dict[str, Any]]:
    """Notices on chunkings that fell back to word windows, and ``{name: fell back everywhere}``."""
    notes: list[str] = []
    state = {}
    for name, r in results.items():
        words, fell, read = _word_windows(r)
        state[name] = words
        task = (r.info or {}).get("task") or {}
        if task.get("chunking") == "dispositivo" and fell:
            notes.append(f"{name}: {fell} of {read} documents have no artigo and fell back to word windows"
                         + (" (every document)" if words else "") + ".")
    if len(state) == 2 and all(state.values()) and any(((r.info or {}).get("task") or {}).get("chunking") ==
                                                       "dispositivo" for r in results.values()):
        notes.insert(0, "both sides fell back to word windows: the comparison is words vs words (no document has "
                        "an artigo to cut at), so it says nothing about dispositivo chunking.")
    return notes, state
