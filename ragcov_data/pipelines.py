"""Run a team's own retrieval pipeline on a ragcov task and keep what it returns: a passage run.

A RAG team runs its own splitter, index and reranker and gets back passages of text. :func:`run_pipeline` asks a
pipeline every question of a task and records the passages it returns, in rank order, as a passage run
(:mod:`ragcov_data.runs.passages`), which every verb scores once its passages are located in the task's documents.

A *pipeline* is any of (duck-typed: nothing is imported from LangChain or LlamaIndex):

- a callable ``question -> list`` whose items are strings, ``(text, score)`` pairs, dicts (``text`` or
  ``page_content``, optional ``score``, ``doc_id``/``source``, ``start_char``/``start_index``, ``end_char``) or
  objects carrying text (below);
- a **LangChain retriever** (``.invoke(question)`` returning ``Document``s): ``page_content`` is the text,
  ``metadata["start_index"]`` (``add_start_index=True``) and ``metadata["source"]`` (or ``doc_id``) the hints,
  ``metadata["score"]`` the score where present;
- a **LlamaIndex retriever** (``.retrieve(question)`` returning ``NodeWithScore``): the node's content, ``score``,
  and ``start_char_idx``/``end_char_idx``/``ref_doc_id`` as hints.

Hints are passed on as the pipeline reports them; the locator checks them (a wrong offset is ignored).

**Ingesting.** ``ingest(documents)`` receives :func:`ragcov_data.task_documents` (a DataFrame: ``doc_id``, ``text``,
metadata) before any question; when ``pipeline`` is None, what it returns is the pipeline (a factory that splits
and indexes the documents, and returns its retriever).

**Writing and resuming.** With ``out`` (a ``.jsonl`` path) each question's passages are appended as it finishes,
after a first line recording what made the run (``{"ragcov_passage_run": {...}}``: the task, its question ids'
hash, the pipeline's name, ``k``). A re-run with the same ``out`` skips the questions already answered and asks
again those that failed; a file made on another task or with another ``k`` is refused. A question whose call
raises is recorded as ``{"query-id": ..., "error": "TypeName: message"}``, the run completes, and the failures are
named (``attrs["failures"]``, and a line on standard error).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from ragcov_data._atomic import atomic_write
from ragcov_data.documents import task_documents
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.runs.passages import META_KEY, PASSAGE_NAMES, validate_passage_run

__all__ = ["run_pipeline", "passages_of", "pipeline_name", "import_object", "pipeline_or_factory", "META_KEY"]


def pipeline_or_factory(obj: Any) -> tuple[Any, Callable[[pd.DataFrame], Any] | None]:
    """``(pipeline, ingest)`` of an object named on the command line: a function whose first parameter is named
    ``documents`` is a factory (called with the task's documents, it returns the pipeline), anything else the
    pipeline itself."""
    import inspect

    if callable(obj) and not hasattr(obj, "invoke") and not hasattr(obj, "retrieve"):
        try:
            params = list(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            params = []
        if params[:1] == ["documents"]:
            return None, obj
    return obj, None


def import_object(spec: str, what: str = "pipeline") -> Any:
    """The object ``module:attr`` names, imported with the current directory on ``sys.path`` (as uvicorn and
    gunicorn do), so a pipeline defined in ``./my_rag.py`` is ``my_rag:retriever``."""
    import importlib

    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise RagcovError(f"--{what} takes module:attr (e.g. my_rag:retriever, from ./my_rag.py); got {spec!r}.")
    module, attr = spec.split(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        raise RagcovError(f"--{what} {spec}: cannot import module {module!r} ({exc}); run from the folder holding "
                          f"{module.replace('.', '/')}.py or put it on PYTHONPATH.") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise RagcovError(f"--{what} {spec}: module {module!r} has no {attr!r}.")
        obj = getattr(obj, part)
    return obj


def pipeline_name(pipeline: Any) -> str:
    """How a pipeline is named in outputs: its ``name`` attribute, else its function's or class's name."""
    name = getattr(pipeline, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(pipeline, "__name__", None) or type(pipeline).__name__


def _ask(pipeline: Any) -> Callable[[str], Any]:
    """The call that asks ``pipeline`` one question (LangChain ``invoke``, LlamaIndex ``retrieve``, or a call)."""
    if hasattr(pipeline, "invoke") and callable(pipeline.invoke):
        return pipeline.invoke
    if hasattr(pipeline, "retrieve") and callable(pipeline.retrieve):
        return pipeline.retrieve
    if callable(pipeline):
        return pipeline
    raise RagcovError(f"the pipeline is a {type(pipeline).__name__}, which can be neither called nor asked "
                      "(.invoke / .retrieve); pass a callable question -> list of passages, a LangChain retriever or "
                      "a LlamaIndex retriever.")


def _first(mapping: Mapping[str, Any], names: Sequence[str]) -> Any:
    for n in names:
        if n in mapping and mapping[n] is not None:
            return mapping[n]
    return None


def _passage(item: Any) -> dict[str, Any] | None:
    """One returned item as ``{text, score, doc_id, start_char, end_char}``; None when it carries no text."""
    if isinstance(item, str):
        return {"text": item}
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
        return {"text": item[0], "score": item[1]}
    if isinstance(item, Mapping):
        d = {str(k).lower(): v for k, v in item.items()}
        text = _first(d, PASSAGE_NAMES["text"])
        return None if text is None else {
            "text": text, "score": _first(d, PASSAGE_NAMES["score"]), "doc_id": _first(d, PASSAGE_NAMES["doc_id"]),
            "start_char": _first(d, PASSAGE_NAMES["start_char"]), "end_char": _first(d, PASSAGE_NAMES["end_char"])}
    if hasattr(item, "page_content"):  # a LangChain Document
        meta = dict(getattr(item, "metadata", None) or {})
        return {"text": item.page_content, "score": _first(meta, ("score", "relevance_score")),
                "doc_id": _first(meta, ("doc_id", "source")), "start_char": _first(meta, ("start_index", "start_char")),
                "end_char": _first(meta, ("end_char",))}
    node = getattr(item, "node", None)
    if node is not None:  # a LlamaIndex NodeWithScore
        text = node.get_content() if hasattr(node, "get_content") else getattr(node, "text", None)
        return {"text": text, "score": getattr(item, "score", None), "doc_id": getattr(node, "ref_doc_id", None),
                "start_char": getattr(node, "start_char_idx", None), "end_char": getattr(node, "end_char_idx", None)}
    text = getattr(item, "text", None)
    return {"text": text} if isinstance(text, str) else None


def passages_of(returned: Any, question_id: str, k: int | None = None) -> list[dict[str, Any]]:
    """The rows of one question's answer (``rank`` 1, 2, ...), at most ``k``.

    Raises
    ------
    RagcovError
        The answer is not a list (e.g. one ``str``), or an item carries no text; names the question and the type.
    """
    if isinstance(returned, (str, bytes, Mapping)) or not hasattr(returned, "__iter__"):
        raise RagcovError(f"the pipeline returned a {type(returned).__name__} for question {question_id!r}, not a list "
                          "of passages; return a list (of strings, (text, score) pairs, dicts or documents).")
    rows = []
    for rank, item in enumerate(list(returned), start=1):
        if k is not None and rank > k:
            break
        p = _passage(item)
        if p is None or not isinstance(p["text"], str):
            raise RagcovError(f"the pipeline's passage {rank} for question {question_id!r} is a {type(item).__name__} "
                              "with no text; return strings, (text, score) pairs, dicts with `text`, LangChain "
                              "Documents or LlamaIndex nodes.")
        rows.append({"query-id": question_id, "rank": rank, **{c: v for c, v in p.items() if v is not None}})
    return rows


# --------------------------------------------------------------------------- the output file


def _questions_hash(qids: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(qids).encode("utf-8")).hexdigest()[:16]


def _meta(task: Any, qids: Sequence[str], name: str, k: int | None) -> dict[str, Any]:
    from ragcov_data.task import manifest_of

    m = manifest_of(task) or {}
    return {"task": m.get("dataset") or m.get("task"), "config": (m.get("config") or {}).get("name"),
            "questions": len(qids), "questions_sha256": _questions_hash(qids), "pipeline": name, "k": k}


def _resume(path: Path, meta: dict[str, Any]) -> set[str]:
    """The question ids answered in ``path`` already (failures are asked again); the file must have been made
    on the same task and ``k``. A last line cut by an interruption is removed with the rest of its question's
    lines (the file rewritten atomically), and that question is asked again."""
    if not path.exists() or path.stat().st_size == 0:
        return set()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    recs: list[Any] = []
    for no, line in enumerate(lines, start=1):
        try:
            recs.append(json.loads(line) if line.strip() else None)
        except json.JSONDecodeError:
            if no != len(lines):
                raise InputFileError(f"{path}, line {no}: not a JSON line; remove the line to resume, or choose "
                                     "another --out.") from None
            recs.append("cut")
    old = recs[0].get(META_KEY) if isinstance(recs[0], dict) else None
    if old is None:
        raise InputFileError(f"{path} is not a passage run ragcov_data.run_pipeline wrote (no first line {META_KEY!r}); "
                             "choose another --out.")
    for key in ("task", "config", "questions_sha256", "k"):
        if old.get(key) != meta.get(key):
            raise InputFileError(f"{path} was made with {key}={old.get(key)!r}, this run has {meta.get(key)!r}: it "
                                 "cannot be resumed here; choose another --out.")
    if recs[-1] == "cut":  # an interrupted write: drop that question's lines, ask it again
        last = next((r.get("query-id") for r in reversed(recs[:-1]) if isinstance(r, dict) and "query-id" in r), None)
        keep = [ln for ln, r in zip(lines[:-1], recs[:-1]) if not (isinstance(r, dict) and r.get("query-id") == last)]
        atomic_write(path, "".join(keep))
        recs = [json.loads(ln) if ln.strip() else None for ln in keep]
    return {str(r.get("query-id")) for r in recs[1:] if isinstance(r, dict) and "text" in r}


def _write(fh: Any, rows: list[dict[str, Any]]) -> None:
    fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    fh.flush()  # whole lines, one question at a time: an interruption loses at most the question being asked


# --------------------------------------------------------------------------- the run


def run_pipeline(pipeline: Any, task: Any, k: int | None = None, ingest: Callable[[pd.DataFrame], Any] | None = None,
                 *, out: str | os.PathLike | None = None, show_progress: bool | None = None,
                 name: str | None = None) -> pd.DataFrame:
    """Ask ``pipeline`` every question of ``task`` and return what it returns as a passage run.

    Parameters
    ----------
    pipeline : callable, LangChain retriever or LlamaIndex retriever, or None
        See the module docstring. None: the pipeline is what ``ingest`` returns.
    task : DatasetDict, Task or dict of DataFrames
        Any ragcov task (``ragcov_data.load_dataset(...)``); its ``queries`` (``_id``, ``text``) are asked.
    k : int, optional
        Passages kept a question (default: all the pipeline returns).
    ingest : callable, optional
        ``ingest(documents)`` with the task's documents (:func:`ragcov_data.task_documents`), called first.
    out : path, optional
        A ``.jsonl`` file written as questions finish, and resumed (see the module docstring).
    show_progress : bool, optional
        A progress bar (default: when standard error is a terminal).
    name : str, optional
        The run's name (default: the pipeline's, :func:`pipeline_name`).

    Returns
    -------
    DataFrame
        The passage run in normal form (:func:`ragcov_data.runs.passages.validate_passage_run`); ``attrs``:
        ``failures`` (question id -> error), ``pipeline``, ``k``.
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise RagcovError(f"`k` must be a positive integer; got {k!r}.")
    if ingest is not None:
        built = ingest(task_documents(task))
        pipeline = built if pipeline is None else pipeline
    if pipeline is None:
        raise RagcovError("no pipeline: pass `pipeline`, or an `ingest` that returns one.")
    ask = _ask(pipeline)
    name = name or pipeline_name(pipeline)
    queries = _queries(task)
    qids = [str(q) for q in queries["_id"]]
    meta = _meta(task, qids, name, k)
    path = Path(out) if out is not None else None
    if path is not None and path.suffix.lower() != ".jsonl":
        raise RagcovError(f"`out` must be a .jsonl file (one JSON object a line); got {path}.")
    done = _resume(path, meta) if path is not None else set()
    rows, failures = _ask_all(ask, queries, done, k, path, meta, show_progress)
    if path is not None:
        return _finish(validate_passage_run_file(path), failures, name, k)
    if not rows:
        raise RagcovError(f"the pipeline {name!r} answered no question (failures: {len(failures)}; first: "
                          f"{next(iter(failures.items()), None)}).")
    frame = pd.DataFrame(rows + [{"query-id": q, "error": e} for q, e in failures.items()])
    return _finish(validate_passage_run(frame, source=f"pipeline {name}", fmt="pipeline"), failures, name, k)


def validate_passage_run_file(path: Path) -> pd.DataFrame:
    """The passage run written at ``path``, read back through the one reader."""
    from ragcov_data.runs.passages import load_passage_run

    return load_passage_run(path)


def _finish(run: pd.DataFrame, failures: dict[str, str], name: str, k: int | None) -> pd.DataFrame:
    run.attrs.update(pipeline=name, k=k)
    if failures:
        first = next(iter(failures.items()))
        print(f"ragcov: {len(failures)} question(s) failed in the pipeline {name!r} and are recorded with their error "
              f"(first: {first[0]!r}: {first[1][:100]})", file=sys.stderr)
    return run


def _queries(task: Any) -> pd.DataFrame:
    q = task["queries"] if not isinstance(task, Mapping) else task.get("queries")
    if q is None:
        raise RagcovError("the task has no queries split; pass a task from ragcov_data.load_dataset(...).")
    q = q if isinstance(q, pd.DataFrame) else q.to_pandas()
    return q[["_id", "text"]]


def _ask_all(ask: Callable[[str], Any], queries: pd.DataFrame, done: set[str], k: int | None, path: Path | None,
             meta: dict[str, Any], show_progress: bool | None) -> tuple[list[dict[str, Any]], dict[str, str]]:
    from tqdm.auto import tqdm

    show = bool(getattr(sys.stderr, "isatty", lambda: False)()) if show_progress is None else bool(show_progress)
    todo = [(str(q), str(t)) for q, t in zip(queries["_id"], queries["text"]) if str(q) not in done]
    rows: list[dict[str, Any]] = []
    failures: dict[str, str] = {}
    fh = None
    if path is not None:
        new = not path.exists() or path.stat().st_size == 0
        fh = open(path, "a", encoding="utf-8")
        if new:
            _write(fh, [{META_KEY: meta}])
    try:
        for qid, text in tqdm(todo, desc="pipeline", unit="question", disable=not show):
            try:
                got = passages_of(ask(text), qid, k)
            except RagcovError:
                raise
            except Exception as exc:  # noqa: BLE001 - one question's failure is recorded, the run goes on
                failures[qid] = f"{type(exc).__name__}: {exc}"
                got = [{"query-id": qid, "error": failures[qid]}]
            if fh is not None:
                _write(fh, got)
            rows += [r for r in got if "text" in r]
    finally:
        if fh is not None:
            fh.close()
    return rows, failures
