"""The report's proxy section: does self-retrieval rank systems as real questions do? (HTML, markdown, figure)

Reads ``results["proxy"]`` (:func:`ragcov_data.reporting.blocks.proxy_block` of each corpus): per corpus and
family the headline comparison drawn (each system's real estimate against its proxy estimate, both intervals)
and tabled (both orders, every pair's verdicts), the other measures in one sentence each. Every number is read
from the results.
"""
from __future__ import annotations

import html
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ragcov_data._format import num
from ragcov_data.eval.estimates import marks
from ragcov_data.reporting import figures as F

__all__ = ["proxy_figures", "proxy_html", "proxy_markdown", "TITLE"]

TITLE = "Self-retrieval as a proxy for real questions"
_STATUS = {"agree": "agree", "disagree": "disagree", "proxy_not_separable": "proxy cannot separate",
           "real_not_separable": "questions cannot separate", "neither_separable": "neither separates"}


def _e(x: Any) -> str:
    return html.escape(str(x))


def _headlines(results: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """``(corpus, comparison)`` of every headline comparison, corpus by corpus."""
    return [(ds, c) for ds, block in (results.get("proxy") or {}).items() for c in block.get("comparisons", [])
            if c.get("headline")]


def _label(ds: str, c: Mapping[str, Any]) -> str:
    return f"{ds.upper()}: {c['family']}, {c['unit']}s as documents"


def proxy_figures(results: Mapping[str, Any]) -> dict[str, tuple[bytes, str]]:
    """``{"proxy": (png, caption)}``: one panel per corpus and family (none without a proxy block)."""
    heads = _headlines(results)
    if not heads:
        return {}
    c0 = heads[0][1]
    cap = (f"Each system's {c0['real_metric']} on the real questions (x) against its {c0['proxy_metric']} on "
           "self-retrieval over the same acts (y), with each task's interval; the title gives Kendall's tau-b "
           "and its interval (every order both tasks' verdicts allow). Points on a rising line would mean the "
           "proxy orders the systems as the questions do.")
    return {"proxy": (_figure(heads), cap)}


def _figure(heads: Sequence[tuple[str, Mapping[str, Any]]]) -> bytes:
    import matplotlib.pyplot as plt

    n = len(heads)
    cols = 2 if n > 1 else 1
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.3 * rows), squeeze=False)
    for ax, (ds, c) in zip(axes.ravel(), heads):
        sysr = c["result"]["systems"]
        for k, r in enumerate(sysr):
            color = F._PALETTE[k % len(F._PALETTE)]
            ax.errorbar(r["real_estimate"], r["proxy_estimate"],
                        xerr=[[r["real_estimate"] - r["real_low"]], [r["real_high"] - r["real_estimate"]]],
                        yerr=[[r["proxy_estimate"] - r["proxy_low"]], [r["proxy_high"] - r["proxy_estimate"]]],
                        fmt="o", color=color, ms=5, capsize=2, lw=1.1, label=r["name"])
        t = c["result"]["tau"]
        ax.set_title(f"{_label(ds, c)}\ntau-b {num(t['estimate'], 2, sign=True)} [{num(t['low'], 2, sign=True)}, "
                     f"{num(t['high'], 2, sign=True)}]")
        ax.set_xlabel(f"questions: {c['real_metric']}")
        ax.set_ylabel(f"self-retrieval: {c['proxy_metric']}")
        ax.grid(alpha=0.3)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=9)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    fig.tight_layout()
    return F._png(fig)


def _tables(c: Mapping[str, Any]) -> tuple[list[str], list[list[str]], list[str], list[list[str]]]:
    res = c["result"]
    sys_head = ["system", f"questions: {c['real_metric']} [interval]", "rank", f"proxy: {c['proxy_metric']} "
                "[interval]", "rank"]
    sys_rows = [[r["name"], f"{num(r['real_estimate'])} [{num(r['real_low'])}, {num(r['real_high'])}]",
                 f"{r['real_rank']} [{r['real_rank_low']}, {r['real_rank_high']}]",
                 f"{num(r['proxy_estimate'])} [{num(r['proxy_low'])}, {num(r['proxy_high'])}]",
                 f"{r['proxy_rank']} [{r['proxy_rank_low']}, {r['proxy_rank_high']}]"] for r in res["systems"]]
    pair_head = ["pair (questions' order)", "questions: diff [simultaneous]", "proxy: diff [simultaneous]", "verdicts"]
    pair_rows = [[f"{p['a']} > {p['b']}",
                  f"{num(p['real_diff'], 3, sign=True)} [{num(p['real_low'], 3, sign=True)}, "
                  f"{num(p['real_high'], 3, sign=True)}]" + ("*" if p["real_separable"] else ""),
                  f"{num(p['proxy_diff'], 3, sign=True)} [{num(p['proxy_low'], 3, sign=True)}, "
                  f"{num(p['proxy_high'], 3, sign=True)}]" + ("*" if p["proxy_separable"] else ""),
                  _STATUS.get(p["status"], p["status"])] for p in res["pairs"]]
    return sys_head, sys_rows, pair_head, pair_rows


def _html_table(head: list[str], rows: list[list[str]], cls: str) -> str:
    return (f'<table class="{cls}"><tr>' + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{_e(x)}</td>" for x in r) + "</tr>" for r in rows) + "</table>")


def _intro(results: Mapping[str, Any]) -> str:
    block = next(iter((results.get("proxy") or {}).values()))
    s = block.get("settings", {})
    return (f"Self-retrieval (the first 20 words of a chunk find its siblings; no questions needed) and the real "
            f"cited questions, asked of the same acts under the same cut. Retriever family: "
            f"{', '.join(s.get('retrievers', []))} at {s.get('cut')}; cut family: {s.get('cut_retriever')} under "
            f"{', '.join((s.get('unit_cuts') or {}).get('artigo', s.get('cuts', [])))}. A self-retrieval document is "
            "an artigo here (acts as documents, what `ragcov build` gives, are compared by `ragcov proxy`). A pair "
            "agrees or disagrees only where both tasks' family-wise verdicts separate it; tau's interval holds "
            "every order both tasks' verdicts allow (each family at the square root of the level), so it is "
            "[-1, 1] while either task separates nothing.")


def proxy_html(results: Mapping[str, Any], img: Callable[[str, str], str]) -> str:
    """The ``<section id="proxy">`` (figure first), or "" without a proxy block."""
    blocks = results.get("proxy") or {}
    if not blocks:
        return ""
    parts = [f'<section id="proxy"><h2>{_e(TITLE)}</h2>', img("proxy", "proxy against real orders"),
             f"<p class=note>{_e(_intro(results))}</p>"]
    for ds, block in blocks.items():
        for c in block.get("comparisons", []):
            if not c.get("headline"):
                continue
            sh, sr, ph, pr = _tables(c)
            notes = marks.footnotes([("the interval for tau", c["result"]["tau"])], c["result"]["tau"]["level"])
            parts.append(f"<h3>{_e(_label(ds, c))}</h3><p><b>{_e(c['sentence'])}</b></p>"
                         + "".join(f"<p class=note>{_e(n)}</p>" for n in notes)
                         + f"<details><summary>Both orders, system by system ({len(sr)})</summary>"
                         + _html_table(sh, sr, "proxy-systems") + "</details>"
                         + f"<details><summary>Every pair ({len(pr)}; * separable)</summary>"
                         + _html_table(ph, pr, "proxy-pairs") + "</details>")
            also = [o["sentence"] for o in block["comparisons"] if not o.get("headline")
                    and (o["family"], o["unit"]) == (c["family"], c["unit"])]
            if also:
                parts.append(f"<details><summary>The other measures ({len(also)})</summary><ul class=note>"
                             + "".join(f"<li>{_e(a)}</li>" for a in also) + "</ul></details>")
        lim = next((c["result"]["limits"]["sentence"] for c in block.get("comparisons", []) if c.get("headline")), "")
        tm = block.get("timings") or {}
        took = (f" {ds.upper()}: {num(tm.get('total_s'), 1)} s, of which {num(tm.get('runs_s'), 1)} s of runs."
                if tm.get("total_s") is not None else "")
        parts.append(f"<p class=note>{_e(lim)}{_e(took)}</p>")
    return "".join(parts) + "</section>"


def proxy_markdown(results: Mapping[str, Any]) -> list[str]:
    """Markdown lines of the section ([] without a proxy block)."""
    blocks = results.get("proxy") or {}
    if not blocks:
        return []

    def table(head: list[str], rows: list[list[str]]) -> list[str]:
        return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
                *("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |" for r in rows), ""]

    lines = [f"## {TITLE}", "", _intro(results), ""]
    for ds, block in blocks.items():
        for c in block.get("comparisons", []):
            if c.get("headline"):
                sh, sr, ph, pr = _tables(c)
                notes = marks.footnotes([("the interval for tau", c["result"]["tau"])], c["result"]["tau"]["level"])
                lines += [f"### {_label(ds, c)}", "", f"**{c['sentence']}**", "", *notes, "", *table(sh, sr),
                          *table(ph, pr)]
            else:
                lines += [f"- {c['sentence']}"]
        lines.append("")
    return lines
