"""Acts of Brazilian legal citations: the act grammar, aliases, document ids (part of :mod:`ragcov_data.legal.citations`)."""
from __future__ import annotations

import functools
import re
from typing import NamedTuple

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
    (r"resolu[çc][ãa]o(?:\s+normativa)?|(?-i:REN)", "resolucao"),
    (r"norma\s+(?:de\s+organiza[çc][ãa]o|organizacional)", "norma_de_organizacao"),
    (r"instru[çc][ãa]o\s+administrativa", "instrucao_administrativa"),
]
#: An issuer: an acronym (RFB, SRF, CST, PGFN/CRJ, SRRF03/Disit) or a known name (Cosit, Conjunta).
_ISSUERS = (r"(?-i:[A-Z][A-Za-z0-9]*[A-Z0-9](?:[/-][A-Z][A-Za-z0-9]+)*/?|Cosit|Cosar|Codac|Conjunta|Interna|"
            r"Interministerial)")
_MONTHS = r"(?:janeiro|fevereiro|mar[çc]o|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro)"
#: A numbered act: type, issuer, number and date (case-insensitive).
ACT_RE = re.compile(
    r"\b(?P<type>" + "|".join(f"(?:{p})" for p, _ in _ACT_TYPES) + r")"
    r"(?P<issuer>(?:\s+" + _ISSUERS + r")*)"
    r"(?:\s*\((?-i:[A-Z][A-Za-z]{1,7})\))?"  # an acronym in parentheses: "Resolução Normativa (REN) 273/2007"
    r"\s*(?:n\.?\s*[º°o]\.?|n[º°o]\.?|n\.|[º°]|número)?\s*"
    r"(?P<num>\d{1,3}(?:\.\s?\d{3})+(?:-\s?\d{1,3}|-(?-i:[A-Z])\b)?|\d+(?:-\s?\d{1,3}|-(?-i:[A-Z])\b)?)"
    r"(?![\d.,]\d)"  # "9.250", "9. 249" (a stray space), "2.158-35", "3.890-A"; any length (refused by range)
    r"(?P<date>,?\s+de\s+(?:\d{1,2}[º°o]?\s+(?:de\s+)?" + _MONTHS + r"\s+de\s+)?(?P<y1>\d{4})\b"
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
    # the Constitution by every common name; a state constitution ("Constituição Estadual") is not it
    # (capitalised: "a constituição de garantia" is a common noun)
    (r"(?:(?:Constitui[çc][ãa]o|CONSTITUI[ÇC][ÃA]O)(?!\s+(?i:Estadual|do\s+Estado|dos?\s+Estados?))"
     r"(?:\s+(?i:Federal)|\s+(?i:da\s+Rep[úu]blica)(?:\s+(?i:Federativa\s+do\s+Brasil))?)?"
     r"(?:\s+(?i:de)\s+1988|\s*/\s*(?:88|1988)\b)?"
     r"|\b(?:CF|CRFB)(?:\s*/\s*(?:88|1988)\b|(?![\w/-]))|\b(?i:Carta\s+Magna)\b)", ("constituicao", None, 1988)),
    (r"(?:C[óo]digo\s+de\s+Processo\s+Civil|\bCPC\b)", ("lei", "13105", 2015)),
    (r"C[óo]digo\s+Civil", ("lei", "10406", 2002)),
    (r"(?:Consolida[çc][ãa]o\s+das\s+Leis\s+do\s+Trabalho|\bCLT\b)", ("decreto_lei", "5452", 1943)),
    # an unnumbered act named by its kind: the internal rules of a body ("Regimento Interno da ANEEL")
    (r"\bRegimento\s+Interno\b", ("regimento_interno", None, None)),
]
#: Editions of the income-tax regulation (``RIR/<year>``): the decree that approved it.
RIR_EDITIONS = {2018: ("decreto", "9580", 2018), 1999: ("decreto", "3000", 1999), 1994: ("decreto", "1041", 1994)}
_ALIAS_RE = re.compile("|".join(f"(?P<a{i}>{p})" for i, (p, _) in enumerate(ALIASES)))
_SELF_RE = re.compile(r"\b(?:dest[ae]|nest[ae]|d[ao]\s+present[e]|n[ao]\s+present[e])\s+"
                      r"(?P<what>Lei(?:\s+Complementar)?|Decreto(?:-Lei)?|Regulamento|Instru[çc][ãa]o\s+(?:Normativa|"
                      r"Administrativa)|"
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
                                        "solucao_de_consulta", "parecer_normativo", "resolucao",
                                        "norma_de_organizacao") else None
    return act.type, issuer, act.number


#: Highest number of each federal series (2026): a larger one names no real act. Decretos are not
#: checked (the pre-1991 series reached 99.999).
MAX_ACT_NUMBER = {"lei": 16000, "lei_complementar": 250, "decreto_lei": 2500, "medida_provisoria": 1400,
                  "emenda_constitucional": 200}


def act_reason(act: Act) -> str | None:
    """Why ``act`` names no real act (``number_out_of_range``, ``year_out_of_range``), or None."""
    head = (act.number or "").split("-")[0]
    if head.isdigit() and (len(head) > 6 or (act.type in MAX_ACT_NUMBER and int(head) > MAX_ACT_NUMBER[act.type])):
        return "number_out_of_range"  # a number of seven digits or more is no act's, whatever its series
    if act.year is not None and not 1800 <= act.year <= 2100:
        return "year_out_of_range"
    return None


def resolve_act(act: Act | None, table: dict | None = None) -> tuple[str | None, str | None]:
    """``(doc_id, reason)``: the document of ``act`` (see :func:`doc_id`), or None and why not.

    The year is checked against the document the table names: ``Decreto nº 9.580, de 1942`` is not the
    2018 decree, so it resolves to nothing with reason ``year_mismatch`` (the year of a document is the
    ``-YYYY`` its id ends with right after the act's number, ``lei-9250-1995``; an id of another shape,
    ``lei-9250`` or ``ctn``, is not checked). An impossible act number or year gives
    ``number_out_of_range`` / ``year_out_of_range``.
    """
    if act is None:
        return None, None
    reason = act_reason(act)
    if reason is not None:
        return None, reason
    did = _lookup(act, table)
    if did is not None and act.year is not None and act.type != "constituicao":
        m = re.search(rf"(?<![0-9]){re.escape(act.number.lower())}-(\d{{4}})$", did.lower()) if act.number else None
        if m is not None and int(m.group(1)) != act.year:
            return None, "year_mismatch"
    return did, None


def doc_id(act: Act | None, table: dict | None = None) -> str | None:
    """The document id of ``act``: from ``table`` (default :data:`DOC_IDS`, keyed by :func:`act_key`),
    falling back to the issuer-less key; None for an act not in the table, ``self`` or None, or one whose
    year contradicts the document's (see :func:`resolve_act`)."""
    return resolve_act(act, table)[0]


def _lookup(act: Act, table: dict | None) -> str | None:
    if act is None or act.type == "self" or (act.number is None and act.type != "constituicao"):
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
    if act.type == "constituicao":
        return "constituicao-1988"
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
