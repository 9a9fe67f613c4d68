"""Passages found in several places that no hint placed: how far the score may move between their places.

A passage whose text occurs in several places of the task's documents (JurisTCU: an enunciado holding the whole text
of another; IRPF: a repeated paragraph) is placed at the first place unless its hints (``doc_id``, offsets) say where
it came from. The run's own documents may be others, and its score with them. :func:`placement_range` bounds that
score: per question, every combination of the places of its unplaced passages that can reach the measure is scored,
and the question's value lies between the least and the greatest of them. A passage *reaches* the measure when it is
among the first k passages (``recall@k``, ``hit@k`` on cited questions), within the first B words (``name@Bw``), or,
for a document list, before the passages with one place alone name k documents (past that point no placement changes
the first k documents). A question with more than :data:`MAX_COMBINATIONS` combinations, or with a passage of more
than :data:`~ragcov_data.runs.locate.MAX_ALTERNATIVES` places, is taken as anywhere in [0, 1]. The mean's range is
the mean of the questions' least and greatest values: the mean over questions lies in it whichever places the
passages came from. Each affected question's own range is kept too (``questions``).
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["MAX_COMBINATIONS", "placement_range", "placement_notice", "SEP"]

#: Combinations of places scored per question at most (more: the question's value is taken as anywhere in [0, 1]).
MAX_COMBINATIONS = 256
#: Between a question id and its combination's number in the ids of the scored combinations.
SEP = "\x1f"
_COLUMNS = ("rank", "words", "start", "end", "how", "text")


def _reach_ranks(rows: np.ndarray, k: int) -> np.ndarray:
    return rows[:k]


def _reach_words(rows: np.ndarray, words: np.ndarray, budget: int) -> np.ndarray:
    before = np.cumsum(words[rows]) - words[rows]
    return rows[before < budget]


def _reach_documents(rows: np.ndarray, certain_doc: np.ndarray, k: int | None) -> np.ndarray:
    """The rows before (and at) the one where the passages of one place alone name ``k`` distinct documents
    (``certain_doc``: -1 for a row that names none for sure)."""
    if k is None:
        return rows
    seen: set[int] = set()
    for j, r in enumerate(rows):
        d = int(certain_doc[r])
        if d >= 0:
            seen.add(d)
            if len(seen) >= k:
                return rows[:j + 1]
    return rows


def _options(spans: np.ndarray, line: Any, by_document: bool) -> np.ndarray:
    """A passage's places to try: every span, or one span per document where only its document matters."""
    if not by_document:
        return spans
    docs = line.docs_at(spans[:, 0])
    return spans[np.unique(docs, return_index=True)[1]]


def placement_range(located: Any, query_ids: Sequence[str], values: np.ndarray, *, reach: Mapping[str, Any],
                    score: Callable[[pd.DataFrame, list[str], dict[str, str]], np.ndarray]) -> dict[str, Any] | None:
    """The range of the mean over ``query_ids`` whichever places the unplaced ambiguous passages came from (see the
    module docstring); None when no such passage reaches the measure.

    ``values``: each question's value as placed; ``reach``: ``{"ranks": k}``, ``{"words": B}`` or ``{"documents":
    k, "by_document": True, "certain_doc": array}``; ``score(frame, ids, origin)``: the values of the combinations,
    a located frame whose query ids are ``ids`` (``origin`` maps each to its question).
    """
    alts = located.alternatives
    if not alts:
        return None
    f = located.frame
    positions = {q: np.asarray(ix, dtype=np.int64) for q, ix in f.groupby("query-id", sort=False).indices.items()}
    words = f["words"].to_numpy(dtype=np.int64)
    cols = {c: f[c].to_numpy() for c in _COLUMNS}  # once: the text column is slow to read
    low, high = np.asarray(values, dtype=float).copy(), np.asarray(values, dtype=float).copy()
    parts: list[dict[str, np.ndarray]] = []
    slots: dict[int, list[str]] = {}
    n_unbounded = 0
    for i, q in enumerate(map(str, query_ids)):
        rows = positions.get(q)
        if rows is None:
            continue
        near = (_reach_ranks(rows, reach["ranks"]) if "ranks" in reach else
                _reach_words(rows, words, reach["words"]) if "words" in reach else
                _reach_documents(rows, reach["certain_doc"], reach.get("documents")))
        amb = [int(r) for r in near if int(r) in alts]
        if not amb:
            continue
        options = [None if alts[r] is None else _options(alts[r], located.line, reach.get("by_document", False))
                   for r in amb]
        if any(o is None for o in options) or np.prod([len(o) for o in options], dtype=float) > MAX_COMBINATIONS:
            low[i], high[i] = 0.0, 1.0
            n_unbounded += 1
            continue
        ids = _combinations(cols, rows, amb, options, q, parts)
        slots[i] = ids
    if not slots and not n_unbounded:
        return None
    if slots:
        frame = pd.DataFrame({c: np.concatenate([p[c] for p in parts]) for c in ("query-id", *_COLUMNS, "doc_id")})
        origin = {pid: pid.split(SEP, 1)[0] for ids in slots.values() for pid in ids}
        got = pd.Series(np.asarray(score(frame, list(origin), origin), dtype=float), index=list(origin))
        for i, ids in slots.items():
            v = got.loc[ids].to_numpy()
            low[i], high[i] = min(low[i], v.min()), max(high[i], v.max())
    n = max(len(query_ids), 1)
    moved = [i for i in range(len(query_ids)) if low[i] != values[i] or high[i] != values[i] or i in slots]
    return {"low": float(low.sum() / n), "high": float(high.sum() / n), "estimate": float(np.sum(values) / n),
            "n_questions": len(slots) + n_unbounded, "n_unbounded": n_unbounded,
            "questions": {str(query_ids[i]): [float(low[i]), float(high[i])] for i in moved},
            "n_passages": int(sum(1 for r in alts if str(f["query-id"].iat[r]) in set(map(str, query_ids))))}


def _combinations(cols: Mapping[str, np.ndarray], rows: np.ndarray, amb: list[int], options: list[np.ndarray], q: str,
                  parts: list[dict[str, np.ndarray]]) -> list[str]:
    """Every combination of the places of ``amb`` (rows of question ``q``) as a copy of the question's rows, with
    its own id; appended to ``parts``; returns the ids."""
    combos = list(itertools.product(*(range(len(o)) for o in options)))
    c = len(combos)
    block = {col: np.tile(cols[col][rows], c) for col in _COLUMNS}
    block["start"] = block["start"].astype(np.int64)
    block["end"] = block["end"].astype(np.int64)
    at = {r: j for j, r in enumerate(rows.tolist())}
    n = len(rows)
    for k, combo in enumerate(combos):
        for r, o, choice in zip(amb, options, combo):
            block["start"][k * n + at[r]], block["end"][k * n + at[r]] = int(o[choice][0]), int(o[choice][1])
    ids = [f"{q}{SEP}{k}" for k in range(c)]
    block["query-id"] = np.repeat(np.asarray(ids, dtype=object), n)
    block["doc_id"] = np.full(c * n, None, dtype=object)  # filled by the scorer from the spans
    parts.append(block)
    return ids


def placement_notice(label: str, metric: str, placement: Mapping[str, Any], share: float) -> str:
    """The notice of a run whose unplaced ambiguous passages may move its score (:func:`placement_range`)."""
    lo, hi, est = placement["low"], placement["high"], placement["estimate"]
    head = (f"{label}: {placement['n_passages']:,} of its passages ({share:.1%}) occur in several places of the task's "
            "documents and no hint places them, so each counts at its first place")
    hints = ("give each passage its document in the run: `doc_id`, and its offsets `start_char`/`end_char` "
             "(LangChain: metadata['source'] and add_start_index=True; LlamaIndex: ref_doc_id, start_char_idx and "
             "end_char_idx)")
    if hi - lo <= 1e-12:
        return (f"{head}; whichever of their places they came from, the mean {metric} is {est:.3f}: here their places "
                f"do not change it (to place them all the same, {hints}).")
    unbounded = (f", {placement['n_unbounded']} of them with too many placements to try, taken as anywhere in "
                 "[0, 1]" if placement["n_unbounded"] else "")
    return (f"{head}: the score may differ from the one the run's own documents give. Whichever of their places they "
            f"came from, the mean {metric} lies between {lo:.3f} and {hi:.3f} (as placed: {est:.3f}; "
            f"{placement['n_questions']} question(s) with such passages within its reach{unbounded}). To place them, "
            f"{hints}.")
