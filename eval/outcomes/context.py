"""The context of a question within exactly B words, and the span measures read on it.

A RAG pipeline hands the model a context of fixed size. The **context within B words** is the question's ranked
items (ragcov's chunks in trec_eval order, or a pipeline's passages in rank order) read in order and cut after
exactly ``B`` words: items are taken whole while the running word count stays ``<= B``, and the item that
crosses the budget is cut after the word that reaches ``B`` (no first-item exception: a first chunk of 40,000
words gives 1,000 words at ``B = 1,000``). A word is a whitespace token of the item's text (``str.split()``).

On the task's character line (:mod:`ragcov_data.runs.line`) each item covers ``[start, end)``; a cut item covers
``[start, e)`` where ``e`` ends its ``j``-th word: the ``L``-th non-space character from ``start``, ``L`` the
non-space characters of its first ``j`` words (an item located approximately is cut at the same share of its
located characters). An item with no place on the line (a passage found in no document) keeps its words in the
budget and holds no document's characters; its characters up to the cut (words joined by one space) still count
in the context's size.

Measures per question (:func:`budget_values`), against the question's cited provisions (spans on the same line):

- ``span_recall``, the headline: the share of the provisions' **text** inside the context;
- ``recall``, the touch reading: the share of provisions some context item overlaps (a character of the provision
  is in the context); ``hit`` whether one is;
- ``precision`` the share of the context's text inside a provision, ``iou`` text in both over text in either;
- the coverage curve ``covered_any``, ``covered_50``, ``covered_90``, ``covered_whole``: the share of provisions
  with any, at least half, at least 90% and all of their text inside the context.

Text is counted in **non-space characters** (Unicode NFC, as the line reads it flat: :mod:`ragcov_data.runs.line`),
so whitespace never decides: a provision whose span ends on two newlines the context stops before is wholly inside.
Overlapping items (and provisions) count their shared characters once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ragcov_data.runs.line import CharacterLine, flat_text

__all__ = ["Items", "context_cut", "budget_values", "merge_spans", "nonspace", "context_line", "CONTEXT_NOTE", "MEASURES",
           "CURVE"]

#: What a budgeted context is, in one sentence (printed with the numbers).
CONTEXT_NOTE = ("context within B words = the ranked chunks or passages in rank order, cut after exactly B words "
                "(the item that crosses B is truncated at the B-th word; words are whitespace tokens)")
#: Columns of :func:`budget_values`, in order.
MEASURES = ("recall", "hit", "span_recall", "precision", "iou", "covered_any", "covered_50", "covered_90",
            "covered_whole")
#: The coverage curve's levels: (column, the least share of a provision's text inside the context, as a fraction
#: num/den compared in whole characters; ``any`` is more than none).
CURVE = (("covered_any", "any", None), ("covered_50", "0.5", (1, 2)), ("covered_90", "0.9", (9, 10)),
         ("covered_whole", "whole", (1, 1)))


@dataclass(frozen=True)
class Items:
    """A question's ranked items: words, span on the line (``start = -1``: no place), text, and whether the place
    is approximate (a fuzzy match, cut proportionally)."""

    words: np.ndarray
    start: np.ndarray
    end: np.ndarray
    text: Sequence[str]
    approximate: np.ndarray

    def __len__(self) -> int:
        return len(self.words)


def context_cut(words: np.ndarray, budget: int) -> tuple[int, int]:
    """``(n_whole, partial)``: the first ``n_whole`` items are taken whole and item ``n_whole`` (if ``partial > 0``)
    is cut after ``partial`` words, so the context holds ``min(budget, sum(words))`` words."""
    words = np.asarray(words, dtype=np.int64)
    if not len(words):
        return 0, 0
    cum = np.cumsum(words)
    n = int(np.searchsorted(cum, budget, side="right"))  # items whose running total stays <= budget
    if n >= len(words):
        return n, 0
    before = int(cum[n - 1]) if n else 0
    return n, int(budget - before)


def _cut_end(items: Items, i: int, j: int, line: CharacterLine) -> int:
    """Line position just after item ``i``'s ``j``-th word."""
    text = items.text[i]
    prefix = len(flat_text(" ".join(text.split(None, j)[:j])))  # the first j words (no split of a whole act)
    s = int(items.start[i])
    if items.approximate[i]:  # located approximately: the same share of its located characters
        total = len(flat_text(text))
        located = int(line.flat_index(int(items.end[i]))) - int(line.flat_index(s))
        prefix = max(1, int(round(prefix * located / total))) if total else 0
    return min(line.end_after(s, prefix), int(items.end[i]))


def merge_spans(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted intervals covering the union of ``[s, e)`` (empty intervals dropped)."""
    keep = e > s
    s, e = s[keep], e[keep]
    if len(s) < 2:
        return s, e
    o = np.argsort(s, kind="stable")
    s, e = s[o], e[o]
    reach = np.maximum.accumulate(e)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]  # touching intervals ([0,5) and [5,9)) merge: no character is shared either way
    grp = np.cumsum(new) - 1
    ms = s[new]
    me = np.zeros(len(ms), dtype=s.dtype)
    np.maximum.at(me, grp, e)
    return ms, me


def nonspace(line: CharacterLine, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Non-space characters (NFC) of the line in each ``[s, e)`` (0 where ``e <= s``)."""
    s, e = np.asarray(s, dtype=np.int64), np.asarray(e, dtype=np.int64)
    n = np.searchsorted(line.pos, e, side="left") - np.searchsorted(line.pos, s, side="left")
    return np.where(e > s, n, 0)


def _inter(xs: np.ndarray, xe: np.ndarray, cs: np.ndarray, ce: np.ndarray, line: CharacterLine) -> np.ndarray:
    """Non-space characters each interval of ``[cs, ce)`` shares with the union of the disjoint ``[xs, xe)``."""
    if not len(xs) or not len(cs):
        return np.zeros(len(cs), dtype=np.int64)
    lo = np.maximum(xs[:, None], cs[None, :])
    hi = np.minimum(xe[:, None], ce[None, :])
    return nonspace(line, lo, hi).sum(axis=0)


def context_spans(items: Items, budget: int, line: CharacterLine | None) -> tuple[np.ndarray, np.ndarray, int]:
    """The context's spans on the line (one per located item read, the cut one shortened) and the non-space
    characters of the items read that have no place."""
    n, j = context_cut(items.words, budget)
    take = n + (1 if j else 0)
    s = items.start[:take].astype(np.int64).copy()
    e = items.end[:take].astype(np.int64).copy()
    off = 0
    for i in np.flatnonzero(s[:n] < 0):
        off += len(flat_text(items.text[i]))
    if j:
        if s[n] >= 0:
            if line is None:
                raise ValueError("cutting a located item needs the task's character line")
            e[n] = _cut_end(items, n, j, line)
        else:
            off += len(flat_text(" ".join(items.text[n].split(None, j)[:j])))
    located = s >= 0
    return s[located], e[located], off


def _curve(inside: np.ndarray, length: np.ndarray) -> list[float]:
    """The coverage curve of one question: per level of :data:`CURVE`, the share of its provisions with at least
    that share of their non-space characters (``inside`` of ``length``) in the context (integers compared, so a
    provision wholly inside counts as whole; a provision with no non-space character is never covered)."""
    ok = length > 0
    out = [float((ok & (inside > 0)).mean())]
    for _, _, (num, den) in CURVE[1:]:
        out.append(float((ok & (inside * den >= length * num)).mean()))
    return out


def budget_values(items: Items, budgets: Sequence[int], ps: np.ndarray, pe: np.ndarray,
                  line: CharacterLine) -> dict[int, tuple[float, ...]]:
    """Per budget: the columns of :data:`MEASURES` for one question whose cited provisions span ``[ps, pe)`` on
    the line (see the module docstring; text counted in non-space characters)."""
    if line is None:
        raise ValueError("span measures count the text's non-space characters: pass the task's character line")
    cs, ce = merge_spans(ps, pe)
    c_len = int(nonspace(line, cs, ce).sum())
    p_len = nonspace(line, ps, pe)
    out = {}
    for b in budgets:
        xs0, xe0, off = context_spans(items, b, line)
        if not len(ps) or (not len(xs0) and not off):
            out[b] = (0.0,) * len(MEASURES)
            continue
        found = ((xs0[:, None] < pe[None, :]) & (xe0[:, None] > ps[None, :])).any(axis=0)
        xs, xe = merge_spans(xs0, xe0)
        x_len = int(nonspace(line, xs, xe).sum()) + off
        both = int(_inter(xs, xe, cs, ce, line).sum())
        either = x_len + c_len - both
        out[b] = (float(found.mean()), float(found.any()), both / c_len if c_len else 0.0,
                  both / x_len if x_len else 0.0, both / either if either else 0.0,
                  *_curve(_inter(xs, xe, ps, pe, line), p_len))
    return out


def context_words(words: np.ndarray, budget: int) -> int:
    """Words of the context within ``budget``: ``min(budget, sum(words))``."""
    return int(min(int(budget), int(np.asarray(words, dtype=np.int64).sum())))


def context_line(info: Mapping[str, Any]) -> str | None:
    """The mean words of context a budgeted measure read (per run where there are several), or None."""
    w = info.get("mean_context_words")
    if w is None:
        return None
    if isinstance(w, Mapping):
        shown = {k: v for k, v in w.items() if v is not None}
        return ("mean words of context: " + ", ".join(f"{k} {v:,.0f}" for k, v in shown.items())) if shown else None
    return (f"mean words of context: {w:,.0f} (less than the budget where the run returns less text, or a "
            "question's list ends first)")
