"""LexML URNs and source keys read as citations (part of :mod:`ragcov_data.legal.citations`).

A LexML URN names an act and, after ``!``, one of its dispositivos (the national standard, lexml.gov.br)::

    urn:lex:br:federal:lei:2018-08-14;13709!art5_cpt_inc6
    \\____/ \\/ \\_____/ \\_/ \\________/ \\___/ \\____________/
    scheme local authority type  date   number  fragment

The fragment is a path of components joined by ``_``, each a kind and a number: ``art5`` (artigo 5º),
``cpt`` (the caput), ``par1`` (§ 1º), ``par1u`` (parágrafo único), ``inc6`` (inciso VI), ``ali1`` (alínea
"a"), ``ite2`` (item 2); a suffix ``-k`` is the k-th letter (``art55-12`` = art. 55-L, ``inc5-1`` = inciso
V-A). Structural components before the artigo (``prt``, ``liv``, ``tit``, ``cap``, ``sec``, ``sub``) are
read and passed over: artigos are numbered through the act. Descriptor components after the number
(``;anexo.1``) name an annex of the act. An ``@`` version or ``~`` form is read and ignored (a citation
names a provision, whatever its wording at a date).

A *source key* is how a citation list names a source that is not an act with a URN (an ANPD
enunciado, a case digest): a lower-case identifier with underscores, optionally ``:`` and a locator
(``enunciado_cd_anpd_1_2023``, ``informativo_jurisprudencia_stj_766:aresp 2.130.619-sp``). It is read as
an act of type ``"source"`` (no number), so it resolves to no corpus act and is listed, never dropped.

A string that starts with ``urn:lex:`` but breaks this grammar raises :class:`UrnError` naming the part
that is wrong: URNs are machine-written, so a broken one is a broken record, not a citation to skip.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from ragcov_data.errors import RagcovError
from ragcov_data.legal._citation_acts import Act
from ragcov_data.legal.roman import roman_numeral as _roman

__all__ = ["UrnError", "UrnParts", "is_urn", "is_source_key", "read_urn", "source_act", "urn_title", "URN_TYPES"]


class UrnError(RagcovError):
    """A string that starts like a LexML URN (``urn:lex:``) but breaks its grammar; the message names the
    URN, the part that is wrong and the shape expected."""


#: LexML document types -> the act types of :mod:`ragcov_data.legal.citations`.
URN_TYPES = {
    "lei": "lei", "lei.complementar": "lei_complementar", "lei.delegada": "lei_delegada",
    "decreto": "decreto", "decreto.lei": "decreto_lei", "medida.provisoria": "medida_provisoria",
    "constituicao": "constituicao", "emenda.constitucional": "emenda_constitucional",
    "resolucao": "resolucao", "resolucao.normativa": "resolucao", "instrucao.normativa": "instrucao_normativa",
    "portaria": "portaria", "ato.declaratorio": "ato_declaratorio", "parecer.normativo": "parecer_normativo",
}
#: Authorities that are a sphere of government (the issuer of their acts is left empty, as in ``Lei nº ...``).
_SPHERES = {"federal", "estadual", "municipal", "distrital"}
_HEAD = re.compile(r"urn:lex:", re.I)
_URN = re.compile(
    r"urn:lex:(?P<local>br(?:;[a-z0-9.-]+)*):(?P<auth>[a-z0-9.;-]+):(?P<type>[a-z.]+):"
    r"(?P<date>\d{4}(?:-\d{2}(?:-\d{2})?)?);(?P<num>[0-9][0-9.-]*)(?P<comps>(?:;[a-z0-9.-]+)*)"
    r"(?:@(?P<ver>[^!~]*))?(?:!(?P<frag>[^@~]*))?(?:@[^~]*)?(?:~.*)?")
_PART = re.compile(r"(?P<kind>[a-z]+)(?P<n>\d+)?(?P<u>u)?(?:-(?P<suf>\d+))?")
_STRUCTURAL = {"prt", "liv", "tit", "cap", "sec", "sub"}
#: Fragment kinds of a dispositivo -> the citation level (1 artigo, 2 parágrafo or caput, 3 inciso, 4 alínea, 5 item).
_LEVEL = {"art": 1, "cpt": 2, "par": 2, "inc": 3, "ali": 4, "ite": 5}
_SHAPE = ("expected urn:lex:br:<authority>:<type>:<yyyy-mm-dd>;<number>[!art<n>[_cpt|_par<n>|_par1u][_inc<n>]"
          "[_ali<n>][_ite<n>]], e.g. urn:lex:br:federal:lei:2018-08-14;13709!art5_cpt_inc6")
_KEY = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9.]+)+(?::\S.*)?")


class UrnParts(NamedTuple):
    """A LexML URN read: the act, the annex (``"I"``) and the dispositivo's levels as the citation parser
    writes them (``"55-L"``, ``"1"``/``"único"``, ``"V-A"``, ``"a"``, ``"2"``), and whether it names the caput."""

    act: Act
    annex: str | None
    article: str | None
    paragraph: str | None
    inciso: str | None
    alinea: str | None
    item: str | None
    caput: bool


def is_urn(text: str) -> bool:
    """Does ``text`` (stripped) start as a LexML URN does (``urn:lex:``, any case)?"""
    return bool(_HEAD.match(text.strip()))


def is_source_key(text: str) -> bool:
    """Is ``text`` (stripped) a source key: a lower-case identifier with underscores, optionally followed by
    ``:`` and a locator (``enunciado_cd_anpd_1_2023``)? Running text never has the underscore."""
    s = text.strip()
    return not is_urn(s) and _KEY.fullmatch(s) is not None


def source_act(text: str) -> Act:
    """The act a source key names: type ``"source"``, no number, the key as its text."""
    s = text.strip()
    year = re.search(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)", s.split(":")[0])
    return Act("source", None, int(year.group(1)) if year else None, None, None, s)


def _letter(k: int, urn: str, what: str) -> str:
    if not 1 <= k <= 26:
        raise UrnError(f"{urn!r}: {what} {k} has no letter (1 = a ... 26 = z); {_SHAPE}.")
    return chr(96 + k)


def _issuer(auth: str) -> str | None:
    """``federal`` -> None; ``autoridade.nacional.protecao.dados;conselho.diretor`` -> ``ANPD/CD`` (the
    initials of each body's words, as acts name their issuer)."""
    if auth in _SPHERES:
        return None
    return "/".join("".join(w[0] for w in body.split(".") if w).upper() for body in auth.split(";") if body)


def _levels(frag: str, urn: str) -> dict[int, str]:
    """The dispositivo levels of a fragment (``art5_cpt_inc6`` -> {1: "5", 2: "caput", 3: "VI"})."""
    out: dict[int, str] = {}
    for comp in frag.split("_"):
        m = _PART.fullmatch(comp)
        if m is None:
            raise UrnError(f"{urn!r}: the fragment component {comp!r} is not a kind and a number; {_SHAPE}.")
        kind, n, unico, suf = m.group("kind"), m.group("n"), m.group("u"), m.group("suf")
        if kind in _STRUCTURAL and not out:
            continue  # capítulo, seção ... before the artigo: artigos are numbered through the act
        if kind not in _LEVEL:
            raise UrnError(f"{urn!r}: the fragment component {comp!r} is no dispositivo (art, cpt, par, inc, ali, "
                           f"ite){' after the artigo' if kind in _STRUCTURAL else ''}; {_SHAPE}.")
        lv = _LEVEL[kind]
        if (kind == "cpt") != (n is None) or (unico and kind != "par") or (unico and n != "1"):
            raise UrnError(f"{urn!r}: {comp!r} is malformed (cpt takes no number, every other component one; "
                           f"'u' marks the parágrafo único, par1u); {_SHAPE}.")
        if lv in out or (out and lv < max(out)) or (not out and lv != 1):
            raise UrnError(f"{urn!r}: {comp!r} is out of order (art, then cpt or par, inc, ali, ite, each once); "
                           f"{_SHAPE}.")
        if n is not None and int(n) == 0 or suf is not None and int(suf) == 0:
            raise UrnError(f"{urn!r}: {comp!r} numbers from 1; {_SHAPE}.")
        out[lv] = _value(kind, n, unico, suf, urn)
    return out


def _value(kind: str, n: str | None, unico: str | None, suf: str | None, urn: str) -> str:
    """One level's value as the citation parser writes it."""
    if kind == "cpt":
        return "caput"
    if unico:
        return "único"
    k = int(n)
    if kind == "inc":
        if k > 3999:
            raise UrnError(f"{urn!r}: inciso {k} has no Roman numeral; {_SHAPE}.")
        head = _roman(k)
    elif kind == "ali":
        head = _letter(k, urn, "alínea")
    else:
        head = str(k)
    return head + (f"-{_letter(int(suf), urn, 'suffix').upper()}" if suf else "")


def read_urn(text: str) -> UrnParts:
    """Read a LexML URN (see the module docstring); :class:`UrnError` when it breaks the grammar."""
    urn = text.strip()
    low = urn.lower()
    m = _URN.fullmatch(low)
    if m is None:
        raise UrnError(f"{urn!r} is not a LexML URN of an act; {_SHAPE}.")
    kind = m.group("type")
    if kind not in URN_TYPES:
        raise UrnError(f"{urn!r}: the document type {kind!r} is not one ragcov reads ({sorted(URN_TYPES)}); "
                       f"{_SHAPE}.")
    act_type = URN_TYPES[kind]
    date = [int(x) for x in m.group("date").split("-")]
    if len(date) > 1 and not 1 <= date[1] <= 12 or len(date) > 2 and not 1 <= date[2] <= 31:
        raise UrnError(f"{urn!r}: the date {m.group('date')!r} is not a date (yyyy-mm-dd); {_SHAPE}.")
    year = date[0]
    number = m.group("num").replace(".", "")
    act = Act(act_type, None if act_type == "constituicao" else number, year, _issuer(m.group("auth")), None,
              urn.split("!")[0])
    annex = None
    for comp in filter(None, m.group("comps").split(";")):
        a = re.fullmatch(r"anexo(?:\.(\d+))?", comp)
        if a is None:
            raise UrnError(f"{urn!r}: the descriptor component {comp!r} is not read (only ';anexo.<n>'); {_SHAPE}.")
        annex = _roman(int(a.group(1))) if a.group(1) and int(a.group(1)) > 0 else "único"
    frag = m.group("frag")
    if frag is not None and not frag:
        raise UrnError(f"{urn!r}: nothing after '!'; {_SHAPE}.")
    lv = _levels(frag, urn) if frag else {}
    if frag and 1 not in lv:
        raise UrnError(f"{urn!r}: the fragment {frag!r} names no artigo (a capítulo or seção: cite its artigos); "
                       f"{_SHAPE}.")
    par = lv.get(2)
    return UrnParts(act, annex, lv.get(1), None if par in (None, "caput") else par, lv.get(3), lv.get(4), lv.get(5),
                    par == "caput")


_TITLES = {"lei": "Lei", "lei_complementar": "Lei Complementar", "lei_delegada": "Lei Delegada", "decreto": "Decreto",
           "decreto_lei": "Decreto-Lei", "medida_provisoria": "Medida Provisória",
           "emenda_constitucional": "Emenda Constitucional", "resolucao": "Resolução",
           "instrucao_normativa": "Instrução Normativa", "portaria": "Portaria", "ato_declaratorio": "Ato Declaratório",
           "parecer_normativo": "Parecer Normativo"}
_MONTH_NAMES = ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
                "novembro", "dezembro")


def urn_title(text: str) -> str:
    """The act a URN names, written as acts are cited: ``Lei nº 13.709, de 14 de agosto de 2018`` (the
    Constitution: ``Constituição Federal de 1988``); what :func:`ragcov_data.legal.citations.parse` reads back."""
    u = read_urn(text)
    act = u.act
    if act.type == "constituicao":
        return f"Constituição Federal de {act.year}"
    date = _URN.fullmatch(text.strip().lower()).group("date").split("-")
    num = act.number
    head, _, tail = num.partition("-")
    if head.isdigit() and len(head) > 3:
        head = f"{int(head):,}".replace(",", ".")
    issuer = f" {act.issuer}" if act.issuer else ""
    when = (f"{int(date[2])} de {_MONTH_NAMES[int(date[1]) - 1]} de {date[0]}" if len(date) == 3 else date[0])
    return f"{_TITLES.get(act.type, act.type)}{issuer} nº {head}{'-' + tail if tail else ''}, de {when}"
