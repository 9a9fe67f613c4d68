"""Checks of a run against the task it is scored on: what it was made on (recorded parameters, the task
fingerprint, chunk ids), ids in another Unicode normalisation, documents outside the corpus. Part of the
outcome stage (:mod:`.table`), which runs them before any pairing of runs and queries."""
from __future__ import annotations

import unicodedata
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from ragcov_data.errors import QrelsRunMismatchError
from ragcov_data.runs.fingerprint import (check_chunk_ids, check_fingerprint, check_query_cut, run_fingerprint,
                                         task_fingerprint)

#: Task parameters a ragcov run records (parquet metadata) and the task's manifest records in ``config``.
TASK_PARAMETERS = ("chunk_words", "query_words", "chunking")
_OPTION = {"chunk_words": "--chunk-words", "query_words": "--query-words", "chunking": "--chunking"}


def _where(run: pd.DataFrame, name: str) -> str:
    src = run.attrs.get("source")
    return f"{src}" if src and src not in ("run", "DataFrame") else f"run {name!r}"


def _object_index(values: Any) -> pd.Index:
    """Ids as an object-dtype Index of str (hash look-ups without per-element Arrow conversions)."""
    return pd.Index(np.asarray(pd.Series(values).astype(str).to_numpy(dtype=object), dtype=object), dtype=object)


def _nfc(ids: Iterable[Any]) -> list[str]:
    return [unicodedata.normalize("NFC", str(x)) for x in ids]


def _normalisation_error(where: str, what: str, pairs: list[tuple[str, str]], n: int) -> QrelsRunMismatchError:
    run_id, task_id = pairs[0]
    form = "NFD" if unicodedata.is_normalized("NFD", run_id) and not unicodedata.is_normalized("NFC", run_id) \
        else "another Unicode form"
    return QrelsRunMismatchError(
        f"{where}: {n:,} {what} ids differ from the task's only by Unicode normalisation (the run writes them in "
        f"{form}, the task in NFC; first: run {run_id!r} = {run_id.encode('unicode_escape').decode()!r}, task "
        f"{task_id!r}). They look identical but do not match: normalise the run's ids to NFC "
        "(unicodedata.normalize('NFC', id)) and evaluate again.")


def check_run_parameters(run: pd.DataFrame, manifest: Mapping[str, Any], name: str = "run") -> None:
    """Refuse a run whose recorded task parameters (``chunk_words``, ``query_words``, ``chunking``: a ragcov
    parquet run keeps them in its metadata) differ from the task's manifest, naming both values: its ids
    may pair with the task's (``doc#0003`` exists at 100 and at 120 words) while meaning other chunks."""
    config = (manifest or {}).get("config") or {}
    if not config.get("chunk_words") or not run.attrs.get("chunk_words"):
        return
    attrs = run.attrs
    task_p = {"chunk_words": config.get("chunk_words"), "query_words": config.get("query_words"),
              "chunking": config.get("chunking") or "words"}
    run_p = {"chunk_words": attrs.get("chunk_words"), "query_words": attrs.get("query_words"),
             "chunking": attrs.get("chunking") or "words"}
    for key in TASK_PARAMETERS:
        a, b = run_p[key], task_p[key]
        if a is None or b is None or str(a) == str(b):
            continue
        raise QrelsRunMismatchError(
            f"{_where(run, name)}: run made at {key}={a}, task has {key}={b}: evaluate it on its own task "
            f"({_OPTION[key]} {a}), or rebuild the run on this task.")


def check_made_on(runs: Mapping[str, pd.DataFrame], task: Any, manifest: Mapping[str, Any],
                  corpus: pd.DataFrame | None, fingerprints: dict | None = None) -> None:
    """Refuse a run made on another task: its fingerprint (what ``ragcov run`` records) against the task's,
    and, whatever it carries, chunk ids that cannot name this task's chunks
    (:mod:`ragcov_data.runs.fingerprint`). Runs before any pairing, so no cut is scored, intersected or
    zero-filled against another's ids. ``fingerprints`` (a dict) keeps the task's fingerprint between calls
    on one task, so checking runs one at a time hashes the corpus once."""
    cache = {} if fingerprints is None else fingerprints
    task_fp = None
    if any(run_fingerprint(df.attrs) is not None for df in runs.values()):  # hash the corpus only if needed
        if "task" not in cache:
            cache["task"] = task_fingerprint(task, manifest)
        task_fp = cache["task"]
    for name, df in runs.items():
        where = _where(df, name)
        fits = check_fingerprint(df, task_fp, where)
        check_chunk_ids(df, corpus, where, has_fingerprint=fits)
        check_query_cut(df, task, manifest, corpus, where)


def check_run_documents(run: pd.DataFrame, corpus: pd.DataFrame | None, subset_note: str | None,
                        notices: list[str], name: str = "run") -> int:
    """Run rows naming documents outside the task's corpus: an error where the corpus is complete (the run
    was made on another task, e.g. another chunk size; or its ids are in another Unicode normalisation), a
    notice where the corpus is a known subset (those documents are unjudged: scored as non-relevant).
    Returns the number of such rows."""
    if corpus is None or "_id" not in corpus.columns:
        return 0
    codes, uniq = pd.factorize(run["corpus-id"])  # distinct ids only: cheap on long runs
    uniq = _object_index(uniq)
    known = _object_index(corpus["_id"]).unique()
    bad_uniq = known.get_indexer(uniq) < 0
    if not bad_uniq.any():
        return 0
    unknown = bad_uniq[codes]
    n = int(unknown.sum())
    distinct = uniq[bad_uniq][np.argsort(np.flatnonzero(bad_uniq), kind="stable")]  # first-appearance order
    first = list(distinct[:5])
    where = run.attrs.get("source") or f"`{name}`"
    nfc_known = dict(zip(_nfc(known), known))
    pairs = [(str(x), nfc_known[u]) for x, u in zip(distinct, _nfc(distinct)) if u in nfc_known]
    if pairs:
        raise _normalisation_error(where, "document", pairs, n)
    if subset_note is None:
        raise QrelsRunMismatchError(
            f"{where}: {n:,} of {len(run):,} rows name documents that are not in the task's corpus "
            f"({len(corpus):,} documents; first: {first}). The run was made on another task (another chunk size, "
            "acervo or dataset): evaluate it on the task it was made on, or rebuild the run."
        )
    notices.append(f"{n:,} run rows name documents outside the shipped corpus (run {name!r}; first: {first}); "
                   f"{subset_note} They are unjudged and scored as non-relevant.")
    return n


def outside_notice(counts: Mapping[str, int], subset_note: str | None) -> str | None:
    """One notice for every run naming documents outside a shipped subset corpus (not one copy per run)."""
    hit = {k: v for k, v in counts.items() if v}
    if not hit:
        return None
    said = ", ".join(f"{k!r} {v:,}" for k, v in hit.items())
    return (f"run rows naming documents outside the shipped corpus (unjudged, scored as non-relevant): {said}. "
            + (subset_note or ""))


def _check_query_normalisation(run_ids: Iterable[str], qids: np.ndarray, where: str) -> None:
    """Run query ids the task lacks but whose NFC form is a task query id: a normalisation error."""
    task = set(qids)
    extra = [q for q in run_ids if q not in task]
    if not extra:
        return
    nfc_task = dict(zip(_nfc(qids), qids))
    pairs = [(q, nfc_task[u]) for q, u in zip(extra, _nfc(extra)) if u in nfc_task]
    if pairs:
        raise _normalisation_error(where, "query", pairs, len(pairs))
