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
again those that failed and a last question whose lines were cut by an interruption (each line records how many
passages its answer has, ``of``); a file made on
another task, by another pipeline or with another ``k`` is refused, before anything is ingested. A question whose
call raises is recorded as ``{"query-id": ..., "error": "TypeName: message"}``, the run completes, and the failures
are named (``attrs["failures"]``, and a line on standard error). A question answered with no passage is recorded
as ``{"query-id": ..., "empty": true}``: answered, scored with no context.

**One writer a file.** A run holds an exclusive lock beside ``out`` while it writes
(:func:`ragcov_data._atomic.one_writer`): a second run on the same file is refused, naming the first. A file holding
an answer twice (written by two runs at once before the lock, or interleaved) is repaired when resumed: identical
copies are kept once, differing ones dropped and their question asked again (``attrs["repaired"]``).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np
import pandas as pd

from ragcov_data._atomic import atomic_write, one_writer
from ragcov_data.tasks.documents import task_documents
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.execution.user_code import factory_hint, import_object, pipeline_or_factory
from ragcov_data.runs.passages import META_KEY, PASSAGE_NAMES, validate_passage_run

__all__ = ["run_pipeline", "passages_of", "pipeline_name", "import_object", "pipeline_or_factory", "META_KEY"]


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
    if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[0], (str, bytes)):
        inner = _passage(item[0])  # LangChain's (Document, score), as similarity_search_with_score returns
        return None if inner is None else {**inner, "score": item[1]}
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
    if isinstance(returned, pd.DataFrame):  # iterating a DataFrame gives its column names, not its rows
        raise RagcovError(f"the pipeline returned a pandas DataFrame for question {question_id!r} (columns "
                          f"{[str(c) for c in returned.columns][:6]}), not a list of passages: iterating it gives "
                          "its column names; return its rows, e.g. `df.to_dict('records')` (a `text` column, "
                          "optional `score`, `doc_id`, `start_char`) or `list(df['text'])`.")
    if isinstance(returned, (set, frozenset)):
        raise RagcovError(f"the pipeline returned a {type(returned).__name__} for question {question_id!r}: a set has "
                          "no order, so its passages would get arbitrary ranks; return a list, best passage first.")
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
        if not p["text"].strip():
            raise RagcovError(f"the pipeline's passage {rank} for question {question_id!r} has empty text; return "
                              "only passages with text (drop empty ones before returning).")
        score = p.get("score")
        if score is not None:
            try:
                ok = bool(np.isfinite(float(score)))
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise RagcovError(f"the pipeline's passage {rank} for question {question_id!r} has score {score!r}, "
                                  "not a finite number; return a number or no score.")
        rows.append({"query-id": question_id, "rank": rank, **{c: v for c, v in p.items() if v is not None}})
    for r in rows:
        r["of"] = len(rows)  # how many lines the answer has: a resumed file sees an answer cut short
    return rows or [{"query-id": question_id, "empty": True}]


# --------------------------------------------------------------------------- the output file


def _questions_hash(qids: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(qids).encode("utf-8")).hexdigest()[:16]


def _meta(task: Any, qids: Sequence[str], name: str, k: int | None) -> dict[str, Any]:
    from ragcov_data.tasks.record import manifest_of

    m = manifest_of(task) or {}
    return {"task": m.get("dataset") or m.get("task"), "config": (m.get("config") or {}).get("name"),
            "questions": len(qids), "questions_sha256": _questions_hash(qids), "pipeline": name, "k": k}


class _Resumed(NamedTuple):
    done: set[str]  # question ids answered in the file
    meta: dict[str, Any] | None  # what made the file
    rewrite: str | None  # the file's text without the lines dropped (written only once every check passed)
    merged: list[str] = []  # questions answered twice with identical copies: kept once
    reasked: list[str] = []  # questions answered twice with different copies: dropped, asked again


def _resume(path: Path, meta: dict[str, Any]) -> _Resumed:
    """The question ids answered in ``path`` already (failures are asked again); the file must have been made
    on the same task, with the same ``k`` (and by the same pipeline, where ``meta`` names it already).

    Each passage line records how many passages its answer has (``of``), so an answer cut by an interruption,
    even between two whole lines, is seen and asked again, with its lines removed. A last line with no newline is
    a cut line, whether or not it parses. An answer recorded twice (two runs that wrote the file at once, before
    runs took a lock, or a crash between writing and recording) is kept once when its copies agree, and dropped
    and asked again when they differ (:func:`_answers`).
    """
    if not path.exists() or path.stat().st_size == 0:
        return _Resumed(set(), None, None)
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputFileError(f"{path} is not a passage run ragcov_data.run_pipeline wrote (not UTF-8 text); choose "
                             "another --out.") from None
    lines = raw.splitlines(keepends=True)
    cut = bool(lines) and not lines[-1].endswith("\n")
    whole = lines[:-1] if cut else lines
    recs: list[Any] = []
    for no, line in enumerate(whole, start=1):
        try:
            recs.append(json.loads(line) if line.strip() else None)
        except json.JSONDecodeError:
            raise InputFileError(f"{path}, line {no}: not a JSON line; remove the line to resume, or choose another "
                                 "--out.") from None
    old = recs[0].get(META_KEY) if recs and isinstance(recs[0], dict) else None
    if old is None:
        raise InputFileError(f"{path} is not a passage run ragcov_data.run_pipeline wrote (no first line {META_KEY!r}); "
                             "choose another --out.")
    for key in ("task", "config", "questions_sha256", "k", "pipeline"):
        if meta.get(key) is not None or key != "pipeline":
            _same(path, key, old.get(key), meta.get(key))
    keep, done, merged, reasked = _answers(path, recs)
    changed = cut or not all(keep)
    return _Resumed(done, old, "".join(ln for ln, k in zip(whole, keep) if k) if changed else None, merged, reasked)


def _is_passage(rec: dict[str, Any]) -> bool:
    return isinstance(rec.get("text"), str)


def _answers(path: Path, recs: list[Any]) -> tuple[list[bool], set[str], list[str], list[str]]:
    """Which lines of a passage run to keep, the questions answered, and the questions answered twice: with
    identical copies (kept once) and with different copies (dropped: asked again).

    A question's answer is whole when its passages hold ranks 1..``of`` (a file written before ``of`` was
    recorded: every answer but the last one). Copies of one rank must be the same line; an answer of passages
    and an empty answer of one question differ. Failures are kept (the question is asked again); a second first
    line equal to the first is dropped, another run's is refused.
    """
    keep = [r is not None for r in recs]
    lines_of: dict[str, list[int]] = {}
    for i, r in enumerate(recs[1:], start=1):
        if not isinstance(r, dict):
            continue
        if META_KEY in r:
            if r[META_KEY] != recs[0][META_KEY]:
                raise InputFileError(f"{path}, line {i + 1}: a second first line {META_KEY!r}, of another run "
                                     f"({r[META_KEY]!r}): the file mixes two runs; choose another --out.")
            keep[i] = False
        elif "query-id" in r:
            lines_of.setdefault(str(r["query-id"]), []).append(i)
    last = max(lines_of, key=lambda q: lines_of[q][-1], default=None)
    done: set[str] = set()
    merged, reasked = [], []
    for q, idx in lines_of.items():
        texts = [i for i in idx if _is_passage(recs[i])]
        empties = [i for i in idx if recs[i].get("empty") is True and not _is_passage(recs[i])]
        by_rank: dict[Any, list[int]] = {}
        for i in texts:
            by_rank.setdefault(recs[i].get("rank"), []).append(i)
        differ = (texts and empties) or any(
            len({json.dumps(recs[j], sort_keys=True) for j in js}) > 1 for js in by_rank.values())
        twice = len(empties) > 1 or any(len(js) > 1 for js in by_rank.values())
        if differ:
            reasked.append(q)
            for i in idx:
                keep[i] = False
            continue
        if empties:
            done.add(q)
        elif texts:
            n = {recs[i].get("of") for i in texts}
            whole = (q != last) if n == {None} else (len(n) == 1 and set(by_rank) == set(range(1, (n.pop() or 0) + 1)))
            if not whole:  # cut short by an interruption: asked again
                for i in texts:
                    keep[i] = False
                continue
            done.add(q)
        drop = [i for js in by_rank.values() for i in js[1:]] + empties[1:]
        for i in drop:
            keep[i] = False
        if twice:
            merged.append(q)
    return keep, done, merged, reasked


def _same(path: Path, key: str, old: Any, new: Any) -> None:
    if old != new:
        raise InputFileError(f"{path} was made with {key}={old!r}, this run has {new!r}: it cannot be resumed here; "
                             "choose another --out.")


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
        See the module docstring. None: the pipeline is what ``ingest`` returns. A function whose first parameter
        is named ``documents`` is taken as ``ingest`` (a factory), as on the command line.
    task : DatasetDict, Task or dict of DataFrames
        Any ragcov task (``ragcov_data.load_dataset(...)``); its ``queries`` (``_id``, ``text``) are asked.
    k : int, optional
        Passages kept a question (default: all the pipeline returns).
    ingest : callable, optional
        ``ingest(documents)`` with the task's documents (:func:`ragcov_data.task_documents`), called first (not at
        all when resuming a file in which every question is answered).
    out : path, optional
        A ``.jsonl`` file written as questions finish, and resumed (see the module docstring).
    show_progress : bool, optional
        A progress bar (default: when standard error is a terminal).
    name : str, optional
        The run's name (default: the pipeline's, :func:`pipeline_name`; with only ``ingest``, its name).

    Returns
    -------
    DataFrame
        The passage run in normal form (:func:`ragcov_data.runs.passages.validate_passage_run`); ``attrs``:
        ``failures`` (question id -> error), ``empty`` (questions answered with no passage), ``pipeline``, ``k``,
        ``asked`` and ``resumed`` (questions asked in this call, and found answered in ``out``), ``repaired``
        (``merged``: questions found twice in ``out`` with identical copies, kept once; ``asked_again``: found
        twice with differing copies).

    Raises
    ------
    RagcovError
        Another run is writing ``out`` (it is locked: the message names that run), among the other errors.
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise RagcovError(f"`k` must be a positive integer; got {k!r}.")
    if pipeline is not None and ingest is None:
        pipeline, ingest = pipeline_or_factory(pipeline)
    if pipeline is None and ingest is None:
        raise RagcovError("no pipeline: pass `pipeline`, or an `ingest` that returns one.")
    name = name or (pipeline_name(pipeline) if pipeline is not None else None)
    queries = _queries(task)
    qids = [str(q) for q in queries["_id"]]
    meta = _meta(task, qids, name, k)
    path = _out_path(out)
    if path is None:
        return _run(pipeline, ingest, task, queries, qids, meta, name, k, None, show_progress)
    with one_writer(path):  # one writer a file: a second run on it is refused while this one writes
        return _run(pipeline, ingest, task, queries, qids, meta, name, k, path, show_progress)


def _run(pipeline: Any, ingest: Callable[[pd.DataFrame], Any] | None, task: Any, queries: pd.DataFrame,
         qids: list[str], meta: dict[str, Any], name: str | None, k: int | None, path: Path | None,
         show_progress: bool | None) -> pd.DataFrame:
    """The body of :func:`run_pipeline` once ``out`` is checked (and, with ``out``, locked)."""
    resumed = _resume(path, meta) if path is not None else _Resumed(set(), None, None)  # before any costly ingest
    done = resumed.done
    todo = [q for q in qids if q not in done]
    if todo and ingest is not None:
        built = ingest(task_documents(task))
        pipeline = built if pipeline is None else pipeline
        if pipeline is None:
            raise RagcovError(f"the ingest step {pipeline_name(ingest)!r} returned None and no pipeline was given; "
                              "return the retriever from it, or pass `pipeline`.")
    if name is None:  # named by what the ingest step built (or, with nothing to ask, by the file)
        name = pipeline_name(pipeline) if pipeline is not None else (resumed.meta or {}).get("pipeline") or "pipeline"
        meta["pipeline"] = name
        if resumed.meta is not None:
            _same(path, "pipeline", resumed.meta.get("pipeline"), name)  # type: ignore[arg-type]
    if resumed.rewrite is not None:
        atomic_write(path, resumed.rewrite)  # type: ignore[arg-type]
    _say_repaired(path, resumed)
    ask = _ask(pipeline) if todo else None
    hint = factory_hint(pipeline) if todo else ""  # a factory taken for the pipeline: said in its errors
    rows, failures = _ask_all(ask, queries, done, k, path, meta, show_progress, hint)
    if path is not None:
        run = _read_back(path, name, hint)
        failures = dict(run.attrs.get("failures") or {})
    else:
        if not any(_is_passage(r) for r in rows):
            raise RagcovError(_nothing_returned(name, rows, None) + hint)
        frame = pd.DataFrame(rows)
        run = validate_passage_run(frame, source=f"pipeline {name}", fmt="pipeline")
    run.attrs.update(asked=len(todo), resumed=len(done), repaired={"merged": resumed.merged,
                                                                   "asked_again": resumed.reasked})
    return _finish(run, failures, name, k)


def _say_repaired(path: Path | None, resumed: _Resumed) -> None:
    """A line on standard error for answers found twice in the file (see :func:`_answers`)."""
    if not (resumed.merged or resumed.reasked):
        return
    parts = []
    if resumed.merged:
        parts.append(f"{len(resumed.merged)} with identical copies kept once (first: {resumed.merged[0]!r})")
    if resumed.reasked:
        parts.append(f"{len(resumed.reasked)} whose copies differ dropped and asked again (first: "
                     f"{resumed.reasked[0]!r})")
    print(f"ragcov: {path}: {len(resumed.merged) + len(resumed.reasked)} question(s) were answered twice in the file "
          f"(two runs wrote it at once, or one was interrupted): {'; '.join(parts)}.", file=sys.stderr)


def _out_path(out: str | os.PathLike | None) -> Path | None:
    """The checked ``out`` path (a writable ``.jsonl`` file; its missing folders are created)."""
    if out is None:
        return None
    from ragcov_data.tasks.paths import check_writable

    path = Path(out)
    if path.suffix.lower() != ".jsonl":
        raise RagcovError(f"`out` must be a .jsonl file (one JSON object a line); got {path}.")
    check_writable(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _read_back(path: Path, name: str, hint: str = "") -> pd.DataFrame:
    """The passage run written at ``path``, read back through the one reader; a file holding no passage (every
    question failed, or was answered with nothing) is refused naming the pipeline and the first failure."""
    from ragcov_data.runs.passages import load_passage_run

    try:
        return load_passage_run(path)
    except InputFileError:
        recs = [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines()[1:] if t.strip()]
        if recs and not any(isinstance(r, dict) and _is_passage(r) for r in recs):
            raise RagcovError(_nothing_returned(name, recs, path) + hint) from None
        raise


def _nothing_returned(name: str, recs: list[Any], path: Path | None) -> str:
    """The error of a run in which no question got a passage."""
    errors = [r for r in recs if isinstance(r, dict) and r.get("error")]
    empty = [r for r in recs if isinstance(r, dict) and r.get("empty") is True and not _is_passage(r)]
    first = f"first: {errors[0].get('query-id')!r}: {str(errors[0]['error'])[:160]}" if errors else ""
    kept = f"; they are recorded in {path}" if path is not None else ""
    if errors and not empty:
        return (f"the pipeline {name!r} failed on every question (failures: {len(errors)}; {first}){kept}, and a "
                "re-run asks them again.")
    return (f"the pipeline {name!r} returned no passage for any question (failures: {len(errors)}; answered with no "
            f"passage: {len(empty)}{'; ' + first if first else ''}){kept}: a run with no passage is not scored "
            "(every question would score 0); check that the pipeline finds what it indexed"
            + (", then delete the file (or give another output path) to ask every question again." if path else "."))


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


def _ask_all(ask: Callable[[str], Any] | None, queries: pd.DataFrame, done: set[str], k: int | None,
             path: Path | None, meta: dict[str, Any], show_progress: bool | None, hint: str = ""
             ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Ask every question not in ``done``; the rows (passages, empty answers, failures) and the failures."""
    from tqdm.auto import tqdm

    show = bool(getattr(sys.stderr, "isatty", lambda: False)()) if show_progress is None else bool(show_progress)
    todo = [(str(q), str(t)) for q, t in zip(queries["_id"], queries["text"]) if str(q) not in done]
    rows: list[dict[str, Any]] = []
    failures: dict[str, str] = {}
    fh = None
    if path is not None and todo:
        new = not path.exists() or path.stat().st_size == 0
        fh = open(path, "a", encoding="utf-8")
        if new:
            _write(fh, [{META_KEY: meta}])
    try:
        for qid, text in tqdm(todo, desc="pipeline", unit="question", disable=not show):
            try:
                returned = ask(text)  # type: ignore[misc]
            except Exception as exc:  # noqa: BLE001 - one question's failure is recorded, the run goes on
                failures[qid] = f"{type(exc).__name__}: {exc}"
                got = [{"query-id": qid, "error": failures[qid]}]
            else:
                try:
                    got = passages_of(returned, qid, k)  # a malformed answer is the pipeline's contract broken
                except RagcovError as exc:
                    raise RagcovError(f"{exc}{hint}") from None
            if fh is not None:
                _write(fh, got)
            rows += got
    finally:
        if fh is not None:
            fh.close()
    return rows, failures
