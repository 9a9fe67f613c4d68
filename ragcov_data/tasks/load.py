"""``load_dataset``: any registered benchmark as a ``datasets.DatasetDict`` (corpus, queries, qrels)."""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
from pathlib import Path
from typing import Any, Iterator

from ragcov_data import __version__
from ragcov_data.errors import RagcovError
from ragcov_data.legal.acervo import sha256_file
from ragcov_data.tasks.registry import builder_class


def _code_hash(cls: type) -> str:
    """Hash of the builder's module source and the package version: a code change rebuilds the cache."""
    h = hashlib.sha256(__version__.encode())
    for klass in cls.__mro__:
        module = inspect.getmodule(klass)
        if module is None or not module.__name__.startswith("ragcov_data"):
            continue
        try:
            h.update(inspect.getsource(module).encode())
        except (OSError, TypeError):
            h.update(module.__name__.encode())
    return h.hexdigest()[:16]


def _content_hash(paths: list[str | os.PathLike]) -> str:
    """sha256 over every file under ``paths`` (folders walked in sorted order)."""
    h = hashlib.sha256()
    for p in paths:
        path = Path(p)
        files = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]
        for f in files:
            h.update(sha256_file(f).encode() if f.exists() else b"missing")
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _progress(show: bool) -> Iterator[None]:
    """The ``datasets`` bars and logs while building, shown only when asked and on a terminal (as tqdm's
    ``disable=None``: a log file or a pipe never receives a bar)."""
    import sys

    from datasets.utils import logging as hf_logging
    import datasets.utils as hf_tqdm

    show = bool(show) and bool(getattr(sys.stderr, "isatty", lambda: False)())

    was_disabled = hf_tqdm.are_progress_bars_disabled()
    verbosity = hf_logging.get_verbosity()
    if not show:
        hf_tqdm.disable_progress_bars()
        hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        if not show and not was_disabled:
            hf_tqdm.enable_progress_bars()
        hf_logging.set_verbosity(verbosity)


def _unwrap(exc: BaseException) -> BaseException | None:
    """The RagcovError behind a ``datasets`` wrapper exception, if any."""
    seen = exc
    while seen is not None:
        if isinstance(seen, RagcovError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


_BUILDER_KWARGS = {"data_files", "data_dir", "features", "writer_batch_size", "storage_options", "token"}


def _check_config_keys(name: str, cls: type, config: dict[str, Any]) -> None:
    """Refuse unknown config keys with the list of accepted ones."""
    import dataclasses
    import difflib

    config_cls = getattr(cls, "BUILDER_CONFIG_CLASS", None)
    fields = {f.name for f in dataclasses.fields(config_cls)} if dataclasses.is_dataclass(config_cls) else set()
    accepted = (fields | _BUILDER_KWARGS | set(getattr(cls, "BUILDER_KWARGS", ()))) - {"name", "version", "description"}
    for key in config:
        if key not in accepted:
            close = difflib.get_close_matches(key, accepted, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise RagcovError(f"`{key}` is not a config field of {name!r}; accepted: {sorted(accepted)}.{hint}")


def make_builder(name: str, config_name: str | None = None, *, cache_dir: str | os.PathLike | None = None,
                 **config: Any) -> Any:
    """The registered builder of ``name``, configured, with a content-addressed cache key.

    Builders that expose ``source_files()`` key their cache on their sources' sha256 themselves; for the
    others the sha256 of everything under ``data_files``/``data_dir`` is added to the config id.
    """
    cls = builder_class(name)
    _check_config_keys(name, cls, config)
    common = {"config_name": config_name, "cache_dir": None if cache_dir is None else str(cache_dir),
              "dataset_name": name, "hash": _code_hash(cls), **config}
    try:
        builder = cls(**common)
        if not hasattr(builder, "source_files"):
            paths = config.get("data_files") or []
            paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
            folder = config.get("data_dir") or os.environ.get("RAGCOV_DATA_DIR")
            if folder:
                paths.append(folder)
            if paths:
                builder = cls(**common, config_id=f"{builder.config_id}-{_content_hash(paths)}")
    except RagcovError:
        raise
    except (ValueError, TypeError) as exc:
        inner = _unwrap(exc)
        if inner is not None:
            raise inner from None
        names = [c.name for c in getattr(cls, "BUILDER_CONFIGS", [])]
        raise RagcovError(f"load_dataset({name!r}): {exc} (configs: {names}).") from exc
    return builder


def load_dataset(
    name: str,
    config_name: str | None = None,
    *,
    cache_dir: str | os.PathLike | None = None,
    show_progress: bool = False,
    **config: Any,
) -> Any:
    """Load a registered benchmark as a ``datasets.DatasetDict`` with ``corpus``, ``queries``, ``qrels``.

    Parameters
    ----------
    name : str
        A name of :func:`ragcov_data.list_datasets` (``"aneel_taesa"``, ``"juristcu"``).
    config_name : str, optional
        A builder config (e.g. ``"chunks-400"``); default: the builder's default config.
    cache_dir : path, optional
        Cache folder (default: the usual ``datasets`` cache). The cache key includes the config, the
        sha256 of the source files and a hash of the builder code, so any change rebuilds.
    show_progress : bool, default: False
        Show ``datasets`` progress bars while building.
    **config
        Builder config values and sources, e.g. ``data_files=``, ``data_dir=``, ``chunk_words=75``.

    Returns
    -------
    datasets.DatasetDict
        Splits ``corpus``, ``queries``, ``qrels``; the manifest JSON is in each split's
        ``info.description`` (see :func:`ragcov_data.tasks.record.manifest_of`).

    Examples
    --------
    >>> from ragcov_data import load_dataset
    >>> ds = load_dataset("aneel_taesa", data_dir="../shared/data", chunk_words=400)  # doctest: +SKIP
    >>> ds["queries"][0]["chunk_id"]  # doctest: +SKIP
    '2022_01491_pdf1#0000'
    """
    with _progress(show_progress):
        builder = make_builder(name, config_name, cache_dir=cache_dir, **config)
        try:
            builder.download_and_prepare()
        except Exception as exc:
            inner = _unwrap(exc)
            if inner is not None:
                raise inner from None
            raise
        return builder.as_dataset()
