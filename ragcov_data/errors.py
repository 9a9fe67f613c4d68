"""Exception types shared by every part of ragcov.

All errors subclass :class:`RagcovError`, itself a ``ValueError``, so callers can catch one type.
Messages name the file / parameter, the offending record and the fix; :func:`binary_kind` names what a file
that is not text is (a PDF named ``.jsonl`` is a PDF, not text in another encoding).
"""
from __future__ import annotations

#: Leading bytes of files that are not text -> what they are and what to do with them.
_BINARY = ((b"%PDF-", "a PDF document", "extract its text first (e.g. `pdftotext FILE out.txt`)"),
           (b"PK\x03\x04", "a ZIP archive (a .zip, or a Word/Excel/OpenDocument file)",
            "unpack it, or save the document as text"),
           (b"\xd0\xcf\x11\xe0", "an old Office document (.doc/.xls)", "save it as text"),
           (b"\x1f\x8b", "gzip-compressed data", "decompress it, or name it with .gz"),
           (b"BZh", "bzip2-compressed data", "decompress it, or name it with .bz2"),
           (b"\xfd7zXZ\x00", "xz-compressed data", "decompress it, or name it with .xz"),
           (b"PAR1", "a parquet file", "name it with .parquet"),
           (b"\x89PNG", "a PNG image", "give the text file instead"),
           (b"\xff\xd8\xff", "a JPEG image", "give the text file instead"))


def binary_kind(head: bytes) -> tuple[str, str] | None:
    """``(what the file is, what to do)`` when its first bytes are a known binary format's magic number (a PDF,
    a ZIP or Office file, compressed data, parquet, an image); None otherwise."""
    for magic, what, fix in _BINARY:
        if head.startswith(magic):
            return what, fix
    return None


class RagcovError(ValueError):
    """Base class for every error ragcov raises on bad input."""


class InputFileError(RagcovError):
    """A source file is missing, unreadable, malformed or not UTF-8."""


class ChecksumError(RagcovError):
    """A file's sha256 differs from the one recorded in a manifest."""


class QrelsRunMismatchError(RagcovError):
    """A run and a task disagree on query or document ids."""
