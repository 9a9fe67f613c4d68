"""A ``datasets.GeneratorBasedBuilder`` for retrieval tasks (corpus, queries, qrels).

Two things the stock builder does not do, done here once for every benchmark:

- **One schema a split.** ``datasets`` keeps one ``Features`` per builder, but the three splits of a task
  are shaped differently. Subclasses declare every split's features in :meth:`TaskBuilder._split_features`;
  they are swapped in while each split is written and read.
- **Arrow batches.** A task can hold about a million qrels; writing them one dict at a time costs seconds.
  Subclasses return each split as a pandas DataFrame (:meth:`TaskBuilder._split_frame`); it is written in
  Arrow batches (the writer of ``datasets.ArrowBasedBuilder``), and ``_generate_examples`` still yields
  the same rows one by one (streaming).
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import datasets
import pandas as pd
import pyarrow as pa

_BATCH_ROWS = 100_000


class TaskBuilder(datasets.GeneratorBasedBuilder):
    """Base builder of a corpus/queries/qrels task.

    Subclasses implement :meth:`_split_features` (``{split: Features}``), :meth:`_split_frame`
    (``split -> DataFrame`` with exactly those columns) and ``_info``/``_split_generators`` with
    ``gen_kwargs={"split": name}``.
    """

    def _split_features(self) -> dict[str, datasets.Features]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _split_frame(self, split: str) -> pd.DataFrame:  # pragma: no cover - abstract
        raise NotImplementedError

    @contextlib.contextmanager
    def _features_of(self, split: Any) -> Iterator[None]:
        name = str(split).split("[")[0]
        feats = self._split_features()
        saved = self.info.features
        if name in feats:
            self.info.features = feats[name]
        try:
            yield
        finally:
            self.info.features = saved

    def _prepare_split(self, split_generator: datasets.SplitGenerator, *args: Any, **kwargs: Any) -> None:
        with self._features_of(split_generator.name):
            super()._prepare_split(split_generator, *args, **kwargs)

    def _as_dataset(self, split: Any = datasets.Split.TRAIN, in_memory: bool = False) -> datasets.Dataset:
        with self._features_of(split):
            return super()._as_dataset(split=split, in_memory=in_memory)

    def _prepare_split_single(self, gen_kwargs: dict, fpath: str, file_format: str, max_shard_size: int,
                              job_id: int, **_: Any) -> Iterator[Any]:
        """Write Arrow batches from :meth:`_generate_tables` (the writer loop of ``ArrowBasedBuilder``)."""
        return datasets.ArrowBasedBuilder._prepare_split_single(
            self, gen_kwargs=gen_kwargs, fpath=fpath, file_format=file_format, max_shard_size=max_shard_size,
            job_id=job_id)

    def _generate_tables(self, split: str) -> Iterator[tuple[int, pa.Table]]:
        df = self._split_frame(split)
        schema = self._split_features()[split].arrow_schema
        for i, start in enumerate(range(0, max(len(df), 1), _BATCH_ROWS)):
            part = df.iloc[start:start + _BATCH_ROWS]
            yield i, pa.Table.from_pandas(part, schema=schema, preserve_index=False).replace_schema_metadata(
                schema.metadata)

    def _generate_examples(self, split: str) -> Iterator[tuple[int, dict[str, Any]]]:
        df = self._split_frame(split)
        columns = list(df.columns)
        for i, row in enumerate(zip(*(df[c].tolist() for c in columns))):
            yield i, dict(zip(columns, row))
