"""On-disk cache of text embeddings, keyed by model id and the sha256 of each text.

Layout
------
``<cache_dir>/<model-slug>-<sha256(model_id)[:12]>/`` holds *shards*: ``.npy`` files of a structured
array with fields ``key`` (the hex sha256 of ``role + "\\0" + text``) and ``emb`` (``float32``
vector). A shard's file name is the sha256 of its own bytes, so a truncated or altered file is
detected on load (it is then removed, with a warning, and its texts are encoded again). Files are
written to a temporary name and moved into place with ``os.replace``, so readers never see half a
file, and concurrent writers never clash (same content, same name).

Keys are per text, so a second run over the same texts encodes nothing, and a changed corpus encodes
only the texts that changed. Encoding is flushed to a new shard every ``flush_every`` texts, so an
interrupted run resumes where it stopped.

The cache folder is ``cache_dir`` if given, else ``$RAGCOV_CACHE_DIR``, else ``~/.cache/ragcov/embeddings``.
"""
from __future__ import annotations

import hashlib
import io
import os
import re
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ragcov_data.baselines.encoders import l2_normalize
from ragcov_data.errors import RagcovError
from ragcov_data._atomic import atomic_write

ENV_VAR = "RAGCOV_CACHE_DIR"
_SHARD = re.compile(r"^[0-9a-f]{64}\.npy$")


def default_cache_dir() -> Path:
    """``$RAGCOV_CACHE_DIR`` if set, else ``~/.cache/ragcov/embeddings``."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "ragcov" / "embeddings"


def text_keys(texts: Iterable[str], role: str) -> list[bytes]:
    """The cache key of each text: hex sha256 of ``role + "\\0" + text`` (UTF-8), as 64 ASCII bytes."""
    prefix = f"{role}\0".encode()
    return [hashlib.sha256(prefix + t.encode("utf-8", "surrogatepass")).hexdigest().encode() for t in texts]


class EmbeddingCache:
    """Content-addressed store of embeddings for one cache folder (see module docstring).

    Parameters
    ----------
    cache_dir : str or path, optional
        Folder to use; default :func:`default_cache_dir`.
    """

    def __init__(self, cache_dir: str | os.PathLike | None = None) -> None:
        self.root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        # model folder -> {key: (shard array, row)}; loaded once per instance, kept in sync on writes.
        self._index: dict[Path, dict[bytes, tuple[np.ndarray, int]]] = {}

    def __repr__(self) -> str:
        return f"EmbeddingCache(root={str(self.root)!r})"

    def model_dir(self, model_id: str) -> Path:
        """Folder holding the shards of ``model_id``."""
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)[:60].strip("_") or "model"
        return self.root / f"{slug}-{hashlib.sha256(model_id.encode()).hexdigest()[:12]}"

    # ---- reading --------------------------------------------------------------------------------
    def lookup(self, model_id: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """Cached vectors for those of ``keys`` that are present."""
        index = self._load(model_id)
        return {k: index[k][0][index[k][1]]["emb"] for k in keys if k in index}

    def _load(self, model_id: str) -> dict[bytes, tuple[np.ndarray, int]]:
        folder = self.model_dir(model_id)
        if folder in self._index:
            return self._index[folder]
        index: dict[bytes, tuple[np.ndarray, int]] = {}
        dim = None
        if folder.is_dir():
            for f in sorted(folder.iterdir()):
                if not _SHARD.match(f.name):
                    continue
                arr = _read_shard(f)
                if arr is None:
                    continue
                d = arr.dtype["emb"].shape[0]
                if dim is None:
                    dim = d
                elif d != dim:
                    _discard(f, f"vectors of dimension {d}, others have {dim}")
                    continue
                for row, key in enumerate(arr["key"].tolist()):
                    index[key] = (arr, row)
        self._index[folder] = index
        return index

    # ---- writing --------------------------------------------------------------------------------
    def store(self, model_id: str, keys: Sequence[bytes], embeddings: np.ndarray) -> Path | None:
        """Write one shard with ``embeddings`` (rows in ``keys`` order); returns its path."""
        emb = np.asarray(embeddings, dtype=np.float32)
        if emb.ndim != 2 or emb.shape[0] != len(keys):
            raise RagcovError(f"`embeddings` must have shape ({len(keys)}, dim); got {emb.shape}.")
        if not len(keys):
            return None
        arr = np.empty(len(keys), dtype=[("key", "S64"), ("emb", "<f4", (emb.shape[1],))])
        arr["key"] = list(keys)
        arr["emb"] = emb
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        data = buf.getvalue()
        folder = self.model_dir(model_id)
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / "model_id.txt", (model_id + "\n").encode())
        path = folder / f"{hashlib.sha256(data).hexdigest()}.npy"
        atomic_write(path, data)
        index = self._load(model_id)
        for row, key in enumerate(arr["key"].tolist()):
            index[key] = (arr, row)
        return path

    def clear(self, model_id: str | None = None) -> int:
        """Delete the shards of ``model_id`` (all models if ``None``); returns the number of files removed."""
        folders = [self.model_dir(model_id)] if model_id is not None else (
            [p for p in self.root.iterdir() if p.is_dir()] if self.root.is_dir() else []
        )
        n = 0
        for folder in folders:
            self._index.pop(folder, None)
            if folder.is_dir():
                for f in folder.iterdir():
                    if _SHARD.match(f.name):
                        f.unlink(missing_ok=True)
                        n += 1
        return n


def encode_unique(
    encoder: Any,
    texts: Sequence[str],
    role: str,
    *,
    cache: EmbeddingCache | None = None,
    show_progress: bool = False,
    flush_every: int = 2048,
    desc: str | None = None,
    map_batches: Callable[[str, list[list[str]]], Iterable[np.ndarray]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Embed ``texts`` once per distinct text, using and filling ``cache``.

    Parameters
    ----------
    encoder : Encoder
        Has ``model_id``, ``encode_queries`` and ``encode_passages`` (see :mod:`.encoders`).
    texts : sequence of str
    role : {"query", "passage"}
    cache : EmbeddingCache, optional
        ``None`` disables caching.
    show_progress : bool, default: False
        tqdm bar over the texts actually encoded (cache misses).
    flush_every : int, default: 2048
        New embeddings are written to the cache at least every this many texts.
    map_batches : callable, optional
        ``map_batches(role, batches)`` yields the raw embeddings of each batch of texts, in order
        (e.g. :mod:`ragcov_data.execution.engine` encodes them on Ray workers). Default: the encoder, one batch
        after another. The batches are the same either way, and every vector is stored here, by the
        caller, through the atomic shard writer: workers never write the cache.

    Returns
    -------
    unique : ndarray, shape (n_unique, dim), float32
        One L2-normalised vector per distinct text, in order of first appearance.
    inverse : ndarray, shape (len(texts),), int
        ``unique[inverse]`` are the embeddings of ``texts``. Identical texts share one vector, so
        their scores are bitwise equal (exact ties).
    """
    if role not in ("query", "passage"):
        raise RagcovError(f"`role` must be 'query' or 'passage'; got {role!r}.")
    texts = [str(t) for t in texts]
    keys = text_keys(texts, role)
    first: dict[bytes, int] = {}
    inverse = np.fromiter((first.setdefault(k, len(first)) for k in keys), dtype=np.int64, count=len(keys))
    ukeys = list(first)
    utexts = [""] * len(ukeys)
    for t, j in zip(texts, inverse):
        utexts[j] = t
    found = cache.lookup(encoder.model_id, ukeys) if cache is not None else {}
    vectors: list[np.ndarray | None] = [found.get(k) for k in ukeys]
    todo = [j for j, v in enumerate(vectors) if v is None]
    if todo:
        _encode_missing(encoder, role, utexts, ukeys, todo, vectors, cache, flush_every,
                        (desc or f"encode {role}", show_progress), map_batches)
    dims = {v.shape[0] for v in vectors if v is not None}
    if len(dims) > 1:
        raise RagcovError(
            f"cached embeddings of {encoder.model_id!r} have dimensions {sorted(dims)}; "
            "clear the cache folder for this model (EmbeddingCache.clear)."
        )
    unique = np.vstack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
    return np.ascontiguousarray(unique, dtype=np.float32), inverse


# ---- helpers ----------------------------------------------------------------------------------------

def _encode_missing(encoder: Any, role: str, utexts: list[str], ukeys: list[bytes], todo: list[int],
                    vectors: list[np.ndarray | None], cache: EmbeddingCache | None, flush_every: int,
                    progress: tuple[str, bool],
                    map_batches: Callable[[str, list[list[str]]], Iterable[np.ndarray]] | None) -> None:
    """Encode the distinct texts ``todo`` (indexes into ``utexts``) into ``vectors``, longest first, and
    store them in ``cache`` at least every ``flush_every`` texts and at the end; ``progress`` is the bar's
    description and whether to show it."""
    # longest first: batches of similar length waste less padding
    todo.sort(key=lambda j: -len(utexts[j]))
    fn = encoder.encode_queries if role == "query" else encoder.encode_passages
    batch = max(1, int(getattr(encoder, "batch_size", 64)))
    bar = _bar(len(todo), *progress)
    pending: list[int] = []
    pending_vecs: list[np.ndarray] = []
    starts = range(0, len(todo), batch)
    texts_of = [[utexts[j] for j in todo[start : start + batch]] for start in starts]
    raw = map(fn, texts_of) if map_batches is None else map_batches(role, texts_of)
    for start, out in zip(starts, raw):
        idx = todo[start : start + batch]
        emb = l2_normalize(out)  # also for user encoders that do not normalise
        if emb.shape[0] != len(idx):
            raise RagcovError(f"encoder {encoder.model_id!r} returned {emb.shape[0]} vectors for {len(idx)} texts.")
        for j, v in zip(idx, emb):
            vectors[j] = v
        pending += idx
        pending_vecs.append(emb)
        if bar is not None:
            bar.update(len(idx))
        if cache is not None and (len(pending) >= flush_every or start + batch >= len(todo)):
            cache.store(encoder.model_id, [ukeys[j] for j in pending], np.concatenate(pending_vecs))
            pending, pending_vecs = [], []
    if bar is not None:
        bar.close()


def _read_shard(path: Path) -> np.ndarray | None:
    """Load and verify one shard; a bad one is removed (with a warning) and ``None`` returned."""
    try:
        data = path.read_bytes()
    except OSError as e:
        _discard(path, f"unreadable ({e})")
        return None
    if hashlib.sha256(data).hexdigest() != path.stem:
        _discard(path, "content does not match its checksum name (truncated or altered)")
        return None
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as e:  # malformed header or body
        _discard(path, f"not a valid .npy file ({e})")
        return None
    names = arr.dtype.names or ()
    if arr.ndim != 1 or names != ("key", "emb") or arr.dtype["emb"].ndim != 1:
        _discard(path, f"unexpected layout {arr.dtype}")
        return None
    return arr


def _discard(path: Path, reason: str) -> None:
    warnings.warn(
        f"embedding cache file {str(path)!r} is unusable: {reason}; it is removed and its texts will be encoded again.",
        RuntimeWarning,
        stacklevel=3,
    )
    try:
        path.unlink()
    except OSError:
        pass


def _bar(total: int, desc: str, show: bool) -> Any:
    if not show:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="text", leave=False, disable=None)  # on a terminal only
