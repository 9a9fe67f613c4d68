"""Render a benchmark ``results`` dict (the content of ``results.json``) as HTML and markdown.

The page is written for a reader: its first screen opens with the two answers, which retriever and which cut
(:mod:`.first_screen`), then one table of every task's systems with scores, intervals and tiers, the
separability, pool and coverage verdicts in a sentence each, and links to the sections and to the open glossary
(:mod:`.glossary`), which defines every term in plain words. Each section then leads with its figure; long tables
fold away (``<details>``) and all of them are in ``summary.md``. Numbers are printed one way:
p-values as ``< 0.0001`` or with 4 decimals, differences as ``A − B`` with A named first.

The HTML page is self-contained: figures are PNGs embedded as base64 ``data:`` URIs (each ``<img>`` carries
``data-min-font-px``, its smallest text in pixels at natural size, and ``data-clipped``) and the style is
inline. An inline script marks ``<body data-figures="ok">`` once every image has loaded with a non-zero
size, ``data-small-text`` with the figures whose text is under 10 px as displayed, ``data-svg-clipped``
with any SVG label outside its drawing, ``data-hscroll`` (is the page wider than the window?), ``data-overflow``
(elements of the first screen wider than their box) and ``data-answers`` (each answer's bottom edge in pixels
from the top of the page); the browser test reads them.
"""
from __future__ import annotations

import base64
import html
import math
from typing import Any, Mapping

from ragcov_data._format import num, pct
from ragcov_data.eval.comparisons import leaderboard_render as LB
from ragcov_data.eval.estimates import marks
from ragcov_data.reporting import figures as F
from ragcov_data.reporting import cuts as C
from ragcov_data.reporting import sections as S
from ragcov_data.reporting.blocks import as_ranked, flip_difference
from ragcov_data.reporting.first_screen import answers_html, table_checks_sentence
from ragcov_data.reporting.glossary import GLOSSARY, glossary, glossary_html, glossary_md  # noqa: F401  (GLOSSARY: public)
from ragcov_data.reporting.proxy_section import TITLE as PROXY_TITLE, proxy_figures, proxy_html, proxy_markdown

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1080px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}tr.naive td{color:#c0392b;background:#fdf0ee}
.naive-tag{font-size:.75em;background:#c0392b;color:#fff;border-radius:3px;padding:0 .3em;margin-left:.3em}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}figcaption{font-size:.85em;color:#555}
.grid{display:flex;flex-wrap:wrap;gap:1em}.note{color:#555;font-size:.9em}.warn{color:#c0392b}
caption{caption-side:top;text-align:left;font-size:.85em;color:#555;padding:.2em 0}
#verdicts{background:#f4f8fc;border-left:4px solid #2c6fbb;padding:.3em 1em;margin:1em 0}
#verdicts p{margin:.45em 0}#verdicts details{margin:0 0 .4em 1em;font-size:.9em}nav.toc{font-size:.9em}nav.toc a{margin-right:1em}
details{margin:.6em 0}summary{cursor:pointer;color:#2c6fbb}dl.glossary dt{font-weight:600;margin-top:.4em}
dl.glossary{columns:3 20em;column-gap:2em;font-size:.92em}dl.glossary div{break-inside:avoid}dl.glossary dd{margin-left:1.2em}table.answer td.sys{text-align:left;font-weight:600}table.answer td{white-space:nowrap}
table.answer th{max-width:8em}table.answer td.l{white-space:normal}
#answers{background:#eef6ee;border-left:4px solid #2e7d32;padding:.3em 1em;margin:1em 0}
#answers p{margin:.4em 0}#answers p.answer-line{font-size:1.02em}
"""

_SCRIPT = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute('data-figures', ok === imgs.length && imgs.length > 0 ? 'ok' : 'missing');
  document.body.setAttribute('data-figures-loaded', String(ok));
  document.body.setAttribute('data-figures-total', String(imgs.length));
  var small = [];
  imgs.forEach(function (i) {
    var px = parseFloat(i.getAttribute('data-min-font-px'));
    if (i.naturalWidth > 0 && i.clientWidth > 0 && px * i.clientWidth / i.naturalWidth < 10) {  // folded: not shown
      small.push(i.parentNode.id + ':' + (px * i.clientWidth / i.naturalWidth).toFixed(1));
    }
    if (i.getAttribute('data-clipped') !== '0') { small.push(i.parentNode.id + ':clipped'); }
  });
  document.body.setAttribute('data-small-text', small.join(' '));
  var clipped = [];
  document.querySelectorAll('svg').forEach(function (s) {
    var W = s.viewBox.baseVal.width, H = s.viewBox.baseVal.height;
    s.querySelectorAll('text').forEach(function (t) {
      var r = t.getBBox();
      if (r.x < -0.5 || r.y < -0.5 || r.x + r.width > W + 0.5 || r.y + r.height > H + 0.5) { clipped.push(t.textContent); }
    });
  });
  document.body.setAttribute('data-svg-clipped', clipped.join(' | '));
  document.body.setAttribute('data-svg-total', String(document.querySelectorAll('svg').length));
  document.body.setAttribute('data-height', String(document.documentElement.scrollHeight));
  var de = document.documentElement;
  document.body.setAttribute('data-hscroll', String(de.scrollWidth > de.clientWidth));
  var over = [];
  document.querySelectorAll('#answers, #verdicts').forEach(function (box) {
    var right = box.getBoundingClientRect().right;
    box.querySelectorAll('table, p, div').forEach(function (el) {
      if (el.getBoundingClientRect().right > right + 0.5) { over.push((el.className || el.tagName) + ''); }
    });
  });
  document.body.setAttribute('data-overflow', over.join(' '));
  var ans = Array.prototype.slice.call(document.querySelectorAll('[data-answer]'));
  document.body.setAttribute('data-answers', ans.map(function (a) {
    return a.getAttribute('data-answer') + ':' + Math.ceil(a.getBoundingClientRect().bottom + window.scrollY);
  }).join(' '));
});
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _num(x: Any, nd: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if isinstance(x, float):
        return num(x, nd)
    return _e(x)


def _pct(x: Any) -> str:
    return pct(x)


def _img(png: bytes, alt: str, caption: str, fig_id: str) -> str:
    b64 = base64.b64encode(png).decode("ascii")
    px = getattr(png, "min_font_px", float("nan"))
    meta = (f' data-min-font-px="{px:.1f}" data-clipped="{getattr(png, "clipped", 0)}"'
            if isinstance(px, float) and math.isfinite(px) else ' data-min-font-px="99" data-clipped="0"')
    return (f'<figure id="{fig_id}"><img alt="{_e(alt)}"{meta} src="data:image/png;base64,{b64}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _fold(summary: str, body: str) -> str:
    return f"<details><summary>{_e(summary)}</summary>{body}</details>" if body else ""


def figures(results: Mapping[str, Any]) -> dict[str, tuple[bytes, str]]:
    """All report figures as ``{id: (png bytes, caption)}`` (also written as PNG files beside the HTML)."""
    naive = set(results.get("naive_methods", []))
    metric = (results.get("meta") or {}).get("metric", "hit@1")
    out: dict[str, tuple[bytes, str]] = {}
    rets = results.get("retrievers", [])
    if any(r.get("per_doc") for r in rets):  # small multiples: one panel a retriever, shared axes
        out["retrievers"] = (F.retrievers_grid(rets, metric),
                             f"Per-document {metric} of every retriever: how many documents reach each rate "
                             "(solid orange: micro mean over queries; dashed green: macro mean of document means).")
        out["by_type"] = (F.rates_by_type_heatmap(rets, metric),
                          f"{metric} (micro) of every retriever by document type.")
    if any(r.get("estimates") for r in rets):
        out["methods"] = (F.methods_plot(rets, naive, metric),
                          f"{metric} of every retriever under every interval method; naive chunk-level methods in "
                          "red.")
    cov = results.get("coverage") or {}
    if cov.get("rows"):
        out["coverage"] = (F.coverage_by_k(cov["rows"], cov.get("level", 0.95), naive),
                           "Coverage by method and K (bars: Monte-Carlo margin; dashed line: nominal level).")
        out["width"] = (F.width_by_method(cov["rows"], naive), "Mean interval width by method and K.")
    acf = {r["name"]: r["acf"] for r in rets if r.get("acf")}
    if acf:
        out["acf"] = (F.autocorrelation(acf), "Within-document autocorrelation of hit@1 by chunk lag.")
    comps = results.get("comparisons") or []
    if S.is_family_wise(comps):
        ranked = as_ranked(comps, results.get("leaderboard"))
        shown, which = neighbour_pairs(ranked, results.get("leaderboard")), "every pair"
        if len(shown) < len(ranked):
            which = (f"the {len(shown)} pairs of neighbours in rank (of the family's {len(ranked)}; every pair is in "
                     "the leaderboard's pair matrix)")
        out["paired"] = (F.paired_comparison(shown, n_family=len(ranked)),
                         "Paired comparison of retrievers on the same queries, family-wise: simultaneous intervals "
                         f"over the family's {len(ranked)} pair{'s' if len(ranked) != 1 else ''} (separable when 0 is "
                         f"outside), shown for {which}; pairs oriented as in the leaderboard (a ranked above b).")
    ch = results.get("chunkings") or {}
    d = flip_difference(ch) if ch.get("per_document") else None
    if d:
        out["chunking"] = (F.chunking_scatter(ch["per_document"], ch["names"], d),
                           f"Per-document hit@1 of {ch.get('retriever', '')} under {d['b']} (x) and {d['a']} (y); "
                           "dashed: no change; dot area: queries. Title: the paired difference and its interval.")
    m = results.get("misses") or {}
    if m.get("flags"):
        blocks = {m.get("chunking", "words"): m, **({"dispositivo": m["dispositivo"]} if m.get("dispositivo") else {})}
        out["misses_flags"] = (F.miss_flags(blocks, m.get("level", 0.95)),
                               f"{m.get('retriever', '')}: share of hit@1 misses under each flag, by chunking "
                               "(error bars: CR2 intervals clustered by the query's document).")
    if m.get("by_type_flags"):
        out["misses_by_type"] = (F.miss_flags_by_type(m["by_type_flags"], f"{m.get('retriever', '')}, "
                                                      f"{m.get('chunking', '')}: miss flags by document type"),
                                 "Each flag's share within a document type's misses (number of misses in brackets).")
    for key, corpus in C.CORPORA.items():
        bud = (results.get(key) or {}).get("budgets") or {}
        if bud.get("curve"):
            out[f"{key}_budget"] = (F.budget_curve(bud["curve"], bud.get("level", 0.95), bud.get("budget")),
                                    f"{corpus} questions: the share of the cited provisions' text inside the same "
                                    "context budget, per chunking and retriever; bars: each system's interval (CR2, "
                                    "clustered as the family; the pairs' simultaneous intervals are in each budget's "
                                    f"family); {bud.get('context', '')}.")
    out.update(proxy_figures(results))  # self-retrieval against real questions
    return out


# ------------------------------------------------------------------------------------------ the answer
#: Above this many pairs the paired figure shows the neighbours in rank only (the pair matrix has them all).
MAX_PAIRS_DRAWN = 6


def neighbour_pairs(ranked: list[dict[str, Any]], board: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """``ranked`` itself when short; else the pairs of systems next to each other in the leaderboard's order."""
    if len(ranked) <= MAX_PAIRS_DRAWN or not board:
        return ranked
    order = [s["name"] for s in sorted((s for s in board.get("systems") or [] if s.get("group") == LB.ALL),
                                       key=lambda s: (s["rank"], -s["estimate"]))]
    nxt = {frozenset(p) for p in zip(order, order[1:])}
    kept = [c for c in ranked if frozenset((c["a"], c["b"])) in nxt]
    return kept or ranked


def answer_rows(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per task and system (overall group): task, metric, system, score, interval, tier, rank, and on
    pooled judgments judged@k and bound_high."""
    rows = []
    meta = results.get("meta") or {}
    tasks = [("ANEEL self-retrieval", results.get("leaderboard"), meta.get("metric", "hit@1"))]
    jt = results.get("juristcu") or {}
    tasks.append(("JurisTCU", jt.get("leaderboard"), (jt.get("leaderboard") or {}).get("metric")))
    ir = results.get("irpf") or {}
    tasks.append(("IRPF questions", ir.get("leaderboard"), (ir.get("leaderboard") or {}).get("metric")))
    for task, lb, metric in tasks:
        if lb:
            for s in lb.get("systems") or []:
                if s["group"] == LB.ALL:
                    per = " (per-document mean)" if (lb.get("info") or {}).get("micro_line") else ""
                    rows.append({"task": task, "metric": lb.get("metric", metric) + per, "system": s["name"],
                                 "estimate": s["estimate"], "low": s["low"], "high": s["high"],
                                 "tier": LB.tier_text(lb, LB.ALL, s),  # ~: its order flips under the pool
                                 "rank": LB.rank_text(s),
                                 "judged": s.get("judged"), "bound_high": s.get("bound_high"), **_check(s)})
        elif task.startswith("ANEEL"):
            for r in results.get("retrievers") or []:
                e = next((e for e in r.get("estimates") or [] if e["estimator"] == "micro" and e["method"] == "cr2"),
                         None)
                if e:
                    rows.append({"task": task, "metric": metric, "system": r["name"], "estimate": e["estimate"],
                                 "low": e["low"], "high": e["high"], "tier": "–", "rank": "1 [1, 1]",
                                 "judged": None, "bound_high": None, **_check(e)})
    return rows


def _check(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's check as the report carries it: coverage, its error, status, reason and mark (:mod:`.marks`)."""
    return {"verified": row.get("verified"), "verified_coverage": row.get("verified_coverage"),
            "verified_mc_se": row.get("verified_mc_se"), **marks.record(row)}


def answer_notes(rows: list[Mapping[str, Any]], level: float) -> list[str]:
    """Under the answer table: what each mark means for the rows carrying it, named ``task: system``."""
    return marks.footnotes(((f"{r['task']}: {r['system']}", r) for r in rows), level)


def _interval_cell(r: Mapping[str, Any], level: float) -> str:
    """``<td>[low, high] *</td>``: the interval with its check's mark, the mark's words on hover."""
    m = marks.mark(r)
    text = f"[{_num(r.get('low'))}, {_num(r.get('high'))}]" + (f" {m}" if m else "")
    if not m:
        return f"<td>{_e(text)}</td>"
    return f'<td class="marked" data-mark="{_e(m)}" title="{_e(marks.words(r, level))}">{_e(text)}</td>'


def coverage_sentence(results: Mapping[str, Any]) -> str | None:
    """The coverage study's verdict in one sentence (samples of K documents, not the answer table's designs): the
    recommended method per estimator and how far the naive ones fall short."""
    cov = results.get("coverage") or {}
    if not cov.get("rows"):
        return None
    naive = set(results.get("naive_methods", []))
    level = cov.get("level", 0.95)
    k = cov.get("recommend_k")
    said = []
    for est, rec in (cov.get("recommendation") or {}).items():
        if rec.get("qualified"):
            said.append(f"for {est}, {rec['method']} covers {_pct(rec.get('coverage'))} "
                        f"(± {num(100 * rec.get('mc_margin', 0), 1)})")
        else:
            said.append(f"for {est}, no method reaches {level:.0%} (best {rec['method']} at "
                        f"{_pct(rec.get('coverage'))}): sample more documents")
    rows = [r for r in cov["rows"] if r["method"] in naive and (k is None or r["k"] == k)]
    text = (f"On samples of {k} ANEEL documents (the coverage study, another design than the table's), nominal "
            f"{level:.0%} intervals: " if k else
            f"In the coverage study (samples of ANEEL documents, another design than the table's), nominal {level:.0%} "
            "intervals: ")
    text += "; ".join(said) if said else "see its table"
    if rows:
        lo, hi = min(r["coverage"] for r in rows), max(r["coverage"] for r in rows)
        text += f"; naive chunk-level intervals cover only {_pct(lo)}–{_pct(hi)}"
    return text + "."


def _verdict_html(results: Mapping[str, Any], key: str, label: str, text: str) -> str:
    """One task's verdict: a leaderboard's in one short sentence, the full one folded below it; a study's
    answer whole."""
    board = {"aneel_taesa": results.get("leaderboard"), "juristcu": (results.get("juristcu") or {}).get("leaderboard"),
             "irpf": (results.get("irpf") or {}).get("leaderboard")}.get(key)
    if not board or not board.get("pairs"):
        return f'<p class="verdict" data-task="{_e(key)}"><b>{_e(label)}:</b> {_e(text)}</p>'
    return (f'<div class="verdict" data-task="{_e(key)}"><p><b>{_e(label)}:</b> {_e(LB.short_sentence(board))} '
            f"</p><details><summary>in full</summary><p>{_e(text)}</p></details></div>")


def _answer_html(results: Mapping[str, Any]) -> str:
    rows = answer_rows(results)
    pooled = any(r["bound_high"] is not None for r in rows)
    head = ["task", "metric", "system", "score", "interval", "tier", "rank [interval]"] + \
        (["judged@10", "unjudged_as_relevant"] if pooled else [])
    body = []
    level = (results.get("meta") or {}).get("level", 0.95)
    for r in rows:
        cells = [f'<td class=l>{_e(r["task"])}</td>', f'<td class=l>{_e(r["metric"])}</td>',
                 f'<td class="sys">{_e(r["system"])}</td>', _num(r["estimate"]), _interval_cell(r, level),
                 r["tier"], r["rank"]]
        if pooled:
            cells += [num(r["judged"], 2), _num(r["bound_high"])]
        body.append("<tr>" + "".join(c if str(c).startswith("<td") else f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    table = (f'<table class="answer"><caption>Every task\'s systems, best first: score with its {level:.0%} '
             "interval (clustered by the sampled unit), tier (a shared letter = not separable, family-wise) and rank "
             "interval." + (" On JurisTCU's pooled judgments the score reads unjudged documents as non-relevant "
                            "(trec_eval's number) and unjudged_as_relevant reads them as relevant: two readings, "
                            "not bounds (see JurisTCU); a tier marked ~ flips order against another system under "
                            "some reading." if pooled else "")
             + "</caption><tr>" + "".join(f"<th class=l>{_e(h).replace('_', '_<wbr>')}</th>" for h in head) + "</tr>" + "".join(body)
             + "</table>" + "".join(f'<p class="note marks">{_e(x)}</p>' for x in answer_notes(rows, level))
             ) if rows else ""  # under the table, each mark in its words
    micro = LB.micro_lines(results.get("leaderboard") or {})
    table += f'<p class="note micro-line">ANEEL {_e(". ".join(micro))}</p>' if micro else ""
    items = S.verdict_items(results)
    cov = " ".join(x for x in (table_checks_sentence(rows, level), coverage_sentence(results)) if x)
    if cov:
        items.append(("coverage", "Coverage of the intervals", cov))
    jt = results.get("juristcu") or {}
    pool = ((jt.get("leaderboard") or {}).get("info") or {}).get("pool") or {}
    verdicts = "".join(_verdict_html(results, k, label, text) for k, label, text in items)
    if pool.get("line"):
        verdicts += f'<p class="verdict pool" data-task="juristcu-pool"><b>JurisTCU pool:</b> {_e(pool["line"])}</p>'
    links = [("aneel", "ANEEL leaderboard"), ("retrievers", "Retrievers"), ("chunking", "Chunking and misses"),
             ("coverage", "Coverage"), ("juristcu", "JurisTCU"), ("irpf", "Real questions (IRPF)"),
             ("lgpd", "Real questions (LGPD)"), ("glossary", "Glossary")]
    links.insert(len(links) - 1, ("proxy", PROXY_TITLE))
    present = {"aneel": bool(results.get("leaderboard") or results.get("retrievers")),
               "retrievers": bool(results.get("retrievers")), "chunking": bool(results.get("chunkings")
                                                                                or results.get("misses")),
               "coverage": bool((results.get("coverage") or {}).get("rows")), "juristcu": bool(results.get("juristcu")),
               "irpf": bool(results.get("irpf")), "lgpd": bool(results.get("lgpd")),
               "glossary": True, "proxy": bool(results.get("proxy"))}
    toc = '<nav class="toc">' + "".join(f'<a href="#{k}">{_e(v)}</a>' for k, v in links if present[k]) + "</nav>"
    return f'{answers_html(results)}<section id="verdicts">{table}{verdicts}{toc}</section>'


# ------------------------------------------------------------------------------------------ sections
def _estimates_table(rets: list[Mapping[str, Any]], naive: set[str], level: float = 0.95) -> str:
    """Every retriever's estimate and interval under every method, one row a method, each with its check's
    mark (explained under the table)."""
    names = [r["name"] for r in rets]
    keys = list(dict.fromkeys((e["estimator"], e["method"]) for r in rets for e in r.get("estimates") or []))
    by = {(r["name"], e["estimator"], e["method"]): e for r in rets for e in r.get("estimates") or []}
    head = "<tr><th class=l>estimator</th><th class=l>method</th>" + "".join(f"<th>{_e(n)}</th>" for n in names) + "</tr>"
    body = []
    for est, meth in keys:
        is_naive = meth in naive
        tag = '<span class="naive-tag">naive</span>' if is_naive else ""
        cells = []
        for n in names:
            e = by.get((n, est, meth))
            flags = ", ".join(f for f in (e.get("flags") or []) if f != "naive") if e else ""
            m = marks.mark(e) if e else ""
            cells.append("<td>–</td>" if e is None else
                         (f'<td class="marked" data-mark="{_e(m)}" title="{_e(marks.words(e, level))}">' if m else
                          "<td>")
                         + f"{_num(e.get('estimate'))} [{_num(e.get('low'))}, {_num(e.get('high'))}]"
                         + (f" {_e(m)}" if m else "") + (f" <small>{_e(flags)}</small>" if flags else "") + "</td>")
        body.append(f'<tr class="{"naive" if is_naive else ""}"><td class=l>{_e(est)}</td><td class=l>{_e(meth)}{tag}'
                    f'</td>{"".join(cells)}</tr>')
    notes = marks.footnotes(((f"{n} {est} {meth}", by[(n, est, meth)]) for est, meth in keys for n in names
                             if (n, est, meth) in by), level)
    return (f'<table class="estimates">{head}{"".join(body)}</table>'
            + "".join(f'<p class="note marks">{_e(x)}</p>' for x in notes))


_DIAG = [("micro", "micro", 4), ("macro", "macro", 4), ("icc", "icc", 3), ("deff", "deff", 1), ("n_eff", "n_eff", 1),
         ("lag1_autocorr", "lag1 autocorrelation", 3), ("share_never_hit", "share never hit", 3),
         ("mean_size", "queries a document", 1)]


def _diagnostics_table(rets: list[Mapping[str, Any]]) -> str:
    keys = [(k, label, nd) for k, label, nd in _DIAG if any(k in (r.get("diagnostics") or {}) for r in rets)]
    if not keys:
        return ""
    head = "<tr><th class=l>retriever</th>" + "".join(f"<th>{_e(label)}</th>" for _, label, _ in keys) + \
        "<th class=l>flags</th></tr>"
    body = []
    for r in rets:
        d = r.get("diagnostics") or {}
        flags = d.get("flags") or []
        body.append(f"<tr><td class=l>{_e(r['name'])}</td>" + "".join(f"<td>{_num(d.get(k), nd)}</td>" for k, _, nd in keys)
                    + f"<td class=l>{_e(', '.join(map(str, flags)) if flags else 'none')}</td></tr>")
    return (f'<table class="diagnostics"><caption>Design diagnostics of each retriever\'s per-query outcomes (see '
            f'the glossary).</caption>{head}{"".join(body)}</table>')


def _coverage_table(rows: list[Mapping[str, Any]], naive: set[str]) -> str:
    head = ("<tr><th class=l>estimator</th><th class=l>method</th><th>K</th><th>coverage</th><th>MC margin</th>"
            "<th>mean width</th><th>median width</th><th>degenerate</th></tr>")
    body = []
    for r in rows:
        cls = "naive" if r["method"] in naive else ""
        body.append(f'<tr class="{cls}"><td class=l>{_e(r["estimator"])}</td><td class=l>{_e(r["method"])}</td>'
                    f'<td>{r["k"]}</td><td>{_pct(r["coverage"])}</td><td>±{_num(100 * r["mc_margin"], 1)}</td>'
                    f'<td>{_num(r["mean_width"])}</td><td>{_num(r["median_width"])}</td>'
                    f'<td>{_pct(r["degenerate_share"])}</td></tr>')
    return f'<table class="coverage">{head}{"".join(body)}</table>'


def _cell(c: str, v: Any) -> str:
    if c in ("p", "p_adj"):
        return f"<td>{_e(LB.p_text(v))}</td>"
    if isinstance(v, float) or v is None:
        return f"<td>{_num(v)}</td>"
    return f"<td class=l>{_e(v)}</td>"


def _generic_table(rows: list[Mapping[str, Any]], cols: list[str], naive: set[str], cls: str,
                   caption: str = "", signed: tuple[str, ...] = ()) -> str:
    cols = [c for c in cols if any(c in r for r in rows)]
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    head = "".join(f"<th class=l>{_e(c)}</th>" for c in cols)
    body = []
    for r in rows:
        tr = "naive" if r.get("method") in naive else ""
        body.append(f'<tr class="{tr}">' + "".join(
            f"<td>{LB._num(r.get(c), sign=True)}</td>" if c in signed else _cell(c, r.get(c)) for c in cols) + "</tr>")
    return f'<table class="{cls}">{cap}<tr>{head}</tr>{"".join(body)}</table>'


def _settings_words(meta: Mapping[str, Any]) -> str:
    s = meta.get("settings") or {}
    parts = []
    for k, label in (("chunk_words", "chunks of {} words"), ("retrievers", "retrievers {}"),
                     ("reps", "{} coverage replicates per K"), ("k", "K = {}"), ("n_resamples", "{} bootstrap resamples"),
                     ("seed", "seed {}")):
        if k in s:
            v = s[k]
            parts.append(label.format(", ".join(map(str, v)) if isinstance(v, (list, tuple)) else v))
    return "; ".join(parts)


def _juristcu_html(jt: Mapping[str, Any], level: float, naive: set[str]) -> str:
    parts = ['<section id="juristcu"><h2>JurisTCU</h2>']
    lb = jt.get("leaderboard")
    if lb:
        parts += [f'<p class="pool">{_e(w)}</p>' for w in LB.pool_words(lb)]
    if jt.get("note"):
        parts.append(f"<p class=note>{_e(jt['note'])}</p>")
    parts.append(f"<p class=note>{_e(_juristcu_units(jt))}</p>")
    if lb:
        parts.append(LB.panels_html(lb, heading=3, systems_class="leaderboard-systems", matrix_class="pair-matrix",
                                    fold_pairs=True, fold_groups=True))
    if jt.get("estimates"):
        parts.append(_fold(f"Estimates by query group ({len(jt['estimates'])} rows)", _generic_table(
            jt["estimates"], ["retriever", "metric", "group", "unit", "method", "estimate", "low", "high", "mark",
                              "n_queries", "n_clusters"], naive, "juristcu-estimates")
            + "".join(f'<p class="note marks">{_e(x)}</p>' for x in _juristcu_notes(jt, level))))
    if S.is_family_wise(jt.get("comparisons") or []):
        parts.append(_fold(f"Paired comparisons, every metric and group ({len(jt['comparisons'])} rows)",
                           _generic_table(jt["comparisons"], ["retriever_a", "retriever_b", "metric", "group", "method",
                                                              "estimate", "low", "high", "p", "p_adj", "wins",
                                                              "losses", "ties"], naive, "juristcu-comparisons",
                                          S.juristcu_caption(jt["comparisons"], level),
                                          signed=("estimate", "low", "high"))))
    return "".join(parts) + "</section>"


IRPF_SKIPPED = "Real questions (IRPF): skipped, the data folder has no irpf/ folder."


def _resolution_table(rows: list[Mapping[str, Any]]) -> str:
    return _generic_table(rows, ["chunking", "chunks", "article_citations", "resolved", "questions_scored"], set(),
                          "irpf-resolution", "Citations resolved onto each chunking (article level); every "
                          "unresolved one is listed in the task's manifest and was printed on the console.")


def _budget_family(ir: Mapping[str, Any]) -> tuple[int, Mapping[str, Any]] | None:
    """The budgeted family behind the IRPF answer ("within N words"): its budget and leaderboard block."""
    bud = ir.get("budgets") or {}
    fam = (bud.get("families") or {}).get(str(bud.get("budget")))
    return (int(bud["budget"]), fam) if fam and fam.get("pairs") is not None else None


def _irpf_html(ir: Mapping[str, Any], figs: Mapping[str, tuple[bytes, str]] | None = None) -> str:
    """Real questions: the chunking x retriever answer (sentence, text share against budget, the reading), then,
    folded, the family it comes from, the curve, the touch reading, unequal contexts, every retriever on the
    article chunks and the resolution table."""
    parts = ['<section id="irpf"><h2>Real questions (IRPF)</h2>']
    if ir.get("sentence"):
        parts.append(f'<p class="study-answer"><b>{_e(ir["sentence"])}</b></p>')
    if figs and "irpf_budget" in figs:
        parts.append(_img(figs["irpf_budget"][0], "text share against context budget", figs["irpf_budget"][1],
                          "fig-irpf_budget"))
    bud = ir.get("budgets") or {}
    if bud.get("answer"):
        parts.append(C.answer_paragraphs_html(bud))
    fam = _budget_family(ir)
    if fam:
        parts.append(_fold(f"The family the answer comes from: chunking × retriever within {int(fam[0]):,} words of "
                           f"context ({fam[1].get('metric') or ''}), every system and pair",
                           LB.panels_html(fam[1], heading=4, systems_class="irpf-budget", matrix_class="pair-matrix",
                                          fold_pairs=True)))
    if bud.get("answer"):
        parts.append(_fold("The text share curve at the answer's budget (table)", C.curve_table_html(bud)))
    touched = (bud.get("touched_families") or {}).get(str(bud.get("budget")))
    if touched:
        parts.append(_fold(f"The touch reading's family ({touched['metric']})",
                           LB.panels_html(touched, heading=4, systems_class="irpf-touched", matrix_class="pair-matrix",
                                          fold_pairs=True)))
    ch = ir.get("chunkings")
    if ch:
        parts.append(_fold(f"Chunking × retriever on {ch.get('metric', 'recall@10')}: unequal contexts, k chunks of "
                           f"each chunking's size ({', '.join(ch.get('chunkings') or [])} × "
                           f"{', '.join(ch.get('retrievers') or [])})",
                           LB.panels_html(ch, heading=4, systems_class="irpf-chunkings", matrix_class="pair-matrix",
                                          fold_pairs=True)))
    lb = ir.get("leaderboard")
    if lb:
        parts.append(_fold(f"Every retriever on {lb.get('chunking', 'article')} chunks ({lb.get('metric', '')})",
                           LB.panels_html(lb, heading=4, systems_class="irpf-systems", matrix_class="pair-matrix",
                                          fold_pairs=True)))
    if ch and ch.get("icc"):
        parts.append(f"<p class=note>{_e(ch['icc'].get('sentence', ''))}</p>")
    if ch and ch.get("resolution"):
        parts.append(_fold("Citations resolved per chunking", _resolution_table(ch["resolution"])))
    return "".join(parts) + "</section>"


def render_html(results: Mapping[str, Any], figs: dict[str, tuple[bytes, str]] | None = None) -> str:
    """The self-contained HTML report."""
    figs = figures(results) if figs is None else figs
    naive = set(results.get("naive_methods", []))
    meta = results.get("meta", {})
    task = results.get("task", {})
    level = meta.get("level", 0.95)
    metric = meta.get("metric", "hit@1")

    def img(k: str, alt: str | None = None) -> str:
        return _img(figs[k][0], alt or k, figs[k][1], f"fig-{k}") if k in figs else ""

    parts = [f'<h1>ragcov benchmark report</h1><p class="note subtitle">{_e(S.subtitle(results))}</p>',
             _answer_html(results)]
    t = {k: v for k, v in task.items() if not isinstance(v, (dict, list))}
    parts.append("<h2>Task</h2><p class=note>" + _e(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in t.items()))
                 + f". Metric {_e(metric)}; intervals at level {_e(level)}, clustered by document.</p>")
    rets = results.get("retrievers", [])
    lb = results.get("leaderboard")
    if lb or rets:
        parts.append('<section id="aneel"><h2>ANEEL leaderboard (family-wise)</h2>')
        if lb:
            parts.append(LB.panels_html(lb, heading=3, systems_class="leaderboard-systems", fold_pairs=True))
        parts.append(_fold("Paired comparison figure (pairs of neighbours in rank)", img("paired")) + "</section>")
    if rets:
        parts.append('<section id="retrievers"><h2>Retrievers</h2>')
        parts.append(img("retrievers") + _fold("By document type, every retriever (figure)", img("by_type")))
        parts.append(_fold("Every interval method, every retriever (figure)", img("methods")))
        parts.append(_fold("Design diagnostics of each retriever (table)", _diagnostics_table(rets)))
        parts.append(_fold("Every interval method, every retriever (table)", _estimates_table(rets, naive, level)))
        if "acf" in figs:
            parts.append(_fold("Within-document autocorrelation (figure)", img("acf")))
        parts.append("</section>")
    ch_html = S.chunking_html(results, figs, _img)
    if ch_html:
        parts.append(f'<section id="chunking">{ch_html}</section>')
    cov = results.get("coverage") or {}
    if cov.get("rows"):
        parts.append('<section id="coverage"><h2>Coverage study</h2>')
        cs = coverage_sentence(results)
        if cs:
            parts.append(f"<p><b>{_e(cs)}</b></p>")
        parts.append(img("coverage") + _fold("Mean interval width by method and K (figure)", img("width")))
        truth = cov.get("truth") or {}
        parts.append(f"<p class=note>Population: {_e(cov.get('population', ''))} (its per-query outcomes as the "
                     "census; census values " + _e(", ".join(f"{k} {num(v, 4)}" for k, v in truth.items()))
                     + f"); {_e(cov.get('reps'))} replicates per K, simple random samples of documents.</p>")
        for est, rec in (cov.get("recommendation") or {}).items():
            cls = "" if rec.get("qualified") else " warn"
            lead = ("Recommended" if rec.get("qualified") else "No method verified; best available")
            parts.append(f"<p class='rec{cls}'>{lead} for {_e(est)} on samples of {_e(cov.get('recommend_k'))} "
                         "documents: "
                         f"<b>{_e(rec['method'])}</b> — {_e(rec['reason'])}.</p>")
        parts.append(_fold(f"Coverage table ({len(cov['rows'])} rows)", _coverage_table(cov["rows"], naive)))
        parts.append("</section>")
    jt = results.get("juristcu")
    if jt:
        parts.append(_juristcu_html(jt, level, naive))
    if results.get("irpf"):
        parts.append(_irpf_html(results["irpf"], figs))
    elif "irpf" in results:
        parts.append(f"<p class=note>{_e(IRPF_SKIPPED)}</p>")
    if results.get("lgpd"):
        parts.append(C.lgpd_html(results["lgpd"], figs, _img, LB.panels_html, _fold, _resolution_table))
    elif "lgpd" in results:
        parts.append(f"<p class=note>{_e(C.LGPD_SKIPPED)}</p>")
    parts.append(proxy_html(results, img))
    parts.append(glossary_html(glossary(meta.get("retriever_descriptions"))))
    parts.append(f"<p class=note>Generated by ragcov {_e(meta.get('ragcov_version', ''))} on "
                 f"{_e(meta.get('created', ''))}; settings: {_e(_settings_words(meta))}. Every table is also in "
                 "summary.md.</p>")
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>ragcov benchmark report</title>"
            f"<style>{_CSS}{LB.CSS}</style></head><body>{''.join(parts)}<script>{_SCRIPT}</script></body></html>")


def _juristcu_units(jt: Mapping[str, Any]) -> str:
    """How the JurisTCU intervals infer, in words of their units (per query in a group, per source overall)."""
    units = jt.get("units") or {}
    group = units.get("group", "query (t interval; bootstrap of queries)")
    overall = units.get("overall", "source (CR2; bootstrap of sources)")
    return (f"Unit per group: {group}. Unit overall: {overall}. Estimates are means over queries; "
            "comparisons are paired per query (A − B) and family-wise within each metric and group.")


def _md_table(rows: list[Mapping[str, Any]], cols: list[str], fmt: Mapping[str, Any] | None = None) -> str:
    fmt = fmt or {}
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join(fmt.get(c, _num)(r.get(c)) for c in cols) + " |")
    return "\n".join(out)


def render_markdown(results: Mapping[str, Any], figure_files: Mapping[str, str] | None = None) -> str:
    """A markdown summary: the answer, every table of the report (naive methods marked) and the glossary."""
    naive = set(results.get("naive_methods", []))
    task = results.get("task", {})
    level = (results.get("meta") or {}).get("level", 0.95)
    lines = ["# ragcov benchmark summary", ""]
    lines.append(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in task.items() if not isinstance(v, (dict, list))))
    lines.append("")
    rows = answer_rows(results)
    if rows:
        lines.append(_md_table(rows, ["task", "metric", "system", "estimate", "low", "high", "mark", "tier", "rank"],
                               {c: str for c in ("task", "metric", "system", "mark", "tier", "rank")}))
        lines.append("")
        lines += [x for note in answer_notes(rows, level) for x in (note, "")]
        micro = LB.micro_lines(results.get("leaderboard") or {})
        if micro:
            lines += ["ANEEL " + ". ".join(micro), ""]
    lines += S.verdicts_md(results)
    cs = coverage_sentence(results)
    if cs:
        lines += [f"**Coverage of the intervals:** {cs}", ""]
    lines += _md_retrievers(results.get("retrievers", []), naive, level)
    if results.get("leaderboard"):
        lines += ["## Leaderboard and paired comparison (family-wise)", ""]
        lines += LB.markdown_panels(results["leaderboard"], level=3)
    lines += S.chunking_md(results)
    lines += _md_coverage(results.get("coverage") or {}, naive)
    lines += _md_juristcu(results.get("juristcu") or {}, level)
    ir = results.get("irpf") or {}
    if ir:
        lines += _md_irpf(ir)
    elif "irpf" in results:
        lines += [IRPF_SKIPPED, ""]
    if results.get("lgpd"):
        lines += C.lgpd_md(results["lgpd"], LB.markdown_panels, _md_table)
    elif "lgpd" in results:
        lines += [C.LGPD_SKIPPED, ""]
    lines += proxy_markdown(results)
    lines += glossary_md(glossary((results.get("meta") or {}).get("retriever_descriptions")))
    if figure_files:
        lines += ["## Figures", ""] + [f"![{k}]({v})" for k, v in figure_files.items()]
    return "\n".join(lines) + "\n"


def _md_retrievers(rets: list[dict[str, Any]], naive: set[str], level: float = 0.95) -> list[str]:
    """One section a retriever: its estimates (naive methods marked, each row with its check's mark) and its
    diagnostics."""
    lines: list[str] = []
    for r in rets:
        lines += [f"## {r['name']}", ""]
        rws = [{**e, "method": e["method"] + (" (naive)" if e["method"] in naive else ""), "mark": marks.mark(e)}
               for e in r.get("estimates", [])]
        lines.append(_md_table(rws, ["estimator", "method", "estimate", "low", "high", "mark"],
                               {"method": str, "estimator": str, "mark": str}))
        lines.append("")
        lines += [x for note in marks.footnotes(((f"{e['estimator']} {e['method']}", e)
                                                 for e in r.get("estimates", [])), level) for x in (note, "")]
        d = r.get("diagnostics") or {}
        said = [f"{label} {_num(d[k], nd)}" for k, label, nd in _DIAG if k in d]
        if said:
            lines += ["Diagnostics: " + ", ".join(said) + ".", ""]
    return lines


def _md_coverage(cov: Mapping[str, Any], naive: set[str]) -> list[str]:
    """The coverage study: one row per estimator x method x K, and the recommended method."""
    if not cov.get("rows"):
        return []
    lines = [f"## Coverage study (population: {cov.get('population')}, {cov.get('reps')} replicates)", ""]
    lines.append(_md_table(cov["rows"], ["estimator", "method", "k", "coverage", "mc_margin", "mean_width"],
                           {"method": lambda m: m + (" (naive)" if m in naive else ""), "estimator": str,
                            "k": str, "coverage": _pct, "mc_margin": lambda x: "±" + num(100 * x, 1)}))
    for est, rec in (cov.get("recommendation") or {}).items():
        lead = "Recommended" if rec.get("qualified") else "**Warning:** no method verified; best available"
        lines.append(f"\n{lead} for {est} at K={cov.get('recommend_k')}: **{rec['method']}** — {rec['reason']}.")
    lines.append("")
    return lines


def _or_blank(x: Any) -> str:
    return x if isinstance(x, str) else ""


def _juristcu_notes(jt: Mapping[str, Any], level: float) -> list[str]:
    """Under the JurisTCU estimates: what each mark means for the rows carrying it."""
    return marks.footnotes(((f"{r['retriever']} {r['metric']} {r['group']} {r['method']}", r)
                            for r in jt.get("estimates") or []), level)


def _md_juristcu(jt: Mapping[str, Any], level: float) -> list[str]:
    """The JurisTCU section: pooling words, note, units, estimates, leaderboard and paired comparisons."""
    if not jt.get("estimates"):
        return []
    lines = ["## JurisTCU", ""]
    lb = jt.get("leaderboard")
    if lb:
        lines += [x for w in LB.pool_words(lb) for x in (w, "")]
    if jt.get("note"):
        lines += [jt["note"], ""]
    lines += [_juristcu_units(jt), ""]
    text = {c: str for c in ("retriever", "metric", "group", "unit", "method", "retriever_a", "retriever_b",
                             "n_queries", "n_clusters", "wins", "losses", "ties")}
    lines.append(_md_table(jt["estimates"], ["retriever", "metric", "group", "unit", "method", "estimate", "low",
                                             "high", "mark", "n_queries", "n_clusters"], {**text, "mark": _or_blank}))
    lines += [x for note in _juristcu_notes(jt, level) for x in ("", note)]
    if lb:
        lines += [""] + LB.markdown_panels(lb, level=3, pairs=False)
    if S.is_family_wise(jt.get("comparisons") or []):
        lines += ["", "Paired comparisons (A − B), " + S.juristcu_caption(jt["comparisons"], level), ""]
        signed = {c: (lambda x: LB._num(x, sign=True)) for c in ("estimate", "low", "high")}
        lines.append(_md_table(jt["comparisons"], ["retriever_a", "retriever_b", "metric", "group", "unit", "method",
                                                   "estimate", "low", "high", "p", "p_adj", "wins", "losses",
                                                   "ties"], {**text, **signed, "p": LB.p_text, "p_adj": LB.p_text}))
    lines.append("")
    return lines


def _md_irpf(ir: Mapping[str, Any]) -> list[str]:
    """The real-questions (IRPF) section: sentence, chunking x retriever panels, leaderboard, resolution."""
    lines = ["## Real questions (IRPF)", ""]
    if ir.get("sentence"):
        lines += [ir["sentence"], ""]
    if (ir.get("budgets") or {}).get("answer"):
        lines += C.answer_lines_md(ir["budgets"]) + C.curve_table_md(ir["budgets"])
    fam = _budget_family(ir)
    if fam:
        lines += [f"### Chunking × retriever within {fam[0]:,} words of context (the family the answer comes from)",
                  ""] + LB.markdown_panels(fam[1], level=4)
    if ir.get("chunkings"):
        lines += [f"### Chunking × retriever on {ir['chunkings'].get('metric', 'recall@10')} (unequal contexts)",
                  ""] + LB.markdown_panels(ir["chunkings"], level=4)
    if ir.get("leaderboard"):
        lines += [f"### Every retriever on {ir['leaderboard'].get('chunking', 'article')} chunks", ""]
        lines += LB.markdown_panels(ir["leaderboard"], level=4)
    res = (ir.get("chunkings") or {}).get("resolution")
    if res:
        cols = ["chunking", "chunks", "article_citations", "resolved", "questions_scored"]
        lines += [_md_table(res, cols, {c: str for c in cols}), ""]
    return lines
