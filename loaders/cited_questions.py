"""Real questions whose gold is the provisions their answers cite: ``cited_questions`` and ``irpf``.

The corpus is a set of acts cut into chunks (word windows, dispositivos or whole artigos); the queries
are questions; the gold of each question is a list of citations — structured references (``doc_id,
article, paragraph, inciso, alinea``) or human-written strings (``raw``) read by
:func:`ragcov_data.legal.citations.parse`. Qrels are resolved onto whatever chunking was built::

    import ragcov_data
    ds = ragcov_data.load_dataset("irpf", data_dir="../shared/data", chunking="article")
    ds = ragcov_data.load_dataset("cited_questions", data_files={"acts": "laws.jsonl",
                                  "questions": "questions.jsonl"}, chunking="words", chunk_words=200)
    ds = ragcov_data.load_dataset("irpf", data_dir="../shared/data", chunker="recursive-800")  # any chunker

Resolution (:data:`RESOLUTION_RULE`)
------------------------------------
Every act is located provision by provision (:func:`ragcov_data.loaders.articles.locate`: character spans
of artigos, parágrafos, incisos, alíneas, itens, and the caput). A chunk is relevant to a question when
its character span overlaps a cited provision's span:

- ``granularity="dispositivo"`` (default): grade 2 for a chunk overlapping the cited dispositivo itself
  (the paragraph, inciso ... or the caput), grade 1 for a chunk overlapping only another part of the cited
  artigo; an artigo cited alone makes the whole artigo grade 2. A cited dispositivo that is not found in
  the text (renumbered or revoked since) makes its artigo grade 1 and is listed.
- ``granularity="article"``: grade 1 for every chunk overlapping a cited artigo.

A chunk relevant to several citations keeps its highest grade. Every citation that resolves to no
chunk — its act is not in the corpus (``act_not_in_corpus``, expected where ``coverage`` is
``partial``), its artigo is not found (``article_not_found``), a raw string yields no citation
(``unparsed``), its year contradicts the act it names (``year_mismatch``), a number no real act has
(``number_out_of_range``), an inciso or alínea written with no valid numeral or letter (``invalid_numeral``),
a relative reference with nothing to read it against (``relative_without_context``), no act named
(``act_unknown``), an annex (``not_located``) — is counted per reason and listed in the manifest
(``unresolved``) and in a warning, never dropped in silence; so is every dispositivo resolved only to its
artigo (``dispositivo_not_found``) and every question left with no relevant chunk
(``queries_without_relevant_chunk``). A raw string is parsed with the act (and artigo) its structured
references agree on as ``context``, so ``§ 2º deste artigo`` is read inside it.

Splits
------
corpus: ``_id, doc_id, chunk_index, text, unit, continued, start_char, end_char`` (the chunk's
character span in its act), ``articles`` (the artigos the chunk holds; empty for word windows), ``in_force``
where the acts carry vigência (by span, for every chunker), and the acts' metadata. queries: ``_id, text, coverage, partial,
question_summary, topic`` (the record's ``topic`` if it has one, else the summary up to its first dash, else the
question id: a cluster for
``evaluate(..., cluster="topic")``), ``n_citations, n_resolved``. qrels: ``query-id, corpus-id, score``. citations: one row
per (question, cited provision): ``query-id, citation, doc_id, article, paragraph, inciso, alinea, item,
caput, raw, status, chunks`` (the chunks overlapping the provision itself), ``article_chunks`` (those
overlapping its artigo), ``start_char, end_char`` (the provision's character span in its act, missing unless
resolved) and ``article_start_char, article_end_char`` (its artigo's) — what provision-level recall and the
budgeted span measures (:mod:`ragcov_data.eval.outcomes.budget`) read. documents: ``doc_id, text`` and the acts'
metadata: each act's text as chunked (the character line every span above is on), what a pipeline ingests
(:func:`ragcov_data.tasks.documents.task_documents`) and where passages are located.
"""
from __future__ import annotations

import functools
import json
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import datasets
import numpy as np
import pandas as pd

from ragcov_data import __version__
from ragcov_data.tasks.load import _content_hash
from ragcov_data.legal import citations as cit
from ragcov_data.legal.acervo import Acervo, as_nfc, read_acervo, sha256_file
from ragcov_data.legal.vigencia import annotate_task
from ragcov_data.loaders._cited_gold import (STATUS_TEXT, STATUSES, Gold, UnresolvedCitations, _parse_raw, _raw_context, _s,  # noqa: F401
                                             _table, act_of, gold_citations, no_qrels_error)
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.loaders import chunkers, chunking as ch
from ragcov_data.loaders._cited_corpus import _located, chunk_act, chunk_corpus  # noqa: F401
from ragcov_data.loaders.articles import ARTICLE_RULE, LOCATE_RULE
from ragcov_data.loaders.base import TaskBuilder
from ragcov_data.loaders.chunking import WORD_RULE
from ragcov_data.loaders.dispositivos import SIZE_RULE, settings
from ragcov_data.loaders.questions import read_questions, topic_of, validate_questions  # re-exported
from ragcov_data.tasks.paths import data_dir as default_dir
from ragcov_data.tasks.record import Task, manifest_description


__all__ = ["CitedQuestionsConfig", "CitedQuestionsBuilder", "IRPFBuilder", "CitedTask", "build_cited_task", "topic_of",
           "resolve_citations", "chunk_act", "validate_questions", "act_of",
           "read_questions", "gold_citations", "Gold", "CHUNKINGS", "SPAN_COLUMNS", "GRANULARITIES", "RESOLUTION_RULE",
           "STATUSES"]

CHUNKINGS = ("words", "dispositivo", "article")
GRANULARITIES = ("dispositivo", "article")
GOLDS = ("auto", "raw", "references")
COVERAGES = ("all", "full")
#: Character spans of the ``citations`` split: the cited provision's ``[start_char, end_char)`` in its act
#: (missing unless ``status == "resolved"``) and its artigo's (missing unless the artigo was found).
SPAN_COLUMNS = ("start_char", "end_char", "article_start_char", "article_end_char")
RESOLUTION_RULE = (
    "a chunk is relevant when its character span overlaps a cited provision's span (provisions located line by "
    "line in each act); granularity 'dispositivo': grade 2 for the cited paragraph/inciso/alínea/item/caput "
    "itself, 1 for another part of the cited artigo, an artigo cited alone is grade 2 throughout, a dispositivo "
    "not found in the text leaves its artigo at grade 1; granularity 'article': grade 1 for every chunk "
    "overlapping a cited artigo; a chunk keeps its highest grade; unresolved citations are listed, never dropped"
)
GOLD_RULE = {
    "raw": "the human-written citation strings (`raw`), parsed by ragcov_data.legal.citations.parse",
    "references": "the structured references (doc_id, article, paragraph, inciso, alinea)",
    "auto": "the human-written citation strings (`raw`) where a question has them, else its structured references",
}
#: Files of the shared ``irpf`` folder.
IRPF_FILES = {"acts": "laws.jsonl", "questions": "questions.jsonl"}




# --------------------------------------------------------------------------- the task


@dataclass
class CitedTask(Task):
    """A cited-questions task: :class:`ragcov_data.tasks.record.Task` plus ``citations`` (one row per question
    and cited provision) and ``documents`` (the acts' text), see the module docstring."""

    citations: pd.DataFrame = field(default_factory=pd.DataFrame)
    documents: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __getitem__(self, split: str) -> pd.DataFrame:
        if split in ("citations", "documents"):
            return getattr(self, split)
        return super().__getitem__(split)

    def full(self) -> "CitedTask":
        """The questions whose cited acts are all in the corpus (``coverage == "full"``)."""
        keep = set(self.queries.loc[~self.queries["partial"].astype(bool), "_id"])
        return _subset(self, keep, "full")


def _subset(task: CitedTask, keep: set, name: str) -> CitedTask:
    q = task.queries[task.queries["_id"].isin(keep)].reset_index(drop=True)
    r = task.qrels[task.qrels["query-id"].isin(keep)].reset_index(drop=True)
    c = task.citations[task.citations["query-id"].isin(keep)].reset_index(drop=True)
    manifest = json.loads(json.dumps(task.manifest))
    manifest.setdefault("config", {})["coverage"] = name
    manifest.setdefault("counts", {}).update({"queries": int(len(q)), "qrels": int(len(r))})
    return CitedTask(task.corpus, q, r, manifest, citations=c, documents=task.documents)


def _read_acts(acts: Any) -> Any:
    """The acts, their text in Unicode NFC (acts saved in NFD are the same acts: their provisions are found)."""
    return as_nfc(acts if isinstance(acts, Acervo) else read_acervo(acts))


def build_cited_task(
    acts: Any,
    questions: str | os.PathLike | Sequence[Mapping[str, Any]],
    *,
    chunking: str = "article",
    chunk_words: int = 100,
    query_words: int = 20,
    min_words: int | None = None,
    max_words: int | None = None,
    granularity: str = "dispositivo",
    gold: str = "auto",
    coverage: str = "all",
    dataset: str = "cited_questions",
    config_name: str | None = None,
    warn: bool = True,
    chunker: Any = None,
) -> CitedTask:
    """Build the cited-questions task: chunk the acts, read the questions, resolve their citations.

    Parameters
    ----------
    acts : path, list of paths or Acervo
        The acts (anything :func:`ragcov_data.read_acervo` reads; ``doc_id``, ``text``, optional ``title``).
    questions : path or list of dict
        A questions JSONL file (:func:`read_questions`) or its records.
    chunking : {"words", "dispositivo", "article"}, default: "article"
        Word windows of ``chunk_words``; dispositivo units (``min_words``/``max_words``); one chunk per artigo.
    granularity : {"dispositivo", "article"}, default: "dispositivo"
        Grades of the qrels (see :data:`RESOLUTION_RULE`).
    gold : {"auto", "raw", "references"}, default: "auto"
        Which gold to read (:data:`GOLD_RULE`).
    coverage : {"all", "full"}, default: "all"
        ``"full"`` keeps only questions whose cited acts are all present (``coverage == "full"``).
    warn : bool
        Warn (listing them) about citations that resolve to no chunk.
    chunker : str, callable or chunker object, optional
        Any chunker (:func:`ragcov_data.loaders.chunkers.resolve`): a built-in name (``words-N``,
        ``dispositivo[-N]``, ``article``: the same as ``chunking=``), an external one (``recursive-N``,
        ``chonkie-sentence-N``, ``semchunk-N``), a callable or a splitter object. When given it replaces
        ``chunking``; external chunks are located in their act (:data:`ragcov_data.loaders.chunkers.LOCATE_RULE`)
        and graded by the same span-overlap rule.

    Returns
    -------
    CitedTask
    """
    spec, chunking, chunk_words, max_words = _chunker_options(chunker, chunking, chunk_words, query_words,
                                                              min_words, max_words, granularity, gold, coverage)
    acervo = _read_acts(acts)
    qsource, qs = _read_questions_arg(questions)
    corpus, bounds, index, uncovered = chunk_corpus(acervo, spec, dict(
        chunking=chunking, chunk_words=chunk_words, query_words=query_words, min_words=min_words, max_words=max_words))
    ids = corpus["_id"].to_numpy(dtype=object)
    q_rows, c_rows, qrels, unresolved, coarse = resolve_citations(  # the questions and their citations
        qs, index=index, bounds=bounds, ids=ids, table=_table(acervo.documents), gold=gold, granularity=granularity,
        coverage=coverage)
    queries, qr, cits = _question_frames(q_rows, c_rows, qrels, ids)
    no_gold = queries.loc[~queries["_id"].isin(set(qr["query-id"])), "_id"].tolist()
    name = config_name or _config_name(chunking, chunk_words, query_words, min_words, max_words, granularity,
                                       coverage, spec.name if spec else None)
    manifest = _manifest(dataset, name, spec, dict(chunking=chunking, chunk_words=chunk_words, query_words=query_words,
                                                   min_words=min_words, max_words=max_words, granularity=granularity,
                                                   gold=gold, coverage=coverage),
                         acervo, qsource, _counts(acervo, corpus, queries, qr, cits, no_gold),
                         dict(unresolved=unresolved, dispositivo_not_found=coarse,
                              queries_without_relevant_chunk=no_gold), uncovered)
    annotate_task(corpus, acervo, manifest, by_span=True)  # `in_force` of every chunker alike, by its spans
    _as_strings((corpus, queries, qr), list(acervo.metadata_columns))
    if warn:
        _warn(manifest["counts"], unresolved, coarse, name, no_gold, dataset)
        if uncovered:
            warnings.warn(f"chunker {spec.name!r} left text out of every chunk: {uncovered} non-space characters "
                          "by act (manifest `chunker.uncovered_characters`).", stacklevel=2)
    return CitedTask(corpus, queries, qr, manifest, citations=cits, documents=_documents(acervo))


def _documents(acervo: Any) -> pd.DataFrame:
    """The ``documents`` split: each act's id and text as chunked, then its metadata (as strings)."""
    meta_cols = list(acervo.metadata_columns)
    rows = [(d.doc_id, d.text, *(None if d.metadata.get(c) is None else str(d.metadata.get(c)) for c in meta_cols))
            for d in acervo.documents]
    out = pd.DataFrame(rows, columns=["doc_id", "text", *meta_cols])
    out["doc_id"] = out["doc_id"].astype("str")
    out["text"] = out["text"].astype("str")
    return out


def _chunker_options(chunker: Any, chunking: str, chunk_words: int, query_words: int, min_words: int | None,
                     max_words: int | None, granularity: str, gold: str, coverage: str) -> tuple:
    """Check the options; a built-in chunker given by name becomes its ``chunking`` settings.

    Returns ``(spec, chunking, chunk_words, max_words)``: ``spec`` is the external chunker, else None."""
    spec = None if chunker is None else chunkers.resolve(chunker)
    if spec is not None and spec.builtin is not None:  # a built-in cut by name: the usual path
        chunking = spec.builtin["chunking"]
        chunk_words = spec.builtin.get("chunk_words") or chunk_words
        max_words = spec.builtin.get("max_words") or max_words
        spec = None
    if spec is not None and (min_words is not None or max_words is not None):
        raise RagcovError(f"`min_words`/`max_words` apply to chunking='dispositivo'; drop them for the chunker "
                          f"{spec.name!r}.")
    _check(chunking, granularity, gold, coverage)
    if chunking == "words" and all(isinstance(v, int) and v >= 1 for v in (chunk_words, query_words)) \
            and chunk_words < query_words:  # the questions are the queries here: say what query_words does
        raise RagcovError(f"words-{chunk_words}: a word window must hold at least query_words ({query_words}) words "
                          "(a last window shorter than that joins the one before it); use words-"
                          f"{query_words} or more, or give query_words={chunk_words} to load_dataset / "
                          "build_cited_task (the questions are the queries; query_words only sets that minimum).")
    ch.validate_sizes(chunk_words, query_words)
    if chunking == "dispositivo" and spec is None:
        settings("dispositivo", min_words, max_words, query_words)
    elif spec is None and min_words is not None or max_words is not None:
        raise RagcovError(f"`min_words`/`max_words` apply to chunking='dispositivo'; drop them for "
                          f"chunking={chunking!r} (an article chunk is the whole artigo).")
    return spec, chunking, chunk_words, max_words


def _read_questions_arg(questions: Any) -> tuple[Path | None, list]:
    """The questions file (None for records given in memory) and its validated records."""
    if isinstance(questions, (str, os.PathLike)):
        return Path(questions), read_questions(questions)
    return None, validate_questions([(f"`questions[{i}]`", q) for i, q in enumerate(questions)])


def _question_frames(q_rows: list, c_rows: list, qrels: dict, ids: np.ndarray
                     ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The ``queries``, ``qrels`` (in query then corpus order) and ``citations`` tables, typed."""
    if not q_rows:
        raise RagcovError("no question is left (coverage='full' and every question is partial?); use coverage='all'.")
    queries = pd.DataFrame(q_rows)
    queries["partial"] = queries["partial"].astype(bool)
    for col in ("n_citations", "n_resolved"):
        queries[col] = queries[col].astype("int64")
    qr = pd.DataFrame([(a, b, g) for (a, b), g in qrels.items()], columns=["query-id", "corpus-id", "score"])
    qr["score"] = qr["score"].astype("int64")
    order = {cid: i for i, cid in enumerate(ids)}
    qpos = {qid: i for i, qid in enumerate(queries["_id"])}
    qr = qr.assign(_q=qr["query-id"].map(qpos), _c=qr["corpus-id"].map(order)).sort_values(["_q", "_c"]) \
        .drop(columns=["_q", "_c"]).reset_index(drop=True)
    cits = pd.DataFrame(c_rows, columns=["query-id", "citation", "doc_id", "article", "paragraph", "inciso",
                                         "alinea", "item", "caput", "raw", "status", "chunks", "article_chunks",
                                         *SPAN_COLUMNS])
    for col in SPAN_COLUMNS:  # character offsets in the act; missing (unlocated) stays missing, never 0
        cits[col] = cits[col].astype("Int64")
    return queries, qr, cits


def _counts(acervo: Any, corpus: pd.DataFrame, queries: pd.DataFrame, qr: pd.DataFrame, cits: pd.DataFrame,
            no_gold: list) -> dict[str, Any]:
    """The manifest's ``counts``: documents, chunks, queries, grades and citations by status."""
    art_cits = cits[cits["article"].notna() & (cits["status"] != "act_not_in_corpus")]
    return {
        "documents": len(acervo.documents), "chunks": int(len(corpus)), "queries": int(len(queries)),
        "queries_partial": int(queries["partial"].sum()), "qrels": int(len(qr)),
        "grades": {str(int(g)): int(n) for g, n in qr["score"].value_counts().sort_index().items()},
        "citations": int(len(cits)),
        "citations_by_status": {s: int((cits["status"] == s).sum()) for s in STATUSES},
        "article_citations_in_corpus": int(len(art_cits)),
        "article_citations_resolved": int(art_cits["status"].isin(["resolved", "dispositivo_not_found"]).sum()),
        "queries_without_relevant_chunk": len(no_gold),
    }


def _manifest(dataset: str, name: str, spec: Any, cfg: dict[str, Any], acervo: Any, qsource: Path | None,
              counts: dict, lists: dict[str, list], uncovered: dict[str, int]) -> dict[str, Any]:
    """The task's manifest: config, rules, sources (with the questions file's hash), counts and the lists
    of ``lists`` (unresolved citations, dispositivos resolved to their artigo, questions with no gold)."""
    chunking = cfg["chunking"]
    manifest = {
        "dataset": dataset,
        "task": "cited questions",
        "config": {"name": name, **cfg, "chunking": "external" if spec else chunking,
                   "chunker": spec.name if spec else None},
        "rules": {"resolution": RESOLUTION_RULE, "gold": GOLD_RULE[cfg["gold"]], "provisions": _articles_rule(),
                  "chunking": f"{spec.rule}; {chunkers.LOCATE_RULE}" if spec else _chunking_rule(chunking),
                  "partial": "questions whose answers also cite acts absent from the corpus (coverage 'partial') are "
                             "kept with partial=True; coverage='full' (or CitedTask.full()) keeps the others",
                  "ids": "corpus _id = '<doc_id>#<chunk_index:04d>'"},
        "sources": [s.to_dict() for s in acervo.sources] + (
            [{"name": qsource.name, "path": str(qsource), "sha256": _sha(qsource)}] if qsource else []),
        "metadata_columns": list(acervo.metadata_columns),
        "counts": counts,
        **lists,
        "ragcov_version": __version__,
    }
    if spec is not None:
        manifest["chunker"] = {"name": spec.name, "rule": spec.rule, "library": spec.version,
                               "uncovered_characters": uncovered}
    return manifest


def _as_strings(frames: Sequence[pd.DataFrame], meta_cols: list[str]) -> None:
    """Object columns as pandas' default string dtype (as ``Dataset.to_pandas()`` gives), in place; list
    columns, nullable text and the acts' metadata keep theirs."""
    for df in frames:
        for c in df.columns:
            if df[c].dtype == object and c not in ("unit", "question_summary", "articles", "units_not_in_force") and c not in meta_cols:
                df[c] = df[c].astype("str")


def resolve_citations(questions: Sequence[Mapping[str, Any]], *, index: Mapping[str, Any], bounds: Mapping[str, tuple],
                      ids: np.ndarray, table: dict, gold: str = "auto", granularity: str = "dispositivo",
                      coverage: str = "all") -> tuple[list, list, dict, list, list]:
    """Resolve every question's citations onto a chunked corpus (the qrels step of :func:`build_cited_task`).

    Parameters
    ----------
    questions : sequence of dict
        Records of :func:`read_questions`.
    index : mapping doc_id -> ProvisionIndex
        :func:`ragcov_data.loaders.articles.locate` of each act.
    bounds : mapping doc_id -> (chunk start chars, chunk end chars, first corpus row)
    ids : ndarray
        Corpus ``_id`` of every row.
    table : dict
        Alias table (act key -> doc_id) for parsed citations.

    Returns
    -------
    (query rows, citation rows, {(query-id, corpus-id): grade}, unresolved, dispositivo_not_found)
    """
    known = set(bounds)
    q_rows, c_rows = [], []
    qrels: dict[tuple[str, str], int] = {}
    unresolved, coarse = [], []
    for q in questions:
        cov = q.get("coverage") or "full"
        partial = cov == "partial"
        if coverage == "full" and partial:
            continue
        cited = gold_citations(q, gold, table)
        n_res = 0
        for g in cited:
            c = g.citation
            status, chunks, art_chunks, span, art_span = _resolve(c, index, bounds, ids, known)
            if status in ("resolved", "dispositivo_not_found"):
                n_res += 1
                for cid in art_chunks:
                    qrels.setdefault((q["qid"], cid), 1)
                if granularity == "dispositivo":
                    for cid in chunks:
                        qrels[(q["qid"], cid)] = 2
            if status != "resolved":
                entry = {"query-id": q["qid"], "citation": g.label, "status": status, "raw": g.raw}
                (coarse if status == "dispositivo_not_found" else unresolved).append(entry)
            c_rows.append({"query-id": q["qid"], "citation": g.label, "doc_id": g.act,
                           "article": c.article, "paragraph": c.paragraph, "inciso": c.inciso, "alinea": c.alinea,
                           "item": c.item, "caput": bool(c.caput), "raw": g.raw, "status": status,
                           "chunks": list(chunks), "article_chunks": list(art_chunks),
                           "start_char": span[0], "end_char": span[1],
                           "article_start_char": art_span[0], "article_end_char": art_span[1]})
        summary = q.get("question_summary")
        q_rows.append({"_id": q["qid"], "text": q["question"], "coverage": cov, "partial": partial,
                       "question_summary": summary, "topic": q.get("topic") or topic_of(summary) or q["qid"],
                       "n_citations": len(cited), "n_resolved": n_res})
    return q_rows, c_rows, qrels, unresolved, coarse


_NO_SPAN = (None, None)


def _resolve(c: cit.Citation, index: dict, bounds: dict, ids: np.ndarray, known: set
             ) -> tuple[str, list, list, tuple, tuple]:
    """Status, chunks overlapping the cited provision, chunks overlapping its artigo, and the character spans
    ``(start, end)`` of the provision and of its artigo in the act (``(None, None)`` where not located)."""
    if c.reason is not None:  # unparsed, year_mismatch, number_out_of_range, act_unknown ...
        return c.reason, [], [], _NO_SPAN, _NO_SPAN
    if c.doc_id is None or c.doc_id not in known:
        return "act_not_in_corpus", [], [], _NO_SPAN, _NO_SPAN
    if c.annex is not None:  # provisions are located in the body of an act, not in its annexes
        return "not_located", [], [], _NO_SPAN, _NO_SPAN
    if c.article is None:  # an act cited as a whole: nothing to grade, listed as unresolved
        return "act_only", [], [], _NO_SPAN, _NO_SPAN
    idx = index[c.doc_id]
    art = idx.article(c.article)
    if art is None:
        return "article_not_found", [], [], _NO_SPAN, _NO_SPAN
    art_span = (int(art.start), int(art.end))
    art_chunks = _overlap(bounds[c.doc_id], ids, art.start, art.end)
    prov, depth = idx.find(c.article, c.paragraph, c.inciso, c.alinea, c.item, c.caput)
    cited = max([i + 1 for i, v in enumerate((c.paragraph, c.inciso, c.alinea, c.item)) if v is not None],
                default=1 if c.caput else 0)
    if depth < cited:
        return "dispositivo_not_found", [], art_chunks, _NO_SPAN, art_span
    return ("resolved", _overlap(bounds[c.doc_id], ids, prov.start, prov.end), art_chunks,
            (int(prov.start), int(prov.end)), art_span)


def _overlap(b: tuple[np.ndarray, np.ndarray, int], ids: np.ndarray, start: int, end: int) -> list[str]:
    """Chunks of one document whose character span overlaps ``[start, end)`` (in corpus order; chunks may
    overlap each other or come in any order)."""
    cs, ce, first = b
    hit = np.flatnonzero((cs < end) & (ce > start))
    return [str(x) for x in ids[first + hit]]


def _warn(counts: dict, unresolved: list, coarse: list, name: str, no_gold: Sequence[str] = (),
          dataset: str = "cited_questions") -> None:
    """One warning (:class:`UnresolvedCitations`) naming, per status, how many citations could not be used (with
    the first few)."""
    msgs = []
    by_status = {}
    for status in STATUSES[1:]:
        rows = coarse if status == "dispositivo_not_found" else [u for u in unresolved if u["status"] == status]
        if not rows:
            continue
        by_status[status] = len(rows)
        shown = "; ".join(f"{u['query-id']}: {u['citation']}" for u in rows[:5])
        msgs.append(f"{len(rows)} {STATUS_TEXT[status]} ({shown}{' ...' if len(rows) > 5 else ''})")
    if no_gold:
        msgs.append(f"{len(no_gold)} question(s) with no relevant chunk ({', '.join(no_gold[:5])}"
                    f"{' ...' if len(no_gold) > 5 else ''})")
    if msgs:
        warnings.warn(UnresolvedCitations(
            f"cited questions ({name}): " + "; ".join(msgs) + ". Every one is listed in the manifest "
            "(`unresolved`, `dispositivo_not_found`, `queries_without_relevant_chunk`).",
            dataset=dataset, config=name, by_status=by_status, no_gold=len(no_gold)), stacklevel=3)


def _sha(p: Path) -> str:
    return sha256_file(p)


def _articles_rule() -> str:
    return LOCATE_RULE


def _chunking_rule(chunking: str) -> str:
    if chunking == "words":
        return "word windows of chunk_words words; " + WORD_RULE
    if chunking == "article":
        return ARTICLE_RULE
    return SIZE_RULE


def _check(chunking: str, granularity: str, gold: str, coverage: str) -> None:
    for name, value, allowed in (("chunking", chunking, CHUNKINGS), ("granularity", granularity, GRANULARITIES),
                                 ("gold", gold, GOLDS), ("coverage", coverage, COVERAGES)):
        if value not in allowed:
            raise RagcovError(f"`{name}` must be one of {list(allowed)}; got {value!r}.")


def _config_name(chunking: str, chunk_words: int, query_words: int, min_words: int | None, max_words: int | None,
                 granularity: str, coverage: str, chunker: str | None = None) -> str:
    if chunker:
        name = chunker
    elif chunking == "words":
        name = f"words-{chunk_words}"
    else:
        name = chunking + (f"-{max_words}" if max_words else "") + (f"-min{min_words}" if min_words else "")
    if granularity == "article":
        name += "-artqrels"
    if coverage == "full":
        name += "-full"
    return name


# --------------------------------------------------------------------------- datasets builders


@dataclass
class CitedQuestionsConfig(datasets.BuilderConfig):
    """Config of the cited-questions task (see :func:`build_cited_task` for each field).

    Named configs: ``words-50``, ``words-100``, ``words-200``, ``dispositivo``, ``article`` (default); any
    other through ``chunking=``, ``chunk_words=``, ``granularity=``, ``coverage=``, ``gold=``, or any chunker
    through ``chunker=`` (:mod:`ragcov_data.loaders.chunkers`; the config holds its name, ``chunker_name=``
    names a callable or object; the cache is keyed by the spans it returns on the acts, so two callables
    with the same name never share a cache entry).
    """

    chunking: str = "article"
    chunk_words: int = 100
    query_words: int = 20
    min_words: int | None = None
    max_words: int | None = None
    granularity: str = "dispositivo"
    gold: str = "auto"
    coverage: str = "all"
    acts_files: tuple[str, ...] | None = None
    questions_file: str | None = None
    chunker: str | None = None
    chunker_name: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.chunking, self.granularity, self.gold, self.coverage)

    def derived_name(self) -> str:
        return _config_name(self.chunking, self.chunk_words, self.query_words, self.min_words, self.max_words,
                            self.granularity, self.coverage, self.chunker)


def _named_configs() -> list[CitedQuestionsConfig]:
    v = datasets.Version("1.1.0")
    out = [CitedQuestionsConfig(name=f"words-{n}", chunking="words", chunk_words=n, version=v,
                                description=f"{n}-word windows") for n in (50, 100, 200)]
    out.append(CitedQuestionsConfig(name="dispositivo", chunking="dispositivo", version=v,
                                    description="dispositivo units"))
    out.append(CitedQuestionsConfig(name="article", chunking="article", version=v, description="one chunk per artigo"))
    out.append(CitedQuestionsConfig(name="article-full", chunking="article", coverage="full", version=v,
                                    description="one chunk per artigo; questions with full coverage only"))
    return out


def _features(meta_cols: Sequence[str], vig: bool = False) -> dict[str, datasets.Features]:
    V = datasets.Value
    return {
        "corpus": datasets.Features({"_id": V("string"), "doc_id": V("string"), "chunk_index": V("int64"),
                                     "text": V("string"), "unit": V("string"), "continued": V("bool"),
                                     "start_char": V("int64"), "end_char": V("int64"),
                                     "articles": datasets.List(V("string")),
                                     **{c: V("string") for c in meta_cols},
                                     **({"in_force": V("bool"), "units_not_in_force": datasets.List(V("string")),
                                         "share_not_in_force": V("float64")} if vig else {})}),
        "queries": datasets.Features({"_id": V("string"), "text": V("string"), "coverage": V("string"),
                                      "partial": V("bool"), "question_summary": V("string"), "topic": V("string"),
                                      "n_citations": V("int64"), "n_resolved": V("int64")}),
        "qrels": datasets.Features({"query-id": V("string"), "corpus-id": V("string"), "score": V("int64")}),
        "citations": datasets.Features({"query-id": V("string"), "citation": V("string"), "doc_id": V("string"),
                                        "article": V("string"), "paragraph": V("string"), "inciso": V("string"),
                                        "alinea": V("string"), "item": V("string"), "caput": V("bool"),
                                        "raw": V("string"), "status": V("string"),
                                        "chunks": datasets.List(V("string")),
                                        "article_chunks": datasets.List(V("string")),
                                        **{c: V("int64") for c in SPAN_COLUMNS}}),
        "documents": datasets.Features({"doc_id": V("string"), "text": V("string"),
                                        **{c: V("string") for c in meta_cols}}),
    }


@functools.lru_cache(maxsize=8)
def _cached(acts: tuple[str, ...], questions: str, fingerprint: str, cfg: tuple) -> CitedTask:
    chunking, chunk_words, query_words, min_words, max_words, granularity, gold, coverage, dataset, name = cfg[:10]
    chunker = chunkers.by_key(cfg[11], cfg[10]) if cfg[10] else None
    return build_cited_task(list(acts), questions, chunking=chunking, chunk_words=chunk_words,
                            query_words=query_words, min_words=min_words, max_words=max_words,
                            granularity=granularity, gold=gold, coverage=coverage, dataset=dataset,
                            config_name=name, chunker=chunker)


class CitedQuestionsBuilder(TaskBuilder):
    """``cited_questions``: ``data_files={"acts": ..., "questions": ...}``; splits corpus, queries, qrels,
    citations, documents."""

    VERSION = datasets.Version("1.2.0")  # 1.1: citations carry character spans; 1.2: the documents split
    BUILDER_CONFIG_CLASS = CitedQuestionsConfig
    BUILDER_CONFIGS = _named_configs()
    DEFAULT_CONFIG_NAME = "article"
    DATASET = "cited_questions"

    def __init__(self, *args: Any, data_files: Any = None, **kwargs: Any) -> None:
        if data_files is not None:
            kwargs["acts_files"], kwargs["questions_file"] = self._files(data_files)
        if kwargs.get("chunker_name") is not None and kwargs.get("chunker") is None:
            raise RagcovError("`chunker_name` names the chunker given as `chunker=`; give both, or neither.")
        if kwargs.get("chunker") is not None:  # the config carries the chunker's name (hashable, picklable)
            spec = chunkers.resolve(kwargs["chunker"], kwargs.get("chunker_name"))
            if spec.builtin is not None:
                kwargs.update({k: v for k, v in spec.builtin.items() if v is not None}, chunker=None)
            else:  # keyed by its spans on the acts (its behaviour), not by its name
                if kwargs.get("acts_files"):
                    spec = chunkers.with_behaviour(spec, self._acts_documents(kwargs["acts_files"]))
                self._spec = spec
                kwargs["chunker"] = chunkers.register(spec)
            kwargs["chunker_name"] = None  # folded into `chunker`
        kwargs.setdefault("dataset_name", self.DATASET)
        super().__init__(*args, **kwargs)

    @staticmethod
    def _acts_documents(acts_files: Sequence[str]) -> list:
        """The acts' documents, as the task reads them (an external chunker is keyed by its spans on them)."""
        return _read_acts(list(acts_files)).documents

    @staticmethod
    def _files(data_files: Any) -> tuple[tuple[str, ...], str]:
        if not isinstance(data_files, Mapping) or "acts" not in data_files or "questions" not in data_files:
            raise InputFileError("`data_files` must be a dict with 'acts' (the acts: JSONL/CSV/parquet or a folder) "
                                 "and 'questions' (a JSONL of questions); got "
                                 f"{data_files if not isinstance(data_files, Mapping) else sorted(data_files)!r}.")
        acts = data_files["acts"]
        acts = [acts] if isinstance(acts, (str, os.PathLike)) else list(acts)
        q = data_files["questions"]
        if not isinstance(q, (str, os.PathLike)):
            q = list(q)
            if len(q) != 1:
                raise InputFileError(f"`data_files['questions']` must be one file; got {len(q)}.")
            q = q[0]
        return tuple(str(Path(a).expanduser().resolve()) for a in acts), str(Path(q).expanduser().resolve())

    def _create_builder_config(self, config_name=None, custom_features=None, config_id=None, **config_kwargs):
        config, cid = super()._create_builder_config(config_name=config_name, custom_features=custom_features,
                                                     config_id=config_id, **config_kwargs)
        config.name = config.derived_name()
        if config_id is None:
            from datasets.fingerprint import Hasher

            acts, q = self._sources(config)
            key = {"cfg": self._cfg(config), "sources": self._fingerprint(acts, q)}
            cid = f"{config.name}-{Hasher.hash(key)}"
        return config, cid

    def _sources(self, config: CitedQuestionsConfig) -> tuple[tuple[str, ...], str]:
        if not config.acts_files or not config.questions_file:
            raise InputFileError("cited_questions needs `data_files={'acts': ..., 'questions': ...}`.")
        return tuple(config.acts_files), config.questions_file

    @staticmethod
    def _fingerprint(acts: Sequence[str], questions: str) -> str:
        for p in [*acts, questions]:
            if not Path(p).exists():
                raise InputFileError(f"source {p!r} does not exist; check `data_files` / `data_dir`.")
        return _content_hash([*acts, questions])

    def _cfg(self, c: CitedQuestionsConfig) -> tuple:
        spec = getattr(self, "_spec", None)
        if c.chunker and (spec is None or spec.name != c.chunker):
            spec = chunkers.registered(c.chunker)
        return (c.chunking, c.chunk_words, c.query_words, c.min_words, c.max_words, c.granularity, c.gold,
                c.coverage, self.DATASET, c.name, c.chunker,
                spec.key if c.chunker else None)  # rule, library version and behaviour (spans on the acts)

    def source_files(self) -> list[str]:
        acts, q = self._sources(self.config)
        return [*acts, q]

    def task(self) -> CitedTask:
        """The :class:`CitedTask` this builder serves (built once per process and source content)."""
        acts, q = self._sources(self.config)
        return _cached(acts, q, self._fingerprint(acts, q), self._cfg(self.config))

    def _split_features(self) -> dict[str, datasets.Features]:
        return _features(self.task().manifest["metadata_columns"], "in_force" in self.task().corpus.columns)

    def _info(self) -> datasets.DatasetInfo:
        task = self.task()
        return datasets.DatasetInfo(description=manifest_description(task.manifest),
                                    features=self._split_features()["corpus"],
                                    license="Official acts: not protected by copyright (Lei 9.610/98, art. 8, IV).")

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        task = self.task()
        if not len(task.qrels):  # else `datasets` ends in "Instruction 'qrels' corresponds to no data!"
            raise no_qrels_error(self.DATASET, task.manifest, list(dict.fromkeys(task.corpus["doc_id"])))
        return [datasets.SplitGenerator(name=s, gen_kwargs={"split": s})
                for s in ("corpus", "queries", "qrels", "citations", "documents")]

    def _split_frame(self, split: str) -> pd.DataFrame:
        return self.task()[split]


class IRPFBuilder(CitedQuestionsBuilder):
    """``irpf``: the shared IRPF questions and acts (``data_dir=`` a folder with ``irpf/`` or the ``irpf``
    folder itself; default ``$RAGCOV_DATA_DIR``)."""

    DATASET = "irpf"

    def __init__(self, *args: Any, data_dir: Any = None, **kwargs: Any) -> None:
        folder = irpf_dir(data_dir)
        kwargs["acts_files"] = (str(folder / IRPF_FILES["acts"]),)
        kwargs["questions_file"] = str(folder / IRPF_FILES["questions"])
        super().__init__(*args, **kwargs)


def irpf_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder with ``laws.jsonl`` and ``questions.jsonl``: ``data_dir`` itself or its ``irpf/``."""
    if data_dir is None:
        base = Path(default_dir(None))
    else:
        base = Path(data_dir).expanduser()
    for folder in (base, base / "irpf"):
        if all((folder / f).is_file() for f in IRPF_FILES.values()):
            return folder.resolve()
    raise InputFileError(f"{str(base)!r} has neither {list(IRPF_FILES.values())} nor an irpf/ folder with them; pass "
                         "`data_dir=` the shared data folder (or its irpf/ folder).")
