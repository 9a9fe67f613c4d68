"""What a run was made on: the task's fingerprint, written into every run and checked by every reader.

A chunk id such as ``doc#0003`` exists under many cuts of one acervo (100 words, 400 words, one chunk per
artigo) while naming different text under each, so a run scored on a task of another cut pairs by id and
returns a wrong number with no error. The fingerprint says which chunks a run's ids name:

* ``corpus_sha256``: sha256 over the task corpus's chunk ids and texts, in id order (two tasks with the
  same chunks have the same hash, however they were loaded: a task folder, ``--data-files``, ``--dataset``);
  a baseline retriever records it when it indexes a corpus, so every run its ``search`` returns carries it;
* ``dataset``, ``config``, ``chunking``, ``chunk_words``: to name the task in messages.

``ragcov run`` records it in parquet metadata (``attrs["task_fingerprint"]``) and in the TREC tag, the sixth
column, as ``<retriever>|rc:<12 hex digits>@<label>`` (e.g. ``bm25|rc:3f2a9c1b7d4e@irpf/words-400``), so the
file stays a standard run that trec_eval reads. :func:`check_fingerprint` refuses a run whose fingerprint
differs from the task's, naming the task the run was made on.

A run with no fingerprint (made elsewhere) is checked by its ids (:func:`check_chunk_ids`): chunk ids past
their document's last chunk, or rows that almost never reach a document's second half (the pattern of a
coarser cut, :data:`PATTERN_RULES`), are refused; a run known to be made on the task can be recorded as such
with :func:`stamp_run`.
"""
from __future__ import annotations

import hashlib
import re
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ragcov_data.errors import QrelsRunMismatchError
from ragcov_data.task import manifest_of

#: Key of a run's ``attrs`` (and parquet metadata) holding the fingerprint of the task it was made on.
FINGERPRINT_KEY = "task_fingerprint"
#: Hex digits of the corpus hash kept in a TREC tag.
SHORT = 12
_TAG = re.compile(r"\|rc:(?P<hash>[0-9a-f]{%d})(?:@(?P<label>[^\s;|]+))?" % SHORT)
_CHUNK_ID = re.compile(r"^(?P<doc>.+)#(?P<idx>\d+)$")
#: A run without fingerprint whose rows, on documents of 4+ chunks, fall in a document's second half this
#: rarely shows the pattern of a coarser cut: none of >= 50 rows on >= 5 documents, or under 10% of >= 200
#: rows on >= 3 documents (a run made on the task itself: 46% on aneel_taesa words-100 with bm25, 37% on
#: irpf article; a words-400 run: 0% on aneel_taesa words-100, 6% on irpf article).
PATTERN_RULES = ((50, 5, 0.0), (200, 3, 0.10))

__all__ = ["FINGERPRINT_KEY", "task_fingerprint", "fingerprint_tag", "run_fingerprint", "check_fingerprint",
           "check_chunk_ids", "label_of", "stamp_run", "tag_with_fingerprint", "corpus_hash"]


def _frame(task: Any, split: str, columns: list[str]) -> pd.DataFrame | None:
    try:
        part = task[split]
    except (KeyError, TypeError):
        return None
    if part is None:
        return None
    if isinstance(part, pd.DataFrame):
        return part[[c for c in columns if c in part.columns]]
    names = getattr(part, "column_names", None)
    if names is not None:  # datasets.Dataset: only the columns needed
        return part.select_columns([c for c in columns if c in names]).to_pandas()
    return pd.DataFrame(part)


def _manifest(task: Any) -> dict[str, Any]:
    man = getattr(task, "manifest", None)
    if isinstance(man, Mapping):
        return dict(man)
    try:
        return dict(manifest_of(task) or {}) if hasattr(task, "get") else {}
    except Exception:  # a plain dict of DataFrames has no manifest
        return {}


def corpus_hash(corpus: pd.DataFrame) -> str:
    """sha256 over the corpus's ``_id`` and ``text`` (when present), in id order: the same chunks give the
    same hash whatever order they were indexed in."""
    h = hashlib.sha256()
    ids = corpus["_id"].astype(str).to_numpy(dtype=object)
    order = np.argsort(ids, kind="stable")
    h.update("\x1f".join(ids[order].tolist()).encode("utf-8", "surrogatepass"))
    if "text" in corpus.columns:
        texts = corpus["text"].fillna("").astype(str).to_numpy(dtype=object)[order]
        h.update(b"\x1e")
        h.update("\x1f".join(texts.tolist()).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def task_fingerprint(task: Any, manifest: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The fingerprint of a task (Task, DatasetDict or dict of frames); None when it has no corpus."""
    corpus = _frame(task, "corpus", ["_id", "text"])
    if corpus is None or "_id" not in corpus.columns or len(corpus) == 0:
        return None
    man = _manifest(task) if manifest is None else dict(manifest)
    config = man.get("config") or {}
    out: dict[str, Any] = {"corpus_sha256": corpus_hash(corpus), "chunks": int(len(corpus))}
    for key, value in (("dataset", man.get("dataset")), ("config", config.get("name")),
                       ("chunking", config.get("chunking")), ("chunk_words", config.get("chunk_words"))):
        if value is not None:
            out[key] = value
    return out


def label_of(fp: Mapping[str, Any]) -> str:
    """A short name of the task a fingerprint describes, e.g. ``irpf/words-400`` or ``aneel_taesa/words-100``."""
    cut = fp.get("config")
    if not cut and fp.get("chunking"):
        cut = fp["chunking"] + (f"-{fp['chunk_words']}" if fp.get("chunking") == "words" and fp.get("chunk_words")
                                else "")
    if not cut and fp.get("chunk_words"):
        cut = f"words-{fp['chunk_words']}"
    parts = [str(p) for p in (fp.get("dataset"), cut) if p]
    return re.sub(r"[\s;|@]", "_", "/".join(parts))  # "" when the run names no task (made through the library)


def fingerprint_tag(fp: Mapping[str, Any] | None) -> str:
    """The TREC-tag suffix carrying a fingerprint: ``|rc:<hash12>@<label>`` ("" without one)."""
    if not fp or not fp.get("corpus_sha256"):
        return ""
    label = label_of(fp)
    return f"|rc:{str(fp['corpus_sha256'])[:SHORT]}" + (f"@{label}" if label else "")


def stamp_run(run: pd.DataFrame, task: Any) -> pd.DataFrame:
    """Record in ``run.attrs`` the fingerprint of ``task`` (what :func:`save_run` writes); returns ``run``."""
    fp = task_fingerprint(task)
    if fp is not None:
        run.attrs[FINGERPRINT_KEY] = fp
    return run


def run_fingerprint(attrs: Mapping[str, Any]) -> dict[str, Any] | None:
    """A run's fingerprint: ``attrs["task_fingerprint"]`` (parquet metadata) or its TREC tag's ``|rc:`` mark
    (``short`` hash and ``label`` only); None for a run that carries none."""
    fp = attrs.get(FINGERPRINT_KEY)
    if isinstance(fp, Mapping) and fp.get("corpus_sha256"):
        out = dict(fp)
        out["short"] = str(fp["corpus_sha256"])[:SHORT]
        out["label"] = label_of(fp)
        return out
    tags = attrs.get("tag")
    tags = [tags] if isinstance(tags, str) else list(tags or [])
    marks = {(m.group("hash"), m.group("label")) for t in tags if isinstance(t, str) for m in [_TAG.search(t)] if m}
    if not marks:
        return None
    if len(marks) > 1:  # two tasks' rows in one file: refused by the check, whatever the task
        return {"short": None, "label": " and ".join(sorted(lb or h for h, lb in marks))}
    h, lb = marks.pop()
    return {"short": h, "label": lb or ""}


def check_fingerprint(run: pd.DataFrame, task_fp: Mapping[str, Any] | None, where: str) -> bool:
    """Refuse a run whose fingerprint differs from the task's, naming the task the run was made on.

    Returns True when the run carries a fingerprint that fits (False: none to check, or no corpus)."""
    fp = run_fingerprint(run.attrs)
    if fp is None or not task_fp:
        return False
    if fp.get("short") == str(task_fp["corpus_sha256"])[:SHORT]:
        return True
    if fp.get("short") is None:
        raise QrelsRunMismatchError(
            f"{where}: the run's rows carry the marks of several tasks ({fp['label']}); one run file holds one "
            "task's run. Split it, and evaluate each on its own task.")
    made = fp["label"] or "another task, not named in the run,"
    extra = f"{fp['chunks']:,} chunks, " if fp.get("chunks") else ""
    here = label_of(task_fp) or "this task"
    raise QrelsRunMismatchError(
        f"{where}: the run was made on {made} ({extra}corpus hash {fp['short']}); this task is {here} "
        f"({int(task_fp.get('chunks', 0)):,} chunks, corpus hash {str(task_fp['corpus_sha256'])[:SHORT]}). Its "
        "chunk ids name other chunks here, so its score would be wrong: evaluate it on the task it was made on "
        f"({_how(fp)}), or make the run again on this task (`ragcov run` with this task's options).")


def _how(fp: Mapping[str, Any]) -> str:
    """The options that rebuild the task a run was made on, as far as its fingerprint says."""
    label = str(fp.get("label") or "")
    dataset, _, cut = label.partition("/")
    if dataset in ("irpf", "cited_questions"):
        words = re.fullmatch(r"words-(\d+)", cut or "")
        call = (f"chunking='words', chunk_words={words.group(1)}" if words else f"name={cut!r}") if cut else ""
        return f"the {cut or 'same'} cut of --dataset {dataset}" + (
            f": ragcov_data.load_dataset({dataset!r}, {call})" if call else "")
    m = re.fullmatch(r"(words|chunks|dispositivo)(?:-(\d+))?", cut)
    if m and m.group(1) in ("words", "chunks") and m.group(2):
        return f"--chunk-words {m.group(2)}"
    if m and m.group(1) == "dispositivo":
        return "--chunking dispositivo"
    return f"the task {label}" if label else "the same corpus and chunking"


def check_chunk_ids(run: pd.DataFrame, corpus: pd.DataFrame | None, where: str, *, has_fingerprint: bool) -> None:
    """Refuse a run whose chunk ids cannot name the task's chunks (see the module docstring).

    ``corpus`` needs ``_id``, ``doc_id`` and ``chunk_index``; without them there is nothing to check."""
    if corpus is None or not {"_id", "doc_id", "chunk_index"} <= set(corpus.columns) or run.empty:
        return
    n_of = corpus.groupby(corpus["doc_id"].astype(str), sort=False)["chunk_index"].max() + 1
    for col in ("corpus-id", "query-id"):
        codes, uniq = pd.factorize(run[col])
        parsed = pd.Series(uniq, dtype=object).astype(str).str.extract(_CHUNK_ID.pattern)
        ok = parsed["doc"].notna() & parsed["doc"].isin(n_of.index)
        if not ok.any():
            continue
        doc = parsed.loc[ok, "doc"]
        idx = parsed.loc[ok, "idx"].astype(np.int64)
        n = n_of.reindex(doc).to_numpy()
        past = idx.to_numpy() >= n
        if past.any():
            first = [str(uniq[i]) for i in np.flatnonzero(ok.to_numpy())[past][:3]]
            bad_docs = doc[past].nunique()
            raise QrelsRunMismatchError(
                f"{where}: {int(past.sum()):,} {col} ids lie past their document's last chunk in this task (first: "
                f"{first}; {bad_docs} document(s)): the run was made on a finer cut (a smaller chunk size or "
                "another chunking) of this acervo. Evaluate it on the task it was made on, or make the run again "
                "on this task.")
        if has_fingerprint or col != "corpus-id":
            continue
        rows = np.bincount(codes, minlength=len(uniq))[np.flatnonzero(ok.to_numpy())]
        _refuse_coarser(doc.to_numpy(), idx.to_numpy(), n, rows, where)


def tag_with_fingerprint(tag: str, attrs: Mapping[str, Any]) -> str:
    """``tag`` carrying the fingerprint in ``attrs`` (before a ``;sample:`` spec), unless it already does."""
    fp = attrs.get(FINGERPRINT_KEY)
    mark = fingerprint_tag(fp if isinstance(fp, Mapping) else None)
    if not mark or "|rc:" in tag:
        return tag
    head, sep, spec = tag.partition(";sample:")
    return f"{head}{mark}{sep}{spec}"


def _refuse_coarser(doc: np.ndarray, idx: np.ndarray, n: np.ndarray, rows: np.ndarray, where: str) -> None:
    """Refuse ids (distinct, with their row counts) that keep to the first half of their documents
    (:data:`PATTERN_RULES`): the pattern of a run made at a coarser cut, whose ids name other chunks here."""
    big = n >= 4  # documents whose second half holds at least two chunks
    if not big.any():
        return
    total, docs = int(rows[big].sum()), len(set(doc[big]))
    upper = float(rows[big & (idx >= n / 2.0)].sum()) / max(total, 1)
    if not any(total >= r and docs >= d and upper <= s for r, d, s in PATTERN_RULES):
        return
    reach = pd.DataFrame({"doc": doc[big], "n": n[big], "top": idx[big] + 1}).groupby("doc").agg(
        n=("n", "first"), top=("top", "max"))
    ratio = float(np.median(reach["n"] / reach["top"]))
    raise QrelsRunMismatchError(
        f"{where}: the run carries no task fingerprint and only {upper:.0%} of its {total:,} rows on {docs} "
        f"documents of 4+ chunks name a chunk in the second half of a document (in the median document the "
        f"highest id reached is 1/{ratio:.1f} of its chunks): the pattern of a run made at a coarser cut (a larger "
        "chunk size, or one chunk per artigo), whose ids name other chunks here. Evaluate it on the task it was "
        "made on, or make the run again on this task with `ragcov run` (its runs carry the fingerprint). If the "
        "run was made on this very task, record it: ragcov_data.runs.fingerprint.stamp_run(run, task), then "
        "save_run.")
