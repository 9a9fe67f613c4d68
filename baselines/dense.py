"""Dense retrieval: cosine similarity of sentence embeddings, exact, in query blocks.

Texts are embedded by an :class:`~ragcov_data.baselines.encoders.Encoder` (any sentence-transformers
model, or one of the packaged offline models ``"minilm"``, ``"use-multilingual"``, ``"e5-small"``,
``"wordllama"``), L2-normalised, and scored by a matrix product, so the score is the cosine similarity. Search is
exhaustive (no approximate index): the top-k is exact, ties included (see :mod:`.base`).

Identical texts get one embedding (computed once, cached once), so duplicated chunks (boilerplate,
repeated editions) tie exactly rather than differing in the last float bits.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ragcov_data.baselines.base import Retriever
from ragcov_data.baselines.embcache import EmbeddingCache, encode_unique
from ragcov_data.baselines.encoders import DEFAULT_MODEL, Encoder, load_encoder, set_offline
from ragcov_data.errors import RagcovError

#: Progress-bar wording per encoding role.
_PLURAL = {"query": "queries", "passage": "passages"}


class Dense(Retriever):
    """Exact dense retriever over L2-normalised embeddings (cosine similarity).

    Parameters
    ----------
    model : str, path or Encoder, optional
        ``"minilm"`` (all-MiniLM-L6-v2, English), ``"use-multilingual"`` (USE multilingual v3),
        ``"e5-small"`` (multilingual-e5-small, 4-bit, slow), ``"wordllama"`` (static embeddings, fast),
        any sentence-transformers model name or local folder, or an
        :class:`~ragcov_data.baselines.encoders.Encoder`.
        Default: :data:`~ragcov_data.baselines.encoders.DEFAULT_MODEL` (``"use-multilingual"``, chosen
        by measurement on the ANEEL self-retrieval task).
    cache : bool, default: True
        Reuse and store embeddings on disk (keyed by model id and each text's sha256).
    cache_dir : str or path, optional
        Cache folder; default ``$RAGCOV_CACHE_DIR`` or ``~/.cache/ragcov/embeddings``.
    show_progress : bool, default: False
        Progress bars while encoding (and searching, unless ``search(show_progress=...)`` says otherwise).
    offline : bool, default: True
        Never download a model: sets ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` unless already
        set, and loads sentence-transformers models with ``local_files_only=True``.
    **encoder_kwargs
        Passed to the encoder (e.g. ``batch_size``, ``device`` for sentence-transformers, ``threads``
        for the numpy models, ``query_prompt``/``passage_prompt``).

    Notes
    -----
    Scores are cosines in [-1, 1] computed in ``float32`` and reported as ``float``; negative scores
    are legitimate, so nothing is dropped (``min_score = None``). Corpus embeddings stay in memory as
    ``float32`` (n_corpus x dim x 4 bytes); score blocks are bounded by ``max_block_floats``.

    Examples
    --------
    >>> from ragcov_data.baselines import Dense
    >>> dense = Dense("use-multilingual", show_progress=False)          # doctest: +SKIP
    >>> run = dense.index(ds["corpus"]).search(ds["queries"], k=10, exclude_self=True)  # doctest: +SKIP
    """

    name = "dense"
    min_score = None

    def __init__(
        self,
        model: str | os.PathLike | Encoder | None = None,
        *,
        cache: bool = True,
        cache_dir: str | os.PathLike | None = None,
        show_progress: bool = False,
        offline: bool = True,
        **encoder_kwargs: Any,
    ) -> None:
        super().__init__()
        if offline:
            set_offline()
        self.model_name = str(DEFAULT_MODEL if model is None else getattr(model, "model_id", model))
        self.encoder = load_encoder(model, offline=offline, **encoder_kwargs)
        self.cache = EmbeddingCache(cache_dir) if cache else None
        self.show_progress = bool(show_progress)
        self._emb: np.ndarray | None = None  # distinct corpus vectors, float32
        self._inv: np.ndarray | None = None  # corpus position -> row of _emb
        self._show_search = self.show_progress
        #: How batches of cache misses are encoded: ``None`` here, one after another; the Ray engine
        #: (:mod:`ragcov_data.execution.engine`) sets it while it runs, to spread them over workers.
        self.map_batches: Any = None

    def params(self) -> dict[str, Any]:
        return {"model": self.model_name, "model_id": self.encoder.model_id, "similarity": "cosine"}

    @property
    def corpus_embeddings(self) -> np.ndarray:
        """Embeddings of the indexed corpus, in corpus order, shape ``(n_corpus, dim)``, ``float32``."""
        if self._emb is None or self._inv is None:
            raise RagcovError("call `index(corpus)` first.")
        return self._emb[self._inv]

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Query embeddings (cached like the corpus), shape ``(len(texts), dim)``."""
        u, inv = self._encode(texts, "query", self.show_progress)
        return u[inv]

    def search(
        self,
        queries: Any,
        k: int = 10,
        exclude_self: bool = False,
        *,
        show_progress: bool | None = None,
    ) -> pd.DataFrame:
        """Rank the corpus for every query by cosine similarity; see :meth:`Retriever.search`.

        ``show_progress=None`` follows the constructor's setting.
        """
        show = self.show_progress if show_progress is None else bool(show_progress)
        self._show_search = show
        return super().search(queries, k=k, exclude_self=exclude_self, show_progress=show)

    # ---- Retriever hooks ------------------------------------------------------------------------
    def _fit(self, texts: list[str]) -> None:
        self._emb, self._inv = self._encode(texts, "passage", self.show_progress)

    def _score_block(self, texts: list[str]) -> np.ndarray:
        uq, qinv = self._encode(texts, "query", self._show_search)
        if uq.shape[1] != self._emb.shape[1]:
            raise RagcovError(
                f"query embeddings have dimension {uq.shape[1]} but the corpus was indexed with {self._emb.shape[1]}; "
                "index and search with the same model."
            )
        scores = uq @ self._emb.T  # distinct queries x distinct passages, float32
        return scores[np.ix_(qinv, self._inv)]

    def _encode(self, texts: list[str], role: str, show: bool) -> tuple[np.ndarray, np.ndarray]:
        return encode_unique(
            self.encoder, texts, role, cache=self.cache, show_progress=show, desc=f"{self.name}: encode {_PLURAL.get(role, role)}",
            map_batches=getattr(self, "map_batches", None),
        )
