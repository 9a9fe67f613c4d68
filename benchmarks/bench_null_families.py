"""Family-wise false-positive rate of the leaderboard's pair tests on null families built from real outcomes.

Run by hand:  python benchmarks/bench_null_families.py --data-dir ../shared/data [--n-families 2000]
              [--n-resamples 4999] [--level 0.95] [--seed 0]

Five real retrievers (BM25 okapi, BM25 lucene, BM25+, TF-IDF sublinear, TF-IDF raw tf; top 10) are run on

- the ANEEL self-retrieval task (chunks-100, 2,312 queries in 147 documents, own chunk excluded; the
  unit is the document): hit@1 and nDCG@10, micro (mean over queries, CR2) and macro (mean of document
  means, t);
- JurisTCU (150 queries, 3,022-document subset; the unit is ``source_key``, 100 clusters): nDCG@10 micro.

Each null family permutes, independently in every cluster, which system's per-query results the cluster
receives (:func:`ragcov_data.eval.null_family_rates`): the queries of a cluster keep their joint outcomes,
but no system is better than another in expectation, so any pair declared different is a false positive.
For each setting the script prints the share of families with at least one false positive for the
Holm-adjusted p-values, the simultaneous max-|t| intervals, the max-|t| adjusted p-values and the
unadjusted per-pair tests, each +- 1.96 Monte-Carlo SE, and the nominal level. ``--n-resamples`` is the
B of the cluster bootstrap inside each family (the simultaneous intervals and max-|t|).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, peak_rss_mb, table  # noqa: E402

import ragcov_data  # noqa: E402
from ragcov_data.baselines import BM25, TfIdf  # noqa: E402
from ragcov_data.eval import null_family_rates  # noqa: E402
from ragcov_data.eval.metrics import per_query  # noqa: E402

RETRIEVERS = {
    "bm25": lambda: BM25(show_progress=False),
    "bm25-lucene": lambda: BM25(variant="lucene", show_progress=False),
    "bm25+": lambda: BM25(variant="bm25+", show_progress=False),
    "tfidf": lambda: TfIdf(show_progress=False),
    "tfidf-raw": lambda: TfIdf(sublinear_tf=False, show_progress=False),
}
RATES = ("holm", "simultaneous", "maxt", "unadjusted")


def outcomes(ds, metrics: tuple[str, ...], exclude_self: bool) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
    """Per metric, the (5, N) matrix of per-query values of the five retrievers; and the queries."""
    queries, qrels = ds["queries"].to_pandas(), ds["qrels"].to_pandas()
    qids = queries["_id"].astype(str).to_numpy()
    runs = [make().index(ds["corpus"]).search(ds["queries"], k=10, exclude_self=exclude_self, show_progress=False)
            for make in RETRIEVERS.values()]
    return {m: np.array([per_query(r, qrels, m, query_ids=qids).to_numpy(float) for r in runs])
            for m in metrics}, queries


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("RAGCOV_DATA_DIR", "../shared/data"))
    ap.add_argument("--n-families", type=int, default=2000)
    ap.add_argument("--n-resamples", type=int, default=4999)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"$ {command_line()}")

    aneel = ragcov_data.load_dataset("aneel_taesa", data_dir=args.data_dir, chunk_words=100, show_progress=False)
    vals, q = outcomes(aneel, ("hit@1", "ndcg@10"), exclude_self=True)
    settings = [(f"ANEEL {m} {est}", vals[m], q["doc_id"].to_numpy(), est)
                for m in ("hit@1", "ndcg@10") for est in ("micro", "macro")]
    jt_dir = Path(args.data_dir) / "juristcu"
    if jt_dir.is_dir():
        jt = ragcov_data.load_dataset("juristcu", data_dir=args.data_dir, show_progress=False)
        jvals, jq = outcomes(jt, ("ndcg@10",), exclude_self=False)
        settings.append(("JurisTCU ndcg@10 micro", jvals["ndcg@10"], jq["source_key"].to_numpy(), "micro"))
    else:
        print(f"no {jt_dir}: JurisTCU skipped")

    print(f"{len(RETRIEVERS)} systems ({', '.join(RETRIEVERS)}), 10 pairs a family; {args.n_families} null families "
          f"per setting, B = {args.n_resamples} in each; level {args.level} (nominal FWER {1 - args.level:.2f}); "
          f"margins are 1.96 Monte-Carlo SE")
    rows = []
    for label, V, clusters, est in settings:
        t0 = time.perf_counter()
        r = null_family_rates(V, clusters, n_families=args.n_families, level=args.level,
                              n_resamples=args.n_resamples, estimator=est, seed=args.seed)
        secs = time.perf_counter() - t0
        means = " / ".join(f"{m:.3f}" for m in V.mean(1))
        row = {"setting": label, "N": r["n_queries"], "K": r["n_clusters"], "system means": means}
        row.update({k: f"{r[k]:.3f} ± {1.96 * r[k + '_se']:.3f}" for k in RATES})
        row.update({"nominal": f"{r['nominal']:.2f}", "time": f"{secs:.1f} s"})
        rows.append(row)
        print(f"  {label}: " + ", ".join(f"{k} {row[k]}" for k in RATES) + f" (nominal {row['nominal']}; {secs:.1f} s)",
              flush=True)
    print()
    print(table(rows))
    print(f"\npeak RSS {peak_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()
