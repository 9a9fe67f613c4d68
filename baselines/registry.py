"""Every baseline retriever by name: the one list the CLI, the benchmark scripts and the report use.

>>> from ragcov_data.baselines.registry import RETRIEVER_NAMES, make_retriever
>>> make_retriever("bm25-pt", show_progress=False).analyzer.params()["stem"]
'pt'
>>> "hybrid-bm25pt-e5" in RETRIEVER_NAMES
True

Dense models (and torch, where a model needs it) are imported only when a dense or hybrid name is built.

=====================  =============================================================================
name                   retriever
=====================  =============================================================================
``bm25``               BM25 (okapi, k1=1.5, b=0.75), default analyzer (NFKC, case folding)
``bm25-pt``            BM25 with the ``"pt"`` analyzer (stop words, accent folding, Snowball stemming)
``bm25-rm3``           ``bm25`` + RM3 feedback (fb_docs=10, fb_terms=10, original_query_weight=0.5)
``bm25-pt-rm3``        ``bm25-pt`` + RM3 feedback
``tfidf``              TF-IDF cosine, default analyzer
``tfidf-pt``           TF-IDF cosine, ``"pt"`` analyzer
``dense``              dense retrieval with ``model=`` (default: ``use-multilingual``)
``use-multilingual``   dense, Universal Sentence Encoder multilingual v3 (packaged, offline)
``e5-small``           dense, multilingual-e5-small 4-bit (packaged, offline; query/passage prompts)
``minilm``             dense, all-MiniLM-L6-v2 (packaged, offline; English)
``wordllama``          dense, WordLlama l2_supercat static embeddings (packaged, offline; fast)
``hybrid-bm25pt-e5``   RRF (k=60) of ``bm25-pt`` and ``e5-small``
``hybrid-bm25pt-use``  RRF (k=60) of ``bm25-pt`` and ``use-multilingual``
=====================  =============================================================================
"""
from __future__ import annotations

import difflib
from typing import Any, Callable, NamedTuple

from ragcov_data.baselines.bm25 import BM25
from ragcov_data.baselines.dense import Dense
from ragcov_data.baselines.hybrid import Hybrid
from ragcov_data.baselines.prf import RM3
from ragcov_data.baselines.tfidf import TfIdf
from ragcov_data.errors import RagcovError


class Spec(NamedTuple):
    """How to build one named retriever."""

    description: str
    build: Callable[..., Any]
    #: Keyword options it accepts beyond ``show_progress`` (e.g. ``variant`` for the BM25 family).
    options: tuple[str, ...] = ()
    #: Does it need the dense extra (an encoder)?
    dense: bool = False


def _bm25(analyzer: str | None, rm3: bool) -> Callable[..., Any]:
    def build(show_progress: bool = False, variant: str = "okapi") -> Any:
        bm25 = BM25(variant=variant, analyzer=analyzer, show_progress=show_progress)
        if not rm3:
            return bm25
        return RM3(bm25)

    return build


def _tfidf(analyzer: str | None) -> Callable[..., Any]:
    def build(show_progress: bool = False) -> Any:
        return TfIdf(analyzer=analyzer, show_progress=show_progress)

    return build


def _dense(model: str | None) -> Callable[..., Any]:
    def build(show_progress: bool = False, model: Any = model, cache_dir: Any = None) -> Any:
        return Dense(model, show_progress=show_progress, cache_dir=cache_dir)

    return build


def _hybrid(model: str) -> Callable[..., Any]:
    def build(show_progress: bool = False, cache_dir: Any = None) -> Any:
        return Hybrid([BM25(analyzer="pt", show_progress=show_progress),
                       Dense(model, show_progress=show_progress, cache_dir=cache_dir)], method="rrf", k=60)

    return build


#: Every baseline, by name (insertion order: lexical, dense, hybrid).
RETRIEVERS: dict[str, Spec] = {
    "bm25": Spec("BM25 (okapi), default analyzer", _bm25(None, False), ("variant",)),
    "bm25-pt": Spec("BM25 (okapi), Portuguese analyzer: stop words, accent folding, Snowball stemming",
                    _bm25("pt", False), ("variant",)),
    "bm25-rm3": Spec("BM25 + RM3 pseudo-relevance feedback (10 docs, 10 terms, weight 0.5)", _bm25(None, True),
                     ("variant",)),
    "bm25-pt-rm3": Spec("BM25 with the Portuguese analyzer + RM3 feedback", _bm25("pt", True), ("variant",)),
    "tfidf": Spec("TF-IDF cosine, default analyzer", _tfidf(None)),
    "tfidf-pt": Spec("TF-IDF cosine, Portuguese analyzer", _tfidf("pt")),
    "dense": Spec("dense retrieval with --model (default: use-multilingual)", _dense(None), ("model", "cache_dir"),
                  True),
    "use-multilingual": Spec("dense: Universal Sentence Encoder multilingual v3 (packaged)",
                             _dense("use-multilingual"), ("cache_dir",), True),
    "e5-small": Spec("dense: multilingual-e5-small, 4-bit (packaged; query:/passage: prompts)", _dense("e5-small"),
                     ("cache_dir",), True),
    "minilm": Spec("dense: all-MiniLM-L6-v2 (packaged; English)", _dense("minilm"), ("cache_dir",), True),
    "wordllama": Spec("dense: WordLlama l2_supercat static token embeddings (packaged; fast)", _dense("wordllama"),
                      ("cache_dir",), True),
    "hybrid-bm25pt-e5": Spec("reciprocal-rank fusion (k=60) of bm25-pt and e5-small", _hybrid("e5-small"),
                             ("cache_dir",), True),
    "hybrid-bm25pt-use": Spec("reciprocal-rank fusion (k=60) of bm25-pt and use-multilingual",
                              _hybrid("use-multilingual"), ("cache_dir",), True),
}

#: The names :func:`make_retriever` accepts.
RETRIEVER_NAMES: tuple[str, ...] = tuple(RETRIEVERS)


def make_retriever(name: str, **kwargs: Any) -> Any:
    """Build the baseline called ``name`` (one of :data:`RETRIEVER_NAMES`); its runs carry that name.

    Parameters
    ----------
    name : str
    **kwargs
        ``show_progress`` (every retriever), and the options of :data:`RETRIEVERS` ``[name].options``:
        ``variant`` (BM25 family), ``model`` (``dense``), ``cache_dir`` (dense and hybrid).
    """
    spec = RETRIEVERS.get(name) if isinstance(name, str) else None
    if spec is None:
        close = difflib.get_close_matches(str(name), RETRIEVER_NAMES, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise RagcovError(f"unknown retriever {name!r}; the baselines are {', '.join(RETRIEVER_NAMES)}.{hint}")
    bad = sorted(set(kwargs) - {"show_progress", *spec.options})
    if bad:
        allowed = ", ".join(spec.options) or "none"
        raise RagcovError(f"retriever {name!r} takes no option {', '.join(map(repr, bad))} (its options: {allowed}).")
    retriever = spec.build(**kwargs)
    if name != "dense":  # `dense` keeps its historical run name
        retriever.name = name
    return retriever
