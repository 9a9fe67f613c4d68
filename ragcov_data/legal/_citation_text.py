"""Unicode clean-up of citation text before parsing (part of :mod:`ragcov_data.legal.citations`).

Real citation strings arrive NFD-decomposed (``a`` + U+0301 for ``á``), with zero-width characters
(U+200B, U+FEFF, soft hyphens) inside words and non-breaking spaces between them. The grammar is
written for NFC text with plain spaces, so :func:`clean` rewrites the text that way and keeps, for
every character of the clean text, the offset of the original character it came from: citation spans
are reported on the caller's text.
"""
from __future__ import annotations

import re
import unicodedata

#: Characters removed: zero-width spaces and joiners, word joiner, BOM, soft hyphen.
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
#: Characters read as a plain space: no-break, figure, narrow, thin and other fixed-width spaces.
_SPACES = "\u00a0\u2007\u202f\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2008\u2009\u200a\u3000"
#: C1 control characters that are Windows-1252 punctuation decoded as Latin-1 (PDF text): read as meant.
_CP1252 = {"\x91": "‘", "\x92": "’", "\x93": "“", "\x94": "”", "\x96": "–", "\x97": "—"}
_ODD = re.compile(f"[{_INVISIBLE}{_SPACES}{''.join(_CP1252)}]")
_SPACE_MAP = {**{ord(c): " " for c in _SPACES}, **{ord(k): v for k, v in _CP1252.items()}}


def clean(text: str) -> tuple[str, list[int] | None]:
    """``(clean text, offsets)``: NFC, invisible characters removed, odd spaces made plain, Windows-1252
    quotes and dashes read as Latin-1 (``\\x93a\\x94``) made the quotes they are.

    ``offsets[i]`` is the offset in ``text`` of the clean text's character ``i`` (one more entry: the
    end); None when the text needed no change (the common case, checked without copying).
    """
    if _ODD.search(text) is None and unicodedata.is_normalized("NFC", text):
        return text, None
    out: list[str] = []
    offsets: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):  # a base character and its combining marks
            j += 1
        piece = text[i:j]
        if piece[0] in _INVISIBLE:
            piece = piece[1:]
        piece = unicodedata.normalize("NFC", piece.translate(_SPACE_MAP)) if piece else piece
        out.append(piece)
        offsets.extend([i] * len(piece))
        i = j
    offsets.append(n)
    return "".join(out), offsets


def original_span(offsets: list[int] | None, start: int, end: int) -> tuple[int, int]:
    """The span in the caller's text of the clean text's ``[start, end)``."""
    if offsets is None:
        return start, end
    return offsets[start], offsets[end]
