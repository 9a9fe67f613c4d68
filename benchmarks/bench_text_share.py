"""Adversarial pipelines for the chunking answer: passage runs that game the touch reading, to rank beside plain cuts.

    python benchmarks/bench_text_share.py [--data-dir ../shared/data] [--dataset irpf] [--out adversarial]

Asks every question of the task (``irpf`` or ``lgpd``, dispositivo granularity) through
:func:`ragcov_data.run_pipeline`, with pipelines that each split the acts their own way and rank the pieces with the
Portuguese BM25 (each passage carries where it is in its act):

- ``fragments``: 200 five-word fragments (1,000 words of tiny pieces);
- ``whole_acts``: one chunk per act (the context is the first words of the top act);
- ``half_overlap``: 20 windows of 100 words, a new one every 50 (each word twice);
- ``same_passage``: the top 100-word window returned at every rank (50 times);
- ``twice``: the top 100-word windows, each returned twice in a row;
- ``oracle``: the text of the question's cited dispositivos.

Writes one ``NAME.jsonl`` passage run each into ``--out`` and prints the ``ragcov chunking --passages`` command that
ranks them with plain cuts at 1,000 words (the text share is the headline; the touch reading beside it). Prints the
command that ran first.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir  # noqa: E402


def windows(documents, size: int, step: int):
    """Word windows of every act: ``_id``, ``doc_id``, ``start_char``, ``end_char``, ``text`` (the act's own)."""
    import pandas as pd

    rows = []
    for d, text in zip(documents["doc_id"], documents["text"]):
        toks = [m.span() for m in re.finditer(r"\S+", text)]
        for a in range(0, len(toks), step):
            b = min(a + size, len(toks)) - 1
            rows.append({"_id": f"{d}@{a}", "doc_id": d, "start_char": toks[a][0], "end_char": toks[b][1],
                         "text": text[toks[a][0]:toks[b][1]]})
            if b == len(toks) - 1:
                break
    return pd.DataFrame(rows)


def ranked(units, queries, k: int) -> dict[str, list[dict]]:
    """The Portuguese BM25's top ``k`` units per question, as passages with their place."""
    from ragcov_data.baselines.registry import make_retriever

    run = make_retriever("bm25-pt").index(units[["_id", "text"]]).search(queries[["_id", "text"]], k=k)
    by_id = units.set_index("_id")
    out: dict[str, list[dict]] = {}
    for q, g in run.groupby("query-id", sort=False):
        g = g.sort_values("corpus-id", ascending=False, kind="stable").sort_values("score", ascending=False,
                                                                                   kind="stable")
        out[str(q)] = [{"text": by_id.at[c, "text"], "doc_id": by_id.at[c, "doc_id"],
                        "start_char": int(by_id.at[c, "start_char"]), "end_char": int(by_id.at[c, "end_char"]),
                        "score": float(s)} for c, s in zip(g["corpus-id"], g["score"])]
    return out


def oracle(citations, documents) -> dict[str, list[dict]]:
    """Per question the text of each cited dispositivo, as its act writes it."""
    text = dict(zip(documents["doc_id"], documents["text"]))
    ok = citations[(citations["status"] == "resolved") & citations["start_char"].notna()]
    out: dict[str, set] = {}
    for q, d, s, e in zip(ok["query-id"], ok["doc_id"], ok["start_char"], ok["end_char"]):
        out.setdefault(str(q), set()).add((str(d), int(s), int(e)))
    return {q: [{"text": text[d][s:e], "doc_id": d, "start_char": s, "end_char": e} for d, s, e in sorted(p)]
            for q, p in out.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=default_data_dir())
    p.add_argument("--dataset", default="irpf", choices=("irpf", "lgpd"))
    p.add_argument("--out", default="adversarial")
    args = p.parse_args(argv)
    print(f"$ {command_line()}")
    import ragcov_data

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = ragcov_data.load_dataset(args.dataset, "dispositivo", data_dir=args.data_dir)
    docs = ragcov_data.task_documents(task)
    queries = task["queries"].to_pandas()
    qid = dict(zip(queries["text"], queries["_id"]))
    top = ranked(windows(docs, 100, 100), queries, 20)
    answers = {"fragments": ranked(windows(docs, 5, 5), queries, 200),
               "whole_acts": {q: p[:1] for q, p in ranked(windows(docs, 10 ** 7, 10 ** 7), queries, 1).items()},
               "half_overlap": ranked(windows(docs, 100, 50), queries, 20),
               "same_passage": {q: p[:1] * 50 for q, p in top.items()},
               "twice": {q: [x for x in p for _ in (0, 1)] for q, p in top.items()},
               "oracle": oracle(task["citations"].to_pandas(), docs)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, by_q in answers.items():
        path = out / f"{name}.jsonl"
        path.unlink(missing_ok=True)
        ragcov_data.run_pipeline(lambda question, by_q=by_q: by_q.get(qid[question], []), task, out=str(path),
                                 name=name, show_progress=False)
        print(f"wrote {path}")
    files = " ".join(f"--passages {out / f'{n}.jsonl'}" for n in answers)
    print(f"{time.perf_counter() - t0:.1f} s; rank them with plain cuts at 1,000 words:")
    print(f"ragcov chunking --dataset {args.dataset} --data-dir {args.data_dir} --chunking words-50,dispositivo,article "
          f"--retriever bm25-pt --budgets 1000 --metrics recall@10 {files} --json adversarial.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
