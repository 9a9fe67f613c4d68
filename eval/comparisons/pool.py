"""How far a leaderboard depends on the judgment pool: three readings of unjudged documents.

Pooled qrels judge only the documents some pooled systems returned, so a run that was not pooled (or a
first-stage run whose reranker was) meets many unjudged documents. trec_eval reads them as non-relevant,
which is one reading among three a reader should see (Buckley & Voorhees 2004; Sakai 2007):

- ``irrelevant`` (``unjudged_as_nonrelevant``) -- unjudged documents are non-relevant (trec_eval's number,
  the leaderboard's estimate);
- ``skip`` (``condensed``) -- unjudged documents are removed and each list condensed (judged-only
  evaluation);
- ``relevant`` (``unjudged_as_relevant``, kept as ``bound_high``) -- unjudged retrieved documents are
  relevant at the lowest positive grade (at least the relevance threshold), the ideal ranking left as judged.

They are readings, not bounds: a condensed list moves judged documents up, so its score can lie above the
``relevant`` reading (a hand-made case: ``tests/eval/test_pool.py``).

Each reading is decided family-wise by the estimate's own rule (:func:`._family.family` tests, read at
the per-comparison level of the printed simultaneous intervals, so "separable" means what an interval
would show). A separable pair is ``robust`` when it is
separable, in the same order, under all three readings; a separable pair that is not robust is one
whose order depends on the pool, and the headline names it. A pair that is not separable is never
robust (there is nothing to keep). On a self-retrieval task judgments are complete by construction,
so the readings coincide and nothing is added (``bound_high`` and ``robust`` are ``None``).

Where the qrels record which engine contributed each judgment (JurisTCU's ``ENGINE`` column, read as
``engine``), :func:`pool_line` says so in one line.

References: Buckley, C. & Voorhees, E. M. (2004). Retrieval evaluation with incomplete information.
SIGIR '04, 25-32. Sakai, T. (2007). Alternatives to bpref. SIGIR '07, 71-78.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.eval.comparisons._family import family
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.eval.outcomes.table import outside_notice  # re-exported: one notice for every run's out-of-corpus rows

__all__ = ["READINGS", "READING_NAMES", "NOT_BOUNDS", "pool_readings", "apply_pool", "pool_line", "pooled_like_line",
           "outside_notice"]

#: The three readings of an unjudged document, low to high (the first is the estimate's).
READINGS = {"irrelevant": "non-relevant (trec_eval, the estimate)", "skip": "removed (condensed lists)",
            "relevant": "relevant at the lowest positive grade (the high bound)"}
#: The readings under the names the views and the JSON use (the keys above stay, as do ``bound_high``
#: and ``condensed``): each says what was done to unjudged documents.
READING_NAMES = {"irrelevant": "unjudged_as_nonrelevant", "skip": "condensed", "relevant": "unjudged_as_relevant"}
#: Said wherever the readings are shown: they are readings, not an interval.
NOT_BOUNDS = ("These are three readings, not bounds: no reading bounds the others (a condensed list moves judged "
              "documents up, so its score can lie above unjudged_as_relevant).")


def pool_readings(runs: Sequence[pd.DataFrame], qrels: Any, spec: Any, V: np.ndarray, **kw: Any) -> dict[str, np.ndarray]:
    """Per-query values (systems x queries) of every run under the three readings.

    ``V`` is the estimate's matrix (reading ``irrelevant``), reused; ``kw`` are the keyword arguments
    of :func:`ragcov_data.eval.outcomes.metrics.per_query` the leaderboard scored ``V`` with.
    """
    out = {"irrelevant": V}
    for reading in ("skip", "relevant"):
        out[reading] = np.array([per_query(r, qrels, spec, unjudged=reading, **kw).to_numpy(dtype=float)
                                 for r in runs])
    return out


def apply_pool(systems: pd.DataFrame, pairs: pd.DataFrame, readings: Mapping[str, np.ndarray] | None,
               names: Sequence[str], parts: Sequence[tuple[str, np.ndarray]], clusters: np.ndarray, *,
               estimator: str, level: float, alpha_star: Mapping[str, float] | None = None
               ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Add ``bound_high`` to ``systems`` and ``robust`` to ``pairs``; return them with the pool's summary.

    Parameters
    ----------
    systems, pairs : DataFrame
        The leaderboard's records (``group`` column; pairs oriented ``a`` above ``b``).
    readings : mapping or None
        :func:`pool_readings` output; None where judgments are complete (self-retrieval): the columns
        are added as ``None``.
    names : the systems in the rows' order of every matrix.
    parts : (group label, query mask) of every group, as the leaderboard ranks them.
    clusters : cluster of every query (the design's unit).
    estimator, level : as the leaderboard's.

    Returns
    -------
    systems, pairs, info
        ``info`` per group: ``readings`` (reading -> {system: estimate}) and ``readings_named`` (the same
        under :data:`READING_NAMES`), ``n_separable``, ``n_robust`` (pairs with an untiered run left out),
        ``depends`` (separable pairs whose order depends on the pool, ``[a, b]``), ``flips`` (pairs whose
        order reverses under some reading, separable or not); ``systems`` gain ``unjudged_as_nonrelevant``,
        ``unjudged_as_relevant`` (= ``bound_high``) and ``tier_flip``.
    """
    systems, pairs = systems.copy(), pairs.copy()
    for col in ("bound_high", "unjudged_as_nonrelevant", "unjudged_as_relevant", "tier_flip"):
        systems[col] = None
    pairs["robust"] = None
    if readings is None:
        return systems, pairs, {}
    idx = {n: i for i, n in enumerate(names)}
    info: dict[str, Any] = {}
    for label, mask in parts:
        est, sep = _group_readings(readings, mask, clusters, estimator=estimator, level=level,
                                   a_star=(alpha_star or {}).get(label))
        g = systems["group"] == label
        systems.loc[g, "bound_high"] = [float(est["relevant"][idx[n]]) for n in systems.loc[g, "name"]]
        systems.loc[g, "unjudged_as_relevant"] = systems.loc[g, "bound_high"]
        systems.loc[g, "unjudged_as_nonrelevant"] = [float(est["irrelevant"][idx[n]]) for n in systems.loc[g, "name"]]
        robust, depends, flips = _pair_verdicts(pairs, label, idx, sep, readings)
        pairs.loc[pairs["group"] == label, "robust"] = pd.Series(robust, index=pairs.index[pairs["group"] == label],
                                                                 dtype=object)
        gp = pairs[pairs["group"] == label]
        sig = gp["significant"].astype(bool) & gp["robust"].map(lambda x: x is not None)
        flipped = {n for pair in flips for n in pair}
        systems.loc[g, "tier_flip"] = [n in flipped for n in systems.loc[g, "name"]]
        info[label] = {"readings": {r: {n: float(v[idx[n]]) for n in names} for r, v in est.items()},
                       "readings_named": {READING_NAMES[r]: {n: float(v[idx[n]]) for n in names}
                                          for r, v in est.items()},
                       "n_separable": int(sig.sum()), "n_robust": int(sum(x is True for x in robust)),
                       "depends": depends, "flips": flips}
    return systems, pairs, info


def _group_readings(readings: Mapping[str, np.ndarray], mask: np.ndarray, clusters: np.ndarray, *,
                    estimator: str, level: float, a_star: float | None
                    ) -> tuple[dict[str, np.ndarray], dict[str, dict[tuple[int, int], tuple[float, bool]]]]:
    """One group's estimates under every reading and, per reading, each pair's ``(diff, separable)`` keyed
    by system rows ``(i, j)``, ``i < j``."""
    alpha = 1.0 - level
    codes, uniq = pd.factorize(pd.Series(np.asarray(clusters)[mask]), sort=False)
    est, sep = {}, {}
    for reading, M in readings.items():
        f = family(M[:, mask], codes, len(uniq), estimator=estimator, level=level, n_resamples=0,
                   rng=np.random.default_rng(0), bootstrap=False)
        est[reading] = f["systems"]["estimate"]
        # sep[reading][(i, j)]: +1 i separably above j, -1 below, 0 not separable; diff sign kept for flips
        # one decision rule under every reading: the per-comparison level of the printed simultaneous
        # intervals (alpha*, never above Bonferroni's), so "separable" means what the interval shows
        m = max(len(f["ia"]), 1)
        a_pair = alpha / m if a_star is None or not np.isfinite(a_star) else a_star
        d = {}
        for i, j, diff, pv in zip(f["ia"], f["ib"], f["pairs"]["diff"], f["pairs"]["p"]):
            d[(i, j)] = (float(diff), bool(pv < a_pair))
        sep[reading] = d
    return est, sep


def _pair_verdicts(pairs: pd.DataFrame, label: str, idx: Mapping[str, int],
                   sep: Mapping[str, Mapping[tuple[int, int], tuple[float, bool]]], readings: Mapping[str, Any]
                   ) -> tuple[list[bool | None], list[list[str]], list[list[str]]]:
    """Per pair of the group (``pairs`` order): robust (None for an untiered run), the separable pairs whose
    order depends on the pool, and the pairs whose order reverses under some reading."""
    robust, depends, flips = [], [], []
    for k in pairs.index[pairs["group"] == label]:
        a, b = idx[pairs.at[k, "a"]], idx[pairs.at[k, "b"]]
        key, sgn = ((a, b), 1.0) if a < b else ((b, a), -1.0)
        signs = {r: np.sign(sgn * sep[r][key][0]) for r in readings}
        # robust: separable as printed (the estimate's own decision) and, in the same order, under the
        # other readings at the printed intervals' per-comparison level
        ok = bool(pairs.at[k, "significant"]) and all(sep[r][key][1] and signs[r] > 0 for r in readings
                                                       if r != "irrelevant")
        if "tiered" in pairs.columns and pairs.at[k, "tiered"] is not None and not bool(pairs.at[k, "tiered"]):
            robust.append(None)  # a run lacking most of the group's queries: shown, never called robust
            continue
        robust.append(ok)
        if bool(pairs.at[k, "significant"]) and not ok:
            depends.append([pairs.at[k, "a"], pairs.at[k, "b"]])
        if any(s < 0 for s in signs.values()):
            flips.append([pairs.at[k, "a"], pairs.at[k, "b"]])
    return robust, depends, flips


def pool_line(qrels: pd.DataFrame) -> str | None:
    """One line naming the engines the judgments were pooled from, with their counts (None if unrecorded)."""
    if "engine" not in qrels.columns:
        return None
    e = qrels["engine"]
    e = e[e.notna() & (e.astype(str).str.strip() != "")].astype(str)
    if e.empty:
        return None
    counts = e.value_counts()
    said = ", ".join(f"{name} ({n:,})" for name, n in counts.items())
    rest = len(qrels) - len(e)
    tail = f"; {rest:,} without an engine" if rest else ""
    return (f"Judgments pooled from {len(counts)} engine{'s' if len(counts) != 1 else ''}: {said}{tail}. "
            "Runs of other systems meet unjudged documents; see the three readings.")


def pooled_like_line(systems: pd.DataFrame, k: int | None, threshold: float = 0.99) -> str | None:
    """One line naming the runs whose judged@k reaches ``threshold``: judged like a pooled engine (their
    lists were, in effect, the pool; the readings barely move them, while other runs meet unjudged
    documents). None when no run does."""
    if "pooled_like" not in systems.columns:
        return None
    rows = systems[systems["pooled_like"].map(lambda x: x is True or x is np.True_)]
    names = list(pd.unique(rows["name"]))
    if not names:
        return None
    return (f"judged like a pooled engine (judged@{k} >= {threshold:g}): {', '.join(names)} — the judgments cover "
            "their lists, so they score as a pooled system does; compare other runs under the three readings.")
