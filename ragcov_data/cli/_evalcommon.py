"""Task loading and options shared by ``ragcov eval`` and ``ragcov compare``."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pandas as pd

from ragcov_data.errors import InputFileError, RagcovError

_SUFFIXES = (".parquet", ".jsonl", ".csv", ".tsv")


def _read_table(path: Path) -> pd.DataFrame:
    try:
        if path.suffix == ".parquet":
            df = pd.read_parquet(path)
        elif path.suffix == ".jsonl":
            df = pd.read_json(path, lines=True, dtype=False)
        else:
            df = pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",", dtype=str)
    except (ValueError, OSError) as exc:
        raise InputFileError(f"cannot read {str(path)!r}: {exc}") from exc
    for col in ("_id", "doc_id", "chunk_id", "query-id", "corpus-id"):
        if col in df.columns:
            df[col] = df[col].astype(str)
    if "score" in df.columns and path.name.startswith("qrels"):
        df["score"] = pd.to_numeric(df["score"])
    if "chunk_index" in df.columns:
        df["chunk_index"] = pd.to_numeric(df["chunk_index"])
    return df


def load_task(args: argparse.Namespace) -> Any:
    """The task: ``queries``/``qrels`` tables in ``--data-dir``, else ``load_dataset(--dataset, ...)``."""
    d = Path(args.data_dir)
    if not d.is_dir():
        raise InputFileError(f"--data-dir {str(d)!r} is not a folder.")
    found = {}
    for split in ("corpus", "queries", "qrels"):
        for suf in _SUFFIXES:
            if (d / f"{split}{suf}").is_file():
                found[split] = d / f"{split}{suf}"
                break
    if "queries" in found and "qrels" in found:
        return {split: _read_table(p) for split, p in found.items()}
    import ragcov_data

    config: dict[str, Any] = {"data_dir": str(d)}
    if args.chunk_words is not None:
        config["chunk_words"] = args.chunk_words
    return ragcov_data.load_dataset(args.dataset, show_progress=False, **config)


def add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", required=True,
                   help="folder with queries/qrels tables (.parquet/.jsonl/.csv/.tsv), or the source data of --dataset")
    p.add_argument("--dataset", default="aneel_taesa", help="registered dataset name (default: aneel_taesa)")
    p.add_argument("--chunk-words", type=int, default=None, help="chunk size in words (self-retrieval datasets)")
    p.add_argument("--metric", default="hit@1", help="hit@k, ndcg@k, p@k, r@k, mrr@k (default: hit@1)")
    p.add_argument("--tie-policy", default="first", choices=["first", "pessimistic", "expected"],
                   help="ties with the rank-1 score, hit@1 only (default: first)")
    p.add_argument("--relevance-threshold", type=int, default=1, help="minimum relevant grade (default: 1)")
    p.add_argument("--cluster", default=None, help="queries column of the sampled unit (default: doc_id, else query)")
    p.add_argument("--by", default=None, help="queries column: estimates per group plus overall")
    p.add_argument("--methods", default=None, help="comma-separated interval methods (default: all)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--n-resamples", type=int, default=5000, help="bootstrap replicates (default: 5000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="also write the result as JSON")


def methods_arg(text: str | None) -> list[str] | None:
    if text is None:
        return None
    out = [m.strip() for m in text.split(",") if m.strip()]
    if not out:
        raise RagcovError("--methods is empty; give comma-separated names or omit it for all methods.")
    return out
