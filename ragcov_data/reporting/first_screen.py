"""The report's first screen: the two answers a reader came for, before any table.

*Which retriever* — each task's family-wise verdict in a short sentence (real questions first); *which cut* —
on each cited-questions corpus, the cut whose context holds the most of the cited provisions' text within the
answer's budget, with its difference from the next cut and that difference's simultaneous interval. Each named
system carries its check's mark (:mod:`ragcov_data.eval.estimates.marks`). Below them, one sentence says how the
intervals of the answer table were checked: on the designs of that table, not on another study's samples.
"""
from __future__ import annotations

import html
from typing import Any, Mapping

from ragcov_data._format import num
from ragcov_data.eval.comparisons import leaderboard_render as LB
from ragcov_data.eval.estimates import marks

__all__ = ["retriever_answer", "cut_answer", "named_marks", "table_checks_sentence", "answers_html", "CORPORA"]

#: Cited-questions corpora whose chunking answer the first screen gives, in order.
CORPORA = {"irpf": "IRPF", "lgpd": "LGPD"}


def _boards(results: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(label, leaderboard) of every task that ranked systems: real questions first."""
    meta = results.get("meta") or {}
    out = [("IRPF questions", (results.get("irpf") or {}).get("leaderboard")),
           ("JurisTCU", (results.get("juristcu") or {}).get("leaderboard")),
           ("ANEEL self-retrieval", results.get("leaderboard"))]
    return [(f"{label} ({b.get('metric') or meta.get('metric', '')})", b) for label, b in out if b and b.get("pairs")]


def retriever_answer(results: Mapping[str, Any]) -> str | None:
    """``IRPF questions (recall@10): 1 of 1 pairs separable …; best: bm25. JurisTCU (ndcg@10): …``; None
    where no task compared two systems."""
    said = [f"{label}: {LB.short_sentence(b, limit=160)}" for label, b in _boards(results)]
    return " ".join(said) or None


def _family_rows(block: Mapping[str, Any], budget: Any) -> dict[str, Mapping[str, Any]]:
    fam = ((block.get("budgets") or {}).get("families") or {}).get(str(budget)) or {}
    return {r["name"]: r for r in fam.get("systems") or [] if r.get("group", LB.ALL) == LB.ALL}


def _one_cut(corpus: str, block: Mapping[str, Any]) -> str | None:
    ans = (block.get("budgets") or {}).get("answer") or {}
    if not ans.get("leader"):
        return None
    rows = _family_rows(block, ans.get("budget"))
    m = {n: marks.mark(rows[n]) if n in rows else "" for n in (ans["leader"], ans.get("next"))}
    text = f"{corpus}: {ans.get('chunking', ans['leader'])} ({ans['leader']} {num(ans['estimate'], 3)}{m[ans['leader']]}"
    if ans.get("next"):
        verdict = "separable" if ans.get("separable") else "not separable"
        text += (f"; next {ans['next']} {num(ans['next_estimate'], 3)}{m[ans['next']]}: "
                 f"{num(ans['diff'], 3, sign=True)} [{num(ans['low'], 3, sign=True)}, {num(ans['high'], 3, sign=True)}], "
                 f"{verdict}")
    return text + ")"


def cut_answer(results: Mapping[str, Any]) -> str | None:
    """``Within 1,000 words of context, the cut whose context holds the most of the cited provisions' text
    (span_recall@1000w): IRPF: dispositivo (…); LGPD: article (…).``; None without a cited-questions corpus."""
    said, head = [], None
    for key, corpus in CORPORA.items():
        block = results.get(key) or {}
        one = _one_cut(corpus, block)
        if one:
            said.append(one)
            ans = block["budgets"]["answer"]
            head = head or (f"Within {int(ans['budget']):,} words of context, the cut whose context holds the most "
                            f"of the cited provisions' text ({ans.get('metric', 'span_recall')}; simultaneous "
                            f"{ans.get('level', 0.95):.0%} interval of the difference from the next cut)")
    if not said:
        return None
    return f"{head}: " + "; ".join(said) + "."


def table_checks_sentence(rows: list[Mapping[str, Any]], level: float = 0.95) -> str | None:
    """How the answer table's intervals were checked, counted by status; None for an empty table."""
    if not rows:
        return None
    count = {st: sum(marks.status_of(r) == st for r in rows) for st in marks.STATUSES}
    unchecked = len(rows) - sum(count.values())
    parts = [f"{count['verified']} verified"]
    if count["not_verified"]:
        parts.append(f"{count['not_verified']} not verified ({marks.MARKS['not_verified']}, measured short)")
    if count["unverifiable"]:
        parts.append(f"{count['unverifiable']} unverifiable ({marks.MARKS['unverifiable']})")
    if unchecked:
        parts.append(f"{unchecked} not checked")
    return (f"Each of the table's {len(rows)} intervals was checked for coverage of its nominal {level:.0%} on a "
            "known population of its own task's design (its units and their sizes): " + ", ".join(parts)
            + "; each mark's words are under the table.")


def named_marks(results: Mapping[str, Any]) -> list[str]:
    """The footnotes of the systems :func:`cut_answer` names (leader and next cut of each corpus), in the words
    of :mod:`~ragcov_data.eval.estimates.marks`: an answer never drops its rows' marks."""
    named = []
    for key, corpus in CORPORA.items():
        block = results.get(key) or {}
        ans = (block.get("budgets") or {}).get("answer") or {}
        rows = _family_rows(block, ans.get("budget"))
        named += [(f"{corpus} {n}", rows[n]) for n in (ans.get("leader"), ans.get("next")) if n in rows]
    level = next((float(r.get("level") or 0.95) for _, r in named), 0.95)
    return marks.footnotes(named, level)


def answers_html(results: Mapping[str, Any]) -> str:
    """The two answers, each one paragraph (``data-answer="retriever"``, ``data-answer="cut"``), the marks of the
    systems they name, and the link to the glossary."""
    e = html.escape
    out = []
    for key, label, text in (("retriever", "Which retriever?", retriever_answer(results)),
                             ("cut", "Which cut?", cut_answer(results))):
        if text:
            out.append(f'<p class="answer-line" data-answer="{key}"><b>{label}</b> {e(text)}</p>')
    if not out:
        return ""
    out += [f'<p class="note marks">{e(x)}</p>' for x in named_marks(results)]
    return ('<div id="answers">' + "".join(out) + '<p class="note">Every term on this screen is defined in the '
            '<a href="#glossary">glossary</a>; the sentences in full are below the table.</p></div>')
