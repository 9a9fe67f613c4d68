"""The gold of a cited question: its citations, parsed or structured, each kept with why it cannot be used.

Part of :mod:`ragcov_data.loaders.cited_questions` (which re-exports every name here): the statuses a
citation ends with, the record of one cited provision (:class:`Gold`), the alias table of a corpus
(:func:`act_of`, :func:`_table`) and :func:`gold_citations`.
"""
from __future__ import annotations

import re

import functools
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from ragcov_data.errors import InputFileError
from ragcov_data.legal import citations as cit

#: Status of a cited provision after resolution.
STATUSES = ("resolved", "dispositivo_not_found", "article_not_found", "act_only", "act_not_in_corpus", "unparsed",
            "year_mismatch", "year_out_of_range", "number_out_of_range", "relative_without_context", "act_unknown",
            "not_located", "invalid_numeral")
#: What each status other than ``resolved`` means (the warning and the manifest's ``unresolved`` use it).
STATUS_TEXT = {
    "dispositivo_not_found": "cited dispositivo(s) resolved to their artigo only",
    "article_not_found": "cited artigo(s) not found in their act",
    "act_only": "citation(s) of a whole act (no artigo to grade)",
    "act_not_in_corpus": "citation(s) of acts not in the corpus",
    "unparsed": "citation string(s) in which no citation was read",
    "year_mismatch": "citation(s) whose year contradicts the act they name",
    "year_out_of_range": "citation(s) of an impossible year",
    "number_out_of_range": "citation(s) of a number no real act has",
    "relative_without_context": "relative citation(s) (deste artigo ...) with no act to read them against",
    "act_unknown": "citation(s) naming no act",
    "not_located": "citation(s) of an annex (annexes are not located)",
    "invalid_numeral": "citation(s) of an inciso with no valid Roman numeral or an alínea with no letter",
}


def no_qrels_error(dataset: str, manifest: Mapping[str, Any], doc_ids: Sequence[str]) -> InputFileError:
    """The error for a task none of whose citations resolved to a chunk (it has no qrels to grade by): the
    counts by reason, a few of the citations, the acts that were read, and what to check."""
    counts = manifest.get("counts", {})
    by = {s: n for s, n in counts.get("citations_by_status", {}).items() if n and s != "resolved"}
    why = "; ".join(f"{n} {STATUS_TEXT.get(s, s)}" for s, n in by.items()) or "none located in a chunk"
    shown = "; ".join(f"{u.get('raw') or u.get('citation')!r} ({u.get('status')})"
                      for u in manifest.get("unresolved", [])[:3])
    acts = ", ".join(list(doc_ids)[:5]) + (" ..." if len(doc_ids) > 5 else "")
    return InputFileError(
        f"{dataset}: no citation of the {counts.get('queries', 0)} question(s) resolved in the acts "
        f"({counts.get('citations', 0)} citation(s): {why}{'; e.g. ' + shown if shown else ''}), so the task has "
        f"no qrels. Check that the questions cite the acts read ({len(doc_ids)} document(s): {acts}) by their "
        "number and year, and that each citation string parses (`ragcov_data.legal.citations.parse(raw)`); "
        "`build_cited_task(acts, questions).manifest['unresolved']` lists every citation with its reason.")


class UnresolvedCitations(UserWarning):
    """The citations of a cited-questions task that could not be graded, by status, and the questions left with
    no relevant chunk. ``str()`` is the full notice (the first few of each status); :meth:`summary` is the one
    line a command prints once (the counts, and where the whole list is)."""

    def __init__(self, message: str, *, dataset: str, config: str, by_status: dict[str, int], no_gold: int) -> None:
        super().__init__(message)
        self.dataset, self.config, self.by_status, self.no_gold = dataset, config, dict(by_status), int(no_gold)

    def key(self) -> tuple:
        """What the notice says apart from the chunking it was built with (equal keys: the same notice)."""
        return self.dataset, tuple(sorted(self.by_status.items())), self.no_gold

    def summary(self) -> str:
        """``cited questions (irpf): 7 citation(s) not graded (...); 1 question(s) with no relevant chunk; each
        one is in the task's manifest (ragcov build --dataset irpf --out DIR: DIR/manifest.json, ...)``."""
        n = sum(self.by_status.values())
        parts = [f"{n} citation(s) not graded ("
                 + ", ".join(f"{k} {STATUS_TEXT.get(s, s)}" for s, k in self.by_status.items()) + ")"] if n else []
        if self.no_gold:
            parts.append(f"{self.no_gold} question(s) with no relevant chunk")
        return (f"cited questions ({self.dataset}): {'; '.join(parts)}; each one is in the task's manifest "
                f"(`ragcov build --dataset {self.dataset} --out DIR` writes DIR/manifest.json: `unresolved`, "
                "`dispositivo_not_found`, `queries_without_relevant_chunk`)")


class Gold(NamedTuple):
    """One cited provision of a question: the :class:`ragcov_data.legal.citations.Citation` (parsed from ``raw``, or
    built from a structured reference) and the ``raw`` string it came from."""

    citation: cit.Citation
    raw: str = ""

    @property
    def act(self) -> str | None:
        """A readable id of the act: the document id, else one built from the act (``lei-5555-1999``)."""
        c = self.citation
        if c.doc_id is not None:
            return c.doc_id
        return None if c.act is None else (cit.canonical_id(c.act) or c.act.text)

    @property
    def label(self) -> str:
        """``lei-9250-1995: art. 8 > caput > II > b``; an unparsed string is shown as itself."""
        c = self.citation
        if c.reason == "unparsed":
            return f"?: {self.raw}"
        parts = [f"anexo {c.annex}"] if c.annex else []
        parts += [f"art. {c.article}"] if c.article else []
        if c.caput:
            parts.append("caput")
        if c.paragraph:
            parts.append("parágrafo único" if c.paragraph == "único" else f"§ {c.paragraph}")
        parts += [x for x in (c.inciso, c.alinea, c.item) if x]
        return f"{self.act or '?'}: " + (" > ".join(parts) or "(act)")


def act_of(doc: Any) -> Any:
    """The act a document is: read from its ``title``, its ``doc_id`` (``lei-9250-1995``) or the heading at
    the top of its text (``LEI Nº 9.250, DE 26 DE DEZEMBRO DE 1995.``), in that order; None if none names a
    numbered act."""
    title = doc.metadata.get("title")
    sources = [title if isinstance(title, str) else None, doc.doc_id.replace("-", " ").replace("_", " ")]
    for source in sources:
        if source:
            hit = next((c.act for c in cit.parse(source)
                        if c.act is not None and (c.act.number or c.act.type == "constituicao")), None)
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
def _parse_raw(raw: str, table_items: tuple, context: tuple = ()) -> tuple:
    return tuple(cit.parse(raw, table=dict(table_items), context=dict(context) or None))


def _raw_context(refs: Sequence[Mapping[str, Any]], raw: str) -> tuple:
    """Where a raw string sits when its structured references say so: the act (and artigo) every reference
    given with that string agrees on, as ``parse``'s ``context`` (relative references such as ``§ 2º deste
    artigo`` or ``art. 5º desta Lei`` are read against it)."""
    mine = [r for r in refs if r.get("raw") == raw]
    out = []
    for key in ("doc_id", "article", "paragraph"):
        vals = {_s(r.get(key)) for r in mine}
        if len(vals) != 1 or None in vals:
            break
        out.append((key, vals.pop()))
    return tuple(out)


def gold_citations(question: Mapping[str, Any], gold: str, table: dict) -> list[Gold]:
    """The cited provisions of one question (distinct, in order) under the ``gold`` rule.

    Nothing is dropped: a raw string that yields no citation is one with reason ``unparsed``; a citation
    whose act cannot be told (a relative reference with no context) has reason ``act_unknown``; the
    parser's own reasons (``year_mismatch``, ``number_out_of_range`` ...) are kept."""
    refs = question["references"]
    has_raw = any(r.get("raw") for r in refs)
    use_raw = gold == "raw" or (gold == "auto" and has_raw)
    out: dict[tuple, Gold] = {}
    if use_raw:
        items = tuple(sorted(table.items()))
        for raw in dict.fromkeys(r["raw"] for r in refs if r.get("raw")):
            parsed = [c for c in _parse_raw(raw, items, _raw_context(refs, raw)) if c.act is not None or c.article
                      or c.annex or c.reason]
            if not parsed:
                parsed = [cit.Citation(None, None, reason="unparsed")]
            for c in parsed:
                if c.act is None and c.doc_id is None and c.reason is None:
                    c = c._replace(reason="act_unknown")
                x = Gold(c, raw)
                out.setdefault((x.act, c.annex, c.article, c.paragraph, c.inciso, c.alinea, c.item, c.caput, c.reason,
                                raw if c.reason == "unparsed" else None), x)
    else:
        for r in refs:
            if not r.get("doc_id"):
                continue
            c = cit.Citation(None, _level("article", r.get("article")), _level("paragraph", r.get("paragraph")),
                             _level("inciso", r.get("inciso")), _level("alinea", r.get("alinea")),
                             _level("item", r.get("item")), bool(r.get("caput", False)), doc_id=r["doc_id"])
            out.setdefault(c.key + (c.caput,), Gold(c, r.get("raw") or ""))
    return list(out.values())


def _s(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    s = str(v).strip()
    return s or None

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
