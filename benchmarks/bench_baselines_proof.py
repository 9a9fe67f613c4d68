"""The proof, family-wise: one leaderboard of every baseline on JurisTCU, the IRPF questions and ANEEL.

Every registry baseline (:mod:`ragcov_data.baselines.registry`; ``dense`` is ``use-multilingual`` under
another name and is left out) is run on three tasks and ranked by :func:`ragcov_data.eval.leaderboard`,
which controls the family-wise error over all pairs:

* **JurisTCU** (150 queries, the shared 3,022-document subset): nDCG@10, overall and by query group
  (G1 real keyword queries, G2 synthetic keyword queries, G3 synthetic questions); the unit of inference
  is the source summary (``source_key``).
* **IRPF questions** (``irpf/questions.jsonl``, real tax questions whose official answers cite law
  articles): recall@10 of the cited articles. The acts of ``irpf/laws.jsonl`` are cut with the
  dispositivo chunking (``build_task(..., chunking="dispositivo")``); an *article* is every chunk whose
  ``unit`` names that article (``"art. 6 > § 1"``, ``"anexo > art. 35 > I"``); a question's relevant
  chunks are the chunks of each (act, article) its answer cites. Questions citing no article are left
  out (one, citing a whole act). The unit of inference is the question.
* **ANEEL self-retrieval** (the default ``aneel_taesa`` task): hit@1, each query's own chunk excluded,
  unit of inference the document.

Writes, under ``--out``: ``runs/<task>/<system>.trec`` (and the IRPF ``queries.jsonl``/``qrels.tsv``),
``<task>-leaderboard.md`` / ``.json`` (the leaderboard's own markdown and JSON), ``times.json`` and
``summary.md`` (every table, and which systems beat BM25 with the family-wise interval above 0).
Dense embeddings come from the embedding cache when present (a second run encodes nothing).

Run by hand (not a test)::

    python benchmarks/bench_baselines_proof.py --data-dir ../shared/data --out proof/
    python benchmarks/bench_baselines_proof.py --tasks juristcu --systems bm25 bm25-pt tfidf --out proof/

The JurisTCU leaderboard is then also one command on the written runs::

    ragcov leaderboard proof/runs/juristcu/*.trec --dataset juristcu --data-dir ../shared/data \\
        --metric ndcg@10 --by group
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import pandas as pd

TASKS = ("juristcu", "irpf", "aneel")
METRICS = {"juristcu": "ndcg@10", "irpf": "r@10", "aneel": "hit@1"}
#: JurisTCU is grouped by query group.
BY = {"juristcu": "group", "irpf": None, "aneel": None}
_ARTICLE = re.compile(r"(?:^|> )art\. ([0-9]+(?:-[A-Z])?)")


def default_systems() -> list[str]:
    from ragcov_data.baselines.registry import RETRIEVER_NAMES

    return [n for n in RETRIEVER_NAMES if n != "dense"]


# ---- tasks ----------------------------------------------------------------------------------------------
def juristcu_task(data_dir: Path) -> dict:
    import ragcov_data

    ds = ragcov_data.load_dataset("juristcu", data_dir=str(data_dir))
    return {"task": ds, "corpus": ds["corpus"].to_pandas(), "queries": ds["queries"].to_pandas(),
            "exclude_self": False}


def aneel_task(data_dir: Path) -> dict:
    import ragcov_data

    ds = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir))
    return {"task": ds, "corpus": ds["corpus"].to_pandas(), "queries": ds["queries"].to_pandas(),
            "exclude_self": True}


def article_of(unit: str) -> str | None:
    """The article a dispositivo ``unit`` label belongs to: ``"anexo > art. 35 > I"`` -> ``"35"``."""
    m = _ARTICLE.search(unit or "")
    return m.group(1) if m else None


def irpf_task(data_dir: Path) -> dict:
    """Chunks of the IRPF acts (dispositivo), the questions citing articles, and article-level qrels."""
    from ragcov_data.task import build_task

    built = build_task(str(data_dir / "irpf" / "laws.jsonl"), chunking="dispositivo", dataset="irpf")
    corpus = built["corpus"]
    corpus = corpus.to_pandas() if hasattr(corpus, "to_pandas") else pd.DataFrame(corpus)
    corpus = corpus.copy()
    corpus["article"] = corpus["unit"].map(article_of)
    chunks_of = corpus.dropna(subset=["article"]).groupby(["doc_id", "article"])["_id"].apply(list).to_dict()
    rows, qrels, uncited = [], [], []
    with open(data_dir / "irpf" / "questions.jsonl", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            cited = {(r["doc_id"], str(r["article"])) for r in q["references"] if r["article"]}
            found = [key for key in sorted(cited) if key in chunks_of]
            uncited.extend(key for key in sorted(cited) if key not in chunks_of)
            if not found:
                continue
            rows.append({"_id": q["qid"], "text": q["question"], "n_articles": len(found)})
            qrels += [{"query-id": q["qid"], "corpus-id": cid, "score": 1} for key in found for cid in chunks_of[key]]
    queries, qrels = pd.DataFrame(rows), pd.DataFrame(qrels).drop_duplicates(["query-id", "corpus-id"])
    return {"task": {"corpus": corpus[["_id", "doc_id", "text", "unit"]], "queries": queries, "qrels": qrels},
            "corpus": corpus, "queries": queries, "exclude_self": False, "uncited": uncited}


LOADERS = {"juristcu": juristcu_task, "irpf": irpf_task, "aneel": aneel_task}


# ---- runs and leaderboards ------------------------------------------------------------------------------
def make_runs(name: str, t: dict, systems: list[str], out: Path, show: bool) -> tuple[dict, dict]:
    from ragcov_data.baselines import save_run
    from ragcov_data.baselines.registry import make_retriever

    folder = out / "runs" / name
    folder.mkdir(parents=True, exist_ok=True)
    runs, times = {}, {}
    for system in systems:
        t0 = time.perf_counter()
        r = make_retriever(system, show_progress=show)
        r.index(t["corpus"][["_id", "text"]])
        run = r.search(t["queries"], k=10, exclude_self=t["exclude_self"])
        times[system] = round(time.perf_counter() - t0, 2)
        save_run(run, folder / f"{system}.trec")
        runs[system] = run
        print(f"{name}: {system} in {times[system]:.1f} s", file=sys.stderr, flush=True)
    return runs, times


def beats_bm25(lb, base: str = "bm25", group: str = "__all__") -> dict[str, list]:
    """Each system against ``base`` in the family: interval above 0, estimate above only, or not above."""
    pairs = lb.pairs[lb.pairs["group"] == group]
    out: dict[str, list] = {"beats": [], "looks_better": [], "not_better": []}
    for p in pairs.itertuples(index=False):
        if base not in (p.a, p.b):
            continue
        other, sign = (p.a, 1) if p.b == base else (p.b, -1)
        diff, low, high = sign * p.diff, *(sorted((sign * p.low, sign * p.high)))
        row = (other, round(diff, 4), round(low, 4), round(high, 4))
        key = "beats" if low > 0 else ("looks_better" if diff > 0 else "not_better")
        out[key].append(row)
    return out


def sentence(b: dict, base: str = "BM25") -> str:
    fmt = lambda rows: ", ".join(f"{n} ({d:+.3f}, [{lo:+.3f}, {hi:+.3f}])" for n, d, lo, hi in rows)  # noqa: E731
    s = (f"Beat {base} with the family-wise interval of the difference above 0: "
         + (fmt(b["beats"]) if b["beats"] else "none") + ". ")
    s += ("Only look better (estimate above, interval includes 0): "
          + (fmt(b["looks_better"]) if b["looks_better"] else "none") + ".")
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    ap.add_argument("--systems", nargs="+", default=None, help="registry names (default: every baseline)")
    ap.add_argument("--n-resamples", type=int, default=5000)
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args(argv)
    from ragcov_data.eval import leaderboard

    systems = args.systems or default_systems()
    args.out.mkdir(parents=True, exist_ok=True)
    times_path = args.out / "times.json"
    all_times = json.loads(times_path.read_text()) if times_path.exists() else {}
    summary = [f"# Baselines, family-wise ({len(systems)} systems)\n"]
    for name in args.tasks:
        t = LOADERS[name](args.data_dir)
        if name == "irpf":
            folder = args.out / "runs" / "irpf"
            folder.mkdir(parents=True, exist_ok=True)
            t["queries"].to_json(folder / "queries.jsonl", orient="records", lines=True, force_ascii=False)
            t["task"]["qrels"].to_csv(folder / "qrels.tsv", sep="\t", index=False)
            print(f"irpf: {len(t['corpus'])} chunks, {len(t['queries'])} questions citing articles, "
                  f"{len(t['task']['qrels'])} relevant chunks; cited articles not found in the chunks: "
                  f"{len(t['uncited'])}", file=sys.stderr)
        runs, times = make_runs(name, t, systems, args.out, args.progress)
        all_times[name] = times
        lb = leaderboard(runs, t["task"], metric=METRICS[name], by=BY[name], n_resamples=args.n_resamples, seed=0)
        lb.to_markdown(args.out / f"{name}-leaderboard.md")
        lb.to_json(args.out / f"{name}-leaderboard.json")
        b = beats_bm25(lb)
        summary += [f"## {name}: {METRICS[name]}" + (f" (by {BY[name]})" if BY[name] else ""), "",
                    lb.to_markdown(), "", sentence(b), ""]
        if BY[name]:
            for g in sorted(set(lb.systems["group"]) - {"__all__"}):
                summary += [f"{g}: " + sentence(beats_bm25(lb, group=g)), ""]
        (args.out / f"{name}-vs-bm25.json").write_text(json.dumps(b, indent=1))
    times_path.write_text(json.dumps(all_times, indent=1))
    (args.out / "summary.md").write_text("\n".join(summary))
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
