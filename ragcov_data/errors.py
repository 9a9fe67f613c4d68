"""Exception types shared by every part of ragcov.

All errors subclass :class:`RagcovError`, itself a ``ValueError``, so callers can catch one type.
Messages name the file / parameter, the offending record and the fix.
"""
from __future__ import annotations


class RagcovError(ValueError):
    """Base class for every error ragcov raises on bad input."""


class InputFileError(RagcovError):
    """A source file is missing, unreadable, malformed or not UTF-8."""


class ChecksumError(RagcovError):
    """A file's sha256 differs from the one recorded in a manifest."""


class QrelsRunMismatchError(RagcovError):
    """A run and a task disagree on query or document ids."""
