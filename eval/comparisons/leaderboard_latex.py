"""LaTeX (booktabs) tables of a leaderboard, for papers: per group one systems table (rank interval,
system, estimate, interval, tier) and one pairs table (difference, simultaneous interval, adjusted p (the verdict's test),
separable), as ``\\toprule`` / ``\\midrule`` / ``\\bottomrule`` tabulars inside ``table`` floats.

Takes what :mod:`.leaderboard_render` takes (a result or its JSON form). Text is escaped (``_``, ``%``,
``&``, ``#``, ``$``, ``{``, ``}``, ``~``, ``^``, ``\\``); minus signs are ``$-$``; numbers come from the one
formatter (:func:`ragcov_data._format.num`), so no ``-0.000``. The preamble needs ``\\usepackage{booktabs}``.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from ragcov_data._format import num
from ragcov_data.eval.comparisons.leaderboard_render import (_b, _rows, group_label, head, micro_lines,
                                                              missing_line, pool_words, system_footnotes, unit_line)
from ragcov_data.eval.estimates import marks

__all__ = ["escape", "tabular", "latex", "board_tables", "mark_note"]

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_UNICODE = {"−": "$-$", "–": "--", "—": "---", "·": "$\\cdot$", "≥": "$\\geq$", "≤": "$\\leq$",
            "±": "$\\pm$", "×": "$\\times$", "†": "$^\\dagger$", "‡": "$^\\ddagger$"}


def escape(text: Any) -> str:
    """``text`` safe inside a LaTeX tabular: special characters escaped, a few Unicode signs as commands."""
    s = re.sub(r"[\\&%$#_{}~^]", lambda m: _SPECIAL[m.group(0)], str(text))
    for k, v in _UNICODE.items():
        s = s.replace(k, v)
    return s


def mark_note(note: str) -> str:
    """A footnote of :func:`ragcov_data.eval.estimates.marks.footnotes` in LaTeX, its mark as the table prints it
    (``$^*$``, ``$^\\ddagger$``)."""
    head, _, rest = note.partition(" ")
    tex = {m: marks.latex_mark({"verified_status": st}) for st, m in marks.MARKS.items() if m}
    return f"{tex[head]} {escape(rest)}" if head in tex else escape(note)


def _n(x: Any, nd: int = 4, sign: bool = False) -> str:
    """A number for a tabular cell: the one formatter, a math minus."""
    return num(x, nd, sign=sign).replace("-", "$-$").replace("–", "--")


def tabular(cols: Sequence[str], rows: Sequence[Sequence[str]], align: str, caption: str, label: str) -> str:
    """One ``table`` float: a booktabs tabular of ``rows`` (cells already LaTeX) under escaped ``cols``."""
    out = ["\\begin{table}[htbp]", "\\centering", "\\small", f"\\begin{{tabular}}{{{align}}}", "\\toprule",
           " & ".join(escape(c) for c in cols) + " \\\\", "\\midrule"]
    out += [" & ".join(row) + " \\\\" for row in rows]
    out += ["\\bottomrule", "\\end{tabular}", f"\\caption{{{caption}}}", f"\\label{{{label}}}", "\\end{table}"]
    return "\n".join(out)


def _label(*parts: str) -> str:
    return "tab:" + "-".join(re.sub(r"[^A-Za-z0-9]+", "-", p).strip("-").lower() for p in parts if p)


def board_tables(res: Any, title: str = "", key: str = "leaderboard", pairs: bool = True,
                 groups: Sequence[str] | None = None) -> list[str]:
    """The systems (and pairs) tables of every group (or of ``groups``) of one leaderboard."""
    b = _b(res)
    out = []
    lvl = f"{b.level:.0%}"
    for g in (b.group_names() if groups is None else [g for g in b.group_names() if g in groups]):
        where = escape(f"{title + ', ' if title else ''}{group_label(g)}")
        cols, rows = _rows(b, g)  # the text's columns: judged@k and the pool's readings where judgments are pooled
        for row, r in zip(rows, b.sy(g).to_dict(orient="records")):
            row[:] = [escape(v) for v in row]
            row[2], row[3] = _n(r["estimate"]), f"[{_n(r['low'])}, {_n(r['high'])}]{marks.latex_mark(r)}"
        cap = (f"{where}: {escape(head(b, g))}. Tier: systems sharing a letter are not separable at the "
               f"family-wise {escape(f'{1 - b.level:.0%}')} level.")
        ml = missing_line(b, g)
        if ml:
            cap += " " + escape(ml)
        if g == "__all__" and micro_lines(b):  # trec_eval's numbers, and why they carry no verified interval
            cap += " " + escape(". ".join(x.rstrip(".") for x in micro_lines(b)) + ".")
        ul = unit_line(b) if g == "__all__" else None
        if ul:
            cap += " " + escape(ul[:1].upper() + ul[1:] + ".")
        for note in system_footnotes(b, g):  # each mark's words, the reason as the check wrote it
            cap += " " + mark_note(note)
        if b.pool and g == b.group_names()[0]:
            cap += " " + escape(" ".join(pool_words(b)))
        cols = ["rank", "system", b.metric, f"{lvl} interval", *cols[4:]]
        out.append(tabular(cols, rows, "rlrlc" + "r" * (len(cols) - 5), cap,
                           _label(key, g if g != "__all__" else "all", "systems")))
        pr = b.pr(g)
        if pairs and len(pr):
            prow = [[escape(f"{r.a} − {r.b}"), _n(r.diff, sign=True),
                     f"[{_n(r.low, sign=True)}, {_n(r.high, sign=True)}]",
                     escape("< 0.0001") if r.p_adj < 1e-4 else _n(r.p_adj), "yes" if r.significant else "no"]
                    + ([("yes" if r.robust is True else "no") if r.significant else "--"] if b.pool else [])
                    for r in pr.itertuples(index=False)]
            cap = (f"{where}: each pair's difference with its simultaneous {escape(lvl)} interval over the "
                   f"family's {len(pr)} pairs; separable when the interval excludes 0 (adjusted p from the same test as the interval)."
                   + (" Robust to the pool: the separation holds, in the same order, under all three readings of "
                      "unjudged documents." if b.pool else ""))
            out.append(tabular(["pair", "difference", f"simultaneous {lvl} interval", "adjusted p", "separable"]
                               + (["robust to the pool"] if b.pool else []),
                               prow, "lrlrc" + ("c" if b.pool else ""), cap,
                               _label(key, g if g != "__all__" else "all", "pairs")))
    return out


def latex(res: Any, title: str = "") -> str:
    """Every group's systems and pairs tables of one leaderboard, as one LaTeX fragment."""
    head_ = "% ragcov leaderboard tables; needs \\usepackage{booktabs}\n"
    return head_ + "\n\n".join(board_tables(res, title)) + "\n"
