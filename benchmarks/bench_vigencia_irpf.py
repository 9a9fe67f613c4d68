"""Retrieval with and without superseded wording, on the real IRPF questions, paired by question.

    python benchmarks/bench_vigencia_irpf.py [--data-dir ../shared/data] [--k 10]

Reads the seven compiled acts as published (``irpf/html/``: Planalto and SIJUT pages, the CTN Markdown
clip) twice: superseded wording taken out (the default) and kept (``keep_superseded=True``). Each act is
cut into article chunks (the act's own top-level artigos, from the dispositivo parser; the RIR/2018 page's
annex, whose articles the questions cite) and into 100-word windows. BM25 (the package's) ranks the chunks
of all seven acts for every question with a cited article (``references`` of level ``dispositivo``);
a chunk is relevant when it holds a cited article (a window: when it overlaps one). Per question: hit@1,
hit@k and reciprocal rank at k; the difference kept - taken out is paired by question, its interval CR2
with each question its own cluster (``ragcov_data.eval.interval``), and the discordant questions counted.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir  # noqa: E402

PAGES = {"L9250compilado.html": "lei-9250-1995", "L7713compilada.html": "lei-7713-1988",
         "L5172compilado.md": "lei-5172-1966", "D9580.html": "decreto-9580-2018",
         "IN_RFB_1500_2014.html": "in-rfb-1500-2014", "IN_RFB_2178_2024.html": "in-rfb-2178-2024",
         "L15270.html": "lei-15270-2025"}
_ART = re.compile(r"^arts?\. (.+)$")


def _articles(label: str) -> list[str]:
    """``art. 3-A`` -> ["3-A"]; ``arts. 28 e 29`` -> ["28", "29"]; ``arts. 52 a 58`` -> ["52", ..., "58"]."""
    m = _ART.match(label)
    if not m:
        return []
    parts = m.group(1).split()
    if len(parts) == 3 and parts[1] == "a" and parts[0].isdigit() and parts[2].isdigit():
        return [str(n) for n in range(int(parts[0]), int(parts[2]) + 1)]
    return [p for p in parts if p not in ("e", "a")]


def article_units(doc_id: str, text: str) -> tuple[list[str], list[tuple[int, int, list[str]]]]:
    """The words of an act and its article units ``(start, stop, articles)`` (word spans)."""
    from ragcov_data.loaders.dispositivos import find_boundaries, words_and_line_starts

    words, starts = words_and_line_starts(text)
    bounds = find_boundaries(words, starts)
    annex = doc_id == "decreto-9580-2018"  # the RIR is the decree's annex
    tops = [b for b in bounds if b.kind == "art" and len(b.path) == (2 if annex else 1)
            and (not annex or b.path[0].startswith("anexo"))]
    units = []
    for b, nxt in zip(tops, tops[1:] + [None]):
        stop = len(words) if nxt is None else nxt.start
        units.append((b.start, stop, _articles(b.path[-1])))
    return words, units


def build_chunks(acervo, windows: int | None) -> tuple[pd.DataFrame, dict]:
    """Chunks of every act (article units, or windows of ``windows`` words) and each act's article spans."""
    rows, spans = [], {}
    for doc in acervo.documents:
        doc_id = PAGES[doc.doc_id]
        words, units = article_units(doc_id, doc.text)
        spans[doc_id] = {a: (s, e) for s, e, arts in units for a in arts}
        if windows is None:
            for k, (s, e, arts) in enumerate(units):
                rows.append({"_id": f"{doc_id}#{k:04d}", "doc": doc_id, "start": s, "stop": e,
                             "text": " ".join(words[s:e])})
        else:
            for k, s in enumerate(range(0, len(words), windows)):
                e = min(len(words), s + windows)
                rows.append({"_id": f"{doc_id}#{k:04d}", "doc": doc_id, "start": s, "stop": e,
                             "text": " ".join(words[s:e])})
    return pd.DataFrame(rows), spans


def evaluate(chunks: pd.DataFrame, spans: dict, questions: list[dict], k: int) -> pd.DataFrame:
    """hit@1, hit@k and RR@k of each question (BM25 over ``chunks``)."""
    from ragcov_data.baselines import BM25

    from ragcov_data.execution.engine import run_task

    queries = pd.DataFrame({"_id": [q["qid"] for q in questions], "text": [q["question"] for q in questions]})
    run = run_task(BM25(show_progress=False), {"corpus": chunks[["_id", "text"]], "queries": queries}, k=k,
                   exclude_self=False)
    info = chunks.set_index("_id")
    out = []
    for q in questions:
        gold = [(r["doc_id"], r["article"]) for r in q["references"]
                if r["level"] == "dispositivo" and r["article"] and (r["doc_id"], r["article"]) != (None, None)]
        gold = [(d, a, spans[d][a]) for d, a in gold if d in spans and a in spans[d]]
        ranked = run[run["query-id"] == q["qid"]].sort_values("rank")["corpus-id"].tolist()[:k]
        rel = []
        for cid in ranked:
            row = info.loc[cid]
            rel.append(any(d == row["doc"] and row["start"] < e and s < row["stop"] for d, _, (s, e) in gold))
        first = next((i for i, r in enumerate(rel) if r), None)
        out.append({"qid": q["qid"], "topic": q["question_summary"], "hit@1": float(bool(rel[:1] and rel[0])),
                    f"hit@{k}": float(first is not None), f"rr@{k}": 0.0 if first is None else 1.0 / (first + 1)})
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=default_data_dir())
    p.add_argument("--k", type=int, default=10)
    args = p.parse_args(argv)
    print(f"$ {command_line()}")
    from ragcov_data.legal.acervo import read_acervo
    from ragcov_data.eval import interval

    folder = Path(args.data_dir) / "irpf"
    questions = [json.loads(x) for x in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acervos = {"out": read_acervo(folder / "html"), "kept": read_acervo(folder / "html", keep_superseded=True)}
    v = acervos["out"].vigencia
    print(f"superseded wording in the pages: {v['passages']} passages, {v['words']} words, in {v['documents']} "
          "of 7 acts")
    k = args.k
    for name, windows in (("article chunks", None), ("100-word windows", 100)):
        tables = {}
        for mode, acervo in acervos.items():
            chunks, spans = build_chunks(acervo, windows)
            cited = [q for q in questions if any(r["level"] == "dispositivo" and r["article"] and r["doc_id"] in spans
                                                 and r["article"] in spans[r["doc_id"]] for r in q["references"])]
            tables[mode] = evaluate(chunks, spans, cited, k).set_index("qid")
            print(f"{name}, superseded {mode}: {len(chunks)} chunks, {len(cited)} questions with a resolved cited "
                  f"article ({sum(len(c.split()) for c in chunks['text']):,} words)")
        common = tables["out"].index.intersection(tables["kept"].index)
        for metric in ("hit@1", f"hit@{k}", f"rr@{k}"):
            a, b = tables["out"].loc[common, metric], tables["kept"].loc[common, metric]
            diff = (b - a).to_numpy()
            res = interval(diff, np.asarray(common), method="cr2")
            lo, hi = res.confidence_interval()
            worse, better = int((diff < 0).sum()), int((diff > 0).sum())
            print(f"  {metric:<7} out {a.mean():.3f}  kept {b.mean():.3f}  kept - out {diff.mean():+.4f} "
                  f"[{lo:+.4f}, {hi:+.4f}] (95% CR2, {len(common)} questions; {better} better, {worse} worse)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
