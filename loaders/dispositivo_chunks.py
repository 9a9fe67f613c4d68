"""From dispositivo boundaries to chunks, and the task settings of ``chunking="dispositivo"``.

:func:`dispositivo_spans` cuts a document at the boundaries :func:`ragcov_data.loaders.dispositivos.
find_boundaries` finds, sizing units by :data:`~ragcov_data.loaders.dispositivos.SIZE_RULE`. Every chunk
names the artigos whose text it holds (:data:`ARTICLES_RULE`): a short artigo joined to the next one, or a
vetoed or revoked stub joined to the chunk before it, is named, so a chunk's label never hides the text of
another artigo. :func:`unit_segments` and :func:`vigencia_units` give the word span of every unit, for
vigência per dispositivo (:mod:`ragcov_data.legal.vigencia`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import groupby
from typing import Sequence

from ragcov_data.errors import RagcovError
from ragcov_data.loaders.dispositivos import (
    BOUNDARY_RULE, DEFAULT_MAX_WORDS, FALLBACK_RULE, PREAMBLE, SIZE_RULE, SPECIAL_RULES, Span, find_boundaries,
    validate_sizes, words_and_line_starts)

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
    start: int
    stop: int
    path: tuple[str, ...]
    stub: bool = False


_LINK_TARGET = re.compile(r"\]\(https?://[^)\s]*\)")
_BLOCK_ID = re.compile(r"\^[0-9a-z]{4,8}\b")
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
    rest = _BLOCK_ID.sub(" ", _LINK_TARGET.sub("]", " ".join(words[first:stop])))
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
    from ragcov_data.loaders.chunking import chunk_spans

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
        glued.append(_Seg(pending, len(words), segs[-1].path))
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
    from ragcov_data.loaders.chunking import chunk_spans

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
