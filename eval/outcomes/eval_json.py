"""The per-query outcome table an ``eval --json`` file holds (read back by ``coverage`` and ``plan``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ragcov_data.errors import InputFileError


# ============================================================================================ eval JSON
#: Fields of each ``per_query`` record of an ``eval --json`` file that an outcome table needs.
EVAL_JSON_FIELDS = ("query-id", "cluster", "value")


def outcomes_from_eval_json(path: str | Path) -> tuple[pd.DataFrame, list[str]]:
    """The per-query outcome table a ``.json`` file holds, for ``coverage`` and ``plan``, and its notices.

    The JSON of ``ragcov eval --json`` (an object with ``per_query`` records ``query-id, cluster, value
    [, group]``) gives its per-query values, the ``cluster`` becoming the ``doc_id`` that the coverage
    study and the planner sample; a JSON list of records is read as a table. The notices repeat what the
    evaluation recorded about those values: queries scored 0 because the run lacked them (in the values
    as misses, not as the retriever's outcomes) and the document sample it scored.
    """
    import json

    p = Path(path)
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
        return df, []
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
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    notes: list[str] = []
    n_zero = info.get("n_missing_queries") or 0
    if n_zero:
        name = info.get("run_name") or "the run"
        notes.append(f"{p.name}: run {name!r} lacked {n_zero} of {len(df)} queries (scored 0): they are in these "
                     "values as misses, not as the retriever's outcomes.")
    sample = info.get("sample")
    if isinstance(sample, dict):
        notes.append(f"{p.name}: the evaluation scored the queries of a sample of {sample.get('k')} of "
                     f"{(sample.get('population') or {}).get('documents')} documents (seed {sample.get('seed')}).")
    df.attrs["notices"] = notes
    return df, notes
