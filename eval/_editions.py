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
