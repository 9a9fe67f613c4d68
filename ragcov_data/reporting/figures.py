"""Report figures (matplotlib, Agg backend), each returned as PNG bytes.

Every function takes plain data from ``results.json`` (lists of dicts), so a report can be re-rendered
without re-running anything.
"""
from __future__ import annotations

import io
from typing import Any, Mapping, Sequence

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

NAIVE_COLOR = "#c0392b"
DOC_COLOR = "#2c6fbb"
_PALETTE = ["#2c6fbb", "#e67e22", "#27ae60", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#d35400", "#2c3e50"]


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def rate_histogram(per_doc: Sequence[Mapping[str, Any]], title: str = "") -> bytes:
    """Histogram of per-document hit rates, with the micro and macro means drawn beside it."""
    df = pd.DataFrame(per_doc)
    rates = df["hits"] / df["n"]
    micro = df["hits"].sum() / df["n"].sum()
    macro = rates.mean()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.hist(rates, bins=np.linspace(0, 1, 21), color=DOC_COLOR, edgecolor="white")
    ax.axvline(micro, color="#e67e22", lw=2, label=f"micro {micro:.1%}")
    ax.axvline(macro, color="#27ae60", lw=2, ls="--", label=f"macro {macro:.1%}")
    zero = float((rates == 0).mean())
    ax.set_xlabel("per-document hit rate")
    ax.set_ylabel("documents")
    ax.set_title(title or f"Per-document hit rates ({len(df)} documents; {zero:.0%} never hit)")
    ax.legend(frameon=False)
    return _png(fig)


def rates_by_type(per_doc: Sequence[Mapping[str, Any]], title: str = "") -> bytes:
    """Micro hit rate by document type (bars), with the number of documents of each type."""
    df = pd.DataFrame(per_doc)
    g = df.groupby("doc_type").agg(n=("n", "sum"), hits=("hits", "sum"), docs=("doc_id", "size"))
    g["rate"] = g["hits"] / g["n"]
    g = g.sort_values("rate")
    fig, ax = plt.subplots(figsize=(6.4, 0.35 * len(g) + 1.2))
    ax.barh(g.index.astype(str), g["rate"], color=DOC_COLOR)
    for i, (rate, docs) in enumerate(zip(g["rate"], g["docs"])):
        ax.text(rate + 0.005, i, f"{rate:.0%} · {docs} docs", va="center", fontsize=8)
    ax.set_xlim(0, min(1.0, max(0.1, g["rate"].max() * 1.35)))
    ax.set_xlabel("hit rate (micro, chunks of the type)")
    ax.set_title(title or "Hit rate by document type")
    return _png(fig)


def estimates_plot(estimates: Sequence[Mapping[str, Any]], naive: set[str], title: str = "") -> bytes:
    """Point estimate and interval of every method (naive methods in red)."""
    df = pd.DataFrame(estimates)
    df = df[np.isfinite(df["low"].astype(float)) & np.isfinite(df["high"].astype(float))]
    fig, ax = plt.subplots(figsize=(6.4, 0.32 * len(df) + 1.2))
    labels = [f"{e} · {m}" for e, m in zip(df["estimator"], df["method"])]
    y = np.arange(len(df))[::-1]
    for yi, (_, r) in zip(y, df.iterrows()):
        col = NAIVE_COLOR if r["method"] in naive else DOC_COLOR
        ax.plot([r["low"], r["high"]], [yi, yi], color=col, lw=3)
        ax.plot(r["estimate"], yi, "o", color="black", ms=4)
    ax.set_yticks(y, labels, fontsize=8)
    for lab, m in zip(ax.get_yticklabels(), df["method"]):
        if m in naive:
            lab.set_color(NAIVE_COLOR)
    ax.set_xlabel("hit@1")
    ax.set_title(title or "Estimates and 95% intervals (naive chunk-level methods in red)")
    return _png(fig)


def coverage_by_k(coverage: Sequence[Mapping[str, Any]], level: float, naive: set[str]) -> bytes:
    """Coverage by method and K, with Monte-Carlo margins and the nominal level."""
    df = pd.DataFrame(coverage)
    ests = list(dict.fromkeys(df["estimator"]))
    fig, axes = plt.subplots(1, len(ests), figsize=(5.2 * len(ests), 3.8), squeeze=False, sharey=True)
    for ax, est in zip(axes[0], ests):
        sub = df[df["estimator"] == est]
        for i, (m, g) in enumerate(sub.groupby("method", sort=False)):
            g = g.sort_values("k")
            ls = ":" if m in naive else "-"
            ax.errorbar(g["k"], g["coverage"], yerr=g["mc_margin"], marker="o", ms=3, ls=ls, capsize=2,
                        color=_PALETTE[i % len(_PALETTE)], label=m + (" (naive)" if m in naive else ""))
        ax.axhline(level, color="black", lw=1, ls="--")
        ax.set_xscale("log")
        ks = sorted(sub["k"].unique())
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("documents sampled (K)")
        ax.set_title(f"{est}: coverage of nominal {level:.0%} intervals")
        ax.legend(fontsize=7, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)
    axes[0][0].set_ylabel("coverage")
    return _png(fig)


def width_by_method(coverage: Sequence[Mapping[str, Any]], naive: set[str]) -> bytes:
    """Mean interval width by method at each K (bars; naive methods in red)."""
    df = pd.DataFrame(coverage)
    labels = [f"{e} · {m}" for e, m in zip(df["estimator"], df["method"])]
    df = df.assign(label=labels)
    ks = sorted(df["k"].unique())
    order = list(dict.fromkeys(labels))
    fig, ax = plt.subplots(figsize=(6.4, 0.3 * len(order) * max(1, len(ks)) ** 0.5 + 1.4))
    h = 0.8 / len(ks)
    for j, k in enumerate(ks):
        sub = df[df["k"] == k].set_index("label").reindex(order)
        y = np.arange(len(order)) + j * h
        bars = ax.barh(y, sub["mean_width"], height=h, color=_PALETTE[j % len(_PALETTE)], label=f"K={k}")
        for bar, m in zip(bars, sub["method"].fillna("")):
            if m in naive:
                bar.set_hatch("///")
                bar.set_edgecolor(NAIVE_COLOR)
    ax.set_yticks(np.arange(len(order)) + 0.4 - h / 2, order, fontsize=8)
    for lab, name in zip(ax.get_yticklabels(), order):
        if name.split(" · ")[-1] in naive:
            lab.set_color(NAIVE_COLOR)
    ax.invert_yaxis()
    ax.set_xlabel("mean interval width")
    ax.set_title("Interval width by method and K (naive methods hatched, labels in red)")
    if len(ks) > 1:
        ax.legend(fontsize=7, frameon=False)
    return _png(fig)


def autocorrelation(acf: Mapping[str, Sequence[float]]) -> bytes:
    """Within-document autocorrelation of outcomes by chunk lag, one line per retriever."""
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for i, (name, vals) in enumerate(acf.items()):
        lags = np.arange(1, len(vals) + 1)
        ax.plot(lags, vals, marker="o", ms=3, color=_PALETTE[i % len(_PALETTE)], label=name)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xlabel("lag (chunks apart in the same document)")
    ax.set_ylabel("autocorrelation (demeaned per document)")
    ax.set_title("Within-document autocorrelation of hit@1")
    ax.legend(frameon=False, fontsize=8)
    return _png(fig)


def paired_comparison(comparisons: Sequence[Mapping[str, Any]]) -> bytes:
    """Paired differences between retrievers: per-document differences (dots) and document-level interval."""
    n = len(comparisons)
    fig, ax = plt.subplots(figsize=(6.4, 0.9 * n + 1.4))
    rng = np.random.default_rng(0)
    for i, c in enumerate(comparisons):
        d = np.asarray(c.get("per_doc_diff") or [], float)
        if d.size:
            ax.scatter(d, i + rng.uniform(-0.25, 0.25, d.size), s=6, alpha=0.35, color="#7f8c8d")
        est = c.get("interval") or {}
        if est:
            ax.plot([est["low"], est["high"]], [i, i], color=DOC_COLOR, lw=4)
            ax.plot(est["estimate"], i, "o", color="black")
            tie = c.get("tie_share")
            ax.annotate(f"{est['estimator']} {est['method']}: {est['estimate']:+.4f} [{est['low']:+.4f}, {est['high']:+.4f}]"
                        + (f"; {tie:.0%} of documents tied" if tie is not None else ""),
                        (0.01, i + 0.32), xycoords=("axes fraction", "data"), fontsize=8, color=DOC_COLOR)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(n), [f"{c['a']} − {c['b']}" for c in comparisons])
    ax.set_ylim(-0.6, n - 0.2 + 0.3)
    ax.set_xlabel("difference in hit@1 (dots: per-document rate differences; bar: paired document-level 95% CI)")
    ax.set_title("Paired comparison of retrievers")
    return _png(fig)
