"""Acts published as tables of their units (one row a dispositivo, with its LexML URN), rebuilt as text.

A unit table (the ``lgpd/`` folder's ``lei_13709_20180814.csv``) holds an act as rows ``Tipo, Rotulo,
Num_Inicio, Num_Final, Texto, urn``: ``CAP``/``SEC`` headings, ``ART`` (the whole artigo on one line, every
label in it), ``CPT`` (the caput), ``PAR``, ``INC``, ``ALI``, each ``Texto`` prefixed with page furniture
(``[ … | … ] ``). :func:`read_unit_table` reads and checks one; :func:`rebuild_act` writes the act as a
compiled page is written (:data:`REBUILD_RULE`), so the dispositivo parser, the provision locator and every
chunker read it as they read a Planalto page::

    CAPÍTULO I
    DISPOSIÇÕES PRELIMINARES
    Art. 1º Esta Lei dispõe sobre o tratamento de dados pessoais, ...
    Parágrafo único. As normas gerais contidas nesta Lei ...
    Art. 5º Para os fins desta Lei, considera-se:
    I – dado pessoal: informação relacionada a pessoa natural identificada ou identificável;

The text is the ``ART`` rows' text cut into lines (nothing added, nothing dropped): an inciso or alínea
starts where its row's text (which keeps its label) is found, a parágrafo where its label (from ``Rotulo``:
``§ 1º``, ``Parágrafo único.``) is found followed by its row's text (which lost the label); a heading is
the ``CAP``/``SEC`` row's text before its first unit (``CAPÍTULO I`` on a line, its title on the next).
A unit that cannot be found where the table puts it is an error naming the file, the row and the unit.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.legal.acervo import Acervo, Document, SourceFile, _decode, sha256_file

__all__ = ["UNIT_COLUMNS", "UNIT_TYPES", "REBUILD_RULE", "read_unit_table", "rebuild_act", "unit_acervo",
           "strip_furniture", "Unit"]

UNIT_COLUMNS = ("Tipo", "Rotulo", "Num_Inicio", "Num_Final", "Texto", "urn")
#: Unit types: headings, the whole artigo, its caput and parts.
UNIT_TYPES = ("CAP", "SEC", "ART", "CPT", "PAR", "INC", "ALI")
REBUILD_RULE = (
    "each act rebuilt from its unit table: page furniture (the leading '[ … | … ]', and the source page's link icons "
    "left inline, 'all_inclusiveRegulamentação', 'remove_red_eyeNormas correlatas') stripped; the ART rows' text in "
    "reading order (Num_Inicio), cut into lines where each parágrafo (its Rotulo label, then its text), inciso and "
    "alínea (their text, label included) starts; each CAPÍTULO/Seção heading (the CAP/SEC row's text before its "
    "first unit) on its own lines, the numeral line then the title; nothing added or dropped"
)
_FURNITURE = re.compile(r"\[[^\]]*\]\s*")
#: The source page's link icons left inline (``competência:all_inclusiveRegulamentação``): an icon name glued to
#: its link's label.
_LINKS = re.compile(r"[a-z]+(?:_[a-z]+)+(?:Regulamentação|Normas correlatas)")
_HEADING = re.compile(r"((?:CAP[ÍI]TULO|T[ÍI]TULO|LIVRO|Se[çc][ãa]o|SE[ÇC][ÃA]O|Subse[çc][ãa]o|SUBSE[ÇC][ÃA]O)\s+"
                      r"(?:[IVXLCDM]+(?:-[A-Z])?|[ÚU]NIC[OA]))\s+(\S.*)")
_PAR_LABEL = re.compile(r"(§\s*\d+[º°o]?(?:-[A-Z])?|Par[áa]grafo [úu]nico\.?)$")


@dataclass(frozen=True)
class Unit:
    """One row of a unit table: ``kind`` (Tipo), ``label`` (Rotulo), line span, text (furniture stripped),
    ``urn``, ``fragment`` (the URN after ``!``) and the row number in the file (1 = the first data row)."""

    kind: str
    label: str
    first: int
    last: int
    text: str
    urn: str
    fragment: str
    row: int


def strip_furniture(text: str) -> str:
    """A unit's text without the page furniture: the prefix (``[ … | … ] ``) and the link icons left inline
    (``all_inclusiveRegulamentação``, ``remove_red_eyeNormas correlatas``)."""
    m = _FURNITURE.match(text)
    return " ".join(_LINKS.sub(" ", text[m.end():] if m else text).split())


def read_unit_table(path: str | os.PathLike) -> list[Unit]:
    """Read one unit table (CSV, UTF-8) into its units, in reading order (``Num_Inicio``, the enclosing
    unit first).

    Raises
    ------
    InputFileError
        A missing file or column, an unknown ``Tipo``, a line number that is not a whole number, an empty
        text, a URN of another act than the table's first row or without a fragment; the message names the
        file, the row and the fix.
    """
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"unit table {str(p)!r} does not exist; pass a CSV of the act's units "
                             f"({', '.join(UNIT_COLUMNS)}).")
    import io

    try:
        df = pd.read_csv(io.StringIO(_decode(p.read_bytes(), str(p))), dtype=str, keep_default_na=False)
    except pd.errors.ParserError as exc:
        raise InputFileError(f"{p}: not a readable CSV ({exc}); write one unit a row, fields quoted.") from None
    missing = [c for c in UNIT_COLUMNS if c not in df.columns]
    if missing:
        raise InputFileError(f"{p}: column(s) {missing} missing (found {list(df.columns)}); a unit table has "
                             f"{', '.join(UNIT_COLUMNS)}.")
    if not len(df):
        raise InputFileError(f"{p}: no units; the table is empty.")
    units = [_unit(p, i + 1, r) for i, r in enumerate(df[list(UNIT_COLUMNS)].itertuples(index=False))]
    acts = {u.urn.split("!")[0] for u in units}
    if len(acts) > 1:
        raise InputFileError(f"{p}: units of {len(acts)} acts ({sorted(acts)[:3]}); a unit table holds one act.")
    return sorted(units, key=lambda u: (u.first, -u.last, u.row))


def _unit(p: Path, row: int, r: Any) -> Unit:
    where = f"{p}: row {row} ({r.Rotulo or r.urn or '?'})"
    if r.Tipo not in UNIT_TYPES:
        raise InputFileError(f"{where}: Tipo {r.Tipo!r} is not one of {list(UNIT_TYPES)}; fix the row.")
    try:
        first, last = int(r.Num_Inicio), int(r.Num_Final)
    except ValueError:
        raise InputFileError(f"{where}: Num_Inicio/Num_Final {r.Num_Inicio!r}/{r.Num_Final!r} are not whole line "
                             "numbers; fix the row.") from None
    if last < first:
        raise InputFileError(f"{where}: Num_Final {last} is before Num_Inicio {first}; fix the row.")
    text = strip_furniture(r.Texto)
    if not text:
        raise InputFileError(f"{where}: no text after the page furniture; every unit has its text.")
    if "!" not in r.urn or not r.urn.startswith("urn:lex:"):
        raise InputFileError(f"{where}: urn {r.urn!r} is not a LexML URN with a fragment (urn:lex:...!art1); "
                             "fix the row.")
    return Unit(r.Tipo, r.Rotulo, first, last, text, r.urn, r.urn.split("!", 1)[1], row)


def _norm(text: str) -> str:
    return " ".join(text.split())


def rebuild_act(units: list[Unit], name: str = "table") -> str:
    """The act's text, one dispositivo a line (see the module docstring and :data:`REBUILD_RULE`)."""
    lines: list[str] = []
    for u in units:
        if u.kind in ("CAP", "SEC"):
            lines.extend(_heading(u, units, name))
        elif u.kind == "ART":
            parts = [x for x in units if x.fragment.startswith(u.fragment + "_")]
            lines.extend(_article_lines(u, parts, name))
    n_art = sum(u.kind == "ART" for u in units)
    if not n_art:
        raise InputFileError(f"{name}: no ART row; the act's artigos are its ART rows.")
    return "\n".join(lines) + "\n"


def _heading(u: Unit, units: list[Unit], name: str) -> list[str]:
    """A CAP/SEC row's own text (before its first unit): ``CAPÍTULO I`` and its title on the next line."""
    inner = [x for x in units if x is not u and u.first <= x.first and x.last <= u.last and x.kind in ("SEC", "ART")]
    own = _norm(u.text)
    if inner:
        first = min(inner, key=lambda x: (x.first, -x.last))
        at = own.find(_norm(first.text))
        if at < 0:
            raise InputFileError(f"{name}: row {u.row} ({u.label}): the text of its first unit (row {first.row}, "
                                 f"{first.label}) is not in it; the heading cannot be told from its units.")
        own = own[:at].strip()
    m = _HEADING.fullmatch(own)
    return [m.group(1), m.group(2)] if m else [own] if own else []


def _article_lines(art: Unit, parts: list[Unit], name: str) -> list[str]:
    """The ART row's text cut into lines where each parágrafo, inciso and alínea starts."""
    text = _norm(art.text)
    if not re.match(r"Art\.?\s*\d", text):
        raise InputFileError(f"{name}: row {art.row} ({art.label}): an ART row opens with its label (Art. 5º ...); "
                             f"got {text[:40]!r}.")
    cuts, cursor = [], 0
    for u in parts:
        if u.kind in ("INC", "ALI"):
            at = text.find(_norm(u.text), cursor)
        elif u.kind == "PAR":
            at = _paragraph_at(text, u, cursor)
        else:
            continue  # the caput opens the artigo
        if at < 0:
            raise InputFileError(f"{name}: row {u.row} ({u.label}): its text is not in its artigo's ART row "
                                 f"(row {art.row}) after the units before it; the table is inconsistent there.")
        cuts.append(at)
        cursor = at + 1
    bounds = [0, *cuts, len(text)]
    return [text[a:b].strip() for a, b in zip(bounds[:-1], bounds[1:]) if text[a:b].strip()]


def _paragraph_at(text: str, u: Unit, cursor: int) -> int:
    """Where a parágrafo starts in its artigo's text: its label (``§ 1º``, ``Parágrafo único.``, from
    ``Rotulo``) right before its text's first word."""
    m = _PAR_LABEL.search(u.label.strip())
    if m is None:
        return -1
    label = m.group(1)
    head = _norm(u.text).split(" ", 1)[0]
    probe = f"{label} {head}"
    at = text.find(probe, cursor)
    while at > 0 and text[at - 1] != " ":
        at = text.find(probe, at + 1)
    return at


def unit_acervo(paths: list[str | os.PathLike]) -> tuple[Acervo, dict[str, list[Unit]]]:
    """The acts of the unit tables ``paths`` as an :class:`~ragcov_data.legal.acervo.Acervo` (one document an
    act: ``doc_id`` ``lei-13709-2018``, ``title`` ``Lei nº 13.709, de 14 de agosto de 2018``, ``urn``), and each
    act's units by ``doc_id``."""
    from ragcov_data.legal.citations import canonical_id, read_urn, urn_title

    docs, sources, units_of = [], [], {}
    for path in paths:
        p = Path(path).expanduser().resolve()
        units = read_unit_table(p)
        act_urn = units[0].urn.split("!")[0]
        try:
            doc_id, title = canonical_id(read_urn(act_urn).act) or p.stem, urn_title(act_urn)
        except RagcovError as exc:
            raise InputFileError(f"{p}: row {units[0].row}: {exc}") from None
        if doc_id in units_of:
            raise InputFileError(f"{p}: the act {doc_id} is given twice; pass each unit table once.")
        units_of[doc_id] = units
        docs.append(Document(doc_id, rebuild_act(units, str(p)), {"title": title, "urn": act_urn},
                             str(p)))
        sources.append(SourceFile(p.name, str(p), sha256_file(p), p.stat().st_size))
    return Acervo(docs, ["title", "urn"], sources), units_of
