"""Unicode clean-up of citation text before parsing (part of :mod:`ragcov_data.legal.citations`).

Real citation strings arrive NFD-decomposed (``a`` + U+0301 for ``á``), with zero-width characters
(U+200B, U+FEFF, soft hyphens) inside words and non-breaking spaces between them; text pasted from PDFs,
badly decoded files or right-to-left editors carries control characters (NUL, the other C0/C1 controls),
bidi controls (U+200E, U+202A-U+202E, U+2066-U+2069) and U+FFFD REPLACEMENT CHARACTER. The grammar is
written for NFC text with plain spaces and no controls, so :func:`clean` rewrites the text that way, says
where it removed something, and keeps, for every character of the clean text, the offset of the original
character it came from: citation spans are reported on the caller's text. Text copied from a terminal carries
ANSI escape sequences (``\x1b[1m`` bold, ``\x1b[31m`` red, ``\x1b[0m`` reset): each is taken out whole, not just
its ESC character (which would leave ``[1mart. 5º[0m``, where no artigo can be read).
"""
from __future__ import annotations

import re
import unicodedata

#: C1 control characters that are Windows-1252 punctuation decoded as Latin-1 (PDF text): read as meant.
_CP1252 = {"\x91": "‘", "\x92": "’", "\x93": "“", "\x94": "”", "\x96": "–", "\x97": "—"}
#: Characters that are not text, removed before parsing: every control character that is not whitespace
#: (C0, DEL, C1 other than the Windows-1252 punctuation above), every format character (Unicode category
#: ``Cf``: zero-width spaces and joiners, soft hyphen, BOM, bidi marks, embeddings, overrides and isolates,
#: tag characters), lone surrogates and U+FFFD (a character lost in decoding).
_REMOVED_RANGES = ((0x00, 0x08), (0x0E, 0x1B), (0x7F, 0x84), (0x86, 0x9F), (0xAD, 0xAD), (0x600, 0x605),
                   (0x61C, 0x61C), (0x6DD, 0x6DD), (0x70F, 0x70F), (0x890, 0x891), (0x8E2, 0x8E2), (0x180E, 0x180E),
                   (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F), (0xD800, 0xDFFF),
                   (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0xFFFD, 0xFFFD), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
                   (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F))
REMOVED = frozenset(chr(k) for a, b in _REMOVED_RANGES for k in range(a, b + 1)) - set(_CP1252)
#: Characters read as a plain space: no-break, figure, narrow, thin and other fixed-width spaces.
_SPACES = "\u00a0\u2007\u202f\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2008\u2009\u200a\u3000"
#: What sends a text to the slow path: a removed or odd-space character of the Basic Multilingual Plane (CP1252
#: punctuation is in its C1 range), or any character beyond it (one range: many astral ranges make the search of
#: every text several times slower; the slow path keeps what is not in :data:`REMOVED`).
_ODD = re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in _REMOVED_RANGES if b <= 0xFFFF)
                  + _SPACES + "\U00010000-\U0010FFFF]")
_SPACE_MAP = {**{ord(c): " " for c in _SPACES}, **{ord(k): v for k, v in _CP1252.items()}}
#: A terminal's escape sequence (ECMA-48): CSI (``ESC [`` or the 8-bit ``\x9b``: parameters, intermediates, a final
#: byte: colours, bold) or OSC (``ESC ]`` ... BEL or ``ESC \``: links, titles). A lone ESC before a letter (``\x1bII``)
#: is only the ESC: two-character escapes are not read, so no letter of a numeral is lost.
_ANSI = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def clean(text: str) -> tuple[str, list[int] | None, list[int]]:
    """``(clean text, offsets, removed)``: NFC, the characters of :data:`REMOVED` taken out, odd spaces
    made plain, Windows-1252 quotes and dashes read as Latin-1 (``\\x93a\\x94``) made the quotes they are.

    ``offsets[i]`` is the offset in ``text`` of the clean text's character ``i`` (one more entry: the
    end); None when the text needed no change (the common case, checked without copying). ``removed``
    lists the offsets in ``text`` of the characters taken out (ascending).
    """
    if _ODD.search(text) is None and unicodedata.is_normalized("NFC", text):
        return text, None, []
    out: list[str] = []
    offsets: list[int] = []
    removed: list[int] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] in REMOVED:
            esc = _ANSI.match(text, i) if text[i] in "\x1b\x9b" else None
            stop = esc.end() if esc else i + 1  # a terminal escape sequence goes whole
            removed.extend(range(i, stop))
            i = stop
            continue
        j = i + 1
        keep = [text[i]]
        while j < n and (unicodedata.combining(text[j]) or (text[j] in REMOVED and text[j] not in "\x1b\x9b")):
            # a base character and its marks (an escape sequence after it is taken out whole, above)
            if text[j] in REMOVED:
                removed.append(j)
            else:
                keep.append(text[j])
            j += 1
        piece = unicodedata.normalize("NFC", "".join(keep).translate(_SPACE_MAP))
        out.append(piece)
        offsets.extend([i] * len(piece))
        i = j
    offsets.append(n)
    return "".join(out), offsets, removed


def original_span(offsets: list[int] | None, start: int, end: int) -> tuple[int, int]:
    """The span in the caller's text of the clean text's ``[start, end)``."""
    if offsets is None:
        return start, end
    return offsets[start], offsets[end]
