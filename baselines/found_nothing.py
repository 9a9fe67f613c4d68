"""Queries a retriever ran and found nothing for, and why: said by ``ragcov run``, recorded in the run.

A lexical retriever returns no row for a query none of whose words reach the index: every word is a stop
word, punctuation, an emoji or a symbol (the analyzer leaves nothing), or no word is in the corpus (another
script or language, typos). The run then lacks those queries although they were run; ``ragcov run`` says how
many and why, and records their ids in the run (``attrs["found_nothing"]``, parquet metadata), so
``ragcov eval`` can tell "found nothing" (score 0, ``--on-missing zero``) from "not run".
"""
from __future__ import annotations

from typing import Any

import pandas as pd

#: Key of a run's ``attrs`` listing the query ids that were run and found nothing.
FOUND_NOTHING_KEY = "found_nothing"
_REASONS = {
    "no_words": "with no word left after the analyzer (only stop words, punctuation, emoji or symbols)",
    "unknown_words": "whose words are all absent from the corpus (another script or language, or typos)",
    "zero_score": "whose words weigh nothing in this corpus",
}


def why_nothing(retriever: Any, text: str) -> str:
    """``no_words``, ``unknown_words`` or ``zero_score``: why a lexical retriever found nothing for ``text``."""
    analyzer = getattr(retriever, "analyzer", None)
    vocab = getattr(retriever, "vocabulary_", None)
    if analyzer is None or not callable(analyzer):
        return "zero_score"
    tokens = analyzer(str(text))
    if not tokens:
        return "no_words"
    if vocab is not None and not any(t in vocab for t in tokens):
        return "unknown_words"
    return "zero_score"


def found_nothing(retriever: Any, queries: pd.DataFrame, run: pd.DataFrame) -> tuple[list[str], str | None]:
    """The ids of the queries the run has no row for, and one notice saying how many and why (None: none)."""
    qids = queries["_id"].astype(str)
    have = set(pd.unique(run["query-id"].astype(str))) if len(run) else set()
    miss = qids[~qids.isin(have)]
    if miss.empty:
        return [], None
    texts = queries.loc[miss.index, "text"].astype(str)
    reasons = pd.Series([why_nothing(retriever, t) for t in texts], index=miss.index)
    counts = reasons.value_counts()
    why = "; ".join(f"{int(counts[k]):,} {_REASONS[k]}" for k in _REASONS if k in counts.index)
    first = [f"{q} ({t[:30]!r})" for q, t in zip(miss.iloc[:3], texts.iloc[:3])]
    notice = (f"notice: {len(miss):,} of {len(qids):,} queries found nothing, so the run has no row for them — "
              f"{why} (first: {', '.join(first)}). They were run: `ragcov eval --on-missing zero` scores them 0.")
    return miss.tolist(), notice
