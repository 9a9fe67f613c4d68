"""Questions whose gold is citations: reading and checking the questions file, the act each document is,
and each question's cited provisions (from ``raw`` strings or structured ``references``), for
:mod:`ragcov_data.loaders.cited_questions`."""
from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ragcov_data.errors import InputFileError
from ragcov_data.legal import citations as cit


# --------------------------------------------------------------------------- questions


def read_questions(path: str | os.PathLike) -> list[dict]:
    """Read a questions file (JSONL, one question a line) into dicts with ``qid``, ``question``,
    ``references`` (list of dicts) and the optional ``coverage``, ``question_summary``.

    Accepted spellings: ``qid`` / ``_id`` / ``id``; ``question`` / ``text``; ``references`` (structured
    dicts, each with ``doc_id``/``article`` ... and/or ``raw``) or ``citations`` (a string or a list of
    strings, parsed by :func:`ragcov_data.citations.parse`).

    Raises
    ------
    InputFileError
        Missing file, bad JSON, a question without id, text or citations, duplicate ids; the message
        names the file, the line and the fix.
    """
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"questions file {str(p)!r} does not exist; pass a JSONL file of questions.")
    records: list[tuple[str, Any]] = []
    with open(p, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                records.append((f"{p}: line {n}", json.loads(line)))
            except ValueError as exc:
                raise InputFileError(f"{p}: line {n} is not valid JSON ({exc}); write one JSON object a line.") from None
    if not records:
        raise InputFileError(f"{p}: no questions; the file is empty.")
    return validate_questions(records)


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
        out.append({**rec, "qid": qid, "question": text, "references": refs})
    return out


@dataclass(frozen=True)
class _Cited:
    doc_id: str | None
    article: str | None
    paragraph: str | None = None
    inciso: str | None = None
    alinea: str | None = None
    item: str | None = None
    caput: bool = False
    raw: str = ""
    act: str | None = None  # readable act id (for acts not in the corpus)

    @property
    def label(self) -> str:
        parts = [f"art. {self.article}"] if self.article else []
        if self.caput:
            parts.append("caput")
        if self.paragraph:
            parts.append("parágrafo único" if self.paragraph == "único" else f"§ {self.paragraph}")
        parts += [x for x in (self.inciso, self.alinea, self.item) if x]
        return f"{self.doc_id or self.act or '?'}: " + (" > ".join(parts) or "(act)")


def act_of(doc: Any) -> Any:
    """The act a document is: read from its ``title``, its ``doc_id`` (``lei-9250-1995``) or the heading at
    the top of its text (``LEI Nº 9.250, DE 26 DE DEZEMBRO DE 1995.``), in that order; None if none names a
    numbered act."""
    title = doc.metadata.get("title")
    sources = [title if isinstance(title, str) else None, doc.doc_id.replace("-", " ").replace("_", " ")]
    for source in sources:
        if source:
            hit = next((c.act for c in cit.parse(source) if c.act is not None and c.act.number), None)
            if hit is not None:
                return hit
    lines = [ln.strip() for ln in doc.text[:2000].splitlines() if ln.strip()][:8]
    for line in lines:  # a heading: a line that starts with the act's own name
        m = cit.ACT_RE.match(line)
        if m is not None:
            return cit.parse(line[:m.end()])[0].act
    return None


def _table(acts: Sequence[Any]) -> dict:
    """Alias table: the default one, with each act of the corpus mapped to its own document (see
    :func:`act_of`; a corpus act overrides the default entry, the first document naming an act wins)."""
    table = dict(cit.DOC_IDS)
    claimed: set = set()
    for doc in acts:
        hit = act_of(doc)
        if hit is None:
            continue
        key = cit.act_key(hit)
        if key not in claimed:
            table[key] = doc.doc_id
            claimed.add(key)
    return table


@functools.lru_cache(maxsize=4096)
def _parse_raw(raw: str, table_items: tuple) -> tuple:
    return tuple(cit.parse(raw, table=dict(table_items)))


def gold_citations(question: Mapping[str, Any], gold: str, table: dict) -> list[_Cited]:
    """The cited provisions of one question (distinct, in order) under the ``gold`` rule."""
    refs = question["references"]
    has_raw = any(r.get("raw") for r in refs)
    use_raw = gold == "raw" or (gold == "auto" and has_raw)
    out: dict[tuple, _Cited] = {}
    if use_raw:
        items = tuple(sorted(table.items()))
        for raw in dict.fromkeys(r["raw"] for r in refs if r.get("raw")):
            for c in _parse_raw(raw, items):
                if c.act is None:
                    continue
                act = cit.canonical_id(c.act) or c.act.text
                x = _Cited(c.doc_id, c.article, c.paragraph, c.inciso, c.alinea, c.item, c.caput, raw, act)
                out.setdefault((x.doc_id or act, x.article, x.paragraph, x.inciso, x.alinea, x.item, x.caput), x)
    else:
        for r in refs:
            if not r.get("doc_id"):
                continue
            x = _Cited(r["doc_id"], _level("article", r.get("article")), _level("paragraph", r.get("paragraph")),
                       _level("inciso", r.get("inciso")), _level("alinea", r.get("alinea")),
                       _level("item", r.get("item")), bool(r.get("caput", False)), r.get("raw") or "", r["doc_id"])
            out.setdefault((x.doc_id, x.article, x.paragraph, x.inciso, x.alinea, x.item, x.caput), x)
    return list(out.values())


_ORDINAL = re.compile(r"(?<=\d)\s*(?:º|°|ª|o\b|\.)", re.IGNORECASE)


def _level(name: str, v: Any) -> str | None:
    """A structured reference's level in the form the citation parser gives (and the act index keys):
    ``"8º"``/``"8°"`` -> ``"8"``, ``"3º-a"`` -> ``"3-A"``, inciso ``"ii"`` -> ``"II"``, alínea ``"A"`` -> ``"a"``,
    ``"parágrafo único"`` -> ``"único"``. Written as a person writes them, they were reported "not found"."""
    text = _s(v)
    if text is None:
        return None
    if name in ("article", "paragraph", "item"):
        low = text.lower()
        if name == "paragraph" and "nico" in low:  # único / unico / parágrafo único
            return "único"
        text = _ORDINAL.sub("", re.sub(r"^(?:art(?:igo)?\.?|§+)\s*", "", text, flags=re.IGNORECASE)).replace(" ", "")
        head, sep, tail = text.partition("-")
        return head + (sep + tail.upper() if sep else "")
    if name == "inciso":
        return re.sub(r"^inciso\s+", "", text, flags=re.IGNORECASE).upper()
    if name == "alinea":
        return re.sub(r"^al[ií]nea\s+", "", text, flags=re.IGNORECASE).strip("\"'“”‘’) ").lower()
    return text


def _s(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    s = str(v).strip()
    return s or None
