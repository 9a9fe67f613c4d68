"""Text and Markdown of a proxy agreement (:class:`ragcov_data.eval.comparisons.proxy.ProxyAgreement`).

Every number is read from the result; the words say which task each number belongs to and what an
undetermined pair means, so a reader never takes "not separable" for "agrees".
"""
from __future__ import annotations

from typing import Any

from ragcov_data._format import num, pct
from ragcov_data.eval.estimates import marks

__all__ = ["sentence", "text", "markdown", "footnotes", "STATUS_WORDS"]

#: How a pair's status reads.
STATUS_WORDS = {"agree": "agree", "disagree": "DISAGREE", "proxy_not_separable": "proxy cannot separate",
                "real_not_separable": "questions cannot separate", "neither_separable": "neither separates"}


def _tau(res: Any) -> str:
    t = res.tau
    return (f"tau-b {num(t['estimate'], 2, sign=True)}, {t['level']:.0%} interval [{num(t['low'], 2, sign=True)}, "
            f"{num(t['high'], 2, sign=True)}]{marks.mark(t)}")


def footnotes(res: Any) -> list[str]:
    """The interval's check in words, as every output says it (nothing when verified)."""
    return marks.footnotes([("the interval for tau", res.tau)], res.tau["level"])


def sentence(res: Any) -> str:
    """Tau with its interval, the pairs' agreement and the winners, in one sentence."""
    a, w = res.agreement, res.winners
    p, r = res.sides["proxy"], res.sides["real"]
    win = (f"both name {w['real']} best" if w["same"] else
           f"the proxy names {w['proxy']} best, the questions {w['real']}"
           + (" (which the questions cannot tell from the best)" if w["proxy_in_real_best_set"] else
              " (which the questions place separably below the best)"))
    return (f"{p['metric']} on {p['task']} against {r['metric']} on {r['task']}: {_tau(res)}; of {a['pairs']} pairs "
            f"both tasks separate {a['agree']} the same way and {a['disagree']} opposite ways, {a['undetermined']} "
            f"undetermined (the proxy cannot separate {a['proxy_not_separable'] + a['neither_separable']}, the "
            f"questions {a['real_not_separable'] + a['neither_separable']}); {win}.")


def _order_rows(res: Any) -> list[list[str]]:
    rows = []
    for r in res.systems.itertuples(index=False):
        rows.append([str(r.name),
                     f"{num(r.real_estimate)} [{num(r.real_low)}, {num(r.real_high)}]",
                     f"{r.real_rank} [{r.real_rank_low}, {r.real_rank_high}]",
                     f"{num(r.proxy_estimate)} [{num(r.proxy_low)}, {num(r.proxy_high)}]",
                     f"{r.proxy_rank} [{r.proxy_rank_low}, {r.proxy_rank_high}]"])
    return rows


def _pair_rows(res: Any) -> list[list[str]]:
    rows = []
    for r in res.pairs.itertuples(index=False):
        rows.append([f"{r.a} > {r.b}",
                     f"{num(r.real_diff, 3, sign=True)} [{num(r.real_low, 3, sign=True)}, {num(r.real_high, 3, sign=True)}]"
                     + ("*" if r.real_separable else ""),
                     f"{num(r.proxy_diff, 3, sign=True)} [{num(r.proxy_low, 3, sign=True)}, "
                     f"{num(r.proxy_high, 3, sign=True)}]" + ("*" if r.proxy_separable else ""),
                     STATUS_WORDS[r.status]])
    return rows


def _head(res: Any) -> list[str]:
    p, r = res.sides["proxy"], res.sides["real"]
    return ["system", f"real: {r['metric']} [{res.tau['level']:.0%}]", "rank", f"proxy: {p['metric']}", "rank"]


def _grid(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return [fmt(head), *(fmt(r) for r in rows)]


def _design(side: Any, rows: str) -> str:
    """``"7 acts, the mean of their values"`` / ``"174 questions in 162 topics, the mean over questions"``."""
    if side["n_rows"] == side["n_clusters"]:
        return f"{side['n_rows']:,} {side['cluster']}s, the mean of their values"
    how = "the mean over " + rows if side["estimator"] == "micro" else f"the mean of {side['cluster']} means"
    return f"{side['n_rows']:,} {rows} in {side['n_clusters']:,} {side['cluster']}s, {how}"


def text(res: Any) -> str:
    """Terminal text: the two orders, tau and its interval, every pair, winners and limits."""
    p, r = res.sides["proxy"], res.sides["real"]
    lines = [f"proxy: {p['metric']} on {p['task']} ({_design(p, 'rows')}) · real: {r['metric']} on {r['task']} "
             f"({_design(r, 'questions')})"]
    lines += _grid(_head(res), _order_rows(res))
    b = res.bootstrap
    lines += ["", f"{_tau(res)} — every order both tasks' families allow at {res.tau['side_level']:.4f} each "
                  f"({'exact' if res.tau['exact'] else 'relaxed: undetermined pairs free'}); joint bootstrap of "
                  f"the estimate: [{num(b['low'], 2, sign=True)}, {num(b['high'], 2, sign=True)}] "
                  "(it describes the estimate's stability, not the true agreement: it covered far below its level "
                  "where the systems are close)", *footnotes(res), ""]
    lines += _grid(["pair (real order)", "real diff [simultaneous]", "proxy diff [simultaneous]", "verdicts"],
                   _pair_rows(res))
    lines += ["(* separable: the simultaneous interval excludes 0)", "", sentence(res), res.limits["sentence"]]
    return "\n".join(lines)


def markdown(res: Any, heading: str = "###") -> list[str]:
    """Markdown lines: both orders, tau, the pairs table and the sentence."""
    def table(head: list[str], rows: list[list[str]]) -> list[str]:
        return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
                *("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows)]

    a = res.agreement
    out = [sentence(res), "", *table(_head(res), _order_rows(res)), "", *footnotes(res),
           f"{_tau(res)}; joint bootstrap of the estimate [{num(res.bootstrap['low'], 2, sign=True)}, "
           f"{num(res.bootstrap['high'], 2, sign=True)}] (the estimate's stability only). Pairs: agree "
           f"{a['agree']} ({pct(a['share_agree'])}), disagree {a['disagree']} ({pct(a['share_disagree'])}), "
           f"undetermined {a['undetermined']} ({pct(a['share_undetermined'])}).", "",
           *table(["pair (real order)", "real diff", "proxy diff", "verdicts"], _pair_rows(res))]
    return out
