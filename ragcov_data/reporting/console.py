"""What ``ragcov benchmark`` prints when it ends: one compact table per task (system, score [interval],
tier, rank interval) and one short sentence per task, from the ``results`` dict alone.

The report and ``results.json`` hold the long sentences; the console answers at a glance. Every line outside
a table stays within :data:`MAX_LINE` characters (sentences are cut at a name boundary, "and N more").
Each system's interval carries its check's mark (``*`` measured short, ``‡`` the check cannot vouch) and the
rows marked are named below the table in the words of :mod:`ragcov_data.eval.estimates.marks`, as in the report.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ragcov_data._format import num, pct
from ragcov_data.eval.comparisons.leaderboard_latex import board_tables
from ragcov_data.eval.comparisons.leaderboard_render import (Board, head, interval_cell, micro_lines, rank_text,
                                                              short_sentence, system_footnotes, tier_text, unit_line)
from ragcov_data.eval.estimates import marks
from ragcov_data.reporting import cuts
from ragcov_data.reporting.blocks import flip_difference

__all__ = ["summary", "latex_summary", "task_boards", "board_table", "MAX_LINE"]

ALL = "__all__"
#: Longest line outside a table.
MAX_LINE = 200


def task_boards(results: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any] | None]]:
    """(key, title, leaderboard block) of every task the results hold, in report order; the block is None
    where one system ran."""
    out: list[tuple[str, str, Mapping[str, Any] | None]] = []
    if results.get("retrievers"):
        out.append(("aneel_taesa", "ANEEL self-retrieval", results.get("leaderboard")))
    jt = results.get("juristcu") or {}
    if jt:
        lb = jt.get("leaderboard")
        out.append(("juristcu", "JurisTCU", lb))
    ir = results.get("irpf") or {}
    if ir:
        lb = ir.get("leaderboard")
        where = f", {lb['chunking']} chunks" if lb and lb.get("chunking") else ""
        out.append(("irpf", f"IRPF real questions{where}", lb))
        budgeted = _budget_board(ir)
        if budgeted is not None:  # chunkings compared like for like: the same context budget
            out.append(("irpf-chunking", f"IRPF chunking x retriever within {budgeted[0]:,} words of context, share "
                        "of the cited text in the context (one family)", budgeted[1]))
        elif ir.get("chunkings"):
            out.append(("irpf-chunking", "IRPF chunking x retriever, recall@10 (unequal contexts: k chunks of "
                        "each cut's size; one family)", ir["chunkings"]))
    lg = results.get("lgpd") or {}
    budgeted = _budget_board(lg) if lg else None
    if budgeted is not None:
        out.append(("lgpd-chunking", f"LGPD chunking x retriever within {budgeted[0]:,} words of context, share of "
                    "the cited text in the context (one family, clustered by exam)", budgeted[1]))
    return out


def _budget_board(ir: Mapping[str, Any]) -> tuple[int, Mapping[str, Any]] | None:
    """(budget, leaderboard) of a cited corpus's chunking family at the budget its answer names, when measured."""
    b = ir.get("budgets") or {}
    budget = (b.get("answer") or {}).get("budget") or b.get("budget")
    board = (b.get("families") or {}).get(str(budget)) if budget else None
    return (int(budget), board) if board else None


def board_table(board: Mapping[str, Any], group: str = ALL) -> tuple[list[str], list[str]]:
    """The compact table of ``group`` (lines, each interval with its check's mark) and the footnotes that say
    what each mark means for the rows carrying it (:func:`ragcov_data.eval.estimates.marks.footnotes`)."""
    b = Board(board)
    sy = b.sy(group)
    lvl = f"{b.level:.0%}"
    rows = []
    for r in sy.to_dict(orient="records"):
        rows.append([str(r["name"]), num(r["estimate"]), interval_cell(r), tier_text(b, group, r), rank_text(r)])
    cols = ["system", "score", f"{lvl} interval", "tier", "rank [interval]"]
    width = [max(len(c), *(len(row[i]) for row in rows)) for i, c in enumerate(cols)]
    fmt = lambda row: "  " + "  ".join(v.ljust(w) for v, w in zip(row, width)).rstrip()  # noqa: E731
    return [fmt(cols)] + [fmt(row) for row in rows], system_footnotes(b, group)


def _wrap(text: str, limit: int = MAX_LINE) -> list[str]:
    """``text`` (indented two spaces) on as many lines of at most ``limit`` characters as it needs: a footnote
    is never cut (its reason is the check's own)."""
    import textwrap

    return textwrap.wrap(text, width=limit, initial_indent="  ", subsequent_indent="    ", break_long_words=False,
                         break_on_hyphens=False)


def _fit(text: str, limit: int = MAX_LINE) -> str:
    """``text`` cut to ``limit`` characters at a separator, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 2]
    for sep in ("; ", ", ", " "):
        k = cut.rfind(sep)
        if k > limit // 2:
            return cut[:k] + " …"
    return cut + " …"


def _estimate_table(results: Mapping[str, Any]) -> list[str]:
    """ANEEL with one system (no leaderboard): its micro CR2 row with its check's mark, and what the mark means."""
    out, notes = [], []
    level = (results.get("meta") or {}).get("level", 0.95)
    for r in results.get("retrievers") or []:
        est = {(e["estimator"], e["method"]): e for e in r["estimates"]}
        e = est.get(("micro", "cr2"))
        if e:
            out.append(f"  {r['name']}  {num(e['estimate'])} {interval_cell(e)}")
            notes += marks.footnotes([(f"{r['name']} micro cr2", e)], level)
    return out + [x for note in notes for x in _wrap(note)]


def _coverage_lines(results: Mapping[str, Any]) -> list[str]:
    """The coverage study in words a reader can place: samples of K of the census's documents, the method
    each estimator's rows use, and what it covered there (or that no method was verified)."""
    cov = results.get("coverage") or {}
    rec = cov.get("recommendation") or {}
    if not rec:
        return []
    k, pop = cov.get("recommend_k"), cov.get("population", "the first retriever")
    n_docs = (results.get("task") or {}).get("documents", "?")
    rows = {(r.get("estimator"), r.get("method"), r.get("k")): r for r in cov.get("rows") or []}
    used = {"micro": "cr2", "macro": "t"}  # the methods of the rows the tables print
    out = [f"coverage study: {cov.get('reps', '?')} samples of {k} of the {n_docs} documents ({pop}'s outcomes "
           f"as the census), {pct(cov.get('level', 0.95), 0)} intervals:"]
    for est, c in rec.items():
        row = rows.get((est, used.get(est), k))
        mine = (f"{est} {used[est]} (as the rows) covers {pct(row['coverage'])}"
                + (f" ± {num(100 * row['mc_margin'], 1)}" if row and row.get("mc_margin") is not None else "")
                if row and est in used
                and row.get("coverage") is not None else f"{est}")
        if c.get("qualified", True):
            best = ("" if c["method"] == used.get(est) else
                    f"; for samples of {k} documents use {c['method']} ({pct(c['coverage'])} ± "
                    f"{num(100 * c['mc_margin'], 1)})")
            out.append(_fit(f"  {mine}{best}"))
        else:
            why = str(c.get("reason", "")).replace(f" at K={k}", f" with {k} documents")
            out.append(_fit(f"  {mine}; for samples of {k} documents NO method verified — {why}"))
    return out


def _study_line(results: Mapping[str, Any]) -> str | None:
    """The ANEEL chunking study in one short line: the difference in per-document hit@1 and the misses."""
    d = flip_difference(results.get("chunkings") or {})
    m = results.get("misses") or {}
    if d is None and not m:
        return None
    who = (results.get("chunkings") or {}).get("retriever") or m.get("retriever", "")
    text = f"Chunking ({who}, ANEEL): "
    if d is not None:
        text += (f"{d['a']} − {d['b']} = {num(d['estimate'], 3, True)} [{num(d['low'], 3, True)}, "
                 f"{num(d['high'], 3, True)}] per-document hit@1 over {d['n_documents']} documents")
    if m:
        text += f"{'; ' if d is not None else ''}{m.get('n_misses', 0):,} hit@1 misses on {m.get('chunking', '')}"
    return _fit(text + " (report: Chunking and misses).")




def _pool_lines(board: Mapping[str, Any]) -> list[str]:
    """On pooled judgments: what ``~`` means, and the runs judged like a pooled engine."""
    pool = (board.get("info") or {}).get("pool") or {}
    if not pool:
        return []
    out = ["  Pooled judgments: three readings of unjudged documents, no reading a bound on the others; ~ = the "
           "system's order against another flips under another reading (report: JurisTCU)."]
    if pool.get("pooled_like"):
        out.append(_fit("  " + pool["pooled_like"].split(" — ")[0] + "."))
    return [_fit(x) for x in out]


def _proxy_lines(results: Mapping[str, Any]) -> list[str]:
    """Self-retrieval against the real questions: one sentence per corpus and family (the headline measures), each
    interval's mark in its words once; the report's section and ``ragcov proxy`` hold the whole study."""
    heads = [(ds, c) for ds, block in (results.get("proxy") or {}).items()
             for c in block.get("comparisons", []) if c.get("headline")]
    if not heads:
        return []
    lines = ["Self-retrieval against the real questions on the same acts and cut "
             "(report: Self-retrieval as a proxy for real questions):"]
    taus = []
    for ds, c in heads:
        lines += _wrap(f"{ds.upper()} {c['family']}: {c['sentence']}")
        taus.append((f"{ds.upper()} {c['family']}' tau", c["result"]["tau"]))
    lines += [x for note in marks.footnotes(taus, heads[0][1]["result"]["tau"]["level"]) for x in _wrap(note)]
    return lines + [""]


def summary(results: Mapping[str, Any]) -> str:
    """The console summary of a benchmark run (see the module docstring)."""
    boards = task_boards(results)
    n_ret = len(results.get("retrievers") or [])
    lines = [f"ragcov benchmark: {len(boards)} tables, {n_ret} retriever{'s' if n_ret != 1 else ''}, "
             f"{(results.get('meta') or {}).get('elapsed_s', '?')} s", ""]
    for key, title, board in boards:
        lines.append(title)
        if board:
            lines.append(_fit("  " + head(board, ALL)))
            ul = unit_line(board)
            if ul:
                lines.append(_fit("  " + ul))
            table, notes = board_table(board)
            lines += table
            lines += [_fit("  " + x) for x in micro_lines(board)]
            lines.append(_fit(f"  {short_sentence(board)}"))
            block = (results.get(key.split("-")[0]) or {}).get("budgets") or {}
            if key.endswith("-chunking") and (block.get("answer") or {}).get("sentence"):
                lines += [f"  {x}" for x in cuts.console_lines(block, MAX_LINE - 2)]
            lines += [x for note in notes for x in _wrap(note)]  # each mark in its words, never cut
            lines += _pool_lines(board)
        elif key == "aneel_taesa":
            lines += _estimate_table(results)
            lines.append("  one system ran: there is no pair to separate.")
        else:
            single = (results.get(key.split("-")[0]) or {})
            lines.append(_fit(f"  {single.get('leaderboard_sentence') or single.get('sentence') or 'one system ran.'}"))
        lines.append("")
    agree = cuts.agreement_line(results)
    if agree:
        lines += [_fit(agree), ""]
    study = _study_line(results)
    if study:
        lines += [study, ""]
    lines += _proxy_lines(results)
    lines += _coverage_lines(results)
    return "\n".join(lines).rstrip()


def latex_summary(results: Mapping[str, Any]) -> str:
    """The summary's tables as LaTeX booktabs floats: every task's systems over all its queries (the
    leaderboard's own ``--latex`` gives the pairs and groups too)."""
    parts = []
    for key, title, board in task_boards(results):
        if board:
            parts += board_tables(board, title, key=key, pairs=False, groups=[ALL])
    return "% ragcov benchmark summary tables; needs \\usepackage{booktabs}\n" + "\n\n".join(parts) + "\n"
