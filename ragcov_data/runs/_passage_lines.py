"""A passage run's JSON Lines read line by line, each line that is not a passage named for what it holds.

A JSON Lines passage run (``ragcov_data.run_pipeline`` writes one) is a first line recording what made it
(``{"ragcov_passage_run": {...}}``), then one line a passage, a failed question (``error``) or a question answered
with nothing (``empty``). A file that an interruption, a concatenation or a hand edit left otherwise is refused
naming the line, what it holds, what probably happened and whether re-running the pipeline with the same ``--out``
mends it (it resumes: it drops a cut last answer and asks that question again, but it keeps every other line):

- a **cut line** (the last line, not whole JSON): the run was interrupted while writing;
- an **answer cut short** (fewer passage lines than the ``of`` its lines record);
- an **id line** (a line naming a chunk or document id and no passage text): an id run mixed in;
- a line holding a question id and nothing else;
- a **second header line**: two passage runs joined into one file.

Records end at ``\\n`` only (as in the id-run reader), so a passage holding U+2028 or U+0085 stays one record.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd

from ragcov_data.errors import InputFileError

__all__ = ["read_passage_lines"]

_RESUMES = ("re-running the pipeline with the same --out resumes: it drops the cut answer and asks that question "
            "again")


def _excerpt(line: str, n: int = 70) -> str:
    line = line.strip()
    return repr(line if len(line) <= n else line[:n] + "…")


def read_passage_lines(path: Path, text: str, meta_key: str, names: Mapping[str, tuple[str, ...]],
                       id_columns: tuple[str, ...]) -> tuple[pd.DataFrame, Callable[[int], str]]:
    """The passage records of ``text`` (``path``'s content) as a frame (``attrs["meta"]``: the header's record, or
    None) and a row -> ``"line N"`` labeller; every line that is not a record of a passage run refused (see the
    module docstring). ``names`` are the recognised column names by passage-run column, ``id_columns`` those of an
    id run's document id."""
    lines = text.split("\n")
    last = max((i for i, ln in enumerate(lines) if ln.strip()), default=-1)
    records: list[Mapping[str, Any]] = []
    numbers: list[int] = []
    meta, meta_line = None, 0
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        no = i + 1
        rec = _parse(path, raw, no, cut=i == last, ours=meta is not None)
        if meta_key in rec:
            if records or meta is not None:
                raise _second_header(path, no, rec[meta_key], meta, meta_line, meta_key)
            meta, meta_line = rec[meta_key], no
            continue
        records.append(rec)
        numbers.append(no)
    _check_kinds(path, records, numbers, names, id_columns, ours=meta is not None)
    if meta is not None:
        _check_whole_answers(path, records, numbers, names["query-id"])
    frame = pd.DataFrame(records)
    frame.attrs["meta"] = meta
    return frame, (lambda i: f"line {numbers[i]}")


def _parse(path: Path, raw: str, no: int, *, cut: bool, ours: bool) -> Mapping[str, Any]:
    """One line's JSON object; a last line that is not whole JSON is a cut line, any other a bad line."""
    try:
        rec = json.loads(raw)
    except json.JSONDecodeError as exc:
        if cut:
            fix = (_RESUMES if ours else "delete it (its question then counts as missing: --on-missing decides), "
                   "or make the file again")
            raise InputFileError(f"{path}, line {no}: the last line is cut short ({_excerpt(raw)}: {exc.msg}): the "
                                 f"file was cut while being written (an interrupted run?); {fix}.") from None
        raise InputFileError(f"{path}, line {no}: not a JSON object ({exc.msg}): {_excerpt(raw)}; each line of a "
                             'passage run is {"query-id": ..., "rank": ..., "text": ...}.') from None
    if not isinstance(rec, Mapping):
        raise InputFileError(f"{path}, line {no}: a JSON {type(rec).__name__}, not an object ({_excerpt(raw)}); each "
                             "line is one passage.")
    return rec


def _second_header(path: Path, no: int, this: Any, first: Any, first_line: int, key: str) -> InputFileError:
    """A header line after the first line: two passage runs joined (``cat a.jsonl b.jsonl``)."""
    what = f"{{{key!r}: …}}"
    if first is None:
        return InputFileError(f"{path}, line {no} is a header line ({what}) after passage lines that had none: a "
                              "header belongs on line 1 only (were files joined?); move it to line 1, or split the "
                              "file in two. Re-running the pipeline does not mend this.")
    differ = [k for k in sorted(set(first) | set(this)) if isinstance(first, Mapping) and isinstance(this, Mapping)
              and first.get(k) != this.get(k) and k != "questions_sha256"]
    how = (f"they were made differently ({', '.join(f'{k}: {first.get(k)!r} vs {this.get(k)!r}' for k in differ)}): "
           "keep them in two files and score them apart" if differ else
           f"both record the same task and pipeline: delete line {no} to keep them as one run")
    return InputFileError(f"{path}, line {no} is a second header line ({what}; the first is line {first_line}): two "
                          f"passage runs joined into one file, as `cat a.jsonl b.jsonl` does; {how}. Re-running the "
                          "pipeline keeps the line: remove it first.")


def _keys(rec: Mapping[str, Any]) -> set[str]:
    return {str(k).strip().lower() for k in rec}


def _check_kinds(path: Path, records: list[Mapping[str, Any]], numbers: list[int],
                 names: Mapping[str, tuple[str, ...]], id_columns: tuple[str, ...], *, ours: bool) -> None:
    """A line with no passage text, failure or empty answer, in a file of passage lines, named for what it holds."""
    text_names = set(names["text"])
    if not any(_keys(r) & text_names for r in records):
        return  # not passage lines (a ragas-style table, or no text column at all): the columns' check says so
    for rec, no in zip(records, numbers):
        keys = _keys(rec)
        if keys & text_names or keys & {"error", "empty", "user_input", "retrieved_contexts"}:
            continue
        ids = [k for k in rec if str(k).strip().lower() in id_columns]
        if ids:
            raise InputFileError(
                f"{path}, line {no} holds a document id ({ids[0]}: {rec[ids[0]]!r}), not a passage: "
                f"{_excerpt(json.dumps(rec, ensure_ascii=False))}. A run of chunk or document ids mixed into a passage "
                "run? Keep id runs in a file of their own; a passage line is {\"query-id\": ..., \"rank\": ..., "
                "\"text\": ...}.")
        again = " Delete it, or give the passage its text."
        if ours and not _answered(records, rec, names["query-id"]):
            again = " Delete it: re-running the pipeline with the same --out then asks that question again."
        raise InputFileError(
            f"{path}, line {no} holds no passage text, no `error` and no `empty` "
            f"({_excerpt(json.dumps(rec, ensure_ascii=False))}): not a line of a passage run.{again}")


def _qid(rec: Mapping[str, Any], qid_names: tuple[str, ...]) -> Any:
    return next((rec[k] for k in rec if str(k).strip().lower() in qid_names), None)


def _answered(records: list[Mapping[str, Any]], rec: Mapping[str, Any], qid_names: tuple[str, ...]) -> bool:
    """Whether another line answers ``rec``'s question (a passage or an empty answer): then a re-run does not ask it."""
    q = _qid(rec, qid_names)
    return any(r is not rec and _qid(r, qid_names) == q and ("text" in r or r.get("empty")) for r in records)


def _check_whole_answers(path: Path, records: list[Mapping[str, Any]], numbers: list[int],
                         qid_names: tuple[str, ...]) -> None:
    """In a run ragcov wrote, each answer has the number of passage lines its ``of`` records; one with fewer was cut
    by an interruption (resumed by re-running when it is the file's last answer)."""
    seen: dict[str, list[int]] = {}
    of: dict[str, int] = {}
    for rec, no in zip(records, numbers):
        q = _qid(rec, qid_names)
        if q is None or "text" not in rec or not isinstance(rec.get("of"), int):
            continue
        seen.setdefault(str(q), []).append(no)
        of[str(q)] = rec["of"]
    short = [q for q, ln in seen.items() if len(ln) < of[q]]
    if not short:
        return
    q = short[0]
    got = seen[q]
    is_last = max(got) == max(numbers)
    fix = (_RESUMES if is_last else f"delete lines {got[0]}-{got[-1]}: re-running the pipeline with the same --out "
           "then asks that question again")
    raise InputFileError(f"{path}, line {got[-1]}: the answer to question {q!r} is cut short ({len(got)} of its "
                         f"{of[q]} passages, lines {got[0]}-{got[-1]}): the run was interrupted while writing it; "
                         f"{fix}.")
