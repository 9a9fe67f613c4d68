"""Report figures (matplotlib, Agg backend), each returned as PNG bytes.

Every function takes plain data from ``results.json`` (lists of dicts), so a report can be re-rendered
without re-running anything. Each returns a :class:`PNG` (bytes) that records its smallest text size in
pixels and how many text items fell outside the saved image (``clipped``, 0 by construction: the image
is cut to the tight bounding box of every artist, checked after drawing), so the report can state that
its figure text stays readable at page width.
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
from ragcov_data._format import num  # noqa: E402

NAIVE_COLOR = "#c0392b"
DOC_COLOR = "#2c6fbb"
_PALETTE = ["#2c6fbb", "#e67e22", "#27ae60", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#d35400", "#2c3e50"]


#: Resolution of every figure and the smallest font size allowed, in points (9 pt at 100 dpi = 12.5 px).
DPI = 100
MIN_FONT_PT = 9.0
plt.rcParams.update({"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "xtick.labelsize": 10,
                     "ytick.labelsize": 10, "legend.fontsize": 10})


class PNG(bytes):
    """PNG bytes with ``min_font_px`` (smallest visible text, pixels at natural size), ``clipped`` (text items
    outside the saved image) and ``width`` (pixels)."""

    min_font_px: float = float("nan")
    clipped: int = 0
    width: int = 0


def _png(fig) -> PNG:
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    hidden = set()  # tick labels outside the view limits exist as artists but are never drawn
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            drawn = {id(x) for t in axis._update_ticks() for x in (t.label1, t.label2)}
            hidden |= {id(x) for t in axis.get_major_ticks() + axis.get_minor_ticks() for x in (t.label1, t.label2)
                       if id(x) not in drawn}
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden]
    for t in texts:  # no text under the floor, whatever a caller asked for
        if t.get_fontsize() < MIN_FONT_PT:
            t.set_fontsize(MIN_FONT_PT)
    fig.draw(renderer)
    box = fig.get_tightbbox(renderer).padded(0.1)  # inches; what bbox_inches="tight" saves
    clipped = 0
    for t in texts:
        e = t.get_window_extent(renderer).transformed(fig.dpi_scale_trans.inverted())
        if e.x0 < box.x0 - 1e-3 or e.y0 < box.y0 - 1e-3 or e.x1 > box.x1 + 1e-3 or e.y1 > box.y1 + 1e-3:
            clipped += 1
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    out = PNG(buf.getvalue())
    out.min_font_px = min((t.get_fontsize() for t in texts), default=MIN_FONT_PT) * DPI / 72.0
    out.clipped = clipped
    out.width = int(round(box.width * DPI))
    return out


def _p(x: float) -> str:
    """A p-value as everywhere in the report: ``< 0.0001``, else ``= 0.xxxx``."""
    return "< 0.0001" if x < 1e-4 else f"= {x:.4f}"


def retrievers_grid(retrievers: Sequence[Mapping[str, Any]], metric: str = "hit@1", ncols: int = 4) -> PNG:
    """Small multiples: one small panel per retriever, on shared axes, of how many documents reach each
    per-document rate, with the micro (solid) and macro (dashed) means in the panel's title and as lines."""
    rets = [r for r in retrievers if r.get("per_doc")]
    n = len(rets)
    ncols = max(1, min(ncols, n))
    nrows = int(np.ceil(n / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols + 0.4, 1.95 * nrows + 0.5), squeeze=False,
                             sharex=True, sharey=True)
    bins = np.linspace(0, 1, 11)
    for ax, r in zip(axes.flat, rets):
        df = pd.DataFrame(r["per_doc"])
        rates = df["hits"] / df["n"]
        micro, macro = df["hits"].sum() / df["n"].sum(), rates.mean()
        ax.hist(rates, bins=bins, color=DOC_COLOR, edgecolor="white")
        ax.axvline(micro, color="#e67e22", lw=2)
        ax.axvline(macro, color="#27ae60", lw=2, ls="--")
        ax.set_title(f"{r['name']}\nmicro {micro:.0%} · macro {macro:.0%}", fontsize=10)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel(f"per-document {metric}", fontsize=10)
    for row in axes:
        row[0].set_ylabel("documents", fontsize=10)
    fig.tight_layout()
    return _png(fig)


def rates_by_type_heatmap(retrievers: Sequence[Mapping[str, Any]], metric: str = "hit@1") -> PNG:
    """One panel for every retriever's rate by document type: rows = types (documents in brackets),
    columns = retrievers, cells = the micro rate, written in."""
    rows = {}
    docs: dict[str, int] = {}
    for r in retrievers:
        if not r.get("per_doc"):
            continue
        df = pd.DataFrame(r["per_doc"])
        g = df.groupby("doc_type").agg(n=("n", "sum"), hits=("hits", "sum"), docs=("doc_id", "size"))
        rows[r["name"]] = g["hits"] / g["n"]
        docs.update({str(k): int(v) for k, v in g["docs"].items()})
    m = pd.DataFrame(rows)
    m.index = m.index.astype(str)
    m = m.loc[m.mean(axis=1).sort_values(ascending=False).index]
    fig, ax = plt.subplots(figsize=(1.05 * m.shape[1] + 3.4, 0.3 * len(m) + 1.3))
    im = ax.imshow(m.to_numpy(dtype=float), aspect="auto", cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(m.shape[1]), m.columns, rotation=30, ha="right", fontsize=10)
    ax.set_yticks(range(len(m)), [f"{t} ({docs.get(t, 0)})" for t in m.index], fontsize=9.5)
    for i in range(len(m)):
        for j in range(m.shape[1]):
            v = m.iat[i, j]
            if np.isfinite(v):
                ax.text(j, i, f"{v:.0%}", ha="center", va="center", fontsize=9, color="white" if v > 0.6 else "#222")
    ax.set_title(f"{metric} (micro) by document type (documents in brackets)", fontsize=11)
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.02)
    fig.tight_layout()
    return _png(fig)


def methods_plot(retrievers: Sequence[Mapping[str, Any]], naive: set[str], metric: str = "hit@1") -> PNG:
    """Every interval method of every retriever in one figure: one row per estimator and method, one colour
    per retriever (naive chunk-level methods labelled in red)."""
    rows = []
    for r in retrievers:
        for e in r.get("estimates") or []:
            if e.get("low") is not None and e.get("high") is not None:
                rows.append({**e, "retriever": r["name"]})
    df = pd.DataFrame(rows)
    labels = list(dict.fromkeys(f"{e} · {m}" for e, m in zip(df["estimator"], df["method"])))
    names = list(dict.fromkeys(df["retriever"]))
    fig, ax = plt.subplots(figsize=(9.5, 0.42 * len(labels) + 1.4))
    h = 0.7 / max(1, len(names))
    for j, name in enumerate(names):
        sub = df[df["retriever"] == name]
        for _, r in sub.iterrows():
            y = labels.index(f"{r['estimator']} · {r['method']}") + (j - (len(names) - 1) / 2) * h
            col = _PALETTE[j % len(_PALETTE)]
            ax.plot([r["low"], r["high"]], [y, y], color=col, lw=3, label=name if _ == sub.index[0] else None)
            ax.plot(r["estimate"], y, "o", color="black", ms=3)
    ax.set_yticks(range(len(labels)), labels)
    for lab, text in zip(ax.get_yticklabels(), labels):
        if text.split(" · ")[-1] in naive:
            lab.set_color(NAIVE_COLOR)
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
    ax.set_xlabel(f"{metric}: estimate and interval")
    ax.set_title("Every interval method (naive chunk-level methods in red: shown only as a contrast)")
    ax.legend(frameon=False, loc="lower right")
    return _png(fig)


def coverage_by_k(coverage: Sequence[Mapping[str, Any]], level: float, naive: set[str]) -> bytes:
    """Coverage by method and K, with Monte-Carlo margins and the nominal level: one panel per estimator,
    each with its own legend; a method keeps one colour in every panel, and each panel's axis is zoomed to
    its own range (never a squashed 0-1 axis)."""
    df = pd.DataFrame(coverage)
    ests = list(dict.fromkeys(df["estimator"]))
    colour = {m: _PALETTE[i % len(_PALETTE)] for i, m in enumerate(dict.fromkeys(df["method"]))}
    fig, axes = plt.subplots(1, len(ests), figsize=(5.2 * len(ests), 3.8), squeeze=False)
    for ax, est in zip(axes[0], ests):
        sub = df[df["estimator"] == est]
        for m, g in sub.groupby("method", sort=False):
            g = g.sort_values("k")
            ls = ":" if m in naive else "-"
            ax.errorbar(g["k"], g["coverage"], yerr=g["mc_margin"], marker="o", ms=3, ls=ls, capsize=2,
                        color=colour[m], label=m + (" (naive)" if m in naive else ""))
        ax.axhline(level, color="black", lw=1, ls="--")
        ax.set_xscale("log")
        ks = sorted(sub["k"].unique())
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        marg = sub["mc_margin"].fillna(0) if "mc_margin" in sub else 0
        lo = float(np.nanmin(np.r_[(sub["coverage"] - marg).to_numpy(dtype=float), level]))
        hi = float(np.nanmax(np.r_[(sub["coverage"] + marg).to_numpy(dtype=float), level]))
        pad = max(0.01, 0.08 * (hi - lo))
        ax.set_ylim(max(0.0, lo - pad), min(1.02, hi + pad))
        ax.set_xlabel("documents sampled (K)")
        ax.set_ylabel("coverage")
        ax.set_title(f"{est}: coverage of nominal {level:.0%} intervals")
        ax.legend(fontsize=9, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)
    fig.tight_layout()
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
    ax.set_yticks(np.arange(len(order)) + 0.4 - h / 2, order, fontsize=9.5)
    for lab, name in zip(ax.get_yticklabels(), order):
        if name.split(" · ")[-1] in naive:
            lab.set_color(NAIVE_COLOR)
    ax.invert_yaxis()
    ax.set_xlabel("mean interval width")
    ax.set_title("Interval width by method and K (naive methods hatched, labels in red)")
    if len(ks) > 1:
        ax.legend(fontsize=9, frameon=False)
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
    ax.legend(frameon=False, fontsize=9.5)
    return _png(fig)


def paired_comparison(comparisons: Sequence[Mapping[str, Any]], n_family: int | None = None) -> bytes:
    """Paired differences between retrievers: per-document differences (dots) and the family-wise
    (simultaneous) interval of each pair, with its adjusted p (the interval's own test). ``n_family``: the pairs of the family
    when only some of them are drawn (default: those drawn)."""
    n = len(comparisons)
    n_fam = n if n_family is None else int(n_family)
    fig, ax = plt.subplots(figsize=(6.4, 0.9 * n + 1.4))
    rng = np.random.default_rng(0)
    level = None
    for i, c in enumerate(comparisons):
        d = np.asarray(c.get("per_doc_diff") or [], float)
        if d.size:
            ax.scatter(d, i + rng.uniform(-0.25, 0.25, d.size), s=6, alpha=0.35, color="#7f8c8d")
        est = c.get("interval") or {}
        level = (c.get("family") or {}).get("level", level)
        if est:
            ax.plot([est["low"], est["high"]], [i, i], color=DOC_COLOR, lw=4)
            ax.plot(est["estimate"], i, "o", color="black")
            tie = c.get("tie_share")
            padj = est.get("p_adj")
            ax.annotate(f"{num(est['estimate'], 4, True)} [{num(est['low'], 4, True)}, {num(est['high'], 4, True)}]"
                        + (f", adjusted p {_p(padj)}" if padj is not None else "")
                        + (f"; {tie:.0%} of documents tied" if tie is not None else ""),
                        (0.01, i + 0.32), xycoords=("axes fraction", "data"), fontsize=9.5, color=DOC_COLOR)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(n), [f"{c['a']} − {c['b']}" for c in comparisons])
    ax.set_ylim(-0.6, n - 0.2 + 0.3)
    lv = f"{level:.0%} " if level else ""
    ax.set_xlabel(f"difference in hit@1 (dots: per-document rate differences; bar: simultaneous {lv}interval "
                  f"over the {n_fam} pair{'s' if n_fam != 1 else ''})")
    ax.set_title("Paired comparison of retrievers, family-wise (simultaneous intervals, adjusted p)")
    return _png(fig)


def chunking_scatter(per_document: Sequence[Mapping[str, Any]], names: Sequence[str],
                     difference: Mapping[str, Any]) -> bytes:
    """Per-document hit@1 under each chunking (x: the other, y: ``difference['a']``) with the diagonal;
    the title carries the paired difference ``a - b`` and its interval. Dot area follows the queries."""
    df = pd.DataFrame(per_document)
    a, b = difference["a"], difference["b"]
    x, y = df[f"rate_{b}"].to_numpy(float), df[f"rate_{a}"].to_numpy(float)
    size = 6 + 2.0 * np.sqrt(df[f"n_{a}"].to_numpy(float) + df[f"n_{b}"].to_numpy(float))
    up, down = y > x + 1e-12, y < x - 1e-12
    fig, ax = plt.subplots(figsize=(4.3, 4.1))
    ax.plot([0, 1], [0, 1], color="black", lw=0.8, ls="--", label="no change")
    for mask, col, lab in ((up, "#27ae60", f"better by {a}: {int(up.sum())}"),
                           (down, NAIVE_COLOR, f"worse by {a}: {int(down.sum())}"),
                           (~(up | down), "#7f8c8d", f"equal: {int((~(up | down)).sum())}")):
        ax.scatter(x[mask], y[mask], s=size[mask], alpha=0.55, color=col, edgecolor="white", lw=0.4, label=lab)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_aspect("equal")
    ax.set_xlabel(f"per-document hit@1, {b}")
    ax.set_ylabel(f"per-document hit@1, {a}")
    ax.set_title(f"{a} − {b}: {num(difference['estimate'], 3, True)} [{num(difference['low'], 3, True)}, "
                 f"{num(difference['high'], 3, True)}]\n"
                 f"(mean over {difference['n_documents']} documents, paired; {difference.get('method', 't')} interval)",
                 fontsize=10)
    ax.legend(frameon=False, fontsize=9.5, loc="upper left")
    return _png(fig)


def miss_flags(blocks: Mapping[str, Mapping[str, Any]], level: float = 0.95) -> bytes:
    """Share of hit@1 misses under each flag, one bar per chunking, with CR2 (document-clustered) error bars."""
    names = list(blocks)
    flags = list(dict.fromkeys(f["name"] for b in blocks.values() for f in b.get("flags") or []))
    fig, ax = plt.subplots(figsize=(5.2, 0.36 * len(flags) * max(1, len(names)) ** 0.5 + 1.4))
    h = 0.8 / max(1, len(names))
    for j, name in enumerate(names):
        rows = {f["name"]: f for f in blocks[name].get("flags") or []}
        share = np.array([rows[f]["share"] if f in rows else np.nan for f in flags], float)
        lo = np.array([rows[f]["low"] if f in rows and rows[f]["low"] is not None else np.nan for f in flags], float)
        hi = np.array([rows[f]["high"] if f in rows and rows[f]["high"] is not None else np.nan for f in flags], float)
        err = np.vstack([np.clip(share - lo, 0, None), np.clip(hi - share, 0, None)])
        yy = np.arange(len(flags)) + j * h
        ax.barh(yy, share, height=h, color=_PALETTE[j % len(_PALETTE)], xerr=np.nan_to_num(err), capsize=3,
                error_kw={"lw": 1, "ecolor": "#333"},
                label=f"{name} ({blocks[name]['n_misses']:,} misses of {blocks[name]['n_queries']:,})")
        for yi, v in zip(yy, share):
            if np.isfinite(v):
                ax.text(0.005, yi, f"{v:.0%}", va="center", fontsize=9, color="white")
    ax.set_yticks(np.arange(len(flags)) + 0.4 - h / 2, flags)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"share of hit@1 misses ({level:.0%} CR2 intervals, clustered by the query's document)")
    ax.set_title("Where the misses go: what the top-1 retrieved chunk is")
    ax.legend(frameon=False, fontsize=9.5, loc="lower right")
    return _png(fig)


def miss_flags_by_type(by_type_flags: Sequence[Mapping[str, Any]], title: str = "") -> bytes:
    """Heat map: each flag's share within each document type's misses (rows: types, most misses first)."""
    df = pd.DataFrame(by_type_flags)
    n = df.groupby("doc_type")["n_misses"].max().sort_values(ascending=False)
    flags = list(dict.fromkeys(df["name"]))
    m = df.pivot_table(index="doc_type", columns="name", values="share", aggfunc="first").reindex(index=n.index,
                                                                                                 columns=flags)
    fig, ax = plt.subplots(figsize=(1.2 * len(flags) + 3.2, 0.32 * len(m) + 1.6))
    im = ax.imshow(m.to_numpy(float), vmin=0, vmax=1, cmap="Blues", aspect="auto")
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            v = m.iat[i, j]
            if np.isfinite(v):
                ax.text(j, i, f"{v:.0%}", ha="center", va="center", fontsize=9, color="white" if v > 0.6 else "#222")
    ax.set_xticks(range(len(flags)), flags, rotation=20, ha="right", fontsize=9.5)
    ax.set_yticks(range(len(m)), [f"{t} ({int(k)})" for t, k in n.items()], fontsize=9.5)
    fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02, label="share of the type's misses")
    ax.set_title(title or "Miss flags by document type (misses in brackets)", fontsize=10)
    return _png(fig)


def budget_curve(curve: Sequence[Mapping[str, Any]], level: float = 0.95, headline: int | None = None) -> PNG:
    """The share of the cited provisions' text inside the context against the context budget (words), one line per
    chunking and retriever
    (colour: chunking; line style: retriever), each point with its own interval from that budget's family
    (the per-system CR2 interval, clustered as the family). ``curve``: records ``chunking, retriever, budget,
    estimate, low, high`` (``budget_block``)."""
    df = pd.DataFrame(list(curve))
    fig, ax = plt.subplots(figsize=(7.2, 4.4))
    chunkings = list(dict.fromkeys(df["chunking"]))
    rets = list(dict.fromkeys(df["retriever"]))
    styles = ["-", "--", ":", "-."]
    budgets = sorted(df["budget"].unique())
    span = (np.log(budgets[-1]) - np.log(budgets[0])) if len(budgets) > 1 else 1.0
    n = len(chunkings) * len(rets)
    for i, (c, r) in enumerate((c, r) for c in chunkings for r in rets):
        g = df[(df["chunking"] == c) & (df["retriever"] == r)].sort_values("budget")
        if g.empty:
            continue
        shift = np.exp((i - (n - 1) / 2) * 0.012 * span)  # side by side, so intervals do not hide each other
        x = g["budget"].to_numpy(float) * shift
        y = g["estimate"].to_numpy(float)
        err = np.vstack([y - g["low"].to_numpy(float), g["high"].to_numpy(float) - y])
        color = _PALETTE[chunkings.index(c) % len(_PALETTE)]
        ax.errorbar(x, y, yerr=np.clip(err, 0, None), color=color, ls=styles[rets.index(r) % len(styles)],
                    marker="o", ms=4, lw=1.6, capsize=2.5, label=f"{c} / {r}")
    if headline is not None:
        ax.axvline(headline, color="#7f8c8d", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xticks(budgets, [f"{b:,}" for b in budgets])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("context budget (words; ranked chunks cut at the B-th word)")
    ax.set_ylabel("share of the cited text in the context")
    ax.set_title(f"Cited text within the same context, per chunking ({level:.0%} intervals)")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)
