"""Wall time of every baseline (registry names), texts/s of the dense models, and hit@1 on ANEEL self-retrieval.

The task: the full-text ANEEL sample cut into 100-word non-overlapping chunks (a final chunk under
20 words merged into the previous one), one query per chunk (its first 20 words), documents with a
single chunk excluded, each query's own chunk excluded from retrieval. hit@1 = the top-1 chunk (ties
broken by corpus order) belongs to the query's document; micro = share of queries, macro = mean over
documents of each document's share.

Wall time is index + search, with a cold embedding cache (a fresh temporary folder) unless
``--cache-dir`` is given, so dense timings include encoding every text once; ``texts/s`` is the number
of texts encoded (corpus + queries) over that time. With ``--warm`` each dense or hybrid baseline runs a
second time on the same cache (``warm s``): the cache makes it (nearly) free.

``--task juristcu`` times the same baselines on JurisTCU (3,022 documents, 150 queries; no hit@1 there:
its quality figures come from ``bench_baselines_proof.py``).

Run by hand (not a test), e.g.::

    python benchmarks/bench_baselines.py --data-dir ../shared/data
    python benchmarks/bench_baselines.py --retrievers e5-small --subset-docs 40 --seed 0
    python benchmarks/bench_baselines.py --task juristcu --retrievers bm25,bm25-pt,wordllama --warm

``--subset-docs N`` restricts the task to N documents drawn at random (seeded) from those with two or
more chunks, for slow models; compare models on the same subset only.
"""
from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
DENSE_MODELS = ("minilm", "use-multilingual", "e5-small", "wordllama")


def build_task(data_dir: Path, task: str = "aneel") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(corpus, queries) of the default self-retrieval task (``chunks-100``, queries of 20 words), or JurisTCU."""
    import ragcov_data

    ds = ragcov_data.load_dataset("aneel_taesa" if task == "aneel" else "juristcu", data_dir=str(data_dir))
    return ds["corpus"].to_pandas(), ds["queries"].to_pandas()


def subset(corpus: pd.DataFrame, queries: pd.DataFrame, n_docs: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    docs = np.sort(corpus["doc_id"].unique())
    keep = set(np.random.default_rng(seed).choice(docs, size=min(n_docs, len(docs)), replace=False))
    return corpus[corpus["doc_id"].isin(keep)].reset_index(drop=True), queries[queries["doc_id"].isin(keep)].reset_index(drop=True)


def hit_at_1(run: pd.DataFrame, corpus: pd.DataFrame, queries: pd.DataFrame) -> dict[str, float]:
    """micro / macro hit@1 (trec_eval tie order: equal scores by id descending) and tie share."""
    doc_of = dict(zip(corpus["_id"], corpus["doc_id"]))
    top = run[run["rank"] == 1].set_index("query-id")
    q = queries[["_id", "doc_id"]].copy()
    q["top"] = q["_id"].map(top["corpus-id"]).map(doc_of)
    q["hit"] = (q["top"] == q["doc_id"]).astype(float)  # no candidate -> miss
    # a query's top score is tied if another row shares it (the run keeps every chunk tied with the top)
    from ragcov_data.ties import tied

    top_score = run["query-id"].map(top["score"]).to_numpy()
    n_tied = pd.Series(tied(run["score"].to_numpy(), top_score)).groupby(run["query-id"].to_numpy()).sum()
    return {
        "micro": q["hit"].mean(),
        "macro": q.groupby("doc_id")["hit"].mean().mean(),
        "tied_top": float((q["_id"].map(n_tied).fillna(0) > 1).mean()),
    }


def make(name: str, cache_dir: str):
    """A baseline by registry name (any other name: a dense model), its embeddings cached in ``cache_dir``."""
    from ragcov_data.baselines.registry import RETRIEVERS, make_retriever

    if name not in RETRIEVERS:
        from ragcov_data.baselines.dense import Dense

        return Dense(name, cache_dir=cache_dir, show_progress=False)
    kw = {"cache_dir": cache_dir} if "cache_dir" in RETRIEVERS[name].options else {}
    return make_retriever(name, show_progress=False, **kw)


def default_retrievers() -> str:
    from ragcov_data.baselines.registry import RETRIEVER_NAMES

    return ",".join(n for n in RETRIEVER_NAMES if n != "dense")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", default=os.environ.get("RAGCOV_DATA_DIR") or str(REPO.parent / "shared" / "data"))
    p.add_argument("--task", choices=("aneel", "juristcu"), default="aneel")
    p.add_argument("--retrievers", default=None, help="comma-separated registry names (default: every baseline)")
    p.add_argument("--warm", action="store_true", help="run dense and hybrid baselines again on the same cache")
    p.add_argument("--subset-docs", type=int, default=None, help="random seeded subset of documents (for slow models)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--cache-dir", default=None, help="embedding cache (default: fresh temporary folder, i.e. cold)")
    p.add_argument("--json", default=None, help="also write the results table to this JSON file")
    args = p.parse_args(argv)

    corpus, queries = build_task(Path(args.data_dir), args.task)
    source = f"ragcov_data.load_dataset({'aneel_taesa' if args.task == 'aneel' else 'juristcu'!r})"
    self_retrieval = args.task == "aneel"
    if args.subset_docs:
        corpus, queries = subset(corpus, queries, args.subset_docs, args.seed)
    n_docs = corpus["doc_id"].nunique() if "doc_id" in corpus else len(corpus)
    print(f"task: {source}; {len(corpus)} chunks, {len(queries)} queries, {n_docs} documents"
          + (f" (subset: {args.subset_docs} documents, seed {args.seed})" if args.subset_docs else ""))
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load avg {os.getloadavg()[0]:.2f} at start")
    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="ragcov-bench-emb-")
    rows = []
    from ragcov_data.baselines.registry import RETRIEVERS

    for name in [r.strip() for r in (args.retrievers or default_retrievers()).split(",") if r.strip()]:
        dense = name not in RETRIEVERS or RETRIEVERS[name].dense
        t0 = time.perf_counter()
        r = make(name, cache_dir)
        r.index(corpus)
        t1 = time.perf_counter()
        run = r.search(queries, k=args.k, exclude_self=self_retrieval, show_progress=False)
        t2 = time.perf_counter()
        if self_retrieval and (run["query-id"] == run["corpus-id"]).any():
            raise SystemExit(f"{name}: exclude_self violated")
        h = hit_at_1(run, corpus, queries) if self_retrieval else {"micro": float("nan"), "macro": float("nan"),
                                                                  "tied_top": float("nan")}
        n_texts = len(set(corpus["text"])) + len(set(queries["text"]))
        warm = float("nan")
        if args.warm and dense:
            t3 = time.perf_counter()
            make(name, cache_dir).index(corpus).search(queries, k=args.k, exclude_self=self_retrieval, show_progress=False)
            warm = time.perf_counter() - t3
        rows.append({
            "retriever": name, "hit@1 micro": h["micro"], "hit@1 macro": h["macro"], "top tied": h["tied_top"],
            "index s": t1 - t0, "search s": t2 - t1, "total s": t2 - t0, "warm s": warm,
            "texts/s": n_texts / (t2 - t0) if dense and name in DENSE_MODELS else float("nan"),
            "load avg": os.getloadavg()[0],
        })
        print(f"# {name}: " + ", ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    table = pd.DataFrame(rows)
    print()
    print(table.to_markdown(index=False, floatfmt=".4f") if _has_tabulate() else table.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    print(f"\ncommand: python {shlex.join(['benchmarks/bench_baselines.py', *(argv if argv is not None else sys.argv[1:])])}")
    if args.json:
        Path(args.json).write_text(table.to_json(orient="records", indent=1))
    return 0


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main())
