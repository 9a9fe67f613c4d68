"""What ragcov wrote: the mark every output carries, read back, and the one check of an output path.

Every file and folder ragcov writes can be told from a file the user keeps:

=================  ==========================================================================================
output             its mark
=================  ==========================================================================================
result JSON        the key ``result_type`` (``eval/compare/leaderboard/misses/chunking/plan --json``)
HTML page          ``<meta name="generator" content="ragcov">``
Markdown table     a first line ``<!-- written by ragcov -->``
LaTeX tables       a first line ``% ragcov ...``
run                parquet: the schema metadata ``ragcov.run``; TREC: the fingerprint ``|rc:`` in its tag
passage run        a first JSON line ``{"ragcov_passage_run": ...}``
CSV / JSON table   its header (``misses --csv``, ``coverage --out``): a comment line would break CSV readers
folder             a file ``.ragcov`` naming what the folder is (report, publish); a task folder its manifest
=================  ==========================================================================================

:func:`check_output` is the one check of an output path: an existing file or folder ragcov did not write as
that kind of output is refused unless ``force``; a report option whose value has the suffix of a run or an
input (``--latex x.trec``: argparse took a run as the output) is refused always.
"""
from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
from pathlib import Path

from ragcov_data.errors import RagcovError

#: The marker file of a folder ragcov writes into, and its key.
FOLDER_MARK = ".ragcov"
#: First line of a Markdown output; the generator of an HTML page.
MARKDOWN_MARK = "<!-- written by ragcov -->"
HTML_MARK = '<meta name="generator" content="ragcov">'
#: Kinds of output: what each option writes.
JSON, HTML, MARKDOWN, LATEX, RUN, PASSAGE_RUN = "json", "html", "markdown", "latex", "run", "passage run"
MISSES_TABLE, COVERAGE_TABLE = "misses table", "coverage table"
REPORT, PUBLISH, TASK = "report folder", "publish folder", "task folder"
_WORDS = {JSON: "a ragcov JSON result", HTML: "a ragcov HTML page", MARKDOWN: "a ragcov Markdown table",
          LATEX: "ragcov LaTeX tables", RUN: "a run ragcov wrote", PASSAGE_RUN: "a passage run ragcov wrote",
          MISSES_TABLE: "a ragcov misses table", COVERAGE_TABLE: "a ragcov coverage table",
          REPORT: "a ragcov report folder", PUBLISH: "a folder ragcov publish wrote", TASK: "a ragcov task folder"}
#: Columns that make a table ragcov's (its header is its mark).
_TABLE_COLUMNS = {MISSES_TABLE: {"query-id", "query_doc", "retrieved_doc"},
                  COVERAGE_TABLE: {"estimator", "method", "coverage"}}
#: Suffixes an output option writes; any other known suffix (a run's, an input's) is refused.
OWN_SUFFIXES = {"--json": (".json",), "--html": (".html", ".htm"), "--markdown": (".md", ".markdown"),
                "--latex": (".tex",), "--csv": (".csv",)}
_KNOWN_SUFFIXES = (".trec", ".run", ".txt", ".tsv", ".csv", ".json", ".jsonl", ".parquet", ".pq", ".gz", ".bz2",
                   ".xz", ".md", ".markdown", ".html", ".htm", ".tex", ".py", ".yaml", ".yml", ".toml")
_HEAD = 1 << 16
_JSON_LIMIT = 256 << 20


def mark_folder(folder: str | os.PathLike, kind: str) -> Path:
    """Write the marker file of a folder ragcov writes into (``kind``: :data:`REPORT`, :data:`PUBLISH`)."""
    from ragcov_data._atomic import atomic_write

    return atomic_write(Path(folder) / FOLDER_MARK, json.dumps({"written_by": "ragcov", "kind": kind}) + "\n")


def _head(path: Path) -> bytes:
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix.lower())
    try:
        with (opener or open)(path, "rb") as fh:
            return fh.read(_HEAD)
    except (OSError, EOFError, lzma.LZMAError):
        return b""


def _folder_kind(path: Path) -> str | None:
    try:
        data = json.loads((path / FOLDER_MARK).read_text(encoding="utf-8"))
        return str(data["kind"]) if data.get("written_by") == "ragcov" else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    from ragcov_data.tasks.record import is_task_folder

    return TASK if is_task_folder(path) else None


def _json_kind(path: Path) -> str | None:
    if path.stat().st_size > _JSON_LIMIT:
        return None
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(data, dict) and isinstance(data.get("result_type"), str):
        return JSON
    if isinstance(data, list) and data and isinstance(data[0], dict) and _TABLE_COLUMNS[COVERAGE_TABLE] <= set(data[0]):
        return COVERAGE_TABLE
    return None


def kind_of(path: str | os.PathLike) -> str | None:
    """The kind of output ragcov wrote at ``path``, read back from its mark; None for anything else."""
    p = Path(path)
    if p.is_dir():
        return _folder_kind(p)
    head = _head(p)
    if head.startswith(b"PAR1"):
        import pyarrow.parquet as pq

        try:
            meta = pq.read_schema(p).metadata or {}
        except Exception:  # noqa: BLE001 - not a readable parquet file: not ragcov's
            return None
        return RUN if b"ragcov.run" in meta else None
    text = head.lstrip()
    first = text.split(b"\n", 1)[0]
    if first.startswith(b'{"ragcov_passage_run":'):
        return PASSAGE_RUN
    if first.startswith(MARKDOWN_MARK.encode()):
        return MARKDOWN
    if first.startswith(b"% ragcov"):
        return LATEX
    if text[:15].lower().startswith(b"<!doctype html") and HTML_MARK.encode() in head:
        return HTML
    cols = first.split()
    if len(cols) == 6 and cols[1] == b"Q0" and b"|rc:" in cols[5]:
        return RUN
    if text[:1] in (b"{", b"["):
        return _json_kind(p)
    header = {c.strip().strip('"') for c in first.decode("utf-8", "replace").split(",")}
    for kind, need in _TABLE_COLUMNS.items():
        if need <= header:
            return kind
    return None


def check_suffix(option: str, path: str | os.PathLike, runs_option: bool = False) -> None:
    """Refuse a report option whose value has another kind's suffix: ``--latex x.trec`` (argparse takes the
    run ``x.trec`` as the LaTeX output when the option comes before the runs) or ``--json notes.csv``."""
    own = OWN_SUFFIXES.get(option)
    suffix = Path(path).suffix.lower()
    if own is None or suffix in own or suffix not in _KNOWN_SUFFIXES:
        return
    where = " put the option after the runs (argparse takes the next word as its value), or" if runs_option else ""
    raise RagcovError(f"{option} {str(path)!r} has the suffix {suffix} of a run or an input, not of what {option} "
                      f"writes ({'/'.join(own)}); it would be overwritten:{where} give a {own[0]} path.")


def check_output(option: str, path: str | os.PathLike, kind: str, *, force: bool = False) -> None:
    """Refuse ``path`` as the output ``option`` writes (a file or folder of ``kind``) when it exists and ragcov
    did not write it as that kind (an empty file or folder is free); ``force`` replaces it on purpose. A task
    folder (``build --out``), replaced whole, may hold only a task's files, ``force`` or not."""
    p = Path(path).expanduser()
    if kind == TASK and p.is_dir():  # replaced whole: a folder with other files is refused, --force or not
        from ragcov_data.tasks.record import check_task_out

        check_task_out(p)
        return
    if force or not p.exists():
        return
    if p.is_dir():
        if not any(p.iterdir()) or kind_of(p) == kind:
            return
        shown = sorted(e.name for e in p.iterdir())
        listed = ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")
        raise RagcovError(f"{option} {str(path)!r} is a folder ragcov did not write as {_WORDS.get(kind, kind)} (it "
                          f"holds {listed}; files of the same names would be replaced): choose a new or empty "
                          "folder, or give --force to write into it on purpose.")
    if p.stat().st_size == 0:
        return
    found = kind_of(p)
    if found == kind:
        return
    was = f"ragcov wrote it as {_WORDS.get(found, found)}" if found else "ragcov did not write it"
    raise RagcovError(f"{option} {str(path)!r} names an existing file that is not {_WORDS.get(kind, kind)} ({was}); "
                      "it would be overwritten: choose a new path, or give --force to replace it on purpose.")
