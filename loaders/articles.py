"""Where each provision of an act lies, and article-level chunks.

:func:`locate` finds the character span of every artigo, parágrafo, inciso, alínea and item of an act's
text, line by line, with the heading grammar of :mod:`ragcov_data.legal.citations` (:func:`heading_match`):
a line opens a dispositivo when it starts with its marker and the text goes on as a heading does
(``Art. 7º O imposto``), not as a citation does (``§ 1º do art. 7º``). The rules (:data:`LOCATE_RULE`):

- artigos increase through the act (``Art. 3º-A`` after ``Art. 3º``); a lower or equal number is text
  (a transcribed or quoted article); ``Arts. 28 e 29 (Revogados …)`` opens both;
- a line that starts with an opening quote, and the lines after it up to the closing quote or
  ``(NR)``, belong to the artigo that quotes them (quoted amendments of another act);
- parágrafos, incisos, alíneas and itens open only inside an artigo: incisos before the first
  parágrafo belong to the caput, an alínea to the last inciso, an item to the last alínea;
- a heading line (``CAPÍTULO``, ``TÍTULO``, ``Seção``, ``LIVRO``, ``ANEXO``) ends the artigo before it;
- a provision ends where the next one of its level or higher starts, or where its artigo ends.

:func:`article_spans` cuts one chunk per artigo from the dispositivo units of
:func:`ragcov_data.loaders.dispositivos.dispositivo_spans` (``chunking="article"``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

import numpy as np

from ragcov_data.legal.citations import heading_match
from ragcov_data.loaders.chunking import chunk_spans
from ragcov_data.loaders.dispositivos import PREAMBLE, Span, _group_key, _segments

__all__ = ["Provision", "ProvisionIndex", "locate", "word_starts", "article_spans", "LOCATE_RULE",
           "ARTICLE_RULE"]

LOCATE_RULE = (
    "provisions are located line by line with the citation grammar's heading test: an artigo line (numbers "
    "increasing through the act; a quoted block belongs to the artigo quoting it), parágrafos, incisos, "
    "alíneas and itens inside it (incisos before the first parágrafo are the caput's); a CAPÍTULO/TÍTULO/Seção/"
    "LIVRO/ANEXO line ends the artigo; a provision ends where the next of its level or higher starts"
)
ARTICLE_RULE = (
    "chunking='article': one chunk per artigo, its dispositivo units joined (units taken as the parser cuts them, "
    "neither merged by size nor split: a short artigo, e.g. a revoked stub, is a chunk of its own; headings join "
    "the artigo after them; the preâmbulo and an ANEXO's own text are chunks of their own; a document with no "
    "artigo falls back to chunk_words windows)"
)

_STRUCT = re.compile(r"^\s*(?:T[ÍI]TULO|CAP[ÍI]TULO|Se[çc][ãa]o|SE[ÇC][ÃA]O|Subse[çc][ãa]o|SUBSE[ÇC][ÃA]O|LIVRO|"
                     r"ANEXO|Anexo)\b")
_OPEN_Q = "“\"«"
_LEVEL = {"par": 1, "inc": 2, "ali": 3, "item": 4}


def _art_key(number: str) -> tuple[int, str]:
    n, _, suf = number.partition("-")
    return int(n), suf


class Provision(NamedTuple):
    """A located provision: ``key`` = ``(article, paragraph, inciso, alinea, item)`` (None where not part
    of the path; ``paragraph`` None = the caput), character span ``[start, end)``, ``kind``
    (``art``, ``caput``, ``par``, ``inc``, ``ali``, ``item``)."""

    key: tuple
    start: int
    end: int
    kind: str


@dataclass
class ProvisionIndex:
    """The provisions of one act, by key.

    Attributes
    ----------
    provisions : list of Provision
        In text order (artigos first come their parts).
    by_key : dict
        key -> Provision (the first located, when a key repeats).
    duplicates : int
        Keys seen more than once (kept: the first).
    """

    provisions: list[Provision] = field(default_factory=list)
    by_key: dict[tuple, Provision] = field(default_factory=dict)
    duplicates: int = 0

    def article(self, article: str) -> Provision | None:
        """The artigo's whole span."""
        return self.by_key.get((article, None, None, None, None, "art"))

    def find(self, article: str, paragraph: str | None = None, inciso: str | None = None,
             alinea: str | None = None, item: str | None = None, caput: bool = False
             ) -> tuple[Provision | None, int]:
        """The provision a citation names and how many of its levels were found.

        Returns ``(provision, depth)``: the deepest located provision on the cited path (the artigo if
        nothing below it is found) and the number of cited levels below the artigo that it matches
        (``depth`` equal to the cited depth: exact).
        """
        art = self.article(article)
        if art is None:
            return None, 0
        path = [paragraph, inciso, alinea, item]
        cited = max([i + 1 for i, v in enumerate(path) if v is not None], default=0)
        if cited == 0:
            if caput:
                cap = self.by_key.get((article, None, None, None, None, "caput"))
                return (cap or art), (1 if cap else 0)
            return art, 0
        best, depth = art, 0
        for d in range(1, cited + 1):
            key = (article, *path[:d], *([None] * (4 - d)))
            hit = self.by_key.get(key + ("sub",))
            if hit is None:
                if path[d - 1] is None:
                    continue  # a level the citation skips (an inciso of the caput)
                break
            best, depth = hit, d
        return best, depth

    def articles(self) -> list[str]:
        """Article numbers located, in text order."""
        return [p.key[0] for p in self.provisions if p.kind == "art"]


def locate(text: str) -> ProvisionIndex:
    """Locate every provision of an act's text (see :data:`LOCATE_RULE`).

    Parameters
    ----------
    text : str
        The act, one dispositivo a line (as compiled texts are published).

    Returns
    -------
    ProvisionIndex
    """
    nodes: list[tuple[int, int, str, tuple]] = []  # (start, level, kind, key); level 0 = artigo
    cuts: list[int] = []  # heading lines: an artigo ends here
    art: str | None = None
    art_key: tuple[int, str] | None = None
    par = inc = ali = None
    in_quote = False
    pos = 0
    for line in text.split("\n"):
        start = pos
        pos += len(line) + 1
        s = line.strip()
        if not s:
            continue
        if in_quote:
            if "”" in s or s.endswith('"') or "(NR)" in s:
                in_quote = False
            continue
        if s[0] in _OPEN_Q and art is not None:
            closes = s.count("”") + s.count("»") + max(s.count('"') - 1, 0)
            if not closes and "(NR)" not in s:
                in_quote = True
            continue
        if _STRUCT.match(s):
            cuts.append(start)
            continue
        h = heading_match(s)
        if h is None:
            continue
        if h.kind == "art":
            k = _art_key(h.number)
            if art_key is not None and k <= art_key:
                continue
            art, art_key = h.number, k
            par = inc = ali = None
            for n in h.numbers:
                nodes.append((start, 0, "art", (n, None, None, None, None)))
            continue
        if art is None:
            continue
        if h.kind == "par":
            par, inc, ali = h.number, None, None
            for n in h.numbers:
                nodes.append((start, 1, "par", (art, n, None, None, None)))
        elif h.kind == "inc":
            inc, ali = h.number, None
            nodes.append((start, 2, "inc", (art, par, inc, None, None)))
        elif h.kind == "ali" and inc is not None:
            ali = h.number
            nodes.append((start, 3, "ali", (art, par, inc, ali, None)))
        elif h.kind == "item" and ali is not None:
            nodes.append((start, 4, "item", (art, par, inc, ali, h.number)))
    return _spans(nodes, cuts, len(text))


def _spans(nodes: list[tuple[int, int, str, tuple]], cuts: list[int], n: int) -> ProvisionIndex:
    idx = ProvisionIndex()
    cut_arr = np.asarray(cuts, dtype=np.int64)
    # one group per artigo line ("Arts. 28 e 29" gives two level-0 nodes at one start)
    art_starts = [i for i, nd in enumerate(nodes) if nd[1] == 0 and not (i and nodes[i - 1][1] == 0
                                                                          and nodes[i - 1][0] == nd[0])]
    for j, i in enumerate(art_starts):
        start = nodes[i][0]
        nxt = nodes[art_starts[j + 1]][0] if j + 1 < len(art_starts) else n
        k = int(np.searchsorted(cut_arr, start, side="right"))
        end = min(nxt, int(cut_arr[k])) if k < len(cut_arr) and cut_arr[k] < nxt else nxt
        stop = art_starts[j + 1] if j + 1 < len(art_starts) else len(nodes)
        group = nodes[i:stop]
        key0 = group[0][3]
        arts = [g for g in group if g[1] == 0]  # "Arts. 28 e 29": several artigos, one span
        subs = [g for g in group if g[1] > 0]
        for g in arts:
            _add(idx, Provision(g[3], start, end, "art"), "art")
        first_par = next((g[0] for g in subs if g[1] == 1), end)
        _add(idx, Provision(key0, start, first_par, "caput"), "caput")
        for a, g in enumerate(subs):
            stop_at = end
            for h in subs[a + 1:]:
                if h[1] <= g[1] and h[0] > g[0]:
                    stop_at = h[0]
                    break
            _add(idx, Provision(g[3], g[0], stop_at, g[2]), "sub")
    return idx


def _add(idx: ProvisionIndex, p: Provision, tag: str) -> None:
    key = p.key + (tag,)
    idx.provisions.append(p)
    if key in idx.by_key:
        idx.duplicates += 1
        return
    idx.by_key[key] = p


# --------------------------------------------------------------------------- words and chunks


_WORD = re.compile(r"\S+")


def word_starts(text: str) -> np.ndarray:
    """Character offset of every word of ``text.split()`` (the words chunks are cut from)."""
    starts = np.fromiter((m.start() for m in _WORD.finditer(text)), dtype=np.int64)
    if len(starts) != len(text.split()):  # a whitespace character re and str disagree on
        starts = _slow_word_starts(text)
    return starts


def _slow_word_starts(text: str) -> np.ndarray:
    out, inside = [], False
    for i, ch in enumerate(text):
        if ch.isspace():
            inside = False
        elif not inside:
            out.append(i)
            inside = True
    return np.asarray(out, dtype=np.int64)


def article_spans(words: Sequence[str], line_starts: Sequence[int], *, chunk_words: int, query_words: int
                  ) -> tuple[list, bool]:
    """One chunk per artigo (see :data:`ARTICLE_RULE`).

    Built from the dispositivo units of :mod:`ragcov_data.loaders.dispositivos` (its boundaries, the text
    from one boundary to the next a unit, headings joined to the unit after them); consecutive
    units of one artigo (the label up to its first ``art.``) form one chunk. ``chunk_words``/``query_words``
    are the word windows of a document with no artigo.

    Returns
    -------
    (list of Span, bool)
        Spans with ``unit`` the artigo's label (``"art. 12-A"``, ``"anexo > art. 3"``) or ``"preâmbulo"``,
        ``continued`` False; and whether the document has structure.
    """
    glued, structured = _segments(words, line_starts)
    if not structured:
        return [Span(a, b, None, False) for a, b in chunk_spans(len(words), chunk_words, query_words)], False
    units: list[tuple[int, int, tuple[str, ...] | None]] = []
    for seg in glued:  # a heading the document ends with joins the artigo before it
        key = (units[-1][2] if units else (PREAMBLE,)) if seg.trailing else _article_of(" > ".join(seg.path))
        units.append((seg.start, seg.stop, key))
    out: list[Span] = []
    last: tuple[str, ...] | None = None
    for start, stop, key in units:
        if out and key == last and key is not None and any(x.startswith("art. ") for x in key):
            out[-1] = Span(out[-1].start, stop, out[-1].unit, False)
        else:
            out.append(Span(start, stop, " > ".join(key) if key else None, False))
        last = key
    return out, True


def _article_of(unit: str | None) -> tuple[str, ...] | None:
    """The label path of a unit up to its artigo (None for no label): the key of its article chunk."""
    return _group_key(tuple(unit.split(" > "))) if unit else None
