"""Brazilian legal citations, parsed into structured references.

``parse(text)`` finds every citation of a dispositivo (or of a whole act) in running text or in a
citation list and returns :class:`Citation` records: the act (type, number, year, issuer, alias), the
article, paragraph, inciso, alínea and item. ``doc_id(act)`` maps an act to a document id through a
small alias table (:data:`DOC_IDS`), so a citation can be resolved onto a corpus.

The grammar
-----------
*Acts* (:data:`ACT_RE`): ``Lei nº 9.250, de 26 de dezembro de 1995``, ``Lei nº 7.713, de 1988``,
``Lei Complementar nº 109``, ``Decreto-Lei nº 5.844``, ``Decreto nº 9.580, de 2018``, ``Medida Provisória
nº 2.158-35``, ``Instrução Normativa RFB nº 1.500, de 2014`` (the issuer: any acronym, ``RFB``, ``SRF``,
``CST``, ``PGFN/CRJ``, ``SRRF03/Disit``, or ``Cosit`` ...), ``Solução de Consulta Cosit nº 63``, ``Solução de
Divergência``, ``Ato Declaratório Interpretativo RFB nº 1``, ``Parecer Normativo``, ``Parecer PGFN/CRJ Nº
2271/2013``, ``Nota SEI`` ...; the ``nº`` may be
``n°``, ``no``, ``n.``, a bare ``º`` or absent, the date full, a year, ``/1995`` or ``12.4.90``; upper case
(``LEI Nº 9.250, DE 26 DE DEZEMBRO DE 1995``) too. *Aliases* (:data:`ALIASES`): ``RIR/2018``,
``Regulamento do Imposto sobre a Renda``, ``CTN`` / ``Código Tributário Nacional``, ``Constituição
Federal`` / ``CF/88``, ``Código Civil``, ``Código de Processo Civil``, ``CLT``. An alias in apposition to a
numbered act (``Lei nº 5.172, de 1966 - Código Tributário Nacional - CTN``) names the same act; an act
introduced by ``aprovado pelo`` (``RIR/2018, art. 1º, aprovado pelo Decreto nº 9.580``) is the
approving act of the one before and is not cited by itself. ``desta Lei``, ``deste Decreto`` ...
cite the enclosing act (type ``"self"``).

*Dispositivos*: ``art. 3º``, ``art. 3º-A``, ``art.10``, ``arts. 47, 134 e 151``, ``arts. 128 a 153``
(expanded, ``from_range``), ``artigo``; ``§ 1º``, ``§§ 1º e 4º``, ``§§ 3º a 5º``, ``parágrafo único``,
``caput``; ``inciso II``, ``incisos IV e V``, and a bare roman numeral after a comma (``art. 5º, IV``);
``alínea “b”``, ``alíneas “b” e “c”``, a quoted letter alone (``inciso II, “e”``), ``alínea a``; ``item 10``.
Two orders are read:

- *list order* (ascending): ``art. 90, caput, incisos IV e V, § 1º, incisos I e II`` — a lower level
  refines the last value of the level above; a level equal or higher starts a sibling; a bare arabic
  number after a lower level starts a new article of an ``arts.`` list (``arts. 53, inciso II, § 4º, 54,
  65, § 2º, e 81``), else continues a paragraph (``art. 3º, § 1º e 2º``); a singular ``§``, ``inciso`` or
  ``alínea`` takes one value; a lower level joined by ``e`` cites the level above too (``art. 8º e § 1º``:
  the caput and § 1º);
- *running order* (descending): ``no inciso IV do § 2º do art. 458 do Decreto-Lei nº 5.452``,
  ``alínea “a” do inciso II do caput do art. 8º``.

*Binding to an act*: a chain followed by ``do``/``da`` (optionally after a comma) and an act belongs to
that act (``art. 6º, inciso XIV, da Lei nº 7.713``), and so do the chains before it joined by ``e`` /
``,`` / ``no`` in the same clause (``no § 2º do art. 63 e no art. 100 do Decreto-Lei nº 5.844``); else a
chain right after an act (only punctuation between) belongs to it (``Lei nº 9.250, de 1995, art. 4º,
inciso V, art. 8º``); else the act is None (a reference inside the enclosing act). An act with no
dispositivo after it is an act-level citation.

*Headings are not citations*: where a marker starts a line and opens the dispositivo itself (``Art. 7º O
imposto``, ``§ 1º Constituem``, ``Parágrafo único. O``, ``I -``, ``a)``), :func:`heading_match` says so and
:func:`parse` skips it; ``§ 1º do art. 7º`` or ``Art. 5º da Lei nº ...`` at a line start are citations
(:func:`is_citation`). The dispositivo parser and the provision locator use the same two functions.

Examples
--------
>>> from ragcov_data.citations import parse
>>> [c.key for c in parse("Lei nº 7.713, de 22 de dezembro de 1988, arts. 3º, § 1º, e 6º, inciso XII")]
[('lei-7713-1988', '3', '1', None, None, None), ('lei-7713-1988', '6', None, 'XII', None, None)]
>>> [(c.act.type, c.act.number, c.article, c.paragraph, c.inciso)
...  for c in parse("no inciso IV do § 2º do art. 458 do Decreto-Lei nº 5.452, de 1943")]
[('decreto_lei', '5452', '458', '2', 'IV')]
"""
from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from typing import Iterable, NamedTuple

__all__ = ["Act", "Citation", "Heading", "parse", "agreement", "doc_id", "act_key", "canonical_id", "heading_match", "is_citation",
           "normalize_article", "DOC_IDS", "ALIASES", "ACT_RE", "MARKER_RE"]

# --------------------------------------------------------------------------- acts

_ACT_TYPES = [
    (r"lei\s+complementar", "lei_complementar"),
    (r"decreto[\s-]*lei", "decreto_lei"),
    (r"lei", "lei"),
    (r"decreto", "decreto"),
    (r"medida\s+provis[óo]ria", "medida_provisoria"),
    (r"instru[çc][ãa]o\s+normativa", "instrucao_normativa"),
    (r"emenda\s+constitucional", "emenda_constitucional"),
    (r"solu[çc][ãa]o\s+de\s+consulta(?:\s+interna)?", "solucao_de_consulta"),
    (r"solu[çc][ãa]o\s+de\s+diverg[êe]ncia", "solucao_de_divergencia"),
    (r"parecer\s+normativo", "parecer_normativo"),
    (r"parecer(?:\s+SEI)?", "parecer"),
    (r"nota(?:\s+SEI|\s+t[ée]cnica)?", "nota"),
    (r"ato\s+declarat[óo]rio(?:\s+(?:interpretativo|normativo|executivo))?", "ato_declaratorio"),
    (r"portaria", "portaria"),
    (r"resolu[çc][ãa]o(?:\s+normativa)?", "resolucao"),
]
#: An issuer: an acronym (RFB, SRF, CST, PGFN/CRJ, SRRF03/Disit) or a known name (Cosit, Conjunta).
_ISSUERS = (r"(?-i:[A-Z][A-Za-z0-9]*[A-Z0-9](?:[/-][A-Z][A-Za-z0-9]+)*/?|Cosit|Cosar|Codac|Conjunta|Interna)")
_MONTHS = r"(?:janeiro|fevereiro|mar[çc]o|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro)"
#: A numbered act: type, issuer, number and date (case-insensitive).
ACT_RE = re.compile(
    r"\b(?P<type>" + "|".join(f"(?:{p})" for p, _ in _ACT_TYPES) + r")"
    r"(?P<issuer>(?:\s+" + _ISSUERS + r")*)"
    r"\s*(?:n\.?\s*[º°o]\.?|n[º°o]\.?|n\.|[º°]|número)?\s*"
    r"(?P<num>\d{1,3}(?:\.\d{3})+(?:-\s?\d{1,3})?|\d{1,5}(?:-\s?\d{1,3})?)(?![\d.,]\d)"
    r"(?P<date>,?\s+de\s+(?:\d{1,2}[º°o]?\s+de\s+" + _MONTHS + r"\s+de\s+)?(?P<y1>\d{4})\b"
    r"|\s*/\s*(?P<y2>\d{4}|\d{2})\b"
    r"|,?\s+de\s+\d{1,2}\.\d{1,2}\.(?P<y3>\d{4}|\d{2})\b)?",
    re.IGNORECASE,
)
_TYPE_OF = [(re.compile(p + r"$", re.I), t) for p, t in _ACT_TYPES]

#: Alias patterns -> (type, number, year) of the act they name (year None: from the alias' own year).
ALIASES: list[tuple[str, tuple[str, str | None, int | None]]] = [
    (r"(?:Regulamento\s+do\s+Imposto\s+(?:sobre\s+a|de)\s+Renda(?:\s+e\s+Proventos\s+de\s+Qualquer\s+Natureza)?"
     r"(?:\s*[-–—]?\s*RIR\s*/\s*(?P<rir1>\d{4}|\d{2}))?|\bRIR\s*/\s*(?P<rir2>\d{4}|\d{2})\b)", ("rir", None, None)),
    (r"(?:C[óo]digo\s+Tribut[áa]rio\s+Nacional(?:\s*[-–—]\s*CTN\b)?|\bCTN\b)", ("lei", "5172", 1966)),
    (r"(?:Constitui[çc][ãa]o(?:\s+Federal|\s+da\s+Rep[úu]blica(?:\s+Federativa\s+do\s+Brasil)?)(?:\s+de\s+1988)?"
     r"|\bCF\s*/\s*(?:88|1988)\b)", ("constituicao", None, 1988)),
    (r"(?:C[óo]digo\s+de\s+Processo\s+Civil|\bCPC\b)", ("lei", "13105", 2015)),
    (r"C[óo]digo\s+Civil", ("lei", "10406", 2002)),
    (r"(?:Consolida[çc][ãa]o\s+das\s+Leis\s+do\s+Trabalho|\bCLT\b)", ("decreto_lei", "5452", 1943)),
]
#: Editions of the income-tax regulation (``RIR/<year>``): the decree that approved it.
RIR_EDITIONS = {2018: ("decreto", "9580", 2018), 1999: ("decreto", "3000", 1999), 1994: ("decreto", "1041", 1994)}
_ALIAS_RE = re.compile("|".join(f"(?P<a{i}>{p})" for i, (p, _) in enumerate(ALIASES)))
_SELF_RE = re.compile(r"\b(?:dest[ae]|nest[ae]|d[ao]\s+present[e]|n[ao]\s+present[e])\s+"
                      r"(?P<what>Lei(?:\s+Complementar)?|Decreto(?:-Lei)?|Regulamento|Instru[çc][ãa]o\s+Normativa|"
                      r"Medida\s+Provis[óo]ria|Portaria|Resolu[çc][ãa]o|C[óo]digo|Ato)\b", re.I)
_APPROVING = re.compile(r"aprovad[oa]s?\s+pel[oa]s?\s*$", re.I)

#: Known document ids of acts, keyed by :func:`act_key` (type, issuer, number); see :func:`doc_id`.
DOC_IDS: dict[tuple[str, str | None, str], str] = {
    ("lei", None, "9250"): "lei-9250-1995",
    ("lei", None, "7713"): "lei-7713-1988",
    ("lei", None, "5172"): "lei-5172-1966",
    ("lei", None, "15270"): "lei-15270-2025",
    ("decreto", None, "9580"): "decreto-9580-2018",
    ("instrucao_normativa", "RFB", "1500"): "in-rfb-1500-2014",
    ("instrucao_normativa", "RFB", "2178"): "in-rfb-2178-2024",
}
#: Short prefixes of generated document ids (``lei-9250-1995``, ``in-rfb-1500-2014``).
_ID_PREFIX = {"instrucao_normativa": "in", "lei_complementar": "lc", "decreto_lei": "decreto-lei",
              "medida_provisoria": "mp", "emenda_constitucional": "ec", "solucao_de_consulta": "sc",
              "parecer_normativo": "pn", "ato_declaratorio": "ad"}


class Act(NamedTuple):
    """A cited act: ``type`` (``lei``, ``decreto``, ``instrucao_normativa``, ``self`` ...), ``number``
    (digits, ``"2158-35"``), ``year``, ``issuer`` (``RFB``, ``SRF`` ...), ``alias`` (``RIR/2018``, ``CTN``)
    and the matched ``text``."""

    type: str
    number: str | None
    year: int | None
    issuer: str | None = None
    alias: str | None = None
    text: str = ""


def act_key(act: Act) -> tuple[str, str | None, str | None]:
    """``(type, issuer, number)``: the identity of a numbered act (federal laws and decrees are numbered
    in one series each, so the year only confirms it; instruções normativas also need the issuer)."""
    issuer = act.issuer if act.type in ("instrucao_normativa", "portaria", "ato_declaratorio",
                                        "solucao_de_consulta", "parecer_normativo", "resolucao") else None
    return act.type, issuer, act.number


def doc_id(act: Act | None, table: dict | None = None) -> str | None:
    """The document id of ``act``: from ``table`` (default :data:`DOC_IDS`, keyed by :func:`act_key`),
    falling back to the issuer-less key; None for an act not in the table, ``self`` or None."""
    if act is None or act.type == "self" or act.number is None:
        return None
    table = DOC_IDS if table is None else table
    key = act_key(act)
    if key in table:
        return table[key]
    if key[1] is not None and (key[0], None, key[2]) in table:
        return table[(key[0], None, key[2])]
    if key[1] is None:  # an IN cited without issuer: the one issuer-qualified entry of that number
        hits = [v for (t, _, n), v in table.items() if t == key[0] and n == key[2]]
        if len(hits) == 1:
            return hits[0]
    return None


def canonical_id(act: Act) -> str | None:
    """A readable id built from the act itself: ``lei-9250-1995``, ``in-rfb-1500-2014`` (None without a
    number or year)."""
    if act.number is None or act.year is None or act.type == "self":
        return None
    prefix = _ID_PREFIX.get(act.type, act.type)
    issuer = f"-{act.issuer.lower().replace('/', '-')}" if act.issuer and act_key(act)[1] else ""
    return f"{prefix}{issuer}-{act.number}-{act.year}"


def _year(s: str | None) -> int | None:
    if not s:
        return None
    y = int(s)
    return y if y >= 100 else (1900 + y if y > 30 else 2000 + y)


@functools.lru_cache(maxsize=256)
def _type_of(words: str) -> str:
    s = re.sub(r"\s+", " ", words.strip())
    return next(tp for rx, tp in _TYPE_OF if rx.match(s))


def _act_from_match(m: re.Match) -> Act:
    t = _type_of(m.group("type"))
    issuers = [i.strip("/") for i in m.group("issuer").split()]
    issuer = "/".join(i for i in issuers if i and i != "Interna") or None
    number = re.sub(r"[.\s]", "", m.group("num"))
    year = _year(m.group("y1") or m.group("y2") or m.group("y3"))
    return Act(t, number, year, issuer, None, m.group(0))


def _alias_from_match(m: re.Match) -> Act:
    i = int(m.lastgroup[1:]) if m.lastgroup and m.lastgroup.startswith("a") and m.lastgroup[1:].isdigit() else None
    if i is None:
        i = next(k for k in range(len(ALIASES)) if m.group(f"a{k}"))
    t, number, year = ALIASES[i][1]
    text = m.group(0)
    if t == "rir":
        y = _year(m.group("rir1") or m.group("rir2"))
        alias = f"RIR/{y}" if y else "RIR"
        if y in RIR_EDITIONS:
            t, number, year = RIR_EDITIONS[y]
        else:
            t, number, year = "decreto", None, y
        return Act(t, number, year, None, alias, text)
    alias = {"lei-5172": "CTN", "constituicao": "CF/88", "lei-13105": "CPC", "lei-10406": "CC",
             "decreto_lei-5452": "CLT"}.get(f"{t}-{number}" if number else t)
    return Act(t, number, year, None, alias, text)


# --------------------------------------------------------------------------- dispositivo markers

_NUM = r"\d{1,3}(?:\.\d{3})+|\d{1,4}"
_ORD = r"(?:\s?[º°ª](?![a-zA-Z])|o(?![a-zA-Z])|\.[º°])?"
_SUF = r"(?:[-–](?P<suf>[A-Z])(?![a-zA-Z]))?"
_ARAB = re.compile(r"(?P<n>" + _NUM + r")" + _ORD + _SUF)
_ROMAN = re.compile(r"(?P<r>[IVXLC]{1,7})(?:[-–](?P<rsuf>[A-Z]))?(?![a-zA-Z0-9])")
_ROMAN_OK = re.compile(r"^(?=[IVXLC])(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$|^C{1,3}(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
_LETTER = re.compile(r"[“\"‘'«]\s*(?P<q>[a-z])\s*(?:[”\"’'»]|(?=[,;.\s)]))|(?P<b>[a-z])(?:\)|(?=[\s,;.]|$))")
_QLETTER = re.compile(r"[“\"‘'«]\s*(?P<q>[a-z])\s*(?:[”\"’'»]|(?=[,;.\s)]))")

#: Any dispositivo marker: where a chain of a citation may start.
MARKER_RE = re.compile(
    r"(?P<art>\b(?:[Aa]rts?\.?|ARTS?\.?|[Aa]rtigos?|ARTIGOS?)(?=\s*\d))"
    r"|(?P<par>§§?)"
    r"|(?P<uni>\b[Pp]ar[áa]grafo\s+[úu]nico\b|\bPAR[ÁA]GRAFO\s+[ÚU]NICO\b)"
    r"|(?P<pars>\b[Pp]ar[áa]grafos?(?=\s+\d))"
    r"|(?P<inc>\b(?:[Ii]ncisos?|INCISOS?|inc\.)(?=\s+[IVXLC]))"
    r"|(?P<ali>\b(?:[Aa]l[íi]neas?|AL[ÍI]NEAS?)\b)"
    r"|(?P<item>\b(?:[Ii]tens|[Ii]tem)(?=\s+\d))"
    r"|(?P<caput>\bcaput\b)"
)
_LEVEL = {"art": 1, "par": 2, "uni": 2, "pars": 2, "caput": 2, "inc": 3, "ali": 4, "item": 5}
_WS = re.compile(r"\s*")
_LIST_SEP = re.compile(r"\s*(?:,\s*(?:e|ou)\s+|,\s*|\s+e/ou\s+|\s+e\s+|\s+ou\s+)")
_RANGE_SEP = re.compile(r"\s+(?:a|até)\s+")
_DOWN = re.compile(r"\s*,?\s*(?:d[oa]s?|n[oa]s?)\s+(?:mesmo\s+|referido\s+)?")
_CHAIN_JOIN = re.compile(r"\s*(?:,\s*)?(?:e\s+|ou\s+)?(?:(?:n|d|a)[oa]s?\s+|ao\s+|aos\s+|à\s+|às\s+)?")
_FORWARD = re.compile(r"\s*,?\s*(?:d[oa]s?\s+(?:referid[oa]\s+|mencionad[oa]\s+|citad[oa]\s+)?"
                      r"|(?=(?:[dn]est[ae]|d[ao]\s+present[e])\s))", re.I)
_ACT_BEFORE_GAP = re.compile(r"[\s,;:–—\-(]*(?:e\s+)?")
_SELF_ARTICLE = re.compile(r"\s*,?\s*(?:dest[ae]|do\s+mesmo|da\s+mesma)\s+(?:artigo|art\.|par[áa]grafo|inciso|al[íi]nea)\b",
                           re.I)


class Citation(NamedTuple):
    """One cited provision.

    Attributes
    ----------
    act : Act or None
        The cited act (None: a reference inside the enclosing act, e.g. ``do art. 78``).
    article, paragraph, inciso, alinea, item : str or None
        ``"3-A"``, ``"1042"``; ``"1"``, ``"único"``; ``"II"``; ``"b"``; ``"10"`` (None: not cited).
    caput : bool
        The citation names the article's caput (``art. 91, caput``).
    from_range : bool
        Expanded from a range (``arts. 128 a 153``).
    start, end : int
        Character span of the chain (or act mention) in the parsed text.
    doc_id : str or None
        ``doc_id(act)``: the document id, when the act is in the alias table given to :func:`parse`.
    """

    act: Act | None
    article: str | None
    paragraph: str | None = None
    inciso: str | None = None
    alinea: str | None = None
    item: str | None = None
    caput: bool = False
    from_range: bool = False
    start: int = 0
    end: int = 0
    doc_id: str | None = None

    @property
    def level(self) -> str:
        """``act`` (no article), ``article`` (an article alone) or ``dispositivo`` (a part of one)."""
        if self.article is None:
            return "act"
        if self.paragraph is None and self.inciso is None and self.alinea is None and self.item is None \
                and not self.caput:
            return "article"
        return "dispositivo"

    @property
    def key(self) -> tuple:
        """``(doc_id, article, paragraph, inciso, alinea, item)``: what two citations share when equal."""
        return (self.doc_id, self.article, self.paragraph, self.inciso, self.alinea, self.item)

    def to_dict(self) -> dict:
        """The fields of a structured reference (``doc_id, article, paragraph, inciso, alinea``, plus
        ``item``, ``caput``, ``from_range`` and the act)."""
        return {"doc_id": self.doc_id, "article": self.article, "paragraph": self.paragraph,
                "inciso": self.inciso, "alinea": self.alinea, "item": self.item, "caput": self.caput,
                "from_range": self.from_range, "level": self.level,
                "act": None if self.act is None else self.act._asdict()}


def normalize_article(s: str) -> str:
    """``"3º-A"`` -> ``"3-A"``, ``"1.042"`` -> ``"1042"``, ``"12 - A"`` -> ``"12-A"``."""
    m = _ARAB.fullmatch(s.strip())
    if m is None:
        raise ValueError(f"not an article number: {s!r}")
    return m.group("n").replace(".", "") + (f"-{m.group('suf')}" if m.group("suf") else "")


# --------------------------------------------------------------------------- headings


class Heading(NamedTuple):
    """A line that opens a dispositivo: ``kind`` (``art``, ``par``, ``inc``, ``ali``, ``item``), the
    normalised ``number`` (``"3-A"``, ``"único"``, ``"IV"``, ``"b"``), ``numbers`` (``Arts. 28 e 29``)
    and ``end`` (offset in the line after the marker)."""

    kind: str
    number: str
    numbers: tuple[str, ...]
    end: int


_HEAD_ART = re.compile(r"\s*[“\"]?\s*(?:Art(?:igo)?|ART(?:IGO)?|rt)s?\s?\.?\s*(?P<n>" + _NUM + r")" + _ORD + _SUF
                       + r"(?P<more>(?:\s*(?:,|e|a)\s*\d{1,4}" + _ORD + r")*)\s*\.?")
_HEAD_PAR = re.compile(r"\s*[“\"]?\s*§\s*(?P<n>\d{1,3})" + _ORD + _SUF + r"\s*\.?")
_HEAD_PARS = re.compile(r"\s*§§\s*(?P<n>\d{1,3})" + _ORD + r"(?P<more>(?:\s*(?:,|e|a)\s*\d{1,3}" + _ORD + r")+)\s*\.?")
_HEAD_UNI = re.compile(r"\s*[“\"]?\s*(?:Par[áa]grafo|PAR[ÁA]GRAFO)\s+(?:[úu]nico|ÚNICO)\s*[.:\-–—]?")
_HEAD_INC = re.compile(r"\s*[“\"]?\s*(?P<r>[IVXLC]{1,7})(?:\s?-\s?(?P<suf>[A-Z])(?=\s*[-–—]))?\s*[-–—]+")
_HEAD_ALI = re.compile(r"\s*[“\"]?\s*(?P<l>[a-z])(?:-(?P<suf>[A-Z]))?\)")
_HEAD_ITEM = re.compile(r"\s*(?P<n>\d{1,2})(?:[.)]|\s?[-–—])\s")
_GOES_ON = re.compile(r"\s*(?:[A-ZÀ-Ý0-9“\"«(\[–—\-]|\.{3}|…|$)")


def heading_match(line: str) -> Heading | None:
    """The dispositivo a line opens, or None (a citation, or ordinary text).

    ``Art. 7º O imposto`` / ``Art 31.`` / ``rt. 758.`` (a source's lost letter) / ``Arts. 28 e 29
    (Revogados …)`` / ``§ 4o`` / ``Parágrafo único.`` / ``IV -`` / ``IV-A –`` / ``b)`` / ``1.`` open a
    dispositivo. After an artigo or parágrafo marker the text must go on with a capital letter, digit,
    quote, bracket, dash or nothing: ``§ 1º do art. 7º`` and ``Art. 5º da Lei nº …`` are citations.

    Notes
    -----
    Items (``1.``) are reported whatever their context; a caller keeps them only inside an alínea.
    """
    m = _HEAD_ART.match(line)
    if m and not line.lstrip(" “\"").startswith(("art", "artigo")):
        if _GOES_ON.match(line, m.end()):
            first = m.group("n").replace(".", "") + (f"-{m.group('suf')}" if m.group("suf") else "")
            more = tuple(re.findall(r"\d{1,4}", m.group("more") or ""))
            if more and re.search(r"\ba\b", m.group("more")):
                more = tuple(str(k) for k in range(int(first.split("-")[0]) + 1, int(more[-1]) + 1))
            return Heading("art", first, (first,) + more, m.end())
        return None
    m = _HEAD_PARS.match(line)
    if m:
        if _GOES_ON.match(line, m.end()):
            nums = (m.group("n"),) + tuple(re.findall(r"\d{1,3}", m.group("more")))
            return Heading("par", nums[0], nums, m.end())
        return None
    m = _HEAD_PAR.match(line)
    if m:
        if _GOES_ON.match(line, m.end()):
            n = m.group("n") + (f"-{m.group('suf')}" if m.group("suf") else "")
            return Heading("par", n, (n,), m.end())
        return None
    m = _HEAD_UNI.match(line)
    if m:
        if _GOES_ON.match(line, m.end()):
            return Heading("par", "único", ("único",), m.end())
        return None
    m = _HEAD_INC.match(line)
    if m and _ROMAN_OK.match(m.group("r")):
        n = m.group("r") + (f"-{m.group('suf')}" if m.group("suf") else "")
        return Heading("inc", n, (n,), m.end())
    m = _HEAD_ALI.match(line)
    if m:
        n = m.group("l") + (f"-{m.group('suf')}" if m.group("suf") else "")
        return Heading("ali", n, (n,), m.end())
    m = _HEAD_ITEM.match(line)
    if m:
        return Heading("item", m.group("n"), (m.group("n"),), m.end())
    return None


def is_citation(text: str) -> bool:
    """Does ``text`` start with a citation of a dispositivo (not a heading that opens one)?

    True for ``§ 1º do art. 7º``, ``Art. 5º da Lei nº 9.250``, ``art. 3º``, ``inciso II do caput``,
    ``arts. 3º e 4º``; False for ``Art. 7º O imposto …``, ``§ 1º Constituem …``, ``I - os rendimentos``,
    and for text that starts with no dispositivo marker.

    Examples
    --------
    >>> is_citation("§ 1º do art. 7º desta Lei"), is_citation("§ 1º Constituem rendimento bruto")
    (True, False)
    """
    s = text.lstrip(" “\"")
    m = MARKER_RE.match(s)
    if m is None:
        return False
    return heading_match(s) is None


# --------------------------------------------------------------------------- the chain parser


@dataclass
class _Comp:
    level: int
    values: list[tuple[str, bool]]  # (value, from_range)
    plural: bool
    start: int
    end: int
    link: str = "list"  # how it joins the component before it: "list" or "refine"


def _roman_ok(s: str) -> bool:
    return bool(_ROMAN_OK.match(s))


def _arab_value(m: re.Match) -> str:
    return m.group("n").replace(".", "") + (f"-{m.group('suf')}" if m.group("suf") else "")


def _values(text: str, pos: int, kind: str, multi: bool = True) -> tuple[list[tuple[str, bool]], int]:
    """The value list after a marker of ``kind`` (``arab``, ``roman``, ``letter``) from ``pos``:
    ``([(value, from_range)], end)``; ranges expanded. ``multi=False`` (a singular ``§``, ``inciso``,
    ``alínea``) reads one value or one range."""
    out: list[tuple[str, bool]] = []
    rx = {"arab": _ARAB, "roman": _ROMAN, "letter": _LETTER}[kind]
    p = _WS.match(text, pos).end()
    m = rx.match(text, p)
    if m is None or (kind == "roman" and not _roman_ok(m.group("r"))):
        return out, pos
    out.append((_val(m, kind), False))
    end = m.end()
    while True:
        r = _RANGE_SEP.match(text, end)
        if r:
            m2 = rx.match(text, r.end())
            if m2 and not (kind == "roman" and not _roman_ok(m2.group("r"))) and _same_list(text, m2, kind):
                out.extend(_expand(out[-1][0], _val(m2, kind), kind))
                end = m2.end()
                continue
        s = _LIST_SEP.match(text, end) if multi else None
        if s:
            m2 = rx.match(text, s.end())
            if m2 and not (kind == "roman" and not _roman_ok(m2.group("r"))) and _same_list(text, m2, kind):
                out.append((_val(m2, kind), False))
                end = m2.end()
                continue
        break
    return out, end


def _same_list(text: str, m: re.Match, kind: str) -> bool:
    """A value after a list separator continues the list unless it opens something else (a year, a
    lower-case word after a single letter)."""
    if kind == "letter":
        return m.group("q") is not None or text[m.end():m.end() + 1] == ")"
    if kind == "arab":
        nxt = text[m.end():m.end() + 12]
        return not re.match(r"\s+de\s+\d", nxt)
    return True


def _val(m: re.Match, kind: str) -> str:
    if kind == "arab":
        return _arab_value(m)
    if kind == "roman":
        return m.group("r") + (f"-{m.group('rsuf')}" if m.group("rsuf") else "")
    return m.group("q") or m.group("b")


_ROMAN_VAL = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}


def _roman_int(s: str) -> int:
    total = 0
    for a, b in zip(s, s[1:] + " "):
        v = _ROMAN_VAL[a]
        total += -v if b != " " and _ROMAN_VAL[b] > v else v
    return total


def _int_roman(n: int) -> str:
    out = ""
    for v, s in ((100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= v:
            out += s
            n -= v
    return out


def _expand(a: str, b: str, kind: str) -> list[tuple[str, bool]]:
    """Values after ``a`` up to ``b`` of a range (``a`` already listed): ``[(v, True)]``; a range whose
    ends carry letters (``3º-A a 3º-C``) keeps its end only."""
    if kind == "arab" and a.isdigit() and b.isdigit() and 0 < int(b) - int(a) <= 500:
        return [(str(k), True) for k in range(int(a) + 1, int(b) + 1)]
    if kind == "roman" and "-" not in a + b:
        x, y = _roman_int(a), _roman_int(b)
        if 0 < y - x <= 100:
            return [(_int_roman(k), True) for k in range(x + 1, y + 1)]
    if kind == "letter" and len(a) == len(b) == 1 and 0 < ord(b) - ord(a) <= 26:
        return [(chr(k), True) for k in range(ord(a) + 1, ord(b) + 1)]
    return [(b, True)]


def _component(text: str, pos: int, prev: _Comp | None, art_list: bool) -> _Comp | None:
    """One component starting at ``pos`` (a marker with its values, or a bare value in a list)."""
    p = _WS.match(text, pos).end()
    m = MARKER_RE.match(text, p)
    if m:
        kind = m.lastgroup
        level = _LEVEL[kind]
        if kind == "caput":
            return _Comp(2, [("caput", False)], False, p, m.end())
        if kind == "uni":
            return _Comp(2, [("único", False)], False, p, m.end())
        vk = {"art": "arab", "par": "arab", "pars": "arab", "inc": "roman", "ali": "letter", "item": "arab"}[kind]
        word = m.group(0).lower().rstrip(".")
        plural = word in ("§§", "arts", "artigos", "parágrafos", "paragrafos", "incisos", "alíneas", "alineas", "itens")
        vals, end = _values(text, m.end(), vk, multi=plural or kind == "art")
        if not vals:
            return None
        return _Comp(level, vals, plural or len(vals) > 1, p, end)
    if prev is None:
        return None
    # a bare value continuing a list: a quoted letter (alínea), a roman numeral (inciso), a number
    if _QLETTER.match(text, p) and prev.level in (3, 4):
        vals, end = _values(text, p, "letter")
        return _Comp(4, vals, len(vals) > 1, p, end) if vals else None
    mr = _ROMAN.match(text, p)
    if mr and _roman_ok(mr.group("r")) and prev.level in (1, 2, 3):
        vals, end = _values(text, p, "roman")
        return _Comp(3, vals, len(vals) > 1, p, end)
    ma = _ARAB.match(text, p)
    if ma and not re.match(r"\s+de\s", text[ma.end():ma.end() + 5]):
        if art_list:  # "arts. 53, inciso II, § 4º, 54, 65"
            vals, end = _values(text, p, "arab")
            return _Comp(1, vals, len(vals) > 1, p, end)
        if prev.level == 2 and prev.values[-1][0] not in ("caput", "único"):  # "§ 1º e 2º"
            vals, end = _values(text, p, "arab", multi=False)
            return _Comp(2, vals, False, p, end)
    return None


def _chain(text: str, pos: int) -> tuple[list[_Comp], int]:
    """The components of the citation chain starting at ``pos`` and where it ends."""
    comps: list[_Comp] = []
    end = pos
    art_list = False
    p = pos
    while True:
        prev = comps[-1] if comps else None
        c = _component(text, p, prev, art_list)
        if c is None:
            break
        if prev is not None and c.level < prev.level and _DOWN.fullmatch(text, end, p):
            c.link = "up"  # running order: "inciso II do art. 8º"
        elif prev is not None and c.level > prev.level and re.search(r"\be\b", text[end:p]):
            c.link = "and"  # "art. 8º e § 1º": the artigo (its caput) and its paragraph
        comps.append(c)
        end = c.end
        if c.level == 1 and c.plural:
            art_list = True
        # what may follow: a list separator and a component, or "do/da" and a higher-level marker
        nxt = None
        s = _LIST_SEP.match(text, end)
        if s:
            q = _WS.match(text, s.end()).end()
            if MARKER_RE.match(text, q) or _QLETTER.match(text, q) or _ROMAN.match(text, q) or _ARAB.match(text, q):
                nxt = s.end()
        if nxt is None:
            d = _DOWN.match(text, end)
            if d:
                q = _WS.match(text, d.end()).end()
                mk = MARKER_RE.match(text, q)
                if mk and _LEVEL[mk.lastgroup] < c.level:
                    nxt = d.end()
        if nxt is None:
            break
        p = nxt
    return comps, end


def _resolve(comps: list[_Comp]) -> list[dict]:
    """Citations (dicts of levels) of a chain: running-order groups turned around, then list order."""
    seq: list[_Comp] = []
    i = 0
    while i < len(comps):  # group running-order runs: c_i up c_{i+1} up ... -> ascending refinements
        j = i
        while j + 1 < len(comps) and comps[j + 1].link == "up":
            j += 1
        group = comps[i:j + 1][::-1]
        if len(group) > 1:
            for k, c in enumerate(group):
                c.link = "refine" if k else "list"
        seq.extend(group)
        i = j + 1
    out: list[dict] = []
    cur: dict[int, list[tuple[str, bool]]] = {}
    deepest = 0

    def emit() -> None:
        if not deepest:
            return
        base = {lv: cur[lv][-1] for lv in cur if lv < deepest}
        for v in cur[deepest]:
            out.append({**base, deepest: v})

    for c in seq:
        if c.link == "and" and deepest and c.level > deepest:
            n = len(out)
            emit()  # the text before "e" is cited by itself too: an artigo, as its caput
            if deepest == 1:
                out[n:] = [{**x, 2: ("caput", False)} for x in out[n:]]
        if c.level > deepest:
            if deepest and len(cur[deepest]) > 1:  # only the last value of a list is refined
                keep = cur[deepest]
                cur[deepest] = keep[:-1]
                emit()
                cur[deepest] = keep[-1:]
            cur[c.level] = c.values
            deepest = c.level
        else:
            emit()
            for lv in [lv for lv in cur if lv >= c.level]:
                del cur[lv]
            cur[c.level] = c.values
            deepest = c.level
    emit()
    return out


_ACT_ANY = re.compile(f"(?:{ACT_RE.pattern})", re.IGNORECASE)


def _acts(text: str) -> list[tuple[int, int, Act, bool]]:
    """Every act mention: ``(start, end, act, approving)``, appositions merged."""
    found: list[tuple[int, int, Act]] = []
    for m in _ACT_ANY.finditer(text):
        found.append((m.start(), m.end(), _act_from_match(m)))
    for m in _ALIAS_RE.finditer(text):
        if not any(a <= m.start() < b for a, b, _ in found):
            found.append((m.start(), m.end(), _alias_from_match(m)))
    for m in _SELF_RE.finditer(text):
        if not any(a <= m.start() < b for a, b, _ in found):
            what = re.sub(r"\s+", " ", m.group("what").lower())
            found.append((m.start(), m.end(), Act("self", None, None, None, what, m.group(0))))
    found.sort(key=lambda x: x[0])
    merged: list[tuple[int, int, Act, bool]] = []
    for a, b, act in found:
        if merged:
            pa, pb, pact, pappr = merged[-1]
            gap = text[pb:a]
            if re.fullmatch(r"[\s,]*[-–—][\s]*", gap) and act.alias and pact.type != "self":
                merged[-1] = (pa, b, pact if pact.number else act, pappr)  # apposition: "Lei nº 5.172 - CTN"
                continue
        approving = bool(_APPROVING.search(text[max(0, a - 40):a]))
        merged.append((a, b, act, approving))
    return merged


def _line_start(text: str, pos: int) -> bool:
    k = text.rfind("\n", 0, pos)
    return not text[k + 1:pos].strip(" \t“\"")


def parse(text: str, *, table: dict | None = None, acts: bool = True) -> list[Citation]:
    """Every citation in ``text``, in order.

    Parameters
    ----------
    text : str
        Running text, a citation list, or one human-written citation string.
    table : dict, optional
        Alias table for :func:`doc_id` (default :data:`DOC_IDS`).
    acts : bool, default: True
        Also return act-level citations (an act cited with no dispositivo).

    Returns
    -------
    list of Citation
        Dispositivos in text order (each value of a list or range its own citation), act-level
        citations where an act is cited alone. Headings of the text's own dispositivos are skipped
        (:func:`heading_match`).
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a string; got {type(text).__name__}.")
    act_spans = _acts(text)
    chains: list[tuple[int, int, list[dict]]] = []
    pos = 0
    for m in MARKER_RE.finditer(text):
        if m.start() < pos:
            continue
        if _line_start(text, m.start()):
            k = text.rfind("\n", 0, m.start()) + 1
            e = text.find("\n", m.start())
            line = text[k:len(text) if e < 0 else e]
            h = heading_match(line)
            if h is not None and line[h.end:].strip():
                pos = m.end()
                continue
        comps, end = _chain(text, m.start())
        if not comps:
            continue
        cits = _resolve(comps)
        if all(1 not in c for c in cits):
            sa = _SELF_ARTICLE.match(text, end)
            end = sa.end() if sa else end
        chains.append((m.start(), end, cits))
        pos = end
    # bind chains to acts: forward ("art. 6º da Lei ..."), else the act just before, else a later
    # chain's forward act in the same clause
    act_starts = [x[0] for x in act_spans]
    act_ends = [x[1] for x in act_spans]
    reach = list(act_ends)  # where text bound to each act ends so far
    bound: list[Act | None] = [None] * len(chains)
    used: set[int] = set()
    pending: list[int] = []
    for ci, (a, b, cits_) in enumerate(chains):
        has_article = any(1 in c for c in cits_)
        fwd = _FORWARD.match(text, b)
        if fwd:
            k = bisect.bisect_left(act_starts, fwd.end())
            if k < len(act_starts) and act_starts[k] == fwd.end() and not act_spans[k][3]:
                bound[ci] = act_spans[k][2]
                if has_article:
                    used.add(k)
                for pj in pending:
                    bound[pj] = bound[ci]
                pending = []
                continue
        prev = bisect.bisect_right(act_ends, a) - 1
        while prev >= 0 and act_spans[prev][3]:  # an approving act: bind to the one before it
            prev -= 1
        if prev >= 0 and _ACT_BEFORE_GAP.fullmatch(text, reach[prev], a):
            bound[ci] = act_spans[prev][2]
            if has_article:
                used.add(prev)
            reach[prev] = b
            pending = []
            continue
        if pending and not _CHAIN_JOIN.fullmatch(text, chains[pending[-1]][1], a):
            pending = []
        pending.append(ci)
    out: list[Citation] = []
    for (a, b, cits), act in zip(chains, bound):
        did = doc_id(act, table)
        for c in cits:
            art = c.get(1)
            if art is None:  # "§ 2º deste artigo": inside the enclosing article, nothing to resolve
                continue
            par = c.get(2)
            caput = par is not None and par[0] == "caput"
            vals = [c.get(lv) for lv in (3, 4, 5)]
            rng = any(v[1] for v in c.values())
            out.append(Citation(act, None if art is None else art[0], None if par is None or caput else par[0],
                                *(None if v is None else v[0] for v in vals), caput=caput, from_range=rng,
                                start=a, end=b, doc_id=did))
    if acts:
        for k, (a, b, act, approving) in enumerate(act_spans):
            if k in used or approving or act.type == "self":
                continue
            if any(x <= a < y for x, y, _ in chains):
                continue
            out.append(Citation(act, None, start=a, end=b, doc_id=doc_id(act, table)))
        out.sort(key=lambda c: (c.start, c.end))
    return out


def agreement(questions: Iterable[dict], *, known: Iterable[str] | None = None, table: dict | None = None) -> dict:
    """Agreement of :func:`parse` on each question's ``raw`` strings with its structured ``references``.

    Parameters
    ----------
    questions : iterable of dict
        Records with ``qid`` and ``references`` (``doc_id, article, paragraph, inciso, alinea, raw``), as in
        the shared ``questions.jsonl``.
    known : iterable of str, optional
        Document ids compared (default: every ``doc_id`` of the structured references): citations of
        other acts are neither expected nor counted.

    Returns
    -------
    dict
        For ``"article"`` (``(doc_id, article)``) and ``"dispositivo"`` (``(doc_id, article, paragraph,
        inciso, alinea)``): ``both``, ``structured_only``, ``parsed_only``, ``agreement`` (= both / union,
        over distinct keys per question) and ``disagreements`` (``qid``, ``raw``, ``structured_only``,
        ``parsed_only``). A caput-only citation compares as its article (the structured format has no
        caput).
    """
    questions = list(questions)
    known_ids = set(known) if known is not None else {r["doc_id"] for q in questions for r in q["references"]}
    out = {lv: {"both": 0, "structured_only": 0, "parsed_only": 0, "disagreements": []}
           for lv in ("article", "dispositivo")}
    for q in questions:
        raws = list(dict.fromkeys(r["raw"] for r in q["references"]))
        cits = [c for raw in raws for c in parse(raw, table=table) if c.article and c.doc_id in known_ids]
        refs = [r for r in q["references"] if r.get("article")]
        for lv, width in (("article", 2), ("dispositivo", 5)):
            got = {(c.doc_id, c.article, c.paragraph, c.inciso, c.alinea)[:width] for c in cits}
            want = {(r["doc_id"], r["article"], r.get("paragraph"), r.get("inciso"), r.get("alinea"))[:width]
                    for r in refs}
            o = out[lv]
            o["both"] += len(got & want)
            o["structured_only"] += len(want - got)
            o["parsed_only"] += len(got - want)
            if got != want:
                o["disagreements"].append({"qid": q["qid"], "raw": raws,
                                           "structured_only": sorted(map(list, want - got), key=str),
                                           "parsed_only": sorted(map(list, got - want), key=str)})
    for o in out.values():
        union = o["both"] + o["structured_only"] + o["parsed_only"]
        o["agreement"] = o["both"] / union if union else float("nan")
    return out
