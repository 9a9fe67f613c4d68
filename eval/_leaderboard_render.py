"""Text, markdown and self-contained HTML (inline SVG) views of a :class:`LeaderboardResult`."""
from __future__ import annotations

import html as _html
import math
from typing import Any

import numpy as np
import pandas as pd

ALL = "__all__"


def _num(x: Any, nd: int = 4, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:+.{nd}f}" if sign else f"{x:.{nd}f}"


def _p(x: Any) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return "<0.0001" if x < 1e-4 else f"{x:.4f}"


def _groups(res) -> list[str]:
    return list(pd.unique(res.systems["group"]))


def _alpha(res) -> str:
    return f"{1 - res.level:.0%}" if round((1 - res.level) * 100, 6).is_integer() else f"{1 - res.level:g}"


def _head(res, g: str) -> str:
    info = res.groups[g]
    unit = "each its own cluster" if info["estimator"] == "mean" else f"{info['n_clusters']} clusters ({res.cluster})"
    return (f"{res.metric} · group {g} · {info['n_queries']} queries, {unit} · "
            f"{info['estimator']} estimate, {info['method']} interval · level {res.level:g}")


def sentence(res, group: str = ALL) -> str:
    """Which systems are separable at the family-wise level, and which are not, in one sentence."""
    pr = res.pairs[res.pairs["group"] == group]
    sy = res.systems[res.systems["group"] == group]
    if pr.empty:
        return f"group {group!r}: no pairs."
    sig = pr[pr["significant"]]
    tiers = {}
    for name, tier in zip(sy["name"], sy["tier"]):
        for letter in tier:
            tiers.setdefault(letter, []).append(name)
    tier_text = " · ".join(f"{k} = {', '.join(v)}" for k, v in sorted(tiers.items()))
    head = (f"{len(sig)} of {len(pr)} pairs of {len(sy)} systems are separable at the family-wise {_alpha(res)} "
            f"level (simultaneous intervals excluding 0)")
    if sig.empty:
        return head + "; no system is separable from any other."
    ns = pr[~pr["significant"]]
    if ns.empty:
        return head + f"; every pair is separable (tiers: {tier_text})."
    shown = [f"{a}–{b}" for a, b in zip(ns["a"], ns["b"])]
    more = f" and {len(shown) - 6} more" if len(shown) > 6 else ""
    return head + f"; not separable: {', '.join(shown[:6])}{more} (tiers: {tier_text})."


# ------------------------------------------------------------------------------------------ text
def _matrix(res, g: str) -> pd.DataFrame:
    sy = res.systems[res.systems["group"] == g]
    names = list(sy["name"])
    m = pd.DataFrame("", index=names, columns=names)
    for r in res.pairs[res.pairs["group"] == g].itertuples(index=False):
        m.loc[r.a, r.b] = _num(r.diff, 3, sign=True) + ("*" if r.significant else " ")
    for n in names:
        m.loc[n, n] = "·"
    return m


def text(res) -> str:
    """Per group: rank [interval], system, estimate [interval], tier, judged@k; the pair matrix."""
    out = []
    jk = f"judged@{res.judged_k}" if res.judged_k else None
    for g in _groups(res):
        sy = res.systems[res.systems["group"] == g]
        rows = []
        for r in sy.itertuples(index=False):
            row = {"rank": f"{r.rank} [{r.rank_low}, {r.rank_high}]", "system": r.name,
                   "estimate": f"{r.estimate:.4f} [{_num(r.low)}, {_num(r.high)}]", "tier": r.tier}
            if jk:
                row[jk] = f"{r.judged:.2f}" + (" !" if r.judged_flag else "")
            if r.condensed is not None and not pd.isna(r.condensed):
                row["condensed"] = f"{r.condensed:.4f}"
            rows.append(row)
        out += [_head(res, g), pd.DataFrame(rows).to_string(index=False), ""]
        out.append(f"pairs (row − column; * = separable: its simultaneous {res.level:.0%} interval excludes 0; "
                   "intervals in the JSON):")
        out += [_matrix(res, g).to_string(), "", sentence(res, g), ""]
    if jk:
        out.append(f"{jk}: share of the top {res.judged_k} documents with a judgment; ! = below "
                   f"{res.judged_threshold:g} (the score may owe much to the pool; see 'condensed').")
    out.append("family: p = " + res.family["p"] + "; p_adj = Holm; intervals = simultaneous max-|t| from one "
               f"cluster bootstrap (B = {res.info.get('n_resamples')}), never narrower than Bonferroni's (micro: widened to "
               "the wild cluster restricted bootstrap interval); a pair is separable iff its interval excludes 0, and "
               "rank interval, tier and best set follow those decisions (Holm: extra column).")
    out += [f"notice: {n}" for n in res.info.get("notices", [])]
    return "\n".join(out)


# ------------------------------------------------------------------------------------------ markdown
def _md_table(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def markdown(res) -> str:
    """Systems and pairs tables per group, with the one-sentence verdict."""
    out = [f"# Leaderboard: {res.metric}", "",
           f"{res.n_queries} queries, {res.n_clusters} clusters ({res.cluster}); level {res.level:g}; "
           f"estimator {res.estimator}; tie policy {res.tie_policy}; p_adj: Holm; intervals of pairs: "
           f"simultaneous max-|t| (cluster bootstrap, B = {res.info.get('n_resamples')}), never narrower than "
           "Bonferroni's.", ""]
    jk = f"judged@{res.judged_k}" if res.judged_k else None
    for g in _groups(res):
        sy = res.systems[res.systems["group"] == g]
        t = pd.DataFrame({
            "rank": [f"{r} [{lo}, {hi}]" for r, lo, hi in zip(sy["rank"], sy["rank_low"], sy["rank_high"])],
            "system": sy["name"], "estimate": [_num(x) for x in sy["estimate"]],
            "interval": [f"[{_num(a)}, {_num(b)}]" for a, b in zip(sy["low"], sy["high"])], "tier": sy["tier"]})
        if jk:
            t[jk] = [f"{j:.2f}" + (" ⚠" if f else "") for j, f in zip(sy["judged"], sy["judged_flag"])]
        if sy["condensed"].notna().any():
            t["condensed"] = [_num(x) for x in sy["condensed"]]
        pr = res.pairs[res.pairs["group"] == g]
        pt = pd.DataFrame({"a − b": [f"{a} − {b}" for a, b in zip(pr["a"], pr["b"])],
                           "diff": [_num(x, sign=True) for x in pr["diff"]],
                           "simultaneous interval": [f"[{_num(a, sign=True)}, {_num(b, sign=True)}]"
                                                     for a, b in zip(pr["low"], pr["high"])],
                           "p": [_p(x) for x in pr["p"]], "p (Holm)": [_p(x) for x in pr["p_adj"]],
                           "wins/losses/ties": [f"{w}/{l}/{t_}" for w, l, t_ in zip(pr["wins"], pr["losses"], pr["ties"])]})
        out += [f"## {g}", "", _head(res, g), "", _md_table(t), "", _md_table(pt), "", sentence(res, g), ""]
    out += [f"- {n}" for n in res.info.get("notices", [])]
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------------------------------------ html
_CSS = """body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222;max-width:72rem}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}section.panel{border-top:1px solid #ccc;padding-top:.5rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.2rem .45rem;text-align:right}
th{background:#f4f4f4}td.name,th.name{text-align:left}td.sig{background:#c7e9c0}td.ns{background:#f0f0f0;color:#666}
td.diag{background:#fff}.flag{color:#b30000;font-weight:600}.note{font-size:.85rem;color:#444}
.figs{display:flex;flex-wrap:wrap;gap:1.5rem;align-items:flex-start}svg text{font-size:11px;font-family:system-ui,sans-serif}"""

_SCRIPT = """<script>
(function(){var panels=document.querySelectorAll('section.panel');var ok=0;
panels.forEach(function(p){var svgs=p.querySelectorAll('svg');var good=svgs.length>0;
svgs.forEach(function(s){var b=s.getBBox();if(!(b.width>0&&b.height>0))good=false;});
if(p.querySelector('table.pairs')===null)good=false;if(good)ok++;});
document.body.setAttribute('data-panels',String(panels.length));document.body.setAttribute('data-panels-ok',String(ok));
document.body.setAttribute('data-leaderboard',ok===panels.length&&ok>0?'ok':'broken');})();
</script>"""


def _e(x: Any) -> str:
    return _html.escape(str(x), quote=True)


def _forest(sy: pd.DataFrame, metric: str) -> str:
    """SVG forest plot: one row per system (best first), point estimate and interval."""
    W, left, right, rowh, top = 520, 150, 20, 22, 24
    H = top + rowh * len(sy) + 30
    lo = np.nanmin(sy["low"].to_numpy(float)) if sy["low"].notna().any() else sy["estimate"].min()
    hi = np.nanmax(sy["high"].to_numpy(float)) if sy["high"].notna().any() else sy["estimate"].max()
    pad = (hi - lo) * 0.05 or 0.05
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (W - left - right)

    parts = [f'<svg class="forest" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" '
             f'aria-label="forest plot of {_e(metric)}">',
             f'<text x="{left}" y="14">{_e(metric)} with {len(sy)} intervals</text>']
    for k, r in enumerate(sy.itertuples(index=False)):
        y = top + rowh * k + rowh / 2
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{_e(r.rank)}. {_e(r.name)} ({_e(r.tier)})</text>')
        if math.isfinite(r.low) and math.isfinite(r.high):
            parts.append(f'<line x1="{x(r.low):.1f}" x2="{x(r.high):.1f}" y1="{y}" y2="{y}" stroke="#1f5fa8" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(r.estimate):.1f}" cy="{y}" r="4" fill="#1f5fa8"><title>{_e(r.name)}: '
                     f'{r.estimate:.4f} [{_num(r.low)}, {_num(r.high)}]</title></circle>')
    ya = top + rowh * len(sy) + 4
    parts.append(f'<line x1="{left}" x2="{W - right}" y1="{ya}" y2="{ya}" stroke="#888"/>')
    for t in np.linspace(lo, hi, 5):
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{ya}" y2="{ya + 4}" stroke="#888"/>'
                     f'<text x="{x(t):.1f}" y="{ya + 16}" text-anchor="middle">{t:.3f}</text>')
    return "".join(parts) + "</svg>"


def _judged_bars(sy: pd.DataFrame, k: int, threshold: float) -> str:
    """SVG bars of judged@k with the flag threshold as a dashed line."""
    W, left, right, rowh, top = 360, 150, 40, 22, 24
    H = top + rowh * len(sy) + 10
    span = W - left - right
    parts = [f'<svg class="judged" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" '
             f'aria-label="judged at {k}">', f'<text x="{left}" y="14">judged@{k} (flag below {threshold:g})</text>']
    for i, r in enumerate(sy.itertuples(index=False)):
        y = top + rowh * i
        colour = "#d9534f" if r.judged_flag else "#5cb85c"
        parts.append(f'<text x="{left - 8}" y="{y + 14}" text-anchor="end">{_e(r.name)}</text>'
                     f'<rect x="{left}" y="{y + 3}" width="{max(r.judged * span, 1):.1f}" height="{rowh - 8}" '
                     f'fill="{colour}"><title>{r.judged:.3f}</title></rect>'
                     f'<text x="{left + r.judged * span + 4:.1f}" y="{y + 14}">{r.judged:.2f}</text>')
    xt = left + threshold * span
    parts.append(f'<line x1="{xt:.1f}" x2="{xt:.1f}" y1="{top - 4}" y2="{H - 4}" stroke="#333" stroke-dasharray="4 3"/>')
    return "".join(parts) + "</svg>"


def _pair_table(res, g: str) -> str:
    sy = res.systems[res.systems["group"] == g]
    names = list(sy["name"])
    cell = {}
    for r in res.pairs[res.pairs["group"] == g].itertuples(index=False):
        cls = "sig" if r.significant else "ns"
        title = (f"{r.a} − {r.b}: {r.diff:+.4f} [{_num(r.low, sign=True)}, {_num(r.high, sign=True)}], "
                 f"p = {_p(r.p)}, Holm p = {_p(r.p_adj)}")
        cell[(r.a, r.b)] = (f'<td class="{cls}" title="{_e(title)}">{r.diff:+.3f}<br><small>p<sub>adj</sub> '
                            f'{_e(_p(r.p_adj))}</small></td>')
    head = "".join(f'<th>{_e(n)}</th>' for n in names)
    rows = []
    for a in names:
        tds = "".join(cell.get((a, b), '<td class="diag">·</td>' if a == b else "<td></td>") for b in names)
        rows.append(f'<tr><th class="name">{_e(a)}</th>{tds}</tr>')
    return (f'<table class="pairs"><caption>row − column; green = separable (its simultaneous {res.level:.0%} '
            f'interval excludes 0)</caption><tr><th></th>{head}</tr>{"".join(rows)}</table>')


def _systems_table(res, sy: pd.DataFrame) -> str:
    jk = f"judged@{res.judged_k}" if res.judged_k else None
    cols = ["rank", "system", "estimate", "interval", "tier"] + ([jk] if jk else []) + \
        (["condensed"] if sy["condensed"].notna().any() else [])
    rows = []
    for r in sy.itertuples(index=False):
        tds = [f"{r.rank} [{r.rank_low}, {r.rank_high}]", f'<td class="name">{_e(r.name)}</td>', _num(r.estimate),
               f"[{_num(r.low)}, {_num(r.high)}]", _e(r.tier)]
        if jk:
            tds.append(f'<span class="flag">{r.judged:.2f} ⚠</span>' if r.judged_flag else f"{r.judged:.2f}")
        if "condensed" in cols:
            tds.append(_num(r.condensed))
        rows.append("<tr>" + "".join(t if t.startswith("<td") else f"<td>{t}</td>" for t in tds) + "</tr>")
    head = "".join(f'<th class="name">{c}</th>' if c == "system" else f"<th>{_e(c)}</th>" for c in cols)
    return f'<table class="systems"><tr>{head}</tr>{"".join(rows)}</table>'


def html(res) -> str:
    """Self-contained page: per group a forest plot, the pair matrix, judged@k bars and the table."""
    panels = []
    for g in _groups(res):
        sy = res.systems[res.systems["group"] == g]
        figs = [_forest(sy, res.metric)]
        if res.judged_k:
            figs.append(_judged_bars(sy, res.judged_k, res.judged_threshold))
        panels.append(
            f'<section class="panel" data-group="{_e(g)}"><h2>{"Overall" if g == ALL else "Group " + _e(g)}</h2>'
            f'<p class="note">{_e(_head(res, g))}</p><p><strong>{_e(sentence(res, g))}</strong></p>'
            f'<div class="figs">{"".join(figs)}</div>{_systems_table(res, sy)}{_pair_table(res, g)}</section>')
    notes = "".join(f"<li>{_e(n)}</li>" for n in res.info.get("notices", []))
    family = "; ".join(f"{k}: {v}" for k, v in res.family.items())
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Leaderboard {_e(res.metric)}</title>'
            f"<style>{_CSS}</style></head><body><h1>Leaderboard: {_e(res.metric)}</h1>"
            f'<p class="note">{res.n_queries} queries, {res.n_clusters} clusters ({_e(res.cluster)}); level '
            f"{res.level:g}; tie policy {_e(res.tie_policy)}; B = {_e(res.info.get('n_resamples'))}. "
            f"Methods — {_e(family)}.</p>{''.join(panels)}"
            + (f'<ul class="note">{notes}</ul>' if notes else "") + f"{_SCRIPT}</body></html>\n")
