"""Passage runs in the outcome stage: a pipeline's returned text, located in the task's documents and scored.

A passage run (:mod:`ragcov_data.runs.passages`) names no chunk of ragcov's. Each passage is located in the task's
documents (:func:`ragcov_data.tasks.documents.task_documents`, :mod:`ragcov_data.runs.locate`), then read by the task's
measures (:data:`MEASURE_RULES`):

- **cited questions** (``irpf``): by character spans, as ragcov's own chunks are. ``recall@k`` / ``hit@k``: the
  cited provisions a located passage among the first ``k`` overlaps; ``recall@Bw``, ``span_recall@Bw``,
  ``precision@Bw``, ``iou@Bw``, ``hit@Bw``: the passages in rank order cut after exactly B words
  (:mod:`ragcov_data.eval.outcomes.context`). ``ndcg@k`` grades chunks, which a passage run has none of.
- **JurisTCU** and other tasks whose corpus rows are documents: by document. The run's *document list* is each
  document at the rank of its first located passage (an unlocated passage names none, a later passage of the
  same document adds nothing); ``hit@k``, ``r@k``, ``ndcg@k``, ``p@k``, ``mrr@k`` read the first ``k``
  documents of that list against the task's qrels, as trec_eval would read it as a run.
- **self-retrieval**: the same, with the query's document as its one relevant document, after dropping every
  passage that overlaps the query's own chunk (as ``exclude_self`` drops the own chunk's row).

A passage's words count in a budget whether located or not; an unlocated passage holds no document's characters.
A run whose unlocated share exceeds :data:`MAX_UNLOCATED` is refused: it was probably made on other text.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.tasks.documents import chunk_spans_in_documents, task_documents, task_kind
from ragcov_data.errors import QrelsRunMismatchError, RagcovError
from ragcov_data.runs.line import CharacterLine, character_line, flat_text
from ragcov_data.runs.locate import FUZZY_THRESHOLD, HOW, LOCATE_RULE, locate_passages
from ragcov_data.eval.outcomes.budget import (_COLUMN, CitedMetric, budget_table, cited_provisions,
                                              parse_cited_metric, provision_spans)
from ragcov_data.eval.outcomes.context import Items
from ragcov_data.eval.outcomes.metrics import _lists, per_query
from ragcov_data.eval.outcomes.placements import placement_notice, placement_range
from ragcov_data.eval.outcomes.table import _split_frame, zeroed_notice

__all__ = ["MAX_UNLOCATED", "MEASURE_RULES", "LocatedRun", "locate_run", "passage_scores", "is_located",
           "document_run", "ranked_documents", "missing_answers_error", "run_label", "passage_notices",
           "ambiguity_notice", "cited_placement", "cited_placements", "placement_notices", "chunk_run",
           "CHUNK_RULE", "location_notice", "cited_passage_values"]

#: Share of a run's passages found in no document above which the run is refused.
MAX_UNLOCATED = 0.20
#: How each kind of task's measures read a passage run (recorded with the numbers).
MEASURE_RULES = {
    "cited": "passages are read by their character spans: recall@k/hit@k count the cited provisions a located passage "
             "among the first k overlaps; name@Bw read the passages in rank order cut after exactly B words",
    "documents": "each document counts at the rank of its first located passage (unlocated passages and repeats "
                 "name no new document); @k reads the first k documents of that list against the qrels",
    "self_retrieval": "passages overlapping the query's own chunk are dropped; each document then counts at the "
                      "rank of its first located passage; the query's document is its one relevant document",
}
_KIND = "located_passages"


@dataclass
class LocatedRun:
    """A passage run located in a task's documents: ``frame`` (one row a passage: ``query-id``, ``rank``, ``text``,
    ``words``, ``doc_id``, ``start``/``end`` on the line, ``how``, ``places``), the ``line``, the task ``kind``
    and the location ``report`` (shares, counts, rule)."""

    frame: pd.DataFrame
    line: CharacterLine
    kind: str
    report: dict[str, Any]
    alternatives: dict[int, np.ndarray | None] = field(default_factory=dict)  # rows placed at the first of places


def is_located(run: Any) -> bool:
    """Whether ``run`` is a located passage run (what :func:`locate_run` returns in a scored run)."""
    return isinstance(run, pd.DataFrame) and run.attrs.get("kind") == _KIND


def _by_question_text(run: pd.DataFrame, task: Any) -> pd.DataFrame:
    """A ragas-style run names questions by their text: map each to the task query of the same text (NFC,
    whitespace aside); a question the task does not hold is an error naming it."""
    queries = _split_frame(task, "queries", ["_id", "text"])
    key = {flat_text(t): str(q) for q, t in zip(queries["_id"], queries["text"])}
    mapped = run["query-id"].map(lambda t: key.get(flat_text(str(t))))
    if mapped.isna().any():
        bad = run.loc[mapped.isna(), "query-id"].iloc[0]
        raise QrelsRunMismatchError(f"{run.attrs.get('source', 'passage run')}: the question {str(bad)[:80]!r} is not "
                                    "a question of the task (a ragas-style table is matched to the task by question "
                                    "text); add a query id column, or score it on the task it was made on.")
    out = run.assign(**{"query-id": mapped.to_numpy(dtype=object)})
    out.attrs = dict(run.attrs)
    return out


def locate_run(run: pd.DataFrame, task: Any, name: str = "run") -> LocatedRun:
    """Locate every passage of ``run`` (normal form of :func:`ragcov_data.runs.passages.load_passage_run`) in
    ``task``'s documents.

    Raises
    ------
    RagcovError
        More than :data:`MAX_UNLOCATED` of the passages found in no document (the run was probably made on other
        text), or a ragas-style question the task lacks.
    """
    if run.attrs.get("by_question_text"):
        run = _by_question_text(run, task)
    docs = task_documents(task)
    line = character_line(docs["doc_id"].tolist(), docs["text"].tolist())
    loc = locate_passages(run["text"].tolist(), line, doc_hints=run["doc_id"].tolist(),
                          start_hints=run["start_char"].tolist(), end_hints=run["end_char"].tolist())
    shares = loc.shares()
    n = len(run)
    report = {"n_passages": int(n), "shares": shares,
              "counts": {h: int((loc.how == h).sum()) for h in HOW} | {"ambiguous": int((loc.places >= 2).sum())},
              "rule": LOCATE_RULE, "fuzzy_threshold": FUZZY_THRESHOLD, "documents": docs.attrs.get("rule"),
              "failures": dict(run.attrs.get("failures") or {}), "empty": list(run.attrs.get("empty") or [])}
    if n and shares["unlocated"] > MAX_UNLOCATED:
        first = run["text"].iat[int(np.flatnonzero(loc.how == "unlocated")[0])]
        raise QrelsRunMismatchError(
            f"passage run {name!r}: {shares['unlocated']:.0%} of its {n:,} passages are found in none of the task's "
            f"{len(docs):,} documents (more than {MAX_UNLOCATED:.0%}; first: {' '.join(str(first).split())[:80]!r}): it "
            "was probably made on other text (another corpus, another version of the acts, or rewritten passages). "
            "Score it on the task its pipeline indexed (ragcov_data.task_documents(task) gives the documents to ingest).")
    frame = pd.DataFrame({
        "query-id": run["query-id"].astype(str).to_numpy(dtype=object), "rank": run["rank"].to_numpy(dtype=np.int64),
        "corpus-id": [f"passage:{r}" for r in run["rank"]], "score": -run["rank"].to_numpy(dtype=float),
        "text": run["text"].to_numpy(dtype=object),
        "words": _word_counts(run["text"]),
        "doc_id": [line.doc_ids[d] if d >= 0 else None for d in loc.doc], "start": loc.start, "end": loc.end,
        "how": loc.how, "places": loc.places})
    frame.attrs = {**{k: v for k, v in run.attrs.items() if k != "kind"}, "kind": _KIND, "score_from": "rank"}
    report["counts"]["unplaced"] = len(loc.alternatives)  # ambiguous and no hint decided: at the first place
    return LocatedRun(frame, line, task_kind(task), report, dict(loc.alternatives))


def _word_counts(texts: pd.Series) -> np.ndarray:
    """Words of each passage (``len(text.split())``), each distinct text counted once: a pipeline may return the
    same long passage for many questions (whole acts, one passage at every rank)."""
    seen: dict[str, int] = {}
    out = np.empty(len(texts), dtype=np.int64)
    for i, t in enumerate(texts):
        t = str(t)
        n = seen.get(t)
        if n is None:
            n = seen[t] = len(t.split())
        out[i] = n
    return out


# --------------------------------------------------------------------------- scoring


def passage_scores(prepared: Any, located: LocatedRun, query_ids: Sequence[str]) -> pd.Series:
    """Per-query values of a located passage run on a prepared task (see the module docstring)."""
    qids = [str(q) for q in query_ids]
    out = (_cited_scores if located.kind == "cited" else _document_scores)(prepared, located, qids)
    if located.alternatives:  # passages placed at the first of several places: how far the score may move
        out.attrs["placement"] = _placement(prepared, located, qids, out.to_numpy(dtype=float))
    return out


def _placement(prepared: Any, located: LocatedRun, qids: list[str], values: np.ndarray) -> dict[str, Any] | None:
    """:func:`ragcov_data.eval.outcomes.placements.placement_range` of the prepared metric."""
    if located.kind == "cited":
        return cited_placement(located, prepared.cited.citations, prepared.cited.granularity, prepared.spec, qids,
                               values)
    spec, line = prepared.spec, located.line
    own, qrels = (_self_retrieval(prepared.task, line, prepared_qrels=False) if located.kind == "self_retrieval"
                  else (None, prepared.qrels))

    def score(frame: pd.DataFrame, ids: list[str], origin: dict[str, str]) -> np.ndarray:
        mine = None if own is None else pd.DataFrame(own.reindex([origin[i] for i in ids]).to_numpy(),
                                                     index=pd.Index(ids, name="query-id"), columns=own.columns)
        run = _document_list(_with_documents(frame, line), mine)
        return per_query(run, _copies(qrels, origin), spec, relevance_threshold=prepared.relevance_threshold,
                         tie_policy=prepared.tie_policy, query_ids=ids).to_numpy(dtype=float)

    start = located.frame["start"].to_numpy()
    certain = np.where(start >= 0, line.docs_at(start), -1)  # the document a passage names for sure, else -1
    certain[list(located.alternatives)] = -1
    if own is not None:  # a passage in the query's own document may be dropped: it names no document for sure
        certain[certain == np.nan_to_num(located.frame["query-id"].map(own["doc"]).to_numpy(dtype=float),
                                         nan=-2)] = -1
    reach = {"documents": getattr(spec, "k", None), "certain_doc": certain,
             "by_document": located.kind != "self_retrieval"}
    return placement_range(located, qids, values, reach=reach, score=score)


def cited_placement(located: LocatedRun, citations: pd.DataFrame, granularity: str, metric: Any,
                    query_ids: Sequence[str], values: np.ndarray) -> dict[str, Any] | None:
    """How far a cited-questions measure of a passage run may move with the places of its unplaced ambiguous
    passages (:func:`ragcov_data.eval.outcomes.placements.placement_range`; ``values``: as placed)."""
    spec, line = parse_cited_metric(metric), located.line

    def score(frame: pd.DataFrame, ids: list[str], origin: dict[str, str]) -> np.ndarray:
        v = cited_passage_values(LocatedRun(_with_documents(frame, line), line, located.kind, {}),
                                 _copies(citations, origin), granularity, [spec], ids)
        return v[str(spec)].to_numpy(dtype=float)

    reach = {"words": spec.k} if spec.budget else {"ranks": spec.k}
    return placement_range(located, [str(q) for q in query_ids], values, reach=reach, score=score)


def cited_placements(located: LocatedRun, citations: pd.DataFrame, granularity: str,
                     values: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """:func:`cited_placement` of every column of ``values`` (a metric, as :func:`cited_passage_values` gives it)
    that the run's unplaced ambiguous passages can move."""
    if not located.alternatives:
        return {}
    out = {}
    for m in values.columns:
        got = cited_placement(located, citations, granularity, m, list(values.index), values[m].to_numpy(float))
        if got is not None:
            out[str(m)] = got
    return out


def _with_documents(frame: pd.DataFrame, line: CharacterLine) -> pd.DataFrame:
    """A frame of placed passages (:mod:`~ragcov_data.eval.outcomes.placements`) with each one's document."""
    frame["doc_id"] = [line.doc_ids[d] if s >= 0 else None
                       for s, d in zip(frame["start"], line.docs_at(frame["start"].to_numpy()))]
    frame.attrs = {"kind": _KIND}
    return frame


def _copies(table: pd.DataFrame, origin: dict[str, str]) -> pd.DataFrame:
    """``table``'s rows of each question again under each of its combinations' ids (``origin``: id -> question)."""
    qcol = table["query-id"].astype(str).to_numpy(dtype=object)
    rows_of = pd.Series(np.arange(len(table))).groupby(qcol).apply(np.asarray).to_dict()
    pids = list(origin)
    take = [rows_of.get(origin[p], np.empty(0, dtype=np.int64)) for p in pids]
    out = table.iloc[np.concatenate(take) if take else np.empty(0, dtype=np.int64)].reset_index(drop=True)
    out["query-id"] = np.repeat(np.asarray(pids, dtype=object), [len(t) for t in take])
    return out


def _cited_scores(prepared: Any, located: LocatedRun, qids: list[str]) -> pd.Series:
    spec = prepared.spec
    if not isinstance(spec, CitedMetric):
        raise RagcovError(f"{spec} grades ragcov's chunks, which a passage run has none of; score a passage run on a "
                          "cited-questions task with recall@k, hit@k or a budget (recall@1000w, span_recall@1000w, "
                          "precision@1000w, iou@1000w, hit@1000w)"
                          + ("; nDCG@10 is ragcov leaderboard's default on graded qrels: pass --metric recall@10 "
                             "(metric='recall@10') or recall@1000w." if getattr(spec, "name", "") == "ndcg" else "."))
    values = cited_passage_values(located, prepared.cited.citations, prepared.cited.granularity, [spec], qids)
    # a new Series: a column taken from ``values`` would carry its per-budget attrs (dicts) as its own
    out = pd.Series(values[str(spec)].to_numpy(dtype=float), index=pd.Index(qids, dtype=object, name="query-id"),
                    name=str(spec))
    out.attrs.update(metric=str(spec), description=_passage_words(spec.describe()), n_no_relevant=0,
                     n_run_only=_run_only(located, qids),
                     n_short_context=values.attrs["n_short_context"].get(spec.k, 0) if spec.budget else 0)
    if spec.budget:
        out.attrs["context_words"] = values.attrs["context_words"].get(spec.k)
    return out


def _passage_words(description: str) -> str:
    """A cited measure's description said of passages (``a chunk in the top 10 chunks`` -> ``a passage in the top
    10 passages``)."""
    return description.replace("a chunk", "a passage").replace(" chunks", " passages")


def cited_passage_values(located: LocatedRun, citations: pd.DataFrame, granularity: str, metrics: Sequence[Any],
                         query_ids: Sequence[str]) -> pd.DataFrame:
    """Per-question values of a located passage run on a cited-questions task (``recall@k``, ``hit@k`` and the
    budgeted measures; see the module docstring), one column per metric; ``attrs`` as
    :func:`ragcov_data.eval.outcomes.budget.cited_values`'s."""
    specs = [parse_cited_metric(m) for m in metrics]
    if any(s.name == "ndcg" for s in specs):
        raise RagcovError("ndcg@k grades ragcov's chunks, which a passage run has none of; score it with recall@k, "
                          "hit@k or a budget (recall@1000w, ...).")
    qids = [str(q) for q in query_ids]
    prov = cited_provisions(citations, granularity)
    items = _items(located, qids)
    out = pd.DataFrame(index=pd.Index(qids, name="query-id"))
    for spec in (s for s in specs if not s.budget):
        vals = np.empty(len(qids))
        for i, (q, it) in enumerate(zip(qids, items)):
            ps, pe = provision_spans(prov[q], located.line.offsets, q)
            s, e = it.start[:spec.k], it.end[:spec.k]
            s, e = s[s >= 0], e[s >= 0]
            found = ((s[:, None] < pe[None, :]) & (e[:, None] > ps[None, :])).any(axis=0)
            vals[i] = float(found.mean()) if spec.name == "recall" else float(found.any())
        out[str(spec)] = vals
    budgets = sorted({s.k for s in specs if s.budget})
    attrs: dict[str, Any] = {"n_short_context": {}, "context_words": {}}
    if budgets:
        table = budget_table(items, prov, qids, budgets, located.line)
        for spec in (s for s in specs if s.budget):
            out[str(spec)] = table[spec.k][:, _COLUMN[spec.name]]
        attrs = dict(table.attrs)
    out = out[[str(s) for s in dict.fromkeys(specs)]]
    out.attrs = attrs
    return out


def _items(located: LocatedRun, qids: list[str]) -> list[Items]:
    """Each question's passages in rank order as context items."""
    f = located.frame
    groups = f.groupby("query-id", sort=False).indices  # each question's rows, in the frame's (rank) order
    words, start, end = (f[c].to_numpy(dtype=np.int64) for c in ("words", "start", "end"))
    text, fuzzy = f["text"].to_numpy(dtype=object), (f["how"] == "fuzzy").to_numpy(dtype=bool)
    out = []
    empty = np.empty(0, dtype=np.int64)
    for q in qids:
        g = groups.get(q)
        if g is None:
            out.append(Items(empty, empty, empty, [], np.empty(0, dtype=bool)))
            continue
        out.append(Items(words[g], start[g], end[g], text[g].tolist(), fuzzy[g]))
    return out


def _run_only(located: LocatedRun, qids: list[str]) -> int:
    return int(len(set(located.frame["query-id"]) - set(qids)))


def document_run(located: LocatedRun, own: pd.DataFrame | None = None) -> pd.DataFrame:
    """The run's document list (see the module docstring) as an id run: ``query-id, corpus-id, rank, score``
    (``score = -rank``). ``own``: per query its own chunk's span on the line (self-retrieval), whose overlapping
    passages are dropped."""
    return _document_list(located.frame, own)


def ranked_documents(run: pd.DataFrame) -> pd.DataFrame:
    """What a reading of a run's ranked documents (judged@k, a condensed list, unjudged documents read as
    relevant) reads: a located passage run's document list (:func:`document_run`), any other run as it is."""
    return _document_list(run) if is_located(run) else run


def _document_list_rows(frame: pd.DataFrame, own: pd.DataFrame | None = None) -> pd.DataFrame:
    """The located passages a document list reads: those found somewhere, less those overlapping the query's own
    chunk (``own``: its span per query, self-retrieval)."""
    f = frame[frame["start"] >= 0]
    if own is not None and len(f):
        o = own.reindex(f["query-id"])
        overlap = (f["start"].to_numpy() < o["end"].to_numpy()) & (f["end"].to_numpy() > o["start"].to_numpy())
        f = f[~np.nan_to_num(overlap, nan=False).astype(bool)]
    return f


def _document_list(frame: pd.DataFrame, own: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`document_run` of a located passage run's table."""
    f = _document_list_rows(frame, own).drop_duplicates(["query-id", "doc_id"], keep="first")
    out = pd.DataFrame({"query-id": f["query-id"].to_numpy(dtype=object), "corpus-id": f["doc_id"].to_numpy(dtype=object)})
    out["rank"] = out.groupby("query-id", sort=False).cumcount().to_numpy(dtype=np.int64) + 1
    out["score"] = -out["rank"].to_numpy(dtype=float)
    out.attrs = {"score_from": "rank", "kind": "document_list", "source": frame.attrs.get("source")}
    return out


def _document_scores(prepared: Any, located: LocatedRun, qids: list[str]) -> pd.Series:
    if isinstance(prepared.spec, CitedMetric) or getattr(prepared.spec, "name", None) is None:
        raise RagcovError(f"{prepared.spec} is not a measure of this task; on it a passage run is scored by document "
                          "(hit@k, r@k, ndcg@k, p@k, mrr@k).")
    if located.kind == "self_retrieval":
        own, qrels = _self_retrieval(prepared.task, located.line)
        run = document_run(located, own)
    else:
        run, qrels = document_run(located), prepared.prepared_qrels
    out = per_query(run, qrels, prepared.spec, relevance_threshold=prepared.relevance_threshold,
                    tie_policy=prepared.tie_policy, query_ids=qids)
    out.attrs["document_list"] = True
    return out


def _self_retrieval(task: Any, line: CharacterLine, prepared_qrels: bool = True) -> tuple[pd.DataFrame, Any]:
    """Per query its own chunk's span on the line (and its document's index, ``doc``), and qrels naming its
    document (grade 1; prepared for scoring unless ``prepared_qrels`` is False)."""
    corpus = _split_frame(task, "corpus", ["_id", "doc_id", "chunk_index", "text"])
    spans = chunk_spans_in_documents(corpus)
    q = _split_frame(task, "queries", ["_id", "doc_id", "chunk_id"])
    own_span = spans.reindex(q["chunk_id"].astype(str))
    off = own_span["doc_id"].map(line.offsets).to_numpy(dtype=float)
    own = pd.DataFrame({"start": own_span["start_char"].to_numpy(dtype=float) + off,
                        "end": own_span["end_char"].to_numpy(dtype=float) + off,
                        "doc": own_span["doc_id"].map(line.index).to_numpy(dtype=float)},
                       index=pd.Index(q["_id"].astype(str), name="query-id"))
    qrels = pd.DataFrame({"query-id": q["_id"].astype(str), "corpus-id": q["doc_id"].astype(str), "score": 1})
    return own, (_lists.prepare_qrels(qrels) if prepared_qrels else qrels)


#: How a self-retrieval passage run is read as a run of the task's chunks (:func:`chunk_run`).
CHUNK_RULE = ("each passage stands for the task chunk it overlaps most (the first of equals), after dropping the "
              "passages that overlap the query's own chunk and those found nowhere, as hit@1 reads the run by "
              "document; a chunk a later passage names again adds nothing")


def chunk_run(located: LocatedRun, task: Any) -> pd.DataFrame:
    """A located self-retrieval passage run as a run of the task's chunk ids (:data:`CHUNK_RULE`): ``query-id,
    corpus-id, rank`` (1, 2, ... a query). Its top row is the chunk the first passage hit@1 reads lies in, so the
    chunk-level analyses (the miss analysis) read what the passage run's scores read."""
    own, _ = _self_retrieval(task, located.line, prepared_qrels=False)
    f = _document_list_rows(located.frame, own)
    corpus = _split_frame(task, "corpus", ["_id", "doc_id", "chunk_index", "text"])
    spans = chunk_spans_in_documents(corpus)
    gs = spans["doc_id"].map(located.line.offsets).to_numpy(dtype=np.int64) + spans["start_char"].to_numpy(np.int64)
    order = np.argsort(gs, kind="stable")
    gs, ids = gs[order], spans.index.to_numpy(dtype=object)[order]
    ge = gs + (spans["end_char"].to_numpy(np.int64) - spans["start_char"].to_numpy(np.int64))[order]
    chunk = []
    for s, e in zip(f["start"].to_numpy(), f["end"].to_numpy()):
        lo, hi = int(np.searchsorted(ge, s, side="right")), int(np.searchsorted(gs, e, side="left"))
        overlap = np.minimum(e, ge[lo:hi]) - np.maximum(s, gs[lo:hi])
        chunk.append(ids[lo + int(np.argmax(overlap))] if hi > lo else None)
    out = pd.DataFrame({"query-id": f["query-id"].to_numpy(dtype=object), "corpus-id": np.asarray(chunk, dtype=object)})
    out = out[out["corpus-id"].notna()].drop_duplicates(["query-id", "corpus-id"], keep="first")
    out["rank"] = out.groupby("query-id", sort=False).cumcount().to_numpy(dtype=np.int64) + 1
    return out.reset_index(drop=True)


def location_notice(name: str, report: dict[str, Any]) -> str:
    """One line saying how the run's passages were located (the shares the output states)."""
    s, n = report["shares"], report["n_passages"]
    line = (f"{name}: {n:,} passages located in the task's documents: exact {s['exact']:.1%}, tolerant "
            f"{s['tolerant']:.1%}, fuzzy {s['fuzzy']:.1%}, not found {s['unlocated']:.1%}; ambiguous (found in 2+ "
            f"places) {s['ambiguous']:.1%}, placed by the hint where given, else at the first place")
    if report.get("failures"):
        first = next(iter(report["failures"].items()))
        line += (f"; {len(report['failures'])} question(s) failed in the pipeline and are scored with no context "
                 f"(first: {first[0]!r}: {first[1][:80]})")
    if report.get("empty"):
        line += f"; {len(report['empty'])} question(s) answered with no passage are scored with no context"
    return line + "."


def run_label(name: str, attrs: Mapping[str, Any]) -> str:
    """How messages name a passage run: its file's name where it was read from a file, else ``name``."""
    from pathlib import Path

    src = attrs.get("source")
    return Path(src).name if isinstance(src, str) and src not in ("DataFrame", "passage run") else name


def missing_answers_error(name: str, attrs: Mapping[str, Any], lacking: Sequence[str],
                          n_questions: int) -> QrelsRunMismatchError:
    """A passage run without an answer (passages, a failure or an empty answer) for some of the task's questions,
    under ``on_missing="error"``: the same words in every verb and API call."""
    meta = attrs.get("meta") or {}
    label = run_label(name, attrs)
    how = (f"ragcov run --pipeline {meta['pipeline']} ... --out {label}" if meta.get("pipeline")
           else "ragcov run --pipeline MODULE:ATTR ... --out FILE")
    return QrelsRunMismatchError(
        f"passage run {label!r} has no answer for {len(lacking)} of the task's {n_questions} questions (first 3: "
        f"{list(lacking[:3])}): its pipeline was not asked them (a run cut short, or made on fewer questions). "
        f"Re-running the pipeline with the same --out resumes and asks only these ({how}; run_pipeline(..., "
        "out=FILE)); to score them 0, as questions answered with no context, pass --on-missing zero "
        "(on_missing='zero'; the output then says how many).")


def passage_notices(label: str, attrs: Mapping[str, Any], n_questions: int) -> list[str]:
    """What a passage run's per-question values (:func:`ragcov_data.eval.comparisons.cited.per_query_values`'s
    ``attrs``) have to say beside a family: where its passages were found and the questions it lacked (scored 0)."""
    out = [location_notice(label, attrs["passages"])] if attrs.get("passages") else []
    missing = attrs.get("missing_queries") or []
    if missing:
        out.append(zeroed_notice(label, len(missing), n_questions))
    return out


def ambiguity_notice(label: str, metric: str, report: Mapping[str, Any], placement: Mapping[str, Any] | None
                     ) -> str | None:
    """The notice of a run whose ambiguous passages no hint placed (:mod:`ragcov_data.eval.outcomes.placements`)."""
    if not placement:
        return None
    return placement_notice(label, metric, placement, placement["n_passages"] / max(report["n_passages"], 1))


def placement_notices(label: str, attrs: Mapping[str, Any]) -> dict[str, str]:
    """Per metric, the notice of a passage run's per-question values (``attrs`` of
    :func:`ragcov_data.eval.comparisons.cited.per_query_values`) whose ambiguous passages may move it."""
    report = attrs.get("passages") or {}
    return {m: note for m, p in (attrs.get("placements") or {}).items()
            if (note := ambiguity_notice(label, m, report, p)) is not None}
