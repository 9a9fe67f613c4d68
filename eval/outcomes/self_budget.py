"""Self-retrieval within a budget of words: the share of the query's own document found in the context.

On a cited-questions task ``span_recall@Bw`` is the share of the cited provisions' text inside the context of
``B`` words (:mod:`.budget`). Self-retrieval's answer is the query's own document: every *other* chunk of it
(the query's chunk is excluded from retrieval). So its analogue is

    span_recall@Bw (self-retrieval) = non-space characters of the query's sibling chunks inside the context
                                      / non-space characters of all its sibling chunks,

the context being the run's ranked chunks in trec_eval order (score descending, then id descending; the
query's own chunk never among them) cut after exactly ``B`` words, the chunk that crosses the budget truncated
at the ``B``-th word (:func:`.context.context_cut`, the cited measures' cut). Characters are non-space
characters (chunks are whitespace-joined words, so a chunk's characters are its words' letters), as the cited
measure counts them. Where a document is small (an artigo) the measure is read like the cited one: how much
of it a model would see; where a document is a whole act of thousands of words it is bounded by B over the
act's size and mostly says how small the act is.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.outcomes.budget import context_size, ranked_ids
from ragcov_data.eval.outcomes.context import context_cut

__all__ = ["self_values", "corpus_stats", "sibling_span_recall", "budget_depth"]


def _frame(task: Any, split: str) -> pd.DataFrame:
    obj = task[split]
    return obj if isinstance(obj, pd.DataFrame) else obj.to_pandas()


def budget_depth(corpus: pd.DataFrame, budget: int) -> int:
    """Chunks a run needs so that no context within ``budget`` words is cut short by the run's end: as many of
    the corpus's smallest chunks as fit (an upper bound on any context's length), at least one."""
    words = np.sort(corpus["text"].astype(str).str.split().str.len().to_numpy(dtype=np.int64))
    return max(1, context_size(words, int(budget)))


def corpus_stats(task: Any) -> dict[str, Any]:
    """What :func:`self_values` reads of a self-retrieval task's corpus and queries, computed once (a study scoring
    many runs on one task passes it back as ``stats``)."""
    corpus, queries = _frame(task, "corpus"), _frame(task, "queries")
    if "chunk_id" not in queries.columns:
        raise RagcovError("a self-retrieval measure reads a self-retrieval task (queries with chunk_id and doc_id).")
    texts = corpus["text"].astype(str).tolist()
    split = [t.split() for t in texts]
    chars = np.array([sum(map(len, w)) for w in split], dtype=np.int64)
    doc = pd.factorize(corpus["doc_id"].astype(str))[0]
    return {"texts": texts, "words": np.array([len(w) for w in split], dtype=np.int64), "chars": chars, "doc": doc,
            "pos": {c: i for i, c in enumerate(corpus["_id"].astype(str))},
            "doc_chars": np.bincount(doc, weights=chars),
            "own_of": dict(zip(queries["_id"].astype(str), queries["chunk_id"].astype(str)))}


def self_values(run: pd.DataFrame, task: Any, metrics: Sequence[str],
                query_ids: Sequence[str] | None = None, stats: dict[str, Any] | None = None) -> pd.DataFrame:
    """Per query of a self-retrieval task: ``hit@k`` (a sibling chunk among the top ``k``, trec_eval's order: the
    value trec_eval gives on the task's qrels, read without materialising them) and ``span_recall@Bw`` (the
    module docstring), from one reading of the run.

    Parameters
    ----------
    run : DataFrame
        ``query-id, corpus-id, score`` (the query's own chunk is dropped if present).
    task : Task or DatasetDict
        A self-retrieval task: corpus ``_id, doc_id, text``; queries ``_id, doc_id, chunk_id``.
    metrics : sequence of str
        ``hit@k`` and ``span_recall@Bw``.
    query_ids : sequence of str, optional
        Queries to score, in this order (default: every query of the task).
    stats : dict, optional
        :func:`corpus_stats` of ``task`` (computed here when not given).

    Returns
    -------
    DataFrame
        Index ``query-id``, one column per metric; ``attrs["n_short_context"]`` and ``attrs["context_words"]``
        per budget (queries whose ranked list ended before the budget; mean words of context).
    """
    specs = [_spec(m) for m in metrics]
    st = corpus_stats(task) if stats is None else stats
    texts, words, chars, doc, pos, doc_chars, own_of = (st[k] for k in ("texts", "words", "chars", "doc", "pos",
                                                                        "doc_chars", "own_of"))
    order = list(own_of) if query_ids is None else [str(x) for x in query_ids]
    ranked = ranked_ids(run)
    out = np.zeros((len(order), len(specs)))
    ctx = {b: np.zeros(len(order)) for kind, b in specs if kind == "span_recall"}
    for r, qid in enumerate(order):
        own = pos[own_of[qid]]
        d = doc[own]
        lst = np.array([pos[c] for c in ranked.get(qid, ()) if c != own_of[qid]], dtype=np.int64)
        same = doc[lst] == d
        for j, (kind, k) in enumerate(specs):
            if kind == "hit":
                out[r, j] = float(same[:k].any())
                continue
            n, partial = context_cut(words[lst], k) if len(lst) else (0, 0)
            inside = int(chars[lst[:n]][same[:n]].sum())
            if partial and same[n]:
                inside += len("".join(texts[lst[n]].split()[:partial]))
            total = doc_chars[d] - chars[own]
            out[r, j] = inside / total if total > 0 else 0.0
            ctx[k][r] = int(words[lst[:n]].sum()) + partial
    res = pd.DataFrame(out, index=pd.Index(order, name="query-id"), columns=[str(m) for m in metrics])
    res.attrs.update(n_short_context={b: int((v < b).sum()) for b, v in ctx.items()},
                     context_words={b: float(v.mean()) if len(v) else 0.0 for b, v in ctx.items()})
    return res


def _spec(metric: str) -> tuple[str, int]:
    m = re.fullmatch(r"\s*(hit|span_recall)@(\d+)(w?)\s*", str(metric))
    if m is None or (m.group(1) == "hit") == bool(m.group(3)) or int(m.group(2)) < 1:
        raise RagcovError(f"a self-retrieval measure here is hit@k (k chunks) or span_recall@Bw (B words of "
                          f"context); got {metric!r}.")
    return m.group(1), int(m.group(2))


def sibling_span_recall(run: pd.DataFrame, task: Any, budget: int,
                        query_ids: Sequence[str] | None = None) -> pd.Series:
    """Per query: the share of its sibling chunks' non-space characters inside the context of ``budget`` words
    (:func:`self_values` of ``span_recall@<budget>w``)."""
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise RagcovError(f"`budget` must be a positive whole number of words; got {budget!r}.")
    df = self_values(run, task, [f"span_recall@{int(budget)}w"], query_ids)
    out = df.iloc[:, 0]
    out.attrs.update(n_short_context=df.attrs["n_short_context"][int(budget)],
                     context_words=df.attrs["context_words"][int(budget)])
    return out
