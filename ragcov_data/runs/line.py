"""A task's documents laid end to end on one character line, with the line read without its whitespace.

Span measures compare characters: a chunk's or passage's span and a cited provision's span are intervals on the
line where document ``i`` starts at ``offsets[doc_i]`` (documents in the order given, one separator character
apart). Two things read the line *flat*, its non-whitespace characters in order:

- **locating a passage** (:mod:`ragcov_data.runs.locate`): a passage whose whitespace differs from the document's
  (collapsed, stripped, re-wrapped) is the same run of non-space characters;
- **cutting a context at exactly B words** (:mod:`ragcov_data.eval.outcomes.budget`): the end of the j-th word of a
  chunk or passage starting at line position ``s`` is the line position of its ``L``-th non-space character from
  ``s``, where ``L`` counts the non-space characters of its first j words.

Text is compared in Unicode NFC: a document not in NFC is read through a map from its NFC characters back to its
own positions, so spans stay on the document's characters.
"""
from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np

__all__ = ["CharacterLine", "character_line", "flat_text", "SEPARATOR"]

#: Between two documents on the line: a character no passage or query holds (matches cannot cross it).
SEPARATOR = "\x00"


def flat_text(text: str) -> str:
    """``text`` in NFC without its whitespace (and without NUL characters, which separate documents)."""
    return "".join(unicodedata.normalize("NFC", text).split()).replace(SEPARATOR, "")


@dataclass(frozen=True)
class CharacterLine:
    """Documents on one line (see the module docstring).

    Attributes
    ----------
    doc_ids : tuple of str
        Documents in line order.
    offsets : mapping str -> int
        Where each document starts on the line.
    texts : tuple of str
        Each document's text, as given.
    index : mapping str -> int
        Each document's index in :attr:`doc_ids`.
    starts : ndarray of int64
        Line start of each document, in line order.
    flat : str
        The line's non-whitespace characters in NFC, documents separated by :data:`SEPARATOR`.
    pos : ndarray of int64
        Line position of each character of ``flat`` (ascending; a character made by NFC from several takes its
        first one's position, except the last of a composed run, which takes the run's last position).
    """

    doc_ids: tuple[str, ...]
    offsets: Mapping[str, int]
    texts: tuple[str, ...]
    flat: str
    pos: np.ndarray
    index: Mapping[str, int]
    starts: np.ndarray
    _starts: list = field(repr=False, compare=False, default_factory=list)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_starts", self.starts.tolist())  # bisect on a list: fast one at a time

    def doc_at(self, position: int) -> int:
        """Index (in :attr:`doc_ids`) of the document holding line position ``position``."""
        return bisect.bisect_right(self._starts, int(position)) - 1

    def docs_at(self, positions: np.ndarray) -> np.ndarray:
        """:meth:`doc_at` of many positions at once."""
        return np.searchsorted(self.starts, np.asarray(positions), side="right") - 1

    def flat_index(self, position: int | np.ndarray) -> int | np.ndarray:
        """Index in :attr:`flat` of the first non-space character at or after line position ``position``."""
        return np.searchsorted(self.pos, position, side="left")

    def end_after(self, start: int, n_flat: int) -> int:
        """Line position just after the ``n_flat``-th non-space character from line position ``start`` (the end
        of a span starting at ``start`` that holds ``n_flat`` non-space characters)."""
        if n_flat <= 0:
            return int(start)
        k = int(self.flat_index(start)) + int(n_flat) - 1
        return int(self.pos[min(k, len(self.pos) - 1)]) + 1

    def text_of(self, doc: int, start: int, end: int) -> str:
        """The text of document ``doc`` (its index) between line positions ``start`` and ``end``."""
        off = self.offsets[self.doc_ids[doc]]
        return self.texts[doc][start - off:end - off]


def _flat_positions(text: str) -> tuple[str, np.ndarray]:
    """``text``'s NFC non-space characters and their positions in ``text``."""
    if unicodedata.is_normalized("NFC", text):
        keep = [m.span() for m in re.finditer(r"\S+", text)]
        if not keep:
            return "", np.empty(0, dtype=np.int64)
        starts = np.fromiter((a for a, _ in keep), np.int64, len(keep))
        lens = np.fromiter((b - a for a, b in keep), np.int64, len(keep))
        # positions: each run's start plus 0..len-1, vectorised
        rel = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        return "".join(text[a:b] for a, b in keep).replace(SEPARATOR, "\x01"), np.repeat(starts, lens) + rel
    chars: list[str] = []
    where: list[int] = []
    i, n = 0, len(text)
    while i < n:  # one starter and the combining marks after it, normalised together
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        seg = unicodedata.normalize("NFC", text[i:j])
        for k, ch in enumerate(seg):
            if not ch.isspace():
                chars.append("\x01" if ch == SEPARATOR else ch)
                where.append(i if k < len(seg) - 1 else j - 1)
        i = j
    return "".join(chars), np.asarray(where, dtype=np.int64)


def character_line(doc_ids: Sequence[str], texts: Sequence[str]) -> CharacterLine:
    """The line of these documents, in this order (cached by content within a process)."""
    return _line(tuple(str(d) for d in doc_ids), tuple(str(t) for t in texts))


@lru_cache(maxsize=8)
def _line(ids: tuple[str, ...], texts: tuple[str, ...]) -> CharacterLine:
    offsets: dict[str, int] = {}
    flats: list[str] = []
    poss: list[np.ndarray] = []
    at = 0
    for d, t in zip(ids, texts):
        offsets[d] = at
        f, p = _flat_positions(t)
        flats.append(f)
        poss.append(p + at)
        at += len(t) + 1  # one separator character between documents
    seps = np.asarray([offsets[d] - 1 for d in ids[1:]], dtype=np.int64)
    parts: list[np.ndarray] = []
    for i, p in enumerate(poss):
        if i:
            parts.append(seps[i - 1:i])
        parts.append(p)
    pos = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
    return CharacterLine(ids, offsets, texts, SEPARATOR.join(flats), pos, {d: i for i, d in enumerate(ids)},
                         np.fromiter((offsets[d] for d in ids), np.int64, len(ids)))
