"""Text, markdown and self-contained HTML (inline SVG) views of a leaderboard — the one rendering, public so the
report layer draws leaderboards with it.

Every function takes a :class:`~ragcov_data.eval.comparisons.leaderboard.LeaderboardResult` or its JSON form
(``to_dict()`` / the report's ``results.json`` block: ``systems`` and ``pairs`` as records), so the
``leaderboard`` page and the benchmark report draw a leaderboard with the same code. Internal ids of
methods stay in the JSON; the views name them in words (:data:`METHOD_WORDS`), and the overall group
is "all queries".
"""
from __future__ import annotations

import html as _html
import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ragcov_data._format import num
from ragcov_data.outputs import HTML_MARK, MARKDOWN_MARK
from ragcov_data.eval.estimates import marks
from ragcov_data.eval.outcomes.context import context_line

ALL = "__all__"

#: Internal method ids -> words a reader knows (the ids stay in the JSON).
METHOD_WORDS = {
    "cr2": "CR2 cluster-robust t interval", "t": "t interval", "micro": "mean over queries",
    "known_sizes": "known-sizes interval of a document sample (finite-population corrected)",
    "bootstrap_t": "bootstrap-t interval of a document sample (finite-population corrected)",
    "macro": "mean of cluster means", "mean": "mean over queries",
    "holm": "Holm step-down", "max_t_cluster_bootstrap_bonferroni_bounded":
        "simultaneous max-|t| intervals from one cluster bootstrap, never narrower than Bonferroni's",
    "max_t_single_step_bonferroni_bounded": "single-step max-|t| adjusted p-value, bounded by Bonferroni's",
    "holm_separation": "ranks from the Holm decisions",
    "compact_letter_display_holm": "letters from the Holm decisions (a shared letter = not separable)",
    "simultaneous_interval_excludes_0": "separable when the simultaneous interval excludes 0",
    "simultaneous_interval_separation": "ranks from the simultaneous intervals",
    "compact_letter_display_simultaneous": "letters from the simultaneous intervals (a shared letter = not separable)",
    "not_separable_from_any_better_system": "systems no other system is separably above",
    "interval_separation": "ranks from the simultaneous intervals",
    "compact_letter_display_interval": "letters from the simultaneous intervals (a shared letter = not separable)",
    "not_separably_below_any": "systems no other system is separably above",
    "hull_with_wild_cluster_restricted": "widened to cover the wild cluster restricted bootstrap interval (micro)",
    "hull_with_studentized_max_t": ("widened to cover the studentized max-|t| cluster-bootstrap interval "
                                    "(macro and one-query clusters)"),
    "guarded_hall_max_t": ("max-|t| cluster bootstrap of Hall's skewness-corrected t, studentized t where a "
                           "difference sits in fewer than 30 documents (macro and one-query clusters)"),
}
_UNITS = {"doc_id": "document", "source_key": "source summary", "_id": "query", "question": "question"}


def words(x: Any) -> str:
    """The reader's words for a method id (the id itself when unknown)."""
    return METHOD_WORDS.get(str(x), str(x))


def group_label(g: str) -> str:
    """``"all queries"`` for the overall group, ``"group G1"`` otherwise."""
    return "all queries" if g == ALL else f"group {g}"


# ------------------------------------------------------------------------------------------ input
class Board:
    """A leaderboard in one form for every view: ``systems`` / ``pairs`` DataFrames and the settings."""

    def __init__(self, res: Any):
        d = res.to_dict() if hasattr(res, "to_dict") and not isinstance(res, Mapping) else dict(res)
        self.d = d
        self.systems = d["systems"] if isinstance(d["systems"], pd.DataFrame) else pd.DataFrame(d["systems"])
        self.pairs = d["pairs"] if isinstance(d.get("pairs"), pd.DataFrame) else pd.DataFrame(d.get("pairs") or [])
        for col, frame in (("bound_high", self.systems), ("robust", self.pairs), ("tier_flip", self.systems),
                           ("pooled_like", self.systems), ("tiered", self.systems), ("tiered", self.pairs)):
            if col not in frame.columns:
                frame[col] = None
        self.metric = str(d.get("metric", ""))
        self.level = float(d.get("level", 0.95))
        self.info = d.get("info") or {}
        self.groups = d.get("groups") or {}
        self.judged_k = d.get("judged_k")
        self.judged_threshold = d.get("judged_threshold", 0.9)
        self.cluster = d.get("cluster")
        self.pool = self.info.get("pool") or None

    def group_names(self) -> list[str]:
        return list(pd.unique(self.systems["group"])) if len(self.systems) else []

    def sy(self, g: str) -> pd.DataFrame:
        return self.systems[self.systems["group"] == g]

    def pr(self, g: str) -> pd.DataFrame:
        return self.pairs[self.pairs["group"] == g] if len(self.pairs) else self.pairs

    def pool_group(self, g: str) -> dict:
        return ((self.pool or {}).get("groups") or {}).get(g) or {}


def _b(res: Any) -> Board:
    return res if isinstance(res, Board) else Board(res)


def _fin(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and not math.isfinite(x)) and not pd.isna(x)


def _num(x: Any, nd: int = 4, sign: bool = False) -> str:
    return num(x, nd, sign=sign)


def p_text(x: Any) -> str:
    """A p-value, one way everywhere: ``< 0.0001`` below it, else 4 decimals."""
    if not _fin(x):
        return "–"
    return "< 0.0001" if x < 1e-4 else f"{x:.4f}"


def _alpha(b: Board) -> str:
    a = 1 - b.level
    return f"{a:.0%}" if round(a * 100, 6).is_integer() else f"{a:g}"


def unit_words(b: Board, g: str) -> str:
    info = b.groups.get(g, {})
    if info.get("estimator") == "mean":
        return "each query its own cluster"
    return f"{info.get('n_clusters', '?')} clusters ({_UNITS.get(b.cluster, b.cluster)})"


def head(b: Any, g: str) -> str:
    """One line: metric, group, queries, clusters, estimator and interval in words, level."""
    b = _b(b)
    info = b.groups.get(g, {})
    est = info.get("estimator")
    unit = _UNITS.get(b.cluster, b.cluster)
    est_words = f"mean of per-{unit} means" if est == "macro" and unit else words(est)
    return (f"{b.metric} · {group_label(g)} · {info.get('n_queries', '?')} queries, {unit_words(b, g)} · "
            f"{est_words}, {words(info.get('method'))} · level {b.level:g}")


def micro_lines(b: Any) -> list[str]:
    """Under a macro headline chosen because micro is not verified here (``info["micro_line"]``): trec_eval's
    numbers per system, then the one sentence why they carry no verified interval; else nothing."""
    info = b.info if isinstance(b, Board) else (b.get("info") if isinstance(b, Mapping) else getattr(b, "info", None))
    m = (info or {}).get("micro_line") or {}
    if not m:
        return []
    pts = ", ".join(f"{r['name']} {_num(r['estimate'])}" for r in m.get("systems") or [])
    return [f"micro (mean over queries, trec_eval's number): {pts}", str(m.get("reason", ""))]


def metric_line(b: Any) -> str:
    """The metric, and whether it is the task's default."""
    b = _b(b)
    return f"{b.metric} (the task's default metric)" if b.info.get("metric_default") else b.metric


def missing_line(b: Any, g: str) -> str | None:
    """With ``on_missing="zero"``: how many of the group's queries each run lacked (scored 0)."""
    b = _b(b)
    if b.info.get("on_missing") != "zero":
        return None
    sy = b.sy(g)
    lack = [(n, int(m)) for n, m in zip(sy["name"], sy["n_missing"]) if _fin(m) and int(m)]
    if not lack:
        return None
    n = b.groups.get(g, {}).get("n_queries", "?")
    out = "missing queries scored 0: " + ", ".join(f"{name} lacks {m} of {n}" for name, m in lack) + "."
    untiered = [str(x) for x, t in zip(sy["name"], sy["tiered"]) if _is_false(t)]
    if untiered:
        out += (f" {', '.join(untiered)} lack{'s' if len(untiered) == 1 else ''} most of them: shown, not tiered "
                "here (tier –; no separation of theirs counts).")
    return out


def unit_line(b: Any) -> str | None:
    """Where the board's unit is not the task's own (``info["task_cluster"]``): ``unit chosen (cluster='_id');
    the task's unit is the topic``; else None."""
    b = _b(b)
    own = b.info.get("task_cluster")
    if not own or own == b.cluster:
        return None
    return f"unit chosen (cluster={b.cluster!r}); the task's unit is the {_UNITS.get(own, own)}"


def interval_cell(row: Mapping[str, Any]) -> str:
    """``[low, high]`` of a system row with its check's mark (:mod:`ragcov_data.eval.estimates.marks`)."""
    m = marks.mark(row)
    return f"[{_num(row.get('low'))}, {_num(row.get('high'))}]" + (f" {m}" if m else "")


def system_footnotes(b: Any, g: str) -> list[str]:
    """Under a group's systems table: what each mark means for the rows carrying it (:func:`.marks.footnotes`)."""
    b = _b(b)
    return marks.footnotes(((str(r["name"]), r) for r in b.sy(g).to_dict(orient="records")), b.level)


def _is_false(x: Any) -> bool:
    """True for a recorded False (a bool or numpy bool), never for None or NaN."""
    return x is not None and not (isinstance(x, float) and math.isnan(x)) and not bool(x)


def _is_true(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x)) and bool(x)


def tier_text(b: Any, g: str, row: Mapping[str, Any]) -> str:
    """A system's tier as printed: its letters, ``~`` when its order against another system flips under
    another reading of unjudged documents (the letters are then not a strict order), ``–`` when not tiered."""
    tier = str(row.get("tier"))
    return tier + ("~" if _is_true(row.get("tier_flip")) and tier != "–" else "")


def rank_text(row: Mapping[str, Any]) -> str:
    """``rank [low, high]``; ``–`` for a run not tiered (it lacks most of the group's queries), which has no
    rank interval: it enters no other system's ranks, tier or could-be-best set."""
    if _is_false(row.get("tiered")):
        return "–"
    return f"{row['rank']} [{row['rank_low']}, {row['rank_high']}]"


def _tiered_pairs(pr: pd.DataFrame) -> pd.DataFrame:
    """The pairs between tiered runs: the only ones a count of separable pairs counts."""
    if "tiered" not in pr.columns:
        return pr
    return pr[[not _is_false(t) for t in pr["tiered"]]]


def _untiered_words(pr: pd.DataFrame, kept: pd.DataFrame) -> str:
    n = len(pr) - len(kept)
    return f" ({n} pair{'s' if n != 1 else ''} with a run not tiered left out)" if n else ""


def short_sentence(res: Any, group: str = ALL, limit: int = 200) -> str:
    """The verdict in at most ``limit`` characters: how many pairs are separable at the family-wise level
    (robust to the pool, where judgments are pooled) and which systems could be best."""
    b = _b(res)
    all_pr, sy = b.pr(group), b.sy(group)
    if all_pr.empty:
        return f"{group_label(group)}: no pairs."
    pr = _tiered_pairs(all_pr)
    n_sig = int(pr["significant"].astype(bool).sum())
    out = (f"{n_sig} of {len(pr)} pairs separable at the family-wise {_alpha(b)} level"
           + _untiered_words(all_pr, pr))
    pg = b.pool_group(group)
    if pg:
        out += f", {pg['n_robust']} robust to the pool"
    best = list((b.groups.get(group) or {}).get("best_set") or [])
    end = _pooled_leader(b, group)
    if n_sig == 0:
        return out + "; no system is separable from any other" + end + "."
    lead = "; best: " if len(best) == 1 else "; could be best: "
    shown: list[str] = []
    for k, name in enumerate(best):
        rest = len(best) - k - 1
        tail = f" and {rest} more" if rest else ""
        if len(out + lead + ", ".join(shown + [name]) + tail + end + ".") > limit:
            return out + lead + ", ".join(shown) + f" and {len(best) - len(shown)} more" + end + "."
        shown.append(name)
    return out + lead + ", ".join(shown) + end + "."


def _pooled_leader(b: Board, group: str) -> str:
    """`` (X is judged like a pooled engine, judged@10 = 1.00)`` when the group's first system is judged like an
    engine of the pool (``pooled_like``): its lead may owe to the pool; else ``""``."""
    sy = b.sy(group)
    if not len(sy) or "pooled_like" not in sy.columns or not _is_true(sy["pooled_like"].iloc[0]):
        return ""
    top = sy.iloc[0]
    jk = f"judged@{b.judged_k} = {float(top['judged']):.2f}" if b.judged_k and _fin(top.get("judged")) else ""
    return f" ({top['name']} is judged like a pooled engine{', ' + jk if jk else ''}: its lead may owe to the pool)"


def pool_sentence(b: Any, g: str) -> str | None:
    """How many separations hold under all three readings of unjudged documents, and which do not."""
    b = _b(b)
    pg = b.pool_group(g)
    if not pg:
        return None
    dep = [f"{a}–{c}" for a, c in pg.get("depends") or []]
    text = f"{pg['n_robust']} of {pg['n_separable']} separations robust to the pool"
    if dep:
        more = f" and {len(dep) - 6} more" if len(dep) > 6 else ""
        text += f"; order depends on the pool: {', '.join(dep[:6])}{more}"
    return text


def sentence(res: Any, group: str = ALL) -> str:
    """Which systems are separable at the family-wise level, and which are not, in one sentence; on pooled
    judgments, how many separations are robust to the pool and which pairs' order depends on it."""
    b = _b(res)
    all_pr, sy = b.pr(group), b.sy(group)
    if all_pr.empty:
        return f"{group_label(group)}: no pairs."
    pr = _tiered_pairs(all_pr)
    sig = pr[pr["significant"].astype(bool)]
    tiers: dict[str, list[str]] = {}
    for name, tier in zip(sy["name"], sy["tier"]):
        for letter in str(tier).replace("–", ""):
            tiers.setdefault(letter, []).append(name)
    tier_text = " · ".join(f"{k} = {', '.join(v)}" for k, v in sorted(tiers.items()))
    ps = pool_sentence(b, group)
    dep = [f"{a}–{c}" for a, c in (b.pool_group(group).get("depends") or [])] if ps else []
    # on pooled judgments a pair counts as separable only when it is separable under every reading
    n_sep = len(sig) - len(dep)
    out = (f"{n_sep} of {len(pr)} pairs of {len(sy)} systems are separable at the family-wise {_alpha(b)} "
           f"level (their simultaneous {b.level:.0%} intervals exclude 0"
           + (" under every reading of unjudged documents)" if ps else ")") + _untiered_words(all_pr, pr))
    if dep:
        more = f" and {len(dep) - 6} more" if len(dep) > 6 else ""
        out += (f"; separable under the estimate but the order depends on the pool, so not counted: "
                f"{', '.join(dep[:6])}{more}")
    if sig.empty:
        out += "; no system is separable from any other"
    else:
        ns = pr[~pr["significant"].astype(bool)]
        if ns.empty and not dep:
            out += f"; every pair is separable (tiers: {tier_text})"
        elif ns.empty:
            out += f" (tiers under the estimate: {tier_text})"
        else:
            shown = [f"{a}–{c}" for a, c in zip(ns["a"], ns["b"])]
            more = f" and {len(shown) - 6} more" if len(shown) > 6 else ""
            best = getattr(res, "best_set", None)
            could = f"; could be best: {', '.join(best(group))}" if callable(best) else ""
            out += f"; not separable: {', '.join(shown[:6])}{more} (tiers: {tier_text}{could})"
    return out + _pooled_leader(b, group) + "."


def family_words(b: Any) -> str:
    b = _b(b)
    return (f"pairs: simultaneous {b.level:.0%} intervals from one cluster bootstrap "
            f"(max-|t|, B = {b.info.get('n_resamples')}): for means over queries never narrower than Bonferroni's "
            "and widened to the hull with the wild cluster restricted bootstrap, which keeps its level where CR2 "
            "does not; for means of cluster means and one-query clusters Hall's skewness-corrected t (the "
            "studentized t where a difference sits in fewer than 30 documents); a pair is separable "
            "exactly when its interval excludes 0, and rank intervals, tiers (a shared letter = not separable) and "
            "the could-be-best set all follow those decisions; p is the p-value of that test and p_adj its "
            "adjusted p-value (below 1 - level exactly when the interval excludes 0). A pair's simultaneous "
            "interval holds for all pairs together, so it is wider than `ragcov compare`'s for that pair alone.")


def pool_words(b: Any) -> list[str]:
    """The pool line (engines) and what the three readings are, when judgments can be incomplete."""
    b = _b(b)
    if not b.pool:
        return []
    out = [b.pool["line"]] if b.pool.get("line") else []
    out.append("Unjudged documents read three ways: unjudged_as_nonrelevant (trec_eval's number, the estimate), "
               "condensed (unjudged documents removed from each list) and unjudged_as_relevant (at the lowest "
               "positive grade; bound_high in the JSON). These are three readings, not bounds: no reading bounds the "
               "others (a condensed list moves judged documents up, so its score can lie above "
               "unjudged_as_relevant). A separation is robust when it holds, in the same order, under all three; "
               "a tier marked ~ belongs to a system whose order against another flips under some reading.")
    if b.pool.get("pooled_like"):
        out.append(b.pool["pooled_like"])
    return out


# ------------------------------------------------------------------------------------------ text
def _matrix(b: Board, g: str) -> pd.DataFrame:
    names = list(b.sy(g)["name"])
    m = pd.DataFrame("", index=names, columns=names)
    for r in b.pr(g).itertuples(index=False):
        mark = " "
        if r.significant:
            mark = "*" if r.robust is not False else "†"
        m.loc[r.a, r.b] = _num(r.diff, 3, sign=True) + mark
    for n in names:
        m.loc[n, n] = "·"
    return m


def _rows(b: Board, g: str, html: bool = False) -> tuple[list[str], list[list[str]]]:
    sy = b.sy(g)
    jk = f"judged@{b.judged_k}" if b.judged_k else None
    cols = ["rank", "system", "estimate", "interval", "tier"]
    if jk:
        cols.append(jk)
    if sy["condensed"].notna().any():
        cols.append("condensed")
    if sy["bound_high"].notna().any():
        cols.append("unjudged_as_relevant")
    rows = []
    for r in sy.itertuples(index=False):
        row = [rank_text(r._asdict()), str(r.name), _num(r.estimate), interval_cell(r._asdict()),
               tier_text(b, g, r._asdict())]
        if jk:
            row.append("–" if not _fin(r.judged) else f"{r.judged:.2f}" + (" !" if r.judged_flag else "")
                       + (" pooled" if _is_true(r.pooled_like) else ""))
        if "condensed" in cols:
            row.append(_num(r.condensed))
        if "unjudged_as_relevant" in cols:
            row.append(_num(r.bound_high))
        rows.append(row)
    return cols, rows


def text(res: Any) -> str:
    """Per group: rank [interval], system, estimate [interval], tier, judged@k, readings; the pair matrix."""
    b = _b(res)
    out = [f"metric: {metric_line(b)}"] + pool_words(b) + [""]
    for g in b.group_names():
        cols, rows = _rows(b, g)
        out += [head(b, g)]
        ml = missing_line(b, g)
        if ml:
            out.append(ml)
        ul = unit_line(b) if g == ALL else None
        if ul:
            out.append(ul)
        out += [pd.DataFrame(rows, columns=cols).to_string(index=False)]
        out += system_footnotes(b, g) + (micro_lines(b) if g == ALL else []) + [""]
        out.append(f"pairs (row − column; * = separable: the simultaneous {b.level:.0%} interval excludes 0"
                   + ("; † = separable but the order depends on the pool" if b.pool else "") + "):")
        out += [_matrix(b, g).to_string(), ""]
        if len(b.pr(g)):
            pcols, prows = _pair_rows(b, g)
            out += [f"each pair's difference with its simultaneous {b.level:.0%} interval:",
                    pd.DataFrame(prows, columns=pcols).to_string(index=False), ""]
        out += [sentence(b, g), ""]
    if b.judged_k:
        out.append(f"judged@{b.judged_k}: share of the top {b.judged_k} documents with a judgment; ! = below "
                   f"{b.judged_threshold:g} (the score may owe much to the pool; see condensed and "
                   "unjudged_as_relevant); pooled = judged like a pooled engine (judged@k >= 0.99).")
    out.append("family: " + family_words(b) + " p = " + str((b.d.get("family") or {}).get("p", "")))
    words = context_line(b.info)
    if words:
        out.append(words)
    out += [f"notice: {n}" for n in b.info.get("notices", [])]
    return "\n".join(out)


# ------------------------------------------------------------------------------------------ markdown
def md_table(cols: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _pair_rows(b: Board, g: str) -> tuple[list[str], list[list[str]]]:
    cols = ["a − b", "diff", "simultaneous interval", "p", "p_adj", "separable"]
    if b.pool:
        cols.append("robust to the pool")
    cols.append("wins/losses/ties")
    rows = []
    for r in b.pr(g).itertuples(index=False):
        row = [f"{r.a} − {r.b}", _num(r.diff, sign=True), f"[{_num(r.low, sign=True)}, {_num(r.high, sign=True)}]",
               p_text(r.p), p_text(r.p_adj), "yes" if r.significant else "no"]
        if b.pool:
            row.append("yes" if r.robust is True else "no")
        row.append(f"{r.wins}/{r.losses}/{r.ties}")
        rows.append(row)
    return cols, rows


def markdown_panels(res: Any, level: int = 2, pairs: bool = True) -> list[str]:
    """Per group a heading, the head line, the systems table, the pairs table and the sentence."""
    b = _b(res)
    out = []
    for g in b.group_names():
        out += [f"{'#' * level} {'All queries' if g == ALL else g}", "", head(b, g), ""]
        ml = missing_line(b, g)
        if ml:
            out += [ml, ""]
        ul = unit_line(b) if g == ALL else None
        if ul:
            out += [ul, ""]
        cols, rows = _rows(b, g)
        out += [md_table(cols, rows), ""]
        out += [x for note in system_footnotes(b, g) for x in (note, "")]
        if g == ALL and micro_lines(b):
            out += [". ".join(micro_lines(b)), ""]
        if pairs and len(b.pr(g)):
            out += [md_table(*_pair_rows(b, g)), ""]
        out += [sentence(b, g), ""]
    return out


def markdown(res: Any) -> str:
    """Systems and pairs tables per group, with the one-sentence verdict."""
    b = _b(res)
    out = [MARKDOWN_MARK, f"# Leaderboard: {b.metric}", "",
           f"{b.d.get('n_queries')} queries, {b.d.get('n_clusters')} clusters "
           f"({_UNITS.get(b.cluster, b.cluster)}); metric {metric_line(b)}; level {b.level:g}; tie policy "
           f"{b.d.get('tie_policy')}; {family_words(b)}", ""]
    out += [*(x for w in pool_words(b) for x in (w, ""))]
    out += markdown_panels(b)
    out += [f"- {n}" for n in b.info.get("notices", [])]
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------------------------------------ html
CSS = """section.panel{border-top:1px solid #ccc;padding-top:.5rem}
table.systems,table.pairs,table.leaderboard-systems{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
table.systems td,table.systems th,table.pairs td,table.pairs th,table.leaderboard-systems td,
table.leaderboard-systems th{border:1px solid #ddd;padding:.2rem .45rem;text-align:right}
table.pairs th,table.systems th{background:#f4f4f4}td.name,th.name{text-align:left;white-space:nowrap}
td.sig{background:#c7e9c0}td.sig[data-robust="no"]{background:#fde2b8}table.pair-matrix{border-collapse:collapse;font-size:.85rem}td.ns{background:#f0f0f0;color:#666}
td.diag{background:#fff}table.systems td,table.leaderboard-systems td{white-space:nowrap}
table.pairs,table.pair-matrix{min-width:26em}table.pairs caption,table.pair-matrix caption{caption-side:top;text-align:left;font-size:.8rem;color:#555}table.pair-matrix td,table.pair-matrix th{border:1px solid #ddd;padding:.2rem .45rem;text-align:right}.flag{color:#b30000;font-weight:600}.note{font-size:.85rem;color:#444}
.pool{background:#fff8e6;border-left:4px solid #e0a030;padding:.3rem .6rem;font-size:.9rem}
.figs{display:flex;flex-wrap:wrap;gap:1.5rem;align-items:flex-start}
svg text{font-size:12px;font-family:system-ui,sans-serif}small{font-size:.75rem}"""

_PAGE_CSS = "body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222;max-width:80rem}h1{font-size:1.4rem}" \
            "h2{font-size:1.15rem;margin-top:2rem}"

_SCRIPT = """<script>
(function(){var panels=document.querySelectorAll('section.panel');var ok=0,clipped=[];
panels.forEach(function(p){var svgs=p.querySelectorAll('svg');var good=svgs.length>0;
svgs.forEach(function(s){var b=s.getBBox();if(!(b.width>0&&b.height>0))good=false;
var W=s.viewBox.baseVal.width,H=s.viewBox.baseVal.height;
s.querySelectorAll('text').forEach(function(t){var r=t.getBBox();
if(r.x<-0.5||r.y<-0.5||r.x+r.width>W+0.5||r.y+r.height>H+0.5){clipped.push(t.textContent);good=false;}});});
if(p.querySelector('table.pairs')===null)good=false;if(good)ok++;});
document.body.setAttribute('data-panels',String(panels.length));document.body.setAttribute('data-panels-ok',String(ok));
document.body.setAttribute('data-clipped',clipped.join(' | '));
document.body.setAttribute('data-leaderboard',ok===panels.length&&ok>0?'ok':'broken');})();
</script>"""


def _e(x: Any) -> str:
    return _html.escape(str(x), quote=True)


def _text_width(s: str, px: float = 12.0) -> float:
    """A safe upper estimate of a label's width in pixels (proportional font, ``px`` high)."""
    return 0.62 * px * len(s) + 4


def nice_ticks(lo: float, hi: float, n: int = 5) -> np.ndarray:
    """Round tick values covering ``[lo, hi]`` (matplotlib's MaxNLocator: steps 1, 2, 2.5, 5, 10)."""
    from matplotlib.ticker import MaxNLocator

    t = MaxNLocator(nbins=n, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
    return t[(t >= lo - 1e-12) & (t <= hi + 1e-12)] if len(t) > 2 else t


def _decimals(ticks: np.ndarray) -> int:
    """Fewest decimals that print every tick exactly (0.25 -> 2, 0.2 -> 1)."""
    step = float(np.min(np.diff(ticks))) if len(ticks) > 1 else 0.1
    for d in range(6):
        if abs(round(step * 10 ** d) - step * 10 ** d) < 1e-6:
            return d
    return 4


def forest_svg(sy: pd.DataFrame, metric: str, readings: Mapping[str, Mapping[str, float]] | None = None,
               level: float = 0.95) -> str:
    """SVG forest plot: one row per system (best first), estimate and interval; with the pool's readings a
    grey band from the lowest to the highest reading behind each interval. Labels never clipped: the
    left margin is the longest label's width."""
    labels = [f"{r.rank}. {r.name} ({r.tier})" for r in sy.itertuples(index=False)]
    left = int(max(_text_width(s) for s in labels) + 14) if labels else 60
    plot_w, right, rowh, top = 290, 24, 24, 26  # narrow enough for the systems table beside it
    W = left + plot_w + right
    H = top + rowh * len(sy) + 40
    vals = list(sy["estimate"]) + [v for v in list(sy["low"]) + list(sy["high"]) if _fin(v)]
    if readings:
        vals += [float(v) for r in readings.values() for n, v in r.items() if n in set(sy["name"]) and _fin(v)]
    lo, hi = float(np.nanmin(vals)), float(np.nanmax(vals))
    pad = (hi - lo) * 0.05 or 0.05
    ticks = nice_ticks(lo - pad, hi + pad)
    lo, hi = min(lo - pad, float(ticks[0])), max(hi + pad, float(ticks[-1]))
    nd = _decimals(ticks)

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * plot_w

    title = f"{metric}: estimate and interval" + ("; grey: range over the pool's three readings" if readings else "")
    W = max(W, int(_text_width(title)) + 8)  # the title never clipped
    parts = [f'<svg class="forest" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" '
             f'aria-label="forest plot of {_e(metric)}">', f'<text x="4" y="16">{_e(title)}</text>']
    for k, (r, lab) in enumerate(zip(sy.itertuples(index=False), labels)):
        y = top + rowh * k + rowh / 2
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{_e(lab)}</text>')
        if readings:
            rv = [float(readings[m][r.name]) for m in readings if _fin(readings[m].get(r.name))]
            if rv:
                parts.append(f'<rect x="{x(min(rv)):.1f}" y="{y - 7}" width="{max(x(max(rv)) - x(min(rv)), 1):.1f}" '
                             f'height="14" fill="#ddd"><title>{_e(r.name)}: '
                             + _e(", ".join(f"{m} {float(readings[m][r.name]):.4f}" for m in readings))
                             + "</title></rect>")
        if _fin(r.low) and _fin(r.high):
            parts.append(f'<line x1="{x(r.low):.1f}" x2="{x(r.high):.1f}" y1="{y}" y2="{y}" stroke="#1f5fa8" '
                         'stroke-width="2"/>')
        rec = r._asdict()
        said = marks.words(rec, level)
        parts.append(f'<circle cx="{x(r.estimate):.1f}" cy="{y}" r="4" fill="#1f5fa8"><title>{_e(r.name)}: '
                     f'{r.estimate:.4f} {_e(interval_cell(rec))}' + (f" ({_e(said)})" if said else "")
                     + "</title></circle>")
    ya = top + rowh * len(sy) + 4
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{ya}" y2="{ya}" stroke="#888"/>')
    for t in ticks:
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{ya}" y2="{ya + 4}" stroke="#888"/>'
                     f'<text x="{x(t):.1f}" y="{ya + 18}" text-anchor="middle">{t:.{nd}f}</text>')
    return "".join(parts) + "</svg>"


def judged_svg(sy: pd.DataFrame, k: int, threshold: float) -> str:
    """SVG bars of judged@k with the flag threshold as a dashed line (full names, never clipped)."""
    left = int(max(_text_width(str(n)) for n in sy["name"]) + 14)
    span, right, rowh, top = 200, 44, 24, 26
    W = left + span + right
    H = top + rowh * len(sy) + 10
    parts = [f'<svg class="judged" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" '
             f'aria-label="judged at {k}">', f'<text x="4" y="16">judged@{k} (flag below {threshold:g})</text>']
    for i, r in enumerate(sy.itertuples(index=False)):
        y = top + rowh * i
        j = float(r.judged) if _fin(r.judged) else 0.0
        colour = "#d9534f" if r.judged_flag else "#5cb85c"
        parts.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{_e(r.name)}</text>'
                     f'<rect x="{left}" y="{y + 4}" width="{max(j * span, 1):.1f}" height="{rowh - 8}" '
                     f'fill="{colour}"><title>{j:.3f}</title></rect>'
                     f'<text x="{left + j * span + 4:.1f}" y="{y + 15}">{j:.2f}</text>')
    xt = left + threshold * span
    parts.append(f'<line x1="{xt:.1f}" x2="{xt:.1f}" y1="{top - 4}" y2="{H - 4}" stroke="#333" stroke-dasharray="4 3"/>')
    return "".join(parts) + "</svg>"


def pair_matrix_html(res: Any, g: str, table_class: str = "pairs") -> str:
    """Row − column: the difference and its simultaneous interval in each cell (p-values on hover); green =
    separable, amber = separable but the order depends on the pool, grey = not separable."""
    b = _b(res)
    names = list(b.sy(g)["name"])
    cell = {}
    for r in b.pr(g).itertuples(index=False):
        cls = "sig" if r.significant else "ns"
        rob = "" if not r.significant or r.robust is None else f' data-robust="{"yes" if r.robust else "no"}"'
        title = (f"{r.a} − {r.b}: {_num(r.diff, sign=True)} [{_num(r.low, sign=True)}, {_num(r.high, sign=True)}], "
                 f"p = {p_text(r.p)}, adjusted p = {p_text(r.p_adj)}"
                 + ("" if r.robust is None or not r.significant else
                    ("; robust to the pool" if r.robust else "; order depends on the pool")))
        cell[(r.a, r.b)] = (f'<td class="{cls}"{rob} title="{_e(title)}">{_num(r.diff, 3, True)}'
                            f'{"†" if rob and not r.robust else ""}<br><small>[{_num(r.low, 3, True)}, '
                            f'{_num(r.high, 3, True)}]</small></td>')
    th = "".join(f"<th>{_e(n)}</th>" for n in names)
    rows = []
    for a in names:
        tds = "".join(cell.get((a, c), '<td class="diag">·</td>' if a == c else "<td></td>") for c in names)
        rows.append(f'<tr><th class="name">{_e(a)}</th>{tds}</tr>')
    pool = "; amber † = separable, but the order depends on the pool" if b.pool else ""
    n = len(b.pr(g))
    return (f'<table class="{table_class}"><caption>Family-wise over the {n} pair{"s" if n != 1 else ""}: row − column, '
            f'difference and simultaneous {b.level:.0%} interval; green = separable (the interval excludes 0)'
            f'{pool}; p-values on hover.</caption>'
            f'<tr><th></th>{th}</tr>{"".join(rows)}</table>')


def systems_table_html(res: Any, g: str, cls: str = "systems") -> str:
    b = _b(res)
    cols, rows = _rows(b, g)
    words_ = {"bound_high": "unjudged_as_relevant", "condensed": "condensed", "estimate": "estimate"}
    th = "".join(f'<th class="name">{c}</th>' if c == "system" else f"<th>{_e(words_.get(c, c))}</th>" for c in cols)
    body = []
    for row, rec in zip(rows, b.sy(g).to_dict(orient="records")):
        tds = []
        for c, v in zip(cols, row):
            if c == "system":
                tds.append(f'<td class="name">{_e(v)}</td>')
            elif c == "interval" and marks.mark(rec):
                tds.append(f'<td class="marked" data-mark="{_e(marks.mark(rec))}" '
                           f'title="{_e(marks.words(rec, b.level))}">{_e(v)}</td>')
            elif c.startswith("judged@") and v.endswith("!"):
                tds.append(f'<td><span class="flag">{_e(v[:-2])} ⚠</span></td>')
            else:
                tds.append(f"<td>{_e(v)}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return f'<table class="{cls}"><tr>{th}</tr>{"".join(body)}</table>'


def panels_html(res: Any, *, heading: int = 2, pairs: bool = True, systems_class: str = "systems",
                matrix_class: str = "pairs", fold_pairs: bool = False, fold_groups: bool = False) -> str:
    """One panel per group: heading, head line, missing-query line, sentence, figures, tables. In a long
    page (the report) ``fold_pairs`` folds each pair matrix and ``fold_groups`` the groups' panels below the
    overall one, so the answer stays on screen and every table stays one click away."""
    b = _b(res)
    out, folded = [], []
    for g in b.group_names():
        sy = b.sy(g)
        readings = b.pool_group(g).get("readings")
        figs = [forest_svg(sy, b.metric, readings, b.level)]
        if b.judged_k:
            figs.append(judged_svg(sy, b.judged_k, b.judged_threshold))
        ml = missing_line(b, g)
        title = "All queries" if g == ALL else f"Group {g}"
        matrix = pair_matrix_html(b, g, matrix_class) if pairs else ""
        if matrix and fold_pairs:
            n = len(b.pr(g))
            matrix = (f"<details><summary>Pair matrix ({n} pair{'s' if n != 1 else ''}: each difference with its "
                      f"simultaneous {b.level:.0%} interval)</summary>{matrix}</details>")
        ul = unit_line(b) if g == ALL else None
        notes = "".join(f'<p class="note marks">{_e(x)}</p>' for x in system_footnotes(b, g))
        panel = (f'<section class="panel" data-group="{_e(group_label(g))}"><h{heading}>{_e(title)}</h{heading}>'
                 f'<p class="note">{_e(head(b, g))}</p>' + (f'<p class="note flag">{_e(ml)}</p>' if ml else "")
                 + (f'<p class="note unit">{_e(ul)}</p>' if ul else "")
                 + f'<p class="verdict"><strong>{_e(short_sentence(b, g))}</strong></p>'
                 + f'<details class="verdict-full"><summary>in full</summary><p>{_e(sentence(b, g))}</p></details>'
                 + (f'<p class="note micro-line">{_e(". ".join(micro_lines(b)))}</p>' if g == ALL and micro_lines(b)
                    else "")
                 + f'<div class="figs">{"".join(figs)}'
                 + systems_table_html(b, g, systems_class) + "</div>"  # the table beside the plot
                 + notes + matrix + "</section>")
        (folded if fold_groups and g != ALL else out).append(panel)
    if folded:
        names = ", ".join(str(g) for g in b.group_names() if g != ALL)
        out.append(f"<details><summary>By query group ({_e(names)}): each group its own family</summary>"
                   f"{''.join(folded)}</details>")
    return "".join(out)


def html(res: Any) -> str:
    """Self-contained page: the pool line, then per group a forest plot, judged@k bars, the systems table and
    the pair matrix."""
    b = _b(res)
    notes = "".join(f"<li>{_e(n)}</li>" for n in b.info.get("notices", []))
    pool = "".join(f'<p class="pool">{_e(w)}</p>' for w in pool_words(b))
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{HTML_MARK}<title>Leaderboard {_e(b.metric)}</title>'
            f"<style>{_PAGE_CSS}{CSS}</style></head><body><h1>Leaderboard: {_e(metric_line(b))}</h1>"
            f'<p class="note">{b.d.get("n_queries")} queries, {b.d.get("n_clusters")} clusters '
            f"({_e(_UNITS.get(b.cluster, b.cluster))}); level {b.level:g}; tie policy {_e(b.d.get('tie_policy'))}.</p>"
            f"{pool}{panels_html(b)}"
            + (f'<ul class="note">{notes}</ul>' if notes else "")
            + f'<h2>Methods</h2><p class="note methods">{_e(family_words(b))}</p>{_SCRIPT}</body></html>\n')
