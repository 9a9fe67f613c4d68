"""Report sections added with the leaderboard and the chunking study (HTML and markdown), from plain
``results.json`` data.

Every pairwise table here is family-wise and says so in its caption: the simultaneous max-|t| interval
over the family's pairs and the Holm-adjusted p-value (``p_adj``). Records without ``p_adj`` (a
``results.json`` written before the leaderboard) are never printed as a pairwise table.
"""
from __future__ import annotations

import html
import math
from typing import Any, Mapping, Sequence

from ragcov_data.reporting.studies import flip_difference

__all__ = ["verdicts", "verdict_items", "family_caption", "juristcu_caption", "leaderboard_html", "pairs_html",
           "chunking_html", "verdicts_md",
           "leaderboard_md", "chunking_md", "is_family_wise"]

ALL = "__all__"


def _e(x: Any) -> str:
    return html.escape(str(x))


def _n(x: Any, nd: int = 4, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:+.{nd}f}" if sign else f"{x:.{nd}f}"


def _p(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return "<0.0001" if x < 1e-4 else f"{x:.4f}"


def is_family_wise(records: Sequence[Mapping[str, Any]]) -> bool:
    """True when every pairwise record carries its family-wise ``p_adj`` (and so may be printed)."""
    return bool(records) and all("p_adj" in r for r in records)


def family_caption(n_pairs: int, level: float, unit: str, n_resamples: Any = None) -> str:
    """The caption of every pairwise table: which family, which interval, which adjustment."""
    b = f", B = {n_resamples}" if n_resamples else ""
    which = f"{n_pairs} pairs" if n_pairs != 1 else "1 pair (a family of one)"
    return (f"Family-wise over the {which}: "
            f"simultaneous {level:.0%} intervals (max-|t|, one cluster bootstrap by {unit}{b}) and Holm-adjusted "
            f"p-values (p_adj); a pair is separable when p_adj < {1 - level:.2g}.")


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
        out.append(("juristcu", f"JurisTCU ({m}, all queries)" if m else "JurisTCU", jt["sentence"]))
    if results.get("study"):
        out.append(("study", "Chunking and misses", results["study"]))
    return out


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


def _systems_rows(systems: Sequence[Mapping[str, Any]], judged: bool) -> list[list[str]]:
    rows = []
    for s in systems:
        row = [f"{s['rank']} [{s['rank_low']}, {s['rank_high']}]", str(s["name"]), _n(s["estimate"]),
               f"[{_n(s['low'])}, {_n(s['high'])}]", str(s["tier"])]
        if judged:
            j = s.get("judged")
            row.append("–" if j is None else f"{j:.2f}" + (" (low)" if s.get("judged_flag") else ""))
            row.append(_n(s.get("condensed")))
        rows.append(row)
    return rows


def _systems_head(lb: Mapping[str, Any]) -> tuple[list[str], bool]:
    judged = lb.get("judged_k") is not None
    head = ["rank [interval]", "system", "estimate", "interval", "tier"]
    if judged:
        head += [f"judged@{lb['judged_k']}", "condensed"]
    return head, judged


def _html_table(head: list[str], rows: list[list[str]], cls: str, caption: str = "") -> str:
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    th = "".join(f"<th class=l>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}">{cap}<tr>{th}</tr>{body}</table>'


def _unit(lb: Mapping[str, Any]) -> str:
    return {"doc_id": "document", "source_key": "source summary"}.get(lb.get("cluster"), str(lb.get("cluster")))


def _groups(lb: Mapping[str, Any]) -> list[str]:
    return list(dict.fromkeys(s["group"] for s in lb.get("systems") or []))


def leaderboard_html(lb: Mapping[str, Any], level: float, pairs: bool = True) -> str:
    """Per group: the systems (rank interval, estimate interval, tier[, judged@k]) and, unless ``pairs`` is
    False (the caller prints them elsewhere), the family-wise pairs."""
    parts = []
    head, judged = _systems_head(lb)
    n_res = (lb.get("info") or {}).get("n_resamples")
    for g in _groups(lb):
        sy = [s for s in lb["systems"] if s["group"] == g]
        pr = [p for p in lb.get("pairs") or [] if p["group"] == g]
        label = "all queries" if g == ALL else f"group {g}"
        info = (lb.get("groups") or {}).get(g, {})
        parts.append(f"<h3>{_e(lb.get('metric', ''))}, {_e(label)}</h3>")
        parts.append(_html_table(head, _systems_rows(sy, judged), "leaderboard-systems",
                                 f"Systems, best first: {info.get('estimator', '')} estimate with its "
                                 f"{info.get('method', '')} interval; rank interval and tier (a letter shared = "
                                 "not separable) from the Holm decisions."))
        if pairs:
            parts.append(pairs_html(pr, level, _unit(lb) if g == ALL or info.get("estimator") != "mean" else "query",
                                    n_res))
        sep = (lb.get("separable") or {}).get(g)
        if sep:
            parts.append(f"<p class=note>{_e(sep)}</p>")
    return "".join(parts)


def pairs_html(pairs: Sequence[Mapping[str, Any]], level: float, unit: str, n_resamples: Any = None) -> str:
    """One family's pairs (a ranked above b): diff, simultaneous interval, p, Holm p_adj, wins/losses/ties."""
    if not is_family_wise(pairs):
        return ""
    head = ["a − b", "diff", "simultaneous interval", "p", "p_adj (Holm)", "separable", "wins/losses/ties"]
    rows = [[f"{p['a']} − {p['b']}", _n(p["diff"], sign=True), f"[{_n(p['low'], sign=True)}, {_n(p['high'], sign=True)}]",
             _p(p.get("p")), _p(p["p_adj"]), "yes" if p.get("significant") else "no",
             f"{p.get('wins', '–')}/{p.get('losses', '–')}/{p.get('ties', '–')}"] for p in pairs]
    return _html_table(head, rows, "pairs", family_caption(len(pairs), level, unit, n_resamples))


def leaderboard_md(lb: Mapping[str, Any], level: float, pairs: bool = True) -> list[str]:
    """Markdown of :func:`leaderboard_html`."""
    head, judged = _systems_head(lb)
    n_res = (lb.get("info") or {}).get("n_resamples")
    out = []
    for g in _groups(lb):
        sy = [s for s in lb["systems"] if s["group"] == g]
        pr = [p for p in lb.get("pairs") or [] if p["group"] == g]
        info = (lb.get("groups") or {}).get(g, {})
        out += [f"### {lb.get('metric', '')}, {'all queries' if g == ALL else 'group ' + g}", ""]
        out += _md(head, _systems_rows(sy, judged)) + [""]
        if pairs and is_family_wise(pr):
            unit = _unit(lb) if g == ALL or info.get("estimator") != "mean" else "query"
            out += [family_caption(len(pr), level, unit, n_res), ""]
            out += _md(["a − b", "diff", "simultaneous interval", "p", "p_adj (Holm)", "wins/losses/ties"],
                       [[f"{p['a']} − {p['b']}", _n(p["diff"], sign=True),
                         f"[{_n(p['low'], sign=True)}, {_n(p['high'], sign=True)}]", _p(p.get("p")), _p(p["p_adj"]),
                         f"{p.get('wins')}/{p.get('losses')}/{p.get('ties')}"] for p in pr]) + [""]
        sep = (lb.get("separable") or {}).get(g)
        if sep:
            out += [sep, ""]
    return out


def juristcu_caption(rows: Sequence[Mapping[str, Any]], level: float) -> str:
    """Caption of the JurisTCU comparisons: every (metric, group) is its own family."""
    n = max((sum(1 for r in rows if r["metric"] == rows[0]["metric"] and r["group"] == rows[0]["group"]),), default=0)
    return (f"Family-wise: each metric x group is one family of {n} pair{'s' if n != 1 else ''} (A − B in retriever "
            f"order); simultaneous {level:.0%} intervals (max-|t|, one bootstrap by query within a group, by source "
            f"summary overall) and Holm-adjusted p-values (p_adj).")


def _md(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + \
        ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]


def _chunk_rows(ch: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["chunking", "estimator", "method", "estimate", "interval", "queries", "documents"]
    rows = []
    for c in ch.get("chunkings") or []:
        for e in c.get("estimates") or []:
            rows.append([c["name"], e["estimator"], e["method"], _n(e["estimate"]), f"[{_n(e['low'])}, {_n(e['high'])}]",
                         str(e.get("n_queries")), str(e.get("n_documents"))])
    return head, rows


def _diff_rows(ch: Mapping[str, Any]) -> tuple[list[str], list[list[str]], str]:
    a, b = (ch.get("names") or ["A", "B"])[:2]
    head = ["difference", "estimator", "method", "estimate", "interval", "documents"]
    rows = [[f"{a} − {b}", d["estimator"], d["method"], _n(d["estimate"], sign=True),
             f"[{_n(d['low'], sign=True)}, {_n(d['high'], sign=True)}]", str(d.get("n_documents"))]
            for d in ch.get("differences") or []]
    only = ch.get("only_in") or {}
    note = (f"Paired by document: the queries differ between chunkings, the documents do not. Documents in one "
            f"task only (left out): {', '.join(f'{k}: {v}' for k, v in only.items())}.")
    d = flip_difference(ch)
    if d and d["a"] != a:
        note += (f" The sentence above reads the macro row as {d['a']} − {d['b']}: {d['estimate']:+.4f} "
                 f"[{d['low']:+.4f}, {d['high']:+.4f}].")
    return head, rows, note


def _flag_rows(m: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["chunking", "flag", "share of misses", "interval", "misses flagged"]
    rows = []
    for blk in (m, m.get("dispositivo")):
        if not blk:
            continue
        for f in blk.get("flags") or []:
            rows.append([blk.get("chunking", ""), f["name"], _n(f["share"], 3), f"[{_n(f['low'], 3)}, {_n(f['high'], 3)}]",
                         f"{f.get('n_flagged', '–')} of {f.get('n_misses', blk.get('n_misses'))}"])
    return head, rows


def chunking_html(results: Mapping[str, Any], figs: Mapping[str, tuple[bytes, str]], img: Any) -> str:
    """The chunking comparison (words vs dispositivo, paired by document) and the miss analysis."""
    ch, m = results.get("chunkings"), results.get("misses")
    if not ch and not m:
        return ""
    parts = ["<h2>Chunking and misses</h2>"]
    if results.get("study"):
        parts.append(f'<p class="study-answer"><b>{_e(results["study"])}</b></p>')
    if ch:
        head, rows = _chunk_rows(ch)
        parts.append(_html_table(head, rows, "chunkings", f"Each chunking's own estimates ({ch.get('retriever', '')}, "
                                                          f"{ch.get('metric', '')})."))
        head, rows, note = _diff_rows(ch)
        parts.append(_html_table(head, rows, "chunking-difference", note))
        if "chunking" in figs:
            parts.append(img(figs["chunking"][0], "chunking", figs["chunking"][1], "fig-chunking"))
    if m:
        head, rows = _flag_rows(m)
        parts.append(_html_table(head, rows, "misses", f"Share of hit@1 misses under each flag ({m.get('level', 0.95):.0%} "
                                                      f"CR2 intervals clustered by {m.get('cluster', 'doc_id')}); the "
                                                      "full list of misses is misses.csv."))
        parts.append('<div class="grid">' + "".join(img(figs[k][0], k, figs[k][1], f"fig-{k}")
                                                    for k in ("misses_flags", "misses_by_type") if k in figs) + "</div>")
        defs = m.get("definitions") or {}
        parts.append("<ul class=note>" + "".join(f"<li><b>{_e(k)}</b>: {_e(v)}</li>" for k, v in defs.items()
                                                  if isinstance(v, str)) + "</ul>")
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
    return out
