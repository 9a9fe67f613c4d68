"""Helpers shared by the verbs: list options, population tables, the output check every verb runs before any
work, and the run-reading options (--columns, --run-format, --order) of every verb that reads runs."""
from __future__ import annotations

import argparse
import os
import re
import textwrap
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from ragcov_data import outputs as marks
from ragcov_data._atomic import check_replaceable, file_kind
from ragcov_data.cli._outputs import DATA_FILE_NAMES, output_kind
from ragcov_data.errors import RagcovError
from ragcov_data.tasks.paths import DEFAULT_SOURCES, check_writable
from ragcov_data.runs import FORMATS


def int_list(text: str) -> list[int]:
    """Parse ``"5,10,20"`` into ``[5, 10, 20]`` (argparse type)."""
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers such as 5,10,20; got {text!r}")
    if not out:
        raise argparse.ArgumentTypeError("expected at least one integer")
    return out


def str_list(text: str) -> list[str]:
    """Parse ``"a,b"`` into ``["a", "b"]`` (argparse type)."""
    return [x.strip() for x in text.split(",") if x.strip()]


def read_population(path: str, twin: bool = False, seed: int = 0) -> pd.DataFrame:
    """A population table or ``eval --json`` file: :func:`ragcov_data.jobs.studies.read_population`."""
    # local: keeps `ragcov --help` from importing datasets and scipy.stats (the studies)
    from ragcov_data.jobs.studies import read_population as read

    return read(path, twin=twin, seed=seed)


# --------------------------------------------------------------------------- outputs against inputs
#: Output options: argparse dest -> the option the user typed.
OUTPUT_OPTIONS = {"json_out": "--json", "html_out": "--html", "md_out": "--markdown", "csv_out": "--csv", "out": "--out",
                  "latex_out": "--latex"}
#: Verbs whose ``--out`` (or ``OUT``) is a folder to write into, not a file.
FOLDER_OUTPUT_VERBS = {"build": "--out", "benchmark": "--out", "report": "--out", "publish": "OUT"}
#: Input options: argparse dest -> the option (or positional) the user typed.
INPUT_OPTIONS = {"run": "RUN", "run_a": "RUN_A", "run_b": "RUN_B", "runs": "RUN", "population": "POPULATION",
                 "results": "RESULTS", "data_files": "--data-files", "data_dir": "--data-dir", "task": "--task",
                 "stratum_sizes": "--stratum-sizes", "card": "--card", "questions": "--questions",
                 "passages": "--passages"}
#: Files of an input folder a verb reads: task tables and manifest, acervo documents (by name and suffix).
_TASK_FILES = ("manifest.json", "corpus", "queries", "qrels")
_READ_SUFFIXES = (".parquet", ".jsonl", ".csv", ".tsv", ".txt", ".md", ".html", ".htm")


def check_outputs(inputs: Iterable[tuple[str, Any]], outputs: Iterable[tuple[str, Any]], *,
                  folder_outputs: Iterable[tuple[str, Any]] = (), kinds: dict[str, str] | None = None,
                  force: bool = False, verb: str | None = None) -> None:
    """Refuse, before any work starts, outputs that would overwrite an input or each other.

    Paths are compared as the files they name (resolved, so ``./a``, ``dir/../a`` and a symbolic link to
    ``a`` are all ``a``; existing files are also compared by inode, which catches hard links). An output
    file may not be an input file, nor a file the verb reads from an input folder (a task folder's
    manifest and tables, the data folder's sources — JurisTCU ``query/qrel/doc.csv``, IRPF
    ``laws/questions.jsonl`` —, the documents of a ``--data-files`` folder); two outputs may not be one file;
    an output folder may not be an input folder; and an existing output file must be ragcov's own output of
    that option's kind, read back from its mark (:func:`ragcov_data.outputs.check_output`: ``--html run.trec``
    is refused, writing ragcov's HTML again is not; ``force`` replaces such a file, never an input), and a
    report option may not have another kind's suffix (:func:`ragcov_data.outputs.check_suffix`: ``leaderboard
    --latex x.trec a.trec`` is refused). Every output must also be writable
    (:func:`ragcov_data.tasks.paths.check_writable`), and an output file a regular file or a new path
    (:func:`ragcov_data._atomic.check_replaceable`: a device, named pipe, socket, folder or dangling link is
    refused, as is such an entry at the top of an existing output folder).

    Parameters
    ----------
    inputs, outputs : iterable of (option, path)
        The option as the user typed it (``"--json"``, ``"RUN"``) and the path it names.
    folder_outputs : iterable of (option, path)
        Folders the command writes into.
    kinds : dict, optional
        Option -> the kind of output it writes (:mod:`ragcov_data.outputs`); default: by option and ``verb``.
    force, verb
        ``--force`` (existing outputs ragcov did not write are replaced) and the verb.

    Raises
    ------
    RagcovError
        ``--json and RUN name the same file PATH: ...`` (both options and the path).
    """
    ins = [(opt, Path(str(p)).expanduser()) for opt, p in inputs if p is not None and str(p)]
    outs = [(opt, Path(str(p)).expanduser()) for opt, p in outputs if p is not None and str(p)]
    fouts = [(opt, Path(str(p)).expanduser()) for opt, p in folder_outputs if p is not None and str(p)]
    for opt, out in outs:
        check_replaceable(out, opt)  # a device, a named pipe, a folder, a link to nothing: before anything is read
        check_writable(out)
    for opt, out in fouts:
        check_writable(out, folder=True)
        _check_folder_entries(opt, out)
    seen: list[tuple[str, Path]] = []
    for opt, out in outs:
        for in_opt, inp in ins:
            if _same_path(out, inp):
                raise RagcovError(f"{opt} and {in_opt} name the same file {str(out)!r}: the output would overwrite "
                                  "an input; choose another output path.")
            if inp.is_dir() and out.is_file() and _inside(out, inp) and _read_from_folder(out, in_opt, opt):
                raise RagcovError(f"{opt} {str(out)!r} is a file inside {in_opt} {str(inp)!r}: the output would "
                                  "overwrite an input file; choose a path outside the input folder.")
        marks.check_suffix(opt, out, runs_option=verb in ("leaderboard", "compare", "eval", "misses"))
        marks.check_output(opt, out, (kinds or {}).get(opt) or output_kind(verb, opt, out), force=force)
        for prev_opt, prev in seen:
            if _same_path(out, prev):
                raise RagcovError(f"{prev_opt} and {opt} name the same file {str(out)!r}: one output would overwrite "
                                  "the other; give each output its own path.")
        seen.append((opt, out))
    for opt, out in fouts:
        for in_opt, inp in ins:
            if inp.is_dir() and _same_path(out, inp):
                raise RagcovError(f"{opt} and {in_opt} name the same folder {str(out)!r}: the output would overwrite "
                                  "the input's files; choose another output folder.")
        marks.check_output(opt, out, (kinds or {}).get(opt) or output_kind(verb, opt, folder=True), force=force)


def _check_folder_entries(option: str, folder: Path) -> None:
    """Refuse an output folder holding a device, a named pipe, a socket or a link to nothing at its top: ragcov
    writes only regular files there, and one written at such a name would replace it."""
    if not folder.is_dir():
        return
    for entry in sorted(folder.iterdir()):
        what = file_kind(entry)
        if what is not None and not entry.is_dir():
            raise RagcovError(f"{option} {str(folder)!r} holds {entry.name!r}, {what}: ragcov writes regular files "
                              "into the folder and would replace it; move it out, or choose another folder.")


def check_args_outputs(args: argparse.Namespace) -> None:
    """:func:`check_outputs` on a parsed command line: its output options against its inputs.

    Called once for every verb, before the verb does any work; options a verb lacks are skipped.
    """
    verb = getattr(args, "verb", None)
    inputs: list[tuple[str, Any]] = []
    for dest, opt in INPUT_OPTIONS.items():
        value = getattr(args, dest, None)
        if dest == "runs" and verb == "plan":
            opt = "--runs"
        for item in (value if isinstance(value, (list, tuple)) else [value]):
            if not isinstance(item, (str, Path)):
                continue
            item = str(item)
            if dest == "runs" and "=" in item and not Path(item).exists():  # leaderboard NAME=PATH
                item = item.partition("=")[2]
            inputs.append((opt, item))
    if hasattr(args, "data_dir") and not getattr(args, "data_dir", None) and os.environ.get("RAGCOV_DATA_DIR"):
        inputs.append(("$RAGCOV_DATA_DIR", os.environ["RAGCOV_DATA_DIR"]))  # the data folder a dataset is read from
    outputs, folders = [], []
    for dest, opt in OUTPUT_OPTIONS.items():
        value = getattr(args, dest, None)
        if not isinstance(value, (str, Path)):
            continue  # absent, or a flag (build --json prints JSON)
        if dest == "out" and verb in FOLDER_OUTPUT_VERBS:
            folders.append((FOLDER_OUTPUT_VERBS[verb], value))
        else:
            outputs.append((opt, value))
    if folders:  # a folder output only clashes with the task source's folders
        inputs = [(o, p) for o, p in inputs if o in ("--data-dir", "--task", "--data-files", "$RAGCOV_DATA_DIR")]
    check_outputs(inputs, outputs, folder_outputs=folders, force=bool(getattr(args, "force", False)), verb=verb)


def _same_path(a: Path, b: Path) -> bool:
    try:
        if a.resolve() == b.resolve():
            return True
    except (OSError, RuntimeError):  # a symlink loop: compare as written
        if os.path.abspath(a) == os.path.abspath(b):
            return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _read_from_folder(path: Path, opt: str, out_opt: str = "") -> bool:
    """Would a verb read ``path`` from the input folder ``opt`` names? (A report written there before is not:
    a file that is ragcov's own output of the kind ``out_opt`` writes.)"""
    if path.name in DATA_FILE_NAMES or (path.stem in _TASK_FILES and path.suffix.lower() in _READ_SUFFIXES):
        return True
    if any(str(path.resolve()).endswith(str(Path(rel))) for rel in DEFAULT_SOURCES.values()):
        return True
    if path.suffix.lower() not in _READ_SUFFIXES:
        return False
    # a data or task folder's tables and documents (e.g. IRPF's html/): inputs, unless ragcov wrote that file
    return opt == "--data-files" or marks.kind_of(path) is None


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):
        return False


# --------------------------------------------------------------------------- run-reading options
def add_run_options(p: Any, *, note: str = "") -> None:
    """``--columns``, ``--run-format`` and ``--order``: how every verb that reads run files reads them.

    ``p`` is a parser or an argument group; ``note`` prefixes each help text (e.g. ``"with --runs: "``).
    """
    p.add_argument("--columns", default=None, metavar="MAP",
                   help=f"{note}run columns with other names, e.g. query-id=QUERY,corpus-id=DOC,score=SIM "
                        "(recognised without it: query-id/query_id/qid, corpus-id/doc_id/docid/docno, rank, score)")
    p.add_argument("--run-format", default=None, choices=FORMATS,
                   help=f"{note}run file format (default: by suffix, .gz/.bz2/.xz included, else by content)")
    p.add_argument("--order", default=None, choices=("score", "rank"),
                   help=f"{note}for runs with both ranks and scores: score = by score, higher is better "
                        "(trec_eval's rule, the default), rank = by the file's ranks (e.g. scores that are "
                        "distances); unset, a run whose scores rise with rank in most queries is refused")
    p.add_argument("--subset", default=None, metavar="NAME",
                   help=f"{note}of an MTEB prediction file ({{task}}_predictions.json) holding several subsets, "
                        "the one to read")
    p.add_argument("--split", default=None, metavar="NAME",
                   help=f"{note}of an MTEB prediction file holding several splits, the one to read")


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """``columns=``, ``format=``, ``order=`` for :func:`ragcov_data.runs.load_run` from the options above."""
    return {"columns": getattr(args, "columns", None), "format": getattr(args, "run_format", None),
            "order": getattr(args, "order", None), "subset": getattr(args, "subset", None),
            "split": getattr(args, "split", None)}


_PATH = re.compile(r"(?<![\w.])/[^\s,;:()'\"]+")


def log_line(message: str, width: int = 200, prefix: str = "[ragcov] ") -> list[str]:
    """A progress message as ``[ragcov]`` lines of at most ``width`` characters: an absolute path is shown
    relative to the current folder when that is shorter, and a line still too long is wrapped (nothing dropped),
    so a log stays readable in a terminal and in CI logs."""
    def short(m: re.Match) -> str:
        p = m.group(0)
        try:
            rel = os.path.relpath(p)
        except ValueError:  # another drive
            return p
        return rel if len(rel) < len(p) else p

    text = _PATH.sub(short, message)
    return textwrap.wrap(text, width=width, initial_indent=prefix, subsequent_indent=prefix + "  ",
                         break_long_words=True, break_on_hyphens=False) or [prefix.rstrip()]
