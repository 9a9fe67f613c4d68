"""The benchmark's family-wise and chunking parts, as plain ``results.json`` blocks.

- :func:`leaderboard_block` / :func:`pair_records`: the leaderboard of every retriever (one family of all
  pairs: simultaneous intervals and their own adjusted ``p_adj``) and the ``comparisons`` records filled from its
  pairs (the key predates the leaderboard and once held unadjusted intervals; each record now says
  ``family``).
- :func:`chunking_block`, :func:`misses_block`, :func:`study_sentence`: the words-vs-dispositivo
  comparison paired by document, where the hit@1 misses go, and the study's answer in one sentence.

Every number a sentence carries is read from the results, never written in.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from ragcov_data._format import num
from ragcov_data._json import to_jsonable

__all__ = ["proxy_block", "budget_block", "corpora_agreement", "leaderboard_block", "pair_records",
           "single_system_sentence", "chunking_block", "misses_block",
           "misses_table", "flip_difference", "as_ranked", "study_sentence", "FLAG_PHRASES"]

ALL = "__all__"
#: How the study's sentence words each miss flag, in the order it cites them.
FLAG_PHRASES = {"same_type": "retrieved a chunk of a document of the same type",
                "other_edition": "another edition of the same series",
                "same_issuer": "a document of the same issuer",
                "near_duplicate": "a near-identical passage",
                "boilerplate": "a chunk made mostly of boilerplate"}


def leaderboard_block(lb: Any, task: str) -> dict[str, Any]:
    """``lb.to_dict()`` plus ``task``, ``sentence`` (overall separability) and ``separable`` by group."""
    groups = list(pd.unique(lb.systems["group"]))
    out = to_jsonable(lb.to_dict())
    out.update({"task": task, "sentence": lb.separable(ALL) if ALL in groups else lb.separable(groups[0]),
                "separable": {g: lb.separable(g) for g in groups}, "n_pairs": int((lb.pairs["group"] == ALL).sum())})
    return out


def single_system_sentence(name: str) -> str:
    """What the report says where only one system ran: nothing to separate."""
    return f"only one system ran ({name}): there is no pair to separate."


def pair_records(lb: Any, per_document: Mapping[str, pd.Series]) -> list[dict[str, Any]]:
    """The ``comparisons`` records of the overall family, ``a`` before ``b`` in retriever order
    (``per_document``'s order, as before the leaderboard; ``diff = a - b``; the leaderboard block itself
    orients pairs by rank).

    ``estimates`` and ``interval`` hold the one family-wise row (the simultaneous interval with ``p`` and
    their own adjusted ``p_adj``); ``per_doc_diff`` and ``tie_share`` are per-document rate differences (the figure's dots).
    """
    pr = lb.pairs[lb.pairs["group"] == ALL]
    info = lb.groups[ALL]
    fam = {**lb.family, "n_pairs": int(len(pr)), "level": lb.level, "n_resamples": lb.info.get("n_resamples")}
    order = {n: k for k, n in enumerate(per_document)}
    out = []
    for r in sorted(pr.itertuples(index=False), key=lambda r: sorted((order[r.a], order[r.b]))):
        flip = order[r.a] > order[r.b]
        a, b = (r.b, r.a) if flip else (r.a, r.b)
        sgn = -1.0 if flip else 1.0
        lo, hi = sorted((sgn * float(r.low), sgn * float(r.high)))
        pa, pb = per_document[a], per_document[b]
        diff = (pa - pb.reindex(pa.index)).dropna()
        row = {"estimator": info["estimator"], "method": "simultaneous", "estimate": sgn * float(r.diff),
               "se": float(r.se), "df": float(r.df), "low": lo, "high": hi, "p": float(r.p),
               "p_adj": float(r.p_adj), "naive": False, "flags": []}
        out.append({"a": a, "b": b, "estimates": [row], "interval": row, "diff": row["estimate"], "low": lo,
                    "high": hi, "p": float(r.p), "p_adj": float(r.p_adj), "significant": bool(r.significant),
                    "family": fam, "tie_share": float((diff.abs() <= 1e-12).mean()) if len(diff) else None,
                    "wins": int(r.losses if flip else r.wins), "losses": int(r.wins if flip else r.losses),
                    "ties": int(r.ties), "per_doc_diff": diff.to_list()})
    return out


def as_ranked(comparisons: Sequence[Mapping[str, Any]], board: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """``comparisons`` re-oriented as the leaderboard's pairs (``a`` ranked above ``b``), in its order, so the
    paired figure reads like the pairs table beside it; unchanged without a leaderboard."""
    pairs = [p for p in (board or {}).get("pairs") or [] if p.get("group") == ALL]
    if not pairs:
        return list(comparisons)
    by = {frozenset((c["a"], c["b"])): c for c in comparisons}
    out = []
    for p in pairs:
        c = by.get(frozenset((p["a"], p["b"])))
        if c is None:
            continue
        if c["a"] != p["a"]:
            iv = dict(c.get("interval") or {})
            if iv:
                iv.update(estimate=-iv["estimate"], low=-iv["high"], high=-iv["low"])
            c = {**c, "a": c["b"], "b": c["a"], "interval": iv, "wins": c.get("losses"), "losses": c.get("wins"),
                 "per_doc_diff": [-x for x in c.get("per_doc_diff") or []]}
        out.append(c)
    return out


def chunking_block(cmp_: Any, retriever: str) -> dict[str, Any]:
    """``ChunkingComparison.to_dict()`` plus the retriever that ran on both chunkings."""
    out = to_jsonable(cmp_.to_dict())
    out["retriever"] = retriever
    return out


def misses_block(res: Any, retriever: str, chunking: str) -> dict[str, Any]:
    """The summary of a :class:`~ragcov_data.eval.misses.MissesResult`, without the per-miss list."""
    return to_jsonable({"retriever": retriever, "chunking": chunking, "n_queries": res.n_queries,
                        "n_misses": res.n_misses, "flags": res.flags, "by_type": res.by_type,
                        "by_type_flags": res.by_type_flags, "tie_policy": res.tie_policy, "level": res.level,
                        "cluster": res.cluster, "definitions": res.definitions})


def misses_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """Every miss of every chunking in one table, with a ``chunking`` column first."""
    frames = [t.assign(chunking=name)[["chunking", *t.columns]] for name, t in results.items()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _pp(x: float | None) -> str:
    """A share as whole percentage points, without the sign (``0.594`` -> ``"59"``)."""
    return "–" if x is None else num(100 * x, 0)  # never "-0" for a bound just below zero


def flip_difference(chunkings: Mapping[str, Any], towards: str = "dispositivo") -> dict[str, Any] | None:
    """The headline difference read as ``towards - other`` (``compare_chunkings`` gives ``A - B`` in its
    ``names`` order; the report words it as the change from cutting by ``towards``)."""
    d = chunkings.get("difference") or {}
    names = list(chunkings.get("names") or [])
    if not d or len(names) != 2 or towards not in names:
        return None
    sign = 1.0 if names[0] == towards else -1.0
    lo, hi = sorted((sign * d["low"], sign * d["high"]))
    other = names[1] if names[0] == towards else names[0]
    return {"estimate": sign * d["estimate"], "low": lo, "high": hi, "a": towards, "b": other,
            "method": d.get("method"), "estimator": d.get("estimator"), "n_documents": d.get("n_documents")}


def study_sentence(misses: Mapping[str, Any] | None, chunkings: Mapping[str, Any] | None) -> str | None:
    """The study's question answered in one sentence with intervals: where the misses go, and what
    cutting by dispositivo changes (per-document hit@1, paired by document)."""
    if not misses:
        return None
    level = misses.get("level", 0.95)
    flags = {f["name"]: f for f in misses.get("flags") or []}
    said = [f"{_pp(flags[k]['share'])}% [{_pp(flags[k]['low'])}, {_pp(flags[k]['high'])}] {phrase}"
            for k, phrase in FLAG_PHRASES.items() if k in flags]
    who = misses.get("retriever", "the retriever")
    who = "BM25" if who == "bm25" else who
    text = f"Of {who}'s {misses['n_misses']:,} hit@1 misses on the {misses.get('chunking', '')} chunking"
    text += (", " + ", ".join(said)) if said else ""
    d = flip_difference(chunkings or {})
    if d is not None:
        text += (f"; cutting by {d['a']} instead of {d['b']} changes per-document hit@1 by "
                 f"{num(d['estimate'], 3, True)} [{num(d['low'], 3, True)}, {num(d['high'], 3, True)}] over the "
                 f"{d['n_documents']} documents "
                 "in both")
    return text + f" ({level:.0%} intervals: CR2 by document for the shares, t over documents for the change)."


def _pair(pairs: pd.DataFrame, x: str, y: str) -> tuple[float, float, float, bool]:
    """``x − y`` from a family's pair rows (either orientation): diff, simultaneous low, high, separable."""
    row = pairs[(pairs["a"] == x) & (pairs["b"] == y)]
    if len(row):
        r = row.iloc[0]
        return float(r["diff"]), float(r["low"]), float(r["high"]), bool(r["significant"])
    r = pairs[(pairs["a"] == y) & (pairs["b"] == x)].iloc[0]
    return -float(r["diff"]), -float(r["high"]), -float(r["low"]), bool(r["significant"])


def budget_block(study: Any, budget: int, corpus: str = "IRPF") -> dict[str, Any]:
    """The equal-context answer of a cited chunking study (:class:`ragcov_data.eval.comparisons.cited.CitedChunkingResult`)
    for the report, read by the share of the cited provisions' text inside the context (``span_recall@Bw``):
    ``answer`` (which cut wins at ``budget`` words, its difference and simultaneous interval against the next
    cut), ``answers`` (the same at every budget), ``touch_answer`` (the touch reading, ``recall@Bw``),
    ``disagreement``/``disagreements`` (where the two readings name different cuts, one sentence why),
    ``sentence``, ``winners_sentence``, ``curve`` (every system's text share within every budget, with its
    interval, and its touch reading: the figure's points), ``text_share_curve`` (per budget and system the share
    of cited provisions with any / half / 90% / all of their text inside) and ``families`` (each budget's
    text-share leaderboard block; the touch reading's in ``touched_families``)."""
    # local: keeps `ragcov --help` from importing the evaluator (scipy.stats)
    from ragcov_data.eval.comparisons.text_share import MEASURE_NOTES, family_metric, winners
    from ragcov_data.eval.outcomes.budget import CONTEXT_NOTE

    answers = {b: study.budget_answer(b) for b in study.budgets}
    answer, touch = answers[int(budget)], study.touch_answer(budget)
    disagreements = {str(b): study.disagreement(b) for b in study.budgets}
    lb = study.leaderboards[family_metric(budget)]
    unit = ("paired by question" if study.cluster == "question" else
            f"paired by question, clustered by {study.cluster}" if study.cluster == "first cited artigo" else
            f"clustered by {study.cluster}")
    said = answer["sentence"]
    sentence = f"On {lb.n_queries} real {corpus} questions ({unit}), {said[:1].lower()}{said[1:]}"
    if disagreements[str(budget)]["sentence"]:
        sentence += " " + disagreements[str(budget)]["sentence"]
    return {"corpus": corpus, "budget": int(budget), "budgets": study.budgets, "metric": family_metric(budget),
            "touched_metric": family_metric(budget, "touched"), "context": CONTEXT_NOTE, "measures": MEASURE_NOTES,
            "answer": answer, "answers": {str(b): a for b, a in answers.items()}, "touch_answer": touch,
            "disagreement": disagreements[str(budget)], "disagreements": disagreements, "sentence": sentence,
            "winners_sentence": winners(answers), "curve": _curve_records(study),
            "text_share_curve": study.text_share_curve(), "level": lb.level, "cluster": study.cluster,
            "families": {str(b): leaderboard_block(study.leaderboards[family_metric(b)],
                                                   f"{corpus.lower()}_budget_{b}") for b in study.budgets},
            "touched_families": {str(b): leaderboard_block(study.leaderboards[family_metric(b, "touched")],
                                                           f"{corpus.lower()}_touched_{b}") for b in study.budgets}}


def _curve_records(study: Any) -> list[dict[str, Any]]:
    """Every system's text share within every budget with its interval (the figure's points), and its touch
    reading beside it."""
    from ragcov_data.eval.comparisons.text_share import family_metric

    out = []
    for b in study.budgets:
        lb = study.leaderboards[family_metric(b)]
        touched = study.leaderboards[family_metric(b, "touched")].systems.set_index("name")["estimate"]
        for _, r in lb.systems[lb.systems["group"] == ALL].iterrows():
            chunking, _, ret = str(r["name"]).rpartition("/")
            out.append({"name": r["name"], "chunking": chunking, "retriever": ret, "budget": b,
                        "estimate": float(r["estimate"]), "low": float(r["low"]), "high": float(r["high"]),
                        "verified": r.get("verified"), "touched": float(touched.get(r["name"], float("nan")))})
    return out


def corpora_agreement(blocks: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """Whether the corpora's text-share answers name the same cut, budget by budget (``blocks``: corpus ->
    :func:`budget_block`), and one sentence saying so; None with fewer than two corpora."""
    blocks = {c: b for c, b in blocks.items() if b and b.get("answers")}
    if len(blocks) < 2:
        return None
    budgets = sorted(set.intersection(*(set(b["answers"]) for b in blocks.values())), key=int)
    by = {bud: {c: b["answers"][bud]["chunking"] for c, b in blocks.items()} for bud in budgets}
    same = {bud: len(set(w.values())) == 1 for bud, w in by.items()}
    names = " and ".join(blocks)
    head = str(next(iter(blocks.values()))["budget"])
    parts = [f"{int(bud):,} words: " + (f"{next(iter(w.values()))} on both" if same[bud] else
                                        ", ".join(f"{c} {x}" for c, x in w.items())) for bud, w in by.items()]
    verdict = ("agree on" if all(same.values()) else "disagree on" if not any(same.values()) else
               f"agree at {sum(same.values())} of {len(same)} budgets on")
    sentence = f"{names} {verdict} the cut whose context holds the most cited text — " + "; ".join(parts) + "."
    return {"corpora": list(blocks), "budget": int(head), "agree": same.get(head), "agree_by_budget": same,
            "by_budget": by, "sentence": sentence}


def irpf_sentence(family: Any, icc: Mapping[str, Any] | None = None, reference: str = "dispositivo") -> str:
    """The real-questions answer in one sentence: under each retriever, which chunking brings a cited provision
    into the top 10 most often, its difference from the runner-up chunking and from ``reference`` chunks, each
    with the family's simultaneous interval (systems are named ``chunking/retriever``)."""
    sy = family.systems[family.systems["group"] == ALL]
    pr = family.pairs[family.pairs["group"] == ALL]
    by_ret: dict[str, list[tuple[str, float]]] = {}
    for name, est in zip(sy["name"], sy["estimate"]):
        chunking, _, ret = str(name).rpartition("/")
        by_ret.setdefault(ret, []).append((chunking, float(est)))
    said, runner_up, vs_ref = [], [], []
    for ret, rows in by_ret.items():
        rows = sorted(rows, key=lambda t: -t[1])
        if len(rows) < 2:
            continue
        (c1, e1), (c2, e2) = rows[0], rows[1]
        d, lo, hi, sep = _pair(pr, f"{c1}/{ret}", f"{c2}/{ret}")
        runner_up.append((ret, sep))
        text = (f"with {ret}, {c1} {num(e1, 2)}, next {c2} {num(e2, 2)} ({c1} − {c2} {_signed(d)} "
                f"[{_signed(lo)}, {_signed(hi)}])")
        ref = next(((c, e) for c, e in rows[2:] if c == reference), None)
        if ref is not None:
            d, lo, hi, sep = _pair(pr, f"{c1}/{ret}", f"{reference}/{ret}")
            vs_ref.append((ret, sep))
            text += f", {reference} {num(ref[1], 2)} ({c1} − {reference} {_signed(d)} [{_signed(lo)}, {_signed(hi)}])"
        said.append(text)
    best_c = {max(rows, key=lambda t: t[1])[0] for rows in by_ret.values()}
    unit = "clustered by topic" if getattr(family, "cluster", "") == "topic" else "paired by question"
    lead = (f"On {family.n_queries} real IRPF questions ({unit}), the cut that brings a cited provision into the "
            f"top 10 most often ({family.metric}) is ")
    lead += (f"{next(iter(best_c))} under every retriever: " if len(best_c) == 1 else
             "not the same under every retriever: ")

    def who(found: list[tuple[str, bool]]) -> str:
        yes = [r for r, sep in found if sep]
        return "no retriever" if not yes else ("every retriever" if len(yes) == len(found) else ", ".join(yes))

    verdict = f"the lead over the next cut is separable under {who(runner_up)}"
    if vs_ref:
        verdict += f", the lead over {reference} chunks under {who(vs_ref)}"
    return (lead + "; ".join(said) + f" (simultaneous {family.level:.0%} intervals over the family's {len(pr)} "
            f"pairs): {verdict}.")


def _signed(x: float) -> str:
    return num(x, 3, sign=True).replace("-", "−")


def proxy_block(study: Any) -> dict[str, Any]:
    """``results["proxy"][corpus]``: the proxy study's JSON (:class:`ragcov_data.jobs.proxy.ProxyStudyResult`:
    every comparison with its ``sentence``, both orders, tau with its interval, the pairs, the winners), plain
    lists and dicts, and ``sentence``: the first headline comparison's."""
    out = to_jsonable(study.to_dict())
    heads = [c for c in out["comparisons"] if c.get("headline")]
    out["sentence"] = heads[0]["sentence"] if heads else None
    return out
