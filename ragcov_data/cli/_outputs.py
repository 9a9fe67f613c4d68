"""What each output option of each verb writes (the kinds of :mod:`ragcov_data.outputs`), and the names of the
files a data folder holds (inputs, never outputs).

The one output guard (:func:`ragcov_data.cli._common.check_outputs`) asks :func:`output_kind` what an option
writes and :func:`ragcov_data.outputs.check_output` whether an existing path is ragcov's output of that kind.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ragcov_data import outputs as marks

#: Names of the files a data folder holds (read by --dataset juristcu / irpf / lgpd / aneel_taesa and task folders).
DATA_FILE_NAMES = ("query.csv", "qrel.csv", "doc.csv", "laws.jsonl", "questions.jsonl", "aneel_fulltext.jsonl",
                   "aneel_ementas.jsonl", "manifest.json", "questoes.jsonl", "lei_13709_20180814.csv",
                   "lei_12527_20111118.csv")
#: Option -> the kind of output it writes, on every verb.
_BY_OPTION = {"--json": marks.JSON, "--html": marks.HTML, "--markdown": marks.MARKDOWN, "--latex": marks.LATEX,
              "--csv": marks.MISSES_TABLE}
#: Folder outputs: verb -> the kind of folder it writes.
_FOLDERS = {"build": marks.TASK, "benchmark": marks.REPORT, "report": marks.REPORT, "publish": marks.PUBLISH}


def output_kind(verb: str | None, option: str, path: Any = None, *, folder: bool = False) -> str:
    """The kind of output ``option`` of ``verb`` writes at ``path`` (``run --out x.jsonl``: a passage run)."""
    if folder:
        return _FOLDERS.get(verb or "", marks.REPORT)
    if option in _BY_OPTION:
        return _BY_OPTION[option]
    if verb == "coverage":
        return marks.COVERAGE_TABLE
    return marks.PASSAGE_RUN if path is not None and Path(str(path)).suffix.lower() == ".jsonl" else marks.RUN
