"""The chunking answer on cited questions, as the report, the markdown summary and the console state it: which cut's
context holds the most of the cited provisions' text at each budget (``span_recall@Bw``), the touch reading beside
it (``recall@Bw``: some character of the provision in the context), one sentence where the two disagree, the
coverage curve one line a system, and whether the corpora (IRPF, LGPD) agree.

Every function reads a ``budgets`` block of ``results.json`` (:func:`ragcov_data.reporting.blocks.budget_block`)
or the results dict; numbers are read, never written in.
"""
from __future__ import annotations

import html
from typing import Any, Callable, Mapping

from ragcov_data._format import num

__all__ = ["CORPORA", "corpus_blocks", "console_lines", "agreement_line", "curve_rows", "curve_table_html",
           "curve_table_md", "answer_paragraphs_html", "answer_lines_md", "lgpd_html", "lgpd_md", "LGPD_SKIPPED"]

#: The cited-questions corpora of the main job: results key -> name.
CORPORA = {"irpf": "IRPF", "lgpd": "LGPD"}
LGPD_SKIPPED = "Real questions (LGPD): skipped, the data folder has no lgpd/ folder."
_LEVELS = (("any", "any"), ("0.5", "≥50%"), ("0.9", "≥90%"), ("whole", "whole"))


def _e(x: Any) -> str:
    return html.escape(str(x))


def corpus_blocks(results: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """``{corpus name: budgets block}`` of every corpus the results hold."""
    return {name: (results.get(key) or {}).get("budgets") for key, name in CORPORA.items()
            if ((results.get(key) or {}).get("budgets") or {}).get("answer")}


def curve_rows(block: Mapping[str, Any], budget: int | None = None) -> list[dict[str, Any]]:
    """The coverage curve at ``budget`` (default: the answer's), one row a system sorted by text share: ``system``,
    ``text share``, ``touched``, ``any``, ``≥50%``, ``≥90%``, ``whole``, ``chunks`` (mean items in the context)."""
    b = str(budget or block.get("budget"))
    rows = []
    for name, r in ((block.get("text_share_curve") or {}).get(b) or {}).items():
        row = {"system": name, "text share": r.get("span_recall"), "touched": r.get("touched")}
        row.update({label: r.get(key) for key, label in _LEVELS})
        row["chunks"] = r.get("context_items")
        rows.append(row)
    return rows


def _f(x: Any, nd: int = 3) -> str:
    return "—" if x is None else num(float(x), nd)


def console_lines(block: Mapping[str, Any], limit: int = 200) -> list[str]:
    """The answer under a corpus's chunking table: the leader by text share against the next cut, the touch
    reading, a short line where the two disagree (and why), the winning cut at each budget, then the coverage
    curve one line a system (each line within ``limit`` characters but the curve's)."""
    a, t = block["answer"], block.get("touch_answer") or {}
    b = a["budget"]
    verdict = "separable" if a.get("separable") else "not separable"
    out = [f"Answer at {b:,} words, by the share of the cited text in the context (span_recall@{b}w): {a['leader']} "
           f"leads {a['next']} by {num(a['diff'], 3, True)} [{num(a['low'], 3, True)}, {num(a['high'], 3, True)}], "
           f"{verdict}."]
    d = block.get("disagreement") or {}
    if t:
        out.append(f"Touched (recall@{b}w: some character of the provision in the context): {t['leader']} leads, "
                   f"{num(t['estimate'], 3)}.")
    if t and d.get("sentence"):
        h, w = d["touch_winner"], d["text_share_winner"]
        items = {r["system"]: r["chunks"] for r in curve_rows(block)}
        text = (f"Its context holds {num(d['touch_winner_text_share'], 3)} of the cited text "
                f"({_ordinal(d['touch_winner_text_share_place'])} by text share)")
        if items.get(h) is not None and items.get(w) is not None and items[h] > items[w]:
            text += (f": more, shorter chunks touch more provisions without holding their text ({items[h]:.1f} "
                     f"chunks read against {items[w]:.1f} by {w})")
        out.append(text + ".")
    winners = "; ".join(f"{int(k):,} {x['chunking']} {num(x['estimate'], 3)}"
                        for k, x in sorted((block.get("answers") or {}).items(), key=lambda kv: int(kv[0])))
    if winners:
        out.append(f"Winning cut by text share at each budget (words): {winners}.")
    out = [x if len(x) <= limit else x[:limit - 2] + " …" for x in out]
    rows = curve_rows(block)
    if rows:
        width = max(len(r["system"]) for r in rows)
        out.append(f"Text share curve at {b:,} words (share of cited provisions with at least that much of their "
                   "text in the context):")
        out.append(f"  {'system':<{width}}  text   touched  any    ≥50%   ≥90%   whole  chunks")
        out += [f"  {r['system']:<{width}}  {_f(r['text share'])}  {_f(r['touched'])}    {_f(r['any'])}  "
                f"{_f(r['≥50%'])}  {_f(r['≥90%'])}  {_f(r['whole'])}  {_f(r['chunks'], 1)}" for r in rows]
    return out


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def agreement_line(results: Mapping[str, Any]) -> str | None:
    """Whether the corpora name the same cut at each budget, in one line (None unless both ran)."""
    agree = results.get("cited_agreement") or {}
    return agree.get("sentence")


def curve_table_html(block: Mapping[str, Any]) -> str:
    """The coverage curve at the answer's budget as a table, one row a system."""
    rows = curve_rows(block)
    if not rows:
        return ""
    head = list(rows[0])
    cap = (f"Within {block['budget']:,} words: the share of the cited provisions' text inside the context (text "
           "share, the headline), the share of provisions touched (some character inside), and the share of "
           "provisions with any, at least 50%, at least 90% and all of their text inside; chunks: mean chunks or "
           "passages the context reads.")
    body = "".join("<tr><td class=l>" + _e(r["system"]) + "</td>" + "".join(
        f"<td>{_f(r[c], 1 if c == 'chunks' else 3)}</td>" for c in head[1:]) + "</tr>" for r in rows)
    return (f'<table class="text-share-curve"><caption>{_e(cap)}</caption><tr>'
            + "".join(f"<th class=l>{_e(h)}</th>" for h in head) + f"</tr>{body}</table>")


def curve_table_md(block: Mapping[str, Any]) -> list[str]:
    """The coverage curve at the answer's budget as a markdown table."""
    rows = curve_rows(block)
    if not rows:
        return []
    head = list(rows[0])
    lines = [f"Text share curve within {block['budget']:,} words (share of cited provisions with at least that much "
             "of their text inside the context; touched: some character inside):", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join([r["system"], *(_f(r[c], 1 if c == "chunks" else 3) for c in head[1:])]) + " |"
              for r in rows]
    return lines + [""]


def answer_paragraphs_html(block: Mapping[str, Any]) -> str:
    """Under the section's answer: what the two readings measure, the disagreement at every other budget, and the
    winning cut at each budget."""
    notes = block.get("measures") or {}
    parts = [f"<p class=note>{_e(notes.get('text_share', ''))}; {_e(notes.get('touched', ''))}.</p>"]
    for b, d in (block.get("disagreements") or {}).items():
        if d.get("sentence") and int(b) != int(block["budget"]):
            parts.append(f'<p class="disagreement">{_e(d["sentence"])}</p>')
    if block.get("winners_sentence"):
        parts.append(f'<p class="winners">{_e(block["winners_sentence"])}</p>')
    return "".join(parts)


def answer_lines_md(block: Mapping[str, Any]) -> list[str]:
    """The same as :func:`answer_paragraphs_html`, in markdown."""
    notes = block.get("measures") or {}
    lines = [f"{notes.get('text_share', '')}; {notes.get('touched', '')}.", ""]
    for b, d in (block.get("disagreements") or {}).items():
        if d.get("sentence") and int(b) != int(block["budget"]):
            lines += [d["sentence"], ""]
    if block.get("winners_sentence"):
        lines += [block["winners_sentence"], ""]
    return lines


def lgpd_html(lg: Mapping[str, Any], figs: Mapping[str, tuple[bytes, str]], img: Callable[..., str],
              panels: Callable[..., str], fold: Callable[[str, str], str], resolution: Callable[..., str]) -> str:
    """The LGPD section: the answer, its figure, the unit of inference; folded, the family the answer comes from,
    the text share curve, the touch reading's family and the citations resolved."""
    block = lg.get("budgets") or {}
    parts = ['<section id="lgpd"><h2>Real questions (LGPD)</h2>']
    if lg.get("sentence"):
        parts.append(f'<p class="study-answer"><b>{_e(lg["sentence"])}</b></p>')
    if "lgpd_budget" in figs:
        parts.append(img(figs["lgpd_budget"][0], "text share against context budget", figs["lgpd_budget"][1],
                         "fig-lgpd_budget"))
    parts.append(answer_paragraphs_html(block))
    fam = (block.get("families") or {}).get(str(block.get("budget")))
    if fam:
        parts.append(fold(f"The family the answer comes from: chunking × retriever within {int(block['budget']):,} "
                          f"words of context ({fam['metric']}), every system and pair",
                          panels(fam, heading=4, systems_class="lgpd-budget", matrix_class="pair-matrix",
                                 fold_pairs=True)))
    parts.append(fold("The text share curve at the answer's budget (table)", curve_table_html(block)))
    touched = (block.get("touched_families") or {}).get(str(block.get("budget")))
    if touched:
        parts.append(fold(f"The touch reading's family ({touched['metric']})",
                          panels(touched, heading=4, systems_class="lgpd-touched", matrix_class="pair-matrix",
                                 fold_pairs=True)))
    ch = lg.get("chunkings") or {}
    if (ch.get("icc") or {}).get("sentence"):
        parts.append(f"<p class=note>{_e(ch['icc']['sentence'])}</p>")
    if ch.get("resolution"):
        parts.append(fold("Citations resolved per chunking", resolution(ch["resolution"])))
    return "".join(parts) + "</section>"


def lgpd_md(lg: Mapping[str, Any], panels: Callable[..., list[str]], table: Callable[..., str]) -> list[str]:
    """The LGPD section in markdown."""
    block = lg.get("budgets") or {}
    lines = ["## Real questions (LGPD)", ""]
    if lg.get("sentence"):
        lines += [lg["sentence"], ""]
    lines += answer_lines_md(block) + curve_table_md(block)
    fam = (block.get("families") or {}).get(str(block.get("budget")))
    if fam:
        lines += [f"### Chunking × retriever within {int(block['budget']):,} words of context (the family the answer "
                  "comes from)", ""] + panels(fam, level=4)
    res = (lg.get("chunkings") or {}).get("resolution")
    if res:
        cols = ["chunking", "chunks", "article_citations", "resolved", "questions_scored"]
        lines += [table(res, cols, {c: str for c in cols}), ""]
    return lines
