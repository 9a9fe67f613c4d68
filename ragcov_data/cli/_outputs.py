"""What an existing file at an output path may be: ragcov's own output of the same kind, nothing else.

``ragcov leaderboard --html run.trec`` or ``ragcov eval --json qrels.csv`` would otherwise turn a file the
user keeps into a report. :func:`refuse_foreign` is called by the one output guard
(:func:`ragcov_data.cli._common.check_outputs`) for every output file of every verb; an empty file, or a file
written by ragcov for the same option, may be written again.
"""
from __future__ import annotations

import json
from pathlib import Path

from ragcov_data.errors import RagcovError

#: Bytes read to recognise a file (a JSON output is parsed whole, up to :data:`_JSON_LIMIT`).
_HEAD = 1 << 16
_JSON_LIMIT = 256 << 20
#: Names of the files a data folder holds (read by --dataset juristcu / irpf / aneel_taesa and task folders).
DATA_FILE_NAMES = ("query.csv", "qrel.csv", "doc.csv", "laws.jsonl", "questions.jsonl", "aneel_fulltext.jsonl",
                   "aneel_ementas.jsonl", "manifest.json")
_KIND = {"--json": "a ragcov JSON output", "--html": "a ragcov HTML page", "--markdown": "a ragcov Markdown table",
         "--csv": "a ragcov CSV table", "--out": "a run file", "table": "a ragcov table (.csv or .json)"}
#: Output options whose kind depends on the verb: (verb, option) -> kind.
VERB_KINDS = {("coverage", "--out"): "table"}


def _head(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(_HEAD)


def _is_json(path: Path, head: bytes) -> bool:
    if not head.lstrip()[:1] in (b"{", b"["):
        return False
    if path.stat().st_size > _JSON_LIMIT:
        return True  # too large to parse here; its first byte says JSON
    try:
        json.loads(path.read_bytes().decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False  # e.g. JSON Lines: data, not a ragcov output
    return True


def _is_run(path: Path, head: bytes) -> bool:
    if head.startswith(b"PAR1"):
        return True  # parquet: the run writer's format
    if head.startswith(b'{"ragcov_passage_run":'):
        return True  # a passage run ragcov_data.run_pipeline wrote (resumed, not overwritten)
    name = path.name.lower()
    if name.endswith((".gz", ".bz2", ".xz")):
        return head[:2] == b"\x1f\x8b" or head[:3] == b"BZh" or head[:6] == b"\xfd7zXZ\x00"
    line = head.split(b"\n", 1)[0].split()
    return len(line) == 6 and line[1] == b"Q0"


def is_own_output(option: str, path: Path) -> bool:
    """Is the existing file ``path`` ragcov's own output of the kind ``option`` writes (or empty)?"""
    if path.stat().st_size == 0:
        return True
    head = _head(path)
    low = head.lstrip().lower()
    if option == "--html":
        return low.startswith(b"<!doctype html") and (b"ragcov" in low or b"<title>leaderboard" in low)
    if option == "--markdown":
        return head.startswith(b"# Leaderboard")
    if option == "--json":
        return _is_json(path, head)
    if option == "--csv":
        first = head.split(b"\n", 1)[0]
        return b"query-id" in first and b"," in first
    if option == "--out":
        return _is_run(path, head)
    if option == "table":  # ragcov coverage --out: a .csv or .json table
        first = head.split(b"\n", 1)[0]
        return _is_json(path, head) or (b"," in first and not _is_run(path, head))
    return True


def refuse_foreign(option: str, path: Path, kind_of: str | None = None) -> None:
    """Refuse an output path naming an existing file that is not ragcov's output of that option's kind
    (``kind_of``: the kind when the verb decides it, see :data:`VERB_KINDS`)."""
    key = kind_of or option
    if not path.is_file() or is_own_output(key, path):
        return
    kind = _KIND.get(key, "an output of this kind")
    raise RagcovError(f"{option} {str(path)!r} names an existing file that is not {kind} (it would be "
                      "overwritten); choose a new path, or remove that file first if it is no longer needed.")
