"""Which cut wins at a context budget, read by the share of the cited text the context holds.

A cited-questions chunking study (:mod:`ragcov_data.eval.comparisons.cited`) ranks every system at each budget of
B words twice:

- **text share** (``span_recall@Bw``, the headline): the share of the question's cited provisions' text
  (non-space characters) inside the context;
- **touched** (``recall@Bw``): the share of its cited provisions some character of which is inside the context.

The touch reading counts a provision whole however little of it the context holds, so more, shorter chunks win
it whatever they carry: twenty 50-word windows touch more provisions than nine dispositivos in the same 1,000
words, and hold less of each. This module states the answer by text share, the touch answer beside it, says in one
sentence where the two disagree and why, and gives the coverage curve (the share of cited provisions with at least
a given share of their text inside the context).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

__all__ = ["TEXT_SHARE", "TOUCHED", "CURVE_LEVELS", "MEASURE_NOTES", "budget_answer", "text_share_curve",
           "disagreement", "winners", "curve_lines", "family_metric"]

#: The headline measure at a budget, and the touch reading.
TEXT_SHARE, TOUCHED = "span_recall", "recall"
#: The coverage curve: (JSON key, per-question metric name, words).
CURVE_LEVELS = (("any", "covered_any", "any"), ("0.5", "covered_50", "≥50%"), ("0.9", "covered_90", "≥90%"),
                ("whole", "covered_whole", "whole"))
#: What each reading is, in one sentence (printed with the numbers, recorded in the JSON).
MEASURE_NOTES = {
    "text_share": "span_recall@Bw (the headline) = share of the cited provisions' text (non-space characters, NFC) "
                  "inside the context",
    "touched": "recall@Bw = touched: some character of the provision is in the context (a provision touched counts "
               "whole, however little of its text is there)",
    "curve": "text share curve = share of the cited provisions with any, at least 50%, at least 90% and all of "
             "their text inside the context",
}


def family_metric(budget: int, reading: str = "text_share") -> str:
    """The family's metric at ``budget`` words: ``span_recall@Bw`` (text share) or ``recall@Bw`` (touched)."""
    return f"{TEXT_SHARE if reading == 'text_share' else TOUCHED}@{int(budget)}w"


def _clean(x: float) -> float:
    """``x`` without floating-point dust (a difference of two equal means prints 0, not -0.000)."""
    return round(x, 12) + 0.0


def _ordered(lb: Any) -> tuple[list[str], dict[str, float]]:
    sy = lb.systems.sort_values(["estimate", "name"], ascending=[False, True])
    names = sy["name"].astype(str).tolist()
    return names, dict(zip(names, sy["estimate"].astype(float)))


def budget_answer(lb: Any, budget: int) -> dict[str, Any]:
    """The leader of a budget's family (``span_recall@Bw``: text share; ``recall@Bw``: touched) and its difference,
    with simultaneous interval, against the best system of another chunking (systems are ``chunking/retriever``)."""
    names, est = _ordered(lb)
    top = names[0]
    cut = top.split("/")[0]
    nxt = next((n for n in names[1:] if n.split("/")[0] != cut), names[1] if len(names) > 1 else None)
    reading = "touched" if str(lb.metric).startswith(TOUCHED + "@") else "text_share"
    out: dict[str, Any] = {"budget": int(budget), "metric": lb.metric, "reading": reading, "leader": top,
                           "chunking": cut, "estimate": est[top], "next": nxt, "next_estimate": est.get(nxt),
                           "diff": None, "low": None, "high": None, "p_adj": None, "separable": None,
                           "level": lb.level, "best_set": lb.best_set()}
    words = f"{budget:,} words"
    what = ("the cut that touches the most cited provisions (some character of the provision in the context)"
            if reading == "touched" else "the cut whose context holds the most of the cited provisions' text")
    if nxt is None:
        out["sentence"] = f"Within {words} of context, {top} leads {lb.metric} ({est[top]:.3f})."
        return out
    pr = lb.pairs
    row, sign = pr[(pr["a"] == top) & (pr["b"] == nxt)], 1.0
    if row.empty:
        row, sign = pr[(pr["a"] == nxt) & (pr["b"] == top)], -1.0
    r = row.iloc[0]
    lo, hi = sorted((_clean(sign * float(r["low"])), _clean(sign * float(r["high"]))))
    out.update(diff=_clean(sign * float(r["diff"])), low=lo, high=hi, p_adj=float(r["p_adj"]),
               separable=bool(r["significant"]))
    verdict = ("separable at the family-wise level" if out["separable"] else
               "not separable at the family-wise level (the interval holds 0)")
    out["sentence"] = (f"Within {words} of context, {what} is {cut} ({top}: {lb.metric} {est[top]:.3f}); against "
                       f"the next cut, {nxt} ({est[nxt]:.3f}): {out['diff']:+.3f}, simultaneous {lb.level:.0%} "
                       f"interval [{out['low']:+.3f}, {out['high']:+.3f}], {verdict}.")
    return out


def text_share_curve(values: pd.DataFrame, budgets: Sequence[int],
                     info: Mapping[str, Any] | None = None) -> dict[str, dict[str, dict[str, float | None]]]:
    """``{budget: {system: {...}}}``: per system the mean text share (``span_recall``), the touched share
    (``touched``), the coverage curve (``any``, ``0.5``, ``0.9``, ``whole``: the share of cited provisions with at
    least that share of their text in the context, averaged over questions as the other measures are) and the
    context's mean words and items. ``values``: the study's per-question table, columns ``(metric, system)``."""
    info = info or {}
    words, items = info.get("context_words") or {}, info.get("context_items") or {}
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    systems = list(dict.fromkeys(s for _, s in values.columns))
    for b in budgets:
        at: dict[str, dict[str, float | None]] = {}
        for s in systems:
            def mean(name: str) -> float | None:
                col = (f"{name}@{b}w", s)
                return float(values[col].mean()) if col in values.columns and values[col].notna().any() else None

            row = {"span_recall": mean(TEXT_SHARE), "touched": mean(TOUCHED)}
            row.update({key: mean(name) for key, name, _ in CURVE_LEVELS})
            row["context_words"] = (words.get(s) or {}).get(b)
            row["context_items"] = (items.get(s) or {}).get(b)
            at[s] = row
        out[str(int(b))] = dict(sorted(at.items(), key=lambda kv: -(kv[1]["span_recall"] or 0.0)))
    return out


def _place(lb: Any, name: str) -> tuple[int, int]:
    names, _ = _ordered(lb)
    return names.index(name) + 1, len(names)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def disagreement(text_lb: Any, touch_lb: Any, budget: int,
                 curve: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Whether the touch reading and the text share name the same winning cut at ``budget`` words, and when they do
    not, one sentence saying so with the reason: the touch leader's text share and its place, against the text-share
    leader's, and how many chunks each context reads (more, shorter chunks touch more provisions)."""
    text, touch = budget_answer(text_lb, budget), budget_answer(touch_lb, budget)
    out: dict[str, Any] = {"budget": int(budget), "text_share_winner": text["leader"],
                           "touch_winner": touch["leader"], "agree": text["chunking"] == touch["chunking"],
                           "sentence": None}
    if out["agree"]:
        return out
    h, t = touch["leader"], text["leader"]
    _, est = _ordered(text_lb)
    place, n = _place(text_lb, h)
    t_place, _ = _place(touch_lb, t)
    items = {s: ((curve or {}).get(s) or {}).get("context_items") for s in (h, t)}
    if items[h] is not None and items[t] is not None and items[h] > items[t]:
        why = (f"more, shorter chunks touch more provisions without holding their text ({items[h]:.1f} chunks in "
               f"{h}'s context against {items[t]:.1f})")
    else:
        why = "touching a provision is not holding its text"
    out["sentence"] = (f"At {budget:,} words the touch reading and the text share disagree: {h} touches the most "
                       f"cited provisions ({touch['estimate']:.3f}) but its context holds {est[h]:.3f} of their text "
                       f"({_ordinal(place)} of {n}), against {est[t]:.3f} for {t} ({_ordinal(t_place)} by touch): "
                       f"{why}.")
    out.update(touch_winner_text_share=est[h], touch_winner_text_share_place=place,
               text_share_winner_touch_place=t_place)
    return out


def winners(answers: Mapping[int, Mapping[str, Any]]) -> str:
    """One line: the winning cut at each budget by text share (``answers``: budget -> :func:`budget_answer`)."""
    said = [f"{b:,} words {a['chunking']} ({a['leader']} {a['estimate']:.3f}"
            + (", separable from the next cut" if a.get("separable") else ", not separable from the next cut") + ")"
            for b, a in sorted(answers.items())]
    return "Winning cut by text share: " + "; ".join(said) + "."


def curve_lines(curve_at: Mapping[str, Mapping[str, Any]], budget: int) -> list[str]:
    """The coverage curve at one budget, one line per system (sorted by text share): text share, touched, then the
    share of cited provisions with any / ≥50% / ≥90% / all of their text in the context, and the chunks read."""
    if not curve_at:
        return []
    width = max(len(s) for s in curve_at)
    head = (f"Text share curve within {budget:,} words (share of cited provisions with at least that share of "
            "their text in the context):")
    lines = [head, f"  {'system':<{width}}  text   touched  any    ≥50%   ≥90%   whole  chunks"]

    def f(x: Any) -> str:
        return "  —  " if x is None else f"{x:.3f}"

    for s, r in curve_at.items():
        items = r.get("context_items")
        lines.append(f"  {s:<{width}}  {f(r['span_recall'])}  {f(r['touched'])}    {f(r['any'])}  {f(r['0.5'])}  "
                     f"{f(r['0.9'])}  {f(r['whole'])}  " + ("—" if items is None else f"{items:.1f}"))
    return lines
