"""Cost of the budgeted measures of ``ragcov chunking --dataset irpf`` (target: they add < 2 s).

    python benchmarks/bench_budget.py [--data-dir ../shared/data] [--reps 3] [--table]

On the shared IRPF questions: 5 chunkings (words-50/100/200, dispositivo, article) x 2 retrievers (bm25,
bm25-pt), each run retrieved as deep as the study retrieves it (enough of the chunking's smallest chunks to
fill 2,000 words). Times, best of ``--reps``, in the same run:

- the peer: the provision-level recall@10 and hit@10 pass over the 10 runs (what the family scored before
  budgets);
- the budgeted pass: every budgeted measure (span_recall, the headline; recall, touched; precision, iou, hit and
  the coverage curve covered_any/50/90/whole) within 500, 1,000 and 2,000 words (27 measures) over the same 10 runs;

and prints the ratio and the seconds the budgeted pass adds. ``--table`` also prints the mean text share within
each budget per system (the numbers the study's headline families rank). Prints the command first.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir  # noqa: E402

CHUNKINGS = {"words-50": {"chunking": "words", "chunk_words": 50},
             "words-100": {"chunking": "words", "chunk_words": 100},
             "words-200": {"chunking": "words", "chunk_words": 200},
             "dispositivo": {"chunking": "dispositivo"}, "article": {"chunking": "article"}}
RETRIEVERS = ("bm25", "bm25-pt")
BUDGETS = (500, 1000, 2000)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=default_data_dir())
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--table", action="store_true", help="also print mean text share within each budget per system")
    args = p.parse_args(argv)
    print(f"$ {command_line()}")
    from ragcov_data.baselines.registry import make_retriever
    from ragcov_data.execution.engine import run_task
    from ragcov_data.eval.comparisons.cited import _budget_depth, per_query_values
    from ragcov_data.loaders.cited_questions import IRPF_FILES, build_cited_task, irpf_dir

    folder = irpf_dir(args.data_dir)
    systems = {}
    for cname, kw in CHUNKINGS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            task = build_cited_task(folder / IRPF_FILES["acts"], folder / IRPF_FILES["questions"], dataset="irpf",
                                    **kw)
        depth = max(10, _budget_depth(task.corpus, max(BUDGETS)))
        for rname in RETRIEVERS:
            run = run_task(make_retriever(rname, show_progress=False), task, k=depth, exclude_self=False,
                           queries=task.queries[["_id", "text"]])
            systems[f"{cname}/{rname}"] = (task, run, depth)
    rank_metrics = ["recall@10", "hit@10"]
    from ragcov_data.eval.outcomes.budget import BUDGET_NAMES

    budget_metrics = [f"{m}@{b}w" for b in BUDGETS for m in BUDGET_NAMES]

    def one_pass(metrics: list[str]) -> float:
        t = time.perf_counter()
        for task, run, _ in systems.values():
            per_query_values(run, task, metrics=metrics)
        return time.perf_counter() - t

    best_rank = best_budget = float("inf")
    for _ in range(args.reps):
        best_rank = min(best_rank, one_pass(rank_metrics))
        best_budget = min(best_budget, one_pass(budget_metrics))
    rows = sum(len(run) for _, run, _ in systems.values())
    print(f"{len(systems)} systems ({len(CHUNKINGS)} chunkings x {len(RETRIEVERS)} retrievers), "
          f"{rows:,} run rows (depths {sorted({d for *_, d in systems.values()})}), 174 questions")
    print(f"  peer, recall@10 + hit@10 pass:             {best_rank:.3f} s (best of {args.reps})")
    print(f"  budgeted pass, {len(budget_metrics) // len(BUDGETS)} measures x {len(BUDGETS)} budgets:    {best_budget:.3f} s "
          f"(ratio {best_budget / best_rank:.1f}x the peer; adds {best_budget:.2f} s, target < 2 s)")
    if args.table:
        print("\nmean text share within each budget (recall@10 = unequal contexts):")
        print(f"  {'system':<22} {'recall@10':>9} " + " ".join(f"{f'@{b}w':>8}" for b in BUDGETS))
        for name, (task, run, _) in systems.items():
            v = per_query_values(run, task, metrics=["recall@10", *[f"span_recall@{b}w" for b in BUDGETS]]).mean()
            print(f"  {name:<22} {v.iloc[0]:>9.3f} " + " ".join(f"{x:>8.3f}" for x in v.iloc[1:]))
    return 0 if best_budget < 2.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
