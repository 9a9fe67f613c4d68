"""Where retrieval runs: this process (``engine="local"``) or a Ray cluster (``engine="ray"``).

    from ragcov_data.execution import engine
    run = engine.run_task(bm25, task, k=10)                          # index, search, stamp: here
    run = engine.run_task(bm25, task, k=10, engine="ray", workers=2)  # the same run, on Ray
    run = engine.search(bm25, queries, k=10, exclude_self=True, engine="ray", workers=2)  # an indexed retriever

The Ray engine gives the same run as the local one, row for row:

* the fitted retriever is put once in the object store (``ray.put``) and every worker reads that copy;
* the queries are cut into ``workers`` contiguous shards (in input order), each searched by
  :meth:`Retriever.search` on a worker, and the shard runs are concatenated in shard order. A query's
  rows depend only on that query and the index (top-k, ties and ordering are per query), so BM25 and
  TF-IDF runs are identical to the local run, scores to the last bit; dense scores agree to ~1e-7
  (float32 matrix products of other block shapes);
* dense texts (corpus at :func:`index`, queries at :func:`search`) are encoded on workers, in the very
  batches the local encoder would use (:func:`ragcov_data.baselines.embcache.encode_unique`'s
  ``map_batches`` hook), one encoder actor per worker; the vectors come back to this process, which
  alone writes the embedding cache (content-addressed shards moved into place atomically).

Ray is optional (``pip install 'ragcov-data[ray]'``) and imported only when ``engine="ray"`` is asked for.
Without ``address`` a local cluster is started on the loopback interface only (no dashboard, no usage
statistics) with ``workers`` CPUs, and kept for later calls in this process (:func:`shutdown` stops it):
Ray binds its servers (GCS, raylet, object manager, runtime-env agent, workers) to the node's address,
which it takes to be the machine's outward one unless single-node mode is on, so that mode is switched on
for the local cluster (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``) and the cluster is refused if its GCS is
not on 127.0.0.1 after all. With ``address`` (e.g. ``"ray://head:10001"``, ``"10.0.0.5:6379"`` or
``"auto"``) an existing cluster is joined, within ``connect_timeout`` seconds (default 30, or
``$RAGCOV_RAY_CONNECT_TIMEOUT``): Ray itself retries an unreachable address for minutes. ``workers``
beyond the CPUs there is warned about once (the shards then queue for CPUs, and each worker process
costs memory and start-up time).
"""
from __future__ import annotations

import contextlib
import copy
import logging
import os
import socket
import threading
import time
import warnings
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from ragcov_data.baselines.base import as_frame
from ragcov_data.baselines.embcache import encode_unique
from ragcov_data.errors import RagcovError
from ragcov_data.runs.fingerprint import stamp_run

ENGINES = ("local", "ray")
RAY_EXTRA = "pip install 'ragcov-data[ray]'"
#: Encoder batches sent to a worker in one call (fewer round trips; the batches themselves are unchanged).
BATCHES_PER_CALL = 4

#: Seconds to wait for the cluster at ``address`` (``$RAGCOV_RAY_CONNECT_TIMEOUT`` overrides the default).
CONNECT_TIMEOUT_S = 30.0
LOOPBACK = "127.0.0.1"
#: Ray's switch for single-node mode, read when Ray is imported (and by its processes at start).
_SINGLE_NODE_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"

#: Ray runtime started by this module (None: none, or one the caller started); see :func:`shutdown`.
_STARTED: dict[str, Any] = {}
#: (workers, cores) pairs already warned about: one warning per setting per process.
_WARNED: set[tuple[int, int]] = set()


# --------------------------------------------------------------------------- options


def check_engine(engine: str, workers: int | None = None, address: str | None = None) -> tuple[str, int | None]:
    """Validate ``engine``/``workers``/``address``; returns ``(engine, workers)``.

    ``workers`` and ``address`` apply to ``engine="ray"`` only; ``workers`` must be a positive integer.
    """
    if engine not in ENGINES:
        raise RagcovError(f"`engine` must be one of {ENGINES}; got {engine!r}.")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1):
        raise RagcovError(f"`workers` must be a positive integer; got {workers!r}.")
    if engine == "local" and (workers is not None or address is not None):
        opt = "workers" if workers is not None else "address"
        raise RagcovError(f"`{opt}` applies to engine='ray' only (--engine ray); drop it or ask for the Ray engine.")
    return engine, None if workers is None else int(workers)


def import_ray() -> Any:
    """Import Ray, or raise the one-line error naming the extra."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # never report usage over the network
    try:
        import ray
    except ImportError:
        raise RagcovError(f"the Ray engine needs Ray, which is not installed: {RAY_EXTRA}") from None
    return ray


def connect_timeout_s(value: float | None = None) -> float:
    """``value``, else ``$RAGCOV_RAY_CONNECT_TIMEOUT``, else :data:`CONNECT_TIMEOUT_S`; checked positive."""
    if value is None:
        env = os.environ.get("RAGCOV_RAY_CONNECT_TIMEOUT")
        try:
            value = float(env) if env else CONNECT_TIMEOUT_S
        except ValueError:
            raise RagcovError(f"$RAGCOV_RAY_CONNECT_TIMEOUT must be a number of seconds; got {env!r}.") from None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not value > 0:
        raise RagcovError(f"`connect_timeout` must be a positive number of seconds; got {value!r}.")
    return float(value)


def check_workers(workers: int | None, cores: int | None = None, where: str = "here") -> str | None:
    """The warning for ``workers`` beyond ``cores`` (default: this machine's), issued once per setting."""
    cores = cores if cores is not None else (os.cpu_count() or 1)
    if workers is None or workers <= cores:
        return None
    message = (f"--workers {workers} exceeds the {cores} cores {where}: expect it to run slower (the shards wait "
               "for CPUs, and every worker process costs start-up time and memory)")
    if (workers, cores) not in _WARNED:
        _WARNED.add((workers, cores))
        warnings.warn(message, RuntimeWarning, stacklevel=3)
    return message


def _unreachable(address: str, timeout: float) -> RagcovError:
    return RagcovError(f"could not reach a Ray cluster at {address} within {timeout:g} s; start one with "
                       "`ray start --head` or omit --address")


def _tcp_target(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of an address naming one (``host:port``, ``ray://host:port``), else None (``auto``)."""
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rpartition(":")
    if not sep or not host:
        return None
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        return None


class _NotMainThread(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:  # Ray's note when init runs off the main thread
        return "current thread is not the main thread" not in record.getMessage()


def _join(ray: Any, kwargs: dict[str, Any], address: str, timeout: float) -> None:
    """``ray.init(address=...)`` bounded by ``timeout`` seconds (Ray retries a dead address for minutes)."""
    deadline = time.monotonic() + timeout
    target = _tcp_target(address)
    if target is not None:  # a closed port answers at once: no need to wait for Ray's retries
        try:
            socket.create_connection(target, timeout=timeout).close()
        except OSError:
            raise _unreachable(address, timeout) from None
    if target is not None and target[0] in ("127.0.0.1", "localhost", "::1"):
        _single_node(ray)  # else Ray swaps the loopback address for the machine's outward one
    outcome: dict[str, BaseException] = {}

    def init() -> None:
        try:
            ray.init(**kwargs)
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    quiet = _NotMainThread()
    log = logging.getLogger("ray._private.worker")
    log.addFilter(quiet)
    try:
        thread = threading.Thread(target=init, name="ragcov-ray-connect", daemon=True)
        thread.start()
        thread.join(max(0.0, deadline - time.monotonic()))
    finally:
        log.removeFilter(quiet)
    if thread.is_alive():  # left to finish or fail in the background; a daemon thread does not block exit
        raise _unreachable(address, timeout)
    if "error" in outcome:
        exc = outcome["error"]
        if isinstance(exc, (ConnectionError, RuntimeError, ValueError, TimeoutError)):
            raise RagcovError(f"cannot reach the cluster at {address!r} for the Ray engine: "
                              f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        raise exc


def ensure_ray(workers: int | None = None, address: str | None = None, connect_timeout: float | None = None) -> Any:
    """A connected Ray runtime: the one already initialised, the cluster at ``address``, or a new local one.

    A local cluster listens on 127.0.0.1 only (no dashboard) and has ``workers`` CPUs (default: this
    machine's); ``workers`` beyond this machine's cores is warned about. The cluster at ``address`` must
    answer within ``connect_timeout`` seconds (default :func:`connect_timeout_s`), else a one-line error.
    """
    timeout = connect_timeout_s(connect_timeout)
    ray = import_ray()
    if ray.is_initialized():
        return ray
    kwargs: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
    if address is not None:
        kwargs["address"] = address
        _join(ray, kwargs, address, timeout)
        _STARTED["ray"] = ray
        check_workers(workers, default_workers(ray), "in the cluster at " + address)
        return ray
    check_workers(workers)
    _single_node(ray)
    # address="local": a new cluster, never one found running on the machine (ray.init() without an address
    # joins the last `ray start` cluster, or $RAY_ADDRESS, which is set aside while this one starts)
    kwargs.update(address="local", num_cpus=workers or os.cpu_count() or 1, dashboard_host=LOOPBACK)
    ray_address = os.environ.pop("RAY_ADDRESS", None)
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RagcovError(f"cannot start a local cluster for the Ray engine: {str(exc).splitlines()[0]}") from None
    finally:
        if ray_address is not None:
            os.environ["RAY_ADDRESS"] = ray_address
    _STARTED["ray"] = ray
    gcs = str(ray.get_runtime_context().gcs_address)
    if not gcs.startswith(f"{LOOPBACK}:"):
        shutdown()
        raise RagcovError(f"the local Ray cluster came up on {gcs}, not on {LOOPBACK}; refusing to run on a cluster "
                          "reachable from the network (start one bound to 127.0.0.1 with `ray start --head "
                          "--node-ip-address 127.0.0.1` and pass --address).")
    return ray


def _single_node(ray: Any) -> None:
    """Ray's single-node mode for a local cluster: its processes inherit the switch from the environment,
    and a Ray imported before it was set reads its own constant, which is set to match (both restored by
    :func:`shutdown`, so a later ``address`` in this process joins a multi-node cluster normally)."""
    _STARTED["env"] = os.environ.get(_SINGLE_NODE_ENV)
    os.environ[_SINGLE_NODE_ENV] = "0"
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if constants is not None and getattr(constants, "ENABLE_RAY_CLUSTER", False):
        constants.ENABLE_RAY_CLUSTER = False
        _STARTED["constant"] = constants


def shutdown() -> None:
    """Stop the Ray runtime this module started (a no-op otherwise)."""
    ray = _STARTED.pop("ray", None)
    if ray is not None and ray.is_initialized():
        ray.shutdown()
    if "env" in _STARTED:
        env = _STARTED.pop("env")
        if env is None:
            os.environ.pop(_SINGLE_NODE_ENV, None)
        else:
            os.environ[_SINGLE_NODE_ENV] = env
    constants = _STARTED.pop("constant", None)
    if constants is not None:
        constants.ENABLE_RAY_CLUSTER = True


def default_workers(ray: Any) -> int:
    """CPUs of the connected cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


# --------------------------------------------------------------------------- public API


def index(retriever: Any, corpus: Any, *, engine: str = "local", workers: int | None = None,
          address: str | None = None, show_progress: bool | None = None,
          connect_timeout: float | None = None) -> Any:
    """Index ``corpus`` with ``retriever`` (returns it); with ``engine="ray"`` dense texts are encoded on
    Ray workers. Lexical indexes are built here (a few seconds even at 34k chunks) and shared at search."""
    engine, workers = check_engine(engine, workers, address)
    if engine == "local" or not hasattr(retriever, "map_batches"):
        return _call(retriever.index, corpus, show_progress=show_progress)
    ray = ensure_ray(workers, address, connect_timeout)
    with _ray_encoding(ray, retriever, workers or default_workers(ray)):
        return retriever.index(corpus, show_progress=show_progress)


def search(retriever: Any, queries: Any, k: int = 10, exclude_self: bool = False, *, engine: str = "local",
           workers: int | None = None, address: str | None = None, show_progress: bool | None = None,
           stats: dict[str, Any] | None = None, connect_timeout: float | None = None) -> pd.DataFrame:
    """Search ``queries`` with the fitted ``retriever``: :meth:`Retriever.search`, here or on Ray.

    Parameters
    ----------
    retriever : Retriever
        Already indexed (``retriever.index(corpus)`` or :func:`index`).
    queries, k, exclude_self, show_progress
        As :meth:`ragcov_data.baselines.base.Retriever.search`.
    engine : {"local", "ray"}, default: "local"
    workers : int, optional
        Ray only: shards searched at once (default: the cluster's CPUs).
    address : str, optional
        Ray only: an existing cluster (default: a local one on the loopback interface).
    connect_timeout : float, optional
        Ray only: seconds to wait for the cluster at ``address`` (default 30, ``$RAGCOV_RAY_CONNECT_TIMEOUT``).
    stats : dict, optional
        Filled with ``engine``, ``workers`` and, for Ray, ``shards``: per shard ``queries``, ``seconds``
        (on its worker) and ``queries_per_s`` — the figures of ``benchmarks/bench_ray.py``.

    Returns
    -------
    pandas.DataFrame
        The run, equal to the local run (same rows, ranks and scores; dense to float32 rounding).
    """
    engine, workers = check_engine(engine, workers, address)
    if stats is not None:
        stats.update(engine=engine, workers=workers if engine == "ray" else 1)
    if engine == "local":
        return _call(retriever.search, queries, k=k, exclude_self=exclude_self, show_progress=show_progress)
    if getattr(retriever, "corpus_ids", None) is None:
        raise RagcovError("call `index(corpus)` before `search(queries)`.")
    req = ["_id", "text"] + (["chunk_id"] if exclude_self else [])
    qdf = as_frame(queries, req, "queries")
    ray = ensure_ray(workers, address, connect_timeout)
    workers = workers or default_workers(ray)
    if stats is not None:
        stats["workers"] = workers
    shipped = retriever
    if hasattr(retriever, "map_batches"):  # dense: encode the queries on workers first, ship only vectors
        shipped = _with_query_vectors(ray, retriever, qdf["text"].astype(str).tolist(), workers)
    else:
        shipped = copy.copy(retriever)
    if hasattr(shipped, "n_jobs"):
        shipped.n_jobs = 1  # one CPU a worker: no threads inside it
    ref = ray.put(shipped)
    bounds = _shards(len(qdf), workers)
    remote = ray.remote(num_cpus=1)(_search_shard)
    refs = [remote.remote(ref, qdf.iloc[a:b].reset_index(drop=True), k, exclude_self) for a, b in bounds]
    parts = _gather(ray, refs, show_progress if show_progress is not None else getattr(retriever, "show_progress", True),
                    f"{getattr(retriever, 'name', 'retriever')}: search shards")
    runs = [p[0] for p in parts]
    if stats is not None:
        stats["shards"] = [{"queries": b - a, "seconds": p[1], "queries_per_s": (b - a) / p[1] if p[1] else float("inf")}
                           for (a, b), p in zip(bounds, parts)]
    run = pd.concat(runs, ignore_index=True)
    run.attrs = dict(runs[0].attrs)
    run.attrs["engine"] = "ray"
    run.attrs["workers"] = int(workers)
    return run


def columns_of(split: Any) -> list[str]:
    """Column names of a split (a DataFrame or a ``datasets.Dataset``)."""
    names = getattr(split, "column_names", None)
    return list(names) if names is not None else list(split.columns)


def is_self_retrieval(queries: Any) -> bool:
    """Whether a task's queries are chunks of its corpus (self-retrieval): they carry a ``chunk_id``, the
    chunk each was cut from, which a run must exclude from that query's candidates."""
    return "chunk_id" in columns_of(queries)


def run_task(retriever: Any, task: Any, *, k: int = 10, exclude_self: bool | None = None, engine: str = "local",
             workers: int | None = None, address: str | None = None, show_progress: bool | None = False,
             connect_timeout: float | None = None, queries: Any = None,
             stats: dict[str, Any] | None = None) -> pd.DataFrame:
    """The run of ``retriever`` on ``task``: index its corpus, search its queries, stamp the task's fingerprint.

    The one entry point every job uses (``ragcov run``, ``ragcov benchmark``, ``ragcov chunking``, the
    studies and the benchmarks), here or on Ray (:func:`index`, :func:`search`: the same run either way).

    Parameters
    ----------
    retriever : Retriever
        Unindexed (or to be re-indexed); any object with ``index(corpus)`` and ``search(queries, k=...)``.
    task : Task, DatasetDict or mapping
        Has ``corpus`` and ``queries`` splits; its fingerprint (:func:`ragcov_data.runs.fingerprint.stamp_run`)
        is written into ``run.attrs``, as ``ragcov run`` records it.
    k : int, default: 10
        Rows a query (plus ties with the last).
    exclude_self : bool, optional
        Drop each query's own chunk from its candidates; default: :func:`is_self_retrieval` of the queries.
    engine, workers, address, connect_timeout, stats
        As :func:`search` (``engine="local"``: this process).
    show_progress : bool or None, default: False
        Progress bars; None leaves the retriever's own setting.
    queries : optional
        Search these queries (e.g. a subset, in a chosen order) instead of the task's; the fingerprint is
        still the task's (it names the corpus the run's ids come from).
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise RagcovError(f"`k` must be a positive integer; got {k!r}.")
    engine, workers = check_engine(engine, workers, address)
    corpus = task["corpus"]
    queries = task["queries"] if queries is None else queries
    if exclude_self is None:
        exclude_self = is_self_retrieval(queries)
    kw = dict(engine=engine, workers=workers, address=address, connect_timeout=connect_timeout)
    index(retriever, corpus, show_progress=show_progress, **kw)
    run = search(retriever, queries, k=int(k), exclude_self=bool(exclude_self), show_progress=show_progress,
                 stats=stats, **kw)
    return stamp_run(run, task)


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with the keyword arguments ``fn`` accepts (a retriever written elsewhere may take
    no ``show_progress``); ``show_progress=None`` is not passed; an ``exclude_self=True`` it cannot take is an
    error, never dropped (its run would keep each query's own chunk)."""
    import inspect

    if kwargs.get("show_progress", 0) is None:
        kwargs.pop("show_progress")
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return fn(*args, **kwargs)
    if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        if kwargs.get("exclude_self") and "exclude_self" not in params:
            raise RagcovError(f"{getattr(fn, '__qualname__', fn)} takes no `exclude_self`, but the task is "
                              "self-retrieval (its queries are corpus chunks): give the retriever an "
                              "`exclude_self` option, or pass exclude_self=False knowingly.")
        kwargs = {key: v for key, v in kwargs.items() if key in params}
    return fn(*args, **kwargs)


# --------------------------------------------------------------------------- internals


def _shards(n: int, workers: int) -> list[tuple[int, int]]:
    """Contiguous ``[a, b)`` blocks of ``n`` queries, as even as possible, at most ``workers`` of them."""
    m = max(1, min(workers, n))
    edges = [round(i * n / m) for i in range(m + 1)]
    return [(a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def _search_shard(retriever: Any, queries: pd.DataFrame, k: int, exclude_self: bool) -> tuple[pd.DataFrame, float]:
    """One shard on a worker: the run of its queries and the seconds it took."""
    t0 = time.perf_counter()
    run = retriever.search(queries, k=k, exclude_self=exclude_self, show_progress=False)
    return run, time.perf_counter() - t0


def _gather(ray: Any, refs: list[Any], show: bool, desc: str) -> list[Any]:
    """Results of ``refs`` in order, with a progress bar over finished ones; a worker's error is re-raised
    as itself (its one-line message, not Ray's wrapped traceback)."""
    try:
        if show and len(refs) > 1:
            from tqdm.auto import tqdm

            pending = list(refs)
            with tqdm(total=len(refs), desc=desc, unit="shard", leave=False, disable=None) as bar:
                while pending:
                    done, pending = ray.wait(pending, num_returns=1)
                    bar.update(len(done))
        return ray.get(refs)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, BaseException):
            raise cause from None
        raise


class _EncoderActor:
    """Holds one copy of the encoder on a worker and encodes batches of texts (raw vectors)."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder

    def encode(self, role: str, batches: list[list[str]]) -> list[np.ndarray]:
        fn = self.encoder.encode_queries if role == "query" else self.encoder.encode_passages
        return [np.asarray(fn(b), dtype=np.float32) for b in batches]


def _portable_encoder(encoder: Any) -> Any:
    """A copy of ``encoder`` fit to ship: its loaded model dropped (each worker loads its own, lazily) and
    one thread (a worker has one CPU)."""
    enc = copy.copy(encoder)
    if getattr(enc, "_model", None) is not None:
        enc._model = None
    if isinstance(getattr(enc, "threads", None), int) or getattr(enc, "threads", 0) is None:
        enc.threads = 1
    return enc


class _RayBatchMapper:
    """``map_batches`` for :func:`encode_unique`: batches spread over encoder actors, yielded in order."""

    def __init__(self, ray: Any, encoder: Any, workers: int) -> None:
        self.ray = ray
        self.encoder = encoder
        self.workers = workers
        self.actors: list[Any] = []

    def __call__(self, role: str, batches: list[list[str]]) -> Iterator[np.ndarray]:
        if not batches:
            return iter(())
        if not self.actors:
            ref = self.ray.put(_portable_encoder(self.encoder))
            actor = self.ray.remote(num_cpus=1)(_EncoderActor)
            n = max(1, min(self.workers, -(-len(batches) // BATCHES_PER_CALL)))
            self.actors = [actor.remote(ref) for _ in range(n)]
        return self._ordered(role, batches)

    def _ordered(self, role: str, batches: list[list[str]]) -> Iterator[np.ndarray]:
        groups = [batches[i:i + BATCHES_PER_CALL] for i in range(0, len(batches), BATCHES_PER_CALL)]
        refs = [self.actors[i % len(self.actors)].encode.remote(role, g) for i, g in enumerate(groups)]
        for r in refs:  # in order, so the caller flushes the cache as results arrive
            yield from self.ray.get(r)

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []


@contextlib.contextmanager
def _ray_encoding(ray: Any, retriever: Any, workers: int) -> Iterator[None]:
    """While inside, ``retriever`` (dense) encodes its cache misses on Ray workers."""
    mapper = _RayBatchMapper(ray, retriever.encoder, workers)
    before = retriever.map_batches
    retriever.map_batches = mapper
    try:
        yield
    finally:
        retriever.map_batches = before
        mapper.close()


class _QueryVectors:
    """Stand-in encoder on workers: the query vectors computed (and cached) beforehand, by text."""

    def __init__(self, model_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.model_id = model_id
        self.batch_size = 1 << 30  # one lookup a block
        self._row = {t: i for i, t in enumerate(texts)}
        self._vectors = vectors

    def encode_queries(self, texts: Iterable[str]) -> np.ndarray:
        return self._vectors[[self._row[t] for t in texts]]

    def encode_passages(self, texts: Iterable[str]) -> np.ndarray:  # pragma: no cover - never asked
        raise RagcovError("the Ray engine's workers search an index; they encode no passage.")


def _with_query_vectors(ray: Any, retriever: Any, texts: list[str], workers: int) -> Any:
    """A shallow copy of a dense retriever whose encoder returns the queries' vectors, encoded on workers
    (and stored in this process's cache) first; no model and no cache travel to the workers."""
    with _ray_encoding(ray, retriever, workers):
        unique, inverse = encode_unique(retriever.encoder, texts, "query", cache=retriever.cache,
                                        show_progress=retriever.show_progress, map_batches=retriever.map_batches,
                                        desc=f"{retriever.name}: encode queries")
    first = {}
    for i, j in enumerate(inverse):
        first.setdefault(int(j), i)
    utexts = [texts[first[j]] for j in range(len(unique))]
    shipped = copy.copy(retriever)
    shipped.encoder = _QueryVectors(retriever.encoder.model_id, utexts, unique)
    shipped.cache = None
    shipped.map_batches = None
    return shipped


__all__ = ["ENGINES", "RAY_EXTRA", "CONNECT_TIMEOUT_S", "check_engine", "check_workers", "connect_timeout_s",
           "ensure_ray", "import_ray", "index", "is_self_retrieval", "run_task", "search", "shutdown"]
