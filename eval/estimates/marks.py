"""The one mark and the one sentence of each interval's check, for every output.

Every interval ragcov prints carries the status of its check (:mod:`.verify`, ``verified_status``):

=================  ====  =====================================================================================
status             mark  words
=================  ====  =====================================================================================
``verified``             none: its coverage at this design is not shown to fall short
``not_verified``   ``*`` ``covers 92.8% ± 1.6%, short of the 95% level at this design`` (measured short)
``unverifiable``   ``‡`` ``the check cannot vouch here: <verified_reason>`` (never "short": it was not shown
                         to fall short, the check cannot tell)
=================  ====  =====================================================================================

Consoles, the report's HTML and markdown, LaTeX and JSON (``mark`` beside ``verified_status`` and
``verified_reason``) all take the mark and the words from here, so one row reads the same everywhere. The
reason is the row's own ``verified_reason``, as the check wrote it; nothing here re-derives it. ``‡`` (not ``†``)
because the leaderboard's pair matrix already uses ``*`` per cell for "separable" and ``†`` for "the order
depends on the pool": a system's interval mark sits beside an interval, a cell mark beside a difference.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

__all__ = ["STATUSES", "MARKS", "LABELS", "status_of", "mark", "words", "line", "footnotes", "record",
           "latex_mark", "NO_REASON", "MARK_FIELDS"]

#: The statuses of a check (None: no check ran, e.g. a stratified design).
STATUSES = ("verified", "not_verified", "unverifiable")
#: The mark printed beside an interval, by status.
MARKS = {"verified": "", "not_verified": "*", "unverifiable": "‡"}
#: The words a footnote opens with, by status.
LABELS = {"not_verified": "NOT VERIFIED", "unverifiable": "UNVERIFIABLE"}
#: Said for an ``unverifiable`` row whose check recorded no reason.
NO_REASON = "the check recorded no reason (verified_status in the JSON)"
#: Fields a row's JSON record carries about its check (``mark`` added beside the check's own).
MARK_FIELDS = ("verified_status", "verified_reason", "mark")
_LATEX = {"*": "$^*$", "‡": "$^\\ddagger$"}


def _get(row: Any, key: str) -> Any:
    if isinstance(row, Mapping) or hasattr(row, "get"):
        return row.get(key)
    return getattr(row, key, None)


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def status_of(row: Any) -> str | None:
    """The row's status: its ``verified_status``; a record without one (written before the status existed)
    reads ``verified`` True/False as verified/not_verified; None where no check ran."""
    st = _get(row, "verified_status")
    if isinstance(st, str) and st in STATUSES:
        return st
    v = _get(row, "verified")
    if _missing(v):
        return None
    return "verified" if bool(v) else "not_verified"


def mark(row: Any) -> str:
    """The mark beside the row's interval: ``""``, ``"*"`` or ``"‡"``."""
    return MARKS.get(status_of(row) or "", "")


def _pct(x: Any) -> str:
    return "?" if _missing(x) else f"{100 * float(x):.1f}%"


def _reason(row: Any) -> str:
    why = _get(row, "verified_reason")
    return str(why).strip().rstrip(".") if isinstance(why, str) and why.strip() else NO_REASON


def words(row: Any, level: float = 0.95) -> str:
    """What the row's check says, in words (``""`` for a verified or unchecked row)."""
    st = status_of(row)
    if st == "not_verified":
        se = _get(row, "verified_mc_se")
        margin = "" if _missing(se) else f" ± {_pct(2 * float(se))}"
        return f"covers {_pct(_get(row, 'verified_coverage'))}{margin}, short of the {level:.0%} level at this design"
    if st == "unverifiable":
        return f"the check cannot vouch here: {_reason(row)}"
    return ""


def line(label: str, row: Any, level: float = 0.95) -> str:
    """One row's footnote: ``* NOT VERIFIED: micro cr2 covers 92.8% ± 1.6%, short of the 95% level at this
    design.`` (``""`` for a verified or unchecked row)."""
    st = status_of(row)
    if st not in LABELS:
        return ""
    return f"{MARKS[st]} {LABELS[st]}: {label} {words(row, level)}."


def footnotes(rows: Iterable[tuple[str, Any]], level: float = 0.95) -> list[str]:
    """The footnotes under a table of ``(label, row)``: one line for the rows measured short (each with its
    coverage), one line per reason for the rows the check cannot vouch for; nothing for verified rows."""
    short, blind = [], {}  # reason -> labels: one reason said once for every row it holds for
    for label, row in rows:
        st = status_of(row)
        if st == "not_verified":
            short.append(f"{label} {words(row, level).split(', short of')[0]}")
        elif st == "unverifiable":
            blind.setdefault(_reason(row), []).append(label)
    out = []
    if short:
        out.append(f"{MARKS['not_verified']} {LABELS['not_verified']}: {'; '.join(short)}: short of the "
                   f"{level:.0%} level at this design.")
    out += [f"{MARKS['unverifiable']} {LABELS['unverifiable']}: {', '.join(labels)}: the check cannot vouch here: "
            f"{why}." for why, labels in blind.items()]
    return out


def record(row: Any) -> dict[str, Any]:
    """The row's check fields for JSON: ``verified_status``, ``verified_reason`` and its ``mark``."""
    why = _get(row, "verified_reason")
    return {"verified_status": status_of(row), "verified_reason": why if isinstance(why, str) else "",
            "mark": mark(row)}


def latex_mark(row: Any) -> str:
    """The row's mark as LaTeX math (``$^*$``, ``$^\\ddagger$``), ``""`` when none."""
    return _LATEX.get(mark(row), "")
