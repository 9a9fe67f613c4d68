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
from typing import Iterable, NamedTuple

from ragcov_data.legal._citation_acts import (ACT_RE, ALIASES, DOC_IDS, RIR_EDITIONS, Act, _acts, _type_of,  # noqa: F401
                                              act_key, canonical_id, doc_id)
from ragcov_data.legal._citation_grammar import (MARKER_RE, _FORWARD, _ACT_BEFORE_GAP, _CHAIN_JOIN,  # noqa: F401
                                                 _SELF_ARTICLE, Heading, _chain, _resolve, heading_match, is_citation,
                                                 normalize_article)

__all__ = ["Act", "Citation", "Heading", "parse", "agreement", "doc_id", "act_key", "canonical_id", "heading_match", "is_citation",
           "normalize_article", "DOC_IDS", "ALIASES", "ACT_RE", "MARKER_RE"]


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
