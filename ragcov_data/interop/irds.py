"""``ir_datasets`` bridge: every registered ragcov benchmark under ``ragcov/<name>/<config>``.

>>> import ir_datasets, ragcov_data
>>> ragcov_data.register_ir_datasets("../shared/data")          # doctest: +SKIP
>>> ds = ir_datasets.load("ragcov/aneel-taesa/chunks-100")        # doctest: +SKIP
>>> next(ds.queries_iter()).text                                  # doctest: +SKIP

Ids: ``ragcov/<name with _ replaced by ->/<config>`` for each builder config, plus ``ragcov/<name>`` for the
default config. Data are built lazily (through :func:`ragcov_data.load_dataset`, so the ``datasets``
cache is shared) on the first iteration. Records are ``NamedTuple``s with a ``text`` field:

- docs: ``doc_id`` (the corpus ``_id``: a chunk id for self-retrieval), ``text``, ``source_doc_id``
  (the corpus ``doc_id``), then the other corpus columns;
- queries: ``query_id``, ``text``, ``source_doc_id``, then the other query columns (``chunk_id`` ...);
- qrels: ``TrecQrel(query_id, doc_id, relevance, iteration="0")``.

Self-retrieval queries carry their own chunk's id (``query_id`` = the chunk's ``doc_id`` here): scorers
such as ir_measures count that chunk as a non-relevant hit, so drop it from runs first
(:func:`ragcov_data.exclude_self`, or BEIR's ``ignore_identical_ids=True``).
"""
from __future__ import annotations

import keyword
import os
import re
from collections import namedtuple
from typing import Any, Iterator

from ragcov_data.tasks.load import load_dataset
from ragcov_data.tasks.registry import builder_class, list_datasets

PREFIX = "ragcov"
_REGISTERED: dict[str, tuple[str, str | None, str | None]] = {}


def _field(name: str) -> str:
    """A column name as a NamedTuple field name."""
    out = re.sub(r"\W", "_", name).lstrip("_") or "field"
    if out[0].isdigit() or keyword.iskeyword(out):
        out = f"f_{out}"
    return out


class _Lazy:
    """The task behind one id, loaded on first use and shared by the three handlers."""

    def __init__(self, name: str, config: str, data_dir: str | None, cache_dir: str | None) -> None:
        self.name, self.config, self.data_dir, self.cache_dir = name, config, data_dir, cache_dir
        self._frames: dict[str, Any] | None = None
        self._classes: dict[str, type] = {}

    def frames(self) -> dict[str, Any]:
        if self._frames is None:
            kwargs = {} if self.data_dir is None else {"data_dir": self.data_dir}
            ds = load_dataset(self.name, self.config, cache_dir=self.cache_dir, show_progress=False, **kwargs)
            self._frames = {split: ds[split].to_pandas() for split in ("corpus", "queries", "qrels")}
        return self._frames

    def columns(self, split: str) -> list[tuple[str, str]]:
        """(field, column) pairs of a split, in record order."""
        df = self.frames()[split]
        id_field = "doc_id" if split == "corpus" else "query_id"
        pairs = [(id_field, "_id"), ("text", "text")]
        if "doc_id" in df.columns:
            pairs.append(("source_doc_id", "doc_id"))
        used = {f for f, _ in pairs}
        for col in df.columns:
            if col in ("_id", "text", "doc_id"):
                continue
            f = _field(col)
            while f in used:
                f += "_"
            used.add(f)
            pairs.append((f, col))
        return pairs

    def record_class(self, split: str) -> type:
        if split not in self._classes:
            cls_name = {"corpus": "RagcovDoc", "queries": "RagcovQuery"}[split]
            self._classes[split] = namedtuple(cls_name, [f for f, _ in self.columns(split)])
        return self._classes[split]

    def records(self, split: str) -> Iterator[Any]:
        df = self.frames()[split]
        cls = self.record_class(split)
        cols = [c for _, c in self.columns(split)]
        for row in zip(*(df[c].tolist() for c in cols)):
            yield cls(*(None if isinstance(v, float) and v != v else v for v in row))


class _Docs:
    def __init__(self, lazy: _Lazy) -> None:
        self._lazy = lazy

    def docs_iter(self) -> Iterator[Any]:
        return self._lazy.records("corpus")

    def docs_cls(self) -> type:
        return self._lazy.record_class("corpus")

    def docs_count(self) -> int:
        return len(self._lazy.frames()["corpus"])

    def docs_namespace(self) -> str:
        return f"{PREFIX}/{self._lazy.name}"

    def docs_lang(self) -> str:
        return "pt"

    def docs_handler(self) -> "_Docs":
        return self

    def docs_store(self) -> "_DocStore":
        return _DocStore(self)


class _DocStore:
    """Random access to docs by id (``get``, ``get_many``)."""

    def __init__(self, docs: _Docs) -> None:
        self._by_id = {d.doc_id: d for d in docs.docs_iter()}

    def get(self, doc_id: str) -> Any:
        return self._by_id[doc_id]

    def get_many(self, doc_ids: list[str]) -> dict[str, Any]:
        return {i: self._by_id[i] for i in doc_ids if i in self._by_id}


class _Queries:
    def __init__(self, lazy: _Lazy) -> None:
        self._lazy = lazy

    def queries_iter(self) -> Iterator[Any]:
        return self._lazy.records("queries")

    def queries_cls(self) -> type:
        return self._lazy.record_class("queries")

    def queries_count(self) -> int:
        return len(self._lazy.frames()["queries"])

    def queries_namespace(self) -> str:
        return f"{PREFIX}/{self._lazy.name}"

    def queries_lang(self) -> str:
        return "pt"

    def queries_handler(self) -> "_Queries":
        return self


class _Qrels:
    def __init__(self, lazy: _Lazy) -> None:
        self._lazy = lazy

    def qrels_iter(self) -> Iterator[Any]:
        from ir_datasets.formats import TrecQrel

        q = self._lazy.frames()["qrels"]
        for qid, did, score in zip(q["query-id"].tolist(), q["corpus-id"].tolist(), q["score"].tolist()):
            yield TrecQrel(qid, did, int(score), "0")

    def qrels_cls(self) -> type:
        from ir_datasets.formats import TrecQrel

        return TrecQrel

    def qrels_count(self) -> int:
        return len(self._lazy.frames()["qrels"])

    def qrels_defs(self) -> dict[int, str]:
        scores = sorted(set(self._lazy.frames()["qrels"]["score"].tolist()))
        return {int(s): "relevant" if s > 0 else "not relevant" for s in scores}

    def qrels_handler(self) -> "_Qrels":
        return self


def ir_dataset_id(name: str, config: str | None = None) -> str:
    """``ragcov/<name with _ replaced by ->[/<config>]``."""
    base = f"{PREFIX}/{name.replace('_', '-')}"
    return base if config is None else f"{base}/{config}"


def register_ir_datasets(data_dir: str | os.PathLike | None = None, *,
                         cache_dir: str | os.PathLike | None = None) -> list[str]:
    """Register every ragcov benchmark with ``ir_datasets``; return the ids.

    Parameters
    ----------
    data_dir : path, optional
        Data folder passed to every builder (default: each builder's default, e.g. ``$RAGCOV_DATA_DIR``).
    cache_dir : path, optional
        ``datasets`` cache folder used when the data are first iterated.

    Notes
    -----
    Calling it again is harmless: ids already registered are re-pointed at the new ``data_dir``.
    Nothing is built until a handler is iterated.
    """
    import ir_datasets
    from ir_datasets.datasets.base import Dataset

    folder = None if data_dir is None else str(os.fspath(data_dir))
    cache = None if cache_dir is None else str(os.fspath(cache_dir))
    ids = []
    for name in list_datasets():
        cls = builder_class(name)
        configs = [c.name for c in getattr(cls, "BUILDER_CONFIGS", [])] or ["default"]
        default = getattr(cls, "DEFAULT_CONFIG_NAME", None) or configs[0]
        for config, ds_id in [(c, ir_dataset_id(name, c)) for c in configs] + [(default, ir_dataset_id(name))]:
            lazy = _Lazy(name, config, folder, cache)
            dataset = Dataset(_Docs(lazy), _Queries(lazy), _Qrels(lazy))
            registry = ir_datasets.registry
            if ds_id in registry._registered:  # re-registering: replace quietly
                registry._registered[ds_id] = dataset
            else:
                registry.register(ds_id, dataset)
            _REGISTERED[ds_id] = (name, config, folder)
            ids.append(ds_id)
    return ids
