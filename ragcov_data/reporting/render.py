"""Render a benchmark ``results`` dict (the content of ``results.json``) as HTML and markdown.

The HTML page is self-contained: figures are PNGs embedded as base64 ``data:`` URIs and the style is inline.
An inline script marks ``<body data-figures="ok">`` once every image has loaded with a non-zero size (used
by the browser test and handy for any automated check).
"""
from __future__ import annotations

import base64
import html
import math
from typing import Any, Mapping

from ragcov_data.reporting import figures as F
from ragcov_data.reporting import sections as S
from ragcov_data.reporting.studies import as_ranked, flip_difference

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1080px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}tr.naive td{color:#c0392b;background:#fdf0ee}
.naive-tag{font-size:.75em;background:#c0392b;color:#fff;border-radius:3px;padding:0 .3em;margin-left:.3em}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}figcaption{font-size:.85em;color:#555}
.grid{display:flex;flex-wrap:wrap;gap:1em}.grid figure{flex:1 1 460px}.note{color:#555;font-size:.9em}
.warn{color:#c0392b}
caption{caption-side:top;text-align:left;font-size:.85em;color:#555;padding:.2em 0}
#verdicts{background:#f4f8fc;border-left:4px solid #2c6fbb;padding:.3em 1em;margin:1em 0}
"""

_SCRIPT = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute('data-figures', ok === imgs.length && imgs.length > 0 ? 'ok' : 'missing');
  document.body.setAttribute('data-figures-loaded', String(ok));
  document.body.setAttribute('data-figures-total', String(imgs.length));
});
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _num(x: Any, nd: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return _e(x)


def _pct(x: Any) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _img(png: bytes, alt: str, caption: str, fig_id: str) -> str:
    b64 = base64.b64encode(png).decode("ascii")
    return (f'<figure id="{fig_id}"><img alt="{_e(alt)}" src="data:image/png;base64,{b64}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def figures(results: Mapping[str, Any]) -> dict[str, tuple[bytes, str]]:
    """All report figures as ``{id: (png bytes, caption)}`` (also written as PNG files beside the HTML)."""
    naive = set(results.get("naive_methods", []))
    out: dict[str, tuple[bytes, str]] = {}
    rets = results.get("retrievers", [])
    for r in rets:
        name = r["name"]
        if r.get("per_doc"):
            out[f"hist_{name}"] = (F.rate_histogram(r["per_doc"], f"{name}: per-document hit@1 rates"),
                                   f"{name}: distribution of per-document hit rates, beside the micro and macro means.")
            out[f"types_{name}"] = (F.rates_by_type(r["per_doc"], f"{name}: hit@1 by document type"),
                                    f"{name}: hit rate by document type.")
        if r.get("estimates"):
            out[f"est_{name}"] = (F.estimates_plot(r["estimates"], naive, f"{name}: every interval method"),
                                  f"{name}: estimates and intervals; naive chunk-level methods in red.")
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
        out["paired"] = (F.paired_comparison(ranked), "Paired comparison of retrievers on the same queries, "
                                                     "family-wise: simultaneous intervals over every pair, Holm p; "
                                                     "pairs oriented as in the leaderboard (a ranked above b).")
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
    return out


def _estimates_table(rows: list[Mapping[str, Any]], naive: set[str]) -> str:
    head = ("<tr><th class=l>estimator</th><th class=l>method</th><th>estimate</th><th>SE</th><th>df</th>"
            "<th>low</th><th>high</th><th class=l>flags</th></tr>")
    body = []
    for r in rows:
        is_naive = r.get("naive", r["method"] in naive)
        tag = '<span class="naive-tag">naive</span>' if is_naive else ""
        flags = ", ".join(f for f in (r.get("flags") or []) if f != "naive")
        body.append(f'<tr class="{"naive" if is_naive else ""}"><td class=l>{_e(r["estimator"])}</td>'
                    f'<td class=l>{_e(r["method"])}{tag}</td><td>{_num(r.get("estimate"))}</td>'
                    f'<td>{_num(r.get("se"))}</td><td>{_num(r.get("df"), 1)}</td><td>{_num(r.get("low"))}</td>'
                    f'<td>{_num(r.get("high"))}</td><td class=l>{_e(flags)}</td></tr>')
    return f'<table class="estimates">{head}{"".join(body)}</table>'


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


def _generic_table(rows: list[Mapping[str, Any]], cols: list[str], naive: set[str], cls: str,
                   caption: str = "") -> str:
    cols = [c for c in cols if any(c in r for r in rows)]
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    head = "".join(f"<th class=l>{_e(c)}</th>" for c in cols)
    body = []
    for r in rows:
        tr = "naive" if r.get("method") in naive else ""
        body.append(f'<tr class="{tr}">' + "".join(
            f"<td>{_num(r.get(c))}</td>" if isinstance(r.get(c), float) or r.get(c) is None
            else f"<td class=l>{_e(r.get(c))}</td>" for c in cols) + "</tr>")
    return f'<table class="{cls}">{cap}<tr>{head}</tr>{"".join(body)}</table>'


def _kv_table(d: Mapping[str, Any], cls: str) -> str:
    rows = "".join(f"<tr><th class=l>{_e(k)}</th><td>{_num(v) if isinstance(v, float) else _e(v)}</td></tr>"
                   for k, v in d.items())
    return f'<table class="{cls}">{rows}</table>'


def render_html(results: Mapping[str, Any], figs: dict[str, tuple[bytes, str]] | None = None) -> str:
    """The self-contained HTML report."""
    figs = figures(results) if figs is None else figs
    naive = set(results.get("naive_methods", []))
    meta = results.get("meta", {})
    task = results.get("task", {})
    parts = [f"<h1>ragcov benchmark report</h1><p class=note>{_e(meta.get('title', ''))}</p>", S.verdicts(results)]
    parts.append("<h2>Task</h2>" + _kv_table({k: v for k, v in task.items() if not isinstance(v, (dict, list))},
                                              "task"))
    parts.append(f"<p class=note>Metric {_e(meta.get('metric', 'hit@1'))}; intervals at level "
                 f"{_e(meta.get('level', 0.95))}. Naive methods treat chunks as independent and are shown only "
                 "as a contrast (<span class=naive-tag>naive</span>).</p>")
    for r in results.get("retrievers", []):
        name = r["name"]
        parts.append(f"<h2>Retriever: {_e(name)}</h2>")
        if r.get("diagnostics"):
            parts.append(_kv_table(r["diagnostics"], "diagnostics"))
        parts.append('<div class="grid">' + "".join(
            _img(figs[k][0], k, figs[k][1], f"fig-{k}") for k in (f"hist_{name}", f"types_{name}") if k in figs)
            + "</div>")
        if r.get("estimates"):
            parts.append(_estimates_table(r["estimates"], naive))
        if f"est_{name}" in figs:
            parts.append(_img(figs[f"est_{name}"][0], "estimates", figs[f"est_{name}"][1], f"fig-est_{name}"))
    if "acf" in figs:
        parts.append("<h2>Within-document autocorrelation</h2>" + _img(figs["acf"][0], "acf", figs["acf"][1], "fig-acf"))
    lb = results.get("leaderboard")
    if lb:
        parts.append("<h2>Leaderboard and paired comparison (family-wise)</h2>")
        parts.append(S.leaderboard_html(lb, meta.get("level", 0.95)))
        if "paired" in figs:
            parts.append(_img(figs["paired"][0], "paired", figs["paired"][1], "fig-paired"))
    parts.append(S.chunking_html(results, figs, _img))
    cov = results.get("coverage") or {}
    if cov.get("rows"):
        parts.append("<h2>Coverage study</h2>")
        parts.append(f"<p class=note>Population: {_e(cov.get('population', ''))} (its per-query outcomes as the "
                     f"census); truth {_e({k: round(v, 4) for k, v in (cov.get('truth') or {}).items()})}; "
                     f"{_e(cov.get('reps'))} replicates per K, design {_e(cov.get('design', 'srs'))}.</p>")
        for est, rec in (cov.get("recommendation") or {}).items():
            cls = "" if rec.get("qualified") else " warn"
            lead = ("Recommended" if rec.get("qualified") else "No method verified; best available")
            parts.append(f"<p class='rec{cls}'>{lead} for {_e(est)} at K={_e(cov.get('recommend_k'))}: "
                         f"<b>{_e(rec['method'])}</b> — {_e(rec['reason'])}.</p>")
        parts.append('<div class="grid">' + "".join(_img(figs[k][0], k, figs[k][1], f"fig-{k}")
                                                    for k in ("coverage", "width") if k in figs) + "</div>")
        parts.append(_coverage_table(cov["rows"], naive))
    jt = results.get("juristcu")
    if jt:
        parts.append("<h2>JurisTCU</h2>")
        if jt.get("note"):
            parts.append(f"<p class=note>{_e(jt['note'])}</p>")
        parts.append(f"<p class=note>{_e(_juristcu_units(jt))}</p>")
        if jt.get("estimates"):
            parts.append("<h3>Estimates by query group</h3>" + _generic_table(
                jt["estimates"], ["retriever", "metric", "group", "unit", "method", "estimate", "low", "high",
                                  "n_queries", "n_clusters"], naive, "juristcu-estimates"))
        if jt.get("leaderboard"):
            parts.append("<h3>Leaderboard</h3>" + S.leaderboard_html(jt["leaderboard"], meta.get("level", 0.95),
                                                                     pairs=False))
        if S.is_family_wise(jt.get("comparisons") or []):
            parts.append("<h3>Paired comparisons (family-wise)</h3>" + _generic_table(
                jt["comparisons"], ["retriever_a", "retriever_b", "metric", "group", "method", "estimate", "low",
                                    "high", "p", "p_adj", "wins", "losses", "ties"], naive, "juristcu-comparisons",
                S.juristcu_caption(jt["comparisons"], meta.get("level", 0.95))))
    parts.append(f"<p class=note>Generated by ragcov {_e(meta.get('ragcov_version', ''))} on "
                 f"{_e(meta.get('created', ''))}; settings {_e(meta.get('settings', {}))}.</p>")
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>ragcov benchmark report</title>"
            f"<style>{_CSS}</style></head><body>{''.join(parts)}<script>{_SCRIPT}</script></body></html>")


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
    """A markdown summary: task, estimates per retriever (naive marked), comparisons and coverage."""
    naive = set(results.get("naive_methods", []))
    task = results.get("task", {})
    lines = ["# ragcov benchmark summary", ""]
    lines.append(", ".join(f"{k}: {v}" for k, v in task.items() if not isinstance(v, (dict, list))))
    lines.append("")
    lines += S.verdicts_md(results)
    for r in results.get("retrievers", []):
        lines += [f"## {r['name']}", ""]
        rows = [{**e, "method": e["method"] + (" (naive)" if e["method"] in naive else "")} for e in r.get("estimates", [])]
        lines.append(_md_table(rows, ["estimator", "method", "estimate", "low", "high"], {"method": str, "estimator": str}))
        lines.append("")
    level = (results.get("meta") or {}).get("level", 0.95)
    if results.get("leaderboard"):
        lines += ["## Leaderboard and paired comparison (family-wise)", ""]
        lines += S.leaderboard_md(results["leaderboard"], level)
    lines += S.chunking_md(results)
    cov = results.get("coverage") or {}
    if cov.get("rows"):
        lines += [f"## Coverage (population: {cov.get('population')}, {cov.get('reps')} replicates)", ""]
        lines.append(_md_table(cov["rows"], ["estimator", "method", "k", "coverage", "mc_margin", "mean_width"],
                               {"method": lambda m: m + (" (naive)" if m in naive else ""), "estimator": str,
                                "k": str, "coverage": _pct, "mc_margin": lambda x: f"±{100 * x:.1f}"}))
        for est, rec in (cov.get("recommendation") or {}).items():
            lead = "Recommended" if rec.get("qualified") else "**Warning:** no method verified; best available"
            lines.append(f"\n{lead} for {est} at K={cov.get('recommend_k')}: **{rec['method']}** — {rec['reason']}.")
        lines.append("")
    jt = results.get("juristcu") or {}
    if jt.get("estimates"):
        lines += ["## JurisTCU", ""]
        if jt.get("note"):
            lines += [jt["note"], ""]
        lines += [_juristcu_units(jt), ""]
        text = {c: str for c in ("retriever", "metric", "group", "unit", "method", "retriever_a", "retriever_b",
                                 "n_queries", "n_clusters", "wins", "losses", "ties")}
        lines.append(_md_table(jt["estimates"], ["retriever", "metric", "group", "unit", "method", "estimate", "low",
                                                 "high", "n_queries", "n_clusters"], text))
        if jt.get("leaderboard"):
            lines += [""] + S.leaderboard_md(jt["leaderboard"], level, pairs=False)
        if S.is_family_wise(jt.get("comparisons") or []):
            lines += ["", "Paired comparisons (A − B), " + S.juristcu_caption(jt["comparisons"], level), ""]
            lines.append(_md_table(jt["comparisons"], ["retriever_a", "retriever_b", "metric", "group", "unit", "method",
                                                       "estimate", "low", "high", "p", "p_adj", "wins", "losses",
                                                       "ties"], text))
        lines.append("")
    if figure_files:
        lines += ["## Figures", ""] + [f"![{k}]({v})" for k, v in figure_files.items()]
    return "\n".join(lines) + "\n"
