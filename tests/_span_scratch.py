"""The budgeted span measures of a passage run, from scratch: each passage's first place in the acts by
``str.find``, the context cut at the word that reaches the budget (a regular expression over the act), and sets
of (act, character) of the text's non-space characters (the shared acts are in NFC). An independent reference for the outcome stage's located and vectorised version."""
from __future__ import annotations

import re

import pandas as pd

MEASURES = ("recall", "span_recall", "precision", "iou")


def windows(acts: pd.DataFrame, size: int, step: int) -> list[tuple[str, int, int, str]]:
    """Overlapping word windows of every act (not ragcov's chunks): (act, start, end, text as in the act)."""
    out = []
    for doc, text in zip(acts["doc_id"], acts["text"]):
        toks = [m.span() for m in re.finditer(r"\S+", text)]
        for a in range(0, max(len(toks) - size, 1), step):
            b = min(a + size, len(toks)) - 1
            out.append((doc, toks[a][0], toks[b][1], text[toks[a][0]:toks[b][1]]))
    return out


def scratch_values(passages: pd.DataFrame, acts: pd.DataFrame, citations: pd.DataFrame, qids: list[str],
                   budgets: tuple[int, ...]) -> dict[tuple[str, str], float]:
    """``{(question, "measure@Bw"): value}`` for passages that are verbatim pieces of the acts."""
    text_of = dict(zip(acts["doc_id"], acts["text"]))
    where = {}
    for t in set(passages["text"]):  # the first place of each text in the acts, in document order
        d = next(d for d in acts["doc_id"] if text_of[d].find(t) >= 0)
        where[t] = (d, text_of[d].find(t), text_of[d].find(t) + len(t))
    ok = citations[citations["status"] == "resolved"]
    out = {}
    for q in qids:
        mine = ok[ok["query-id"] == q]
        provs = {(d, int(s), int(e)) for d, s, e in zip(mine["doc_id"], mine["start_char"], mine["end_char"])}
        C = {(d, i) for d, s, e in provs for i in range(s, e) if not text_of[d][i].isspace()}  # text: non-space
        ranked = passages[passages["query-id"] == q].sort_values("rank")["text"]
        for b in budgets:
            ctx, left = [], b
            for t in ranked:
                if left <= 0:
                    break
                d, s, e = where[t]
                n = len(t.split())
                if n <= left:
                    ctx.append((d, s, e))
                    left -= n
                else:
                    m = list(re.finditer(r"\S+", text_of[d][s:e]))[left - 1]
                    ctx.append((d, s, s + m.end()))
                    left = 0
            X = {(d, i) for d, s, e in ctx for i in range(s, e) if not text_of[d][i].isspace()}
            found = [any(cd == d and cs < e and ce > s for cd, cs, ce in ctx) for d, s, e in provs]
            ref = {"recall": sum(found) / len(found), "span_recall": len(X & C) / len(C),
                   "precision": len(X & C) / len(X) if X else 0.0, "iou": len(X & C) / len(X | C)}
            for m, x in ref.items():
                out[(q, f"{m}@{b}w")] = x
    return out
