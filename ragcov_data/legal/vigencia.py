"""Vigência: which wording of a compiled act is in force, and what the act says of its own status.

Compiled acts are published with their history inside them:

- **Planalto** pages (planalto.gov.br) print a provision's superseded wording struck through (``<strike>``,
  ``<s>``, ``<del>`` or a ``text-decoration: line-through`` style) next to the wording in force;
- the Receita's **SIJUT** pages mark a provision that no longer applies with ``[Revogado(a) pelo(a) ...]``
  after its wording;
- a **Markdown** clip of such a page keeps the strike as ``~~...~~``;
- **plain text** extracted from any of them loses the markup, and the old and new wording of one provision
  follow each other under one number, the later carrying ``(Redação dada pela ...)``.

:func:`superseded_spans` finds the superseded wording of a text (the struck spans found while reading the
markup, plus :data:`PAIR_RULE` and :data:`SIJUT_RULE` on the text) and :func:`resolve` takes it out (the
default) or keeps it with its character spans. :func:`document_status` reads the act's own status where the
text states it (:data:`STATUS_RULE`). :func:`chunk_vigencia` turns both, per dispositivo unit
(:data:`UNIT_RULE`), into the chunk columns ``in_force``, ``units_not_in_force`` and ``share_not_in_force``
(:data:`IN_FORCE_RULE`).
"""
from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

#: Statuses a document may state (None: the text states none).
STATUSES = ("revoked", "suspended")

PAIR_RULE = (
    "plain text: a dispositivo whose unit carries '(Redação dada ...)' supersedes the previous dispositivo with "
    "the same marker (Art. n, § n, Parágrafo único, inciso, alínea) when no dispositivo of its level or above "
    "comes between them: the earlier unit (from its line to the later one) is superseded wording"
)
SIJUT_RULE = (
    "SIJUT pages: a '[Revogado(a) pelo(a) ...]' line after the act's first artigo ends a revoked provision: from "
    "the line of the dispositivo or heading it follows (at most 15 lines back) to the annotation is superseded "
    "wording"
)
MARKUP_RULE = (
    "HTML: text inside <strike>, <s>, <del> or an element styled text-decoration: line-through; Markdown: "
    "text between ~~ and ~~ (the tildes are markup and dropped)"
)
STATUS_RULE = (
    "a line that opens with an annotation '(Revogado/Revogada pelo/pela ...)', '[Revogado(a) pelo(a) ...]', "
    "'(Suspenso/Suspensa ...)', '(Suspensos os efeitos ...)' or '(Suspensa a execução ...)' states the "
    "document's status when it stands before the act's first artigo (a page header) or after its last one "
    "(no artigo line between it and the end or the next ANEXO): revoked, else suspended; otherwise none "
    "(an annotation inside the articulated text is about one provision); a text without line breaks (a task's "
    "joined chunks) is read with a line break before every such annotation, artigo and ANEXO"
)
UNIT_RULE = (
    "each dispositivo unit (the preâmbulo, an artigo's caput, a parágrafo, inciso, alínea or item, with the "
    "headings before it) is out of force when at least half of its words are superseded wording, or when it "
    "is a vetoed or revoked stub ('Art. 19. (VETADO)', '§ 3º (Revogado pela ...)'); superseded wording inside a "
    "Markdown code fence is left alone"
)
IN_FORCE_RULE = (
    "a chunk's wording is in force (corpus in_force) unless its document states it is revoked or suspended, or "
    "every unit the chunk holds is out of force (a chunk holds a unit when it has at least half of the unit's "
    "words, or the unit makes at least half of the chunk); corpus units_not_in_force lists the out-of-force "
    "units with words in the chunk (labels, in order, one per unit) and share_not_in_force the share of the "
    "chunk's words they hold; a document with no artigo has no units: its chunk is out of force when at least "
    "half of its words are superseded wording (units_not_in_force empty, share_not_in_force that share)"
)

_MARK = re.compile(
    r"(?:(?:Art|ART)\.?\s*(?P<art>\d{1,4}(?:\.\d{3})*)\s*[º°o]?\.?(?:-?(?P<artl>[A-Z])\b)?"
    r"|§\s*(?P<par>\d{1,3})\s*[º°o]?(?:-?(?P<parl>[A-Z])\b)?"
    r"|(?P<unico>Par[áa]grafo\s+[úu]nico)"
    r"|(?P<inc>[IVXLC]{1,7})\s*[-–—]"
    r"|(?P<ali>[a-z])\))")
_LEVEL = {"art": 1, "par": 2, "unico": 2, "inc": 3, "ali": 4}
_REDACAO = re.compile(r"reda[çc][ãa]o\s+dada", re.I)
_SIJUT_REVOKED = re.compile(r"^\s*\[\s*Revogad[oa]\(a\)\s+pel[oa]\(a\)", re.I)
_STATUS = re.compile(
    r"^\s*[\(\[]\s*(?:(?P<rev>Revogad[oa]s?(?:\(a\))?\s+pel[oa]s?(?:\(a\))?)"
    r"|(?P<sus>Suspens[oa]s?\b(?!\s+(?:o|a|os|as)\s+(?:prazo|prazos)\b)|Suspensa\s+a\s+execu))", re.I)
_HEADING_LINE = re.compile(r"^\s*(?:T[ÍI]TULO|CAP[ÍI]TULO|LIVRO|SE[ÇC][ÃA]O|Se[çc][ãa]o|SUBSE[ÇC][ÃA]O|Subse[çc][ãa]o)\s+"
                           r"(?:[IVXLC]+|[ÚU]NIC[OA]|[Úú]nic[oa])\b")
_ART_LINE = re.compile(r"^\s*(?:Art|ART)\.?\s*\d")
_ANEXO_LINE = re.compile(r"^\s*ANEXOS?\b")
_PSEUDO_LINES = re.compile(r"\s(?=[\(\[]\s*(?:Revogad|REVOGAD|Suspens|SUSPENS)|(?:Art|ART)\.?\s*\d|ANEXOS?\b)")
_TILDES = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~", re.S)


def _lines(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of every non-blank line."""
    out = []
    pos = 0
    for line in text.splitlines(keepends=True):
        if line.strip():
            out.append((pos, pos + len(line.rstrip("\r\n"))))
        pos += len(line)
    return out


def _marker(line: str) -> tuple | None:
    m = _MARK.match(line.lstrip())
    if not m:
        return None
    g = m.groupdict()
    for kind in ("art", "par", "inc", "ali"):
        if g.get(kind):
            letter = g.get(f"{kind}l") or ""
            num = g[kind].replace(".", "") if kind == "art" else g[kind]
            return kind, num, letter
    return ("unico", "", "") if g.get("unico") else None


# --------------------------------------------------------------------------- markup


_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)", re.M)


def code_fences(text: str) -> list[tuple[int, int]]:
    """Character spans of the Markdown code fences of ``text`` (an unclosed fence runs to the end)."""
    spans = []
    opened: tuple[int, str] | None = None
    for m in _FENCE.finditer(text):
        if opened is None:
            opened = (m.start(), m.group(1))
        elif m.group(1) == opened[1]:
            end = text.find("\n", m.end())
            spans.append((opened[0], len(text) if end < 0 else end))
            opened = None
    if opened is not None:
        spans.append((opened[0], len(text)))
    return spans


def outside(spans: Sequence[tuple[int, int]], fences: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ``spans`` that overlap none of ``fences`` (superseded wording inside a code fence is left alone:
    the fence shows text, it does not publish a provision)."""
    return [(a, b) for a, b in spans if not any(a < fb and fa < b for fa, fb in fences)]


def markdown_struck(text: str) -> tuple[str, list[tuple[int, int]]]:
    """A Markdown text without its ``~~`` marks, and the spans of the text they struck; tildes inside a
    code fence are text and stay."""
    out: list[str] = []
    spans = []
    pos = last = 0
    fences = code_fences(text)
    for m in _TILDES.finditer(text):
        if outside([m.span()], fences) == []:
            continue
        out.append(text[last:m.start()])
        pos += m.start() - last
        inner = m.group(1)
        spans.append((pos, pos + len(inner)))
        out.append(inner)
        pos += len(inner)
        last = m.end()
    out.append(text[last:])
    return "".join(out), spans


_ROMAN_ALONE = re.compile(r"^\s*([IVXLC]{1,7})\s*$")


def _line_marker(text: str, lines: Sequence[tuple[int, int]], k: int) -> tuple | None:
    """The marker opening line ``k``; an inciso whose numeral ends its line and whose dash opens the next
    (``III`` / ``- ...``) counts."""
    a, b = lines[k]
    m = _ROMAN_ALONE.match(text[a:b])
    if m and k + 1 < len(lines) and text[lines[k + 1][0]:lines[k + 1][1]].lstrip()[:1] in "-–—":
        return "inc", m.group(1), ""
    return _marker(text[a:b])


def pair_spans(text: str) -> list[tuple[int, int]]:
    """Superseded wording in plain text by :data:`PAIR_RULE`."""
    lines = _lines(text)
    marks = [(k, _line_marker(text, lines, k)) for k in range(len(lines))]
    marks = [(k, m) for k, m in marks if m is not None]
    spans = []
    for j, (k, key) in enumerate(marks):
        unit_end = lines[marks[j + 1][0]][0] if j + 1 < len(marks) else len(text)
        if not _REDACAO.search(text[lines[k][0]:unit_end]):
            continue
        level = _LEVEL[key[0]]
        for kk, other in reversed(marks[:j]):
            if _LEVEL[other[0]] <= level:
                if other == key:
                    spans.append((lines[kk][0], lines[k][0]))
                break
    return spans


def sijut_spans(text: str) -> list[tuple[int, int]]:
    """Superseded wording of a SIJUT page by :data:`SIJUT_RULE`."""
    lines = _lines(text)
    first_art = next((k for k, (a, b) in enumerate(lines) if _ART_LINE.match(text[a:b])), None)
    if first_art is None:
        return []
    spans = []
    for k in range(first_art + 1, len(lines)):
        a, b = lines[k]
        if not _SIJUT_REVOKED.match(text[a:b]):
            continue
        for kk in range(k - 1, max(first_art, k - 16) - 1, -1):
            line = text[lines[kk][0]:lines[kk][1]]
            if _line_marker(text, lines, kk) is not None or _HEADING_LINE.match(line):
                spans.append((lines[kk][0], b))
                break
    return spans


def merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, non-overlapping union of character spans (empty ones dropped)."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(s for s in spans if s[1] > s[0]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def superseded_spans(text: str, struck: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Every superseded span of ``text``: the ``struck`` spans found in its markup, :func:`pair_spans`
    and :func:`sijut_spans`, merged; only spans holding a word count."""
    spans = merge([*struck, *pair_spans(text), *sijut_spans(text)])
    out: list[tuple[int, int]] = []
    for a, b in spans:  # one passage where only whitespace separates two spans
        if not text[a:b].split():
            continue
        if out and not text[out[-1][1]:a].strip():
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def resolve(text: str, spans: Sequence[tuple[int, int]], keep: bool) -> tuple[str, list[tuple[int, int]], int]:
    """Take superseded spans out of ``text`` (``keep=False``) or keep them.

    Returns
    -------
    (text, spans, words)
        The text (each removed span replaced by a line break if it held one, else by a space, so the words
        around it stay apart and lines stay lines), the spans still in it (empty unless ``keep``), and the
        number of superseded words.
    """
    spans = merge(spans)
    n_words = sum(len(text[a:b].split()) for a, b in spans)
    if keep or not spans:
        return text, list(spans) if keep else [], n_words
    out = []
    last = 0
    for a, b in spans:
        out.append(text[last:a])
        out.append("\n" if "\n" in text[a:b] else " ")
        last = b
    out.append(text[last:])
    return "".join(out), [], n_words


# --------------------------------------------------------------------------- status


def document_status(text: str) -> str | None:
    """The status the document states of itself (:data:`STATUS_RULE`): ``"revoked"``, ``"suspended"`` or
    None."""
    if "evogad" not in text and "uspens" not in text and "EVOGAD" not in text:
        return None
    if "\n" not in text.strip():  # a chunk text joined with spaces: break before annotations and artigos
        text = _PSEUDO_LINES.sub("\n", text)
    lines = _lines(text)
    arts = [k for k, (a, b) in enumerate(lines) if _ART_LINE.match(text[a:b])]
    annexes = [k for k, (a, b) in enumerate(lines) if _ANEXO_LINE.match(text[a:b])]
    found: set[str] = set()
    for k, (a, b) in enumerate(lines):
        m = _STATUS.match(text[a:b])
        if not m:
            continue
        if arts and k > arts[0]:
            stop = next((x for x in annexes if x > k), len(lines))
            if any(k < x < stop for x in arts):
                continue  # an artigo follows: the annotation is about a provision
            if not any(x < k for x in arts):
                continue
        found.add("revoked" if m.group("rev") else "suspended")
    return "revoked" if "revoked" in found else "suspended" if found else None


# --------------------------------------------------------------------------- chunks


def word_flags(text: str, spans: Sequence[tuple[int, int]]) -> list[bool]:
    """For every word of ``text.split()``: does it start inside one of ``spans``?"""
    if not spans:
        return [False] * len(text.split())
    flags = []
    spans = merge(spans)
    j = 0
    for m in re.finditer(r"\S+", text):
        while j < len(spans) and spans[j][1] <= m.start():
            j += 1
        flags.append(j < len(spans) and spans[j][0] <= m.start() < spans[j][1])
    return flags


def unit_out_of_force(units: Sequence[tuple[int, int, str, bool]], flags: Sequence[bool]) -> list[bool]:
    """Per unit ``(start, stop, label, stub)`` (word spans): is it out of force (:data:`UNIT_RULE`)?"""
    return [bool(stub) or (b > a and 2 * sum(flags[a:b]) >= b - a) for a, b, _, stub in units]


def chunk_vigencia(n_words: Sequence[int], flags: Sequence[bool], status: str | None,
                   units: Sequence[tuple[int, int, str, bool]] = ()
                   ) -> tuple[list[bool], list[list[str]], list[float]]:
    """``in_force``, ``units_not_in_force`` and ``share_not_in_force`` of consecutive chunks of ``n_words``
    words each (:data:`IN_FORCE_RULE`).

    Parameters
    ----------
    n_words
        Words of each chunk, in document order (the chunks cover the document's words).
    flags
        Per word of the document: is it superseded wording?
    status
        The document's stated status (``revoked``/``suspended`` put every chunk out of force).
    units
        The document's dispositivo units ``(start, stop, label, stub)`` as word spans covering it, in order;
        empty for a document with no artigo.
    """
    out_unit = unit_out_of_force(units, flags)
    in_force: list[bool] = []
    names: list[list[str]] = []
    shares: list[float] = []
    pos = 0
    j = 0
    for n in n_words:
        lo, hi = pos, pos + n
        pos = hi
        while j < len(units) and units[j][1] <= lo:
            j += 1
        held_in = held_out = False
        out_words = 0
        labels: list[str] = []
        k = j
        while k < len(units) and units[k][0] < hi:
            a, b, label, _ = units[k]
            common = min(b, hi) - max(a, lo)
            held = common > 0 and (2 * common >= b - a or 2 * common >= n)
            if out_unit[k]:
                labels.append(label)
                out_words += common
                held_out |= held
            else:
                held_in |= held
            k += 1
        if not units:  # no structure: the share of superseded words decides
            out_words = sum(flags[lo:hi])
            ok = not (n and 2 * out_words >= n)
        else:
            ok = held_in or not (held_out or (n and 2 * out_words >= n))
        in_force.append(ok and status not in STATUSES)
        names.append(labels)
        shares.append(out_words / n if n else 0.0)
    return in_force, names, shares


def chunk_in_force(n_words: Sequence[int], flags: Sequence[bool], status: str | None) -> list[bool]:
    """``in_force`` of consecutive chunks of a document with no units (:func:`chunk_vigencia`)."""
    return chunk_vigencia(n_words, flags, status)[0]


def span_in_force(text: str, superseded: Sequence[tuple[int, int]], status: str | None,
                  spans: Sequence[tuple[int, int]]) -> tuple[list[bool], list[float]]:
    """``in_force`` and the share of superseded words of chunks given as character spans of ``text`` (in any
    order, overlapping or not): the words of a chunk are the words starting inside its span. Units are not
    read for such chunks: the share of superseded words decides (:data:`IN_FORCE_RULE`, no-structure case)."""
    import numpy as np

    starts = np.array([m.start() for m in re.finditer(r"\S+", text)], dtype=np.int64)
    sup = np.concatenate([[0], np.cumsum(word_flags(text, superseded), dtype=np.int64)])
    out, shares = [], []
    for a, b in spans:
        i, j = np.searchsorted(starts, a, side="left"), np.searchsorted(starts, b, side="left")
        n, k = int(j - i), int(sup[j] - sup[i])
        out.append(not (n and 2 * k >= n) and status not in STATUSES)
        shares.append(k / n if n else 0.0)
    return out, shares


def annotate_task(corpus, acervo, manifest: dict,
                  units_of: Callable[[str], Sequence[tuple[int, int, str, bool]]] | None = None, *,
                  by_span: bool = False) -> None:
    """Add the chunk columns ``in_force``, ``units_not_in_force`` and ``share_not_in_force`` and the
    manifest's ``vigencia`` record to a task being built (in place), when the acervo carries vigência
    (``acervo.vigencia["annotated"]``).

    ``corpus`` rows are the chunks of the acervo's documents in order, each chunk's words consecutive
    (the task's construction rule), so a chunk's words are found by counting. ``units_of(text)`` gives a
    document's dispositivo units ``(start, stop, label, stub)`` as word spans (the caller's parser); without
    it every document is read as having none. With ``by_span`` a chunk's words are those inside its
    ``start_char``/``end_char`` (any chunker, :func:`span_in_force`)."""
    info = getattr(acervo, "vigencia", None) or {}
    if not info.get("annotated"):
        return
    counts = corpus["text"].str.split().str.len().to_numpy()
    docs = corpus["doc_id"].to_numpy()
    by_doc = {d.doc_id: d for d in acervo.documents}
    in_force: list[bool] = []
    names: list[list[str]] = []
    shares: list[float] = []
    n_units_out = 0
    i = 0
    n = len(corpus)
    while i < n:
        j = i
        while j < n and docs[j] == docs[i]:
            j += 1
        doc = by_doc[str(docs[i])]
        flags = word_flags(doc.text, doc.superseded)
        if by_span:
            spans = list(zip(corpus["start_char"].iloc[i:j].tolist(), corpus["end_char"].iloc[i:j].tolist()))
            f, s = span_in_force(doc.text, doc.superseded, doc.status, spans)
            u = [[] for _ in spans]
        else:
            units = list(units_of(doc.text)) if units_of is not None else []
            n_units_out += sum(unit_out_of_force(units, flags))
            f, u, s = chunk_vigencia(counts[i:j].tolist(), flags, doc.status, units)
        in_force.extend(f)
        names.extend(u)
        shares.extend(s)
        i = j
    corpus["in_force"] = in_force
    corpus["units_not_in_force"] = pd.Series(names, index=corpus.index, dtype=object)
    corpus["share_not_in_force"] = np.asarray(shares, dtype="float64")
    if info.get("keep_superseded"):
        manifest["config"]["keep_superseded"] = True
    manifest["vigencia"] = {
        "superseded": "kept (corpus in_force marks it)" if info.get("keep_superseded") else "taken out",
        "superseded_passages": info.get("passages", 0), "superseded_words": info.get("words", 0),
        "documents_with_superseded": info.get("documents", 0), "documents_by_status": info.get("statuses", {}),
        "status_column": info.get("status_column"), "chunks_not_in_force": int(n - sum(in_force)),
        "chunks_with_units_not_in_force": int(sum(bool(x) for x in names)),
        "units_not_in_force": int(n_units_out),
        "rules": {"markup": MARKUP_RULE, "pairs": PAIR_RULE, "sijut": SIJUT_RULE, "status": STATUS_RULE,
                  "units": UNIT_RULE, "in_force": IN_FORCE_RULE},
    }
