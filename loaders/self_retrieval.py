"""``aneel_taesa``: the chunked self-retrieval task as a Hugging Face ``datasets`` builder.

Builds from any acervo given as ``data_files=`` (files and/or folders, see
:func:`ragcov_data.read_acervo`) or ``data_dir=`` / ``$RAGCOV_DATA_DIR`` (a folder laid out like the
shared data folder; its ``aneel/aneel_fulltext.jsonl`` is read). Configs ``chunks-50``, ``chunks-100``
(default), ``chunks-400`` and ``dispositivo`` (cut at the act's artigos, parágrafos, incisos ...; see
:mod:`ragcov_data.loaders.dispositivos`); any other size through ``chunk_words=`` / ``query_words=``, or
``chunking="dispositivo"`` with ``min_words=`` / ``max_words=`` (the config name is derived, e.g.
``chunks-75``, ``dispositivo-200``; ``"dispositivo-200"`` is also accepted as a config name). The cache key holds the sha256 of every source file, so a changed
source is rebuilt.

Examples
--------
>>> from ragcov_data import load_dataset
>>> ds = load_dataset("aneel_taesa", data_dir="../shared/data", chunk_words=400)  # doctest: +SKIP
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import datasets

from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.legal.acervo import sha256_file
from ragcov_data.loaders import chunking, dispositivos
from ragcov_data.loaders.base import TaskBuilder
from ragcov_data.tasks.paths import DEFAULT_SOURCES, data_dir, default_source
from ragcov_data.tasks.record import manifest_description, task_features

_DESCRIPTION_FALLBACK = "Chunked self-retrieval task: which document does this chunk come from?"


@dataclass
class SelfRetrievalConfig(datasets.BuilderConfig):
    """Config of the chunked self-retrieval task.

    Parameters
    ----------
    chunk_words : int, default: 100
        Words a chunk.
    query_words : int, default: 20
        Words a query (the first words of its chunk); must be <= ``chunk_words``.
    id_column, text_column : str, default: ``"doc_id"``, ``"text"``
        Column names of the id and the text in table sources.
    acervo_files : tuple of str or None
        Source files/folders (set from the builder's ``data_files=``).
    chunking : {"words", "dispositivo"}, default: "words"
        Word windows of ``chunk_words``, or cuts at the act's dispositivos (``chunk_words`` windows for a
        document with no artigo).
    min_words, max_words : int or None
        ``chunking="dispositivo"``: unit sizes (defaults ``query_words`` and 400).
    keep_superseded : bool, default: False
        Keep the superseded wording of text files in the index (corpus column ``in_force``).
    sample_docs, sample_seed, sample_strata : int or None, int, str or None
        Queries from ``sample_docs`` documents drawn without replacement (the corpus stays whole); see
        :func:`ragcov_data.loaders.build.build_task`.
    """

    chunk_words: int = 100
    query_words: int = 20
    id_column: str = "doc_id"
    text_column: str = "text"
    acervo_files: tuple[str, ...] | None = None
    sample_docs: int | None = None
    sample_seed: int = 0
    sample_strata: str | None = None
    chunking: str = "words"
    min_words: int | None = None
    max_words: int | None = None
    keep_superseded: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        chunking.validate_sizes(self.chunk_words, self.query_words)
        dispositivos.settings(self.chunking, self.min_words, self.max_words, self.query_words)

    def derived_name(self) -> str:
        """``chunks-100`` / ``dispositivo-200`` ...: the name these values give."""
        sizes = dispositivos.settings(self.chunking, self.min_words, self.max_words, self.query_words)
        if sizes is None:
            return chunking.config_name(self.chunk_words, self.query_words)
        return dispositivos.config_name(sizes[1], sizes[0], self.chunk_words, self.query_words)


def _normalise_files(data_files: Any) -> tuple[str, ...]:
    """``data_files`` as a tuple of absolute path strings (str/PathLike, list, or {split: ...} dict)."""
    if isinstance(data_files, (str, os.PathLike)):
        items: Sequence[Any] = [data_files]
    elif isinstance(data_files, dict):
        items = [f for v in data_files.values() for f in ([v] if isinstance(v, (str, os.PathLike)) else v)]
    else:
        items = list(data_files)
    if not items:
        raise InputFileError("`data_files` is empty; pass a file, a folder or a list of them.")
    return tuple(str(Path(p).expanduser().resolve()) for p in items)


def _fingerprint(paths: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """(path, sha256) of every file under the given paths, in order (folders: sorted walk)."""
    out = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise InputFileError(f"source {p!r} does not exist; pass an existing file or folder in `data_files=`.")
        files = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]
        out.extend((str(f), sha256_file(f)) for f in files)
    return tuple(out)


def _named(config_name: str, config_kwargs: dict[str, Any]) -> str:
    """The named config a config name builds on, with the values its name states set in ``config_kwargs``
    (``chunks-200`` -> ``chunk_words=200``, ``chunks-200-q30``, ``dispositivo-200`` -> ``max_words=200``).

    Raises
    ------
    RagcovError
        A value given beside the name that contradicts it (``"chunks-400", chunk_words=100``): one of the two
        would be ignored.
    """
    m = re.fullmatch(r"chunks-(\d+)(?:-q(\d+))?", config_name)
    d = re.fullmatch(r"dispositivo(?:-(\d+))?", config_name)
    if m:
        stated = {"chunking": "words", "chunk_words": int(m.group(1)), "query_words": int(m.group(2) or 20)}
        base = config_name if m.group(2) is None and config_name in _NAMED_WORDS else "chunks-100"
    elif d:
        stated = {"chunking": "dispositivo", **({"max_words": int(d.group(1))} if d.group(1) else {})}
        base = "dispositivo"
    else:
        return config_name  # unknown: `datasets` lists the configs
    for key, value in stated.items():
        if key in config_kwargs and config_kwargs[key] != value:
            raise RagcovError(
                f"load_dataset('aneel_taesa', {config_name!r}, {key}={config_kwargs[key]!r}): the config "
                f"{config_name!r} means {key}={value!r}, so one of the two would be ignored; give one: the config "
                f"name alone, or no config name and {key}={config_kwargs[key]!r} (any chunks-N names a size).")
        config_kwargs[key] = value
    return base


@functools.lru_cache(maxsize=4)
def _cached_task(paths: tuple[str, ...], fingerprint: tuple, chunk_words: int, query_words: int,
                 id_column: str, text_column: str, name: str, sample: tuple = (None, 0, None),
                 cut: tuple = ("words", None, None), keep_superseded: bool = False) -> Any:
    """Build (once per process and source content) the task a builder serves."""
    # local: tests/test_imports.py reads this arrow as its example of a function-level import
    from ragcov_data.loaders.build import build_task

    return build_task(list(paths), chunk_words=chunk_words, query_words=query_words, id_column=id_column,
                      text_column=text_column, dataset="aneel_taesa", config_name=name,
                      sample_docs=sample[0], sample_seed=sample[1], sample_strata=sample[2],
                      chunking=cut[0], min_words=cut[1], max_words=cut[2], keep_superseded=keep_superseded)


_NAMED_WORDS = tuple(chunking.config_name(n, 20) for n in (50, 100, 400))


class SelfRetrievalBuilder(TaskBuilder):
    """Chunked self-retrieval over an acervo (``aneel_taesa``): corpus, queries and qrels splits."""

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = SelfRetrievalConfig
    BUILDER_CONFIGS = [
        SelfRetrievalConfig(name=chunking.config_name(n, 20), chunk_words=n, query_words=20,
                            version=datasets.Version("1.0.0"),
                            description=f"{n}-word chunks, 20-word queries")
        for n in (50, 100, 400)  # _NAMED_WORDS
    ] + [
        SelfRetrievalConfig(name="dispositivo", chunking="dispositivo", version=datasets.Version("1.0.0"),
                            description=f"chunks cut at the act's dispositivos (units of 20 to "
                                        f"{dispositivos.DEFAULT_MAX_WORDS} words; 100-word windows for documents "
                                        "with no artigo), 20-word queries")
    ]
    DEFAULT_CONFIG_NAME = "chunks-100"
    #: Dataset card shipped in the package, used by :func:`ragcov_data.publish`.
    DATASET_CARD = "dataset_card.md"

    def __init__(self, *args: Any, data_files: Any = None, **kwargs: Any) -> None:
        if data_files is not None:
            kwargs["acervo_files"] = _normalise_files(data_files)
        kwargs.setdefault("dataset_name", "aneel_taesa")
        super().__init__(*args, **kwargs)

    def _create_builder_config(self, config_name=None, custom_features=None, config_id=None, **config_kwargs):
        if isinstance(config_name, str):
            config_name = _named(config_name, config_kwargs)
        config, cid = super()._create_builder_config(config_name=config_name, custom_features=custom_features,
                                                     config_id=config_id, **config_kwargs)
        config.name = config.derived_name()
        if config_id is None:  # content-addressed cache key: config values + sha256 of every source file
            from datasets.fingerprint import Hasher

            key = {"chunk_words": config.chunk_words, "query_words": config.query_words,
                   "id_column": config.id_column, "text_column": config.text_column,
                   "sources": [sha for _, sha in self._source_fingerprint(config)]}
            if config.chunking != "words":  # words keys stay as they were
                key["chunking"] = [config.chunking, config.min_words, config.max_words]
            if config.keep_superseded:  # another index
                key["keep_superseded"] = True
            if config.sample_docs is not None:  # a sample is another task (same corpus, fewer queries)
                key["sample"] = [config.sample_docs, config.sample_seed, config.sample_strata]
            cid = f"{config.name}-{Hasher.hash(key)}"
        return config, cid

    # ------------------------------------------------------------------ sources

    def source_paths(self, config: SelfRetrievalConfig | None = None) -> tuple[str, ...]:
        """Files/folders the task is built from (``data_files``, else the data folder's ANEEL sample)."""
        config = config or self.config
        if config.acervo_files:
            return tuple(config.acervo_files)
        folder = data_dir(config.data_dir)
        if not (folder / DEFAULT_SOURCES["aneel_fulltext"]).is_file():
            raise InputFileError(
                f"data folder {str(folder)!r} has no {DEFAULT_SOURCES['aneel_fulltext']}; pass `data_dir=` a "
                "folder laid out like the shared data folder, or give the acervo itself with `data_files=`."
            )
        return (str(default_source("aneel_fulltext", folder).resolve()),)

    def _source_fingerprint(self, config: SelfRetrievalConfig | None = None) -> tuple[tuple[str, str], ...]:
        return _fingerprint(self.source_paths(config))

    def source_files(self) -> list[str]:
        """Every source file (folders expanded), for cache keys and manifests."""
        return [p for p, _ in self._source_fingerprint()]

    def task(self) -> Any:
        """The :class:`ragcov_data.Task` this builder serves (built once per process and source content)."""
        c = self.config
        paths = self.source_paths()
        return _cached_task(paths, self._source_fingerprint(), c.chunk_words, c.query_words, c.id_column,
                            c.text_column, c.name, (c.sample_docs, c.sample_seed, c.sample_strata),
                            (c.chunking, c.min_words, c.max_words), c.keep_superseded)

    # ------------------------------------------------------------------ datasets hooks

    def _split_features(self) -> dict[str, datasets.Features]:
        task = self.task()
        feats = task_features(task.manifest["metadata_columns"],
                              units=task.manifest["config"].get("chunking") == "dispositivo")
        if "in_force" in task.corpus.columns:  # vigência (ragcov_data.legal.vigencia)
            feats["corpus"]["in_force"] = datasets.Value("bool")
        if "units_not_in_force" in task.corpus.columns:  # vigência per dispositivo
            feats["corpus"]["units_not_in_force"] = datasets.List(datasets.Value("string"))
            feats["corpus"]["share_not_in_force"] = datasets.Value("float64")
        return feats

    def _info(self) -> datasets.DatasetInfo:
        task = self.task()
        return datasets.DatasetInfo(
            description=manifest_description(task.manifest),
            features=self._split_features()["corpus"],
            license="Official acts: not protected by copyright (Lei 9.610/98, art. 8, IV).",
        )

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        return [datasets.SplitGenerator(name=split, gen_kwargs={"split": split})
                for split in ("corpus", "queries", "qrels")]

    def _split_frame(self, split: str) -> Any:
        return self.task()[split]
