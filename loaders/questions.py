"""Questions files of the cited-questions tasks: read, checked and normalised (one question a line)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from ragcov_data.errors import InputFileError

__all__ = ["read_questions", "validate_questions", "topic_of"]


def topic_of(summary: Any) -> str | None:
    """The topic of a question: its ``question_summary`` up to the first dash (``"DOENÇA GRAVE - ..."``)."""
    import re

    if not isinstance(summary, str) or not summary.strip():
        return None
    return re.split(r"\s+[-–—]\s+", summary.strip())[0].strip()


def read_questions(path: str | os.PathLike) -> list[dict]:
    """Read a questions file (JSONL, one question a line) into dicts with ``qid``, ``question``,
    ``references`` (list of dicts) and the optional ``coverage``, ``question_summary``.

    Accepted spellings: ``qid`` / ``_id`` / ``id``; ``question`` / ``text``; ``references`` (structured
    dicts, each with ``doc_id``/``article`` ... and/or ``raw``) or ``citations`` (a string or a list of
    strings, parsed by :func:`ragcov_data.legal.citations.parse`: a written citation, a LexML URN or a source key).

    Raises
    ------
    InputFileError
        Missing file, a file that is not UTF-8 (a BOM is allowed), bad JSON, a question without id, text or
        citations, a broken LexML URN, duplicate ids; the message names the file, the line and the fix.
    """
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"questions file {str(p)!r} does not exist; pass a JSONL file of questions.")
    from ragcov_data.legal.acervo import _decode  # the acts' strict UTF-8 reader: file, line, byte and the fix

    records: list[tuple[str, Any]] = []
    for n, line in enumerate(_decode(p.read_bytes(), str(p)).split("\n"), 1):
        if not line.strip():
            continue
        try:
            records.append((f"{p}: line {n}", json.loads(line)))
        except ValueError as exc:
            raise InputFileError(f"{p}: line {n} is not valid JSON ({exc}); write one JSON object a line.") from None
    if not records:
        raise InputFileError(f"{p}: no questions; the file is empty.")
    return validate_questions(records)


_LEVELS = ("article", "paragraph", "inciso", "alinea", "item")


def _check_urn(where: str, qid: str, raw: Any) -> None:
    """A citation string written as a LexML URN must be one: a broken URN is an error naming the question."""
    from ragcov_data.legal import citations as cit

    if isinstance(raw, str) and cit.is_urn(raw):
        try:
            cit.read_urn(raw)
        except cit.UrnError as exc:
            raise InputFileError(f"{where} (qid {qid!r}): {exc} Fix the URN or drop the reference.") from None


def validate_questions(records: Sequence[tuple[str, Any]]) -> list[dict]:
    """Check and normalise question records given as ``(where, record)`` pairs (``where`` names the file
    and line, or the list index, in error messages); see :func:`read_questions` for the fields."""
    out: list[dict] = []
    seen: set[str] = set()
    for where, rec in records:
        if not isinstance(rec, Mapping):
            raise InputFileError(f"{where} is not a JSON object; write one question object a line.")
        qid = rec.get("qid", rec.get("_id", rec.get("id")))
        text = rec.get("question", rec.get("text"))
        if qid is None or not str(qid).strip():
            raise InputFileError(f"{where} has no question id; give each question a `qid`.")
        if not isinstance(text, str) or not text.strip():
            raise InputFileError(f"{where} (qid {qid!r}) has no question text; give it a `question`.")
        qid = str(qid)
        if qid in seen:
            raise InputFileError(f"{where}: qid {qid!r} is used twice; question ids must be unique.")
        seen.add(qid)
        refs = rec.get("references")
        if refs is None and "citations" in rec:
            raws = rec["citations"]
            raws = [raws] if isinstance(raws, str) else list(raws or [])
            refs = [{"raw": r} for r in raws]
        if not isinstance(refs, list) or not refs:
            raise InputFileError(f"{where} (qid {qid!r}) has no citations; give `references` (a list of "
                                 "{doc_id, article, ...} and/or {raw}) or `citations` (strings).")
        for r in refs:
            if not isinstance(r, Mapping) or not (r.get("raw") or r.get("doc_id")):
                raise InputFileError(f"{where} (qid {qid!r}): a reference needs `raw` (a citation string) or "
                                     f"`doc_id` (+ `article` ...); got {r!r}.")
            _check_urn(where, qid, r.get("raw"))
            for level in _LEVELS:
                v = r.get(level)
                if v is not None and (isinstance(v, bool) or not isinstance(v, (str, int, float))):
                    raise InputFileError(
                        f"{where} (qid {qid!r}): `{level}` of a reference must be one string or number (e.g. "
                        f"\"3º\"); got a {type(v).__name__} {v!r}. Cite several with one reference each "
                        f"({{\"doc_id\": ..., \"{level}\": ...}} per item).")
        out.append({**rec, "qid": qid, "question": text, "references": refs})
    return out
