"""Helpers shared by the coverage / plan / report / benchmark verbs."""
from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from ragcov_data.errors import InputFileError, RagcovError


def int_list(text: str) -> list[int]:
    """Parse ``"5,10,20"`` into ``[5, 10, 20]`` (argparse type)."""
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers such as 5,10,20; got {text!r}")
    if not out:
        raise argparse.ArgumentTypeError("expected at least one integer")
    return out


def str_list(text: str) -> list[str]:
    """Parse ``"a,b"`` into ``["a", "b"]`` (argparse type)."""
    return [x.strip() for x in text.split(",") if x.strip()]


def read_population(path: str, twin: bool = False, seed: int = 0) -> pd.DataFrame:
    """Read a population table (parquet, CSV, TSV or JSON lines), or simulate the twin."""
    if twin:
        from ragcov_data.eval.twin import simulate_population

        return simulate_population(seed=seed)
    if path is None:
        raise RagcovError("give a population file (per-query outcomes or per-document counts) or --twin.")
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"population file {str(p)!r} not found; pass a parquet/CSV/JSONL table or --twin.")
    try:
        if p.suffix == ".parquet":
            return pd.read_parquet(p)
        if p.suffix in (".jsonl", ".json"):
            return pd.read_json(p, lines=p.suffix == ".jsonl", dtype={"doc_id": str, "query-id": str})
        sep = "\t" if p.suffix in (".tsv", ".tab") else ","
        return pd.read_csv(p, sep=sep, dtype={"doc_id": str, "query-id": str})
    except (ValueError, OSError) as exc:
        raise InputFileError(f"cannot read population file {str(p)!r}: {exc}") from exc
