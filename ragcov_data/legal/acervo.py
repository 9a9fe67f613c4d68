"""Read a document collection ("acervo") into memory, validating every record.

Accepted sources (one path or a list of paths, read in the given order):

- JSONL (``.jsonl``/``.ndjson``): one JSON object a line with an id, a text and any metadata. Lines are
  separated by ``\n`` (or ``\r\n``) only, as JSON Lines specifies: U+2028, U+2029, U+0085 and every other
  character inside a JSON string are content, never a line break. A UTF-8 byte-order mark is tolerated at
  the start of the file (and only there);
- CSV (``.csv``, UTF-8, header row) and parquet (``.parquet``): same columns;
- a folder of ``.txt``/``.md``/``.html`` files (id = posix path relative to the folder; HTML is
  reduced to its text with the standard-library parser, ``<script>``/``<style>`` dropped, decoded as UTF-8
  or, failing that, in the charset the page declares, e.g. Planalto's ``windows-1252``).

Text files are read as published compilations (:mod:`ragcov_data.legal.vigencia`): superseded wording
(``<strike>`` in HTML, ``~~...~~`` in Markdown, a SIJUT ``[Revogado(a) pelo(a) ...]`` provision, the
earlier of two wordings of one provision in plain text) is taken out unless ``keep_superseded=True``, and
counted in ``Acervo.vigencia``; each document gets the ``status`` its text states (``revoked``,
``suspended`` or null). Table sources (JSONL, CSV, parquet) hold stored text: it is taken as given, only its
stated status is read.

The id and text columns are ``doc_id`` and ``text`` unless mapped with ``id_column=``/``text_column=``.
Every other field is metadata and travels with the document as a string (``None`` stays null).
Bad input raises :class:`~ragcov_data.errors.InputFileError` naming the file, the record and the fix;
nothing is dropped silently: files of other types in a folder (PDF, DOCX, hidden files ...) are listed in
``Acervo.skipped_files`` with their reason in ``Acervo.skipped_reasons``, and named in a
:class:`SkippedFilesWarning`.
"""
from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import hashlib
import io
import json
import math
import os
import re
import unicodedata
import warnings
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Sequence

from ragcov_data.errors import InputFileError, binary_kind

#: File suffixes read from a folder acervo.
FOLDER_SUFFIXES = {".txt": "txt", ".md": "md", ".html": "html", ".htm": "html"}
_JSONL = {".jsonl", ".ndjson"}
_CSV = {".csv"}
_PARQUET = {".parquet", ".pq"}
#: Column names reserved by the task; a metadata field may not use them. Beside the ids and the text: the columns
#: a dispositivo chunking adds (``unit``, ``continued``, ``articles``, the spans) and the vigência columns.
RESERVED_COLUMNS = ("_id", "doc_id", "chunk_index", "chunk_id", "text", "unit", "continued", "articles",
                    "start_char", "end_char", "in_force", "units_not_in_force", "share_not_in_force")
#: JSON's insignificant whitespace (RFC 8259): what a blank JSONL line may hold.
_JSON_WS = " \t\r"
#: Skipped files named one by one in the warning (the rest are counted).
_SKIPPED_SHOWN = 20


class SkippedFilesWarning(UserWarning):
    """Files of a folder acervo were not read (unsupported type or hidden); the message names them."""


class Document(NamedTuple):
    """One document of an acervo."""

    doc_id: str
    text: str
    metadata: dict[str, str | None]
    where: str  # "file, line N" / "file, row N" / "file": for error messages
    #: character spans of superseded wording still in ``text`` (only with ``keep_superseded=True``)
    superseded: tuple[tuple[int, int], ...] = ()
    #: the status the text states of the document: "revoked", "suspended" or None
    status: str | None = None
    #: words of superseded wording taken out of ``text`` (text files read without ``keep_superseded``)
    removed_words: int = 0


@dataclass(frozen=True)
class SourceFile:
    """A file read into the acervo, with its content hash."""

    name: str  # display name: file name, or folder/relative/path for folder acervos
    path: str  # absolute path
    sha256: str
    n_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "sha256": self.sha256, "bytes": self.n_bytes}


@dataclass
class Acervo:
    """Documents read from one or more sources, in source order.

    Attributes
    ----------
    documents : list of Document
    metadata_columns : list of str
        Metadata field names, in order of first appearance.
    sources : list of SourceFile
        Every file read, with sha256 and size.
    skipped_files : list of str
        Files of a folder acervo that were not read (not ``.txt``/``.md``/``.html``, or hidden).
    skipped_reasons : dict of str to str
        Why each skipped file was not read (``"unsupported type .pdf"``, ``"hidden"``).
    vigencia : dict
        What reading found of vigência: ``keep_superseded``, superseded ``passages``/``words`` and the
        ``documents`` holding them (text files), ``statuses`` (documents by stated status, every source),
        ``annotated`` (the task gets the ``status``/``in_force`` columns: superseded wording was found, a
        text file states its status, or ``keep_superseded=True``).
    """

    documents: list[Document]
    metadata_columns: list[str]
    sources: list[SourceFile]
    skipped_files: list[str] = field(default_factory=list)
    skipped_reasons: dict[str, str] = field(default_factory=dict)
    vigencia: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.documents)


# --------------------------------------------------------------------------- helpers


def sha256_file(path: str | os.PathLike) -> str:
    """sha256 hex digest of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _decode(data: bytes, name: str) -> str:
    """Decode UTF-8 strictly (a BOM is allowed); name the line and byte offset of bad bytes."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        binary = binary_kind(data[:8])
        if binary is not None:  # not text in another encoding: iconv would not help
            raise InputFileError(f"{name}: this file is {binary[0]} (its first bytes are {data[:5]!r}), not UTF-8 "
                                 f"text, whatever its name says; {binary[1]}.") from None
        line = data[: exc.start].count(b"\n") + 1
        raise InputFileError(
            f"{name}: line {line} (byte offset {exc.start}) is not valid UTF-8 ({data[exc.start:exc.start + 4]!r}); "
            "re-encode the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)."
        ) from None


def _meta_value(value: Any) -> str | None:
    """A metadata value as a string (None and NaN stay null; lists/dicts as sorted JSON)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return None if math.isnan(value) else repr(value)
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="strict")
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


class _TextExtractor(HTMLParser):
    """Collect the visible text of an HTML page (scripts, styles and icon-font ligatures dropped) and the
    spans of struck-through text (``<strike>``, ``<s>``, ``<del>``, ``text-decoration: line-through``)."""

    _SKIP = {"script", "style", "noscript", "template"}
    _BLOCK = {"p", "div", "br", "li", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article"}
    _STRIKE = {"strike", "s", "del"}
    _VOID = {"br", "img", "meta", "hr", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.struck: list[tuple[int, int]] = []
        self._pos = 0
        self._skip_depth = 0
        self._open: list[tuple[str, bool, bool]] = []  # (tag, strikes, skips) of open elements
        self._strike_depth = 0

    def _emit(self, text: str) -> None:
        if self._strike_depth and text.strip():
            self.struck.append((self._pos, self._pos + len(text)))
        self.parts.append(text)
        self._pos += len(text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self._SKIP:
            self._skip_depth += 1
        elif tag in self._BLOCK:
            self._emit("\n")
        if tag in self._SKIP or tag in self._VOID:
            return
        a = {k: (v or "") for k, v in attrs}
        strikes = tag in self._STRIKE or "line-through" in a.get("style", "").replace(" ", "").lower()
        skips = "material-icons" in a.get("class", "")  # icon names written as ligatures ("import_export")
        self._open.append((tag, strikes, skips))
        self._strike_depth += strikes
        self._skip_depth += skips

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skip_depth:
            self._skip_depth -= 1
        elif tag in self._BLOCK:
            self._emit("\n")
        if tag in self._SKIP or tag in self._VOID or not any(t == tag for t, _, _ in self._open):
            return
        while self._open:  # close up to the matching element (unclosed children close with it)
            t, strikes, skips = self._open.pop()
            self._strike_depth -= strikes
            self._skip_depth -= skips
            if t == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self._skip_depth:
            self._emit(data)


def html_text_and_struck(html: str) -> tuple[str, list[tuple[int, int]]]:
    """Visible text of an HTML document and the character spans of its struck-through text."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts), parser.struck


def html_to_text(html: str) -> str:
    """Visible text of an HTML document (standard-library parser; ``<script>``/``<style>`` dropped)."""
    return html_text_and_struck(html)[0]


_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_\-]+)""", re.I)


def _decode_html(data: bytes, name: str) -> str:
    """An HTML page decoded as UTF-8, else in the charset its ``<meta>`` declares (``windows-1252`` ...)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    m = _CHARSET.search(data[:8192])
    if m:
        try:
            return data.decode(m.group(1).decode("ascii"))
        except (LookupError, UnicodeDecodeError):
            pass
    return _decode(data, name)  # raises, naming the line and byte


# --------------------------------------------------------------------------- readers


#: A terminal escape sequence (colour, bold, a link): text copied from a terminal, not the act's wording.
_ESCAPE = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def _refuse_escapes(text: str, where: str, doc_id: str) -> None:
    """Refuse a document whose text holds terminal escape sequences: ``\x1b[1mArt. 5º\x1b[0m`` would hide the
    article's heading from every reader of the act (its citations would not be found in it)."""
    if "\x1b" not in text and "\x9b" not in text:
        return
    m = _ESCAPE.search(text)
    if m is None:
        return
    line = text.count("\n", 0, m.start()) + 1
    raise InputFileError(
        f"{where}: document {doc_id!r} holds terminal escape codes ({m.group()!r} at its line {line}: text copied "
        "from a terminal's colours or bold), which would hide headings such as `Art. 5º` from the parser; strip "
        "them from the source (e.g. `sed -E 's/\\x1b\\[[0-9;]*[A-Za-z]//g'`) and read it again.")


class _Collector:
    """Accumulate documents, checking ids, texts and metadata names."""

    def __init__(self, id_column: str, text_column: str) -> None:
        self.id_column, self.text_column = id_column, text_column
        self.documents: list[Document] = []
        self.seen: dict[str, str] = {}
        self.metadata_columns: dict[str, None] = {}

    def add(self, record: dict[str, Any], where: str, name: str,
            superseded: tuple[tuple[int, int], ...] = (), removed_words: int = 0) -> None:
        if self.id_column not in record or record[self.id_column] is None:
            raise InputFileError(
                f"{where}: no `{self.id_column}` field; give every record an id, or map the id column with "
                f"`id_column=` (fields present: {sorted(record)[:10]})."
            )
        if self.text_column not in record or record[self.text_column] is None:
            raise InputFileError(
                f"{where}: no `{self.text_column}` field; give every record a text, or map the text column with "
                f"`text_column=` (fields present: {sorted(record)[:10]})."
            )
        raw_id, text = record[self.id_column], record[self.text_column]
        if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
            raise InputFileError(f"{where}: `{self.id_column}` must be a string or integer; got {raw_id!r}.")
        doc_id = str(raw_id)
        if not doc_id.strip():
            raise InputFileError(f"{where}: `{self.id_column}` is empty; give the record a unique id.")
        if not isinstance(text, str):
            raise InputFileError(f"{where}: `{self.text_column}` must be a string; got {type(text).__name__}.")
        if not text.split():
            raise InputFileError(
                f"{where}: document {doc_id!r} is empty (no words in `{self.text_column}`); "
                "remove the record or fill in its text."
            )
        _refuse_escapes(text, where, doc_id)
        if doc_id in self.seen:
            raise InputFileError(
                f"{where}: duplicate doc_id {doc_id!r} (first seen at {self.seen[doc_id]}); "
                "ids must be unique across all sources: rename or remove one of them."
            )
        self.seen[doc_id] = where
        metadata = {}
        for key, value in record.items():
            if key in (self.id_column, self.text_column):
                continue
            if key in RESERVED_COLUMNS:
                raise InputFileError(
                    f"{where}: metadata field {key!r} clashes with a task column {RESERVED_COLUMNS}; rename it "
                    "in the source (or map the id/text columns with `id_column=`/`text_column=`)."
                )
            try:
                metadata[key] = _meta_value(value)
            except UnicodeDecodeError:
                raise InputFileError(f"{where}: metadata field {key!r} holds bytes that are not UTF-8.") from None
            self.metadata_columns.setdefault(key, None)
        self.documents.append(Document(doc_id, text, metadata, where, superseded, removed_words=removed_words))


def as_nfc(acervo: "Acervo") -> "Acervo":
    """``acervo`` with every text in Unicode NFC, so an act saved decomposed (NFD) reads as the same act
    (its ``Parágrafo único`` is found); superseded spans move with the text. Documents already in NFC, and
    an acervo whose texts all are, are returned as they are."""
    if all(unicodedata.is_normalized("NFC", d.text) for d in acervo.documents):
        return acervo
    docs = [d if unicodedata.is_normalized("NFC", d.text) else d._replace(**dict(zip(
        ("text", "superseded"), _nfc(d.text, tuple(d.superseded))))) for d in acervo.documents]
    return dataclasses.replace(acervo, documents=docs)


def _nfc(text: str, spans: tuple[tuple[int, int], ...]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """``text`` in NFC and ``spans`` moved with it (each piece between span bounds normalised alone)."""
    bounds = sorted({0, len(text), *(x for s in spans for x in s)})
    where, out, at = {0: 0}, [], 0
    for a, b in zip(bounds[:-1], bounds[1:]):
        piece = unicodedata.normalize("NFC", text[a:b])
        out.append(piece)
        at += len(piece)
        where[b] = at
    return "".join(out), tuple((where[a], where[b]) for a, b in spans)


def jsonl_lines(text: str) -> Iterable[tuple[int, str]]:
    """``(line number, line)`` of a JSON Lines text, split as the format specifies.

    Records end at ``\n`` only (one trailing ``\r`` is dropped, so ``\r\n`` works too). Unlike
    ``str.splitlines()``, U+2028, U+2029, U+0085, form feeds and the other Unicode line boundaries are
    content: they are legal, unescaped, inside JSON strings. A leading byte-order mark must already be
    removed (:func:`_decode` does it).
    """
    for lineno, line in enumerate(text.split("\n"), start=1):
        yield lineno, line[:-1] if line.endswith("\r") else line


def _read_jsonl(text: str, name: str, col: _Collector) -> None:
    for lineno, line in jsonl_lines(text):
        if not line.strip(_JSON_WS):
            continue
        where = f"{name}, line {lineno}"
        if line.startswith("\ufeff"):
            raise InputFileError(
                f"{where}: a byte-order mark (U+FEFF) starts the line; it is only allowed at the start of the "
                "file (were files concatenated?). Remove it from the line."
            )
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFileError(f"{where}: not valid JSON ({exc.msg}, column {exc.colno}); fix the line.") from None
        if not isinstance(record, dict):
            raise InputFileError(f"{where}: expected a JSON object, got {type(record).__name__}.")
        col.add(record, where, name)


def _read_csv(text: str, name: str, col: _Collector) -> None:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputFileError(f"{name}: the CSV file is empty; expected a header row with "
                             f"`{col.id_column}` and `{col.text_column}`.") from None
    for needed, opt in ((col.id_column, "id_column"), (col.text_column, "text_column")):
        if needed not in header:
            raise InputFileError(
                f"{name}: no `{needed}` column (header: {header[:10]}); rename the column or pass `{opt}=`."
            )
    start = reader.line_num + 1
    for row in reader:
        where = f"{name}, line {start}"
        if len(row) != len(header):
            raise InputFileError(f"{where}: {len(row)} fields but the header has {len(header)}; fix the quoting.")
        # a CSV has no null: empty metadata cells become null
        record = {k: (v if v != "" or k in (col.id_column, col.text_column) else None) for k, v in zip(header, row)}
        col.add(record, where, name)
        start = reader.line_num + 1


def _read_parquet(path: Path, name: str, col: _Collector) -> None:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    for needed, opt in ((col.id_column, "id_column"), (col.text_column, "text_column")):
        if needed not in table.column_names:
            raise InputFileError(
                f"{name}: no `{needed}` column (columns: {table.column_names[:10]}); rename it or pass `{opt}=`."
            )
    for i, record in enumerate(table.to_pylist()):
        col.add(record, f"{name}, row {i + 1}", name)


def skip_reason(relative: str | os.PathLike) -> str | None:
    """Why a file of a folder acervo is not read (``"hidden"``, ``"unsupported type .pdf"``), or None."""
    path = Path(relative)
    if any(part.startswith(".") for part in path.parts):
        return "hidden"
    if path.suffix.lower() not in FOLDER_SUFFIXES:
        return f"unsupported type {path.suffix.lower() or '(no suffix)'}"
    return None


def describe_skipped(reasons: dict[str, str], limit: int = _SKIPPED_SHOWN) -> str:
    """One line naming skipped files and their reasons (the first ``limit``; the rest are counted)."""
    shown = [f"{name} ({why})" for name, why in list(reasons.items())[:limit]]
    more = f" and {len(reasons) - limit} more" if len(reasons) > limit else ""
    return (f"{len(reasons)} file(s) in the acervo folder were not read (only "
            f"{'/'.join(sorted(set(FOLDER_SUFFIXES)))} files are): {', '.join(shown)}{more}. To include a PDF or "
            "DOCX, convert it to .txt first (hidden files are never read); the manifest lists them under "
            "skipped_files.")


class _Vigencia:
    """Superseded wording of the text files read, resolved as they are read."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.passages = self.words = self.documents = 0

    def read(self, data: bytes, fmt: str, display: str) -> tuple[str, tuple[tuple[int, int], ...], int]:
        """The text of a text file, the superseded spans kept in it, and the superseded words taken out."""
        # local: keeps `import ragcov_data.legal.acervo` (read_acervo, load_dataset) free of pandas
        from ragcov_data.legal import vigencia

        struck: list[tuple[int, int]] = []
        if fmt == "html":
            text, struck = html_text_and_struck(_decode_html(data, display))
        else:
            text = _decode(data, display)
            if fmt == "md":
                text, struck = vigencia.markdown_struck(text)
        spans = vigencia.superseded_spans(text, struck)
        if fmt == "md":  # superseded wording inside a code fence is left alone
            spans = vigencia.outside(spans, vigencia.code_fences(text))
        text, kept, n_words = vigencia.resolve(text, spans, self.keep)
        self.passages += len(spans)
        self.words += n_words
        self.documents += bool(spans)
        if n_words and not self.keep and not text.split():  # not "empty": all of it was out of force
            raise InputFileError(
                f"{display}: every word of this act is superseded wording ({len(spans)} struck-through or revoked "
                f"passage(s), {n_words:,} words), which is taken out of the index by default, so nothing is left. "
                "Keep it, marked out of force, with --keep-superseded (keep_superseded=True), or remove the file.")
        return text, tuple(kept), 0 if self.keep else n_words


def _read_folder(folder: Path, col: _Collector, sources: list[SourceFile], skipped: dict[str, str],
                 vig: _Vigencia) -> None:
    files = sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.relative_to(folder).as_posix())
    for path in files:
        rel = path.relative_to(folder).as_posix()
        display = f"{folder.name}/{rel}"
        reason = skip_reason(path.relative_to(folder))
        if reason:
            skipped[display] = reason
            continue
        data = path.read_bytes()
        sources.append(SourceFile(display, str(path.resolve()), hashlib.sha256(data).hexdigest(), len(data)))
        fmt = FOLDER_SUFFIXES[path.suffix.lower()]
        text, kept, removed = vig.read(data, fmt, display)
        col.add({col.id_column: rel, col.text_column: text, "format": fmt}, display, display, kept, removed)


def _as_paths(source: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    if isinstance(source, (str, os.PathLike)):
        return [Path(source)]
    paths = [Path(p) for p in source]
    if not paths:
        raise InputFileError("no source given: pass a file, a folder or a list of them.")
    return paths


def read_acervo(
    source: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    id_column: str = "doc_id",
    text_column: str = "text",
    keep_superseded: bool = False,
) -> Acervo:
    """Read a document collection from JSONL, CSV, parquet files or folders of text files.

    Parameters
    ----------
    source : path or list of paths
        Files (``.jsonl``, ``.csv``, ``.parquet``) and/or folders of ``.txt``/``.md``/``.html`` files,
        read in the given order.
    id_column, text_column : str, default: ``"doc_id"``, ``"text"``
        Names of the id and text columns in JSONL/CSV/parquet sources (folders use the relative path as id).
    keep_superseded : bool, default: False
        Text files (``.html``/``.md``/``.txt``): keep superseded wording (struck-through, revoked on a SIJUT
        page, the earlier of two wordings of one provision) in the text, its spans in
        ``Document.superseded``, instead of taking it out (see :mod:`ragcov_data.legal.vigencia`).

    Returns
    -------
    Acervo
        Documents in source order, metadata column names, the sha256 of every file read, and
        ``vigencia`` (superseded wording found, statuses stated). When ``vigencia["annotated"]``, every
        document has the metadata field ``status`` (``revoked``, ``suspended`` or null; ``stated_status``
        if the source has a ``status`` field of its own).

    Raises
    ------
    InputFileError
        Missing file, unknown file type, non-UTF-8 bytes, missing id/text field, empty document or
        duplicate id; the message names the file and line/row.

    Warns
    -----
    SkippedFilesWarning
        A folder held files that are not read (other types, hidden): named with their reason.
    """
    col = _Collector(id_column, text_column)
    sources: list[SourceFile] = []
    skipped: dict[str, str] = {}
    vig = _Vigencia(bool(keep_superseded))
    for path in _as_paths(source):
        if not path.exists():
            raise InputFileError(f"source {str(path)!r} does not exist; pass an existing file or folder.")
        if path.is_dir():
            _read_folder(path, col, sources, skipped, vig)
            continue
        suffix = path.suffix.lower()
        name = path.name
        if suffix in _PARQUET:
            sources.append(SourceFile(name, str(path.resolve()), sha256_file(path), path.stat().st_size))
            _read_parquet(path, name, col)
            continue
        if suffix not in _JSONL | _CSV | set(FOLDER_SUFFIXES):
            raise InputFileError(
                f"{name}: unknown file type {suffix!r}; expected .jsonl, .csv, .parquet, .txt, .md, .html "
                "or a folder of .txt/.md/.html files."
            )
        data = path.read_bytes()
        sources.append(SourceFile(name, str(path.resolve()), hashlib.sha256(data).hexdigest(), len(data)))
        if suffix in _JSONL:
            _read_jsonl(_decode(data, name), name, col)
        elif suffix in _CSV:
            _read_csv(_decode(data, name), name, col)
        else:  # a single text file is a one-document acervo
            fmt = FOLDER_SUFFIXES[suffix]
            text, kept, removed = vig.read(data, fmt, name)
            col.add({id_column: name, text_column: text, "format": fmt}, name, name, kept, removed)
    if not col.documents:
        given = [str(p) for p in _as_paths(source)]
        if skipped:
            raise InputFileError(f"no documents found in {given}: {describe_skipped(skipped)}")
        raise InputFileError(f"no documents found in {given}; check the path and file types.")
    if skipped:
        warnings.warn(describe_skipped(skipped), SkippedFilesWarning, stacklevel=2)
    documents, metadata_columns, vigencia = _stated_status(col, vig)
    return Acervo(documents, metadata_columns, sources, list(skipped), dict(skipped), vigencia)


def _stated_status(col: _Collector, vig: _Vigencia) -> tuple[list[Document], list[str], dict[str, Any]]:
    """Documents with the status their text states; the ``status`` metadata field when annotated."""
    # local: keeps `import ragcov_data.legal.acervo` (read_acervo, load_dataset) free of pandas
    from ragcov_data.legal import vigencia

    docs = [d._replace(status=vigencia.document_status(d.text)) for d in col.documents]
    statuses = {s: sum(d.status == s for d in docs) for s in vigencia.STATUSES}
    text_stated = any(d.status for d in docs if "format" in d.metadata and d.metadata["format"] in ("html", "md",
                                                                                                    "txt"))
    annotated = vig.keep or vig.passages > 0 or text_stated
    meta_cols = list(col.metadata_columns)
    column = None
    if annotated:
        column = "status" if "status" not in col.metadata_columns else "stated_status"
        meta_cols.append(column)
        docs = [d._replace(metadata={**d.metadata, column: d.status}) for d in docs]
    info = {"keep_superseded": vig.keep, "passages": vig.passages, "words": vig.words,
            "documents": vig.documents, "statuses": statuses, "annotated": annotated, "status_column": column}
    return docs, meta_cols, info
