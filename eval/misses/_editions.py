"""Is the retrieved document *another edition* of the query's document? A documented heuristic.

Regulatory acervos are full of series: the despachos of one superintendency, the portarias of one
secretariat, the yearly edition of a plan or a statement. Two acts of one series share their heading up
to the number and the date, and BM25 sees them as near neighbours. The heuristic compares headings:

1. **Heading.** In the first :data:`HEADING_WORDS` words of a document (its first chunk), the first act
   number marker (``Nº``, ``N°``, ``No``, ``nº``, ``N.º``, ``Nº.``) followed by a token holding a digit.
   The heading is the act type — from the first act noun (:data:`ACT_NOUNS`: ``LEI``, ``DECRETO``,
   ``PORTARIA``, ``RESOLUÇÃO``, ``DESPACHO``…) among the :data:`KIND_WORDS` digit-free words before the
   marker, else those words: ``RESOLUÇÃO HOMOLOGATÓRIA``, ``PORTARIA INTERMINISTERIAL``,
   ``EXTRATO DE CONTRATO`` —, the marker, the number token, and a following date phrase
   ``[,] DE <d> DE <month> DE <yyyy>`` when present. A document without a numbered heading uses its first
   :data:`OPENING_WORDS` words instead.
2. **Pattern.** The heading accent-folded and casefolded, the marker written ``no``, every token holding a
   digit has its digit runs replaced by ``#`` but keeps its letters (``1.238/SPE/MME`` → ``#/spe/mme``,
   ``637/GM/MME`` → ``#/gm/mme``: two series of one ministry stay apart), month names become ``#``, other
   punctuation is dropped.
3. **Another edition** of the query's document: a different document of the same ``doc_type``, whose
   issuer does not differ (equal, or both unknown), with an equal heading pattern, and either a different
   heading text (another number or date in it) or both ``date`` known and different.

So "the titles differ only by number or date". Limits: on the ANEEL sample every ANEEL despacho has the
heading pattern ``despacho no # de # de # de #``, so among despachos the flag is nearly "same type,
same issuer"; two revisions of one text with neither a number nor a date in their opening (e.g. the ONS
submódulos, revised under one despacho) are not detected.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

#: Words of a document's start searched for its numbered heading.
HEADING_WORDS = 40
#: Words before the number marker searched for the act type.
KIND_WORDS = 6
#: Nouns that start an act type (accent-folded, casefolded); the act type runs from the first one in the
#: words before the number marker. Without one, the :data:`KIND_WORDS` words before the marker are kept.
ACT_NOUNS = frozenset({"lei", "decreto", "portaria", "resolucao", "despacho", "instrucao", "nota", "extrato",
                       "aviso", "oficio", "comunicado", "edital", "decisao", "voto", "medida", "deliberacao",
                       "ato", "circular", "parecer", "contrato", "acordao", "sumula", "emenda"})
#: Words used as the heading when a document has no numbered heading.
OPENING_WORDS = 12

MONTHS = ("janeiro", "fevereiro", "marco", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
          "novembro", "dezembro")
_MARKER = re.compile(r"^n(?:[º°o]|\.º|º\.|o\.|°\.)\.?:?$", re.IGNORECASE)
_NUM_IN_MARKER = re.compile(r"^n[º°](\d\S*)$", re.IGNORECASE)  # "Nº15/2021" written without a space
_DIGIT = re.compile(r"\d")
_DATE = re.compile(r"^,?\s*de\s+\S*\d\S*\s+de\s+(\S+)\s+de\s+\d{4}\b", re.IGNORECASE)


@lru_cache(maxsize=1 << 16)
def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()


def heading(text: str) -> str:
    """The act heading of a document's opening text (see the module docstring), as written."""
    words = text.split()[:HEADING_WORDS]
    for i, w in enumerate(words):
        glued = _NUM_IN_MARKER.match(w)
        if glued:
            number, end = glued.group(1), i + 1
        elif _MARKER.match(w) and i + 1 < len(words) and _DIGIT.search(words[i + 1]):
            number, end = words[i + 1], i + 2
        else:
            continue
        start = i
        while start > 0 and i - start < KIND_WORDS and not _DIGIT.search(words[start - 1]):
            start -= 1
        nouns = [j for j in range(start, i) if _fold(words[j]).strip(".,:;") in ACT_NOUNS]
        if nouns:  # the act type starts at its noun: "MINAS E ENERGIA PORTARIA Nº" -> "PORTARIA Nº"
            start = nouns[0]
        head = words[start:end]
        rest = " ".join(words[end:end + 7])
        m = _DATE.match(rest)
        if m and _fold(m.group(1)).strip(".,") in MONTHS:
            head += rest[:m.end()].split()
        return " ".join(head)
    return " ".join(words[:OPENING_WORDS])


@lru_cache(maxsize=1 << 16)
def pattern(head: str) -> str:
    """A heading with numbers, dates and punctuation normalised away (the series key)."""
    out = []
    for w in _fold(head).split():
        if _MARKER.match(w) or _NUM_IN_MARKER.match(w):
            out.append("no")
            if _NUM_IN_MARKER.match(w):
                out.append(_number_pattern(w[2:]))
            continue
        if _DIGIT.search(w):
            out.append(_number_pattern(w))
            continue
        w = re.sub(r"[^\w/]", "", w)
        if not w:
            continue
        out.append("#" if w in MONTHS else w)
    return " ".join(out)


def _number_pattern(token: str) -> str:
    """``1.238/SPE/MME,`` → ``#/spe/mme``: digit runs (with their inner . , - and an ordinal ``º``/``ª``)
    become one ``#``."""
    t = re.sub(r"\d[\d.,\-]*(?:[ºª°oa](?![^\W\d_]))?", "#", token.strip(".,;:()"))  # 1º, 43ª: one #
    return re.sub(r"[^\w#/]", "", t)


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def other_edition(q_doc: Sequence[Any], r_doc: Sequence[Any], q_type: Sequence[Any], r_type: Sequence[Any],
                  q_issuer: Sequence[Any], r_issuer: Sequence[Any], q_date: Sequence[Any], r_date: Sequence[Any],
                  q_head: Sequence[str], r_head: Sequence[str]) -> np.ndarray:
    """Element-wise rule 3 of the module docstring, on per-pair metadata and headings."""
    out = np.zeros(len(q_doc), dtype=bool)
    for i in range(len(q_doc)):
        if _text(q_doc[i]) == _text(r_doc[i]) or not _text(q_type[i]) or _text(q_type[i]) != _text(r_type[i]):
            continue
        if _text(q_issuer[i]) != _text(r_issuer[i]):
            continue
        qh, rh = q_head[i], r_head[i]
        if not qh or pattern(qh) != pattern(rh):
            continue
        qd, rd = _text(q_date[i]), _text(r_date[i])
        out[i] = _fold(" ".join(qh.split())) != _fold(" ".join(rh.split())) or (bool(qd) and bool(rd) and qd != rd)
    return out


# --------------------------------------------------------------------------- document overlap (editions)

#: Default Jaccard threshold of two documents' word 5-gram sets for ``other_edition``. On the ANEEL sample
#: the 889 same-series document pairs have median 0.03, 90th percentile 0.11, 99th 0.41; 4 reach 0.5 (a
#: portaria and the one that replaced it, 0.74; despachos of one template, 0.53-0.60).
EDITION_OVERLAP = 0.5


# --------------------------------------------------------------------------- issuer of votos and decisões

#: Document types whose issuer is read from the text when the metadata has none.
DERIVED_ISSUER_TYPES = frozenset({"voto", "decisao", "nota_tecnica"})
_ANEEL_PROCESS = re.compile(r"\bPROCESSOS?(?:\s+N[º°o]\.?)?\s*:?\s*48500\.", re.IGNORECASE)
_SIGNATURE = re.compile(r"\b(?:Diretor(?:a)?(?:-Geral)?|DIRETOR(?:A)?(?:-GERAL)?|Superintendente|SUPERINTENDENTE)\b")


def derive_issuer(doc_type: Any, opening: str, closing: str) -> str | None:
    """Issuer of a voto, decisão or nota técnica read from its heading and signature, or None.

    ANEEL's votos and decisões open with ``PROCESSO(S): 48500.…`` (the agency's protocol prefix) and close
    with the director's signature (``Diretor``, ``Diretora``, ``Diretor-Geral``); its notas técnicas are
    signed by a superintendent. Either the ANEEL process number in the first 60 words, or a director's or
    superintendent's signature in the last 40 words of a text that names the ANEEL, gives ``"ANEEL"``."""
    if _text(doc_type) not in DERIVED_ISSUER_TYPES:
        return None
    head = " ".join(opening.split()[:60])
    if _ANEEL_PROCESS.search(head):
        return "ANEEL"
    tail = " ".join(closing.split()[-40:])
    if _SIGNATURE.search(tail) and ("ANEEL" in opening or "ANEEL" in closing or "Agência Nacional de Energia"
                                    in opening):
        return "ANEEL"
    return None


# --------------------------------------------------------------------------- citations between acts

_CITE_NOUNS = {"lei": "lei", "decreto": "decreto", "portaria": "portaria", "resolucao": "resolucao",
               "despacho": "despacho", "instrucao": "instrucao", "deliberacao": "deliberacao",
               "ren": "resolucao", "reh": "resolucao", "rea": "resolucao", "dsp": "despacho", "prt": "portaria"}
_CITE = re.compile(
    r"\b(?P<noun>lei|decreto|portaria|resolucao|despacho|instrucao|deliberacao|ren|reh|rea|dsp|prt)\b"
    r"(?P<gap>[^\d.;:()]{0,40}?)(?P<num>\d{1,3}(?:\.\d{3})+|\d{1,5})(?![\d])"
    r"(?:/(?:[a-z]+/)*(?P<y1>\d{4})\b|/[a-z][a-z/]*)?"
    r"(?:,?\s+de\s+\d{1,2}[o]?\s+de\s+[a-z]+\s+de\s+(?P<y2>\d{4})|,?\s+de\s+(?P<y3>\d{4})\b"
    r"|,?\s+de\s+\d{2}\.\d{2}\.(?P<y4>\d{4}))?")
_GAP_OK = re.compile(r"^(?:\s*(?:n[o.]*|normativa|homologatoria|autorizativa|conjunta|interministerial|"
                     r"complementar|[a-z]+/[a-z/]+|mme|aneel|cnpe|cppi|ana|ons|ccee|gm|spe|se|srg|sce|scg|sfe|srd|sgt|"
                     r"scr|rfb|srf|mf|me)\.?,?)*\s*$")


def act_key(head: str, date: Any = None, doc_type: Any = None) -> tuple[str, int, int | None] | None:
    """``(noun, number, year)`` of an act from its heading (``DESPACHO Nº 2.124, DE 9 DE AGOSTO DE 2016``
    -> ``("despacho", 2124, 2016)``), the year from the heading or else ``date``; None without a number.

    With ``doc_type``, the heading's act must be of that type (``resolucao_homologatoria`` -> a resolução):
    a voto, decisão or procedimento heads its text with the act it discusses, not with a number of its own,
    and gets None."""
    keys = _cites_in(head, limit=1)
    if not keys:
        return None
    noun, num, year = keys[0]
    if doc_type is not None and _text(doc_type) and noun != _type_noun(_text(doc_type)):
        return None
    if year is None and _text(date)[:4].isdigit():
        year = int(_text(date)[:4])
    return noun, num, year


def _type_noun(doc_type: str) -> str | None:
    """The citation noun of a ``doc_type`` (``resolucao_autorizativa`` -> ``resolucao``), None for the types
    that are not numbered acts (voto, decisão, nota técnica, procedimento ...)."""
    head = _fold(doc_type).split("_")[0]
    return _CITE_NOUNS.get(head) if head in ("lei", "decreto", "portaria", "resolucao", "despacho", "instrucao",
                                             "deliberacao") else None


def _ascii_fold(text: str) -> str:
    """Accents and ordinals folded to ASCII (``nº`` -> ``no``), casefolded; other non-ASCII characters
    dropped (fast on whole documents; enough for the citation grammar)."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").casefold()


def _cites_in(text: str, limit: int | None = None) -> list[tuple[str, int, int | None]]:
    out = []
    for m in _CITE.finditer(_ascii_fold(text)):
        if not _GAP_OK.match(m.group("gap")):
            continue
        year = next((m.group(g) for g in ("y1", "y2", "y3", "y4") if m.group(g)), None)
        out.append((_CITE_NOUNS[m.group("noun")], int(m.group("num").replace(".", "")),
                    int(year) if year else None))
        if limit and len(out) >= limit:
            break
    return out


def citations(text: str) -> frozenset[tuple[str, int, int | None]]:
    """Every act citation in a text as ``(noun, number, year or None)``: ``Lei nº 9.427, de 26 de dezembro de
    1996``, ``Resolução Normativa nº 1.000/2021``, ``REN 1.000``, ``DSP SCG/ANEEL 2.124 de 09.08.2016``."""
    return frozenset(_cites_in(text))


def cites(cited: frozenset, key: tuple[str, int, int | None] | None) -> bool:
    """Does a text with citations ``cited`` cite the act ``key``? Same noun and number, and the same year
    when both give one; a citation without a year counts only for numbers of three digits or more."""
    if key is None:
        return False
    noun, num, year = key
    for n2, num2, y2 in cited:
        if n2 == noun and num2 == num:
            if year is not None and y2 is not None:
                if year == y2:
                    return True
            elif num >= 100:
                return True
    return False
