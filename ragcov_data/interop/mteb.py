"""ragcov inside MTEB: ragcov's tasks as MTEB retrieval tasks and ragcov's retrievers as MTEB search models.

``tasks()`` builds :class:`mteb.abstasks.AbsTaskRetrieval` instances from the local data (no hub access):

* ``RagcovJurisTCU``: JurisTCU's 150 questions over the shipped document subset, graded 0-3, main score nDCG@10;
  MTEB's result JSON gains, through the ``task_specific_scores`` hook, ragcov's clustered interval of nDCG@10 over
  the source summaries (``ragcov_ci_low``, ``ragcov_ci_high``, ``ragcov_n_clusters``; the unit is in the task's
  description, as the hook takes numbers only).
* ``RagcovIRPF-<cut>``: the IRPF cited questions over one chunking cut; MTEB is id-based, so its qrels are
  chunk-level (a chunk is relevant when it holds a cited provision), not ragcov's provision-level recall.
* ``RagcovANEELSelfRetrieval``: each query is a chunk's text; its own chunk is ignored, as MTEB's
  ``ignore_identical_ids`` does (query ids are the chunk ids).

``model(name)`` wraps any retriever of :data:`ragcov_data.baselines.registry.RETRIEVER_NAMES` as an MTEB search
model (``index``/``search``, ``mteb_model_meta``). mteb (the ``[mteb]`` extra) is imported only by this module.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from ragcov_data.errors import RagcovError

#: The ragcov version recorded as the model revision and the tasks' dataset revision.
_REVISION = "ragcov-0.1.0"
_LEVEL = 0.95

_JURISTCU_BIBTEX = """@misc{juristcu2025,
  title = {JurisTCU: A Brazilian Portuguese Information Retrieval Dataset with Query Relevance Judgments},
  author = {Leandro Carísio Fernandes and others},
  year = {2025},
  eprint = {2503.08379},
  archivePrefix = {arXiv},
}"""
_RAGCOV_BIBTEX = """@software{ragcov,
  title = {ragcov: honest evaluation of retrieval over Brazilian-Portuguese regulatory text},
  year = {2026},
}"""


def _mteb() -> Any:
    try:
        import mteb
    except ImportError:
        raise RagcovError("ragcov_data.interop.mteb needs mteb: pip install 'ragcov-data[mteb]'.") from None
    return mteb


def _data_dir(data_dir: str | os.PathLike | None) -> Path:
    path = Path(data_dir or os.environ.get("RAGCOV_DATA_DIR") or "data")
    if not path.is_dir():
        raise RagcovError(f"data folder {path} not found; pass data_dir= (the folder holding juristcu/, irpf/, "
                          "aneel/) or set RAGCOV_DATA_DIR.")
    return path


# ==================================================================================== tasks
def _metadata(name: str, description: str, *, reference: str, license: str, domains: list[str],
              bibtex: str, main_score: str = "ndcg_at_10", date: tuple[str, str] | None = None,
              annotations: str = "expert-annotated", creation: str = "found") -> Any:
    from mteb.abstasks.task_metadata import TaskMetadata

    return TaskMetadata(
        name=name, description=description, reference=reference,
        dataset={"path": f"ragcov/{name}", "revision": _REVISION},
        type="Retrieval", category="t2t", modalities=["text"], eval_splits=["test"], eval_langs=["por-Latn"],
        main_score=main_score, date=date, domains=domains, task_subtypes=[], license=license,
        annotations_creators=annotations, dialect=[], sample_creation=creation, bibtex_citation=bibtex,
    )


def _split(ds: Any, *, query_text: str = "text") -> dict[str, Any]:
    """MTEB's split data (``corpus``/``queries`` as Datasets, ``relevant_docs``) from a ragcov DatasetDict."""
    from datasets import Dataset

    corpus = ds["corpus"].to_pandas()
    queries = ds["queries"].to_pandas()
    qrels = ds["qrels"].to_pandas()
    rel: dict[str, dict[str, int]] = {}
    for q, d, s in zip(qrels["query-id"].astype(str), qrels["corpus-id"].astype(str), qrels["score"]):
        rel.setdefault(q, {})[d] = int(s)
    return {
        "corpus": Dataset.from_dict({"id": corpus["_id"].astype(str).tolist(), "text": corpus["text"].tolist(),
                                     "title": [""] * len(corpus)}),
        "queries": Dataset.from_dict({"id": queries["_id"].astype(str).tolist(),
                                      "text": queries[query_text].tolist()}),
        "relevant_docs": rel,
        "top_ranked": None,
    }


_PYTREC = {"ndcg": "ndcg_cut", "recall": "recall", "precision": "P", "map": "map_cut"}


def _make_task(metadata: Any, load: Any, *, ignore_identical_ids: bool = False, cluster: str | None = None,
               metric: str | None = None) -> Any:
    """An instance of a fresh AbsTaskRetrieval subclass named after the task (MTEB reads ``metadata`` and
    ``ignore_identical_ids`` from the class): data from ragcov's loaders, clustered intervals in
    ``task_specific_scores``."""
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    def load_data(self: Any, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        if self.ragcov_task is None:
            self.ragcov_task = load()
        self.dataset = {"default": {"test": _split(self.ragcov_task)}}
        self.data_loaded = True

    def task_specific_scores(self: Any, scores: Any, qrels: Any, results: Any, hf_split: str,
                             hf_subset: str) -> dict[str, float]:
        out = interval_scores(results, self.ragcov_task, metadata.main_score, cluster=cluster, metric=metric)
        key = _PYTREC.get(metadata.main_score.split("_at_")[0], "") + "_" + metadata.main_score.split("_at_")[-1]
        values = [float(v[key]) for v in scores.values() if key in v]
        if values:  # MTEB's own main score before it rounds it to 5 decimals
            out["ragcov_mteb_main_score_unrounded"] = sum(values) / len(values)
        return out

    cls = type(metadata.name.replace("-", "_"), (AbsTaskRetrieval,), {
        "metadata": metadata, "ignore_identical_ids": ignore_identical_ids, "ragcov_task": None,
        "load_data": load_data, "task_specific_scores": task_specific_scores,
        "__doc__": metadata.description, "__module__": __name__})
    return cls()


def interval_scores(results: dict[str, dict[str, float]], task: Any, main_score: str = "ndcg_at_10", *,
                    cluster: str | None = None, level: float = _LEVEL, metric: str | None = None) -> dict[str, float]:
    """ragcov's estimate and recommended interval of ``main_score`` (``ndcg_at_K``, ``recall_at_K``,
    ``precision_at_K``, ``mrr_at_K``) for MTEB's ``results`` on ``task``: the numbers the result JSON gains.

    ``metric`` overrides the ragcov metric (e.g. ``chunk_recall@10`` on a cited-questions task, where ragcov's
    ``r@10`` is provision-level). The interval is clustered by the task's sampled unit (JurisTCU: the source summary; IRPF: the topic;
    self-retrieval: the document); ``ragcov_level`` records its confidence level."""
    from ragcov_data.eval import evaluate

    kind, _, k = main_score.partition("_at_")
    name = {"ndcg": "ndcg", "recall": "r", "precision": "p", "mrr": "mrr"}.get(kind)
    if metric is None and (name is None or not k.isdigit()):
        raise RagcovError(f"no ragcov metric for MTEB score {main_score!r}; use ndcg_at_K, recall_at_K, "
                          "precision_at_K or mrr_at_K.")
    run = {q: docs for q, docs in results.items() if docs}
    res = evaluate(run, task, metric or f"{name}@{k}", cluster=cluster, on_missing="zero", methods=None)
    iv = res.interval()  # the mean over queries (micro), its recommended method
    return {"ragcov_estimate": float(res.per_query["value"].mean()), "ragcov_ci_low": float(iv.low), "ragcov_ci_high": float(iv.high),
            "ragcov_level": float(level), "ragcov_n_clusters": float(len(res.per_document)),
            "ragcov_n_queries": float(len(res.per_query))}


def _juristcu(root: Path) -> Any:
    from ragcov_data.tasks.load import load_dataset

    meta = _metadata(
        "RagcovJurisTCU",
        "JurisTCU (Brazilian Federal Court of Accounts jurisprudence): 150 questions judged 0-3 over the document "
        "subset ragcov ships. ragcov adds the clustered 95% interval of nDCG@10 with the source summary as the "
        "sampled unit (ragcov_ci_low/high).",
        reference="https://arxiv.org/abs/2503.08379", license="cc-by-4.0", domains=["Legal", "Government"],
        bibtex=_JURISTCU_BIBTEX + "\n" + _RAGCOV_BIBTEX, date=("2024-01-01", "2025-03-01"))
    return _make_task(meta, lambda: load_dataset("juristcu", data_dir=str(root / "juristcu")),
                         cluster="source_key")


def _irpf(root: Path, cut: int) -> Any:
    from ragcov_data.tasks.load import load_dataset

    meta = _metadata(
        f"RagcovIRPF-{cut}",
        f"IRPF (Brazilian personal income tax) questions answered with citations of provisions, over the laws cut "
        f"into chunks of at most {cut} words. MTEB is id-based, so these qrels are chunk-level: a chunk is relevant "
        "when it holds a cited provision (not ragcov's provision-level recall). ragcov adds the clustered 95% "
        "interval of that recall@10 with the question's topic as the sampled unit (ragcov_ci_low/high).",
        reference="https://www.gov.br/receitafederal/pt-br/centrais-de-conteudo/publicacoes/perguntas-e-respostas",
        license="not specified", domains=["Legal", "Government"], bibtex=_RAGCOV_BIBTEX, main_score="recall_at_10",
        annotations="expert-annotated", creation="found")
    return _make_task(meta, lambda: load_dataset("irpf", data_dir=str(root / "irpf"), chunk_words=cut),
                      metric="chunk_recall@10")


def _aneel(root: Path, cut: int = 400) -> Any:
    from ragcov_data.tasks.load import load_dataset

    meta = _metadata(
        "RagcovANEELSelfRetrieval",
        f"ANEEL regulatory acts cut into chunks of at most {cut} words; each sampled chunk's text is a query whose "
        "relevant document is its own chunk, ignored as a candidate (ignore_identical_ids). Interval clustered "
        "by act.",
        reference="https://www.aneel.gov.br/", license="not specified", domains=["Legal", "Government"],
        bibtex=_RAGCOV_BIBTEX, main_score="ndcg_at_10", annotations="derived", creation="created")
    return _make_task(meta, lambda: load_dataset("aneel_taesa", data_dir=str(root), chunk_words=cut),
                         ignore_identical_ids=True)


TASK_NAMES: tuple[str, ...] = ("RagcovJurisTCU", "RagcovIRPF-400", "RagcovANEELSelfRetrieval")


def tasks(data_dir: str | os.PathLike | None = None, names: Sequence[str] | None = None) -> list[Any]:
    """ragcov's tasks as MTEB retrieval tasks (data read from ``data_dir`` on first use; no hub access).

    ``names`` picks among :data:`TASK_NAMES`; ``RagcovIRPF-<N>`` gives any chunk cut of N words."""
    _mteb()
    root = _data_dir(data_dir)
    out = []
    for name in names or TASK_NAMES:
        if name == "RagcovJurisTCU":
            out.append(_juristcu(root))
        elif name.startswith("RagcovIRPF-") and name[11:].isdigit():
            out.append(_irpf(root, int(name[11:])))
        elif name == "RagcovANEELSelfRetrieval":
            out.append(_aneel(root))
        else:
            raise RagcovError(f"unknown ragcov MTEB task {name!r}; known: {', '.join(TASK_NAMES)} "
                              "(RagcovIRPF-<words> for any cut).")
    return out


# ==================================================================================== models
def model(name: str, **kwargs: Any) -> Any:
    """The ragcov retriever ``name`` (:data:`ragcov_data.baselines.registry.RETRIEVER_NAMES`) as an MTEB search
    model: ``mteb.evaluate(model("bm25"), tasks=tasks())`` runs offline. ``kwargs`` go to ``make_retriever``."""
    _mteb()
    from ragcov_data.baselines.registry import RETRIEVERS, make_retriever

    make_retriever(name, **kwargs)  # unknown names and options fail here, with the list
    return _SearchModel(name, RETRIEVERS[name].description, kwargs)


class _SearchModel:
    """MTEB's SearchProtocol over a ragcov retriever: ``index`` fits it, ``search`` returns its top-k scores."""

    def __init__(self, name: str, description: str, options: dict[str, Any]) -> None:
        self.name = name
        self.description = description
        self.options = options
        self.retriever: Any = None

    @property
    def mteb_model_meta(self) -> Any:
        from mteb.models.model_meta import ModelMeta

        from ragcov_data.baselines.registry import RETRIEVERS

        dense = RETRIEVERS[self.name].dense
        return ModelMeta(
            loader=None, name=f"ragcov/{self.name}", revision=_REVISION, release_date=None, languages=["por-Latn"],
            n_parameters=None, memory_usage_mb=None, max_tokens=None, embed_dim=None, license="apache-2.0",
            open_weights=True, public_training_code=None, public_training_data=None,
            framework=["PyTorch"] if dense else ["NumPy"], reference=None,
            similarity_fn_name=None, use_instructions=False, training_datasets=set(),
            model_type=["dense"] if dense else ["sparse"])

    def index(self, corpus: Any, *, task_metadata: Any = None, hf_split: str = "test", hf_subset: str = "default",
              encode_kwargs: Any = None, num_proc: int | None = None, **kwargs: Any) -> None:
        import pandas as pd

        from ragcov_data.baselines.registry import make_retriever

        self.retriever = make_retriever(self.name, **self.options)
        frame = pd.DataFrame({"_id": [str(x) for x in corpus["id"]], "text": list(corpus["text"])})
        self.retriever.index(frame)

    def search(self, queries: Any, *, task_metadata: Any = None, hf_split: str = "test",
               hf_subset: str = "default", top_k: int = 100, encode_kwargs: Any = None, top_ranked: Any = None,
               num_proc: int | None = None, **kwargs: Any) -> dict[str, dict[str, float]]:
        import pandas as pd

        if self.retriever is None:
            raise RagcovError("search before index: MTEB calls index(corpus) first.")
        ids = [str(x) for x in queries["id"]]
        frame = pd.DataFrame({"_id": ids, "text": list(queries["text"])})
        run = self.retriever.search(frame, k=top_k)
        out: dict[str, dict[str, float]] = {q: {} for q in ids}
        for q, d, s in zip(run["query-id"], run["corpus-id"], run["score"]):
            out[str(q)][str(d)] = float(s)
        return out


# ==================================================================================== encoders
def encoder(name: str = "use-multilingual", **kwargs: Any) -> Any:
    """A packaged ragcov encoder (``minilm``, ``use-multilingual``, ``e5-small``, ``wordllama``: the models ship
    inside PyPI packages, loaded offline) as an MTEB *encoder* (``encode``/``similarity``), so MTEB's own dense
    search runs it: ``mteb.evaluate(encoder("minilm"), tasks=tasks())``. Queries are encoded as queries and
    documents as passages (e5's prompts); embeddings are L2-normalised and compared by cosine."""
    _mteb()
    from ragcov_data.baselines.encoders import load_encoder

    return _Encoder(name, load_encoder(name, **kwargs))


class _Encoder:
    """MTEB's EncoderProtocol over a ragcov :class:`~ragcov_data.baselines.encoders.Encoder`."""

    def __init__(self, name: str, inner: Any) -> None:
        self.name = name
        self.inner = inner

    def encode(self, inputs: Any, *, task_metadata: Any = None, hf_split: str = "test", hf_subset: str = "default",
               prompt_type: Any = None, **kwargs: Any) -> Any:
        import numpy as np

        texts = [t for batch in inputs for t in batch["text"]]
        query = prompt_type is not None and str(getattr(prompt_type, "value", prompt_type)) == "query"
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return self.inner.encode_queries(texts) if query else self.inner.encode_passages(texts)

    def similarity(self, embeddings1: Any, embeddings2: Any) -> Any:
        import numpy as np
        import torch

        a, b = np.atleast_2d(np.asarray(embeddings1)), np.atleast_2d(np.asarray(embeddings2))
        return torch.from_numpy((a @ b.T).astype(np.float32))  # both L2-normalised: the cosine

    def similarity_pairwise(self, embeddings1: Any, embeddings2: Any) -> Any:
        import numpy as np
        import torch

        a, b = np.atleast_2d(np.asarray(embeddings1)), np.atleast_2d(np.asarray(embeddings2))
        return torch.from_numpy((a * b).sum(axis=1).astype(np.float32))

    @property
    def mteb_model_meta(self) -> Any:
        from mteb.models.model_meta import ModelMeta

        return ModelMeta(
            loader=None, name=f"ragcov/{self.name}", revision=_REVISION, release_date=None, languages=["por-Latn"],
            n_parameters=None, memory_usage_mb=None, max_tokens=None, embed_dim=None, license="apache-2.0",
            open_weights=True, public_training_code=None, public_training_data=None, framework=["NumPy"],
            reference=None, similarity_fn_name="cosine", use_instructions=False, training_datasets=set(),
            model_type=["dense"])
