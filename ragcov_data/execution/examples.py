"""Two real pipelines to score and to copy: LangChain and LlamaIndex, each splitting the task's documents its own way
and searching them with BM25 (offline, no model). Each is a factory ``build(documents) -> retriever`` for
:func:`ragcov_data.run_pipeline` (``ingest=``) and ``ragcov run --pipeline ragcov_data.execution.examples:NAME``.

They need the ``[langchain]`` or ``[llamaindex]`` extra (both in ``[test]``).
"""
from __future__ import annotations

import warnings
from typing import Any

import pandas as pd

__all__ = ["langchain_bm25", "llamaindex_bm25"]


def langchain_bm25(documents: pd.DataFrame, *, chunk_size: int = 1000, chunk_overlap: int = 100, k: int = 20) -> Any:
    """LangChain: ``RecursiveCharacterTextSplitter`` (``add_start_index=True``: each chunk's offset, passed on as a
    hint) and ``BM25Retriever`` over the chunks."""
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    with warnings.catch_warnings():  # langchain-community announces its sunset when imported
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_community.retrievers import BM25Retriever

    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap, add_start_index=True)
    chunks = splitter.split_documents([Document(page_content=t, metadata={"source": d})
                                       for d, t in zip(documents["doc_id"], documents["text"])])
    return BM25Retriever.from_documents(chunks, k=k)


def llamaindex_bm25(documents: pd.DataFrame, *, chunk_size: int = 200, chunk_overlap: int = 20, k: int = 10) -> Any:
    """LlamaIndex: ``SentenceSplitter`` counting words (no tokenizer download) and a ``BaseRetriever`` scoring the
    nodes with BM25 (rank-bm25); the nodes' ``start_char_idx``/``end_char_idx``/``ref_doc_id`` are hints."""
    import numpy as np
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore
    from rank_bm25 import BM25Okapi

    class BM25Nodes(BaseRetriever):
        def __init__(self, nodes: list) -> None:
            super().__init__()
            self.nodes = nodes
            self.bm25 = BM25Okapi([n.get_content().lower().split() for n in nodes])

        def _retrieve(self, query_bundle: Any) -> list:
            scores = self.bm25.get_scores(query_bundle.query_str.lower().split())
            top = np.argsort(-scores, kind="stable")[:k]
            return [NodeWithScore(node=self.nodes[i], score=float(scores[i])) for i in top]

    splitter = SentenceSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap, tokenizer=str.split)
    return BM25Nodes(splitter.get_nodes_from_documents([Document(text=t, id_=d) for d, t in
                                                         zip(documents["doc_id"], documents["text"])]))
