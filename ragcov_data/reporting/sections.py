"""Report sections from plain ``results.json`` data: the verdicts at the top and the chunking study (HTML and
markdown). Leaderboards are drawn by :mod:`ragcov_data.eval.leaderboard_render`, the one rendering the
``leaderboard`` page uses too.

Every pairwise table here is family-wise and says so in its caption: the simultaneous max-|t| interval
over the family's pairs and the adjusted p-value of the test behind it (``p_adj``). Records without ``p_adj`` (a
``results.json`` written before the leaderboard) are never printed as a pairwise table.
"""
from __future__ import annotations

import html
import math
from typing import Any, Mapping, Sequence

from ragcov_data.eval.comparisons.leaderboard_render import p_text
from ragcov_data.eval.estimates import marks


__all__ = ["verdicts", "verdict_items", "family_caption", "juristcu_caption", "chunking_html", "verdicts_md",
           "chunking_md", "is_family_wise"]

ALL = "__all__"


def _e(x: Any) -> str:
    return html.escape(str(x))


def _n(x: Any, nd: int = 4, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:+.{nd}f}" if sign else f"{x:.{nd}f}"


def _p(x: Any) -> str:
    return p_text(x)


def is_family_wise(records: Sequence[Mapping[str, Any]]) -> bool:
    """True when every pairwise record carries its family-wise ``p_adj`` (and so may be printed)."""
    return bool(records) and all("p_adj" in r for r in records)


def family_caption(n_pairs: int, level: float, unit: str, n_resamples: Any = None) -> str:
    """The caption of every pairwise table: which family, which interval, which adjustment."""
    b = f", B = {n_resamples}" if n_resamples else ""
    which = f"{n_pairs} pairs" if n_pairs != 1 else "1 pair (a family of one)"
    return (f"Family-wise over the {which}: "
            f"simultaneous {level:.0%} intervals (max-|t|, one cluster bootstrap by {unit}{b}) and the adjusted "
            f"p-values of the same test (p_adj); a pair is separable when its simultaneous interval excludes 0.")


def verdict_items(results: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(css key, label, sentence) of the top of the report."""
    out = []
    metric = (results.get("meta") or {}).get("metric", "hit@1")
    lb = results.get("leaderboard")
    names = [r["name"] for r in results.get("retrievers") or []]
    if lb:
        out.append(("aneel_taesa", f"ANEEL self-retrieval ({metric})", lb["sentence"]))
    elif names:
        out.append(("aneel_taesa", f"ANEEL self-retrieval ({metric})",
                    f"only one system ran ({names[0]}): there is no pair to separate."))
    jt = results.get("juristcu") or {}
    if jt.get("sentence"):
        m = (jt.get("leaderboard") or {}).get("metric", "")
        out.append(("juristcu", f"JurisTCU ({m}, all queries)" if m else "JurisTCU",
                    jt["sentence"] + _pool_groups(jt.get("leaderboard") or {})))
    if results.get("study"):
        out.append(("study", "Chunking and misses", results["study"]))
    ir = results.get("irpf") or {}
    if ir.get("leaderboard_sentence"):
        m = (ir.get("leaderboard") or {}).get("metric", "recall@10")
        out.append(("irpf", f"IRPF questions ({m}, every retriever)", ir["leaderboard_sentence"]))
    if ir.get("sentence"):
        notes = answer_marks(ir)
        out.append(("irpf-chunking", "Chunking on real questions (IRPF)",
                    ir["sentence"] + "".join(f" {x}" for x in notes)))
    lg = results.get("lgpd") or {}
    if lg.get("sentence"):
        out.append(("lgpd-chunking", "Chunking on real questions (LGPD)",
                    lg["sentence"] + "".join(f" {x}" for x in answer_marks(lg))))
    agree = (results.get("cited_agreement") or {}).get("sentence")
    if agree:
        out.append(("cited-agreement", "IRPF and LGPD", agree))
    return out


def answer_marks(ir: Mapping[str, Any]) -> list[str]:
    """The marks of the systems the IRPF answer names (the leader and the next cut, within the answer's budget),
    in the words of :mod:`ragcov_data.eval.estimates.marks`: a headline never drops its row's mark."""
    bud = ir.get("budgets") or {}
    ans = bud.get("answer") or {}
    fam = (bud.get("families") or {}).get(str(ans.get("budget") or bud.get("budget")))
    if not fam:
        return []
    named = [n for n in (ans.get("leader"), ans.get("next")) if n]
    rows = {r["name"]: r for r in fam.get("systems") or [] if r.get("group", ALL) == ALL}
    return marks.footnotes(((n, rows[n]) for n in named if n in rows), fam.get("level", 0.95))


def _pool_groups(lb: Mapping[str, Any]) -> str:
    """The groups whose separations depend on the pool, named (the overall sentence names its own)."""
    groups = (((lb.get("info") or {}).get("pool") or {}).get("groups") or {})
    said = [f"{g} " + ", ".join(f"{a}–{b}" for a, b in p["depends"]) for g, p in groups.items()
            if g != ALL and p.get("depends")]
    return f" By group, the order depends on the pool for {'; '.join(said)}." if said else ""


def subtitle(results: Mapping[str, Any]) -> str:
    """The report's subtitle: every task it holds, with its size and source."""
    meta, task = results.get("meta") or {}, results.get("task") or {}
    chunk = (meta.get("settings") or {}).get("chunk_words")
    said = []
    if task:
        said.append(f"ANEEL self-retrieval ({task.get('queries', 0):,} queries from {task.get('documents', '?')} "
                    "acts of aneel/aneel_fulltext.jsonl" + (f", chunks of {chunk} words)" if chunk else ")"))
    jt = results.get("juristcu") or {}
    lb = jt.get("leaderboard") or {}
    if jt:
        said.append(f"JurisTCU ({lb.get('n_queries', '?')} queries, pooled judgments)" if lb else "JurisTCU")
    ir = results.get("irpf") or {}
    if ir:
        said.append(f"IRPF real questions ({ir.get('n_questions', '?')} questions citing law articles)")
    lg = results.get("lgpd") or {}
    if lg:
        said.append(f"LGPD exam questions ({lg.get('n_questions', '?')} questions citing its dispositivos)")
    root = meta.get("data_dir")
    return "Tasks: " + "; ".join(said) + (f". Data: {root}." if root else ".")


def verdicts(results: Mapping[str, Any]) -> str:
    """The top of the report: one sentence per task on which systems are separable, and the study's answer."""
    items = verdict_items(results)
    if not items:
        return ""
    body = "".join(f'<p class="verdict" data-task="{_e(k)}"><b>{_e(label)}:</b> {_e(text)}</p>'
                   for k, label, text in items)
    return f'<section id="verdicts">{body}</section>'


def verdicts_md(results: Mapping[str, Any]) -> list[str]:
    out = []
    for _, label, text in verdict_items(results):
        out += [f"**{label}:** {text}", ""]
    return out


def juristcu_caption(rows: Sequence[Mapping[str, Any]], level: float) -> str:
    """Caption of the JurisTCU comparisons: every (metric, group) is its own family."""
    n = max((sum(1 for r in rows if r["metric"] == rows[0]["metric"] and r["group"] == rows[0]["group"]),), default=0)
    return (f"Family-wise: each metric x group is one family of {n} pair{'s' if n != 1 else ''} (A − B in retriever "
            f"order); simultaneous {level:.0%} intervals (max-|t|, one bootstrap by query within a group, by source "
            f"summary overall) and each interval's own family-adjusted p-value (p_adj: below 1 − level exactly "
            "when the interval excludes 0).")


def _html_table(head: list[str], rows: list[list[str]], cls: str, caption: str = "") -> str:
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    th = "".join(f"<th class=l>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}">{cap}<tr>{th}</tr>{body}</table>'


def _md(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + \
        ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]


def _marked(text: str, row: Mapping[str, Any]) -> str:
    """``text`` (an interval) with the row's check mark (:mod:`ragcov_data.eval.estimates.marks`)."""
    m = marks.mark(row)
    return f"{text} {m}" if m else text


def _chunk_rows(ch: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["chunking", "estimator", "method", "estimate", "interval", "queries", "documents"]
    rows = []
    for c in ch.get("chunkings") or []:
        for e in c.get("estimates") or []:
            rows.append([c["name"], e["estimator"], e["method"], _n(e["estimate"]),
                         _marked(f"[{_n(e['low'])}, {_n(e['high'])}]", e), str(e.get("n_queries")),
                         str(e.get("n_documents"))])
    return head, rows


def chunking_notes(ch: Mapping[str, Any] | None, m: Mapping[str, Any] | None) -> list[str]:
    """Under the chunking and misses tables: what each mark means for the rows carrying it."""
    level = (ch or m or {}).get("level", 0.95)
    rows = [(f"{c['name']} {e['estimator']} {e['method']}", e) for c in (ch or {}).get("chunkings") or []
            for e in c.get("estimates") or []]
    rows += [(f"difference {d['estimator']} {d['method']}", d) for d in (ch or {}).get("differences") or []]
    for blk in (m, (m or {}).get("dispositivo")):
        rows += [(f"{blk.get('chunking', '')} {f['name']} share", f) for f in (blk or {}).get("flags") or []]
    return marks.footnotes(rows, level)


def _diff_rows(ch: Mapping[str, Any]) -> tuple[list[str], list[list[str]], str]:
    """Every difference row read as the headline reads it (``dispositivo − other`` when dispositivo is one of
    the chunkings, else ``A − B`` in the comparison's order): one sign convention in the whole report."""
    a, b = (ch.get("names") or ["A", "B"])[:2]
    sign = 1.0
    if "dispositivo" in (a, b) and a != "dispositivo":
        a, b, sign = b, a, -1.0
    head = ["difference", "estimator", "method", "estimate", "interval", "documents"]
    rows = []
    for d in ch.get("differences") or []:
        lo, hi = sorted((sign * d["low"], sign * d["high"])) if d.get("low") is not None else (None, None)
        rows.append([f"{a} − {b}", d["estimator"], d["method"],
                     _n(None if d.get("estimate") is None else sign * d["estimate"], sign=True),
                     _marked(f"[{_n(lo, sign=True)}, {_n(hi, sign=True)}]", d), str(d.get("n_documents"))])
    only = ch.get("only_in") or {}
    note = (f"Paired by document, {a} − {b}: the queries differ between chunkings, the documents do not. Documents "
            f"in one task only (left out): {', '.join(f'{k}: {v}' for k, v in only.items()) or 'none'}.")
    return head, rows, note


def _flag_rows(m: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["chunking", "flag", "share of misses", "interval", "misses flagged"]
    rows = []
    for blk in (m, m.get("dispositivo")):
        if not blk:
            continue
        for f in blk.get("flags") or []:
            rows.append([blk.get("chunking", ""), f["name"], _n(f["share"], 3),
                         _marked(f"[{_n(f['low'], 3)}, {_n(f['high'], 3)}]", f),
                         f"{f.get('n_flagged', '–')} of {f.get('n_misses', blk.get('n_misses'))}"])
    return head, rows


def chunking_html(results: Mapping[str, Any], figs: Mapping[str, tuple[bytes, str]], img: Any) -> str:
    """The chunking comparison (words vs dispositivo, paired by document) and the miss analysis: the answer,
    the figures, then the tables folded away."""
    ch, m = results.get("chunkings"), results.get("misses")
    if not ch and not m:
        return ""
    parts = ["<h2>Chunking and misses</h2>"]
    if results.get("study"):
        parts.append(f'<p class="study-answer"><b>{_e(results["study"])}</b></p>')
    parts.append('<div class="grid">' + "".join(img(figs[k][0], k, figs[k][1], f"fig-{k}")
                                                for k in ("chunking", "misses_flags") if k in figs) + "</div>")
    if "misses_by_type" in figs:
        parts.append("<details><summary>Miss flags by document type (figure)</summary>"
                     + img(figs["misses_by_type"][0], "misses_by_type", figs["misses_by_type"][1], "fig-misses_by_type")
                     + "</details>")
    tables = []
    if ch:
        head, rows = _chunk_rows(ch)
        tables.append(_html_table(head, rows, "chunkings", f"Each chunking's own estimates ({ch.get('retriever', '')}, "
                                                           f"{ch.get('metric', '')})."))
        head, rows, note = _diff_rows(ch)
        tables.append(_html_table(head, rows, "chunking-difference", note))
    if m:
        head, rows = _flag_rows(m)
        tables.append(_html_table(head, rows, "misses", f"Share of hit@1 misses under each flag ({m.get('level', 0.95):.0%} "
                                                       f"CR2 intervals clustered by {m.get('cluster', 'doc_id')}); the "
                                                       "full list of misses is misses.csv."))
    if tables:
        tables += [f'<p class="note marks">{_e(x)}</p>' for x in chunking_notes(ch, m)]
        parts.append(f"<details><summary>Chunking and misses tables</summary>{''.join(tables)}</details>")
    if m:
        defs = m.get("definitions") or {}
        parts.append("<details><summary>What each miss flag means</summary><ul class=note>"
                     + "".join(f"<li><b>{_e(k)}</b>: {_e(v)}</li>" for k, v in defs.items() if isinstance(v, str))
                     + "</ul></details>")
    return "".join(parts)


def chunking_md(results: Mapping[str, Any]) -> list[str]:
    ch, m = results.get("chunkings"), results.get("misses")
    if not ch and not m:
        return []
    out = ["## Chunking and misses", ""]
    if results.get("study"):
        out += [results["study"], ""]
    if ch:
        head, rows = _chunk_rows(ch)
        out += _md(head, rows) + [""]
        head, rows, note = _diff_rows(ch)
        out += [note, ""] + _md(head, rows) + [""]
    if m:
        head, rows = _flag_rows(m)
        out += _md(head, rows) + ["", "The full list of misses is misses.csv.", ""]
    out += [x for note in chunking_notes(ch, m) for x in (note, "")]
    return out
