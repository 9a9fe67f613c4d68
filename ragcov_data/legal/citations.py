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

*The Constitution* is an act of its own (type ``constituicao``) by every common name: ``Constituição``,
``Constituição Federal``, ``CF``, ``CF/88``, ``CRFB``, ``Carta Magna`` (a ``Constituição Estadual`` is not it).
*Annexes* are a level above the artigo (:attr:`Citation.annex`): ``Anexo VII, inciso VII``, ``art. 5º do
Anexo I``, ``Anexo Único``.

*Relative references* (``inciso III do § 3º deste artigo``, ``do caput``, ``deste parágrafo``, ``art. 5º desta
Lei``, a bare ``§ 2º``) are completed from ``parse(text, context=...)`` (the enclosing act and dispositivo);
without a context they are returned with ``reason="relative_without_context"``.

*LexML URNs* (``urn:lex:br:federal:lei:2018-08-14;13709!art5_cpt_inc6``, the national standard for naming
a provision) are read wherever a citation string is: a string that is one URN gives its one citation
(:func:`parse_urn`: ``art55-12`` is art. 55-L, ``par1u`` the parágrafo único, ``ali1`` alínea "a", ``cpt`` the
caput; see :mod:`ragcov_data.legal._citation_urn`); a broken URN raises :class:`UrnError`. A *source key*
(``enunciado_cd_anpd_1_2023``: how a citation list names a source that has no URN) is an act of type
``"source"``, cited as a whole, that no corpus holds.

*Checks*: a year that contradicts the document the table names for the act (``Decreto nº 9.580, de 1942``)
leaves the citation unresolved with ``reason="year_mismatch"``; an artigo, parágrafo or item number no real
act has (:data:`MAX_NUMBER`), or an act number beyond its series (:data:`MAX_ACT_NUMBER`), gives
``number_out_of_range``. Such citations are returned, never dropped, with ``doc_id`` None.

*Input* is read case-insensitively (``ART. 5º, § 2º, INCISO III, ALÍNEA B DA LEI Nº 9.250/1995``) and
Unicode-insensitively: NFD text, zero-width characters and non-breaking spaces read as NFC text with plain
spaces; spans (``start``, ``end``) are offsets in the text as given.

*Headings are not citations*: where a marker starts a line and opens the dispositivo itself (``Art. 7º O
imposto``, ``§ 1º Constituem``, ``Parágrafo único. O``, ``I -``, ``a)``), :func:`heading_match` says so and
:func:`parse` skips it; ``§ 1º do art. 7º`` or ``Art. 5º da Lei nº ...`` at a line start are citations
(:func:`is_citation`). The dispositivo parser and the provision locator use the same two functions.

Examples
--------
>>> from ragcov_data.legal.citations import parse
>>> [c.key for c in parse("Lei nº 7.713, de 22 de dezembro de 1988, arts. 3º, § 1º, e 6º, inciso XII")]
[('lei-7713-1988', '3', '1', None, None, None), ('lei-7713-1988', '6', None, 'XII', None, None)]
>>> [(c.act.type, c.act.number, c.article, c.paragraph, c.inciso)
...  for c in parse("no inciso IV do § 2º do art. 458 do Decreto-Lei nº 5.452, de 1943")]
[('decreto_lei', '5452', '458', '2', 'IV')]
"""
from __future__ import annotations

import bisect
import re
from typing import Any, Iterable, Mapping, NamedTuple

from ragcov_data.legal._citation_acts import (ACT_RE, ALIASES, DOC_IDS, MAX_ACT_NUMBER, RIR_EDITIONS,  # noqa: F401
                                              Act, _acts, _type_of, act_key, canonical_id, doc_id, resolve_act)
from ragcov_data.legal._citation_grammar import (MARKER_RE, _FORWARD, _ACT_BEFORE_GAP, _CHAIN_JOIN, _LOOSE_JOIN,  # noqa: F401
                                                 _POSSESSIVE, _SELF_ARTICLE, Heading, _chain, _resolve, _roman_ok, heading_match,
                                                 is_citation, normalize_article)
from ragcov_data.legal._citation_text import clean, original_span
from ragcov_data.legal._citation_urn import UrnError, is_source_key, is_urn, read_urn, source_act, urn_title

__all__ = ["Act", "Citation", "Heading", "parse", "parse_urn", "is_urn", "is_source_key", "read_urn", "urn_title", "UrnError", "agreement", "doc_id", "resolve_act", "act_key", "canonical_id",
           "heading_match", "is_citation", "normalize_article", "DOC_IDS", "ALIASES", "ACT_RE", "MARKER_RE",
           "MAX_NUMBER", "MAX_ACT_NUMBER"]


class Citation(NamedTuple):
    """One cited provision.

    Attributes
    ----------
    act : Act or None
        The cited act (None: a reference inside the enclosing act, e.g. ``do art. 78``, when no
        ``context`` names it).
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
    annex : str or None
        The annex cited (``Anexo VII`` -> ``"VII"``, ``Anexo Único`` -> ``"único"``): a level above the
        artigo (``art. 5º do Anexo I``) or on its own (``Anexo VII, inciso VII``).
    reason : str or None
        Why the citation names no usable provision: ``year_mismatch`` (the year contradicts the act the
        table names), ``number_out_of_range`` (an act, artigo, parágrafo or item number no real act
        has, or ``0``; a number too long to be one), ``year_out_of_range``, ``invalid_numeral`` (an inciso
        written with no valid Roman numeral, ``inciso IIII``, ``inciso 0``, ``inciso 5``, or an alínea with no
        letter, ``alínea 1``; the value is kept as written), ``relative_without_context`` (``§ 2º deste artigo`` parsed with no ``context``). None: usable.
    cleaned : bool
        Characters that are not text (NUL and other control characters, bidi controls, zero-width
        characters, U+FFFD) were removed from the citation (between its act and its chain, either order)
        before it was read.
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
    annex: str | None = None
    reason: str | None = None
    cleaned: bool = False

    @property
    def level(self) -> str:
        """``act`` (no article, no annex), ``annex`` (an annex, or a part of one, with no artigo), ``article``
        (an article alone) or ``dispositivo`` (a part of one)."""
        if self.article is None:
            return "annex" if self.annex is not None else "act"
        if self.paragraph is None and self.inciso is None and self.alinea is None and self.item is None \
                and not self.caput:
            return "article"
        return "dispositivo"

    @property
    def ok(self) -> bool:
        """No ``reason`` against it: the citation names a provision that can be looked up."""
        return self.reason is None

    @property
    def key(self) -> tuple:
        """``(doc_id, article, paragraph, inciso, alinea, item)``: what two citations share when equal."""
        return (self.doc_id, self.article, self.paragraph, self.inciso, self.alinea, self.item)

    def to_dict(self) -> dict:
        """The fields of a structured reference (``doc_id, article, paragraph, inciso, alinea``, plus
        ``item``, ``caput``, ``from_range``, ``annex``, ``reason``, ``cleaned`` and the act)."""
        return {"doc_id": self.doc_id, "article": self.article, "paragraph": self.paragraph,
                "inciso": self.inciso, "alinea": self.alinea, "item": self.item, "caput": self.caput,
                "from_range": self.from_range, "level": self.level, "annex": self.annex, "reason": self.reason,
                "cleaned": self.cleaned, "act": None if self.act is None else self.act._asdict()}


#: Largest number of a level in any real act: artigo (Código Civil, Lei 10.406/2002, ends at art. 2.046),
#: parágrafo, item. A larger one (or ``0``) is a typo or garbage: the citation is kept with ``number_out_of_range``.
MAX_NUMBER = {1: 2046, 2: 99, 5: 999}


def _level_reason(c: dict) -> str | None:
    """Why a level read from the text cannot be looked up: ``number_out_of_range`` (an artigo, parágrafo or
    item number of 0 or above :data:`MAX_NUMBER`, any length), ``invalid_numeral`` (an inciso that is no
    Roman numeral, an alínea that is no letter); None when every level is usable."""
    for lv, (v, _) in c.items():
        head = v.split("-")[0]
        if (lv == 3 and not _roman_ok(head)) or (lv == 4 and not (len(head) == 1 and head.isalpha())):
            return "invalid_numeral"
        if lv in MAX_NUMBER and head.isdigit() and (len(head) > 6 or not 0 < int(head) <= MAX_NUMBER[lv]):
            return "number_out_of_range"
    return None
_LEVEL_KEYS = {1: ("article", "artigo"), 2: ("paragraph", "parágrafo", "paragrafo"), 3: ("inciso",),
               4: ("alinea", "alínea"), 5: ("item",)}


class _Context(NamedTuple):
    act: Act | None
    doc_id: str | None
    levels: dict  # level -> value of the enclosing dispositivo


def _context(context: "Citation | Mapping[str, Any] | None", table: dict | None) -> _Context | None:
    """The caller's context (a :class:`Citation` or a dict with ``act``/``doc_id``, ``article``/``artigo``,
    ``paragraph``/``parágrafo``, ``inciso``, ``alinea``/``alínea``, ``item``; ``caput=True`` for the caput)."""
    if context is None:
        return None
    if isinstance(context, Citation):
        levels = {1: context.article, 2: "caput" if context.caput else context.paragraph, 3: context.inciso,
                  4: context.alinea, 5: context.item}
        return _Context(context.act, context.doc_id or doc_id(context.act, table),
                        {k: v for k, v in levels.items() if v is not None})
    if not isinstance(context, Mapping):
        raise TypeError(f"`context` must be a Citation or a dict (act/doc_id, article, paragraph, ...); "
                        f"got {type(context).__name__}.")
    known = {"act", "doc_id", "caput"} | {k for ks in _LEVEL_KEYS.values() for k in ks}
    bad = sorted(set(context) - known)
    if bad:
        raise ValueError(f"`context` has unknown key(s) {bad}; use {sorted(known)}.")
    act = context.get("act")
    did = context.get("doc_id")
    if isinstance(act, str):  # a document id given as the act
        act, did = None, did or act
    elif act is not None and not isinstance(act, Act):
        raise TypeError(f"`context['act']` must be an Act or a document id; got {type(act).__name__}.")
    levels = {}
    for lv, keys in _LEVEL_KEYS.items():
        v = next((context[k] for k in keys if context.get(k) is not None), None)
        if v is not None:
            levels[lv] = normalize_article(str(v)) if lv == 1 else str(v).strip()
    if context.get("caput") and 2 not in levels:
        levels[2] = "caput"
    return _Context(act, did or doc_id(act, table), levels)


def _line_start(text: str, pos: int) -> bool:
    k = text.rfind("\n", 0, pos)
    return not text[k + 1:pos].strip(" \t“\"")


def _is_heading(text: str, m: "re.Match", end: int) -> bool:
    """A marker at a line start that opens the dispositivo (``Art. 7º O imposto``) or an annex
    (``ANEXO I``) rather than citing it."""
    if not _line_start(text, m.start()):
        # the heading of quoted or elided amending text: "… a seguinte redação: “Art. 69.", "Art. 54 ......"
        if m.lastgroup != "art" or not m.group(0)[0].isupper():
            return False
        quoted = text[max(0, m.start() - 2):m.start()].rstrip().endswith(("“", "\"", "«"))
        if not quoted and not _ELIDED.match(text, end):
            return False
        e = text.find("\n", m.start())
        h = heading_match(text[m.start():len(text) if e < 0 else e])
        return h is not None
    k = text.rfind("\n", 0, m.start()) + 1
    e = text.find("\n", m.start())
    line = text[k:len(text) if e < 0 else e]
    if m.lastgroup == "anx":
        return not _ANNEX_GOES_ON.match(text, end)
    h = heading_match(line)
    return h is not None and bool(line[h.end:].strip())


_ELIDED = re.compile(r"\s*\.?\s*(?:\.{3}|\((?:VETADO|Revogad[oa]s?)\b)", re.I)  # "Art. 54 ....", "Art. 17. (VETADO)"
_ANNEX_GOES_ON = re.compile(r"\s*(?:[,;]|\(|d[oa]s?\s|n[oa]s?\s|e\s)", re.I)


def _chains(text: str) -> list[tuple[int, int, list[dict]]]:
    """Every citation chain: ``(start, end, [levels])``, headings skipped."""
    chains: list[tuple[int, int, list[dict]]] = []
    pos = 0
    for m in MARKER_RE.finditer(text):
        if m.start() < pos:
            continue
        comps, end = _chain(text, m.start())
        if _is_heading(text, m, end):
            pos = m.end()
            continue
        if not comps:
            continue
        cits = _resolve(comps)
        if all(1 not in c for c in cits):
            sa = _SELF_ARTICLE.match(text, end)
            end = sa.end() if sa else end
        chains.append((m.start(), end, cits))
        pos = end
    return chains


_COMMA_ACT = re.compile(r"\s*,\s*")
_SHARED_JOIN = re.compile(r"\s*,?\s*(?:e|ou)\s+(?:(?:n|d)[oa]s?\s+|[àa]s?\s+|aos?\s+)?", re.I)


def _share_article(text: str, chains: list) -> list:
    """A chain with no artigo joined by ``e``/``ou`` to the next chain, which names one artigo and a part at
    the same level, hangs on the same artigo: ``na alínea “a” do inciso I e no inciso II do caput do art.
    1.003`` cites art. 1.003 twice."""
    out = list(chains)
    for i in range(len(out) - 2, -1, -1):
        a, b, cits = out[i]
        na, _, nxt = out[i + 1]
        if any(1 in c or 0 in c for c in cits) or not _SHARED_JOIN.fullmatch(text, b, na):
            continue
        arts = {c.get(1) for c in nxt}
        if len(arts) != 1 or None in arts:
            continue
        top = min(min(c) for c in cits)
        if top not in nxt[0]:  # parallel parts only: "§ 2º e no art. 6º" is a paragraph here and an artigo
            continue
        above = {lv: v for lv, v in nxt[0].items() if lv < top}
        out[i] = (a, b, [{**above, **c} for c in cits])
    return out


def _bind(text: str, chains: list, act_spans: list) -> tuple[list[Act | None], set[int]]:
    """The act of each chain: forward (``art. 6º da Lei ...``), else the act just before, else a later
    chain's forward act in the same clause; and the acts some chain cites a dispositivo of."""
    act_starts = [x[0] for x in act_spans]
    act_ends = [x[1] for x in act_spans]
    reach = list(act_ends)  # where text bound to each act ends so far
    bound: list[Act | None] = [None] * len(chains)
    used: set[int] = set()
    pending: list[int] = []
    for ci, (a, b, cits_) in enumerate(chains):
        has_article = any(1 in c or 0 in c for c in cits_)
        fwd = _FORWARD.match(text, b)
        if fwd:
            k = bisect.bisect_left(act_starts, fwd.end())
            if k < len(act_starts) and act_starts[k] == fwd.end() and not act_spans[k][3]:
                bound[ci] = act_spans[k][2]
                if has_article:
                    used.add(k)
                last = chains[pending[-1]][1] if pending else a
                if pending and (_CHAIN_JOIN.fullmatch(text, last, a) or _LOOSE_JOIN.fullmatch(text, last, a)):
                    for pj in pending:
                        bound[pj] = bound[ci]
                pending = []
                continue
        prev = bisect.bisect_right(act_ends, a) - 1
        while prev >= 0 and act_spans[prev][3]:  # an approving act: bind to the one before it
            prev -= 1
        if prev >= 0 and (_ACT_BEFORE_GAP.fullmatch(text, reach[prev], a)
                          or (_POSSESSIVE.search(text[max(0, a - 16):a]) and act_spans[prev][2].type != "self")):
            bound[ci] = act_spans[prev][2]
            if has_article:
                used.add(prev)
            reach[prev] = b
            pending = []
            continue
        k = bisect.bisect_left(act_starts, b)
        comma = _COMMA_ACT.match(text, b)
        if comma and k < len(act_starts) and act_starts[k] == comma.end() and not act_spans[k][3]:
            bound[ci] = act_spans[k][2]  # last resort: the act right after a comma, "art. 4º, Anexo I, Decreto nº …"
            if has_article:
                used.add(k)
            pending = []
            continue
        if pending and not _CHAIN_JOIN.fullmatch(text, chains[pending[-1]][1], a):
            pending = []
        pending.append(ci)
    return bound, used


def _citation(c: dict, act: Act | None, did: str | None, reason: str | None, ctx: _Context | None,
              a: int, b: int, cleaned: bool = False) -> Citation | None:
    """One chain's levels as a :class:`Citation`: a relative one (no artigo, inside the enclosing act)
    completed from ``ctx``; None for a chain of a named act with neither artigo nor annex."""
    reason = reason or _level_reason(c)
    relative = act is None or act.type == "self"
    if relative and ctx is not None:
        act, did = ctx.act if ctx.act is not None else act, ctx.doc_id
        if 1 in c or 0 in c:
            pass
        elif ctx.levels.get(1) is not None:
            top = min(c)
            c = {**{lv: (v, False) for lv, v in ctx.levels.items() if lv < top}, **c}
    if 1 not in c and 0 not in c:
        if not relative:
            return None  # "item 4" of an act: the act is cited as a whole
        reason = reason or "relative_without_context"
    par = c.get(2)
    caput = par is not None and par[0] == "caput"
    art, vals = c.get(1), [c.get(lv) for lv in (3, 4, 5)]
    rng = any(v[1] for v in c.values())
    return Citation(act, None if art is None else art[0], None if par is None or caput else par[0],
                    *(None if v is None else v[0] for v in vals), caput=caput, from_range=rng, start=a, end=b,
                    doc_id=None if reason else did, annex=c[0][0] if 0 in c else None, reason=reason, cleaned=cleaned)


def parse(text: str, *, table: dict | None = None, acts: bool = True,
          context: "Citation | Mapping[str, Any] | None" = None) -> list[Citation]:
    """Every citation in ``text``, in order.

    Parameters
    ----------
    text : str
        Running text, a citation list, or one human-written citation string. Read case-insensitively
        and Unicode-insensitively (NFC or NFD, zero-width characters, non-breaking spaces).
    table : dict, optional
        Alias table for :func:`doc_id` (default :data:`DOC_IDS`).
    acts : bool, default: True
        Also return act-level citations (an act cited with no dispositivo).
    context : Citation or dict, optional
        Where ``text`` sits: the enclosing act (``act``: an :class:`Act`, or ``doc_id``) and dispositivo
        (``article``, ``paragraph``, ``inciso`` ...). Relative references (``inciso III do § 3º deste
        artigo``, ``do caput``, ``deste parágrafo``, ``art. 5º desta Lei``, a bare ``§ 2º``) are completed
        from it; without it they come back with ``reason="relative_without_context"``.

    Returns
    -------
    list of Citation
        Dispositivos in text order (each value of a list or range its own citation), act-level
        citations where an act is cited alone. Headings of the text's own dispositivos are skipped
        (:func:`heading_match`). Citations that name nothing usable are kept with a ``reason``. Spans
        are offsets in ``text`` as given.
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a string; got {type(text).__name__}.")
    if is_urn(text) or is_source_key(text):  # a LexML URN or a source key: one citation, absolute (no context)
        c = parse_urn(text, table=table)
        return [c] if acts or c.article is not None or c.annex is not None else []
    ctx = _context(context, table)
    text, offsets, removed = clean(text)
    act_spans = _acts(text)
    chains = _share_article(text, _chains(text))
    bound, used = _bind(text, chains, act_spans)
    act_at = {id(act): (x, y) for x, y, act, _ in act_spans}
    out: list[Citation] = []
    for (a, b, cits), act in zip(chains, bound):
        did, reason = resolve_act(act, table)
        x, y = act_at.get(id(act), (a, b))  # the citation reaches from its act to its chain, either order
        cleaned = _removed_within(removed, offsets, min(a, x), max(b, y))
        a, b = original_span(offsets, a, b)
        for c in cits:
            x = _citation(c, act, did, reason, ctx, a, b, cleaned)
            if x is not None:
                out.append(x)
    if acts:
        for k, (a, b, act, approving) in enumerate(act_spans):
            if k in used or approving or act.type == "self":
                continue
            if any(x <= a < y for x, y, _ in chains):
                continue
            did, reason = resolve_act(act, table)
            cleaned = _removed_within(removed, offsets, a, b)
            a, b = original_span(offsets, a, b)
            out.append(Citation(act, None, start=a, end=b, doc_id=did, reason=reason, cleaned=cleaned))
        out.sort(key=lambda c: (c.start, c.end))
    return out


def parse_urn(text: str, *, table: dict | None = None) -> Citation:
    """The citation a LexML URN names (or a source key, see the module docstring).

    ``urn:lex:br:federal:lei:2018-08-14;13709!art5_cpt_inc6`` is Lei 13.709/2018, art. 5º, caput, inciso VI;
    ``!art55-12`` art. 55-L; ``!art1_par1u`` its parágrafo único; ``!art4_cpt_inc2_ali1`` alínea "a"; ``!art5``
    the whole artigo; no ``!`` the act as a whole. The act is looked up in ``table`` as a written citation's
    is (a year that contradicts the document gives ``year_mismatch``; a number no act has,
    ``number_out_of_range``); an act not in the table has ``doc_id`` None.

    Raises
    ------
    UrnError
        ``text`` starts with ``urn:lex:`` but breaks the LexML grammar (the message names the part).

    Examples
    --------
    >>> c = parse_urn("urn:lex:br:federal:lei:2018-08-14;13709!art55-12_cpt_inc2")
    >>> (c.act.type, c.act.number, c.act.year, c.article, c.caput, c.inciso)
    ('lei', '13709', 2018, '55-L', True, 'II')
    """
    start = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    if not is_urn(text):
        if not is_source_key(text):
            raise UrnError(f"{text!r} is neither a LexML URN (urn:lex:...) nor a source key (a lower-case "
                           "identifier with underscores, e.g. enunciado_cd_anpd_1_2023).")
        return Citation(source_act(text), None, start=start, end=end)
    u = read_urn(text)
    levels = {lv: (v, False) for lv, v in ((1, u.article), (2, u.paragraph), (3, u.inciso), (4, u.alinea),
                                           (5, u.item)) if v is not None}
    did, reason = resolve_act(u.act, table)
    reason = reason or _level_reason(levels)
    return Citation(u.act, u.article, u.paragraph, u.inciso, u.alinea, u.item, caput=u.caput, start=start, end=end,
                    doc_id=None if reason else did, annex=u.annex, reason=reason)


def _removed_within(removed: list[int], offsets: list[int] | None, a: int, b: int) -> bool:
    """Was a character removed (see :func:`clean`) inside the clean text's ``[a, b)``?"""
    if not removed:
        return False
    lo, hi = original_span(offsets, a, b)
    k = bisect.bisect_left(removed, lo)
    return k < len(removed) and removed[k] < hi


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
