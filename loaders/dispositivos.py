"""Structure-aware chunking of Brazilian normative text: cut at the act's own *dispositivos*.

The parser finds, over the words of a text (``str.split()``), where a dispositivo starts:

- headings: ``TÍTULO``, ``CAPÍTULO``, ``Seção``, ``Subseção``, ``LIVRO`` (with a roman numeral or
  ``ÚNICO``), and ``ANEXO`` (a container: the articles after it are labelled ``anexo I > art. 1``);
- artigos: ``Art. 1º``, ``Art. 10.``, ``Art. 1º-A``, ``Art. 2o``, ``Art. 1 o``, ``Art.1º``, ``ARTIGO 1º``;
- parágrafos: ``§ 1º``, ``§§ 3º e 4º``, ``Parágrafo único``;
- incisos: a roman numeral followed by a dash (``I -``, ``IV –``, ``II—``); an inciso inserted after another
  carries its letter (``V-A –``, between V and VI);
- alíneas: ``a)``; itens: ``1.`` or ``1)`` inside an alínea.

Text extracted from PDF breaks lines anywhere, so a citation ("observado o disposto no\\n§ 1º do art.
7º") often starts a line. A candidate is a boundary only when all of these hold (:data:`BOUNDARY_RULE`):

1. it starts a line (any word may, in a text without line breaks);
2. the text before it closes a sentence or clause: the previous word ends with ``.``, ``:``, ``;``, ``!``,
   ``?`` (not an abbreviation such as ``art.`` or ``nº.``), or is a closing quote after one of those,
   an annotation such as ``(NR)`` or ``(Redação dada pela Lei ...)`` (read from its outer parenthesis when
   nested: ``(Redação dada por … (Seq. 1) (Diário Oficial … (p. 1, col. 1)))``), the ``e``/``ou`` that ends an item
   (``...; e``), or the words since the last heading are its title (no clause punctuation yet); an
   upper-case heading (``CAPÍTULO``, ``ANEXO``), and an artigo or parágrafo that is the very next number
   (art. n + 1, § n + 1), and the first artigo of an act (or of an ANEXO) at a line start, also follow any
   word that is not a citation word (``do``, ``no``, ``conforme`` ...): a signature line, an unnumbered
   title, a page header (``Presidência da República`` / ``Art. 644.``: an excerpt of an act);
3. it has the expected shape: a number after ``Art.``/``§``, a dash after the roman numeral; and after
   an artigo, parágrafo or heading the text goes on with a capital letter, a digit, a quote, a bracket or
   a dash, never a lower-case word ("§ 1º *do* art. 7º" is a citation);
4. its number is plausible: artigos increase through the act (restarting in each ANEXO and in each quoted
   amendment), parágrafos within their artigo, incisos within their parent, alíneas within their inciso,
   itens within their alínea; §, incisos, alíneas and itens only appear inside an artigo.

Quoted amendments (``“Art. 7º ... ” (NR)``) are read as part of the amending artigo: their units are
labelled ``art. 1 > art. 7 > § 1`` and numbered on their own. So is text an artigo inserts into another
act after its formula (``passa a vigorar acrescido do seguinte Capítulo II-B:``, ``passam a vigorar com a
seguinte redação:``, ``fica acrescido ...:``), wherever the quote opens (on a chapter heading, on no
marker at all) or without quotes: it runs to the closing quote, a ``(NR)``, or the line where the act's
own next artigo starts. Lei 14.133 art. 178 inserts Código Penal arts. 337-E to 337-P: they are
``art. 178 > art. 337-E`` ..., and arts. 179 to 194 stay the law's own.

Also (:data:`SPECIAL_RULES`):

- a voto, nota técnica or parecer is cut into numbered paragraphs (``1.`` ... ``22.``) and quotes the
  articles it discusses: when its numbered paragraphs start before its first artigo and go on after it,
  its artigos (and their parágrafos, incisos ...) are quotations, not units (a document left with no
  artigo falls back to word windows); an ANEXO after its last paragraph (a draft act) is read as an act;
- a vetoed or revoked stub is a unit, and the next dispositivo may follow it on the same line
  (``Art. 19. (VETADO). Art. 20. ...``, ``§ 2º (Vetado). Art. 32.``, ``I - (Revogado ...); II - ...``);
- a compilation printed as plain text gives the old and the new wording of one provision under the same
  number, the new one carrying ``(Redação dada ...)``: that repeated number starts a unit of its own
  (same label), so the new wording is not cut into the old one's unit;
- source quirks: ``rt. 758.`` (the A lost) is an artigo when it is the very next number; ``Arts. 28 e 29
  (Revogados ...)`` and ``Arts. 52 a 58.`` are one unit (``arts. 28 e 29``) after which the numbering
  goes on from the last; ``§ 4o``, ``Art 31.`` and a quoted ``Art. 6º......`` parse.

:func:`find_boundaries` (in :mod:`ragcov_data.loaders.dispositivo_parser`) finds them; :func:`dispositivo_spans`
turns the boundaries into chunks (:data:`SIZE_RULE`), each naming the artigos whose text it holds
(:data:`ARTICLES_RULE`: a short artigo joined to the next one, a vetoed or revoked stub joined to the chunk
before it, :data:`STUB_RULE`); a document with no artigo falls back to word windows (:data:`FALLBACK_RULE`).
:func:`unit_segments` and :func:`vigencia_units` give the word span of every unit, for vigência per
dispositivo (:mod:`ragcov_data.legal.vigencia`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import groupby
from typing import Sequence

from ragcov_data.errors import RagcovError
from ragcov_data.loaders.chunking import chunk_spans
from ragcov_data.loaders.dispositivo_parser import Boundary, find_boundaries, words_and_line_starts

__all__ = ["Boundary", "Span", "find_boundaries", "words_and_line_starts", "dispositivo_spans", "settings",
           "config_name", "annotate_manifest", "unit_segments", "vigencia_units", "is_stub", "validate_sizes"]

#: Default maximum words of a unit before it is split (config ``dispositivo``).
DEFAULT_MAX_WORDS = 400
#: Label of the text before the first dispositivo (title, ementa, preamble).
PREAMBLE = "preâmbulo"

BOUNDARY_RULE = (
    "a dispositivo (TÍTULO, CAPÍTULO, Seção, Subseção, LIVRO, ANEXO, Art., §, Parágrafo único, inciso 'I -', "
    "alínea 'a)', item '1.' inside an alínea) starts a chunk only where it starts a line, the previous word closes "
    "a sentence or clause (. : ; ! ?, a closing quote, an annotation such as (NR), the 'e'/'ou' ending an item, "
    "or a heading's title; an upper-case heading, or the very next artigo/parágrafo number, after any word but a "
    "citation word such as do/no/conforme), the marker has its shape (a number; a dash after the roman numeral; no lower-case "
    "word after an artigo, parágrafo or heading: that is a citation) and its number follows the previous one "
    "of its level; quoted amendments are units of the amending artigo"
)
SPECIAL_RULES = (
    "text an artigo inserts into another act after 'passa a vigorar ...:' or 'fica acrescido ...:' (quoted or "
    "not) is a unit of that artigo up to the closing quote, (NR) or the act's next artigo; the artigos a voto or "
    "nota técnica quotes between its own numbered paragraphs are not units; a vetoed or revoked stub is a unit "
    "and the next dispositivo may follow it on its line; a repeated number whose unit carries '(Redação dada ...)' "
    "is the provision's new wording, a unit of its own; 'rt. 758.' as the next artigo, 'Arts. 28 e 29' as one "
    "unit, '§ 4o', 'Art 31.' parse"
)
SIZE_RULE = (
    "the unit is the artigo (or the preâmbulo, an ANEXO's text); headings join the unit after them; a unit "
    "longer than max_words is split into its parts at the next lower level (caput, parágrafos, incisos, alíneas, "
    "itens), a part with no lower level into windows of max_words words (a last window shorter than min_words "
    "joins the one before) flagged continued; a unit shorter than min_words joins the next unit of its artigo "
    "(the last one, the previous chunk of its artigo if that stays within max_words + min_words - 1 words, else "
    "the next chunk), a short vetoed or revoked stub the chunk before it (whatever its artigo) when that stays "
    "within max_words + min_words - 1 words; so a chunk of a document with two or more chunks holds between "
    "min_words and "
    "max_words + min_words - 1 words (a longer merge is cut again into windows, the rest flagged continued)"
)
FALLBACK_RULE = (
    "a document in which no artigo is found (despachos, extratos, ...) is cut into word windows of chunk_words "
    "words exactly as chunking='words' does; its chunks have unit null and continued false"
)


@dataclass(frozen=True)
class Span:
    """A chunk of a document: half-open word span, its unit label, whether it continues a longer unit, and
    the artigos it holds."""

    start: int
    stop: int
    unit: str | None
    continued: bool
    #: the artigos whose text the chunk holds, in order (``("art. 12", "art. 12-A")``); empty outside any
    articles: tuple[str, ...] = ()


def validate_sizes(min_words: int, max_words: int, query_words: int) -> None:
    """Check the unit sizes; raise :class:`RagcovError` naming the fix."""
    for name, value in (("min_words", min_words), ("max_words", max_words)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise RagcovError(f"`{name}` must be a positive integer; got {value!r}.")
    if min_words < query_words:
        raise RagcovError(f"`min_words` ({min_words}) must be >= `query_words` ({query_words}): a query is the first "
                          "query_words words of its chunk. Raise min_words or lower query_words.")
    if max_words < min_words:
        raise RagcovError(f"`max_words` ({max_words}) must be >= `min_words` ({min_words}); raise max_words.")


# --------------------------------------------------------------------------- from boundaries to chunks

ARTICLES_RULE = (
    "corpus `articles`: every artigo whose text the chunk holds, in order (a short artigo joined to the next, "
    "a vetoed or revoked stub joined to the chunk before it); `unit` names the first of them whose text is "
    "more than a stub (a chunk holding only stubs: the first stub), also when the chunk starts with text of no "
    "artigo shorter than min_words (a preâmbulo, an annex's title) joined to the artigo after it"
)
STUB_RULE = (
    "a stub is a unit whose text after its marker is only an annotation: '(VETADO)', '(Revogado ...)', "
    "'[Revogado(a) pelo(a) ...]', '[(Revogado ...)](link)' (other annotations, 'Produção de efeitos', "
    "'Vigência' and a Markdown clip's block ids may follow); a stub shorter "
    "than min_words joins the chunk before it (whatever its artigo) when that stays within max_words + "
    "min_words - 1 words, else the next chunk"
)

_STUB_NOTE = re.compile(r"^[\(\[]{1,2}\s*(?:vetad|revogad|suprimid|exclu[íi]d)", re.I)


@dataclass
class _Seg:
    """A dispositivo unit (word span and label path); ``stub`` a vetoed or revoked stub, ``trailing`` the
    heading a document ends with (no unit after it to join)."""

    start: int
    stop: int
    path: tuple[str, ...]
    stub: bool = False
    trailing: bool = False


_LINK_TARGET = re.compile(r"\]\(https?://[^)\s]*\)")
_BLOCK_IDS = re.compile(r"\^[0-9a-z]{4,8}\b")
_GROUP = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_LEFT_OK = re.compile(r"^[\s.;,]*(?:(?:Produção de efeitos|Vigência|Regulamento)[\s.;,]*)*$")


def is_stub(words: Sequence[str], start: int, stop: int) -> bool:
    """Is the unit ``words[start:stop]`` a vetoed or revoked stub (:data:`STUB_RULE`)? Its marker is the
    words before the first bracket, at most five (``Art. 19.``, ``§ 2º``, ``I -``, ``Arts. 52 a 58 .``);
    after it come only annotations (``(VETADO).``, ``[(Revogado ...)](link)``, ``(Incluído ...)``) and
    Planalto's link words."""
    if stop - start > 60:
        return False
    first = next((k for k in range(start, min(stop, start + 6)) if words[k][:1] in "(["), None)
    if first is None or not _STUB_NOTE.match(words[first]):
        return False
    rest = _BLOCK_IDS.sub(" ", _LINK_TARGET.sub("]", " ".join(words[first:stop])))
    while True:  # take out bracketed groups, innermost first
        rest, n = _GROUP.subn(" ", rest)
        if not n:
            break
    return bool(_LEFT_OK.match(rest.strip()))


def _artigo(path: tuple[str, ...]) -> str | None:
    """The label of the artigo a unit belongs to (its path up to the first artigo), None outside any."""
    for j, p in enumerate(path):
        if p.startswith(("art. ", "arts. ")):
            return " > ".join(path[:j + 1])
    return None


def artigo_of(unit: str | None) -> tuple[str, ...]:
    """The artigo a unit label belongs to, as an ``articles`` value: ``"art. 3 > § 1"`` -> ``("art. 3",)``;
    ``()`` for a label of no artigo (the preâmbulo, an annex's text) or none."""
    art = _artigo(tuple(unit.split(" > "))) if unit else None
    return (art,) if art else ()


def _group_key(path: tuple[str, ...]) -> tuple[str, ...]:
    """The artigo a unit belongs to (for merging): its path up to the first artigo."""
    for j, p in enumerate(path):
        if p.startswith("art. "):
            return path[:j + 1]
    return path[:1]


def _windows(start: int, stop: int, unit: str, continued: bool, max_words: int, min_words: int) -> list[Span]:
    spans = chunk_spans(stop - start, max_words, min_words)
    return [Span(start + a, start + b, unit, continued or k > 0) for k, (a, b) in enumerate(spans)]


def _pieces(segs: list[_Seg], depth: int, max_words: int, min_words: int) -> list[Span]:
    """A unit of ``segs`` (sharing ``path[:depth]``) whole, or split at the next lower level."""
    if segs[-1].stop - segs[0].start <= max_words:
        return [Span(segs[0].start, segs[-1].stop, " > ".join(segs[0].path), False)]
    out: list[Span] = []
    rest = segs
    while rest and len(rest[0].path) <= depth:  # the unit's own text (caput): windows if too long
        s = rest[0]
        out.extend(_windows(s.start, s.stop, " > ".join(s.path), False, max_words, min_words)
                   if s.stop - s.start > max_words else [Span(s.start, s.stop, " > ".join(s.path), False)])
        rest = rest[1:]
    for _, group in groupby(rest, key=lambda s: s.path[:depth + 1]):
        out.extend(_pieces(list(group), depth + 1, max_words, min_words))
    return out


def _merge_short(pieces: list[Span], keys: list[tuple[str, ...]], stubs: list[bool], min_words: int,
                 max_words: int) -> list[Span]:
    """Units shorter than ``min_words`` join the next unit of their artigo; a short stub joins the chunk
    before it (see :data:`SIZE_RULE` and :data:`STUB_RULE`)."""
    limit = max_words + min_words - 1
    chunks: list[Span] = []
    carry: Span | None = None
    for _, group in groupby(zip(pieces, keys, stubs), key=lambda pk: pk[1]):
        acc: Span | None = carry
        carry = None
        first = len(chunks)
        for p, _k, stub in group:
            if (stub and acc is None and chunks and p.stop - p.start < min_words
                    and p.stop - chunks[-1].start <= limit):
                chunks[-1] = Span(chunks[-1].start, p.stop, chunks[-1].unit, chunks[-1].continued)
                first = min(first, len(chunks) - 1)
                continue
            if acc is not None:
                p = Span(acc.start, p.stop, acc.unit, acc.continued)
                acc = None
            if p.stop - p.start < min_words:
                acc = p
            else:
                chunks.append(p)
        if acc is not None:
            last = chunks[-1] if len(chunks) > first else None
            if last is not None and acc.stop - last.start <= limit:
                chunks[-1] = Span(last.start, acc.stop, last.unit, last.continued)
            else:
                carry = acc
    if carry is not None:
        if chunks:
            last = chunks.pop()
            carry = Span(last.start, carry.stop, last.unit, last.continued)
        chunks.append(carry)
    out: list[Span] = []
    for c in chunks:  # a merge past the limit is cut again into windows
        if c.stop - c.start > limit:
            out.extend(_windows(c.start, c.stop, c.unit or "", c.continued, max_words, min_words))
        else:
            out.append(c)
    return out


def _name_articles(chunks: list[Span], segs: list[_Seg]) -> list[Span]:
    """Every chunk with the artigos whose text it holds, its label the first that is more than a stub
    (:data:`ARTICLES_RULE`); segs and chunks are both in word order."""
    out: list[Span] = []
    j = 0
    for c in chunks:
        while j < len(segs) and segs[j].stop <= c.start:
            j += 1
        held: list[tuple[str, bool, str]] = []  # (artigo, stub, unit label) of each unit in the chunk
        k = j
        while k < len(segs) and segs[k].start < c.stop:
            art = _artigo(segs[k].path)
            if art is not None:
                held.append((art, segs[k].stub, " > ".join(segs[k].path)))
            k += 1
        arts = tuple(dict.fromkeys(a for a, _, _ in held))
        unit = c.unit
        own = _artigo(tuple(unit.split(" > "))) if unit else None
        stub_only = {a for a in arts if all(s for x, s, _ in held if x == a)}
        if (own is None or own in stub_only) and arts and not c.continued:
            # a stub, or text of no artigo (a short preâmbulo, an annex's title), joined to an artigo
            nxt = next((lab for a, s, lab in held if a not in stub_only), None)
            unit = nxt or (unit if own is not None else next(lab for _, _, lab in held))
        out.append(Span(c.start, c.stop, unit, c.continued, arts))
    return out


def unit_segments(words: Sequence[str], line_starts: Sequence[int]) -> list[tuple[int, int, str]]:
    """Every dispositivo unit of a document as ``(start, stop, label)`` word spans, in order (headings joined
    to the unit after them, the text before the first boundary the preâmbulo); empty with no artigo."""
    return [(s.start, s.stop, " > ".join(s.path)) for s in _segments(words, line_starts)[0]]


def vigencia_units(text: str) -> list[tuple[int, int, str, bool]]:
    """The units of a document for vigência per dispositivo: ``(start, stop, label, stub)`` word spans of
    ``text.split()`` (:func:`unit_segments`, each flagged when it is a vetoed or revoked stub)."""
    words, starts = words_and_line_starts(text)
    return [(s.start, s.stop, " > ".join(s.path), s.stub) for s in _segments(words, starts)[0]]


def _segments(words: Sequence[str], line_starts: Sequence[int]) -> tuple[list[_Seg], bool]:
    """The units of a document from its dispositivo boundaries (the one scan every chunking and vigência
    reads): the preâmbulo, then one unit a boundary, headings joined to the unit after them; and whether
    the document has an artigo (no units without one)."""
    bounds = find_boundaries(words, line_starts)
    if not any(b.kind == "art" for b in bounds):
        return [], False
    segs: list[_Seg] = []
    if bounds[0].start > 0:
        segs.append(_Seg(0, bounds[0].start, (PREAMBLE,)))
    for b, nxt in zip(bounds, bounds[1:] + [None]):
        segs.append(_Seg(b.start, len(words) if nxt is None else nxt.start, b.path))
    # headings join the unit after them (a heading at the end keeps its own label)
    glued: list[_Seg] = []
    pending: int | None = None
    kinds = ([None] if bounds[0].start > 0 else []) + [b.kind for b in bounds]
    for s, kind in zip(segs, kinds):
        if kind == "heading":
            pending = s.start if pending is None else pending
            continue
        glued.append(_Seg(s.start if pending is None else pending, s.stop, s.path,
                          kind != "annex" and is_stub(words, s.start, s.stop)))
        pending = None
    if pending is not None:
        glued.append(_Seg(pending, len(words), segs[-1].path, trailing=True))
    return glued, True


def dispositivo_spans(words: Sequence[str], line_starts: Sequence[int], *, min_words: int, max_words: int,
                      chunk_words: int, query_words: int) -> tuple[list[Span], bool]:
    """The chunks of one document under ``chunking="dispositivo"``.

    Parameters
    ----------
    words, line_starts
        The document's words and line-start flags (:func:`~ragcov_data.loaders.dispositivos.
        words_and_line_starts`).
    min_words, max_words : int
        Unit sizes (:data:`SIZE_RULE`).
    chunk_words, query_words : int
        Word windows of a document with no artigo (:data:`FALLBACK_RULE`).

    Returns
    -------
    (list of Span, bool)
        Consecutive spans covering every word (each naming the artigos it holds), and whether the document
        has structure (an artigo).
    """
    glued, structured = _segments(words, line_starts)
    if not structured:
        return [Span(a, b, None, False) for a, b in chunk_spans(len(words), chunk_words, query_words)], False
    pieces: list[Span] = []
    stubs: list[bool] = []
    for _, group in groupby(glued, key=lambda s: s.path[:1]):
        segs = list(group)
        got = _pieces(segs, 1, max_words, min_words)
        pieces.extend(got)
        # a piece is a stub when every unit it spans is one
        for p in got:
            stubs.append(all(s.stub for s in segs if s.start < p.stop and s.stop > p.start))
    keys = [_group_key(tuple(p.unit.split(" > "))) if p.unit else () for p in pieces]
    return _name_articles(_merge_short(pieces, keys, stubs, min_words, max_words), glued), True
# --------------------------------------------------------------------------- task settings and manifest

CHUNKINGS = ("words", "dispositivo")


def settings(chunking: str, min_words: int | None, max_words: int | None, query_words: int
             ) -> tuple[int, int] | None:
    """``(min_words, max_words)`` for ``chunking="dispositivo"`` (defaults: ``query_words``, 400), None for
    ``"words"``; every bad value is a :class:`RagcovError` naming the fix."""
    if chunking not in CHUNKINGS:
        raise RagcovError(f"`chunking` must be one of {list(CHUNKINGS)}; got {chunking!r}.")
    if chunking == "words":
        for name, value in (("min_words", min_words), ("max_words", max_words)):
            if value is not None:
                raise RagcovError(f"`{name}` applies to chunking='dispositivo', not to chunking='words' (whose "
                                  "chunks are chunk_words long); drop it or pass chunking='dispositivo'.")
        return None
    lo = query_words if min_words is None else min_words
    hi = DEFAULT_MAX_WORDS if max_words is None else max_words
    validate_sizes(lo, hi, query_words)
    return lo, hi


def config_name(max_words: int, min_words: int, chunk_words: int, query_words: int) -> str:
    """Config name of a dispositivo chunking: ``dispositivo`` (defaults), ``dispositivo-200``, and
    ``-min30``, ``-w50``, ``-q30`` for a non-default minimum, fallback window or query length."""
    name = "dispositivo" if max_words == DEFAULT_MAX_WORDS else f"dispositivo-{max_words}"
    if min_words != query_words:
        name += f"-min{min_words}"
    if chunk_words != 100:
        name += f"-w{chunk_words}"
    if query_words != 20:
        name += f"-q{query_words}"
    return name


def annotate_manifest(manifest: dict, sizes: tuple[int, int], n_structured: int, corpus) -> None:
    """Record the dispositivo settings, rules and counts in a task manifest (in place)."""
    manifest["config"].update({"chunking": "dispositivo", "min_words": sizes[0], "max_words": sizes[1]})
    manifest["rules"].update({"dispositivo": BOUNDARY_RULE, "dispositivo_special": SPECIAL_RULES,
                              "units": SIZE_RULE, "fallback": FALLBACK_RULE,
                              "unit_columns": "corpus `unit`: label of the dispositivo where the chunk starts "
                                              "(e.g. 'art. 2 > I > a', 'preâmbulo', 'anexo I'), null for word "
                                              "windows of a document with no artigo; `continued`: the chunk is "
                                              "a window of a longer unit, not its start; `articles`: "
                                              + ARTICLES_RULE, "stubs": STUB_RULE})
    counts = manifest["counts"]
    read = counts["documents_read"]
    counts.update({"documents_structured": int(n_structured), "documents_fallback": int(read - n_structured),
                   "chunks_continued": int(corpus["continued"].sum()),
                   "chunks_fallback": int(corpus["unit"].isna().sum())})
