"""Per-question measures of a run on a cited-questions task: provision-level recall and hit at ``k`` chunks,
and span-level measures within a budget of words.

A RAG pipeline hands the model a context of fixed size, not ``k`` chunks of whatever size the chunking
made. So besides ``recall@k`` (ten chunks: 500 words of 50-word windows, several thousand of whole
artigos) the same questions are scored *at equal context*:

- The **context** of a question within a budget of ``B`` words: its ranked chunks in trec_eval order
  (score descending, then document id descending) read in order and cut after exactly ``B`` words, the chunk
  that crosses the budget truncated at the ``B``-th word (:mod:`ragcov_data.eval.outcomes.context`). Words are
  the whitespace tokens of the chunk text (``len(text.split())``), as the construction rules count them.
- ``span_recall@Bw``, **the headline**: the share of the cited provisions' text inside the context, counted in
  non-space characters (Unicode NFC), so whitespace never decides.
- ``recall@Bw``, the **touch** reading: the share of the question's cited provisions that a context chunk
  overlaps (a chunk overlaps a provision when their character spans in the act share a character: some character
  of the provision is in the context) — the same provision-level recall as ``recall@k``. More, shorter chunks
  touch more provisions in the same words while holding less of each, so this reading favours small windows.
- ``hit@Bw``: 1 if a context chunk overlaps any cited provision.
- ``precision@Bw``: the share of the context's text that lies inside a cited provision.
- ``iou@Bw``: text in both over text in either.
- ``covered_any@Bw``, ``covered_50@Bw``, ``covered_90@Bw``, ``covered_whole@Bw``: the coverage curve, the share of
  the question's cited provisions with any, at least half, at least 90% and all of their text inside the context.

Characters are counted on the acts' character line (the task's ``documents`` split laid end to end:
:mod:`ragcov_data.runs.line`): chunk spans (``start_char``, ``end_char`` of the corpus) and provision spans
(``start_char``, ``end_char`` of the ``citations`` split; the artigo's at ``granularity="article"``) are half-open
intervals, and overlapping chunks (or provisions) count their shared characters once (the intervals are merged);
text is the non-space characters inside them (:mod:`ragcov_data.eval.outcomes.context`).
Any chunking whose corpus records ``doc_id, start_char, end_char, text`` is scored alike, and so is a pipeline's
passage run once its passages are located (:mod:`ragcov_data.eval.outcomes.passages`).

The cited provisions of a question at ``granularity="dispositivo"`` are its resolved cited dispositivos
(an artigo cited alone is the whole artigo); at ``"article"`` the artigos of its resolved citations and
of those whose dispositivo was not found. A provision is one span: two citations of the same span count
once, two different spans count twice whatever the chunking (a provision split over five windows is
found when any of them is retrieved). Provisions overlapping no chunk of the corpus are left out.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.outcomes.metrics import CITED_ALIASES, CITED_BUDGET_NAMES, parse_metric
from ragcov_data.runs import load_run
from ragcov_data.runs.line import CharacterLine, character_line
from ragcov_data.ties import DEFAULT_TIE_POLICY
from ragcov_data.eval.outcomes.context import (CONTEXT_NOTE, MEASURES, Items, budget_values, context_cut,
                                               context_words)

__all__ = ["CitedMetric", "parse_cited_metric", "cited_provisions", "ranked_ids", "ChunkSpans", "chunk_spans",
           "cited_values", "context_size", "cited_metric_of", "cited_series", "cited_scoring", "CitedScoring",
           "GRANULARITIES", "RANK_NAMES", "BUDGET_NAMES", "CONTEXT_NOTE", "document_line", "provision_spans"]

GRANULARITIES = ("dispositivo", "article")
#: Metrics at ``k`` chunks (``name@k``) and within a budget of words (``name@Bw``).
RANK_NAMES = ("recall", "hit", "ndcg")
BUDGET_NAMES = CITED_BUDGET_NAMES  # one definition, where metric names are parsed
_ALIASES = CITED_ALIASES
_PATTERN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*?)\s*@\s*([+-]?\d+)\s*([wW]?)\s*$")
#: The valid forms, as every message about a metric of cited questions lists them.
_VALID = ("'recall@k', 'hit@k', 'ndcg@k' (k chunks) or 'span_recall@Bw', 'recall@Bw', 'precision@Bw', 'iou@Bw', "
          "'hit@Bw', 'covered_any@Bw', 'covered_50@Bw', 'covered_90@Bw', 'covered_whole@Bw' (B words of context)")
#: The chunk-level metrics a cited-questions task also scores on its qrels (eval, compare, leaderboard).
_CHUNK_LEVEL = ("chunk_recall", "chunk_hit", "ndcg_exp", "p", "mrr")
_SPAN_COLS = {"dispositivo": ("start_char", "end_char"), "article": ("article_start_char", "article_end_char")}


@dataclass(frozen=True)
class CitedMetric:
    """A metric of cited questions: ``name@k`` (k chunks) or ``name@Bw`` (``budget=True``: B words)."""

    name: str
    k: int
    budget: bool = False

    def __str__(self) -> str:
        return f"{self.name}@{self.k}{'w' if self.budget else ''}"

    def describe(self) -> str:
        """What the number is, in words (for printed output)."""
        where = f"within {self.k:,} words of context" if self.budget else f"in the top {self.k} chunks"
        if self.budget and self.name == "recall":
            return (f"share of the question's cited provisions touched (touched: some character of the provision is "
                    f"{where}; a provision touched counts whole, however little of its text is there)")
        text = "non-space characters"
        return {
            "recall": f"share of the question's cited provisions that a chunk {where} overlaps",
            "hit": f"1 if a chunk {where} overlaps a cited provision",
            "span_recall": f"share of the cited provisions' text ({text}) {where}",
            "precision": f"share of the text ({text}) {where} that lies inside a cited provision",
            "iou": f"share of the text ({text}) {where} or in a cited provision that is in both",
            "ndcg": f"trec_eval nDCG of the graded chunk qrels {where}",
            "covered_any": f"share of the cited provisions with some of their text ({text}) {where}",
            "covered_50": f"share of the cited provisions with at least half their text ({text}) {where}",
            "covered_90": f"share of the cited provisions with at least 90% of their text ({text}) {where}",
            "covered_whole": f"share of the cited provisions with all their text ({text}) {where}",
        }[self.name]


def parse_cited_metric(metric: str | CitedMetric) -> CitedMetric:
    """Read ``recall@10``, ``hit@10``, ``ndcg@10`` or ``recall@1000w``, ``span_recall@1000w``,
    ``precision@1000w``, ``iou@1000w``, ``hit@1000w`` (``r`` and ``p`` are accepted for recall and precision).

    Raises
    ------
    RagcovError
        Naming the metric and the valid forms.
    """
    if isinstance(metric, CitedMetric):
        return metric
    m = _PATTERN.match(str(metric))
    if m is None or int(m.group(2)) < 1:
        raise cited_metric_error(metric)
    name = _ALIASES.get(m.group(1).lower(), m.group(1).lower())
    budget = bool(m.group(3))
    if name not in (BUDGET_NAMES if budget else RANK_NAMES):
        raise cited_metric_error(metric)
    return CitedMetric(name, int(m.group(2)), budget)


def cited_metric_error(metric: Any, chunk_level: bool = False) -> RagcovError:
    """The error for a metric a cited-questions task cannot score: every valid form (budgeted ones included;
    with ``chunk_level``, the chunk-level metrics of its qrels too) and, for a misspelling or a wrong form, the
    metric most likely meant."""
    valid = _VALID + (", or on its chunk qrels " + ", ".join(f"'{n}@k'" for n in _CHUNK_LEVEL) if chunk_level else "")
    m = _PATTERN.match(str(metric))
    guess = _meant(m, chunk_level) if m is not None else None
    hint = f" Did you mean {guess!r}?" if guess and guess != str(metric).strip() else ""
    return RagcovError(f"cited-questions metrics must be {valid}, with k, B >= 1; got {metric!r}.{hint}")


def _meant(m: re.Match, chunk_level: bool) -> str | None:
    """The metric a ``name@k[w]`` most likely meant: the name made valid (a close spelling, or the valid name it
    ends with: ``span_iou`` -> ``iou``), in the form it belongs to (``span_recall@10`` -> ``span_recall@10w``),
    with a cutoff of at least 1 (``recall@0w`` -> ``recall@1000w``)."""
    given = m.group(1).lower()
    budget = bool(m.group(3))
    rank = list(RANK_NAMES) + (list(_CHUNK_LEVEL) if chunk_level else [])
    name = _ALIASES.get(given, given)
    if name not in (BUDGET_NAMES if budget else rank) and name in (rank if budget else BUDGET_NAMES):
        budget = not budget  # a valid name in the other form
    elif name not in (BUDGET_NAMES if budget else rank):
        own = list(BUDGET_NAMES if budget else rank)
        ends = [n for n in own if given.endswith("_" + n)]
        close = ends or difflib.get_close_matches(given, own + [a for a, n in _ALIASES.items() if n in own], n=1)
        if not close:
            return None
        name = _ALIASES.get(close[0], close[0])
    k = int(m.group(2))
    k = k if k >= 1 else (1000 if budget else 10)
    return f"{name}@{k}{'w' if budget else ''}"


# --------------------------------------------------------------------------- inputs


def cited_provisions(citations: pd.DataFrame, granularity: str = "dispositivo") -> dict[str, list[tuple]]:
    """Per question: its distinct cited provisions at ``granularity``, each ``(doc_id, start, end, chunks)``.

    ``chunks`` is the frozenset of corpus ids overlapping the provision. A provision is keyed by its span
    (``doc_id, start, end``) when the split carries the span columns, else (tables made without them) by
    its chunk set; provisions overlapping no chunk are left out.
    """
    if granularity not in GRANULARITIES:
        raise RagcovError(f"`granularity` must be one of {list(GRANULARITIES)}; got {granularity!r}.")
    if granularity == "article":
        ok = citations[citations["status"].isin(["resolved", "dispositivo_not_found"])]
        chunk_col = "article_chunks"
    else:
        ok = citations[citations["status"] == "resolved"]
        chunk_col = "chunks"
    s_col, e_col = _SPAN_COLS[granularity]
    has_span = s_col in ok.columns and e_col in ok.columns
    n = len(ok)
    starts = ok[s_col].to_numpy() if has_span else [None] * n
    ends = ok[e_col].to_numpy() if has_span else [None] * n
    docs = ok["doc_id"].to_numpy() if "doc_id" in ok.columns else [None] * n
    out: dict[str, dict[tuple, tuple]] = {}
    for qid, doc, s, e, chunks in zip(ok["query-id"], docs, starts, ends, ok[chunk_col]):
        if not len(chunks):
            continue
        cs = frozenset(str(c) for c in chunks)
        if has_span:
            if pd.isna(s) or pd.isna(e):
                raise RagcovError(f"citations of question {qid!r} ({doc}): a provision with chunks has no {s_col}/"
                                  f"{e_col}; rebuild the task (its span columns are incomplete).")
            key: tuple = (str(doc), int(s), int(e))
        else:
            key = (cs,)
        out.setdefault(str(qid), {}).setdefault(key, (str(doc), *(key[1:] if has_span else (None, None)), cs))
    return {q: list(d.values()) for q, d in out.items()}


def ranked_ids(run: Any) -> dict[str, np.ndarray]:
    """Every retrieved document id per query, in trec_eval order (score descending, then id descending)."""
    df = run if isinstance(run, pd.DataFrame) else load_run(run)
    if "score" not in df.columns:
        df = df.assign(score=-df["rank"].astype(float))
    q = df["query-id"].astype(str).to_numpy(dtype=object)
    c = df["corpus-id"].astype(str).to_numpy(dtype=object)
    s = df["score"].to_numpy(dtype=float)
    qcode = pd.factorize(q)[0]
    order = np.lexsort((_descending(c), -s, qcode))  # last key first: query, then score desc, then id desc
    q, c = q[order], c[order]
    if not len(q):
        return {}
    cut = np.flatnonzero(q[1:] != q[:-1]) + 1
    return {str(g[0]): ids for g, ids in zip(np.split(q, cut), np.split(c, cut))}


def _descending(ids: np.ndarray) -> np.ndarray:
    """Integer keys whose ascending order is ``ids`` descending."""
    codes, uniq = pd.factorize(ids, sort=True)
    return (len(uniq) - 1) - codes


@dataclass(frozen=True)
class ChunkSpans:
    """The corpus on the acts' character line: each chunk's words, text and span placed after every earlier act."""

    index: pd.Index  # corpus ids
    words: np.ndarray  # whitespace tokens of each chunk's text
    start: np.ndarray  # global start (act offset + start_char)
    end: np.ndarray
    offsets: Mapping[str, int]  # act -> offset on the line
    text: np.ndarray  # each chunk's text (a cut chunk's words are read from it)
    line: CharacterLine


def document_line(documents: pd.DataFrame | None) -> CharacterLine:
    """The acts' character line from a task's ``documents`` split (``doc_id``, ``text``).

    Raises
    ------
    RagcovError
        When the task has no documents: a context cut at exactly B words must find where a chunk's B-th word
        ends in its act.
    """
    if documents is None or not {"doc_id", "text"} <= set(documents.columns):
        raise RagcovError("budgeted measures cut the context at exactly B words, which reads the acts' text: the task "
                          "needs its `documents` split (doc_id, text); rebuild it with ragcov_data.load_dataset('irpf', "
                          "...) / build_cited_task(...), or pass the acts as a `documents` table.")
    return character_line(documents["doc_id"].astype(str).tolist(), documents["text"].astype(str).tolist())


def chunk_spans(corpus: pd.DataFrame, documents: pd.DataFrame | None) -> ChunkSpans:
    """Words, text and global character spans of every chunk on the acts' line (:func:`document_line`).

    Raises
    ------
    RagcovError
        When the corpus lacks ``_id, doc_id, start_char, end_char, text``, has a span with end < start, or names an
        act the documents lack or a span beyond its act's end.
    """
    need = ["_id", "doc_id", "start_char", "end_char", "text"]
    miss = [c for c in need if c not in corpus.columns]
    if miss:
        raise RagcovError(f"the task's corpus lacks {miss}; budgeted measures need each chunk's {need} (every "
                          "cited-questions chunking records them).")
    line = document_line(documents)
    docs = corpus["doc_id"].astype(str).to_numpy(dtype=object)
    s = corpus["start_char"].to_numpy(dtype=np.int64)
    e = corpus["end_char"].to_numpy(dtype=np.int64)
    bad = np.flatnonzero(e < s)
    if len(bad):
        i = int(bad[0])
        raise RagcovError(f"corpus chunk {corpus['_id'].iloc[i]!r} has end_char {e[i]} < start_char {s[i]}; "
                          "fix its span.")
    off = np.fromiter((line.offsets.get(d, -1) for d in docs), np.int64, len(docs))
    lengths = np.fromiter((len(line.texts[line.index[d]]) if d in line.index else 0 for d in docs), np.int64,
                          len(docs))
    wrong = np.flatnonzero((off < 0) | (e > lengths))
    if len(wrong):
        i = int(wrong[0])
        what = "an act the task's documents lack" if off[i] < 0 else f"a span beyond its act's end ({lengths[i]})"
        raise RagcovError(f"corpus chunk {corpus['_id'].iloc[i]!r} names {what}; the corpus and the documents come "
                          "from different builds: rebuild the task.")
    text = corpus["text"].astype(str).to_numpy(dtype=object)
    words = np.fromiter((len(t.split()) for t in text), np.int64, len(corpus))
    return ChunkSpans(pd.Index(corpus["_id"].astype(str)), words, s + off, e + off, line.offsets, text, line)


# --------------------------------------------------------------------------- the measures


def context_size(words: np.ndarray, budget: int) -> int:
    """How many ranked chunks (of ``words`` each, in rank order) the context within ``budget`` words reads: those
    taken whole and the one cut at the ``budget``-th word (:func:`ragcov_data.eval.outcomes.context.context_cut`)."""
    n, partial = context_cut(words, budget)
    return n + (1 if partial else 0)


_COLUMN = {name: i for i, name in enumerate(MEASURES)}


def cited_values(run: Any, citations: pd.DataFrame, corpus: pd.DataFrame | None, metrics: Iterable[Any], *,
                 query_ids: Sequence[str], granularity: str = "dispositivo",
                 provisions: Mapping[str, list[tuple]] | None = None,
                 spans: ChunkSpans | None = None, documents: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per-question values of the provision-level metrics (``recall@k``, ``hit@k``) and the budgeted ones.

    ``ndcg@k`` is not computed here (it reads the chunk qrels: :func:`ragcov_data.eval.outcomes.metrics.
    per_query`). A question the run does not rank scores 0; a question with no provision raises. Budgeted
    measures read the corpus (each chunk's text and span) and the task's ``documents`` (the acts' text).

    Returns
    -------
    DataFrame
        Index ``query-id`` (``query_ids`` in order), one column per metric (``str`` of each spec); ``attrs``:
        ``n_short_context`` and ``context_words`` (per budget: questions whose list ended before the budget,
        mean words of context).
    """
    specs = [parse_cited_metric(m) for m in metrics]
    if any(s.name == "ndcg" for s in specs):
        raise RagcovError("cited_values computes provision-level metrics; score ndcg@k through per_query_values.")
    prov = cited_provisions(citations, granularity) if provisions is None else provisions
    qids = _scored_questions(query_ids, prov, granularity)
    ranked = ranked_ids(run)
    out = pd.DataFrame(index=pd.Index(qids, name="query-id"))
    for spec in (s for s in specs if not s.budget):
        vals = np.empty(len(qids))
        for i, q in enumerate(qids):
            got = set(ranked.get(q, ())[:spec.k])
            found = [bool(got & p[3]) for p in prov[q]]
            vals[i] = float(np.mean(found)) if spec.name == "recall" else float(any(found))
        out[str(spec)] = vals
    budgets = sorted({s.k for s in specs if s.budget})
    if budgets:
        if spans is None:
            if corpus is None:
                raise RagcovError("budgeted measures need the task's corpus split (each chunk's text and span).")
            spans = chunk_spans(corpus, documents)
        items = _chunk_items(ranked, qids, spans)
        table = budget_table(items, prov, qids, budgets, spans.line, len(spans.index))
        for spec in (s for s in specs if s.budget):
            out[str(spec)] = table[spec.k][:, _COLUMN[spec.name]]
        out.attrs.update(table.attrs)
    out = out[[str(s) for s in dict.fromkeys(specs)]]
    out.attrs.setdefault("n_short_context", {})
    out.attrs.setdefault("context_words", {})
    return out


def _scored_questions(query_ids: Sequence[str], prov: Mapping[str, list[tuple]], granularity: str) -> list[str]:
    qids = [str(q) for q in query_ids]
    missing = [q for q in qids if q not in prov]
    if missing:
        raise RagcovError(f"{len(missing)} question(s) have no resolved provision at granularity {granularity!r} "
                          f"(first: {missing[:3]}); they cannot be scored.")
    return qids


def _chunk_items(ranked: Mapping[str, np.ndarray], qids: Sequence[str], spans: ChunkSpans) -> list[Items]:
    """Each question's ranked chunks as context items (words, span, text)."""
    lists = [ranked.get(q, np.empty(0, dtype=object)) for q in qids]
    flat = np.concatenate(lists) if lists else np.empty(0, dtype=object)
    all_rows = spans.index.get_indexer(flat)  # every retrieved id mapped to its corpus row at once
    if (all_rows < 0).any():
        bad = flat[all_rows < 0][0]
        q = next(q for q, ids in zip(qids, lists) if bad in set(ids))
        raise RagcovError(f"the run retrieves {bad!r} for question {q!r}, which is not a chunk of the task's "
                          "corpus; budgeted measures need each retrieved chunk's words and span (score the run "
                          "on the chunking it was made on).")
    per_q = np.split(all_rows, np.cumsum([len(x) for x in lists])[:-1]) if lists else []
    return [Items(spans.words[r], spans.start[r], spans.end[r], spans.text[r], np.zeros(len(r), dtype=bool))
            for r in per_q]


def budget_table(items: Sequence[Items], prov: Mapping[str, list[tuple]], qids: Sequence[str],
                 budgets: Sequence[int], line: CharacterLine, n_available: int | None = None) -> dict[int, np.ndarray]:
    """``{budget: (questions x len(MEASURES)) array}`` of the columns of :data:`~ragcov_data.eval.outcomes.context.
    MEASURES` over each question's ranked ``items`` (:mod:`ragcov_data.eval.outcomes.context`). ``attrs`` (on the
    returned dict's ``attrs`` key-less twin, :class:`_Table`): ``n_short_context`` per budget, the questions whose
    list ended before the budget was filled while more items existed (``n_available``); ``context_words``, the mean
    words of context; ``context_items``, the mean number of chunks or passages the context reads (the one cut at
    the B-th word included)."""
    out = _Table({b: np.zeros((len(qids), len(MEASURES))) for b in budgets})
    short: dict[int, int] = {}
    words = {b: np.zeros(len(qids)) for b in budgets}
    n_items = {b: np.zeros(len(qids)) for b in budgets}
    for i, (q, it) in enumerate(zip(qids, items)):
        ps, pe = provision_spans(prov[q], line.offsets, q)
        total = int(it.words.sum())
        for b in budgets:
            words[b][i] = context_words(it.words, b)
            n_items[b][i] = context_size(it.words, b)
            if total < b and (n_available is None or len(it) < n_available):
                short[b] = short.get(b, 0) + 1
        if not len(it):
            continue
        row = budget_values(it, budgets, ps, pe, line)
        for b in budgets:
            out[b][i] = row[b]
    mean = lambda d: {b: float(w.mean()) if len(w) else 0.0 for b, w in d.items()}  # noqa: E731
    out.attrs = {"n_short_context": short, "context_words": mean(words), "context_items": mean(n_items)}
    return out


class _Table(dict):
    """A dict of per-budget arrays with an ``attrs`` dict (what the budgets had to say)."""

    attrs: dict[str, Any]


def provision_spans(provs: list[tuple], offsets: Mapping[str, int], qid: str) -> tuple[np.ndarray, np.ndarray]:
    """Global spans of a question's provisions (one per provision, in order)."""
    if any(p[1] is None for p in provs):
        raise RagcovError(f"question {qid!r}: the task's citations split has no character spans (start_char, "
                          "end_char, article_start_char, article_end_char); rebuild the task to score budgeted "
                          "measures.")
    off = np.fromiter((offsets.get(p[0], -1) for p in provs), np.int64, len(provs))
    if (off < 0).any():
        doc = next(p[0] for p, o in zip(provs, off) if o < 0)
        raise RagcovError(f"question {qid!r} cites a provision of {doc!r}, an act the task's documents lack.")
    return (off + np.fromiter((p[1] for p in provs), np.int64, len(provs)),
            off + np.fromiter((p[2] for p in provs), np.int64, len(provs)))


# --------------------------------------------------------------------------- the outcome stage's entry


def cited_metric_of(metric: Any, has_citations: bool) -> CitedMetric | None:
    """The provision-level metric ``metric`` names on a task with a ``citations`` split, else None.

    On a cited-questions task ``recall@k`` (``r@k``) is the share of cited provisions and ``hit@k`` whether
    one is overlapped, as everywhere else in ragcov, and every ``name@Bw`` is a budgeted measure;
    ``chunk_recall@k`` (trec_eval's share of relevant chunks), ``chunk_hit@k``, ``ndcg@k``, ``p@k``,
    ``mrr@k`` stay chunk-level metrics of the qrels. A metric that is neither raises
    :func:`cited_metric_error` (every valid name of the task, and the one most likely meant).
    """
    if not has_citations:
        return None
    name = getattr(metric, "name", None)
    if name is not None and hasattr(metric, "k"):  # a parsed MetricSpec
        return CitedMetric({"r": "recall", "hit": "hit"}[name], int(metric.k)) if name in ("r", "hit") else None
    try:
        spec = parse_cited_metric(str(metric))
    except RagcovError:
        try:  # a chunk-level metric of the qrels (chunk_recall@10, p@5, mrr@10)
            parse_metric(metric)
        except RagcovError:  # neither: the valid names of this task, budgeted ones included
            raise cited_metric_error(metric, chunk_level=True) from None
        return None
    return spec if spec.budget or spec.name in ("recall", "hit") else None


def cited_series(run: pd.DataFrame, citations: pd.DataFrame, corpus: pd.DataFrame | None, spec: CitedMetric,
                 query_ids: Sequence[str], granularity: str, documents: pd.DataFrame | None = None) -> pd.Series:
    """One metric of :func:`cited_values` as a Series over ``query_ids`` (each must cite a provision), with
    ``attrs``: ``metric``, ``description``, ``n_short_context`` (questions whose ranked list ran out before
    filling the budget while the corpus had more chunks) and ``context_words`` (mean words of context)."""
    values = cited_values(run, citations, corpus, [spec], query_ids=query_ids, granularity=granularity,
                          documents=documents)
    out = pd.Series(values[str(spec)].to_numpy(dtype=float), index=pd.Index(list(query_ids), dtype=object,
                                                                             name="query-id"), name=str(spec))
    out.attrs.update(metric=str(spec), description=spec.describe(), n_no_relevant=0,
                     n_short_context=values.attrs.get("n_short_context", {}).get(spec.k, 0),
                     n_run_only=int(len(set(run["query-id"].astype(str)) - set(map(str, query_ids)))))
    if spec.budget:
        out.attrs["context_words"] = values.attrs.get("context_words", {}).get(spec.k)
    return out


@dataclass
class CitedScoring:
    """How the outcome stage scores a provision-level metric on a cited-questions task."""

    spec: CitedMetric
    citations: pd.DataFrame
    corpus: pd.DataFrame | None
    granularity: str
    documents: pd.DataFrame | None = None

    def queries(self, queries: pd.DataFrame, notices: list[str]) -> pd.DataFrame:
        """The questions citing a provision located at the granularity (what the metric scores), with one
        notice saying what the metric is and one counting the questions left out."""
        prov = cited_provisions(self.citations, self.granularity)
        keep = queries["_id"].astype(str).isin(set(prov)).to_numpy()
        spec = self.spec
        what = (f"{spec} = {spec.describe()} (provision-level, granularity {self.granularity}: the measure ragcov "
                "chunking ranks; the chunk-level ones are chunk_recall@k, trec_eval's share of relevant chunks, "
                "and chunk_hit@k)")
        notices.append(what + (f"; {CONTEXT_NOTE}." if spec.budget else "."))
        if not keep.any():
            raise RagcovError(f"no question of the task cites a provision located at granularity "
                              f"{self.granularity!r}; {spec} cannot be scored.")
        if not keep.all():
            notices.append(f"{int((~keep).sum())} question(s) with judged chunks but no cited {self.granularity} "
                           f"located in the text were left out of {spec} (as in ragcov chunking).")
        return queries.loc[keep].reset_index(drop=True)

    def scores(self, run: pd.DataFrame, qids: Sequence[str], name: str, notices: list[str]) -> pd.Series:
        """Per-question values of one run (:func:`cited_series`); a context cut short by the run is said."""
        spec = self.spec
        out = cited_series(run, self.citations, self.corpus, spec, list(qids), self.granularity, self.documents)
        if out.attrs["n_short_context"]:
            notices.append(f"{name}: the run ranks too few chunks to fill the {spec.k:,}-word context of "
                           f"{out.attrs['n_short_context']} of {len(qids)} questions (its list ends first), so "
                           "theirs is shorter; retrieve deeper.")
        return out


def cited_scoring(task: Any, metric: Any, tie_policy: str, manifest: Mapping[str, Any],
                  split: Callable[..., pd.DataFrame | None], granularity: str | None = None) -> CitedScoring | None:
    """A :class:`CitedScoring` when ``task`` has a ``citations`` split and ``metric`` is provision-level
    (:func:`cited_metric_of`), else None. ``split(task, name, columns=None)`` reads a split as a DataFrame;
    ``granularity`` (default: the manifest's, else ``dispositivo``) is that of the provisions."""
    try:
        has = task["citations"] is not None
    except (KeyError, TypeError, IndexError):
        has = False
    spec = cited_metric_of(metric, has)
    if spec is None:
        return None
    if tie_policy != DEFAULT_TIE_POLICY:
        raise RagcovError(f"{spec} on a cited-questions task orders chunks as trec_eval does (score, then id "
                          f"descending); drop the tie policy {tie_policy!r}, or score trec_eval's chunk recall as "
                          f"chunk_recall@{spec.k}.")
    corpus = split(task, "corpus", ["_id", "doc_id", "start_char", "end_char", "text"]) if spec.budget else None
    documents = split(task, "documents", ["doc_id", "text"]) if spec.budget else None
    granularity = granularity or (manifest.get("config") or {}).get("granularity") or "dispositivo"
    return CitedScoring(spec, split(task, "citations"), corpus, granularity, documents)
