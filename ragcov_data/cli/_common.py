"""Helpers shared by the coverage / plan / report / benchmark verbs."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
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
    """Read a population table (parquet, CSV, TSV, JSON lines, JSON records or an ``eval --json`` file).

    A ``.json`` file written by ``ragcov eval --json`` (an object with ``per_query`` records
    ``query-id, cluster, value [, group]``) gives its per-query values, the ``cluster`` becoming the
    ``doc_id`` the coverage study samples; a ``.json`` list of records is read as a table.
    """
    if twin:
        from ragcov_data.eval.twin import simulate_population

        return simulate_population(seed=seed)
    if path is None:
        raise RagcovError("give a population file (per-query outcomes or per-document counts) or --twin.")
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"population file {str(p)!r} not found; pass a parquet/CSV/JSONL table or --twin.")
    if p.suffix == ".json":
        return _read_json_population(p)
    from ragcov_data.cli._task import read_table  # one table reader: BOM, JSON Lines, ids as text

    return read_table(p, id_columns=("doc_id", "query-id"))


#: Fields of each ``per_query`` record of an ``eval --json`` file that a population needs.
EVAL_JSON_FIELDS = ("query-id", "cluster", "value")


def _read_json_population(p: Path) -> pd.DataFrame:
    """A ``.json`` population: the ``per_query`` records of ``ragcov eval --json``, or a list of records."""
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, OSError) as exc:
        raise InputFileError(f"cannot read population file {str(p)!r}: not valid UTF-8 JSON ({exc}).") from exc
    if isinstance(data, list):
        records, where = data, "the list"
    elif isinstance(data, dict) and "per_query" in data:
        records, where = data["per_query"], "`per_query`"
    else:
        keys = sorted(data)[:8] if isinstance(data, dict) else type(data).__name__
        raise InputFileError(
            f"population file {str(p)!r} is JSON without per-query values (found {keys}); pass the JSON that "
            "`ragcov eval --json` writes (it holds `per_query` records: query-id, cluster, value) or a table of "
            "per-query outcomes (query-id, doc_id, value) / per-document counts (doc_id, n, hits)."
        )
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise InputFileError(f"population file {str(p)!r}: {where} must be a list of records (objects).")
    df = pd.DataFrame.from_records(records)
    if where == "the list":
        for col in ("doc_id", "query-id"):
            if col in df.columns:
                df[col] = df[col].astype(str)
        return df
    missing = [f for f in EVAL_JSON_FIELDS if f not in df.columns]
    if missing:
        raise InputFileError(
            f"population file {str(p)!r}: `per_query` records lack {missing} (found {sorted(map(str, df.columns))}); "
            "each record needs query-id, cluster and value, as `ragcov eval --json` writes them."
        )
    n_queries = data.get("n_queries")
    if isinstance(n_queries, int) and n_queries != len(df):
        raise InputFileError(
            f"population file {str(p)!r} declares n_queries={n_queries} but holds {len(df)} `per_query` records; "
            "the file is truncated or edited. Write it again with `ragcov eval --json`."
        )
    # the evaluation's cluster (document) is the unit the coverage study samples
    df = df.rename(columns={"doc_id": "doc_id_recorded"}).rename(columns={"cluster": "doc_id"})
    df["doc_id"] = df["doc_id"].astype(str)
    df["query-id"] = df["query-id"].astype(str)
    value = pd.to_numeric(df["value"], errors="coerce")
    if value.isna().any():
        i = int(np.flatnonzero(value.isna().to_numpy())[0])
        raise InputFileError(
            f"population file {str(p)!r}: `per_query` record {i} (query-id {df['query-id'].iloc[i]!r}) has value "
            f"{records[i].get('value')!r}; every value must be a finite number (ragcov writes a non-finite one as "
            "null); fix the run or metric behind it and write the file again."
        )
    df["value"] = value.astype(float)
    df.attrs["source"] = {"file": str(p), "cluster": data.get("cluster"), "metric": data.get("metric")}
    return df
