"""The proof, family-wise: one leaderboard of every baseline on JurisTCU, the IRPF questions and ANEEL.

Every registry baseline (:mod:`ragcov_data.baselines.registry`; ``dense`` is ``use-multilingual`` under
another name and is left out) is run on three tasks and ranked by :func:`ragcov_data.eval.leaderboard`,
which controls the family-wise error over all pairs:

* **JurisTCU** (150 queries, the shared 3,022-document subset): nDCG@10, overall and by query group
  (G1 real keyword queries, G2 synthetic keyword queries, G3 synthetic questions); the unit of inference
  is the source summary (``source_key``).
* **IRPF questions** (``irpf/questions.jsonl``, real tax questions whose official answers cite law
  articles): recall@10 of the cited provisions on the landed cited-questions task with article chunks
  (``build_cited_task(..., chunking="article")``, as ``load_dataset("irpf")`` and the main job build it);
  the unit of inference is the question's topic when the ICC of BM25's recall by topic exceeds 0.05 (the
  main job's rule), else the question.
* **ANEEL self-retrieval** (the default ``aneel_taesa`` task): hit@1, each query's own chunk excluded,
  unit of inference the document.

Writes, under ``--out``: ``runs/<task>/<system>.trec``,
``<task>-leaderboard.md`` / ``.json`` / ``.html`` (the leaderboard's own markdown, JSON and page),
``report.html`` (the three answers, linking each page), ``times.json`` and
``<task>-summary.md`` / ``summary.md`` (the tables, and which systems beat BM25 with the family-wise
interval above 0). ``--reuse-runs`` reads runs already written instead of running them again.
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
import sys
import time
from pathlib import Path

import pandas as pd

TASKS = ("juristcu", "irpf", "aneel")
METRICS = {"juristcu": "ndcg@10", "irpf": "recall@10", "aneel": "hit@1"}
#: JurisTCU is grouped by query group.
BY = {"juristcu": "group", "irpf": None, "aneel": None}


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


def irpf_task(data_dir: Path) -> dict:
    """The real-questions task as ``load_dataset("irpf")`` builds it with article chunks (the main job's IRPF
    leaderboard): the seven acts cut by artigo, the questions whose answers cite a resolved provision."""
    import warnings

    from ragcov_data.loaders.cited_questions import build_cited_task

    folder = data_dir / "irpf"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task = build_cited_task(folder / "laws.jsonl", folder / "questions.jsonl", dataset="irpf",
                                config_name="article", chunking="article")
    corpus, queries = _pandas(task["corpus"]), _pandas(task["queries"])
    return {"task": task, "corpus": corpus, "queries": queries, "exclude_self": False,
            "notes": [str(w.message) for w in caught]}


def _pandas(x):
    return x.to_pandas() if hasattr(x, "to_pandas") else x


def irpf_leaderboard(runs: dict, t: dict, n_resamples: int, icc_threshold: float = 0.05):
    """recall@10 of the cited provisions per question (:func:`ragcov_data.eval.comparisons.cited.per_query_values`), ranked
    as one family clustered as the main job's chunking study decides: by topic when the ICC of BM25's recall by
    topic exceeds ``icc_threshold``, else by question."""
    from ragcov_data.eval import design_effect
    from ragcov_data.eval.comparisons.cited import leaderboard_from_values, per_query_values

    table, order = {}, None
    for name, run in runs.items():
        v = per_query_values(run, t["task"], metrics=(METRICS["irpf"],))
        order = list(v.index) if order is None else order
        table[name] = v.loc[order, METRICS["irpf"]]
    table = pd.DataFrame(table)
    q = t["queries"].assign(_id=t["queries"]["_id"].astype(str)).set_index("_id").loc[order]
    topics = [tp if isinstance(tp, str) and tp else i for i, tp in zip(order, q["topic"])]
    ref = table["bm25"] if "bm25" in table else table.iloc[:, 0]
    icc = float(design_effect(ref.to_numpy(dtype=float), topics).icc)
    by_topic = icc > icc_threshold
    print(f"irpf: ICC of {ref.name}'s {METRICS['irpf']} by topic {icc:+.3f} over {len(set(topics))} topics: unit "
          f"{'topic' if by_topic else 'question'}", file=sys.stderr)
    return leaderboard_from_values(table, metric=METRICS["irpf"], clusters=topics if by_topic else None,
                                   cluster_name="topic" if by_topic else "question", n_resamples=n_resamples, seed=0)


LOADERS = {"juristcu": juristcu_task, "irpf": irpf_task, "aneel": aneel_task}


# ---- runs and leaderboards ------------------------------------------------------------------------------
def make_runs(name: str, t: dict, systems: list[str], out: Path, show: bool, reuse: bool = False) -> tuple[dict, dict]:
    from ragcov_data.baselines import save_run
    from ragcov_data.execution.engine import run_task
    from ragcov_data.baselines.registry import make_retriever

    folder = out / "runs" / name
    folder.mkdir(parents=True, exist_ok=True)
    runs, times = {}, {}
    for system in systems:
        if reuse and (folder / f"{system}.trec").exists():
            runs[system] = str(folder / f"{system}.trec")
            continue
        t0 = time.perf_counter()
        run = run_task(make_retriever(system, show_progress=show), {"corpus": t["corpus"][["_id", "text"]],
                       "queries": t["queries"]}, k=10, exclude_self=t["exclude_self"], show_progress=None)
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
        row = (other, float(diff), float(low), float(high))  # rounded once, where printed
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


TITLES = {"juristcu": "JurisTCU — nDCG@10 by query group (unit: source summary)",
          "irpf": "IRPF real questions — recall@10 of the cited provisions (article chunks)",
          "aneel": "ANEEL self-retrieval — hit@1 (unit: document)"}


def report_page(sentences: list[tuple[str, str]], n_systems: int) -> str:
    """The benchmark report of the baselines: per task, the answer (who beats BM25 family-wise) and a link to
    the task's leaderboard page (``<task>-leaderboard.html``: tiers, rank intervals, every pair)."""
    from html import escape

    items = "".join(f'<section><h2>{escape(TITLES[t])}</h2><p>{escape(s)}</p>'
                    f'<p><a href="{t}-leaderboard.html">the family-wise leaderboard</a> · '
                    f'<a href="{t}-leaderboard.md">markdown</a> · '
                    f'<a href="{t}-leaderboard.json">JSON</a></p></section>'
                    for t, s in sentences)
    return ("<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>Baselines, family-wise</title>"
            "<style>body{font-family:system-ui,sans-serif;margin:1.5rem;max-width:60rem;color:#222}"
            "h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:1.5rem}</style>"
            f"<h1>Baselines, family-wise: {n_systems} systems on {len(sentences)} tasks</h1>"
            "<p>Each task's systems form one family: every pair gets a simultaneous 95% interval, a pair is "
            "separable exactly when its interval excludes 0, and tiers and rank intervals follow those decisions.</p>"
            f"{items}</html>")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    ap.add_argument("--systems", nargs="+", default=None, help="registry names (default: every baseline)")
    ap.add_argument("--n-resamples", type=int, default=5000)
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("--reuse-runs", action="store_true",
                    help="read runs already written under --out instead of running")
    args = ap.parse_args(argv)
    from ragcov_data.eval import leaderboard

    systems = args.systems or default_systems()
    args.out.mkdir(parents=True, exist_ok=True)
    times_path = args.out / "times.json"
    all_times = json.loads(times_path.read_text()) if times_path.exists() else {}
    summary = [f"# Baselines, family-wise ({len(systems)} systems)\n"]
    sentences: list[tuple[str, str]] = []
    for name in args.tasks:
        t = LOADERS[name](args.data_dir)
        if name == "irpf":
            print(f"irpf: {len(t['corpus'])} article chunks, {len(t['queries'])} questions; "
                  + " ".join(t["notes"]), file=sys.stderr)
        runs, times = make_runs(name, t, systems, args.out, args.progress, args.reuse_runs)
        all_times[name] = {**all_times.get(name, {}), **times}
        if name == "irpf":
            lb = irpf_leaderboard(runs, t, args.n_resamples)
        else:
            lb = leaderboard(runs, t["task"], metric=METRICS[name], by=BY[name], n_resamples=args.n_resamples,
                             seed=0)
        lb.to_markdown(args.out / f"{name}-leaderboard.md")
        lb.to_json(args.out / f"{name}-leaderboard.json")
        lb.to_html(args.out / f"{name}-leaderboard.html")
        b = beats_bm25(lb)
        section = [f"## {name}: {METRICS[name]}" + (f" (by {BY[name]})" if BY[name] else ""), "",
                   lb.to_markdown(), "", sentence(b), ""]
        if BY[name]:
            for g in sorted(set(lb.systems["group"]) - {"__all__"}):
                section += [f"{g}: " + sentence(beats_bm25(lb, group=g)), ""]
        (args.out / f"{name}-summary.md").write_text("\n".join(section))
        summary += section
        (args.out / f"{name}-vs-bm25.json").write_text(json.dumps(b, indent=1))
        sentences.append((name, sentence(b)))
    times_path.write_text(json.dumps(all_times, indent=1))
    (args.out / "report.html").write_text(report_page(sentences, len(systems)), encoding="utf-8")
    (args.out / "summary.md").write_text("\n".join(summary))
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
