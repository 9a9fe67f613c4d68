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
with :func:`stamp_run`. A run carrying a fingerprint is checked by its ids as well (a tag copied from another
run proves nothing), and on a word-window task a run whose query ids are exactly another window size's chunks
is refused naming that size (:func:`check_query_cut`).
"""
from __future__ import annotations

import hashlib
import re
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ragcov_data.errors import QrelsRunMismatchError
from ragcov_data.tasks.record import manifest_of

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
           "check_chunk_ids", "check_query_cut", "label_of", "stamp_run", "tag_with_fingerprint", "corpus_hash"]


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
    if fp["label"] and fp["label"] == label_of(task_fp):  # the same cut of other text: another corpus version
        raise QrelsRunMismatchError(
            f"{where}: the run was made on {here}, this task's own cut, but of other text ({extra}corpus hash "
            f"{fp['short']}; this task: {int(task_fp.get('chunks', 0)):,} chunks, corpus hash "
            f"{str(task_fp['corpus_sha256'])[:SHORT]}): the sources changed between the run and this task "
            "(another version of the acts, or edited text), so chunks its ids name may hold other text here and "
            "its score would not be the run's. Make the run again on these sources (`ragcov run` with this task's "
            "options), or evaluate it on the sources it was made on (--data-dir / --data-files of that version).")
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
        call = _cited_call(cut) if cut else ""
        return f"the {cut or 'same'} cut of --dataset {dataset}" + (
            f": ragcov_data.load_dataset({dataset!r}, {call})" if call else "")
    m = re.fullmatch(r"(words|chunks|dispositivo)(?:-(\d+))?", cut)
    if m and m.group(1) in ("words", "chunks") and m.group(2):
        return f"--chunk-words {m.group(2)}"
    if m and m.group(1) == "dispositivo":
        return "--chunking dispositivo"
    return f"the task {label}" if label else "the same corpus and chunking"


def _cited_call(cut: str) -> str:
    """The ``load_dataset`` keywords of a cited-questions config name (``words-400``, ``dispositivo-200-min30``,
    ``article-artqrels-full``, an external chunker's name)."""
    kw = []
    if cut.endswith("-full"):
        cut, kw = cut[:-len("-full")], ["coverage='full'"]
    if cut.endswith("-artqrels"):
        cut, kw = cut[:-len("-artqrels")], ["granularity='article'", *kw]
    words = re.fullmatch(r"words-(\d+)", cut)
    disp = re.fullmatch(r"dispositivo(?:-(\d+))?(?:-min(\d+))?", cut)
    if words:
        head = [f"chunking='words', chunk_words={words.group(1)}"]
    elif disp:
        head = ["chunking='dispositivo'", *([f"max_words={disp.group(1)}"] if disp.group(1) else []),
                *([f"min_words={disp.group(2)}"] if disp.group(2) else [])]
    elif cut == "article":
        head = ["chunking='article'"]
    else:
        head = [f"chunker={cut!r}"]
    return ", ".join(head + kw)


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
        if col != "corpus-id":
            continue
        rows = np.bincount(codes, minlength=len(uniq))[np.flatnonzero(ok.to_numpy())]
        _refuse_coarser(doc.to_numpy(), idx.to_numpy(), n, rows, where, has_fingerprint)


def check_query_cut(run: pd.DataFrame, task: Any, manifest: Mapping[str, Any], corpus: pd.DataFrame | None,
                    where: str) -> None:
    """Refuse a run on a word-window task whose query ids are exactly the chunks of another window size.

    On a self-retrieval task a query id is a chunk id, so a run made at 120 words lacks this 100-word task's
    later queries while its other ids all exist: scored with ``on_missing`` zero or intersect it would pass
    for a run of this cut. When the run's queries per document are not the task's, the window sizes whose
    chunks per document (:func:`ragcov_data.loaders.chunking.chunk_spans`, from each document's words) are
    the run's in every document are sought; if some fit and the task's own size does not, the run is refused
    naming them."""
    config = (manifest or {}).get("config") or {}
    size, qw = config.get("chunk_words"), int(config.get("query_words") or 20)
    if (config.get("chunking") or "words") != "words" or not size or corpus is None or run.empty \
            or not {"doc_id", "chunk_index"} <= set(corpus.columns):
        return
    n_task = corpus.groupby(corpus["doc_id"].astype(str), sort=False)["chunk_index"].max() + 1
    parsed = pd.Series(pd.unique(run["query-id"].astype(str)), dtype=object).str.extract(_CHUNK_ID.pattern)
    parsed = parsed[parsed["doc"].isin(n_task.index)]
    if parsed.empty:
        return
    got = parsed["idx"].astype(np.int64).groupby(parsed["doc"]).agg(["count", "max"])
    if (got["count"] != got["max"] + 1).any():  # gaps: queries a run lacks, not another cut
        return
    m = got["count"].reindex(n_task.index, fill_value=0).to_numpy()
    if (m == n_task.to_numpy()).all():
        return
    words = _doc_words(task, n_task.index)
    if words is None:
        return
    fits = [c for c in range(qw, int(words.max()) + 1) if (_n_chunks(words, c, qw) == m).all()]
    if not fits or int(size) in fits:
        return
    lo, hi = fits[0], fits[-1]
    pick = next((c for c in fits if c % 10 == 0), next((c for c in fits if c % 5 == 0), fits[len(fits) // 2]))
    span = f"{lo} words" if lo == hi else f"{lo} to {hi} words"
    raise QrelsRunMismatchError(
        f"{where}: the run's query ids are exactly the chunks of a cut at {span} a chunk (its queries per document "
        f"are that cut's in all {len(m)} documents; {int(n_task.sum() - m.sum()):,} of this task's "
        f"{int(n_task.sum()):,} queries are absent), not of this task's chunk_words={size}: its ids name other "
        f"chunks here, so no --on-missing setting gives its score. Evaluate it on the task it was made on "
        f"(--chunk-words {pick}), or make the run again on this task with `ragcov run`.")


def _n_chunks(words: np.ndarray, size: int, query_words: int) -> np.ndarray:
    """Chunks per document of ``words`` words under ``size``-word windows (a last window shorter than
    ``query_words`` joins the one before; a document of one chunk is left out: 0)."""
    full, rest = np.divmod(words, size)
    n = full + (rest > 0)
    n = n - ((n >= 2) & (rest > 0) & (rest < query_words))
    return np.where(n >= 2, n, 0)


def _doc_words(task: Any, docs: pd.Index) -> np.ndarray | None:
    """Words of each document of ``docs``: the words of its chunks (word windows join to the document)."""
    corpus = _frame(task, "corpus", ["doc_id", "text"])
    if corpus is None or not {"doc_id", "text"} <= set(corpus.columns):
        return None
    per = corpus["text"].fillna("").astype(str).str.split().str.len()
    return per.groupby(corpus["doc_id"].astype(str)).sum().reindex(docs, fill_value=0).to_numpy(dtype=np.int64)


def tag_with_fingerprint(tag: str, attrs: Mapping[str, Any]) -> str:
    """``tag`` carrying the fingerprint in ``attrs`` (before a ``;sample:`` spec), unless it already does."""
    fp = attrs.get(FINGERPRINT_KEY)
    mark = fingerprint_tag(fp if isinstance(fp, Mapping) else None)
    if not mark or "|rc:" in tag:
        return tag
    head, sep, spec = tag.partition(";sample:")
    return f"{head}{mark}{sep}{spec}"


def _refuse_coarser(doc: np.ndarray, idx: np.ndarray, n: np.ndarray, rows: np.ndarray, where: str,
                    has_fingerprint: bool = False) -> None:
    """Refuse ids (distinct, with their row counts) that keep to the first half of their documents
    (:data:`PATTERN_RULES`): the pattern of a run made at a coarser cut, whose ids name other chunks here.
    A run whose fingerprint names this task is checked too: a tag copied onto another cut's rows is no proof."""
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
    said = ("the run's fingerprint names this task, yet" if has_fingerprint else
            "the run carries no task fingerprint and")
    tail = (" A fingerprint copied from another run (or a tag edited by hand) does not make the ids this task's."
            if has_fingerprint else
            " If the run was made on this very task, record it: ragcov_data.runs.fingerprint.stamp_run(run, task), "
            "then save_run.")
    raise QrelsRunMismatchError(
        f"{where}: {said} only {upper:.0%} of its {total:,} rows on {docs} "
        f"documents of 4+ chunks name a chunk in the second half of a document (in the median document the "
        f"highest id reached is 1/{ratio:.1f} of its chunks): the pattern of a run made at a coarser cut (a larger "
        "chunk size, or one chunk per artigo), whose ids name other chunks here. Evaluate it on the task it was "
        "made on, or make the run again on this task with `ragcov run` (its runs carry the fingerprint)." + tail)
