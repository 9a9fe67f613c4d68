"""Any chunker, as character spans of an act: the built-in cuts, a callable, or a RAG library's splitter.

A chunker spec (:func:`resolve`) is one of:

- a **built-in cut** by name: ``words-N`` (N-word windows), ``dispositivo`` / ``dispositivo-N`` (dispositivo
  units of at most N words), ``article`` (one chunk per artigo) — built by the task's own code paths
  (:func:`ragcov_data.loaders.cited_questions.chunk_act`);
- an **external chunker** by name, from the optional ``[chunkers]`` extra (``pip install
  'ragcov-data[chunkers]'``), all offline (no tokenizer is downloaded): ``recursive-N`` (LangChain's
  ``RecursiveCharacterTextSplitter``, N characters, no overlap), ``chonkie-sentence-N`` (chonkie's
  ``SentenceChunker``, N words by its ``word`` tokenizer), ``semchunk-N`` (semchunk, N words: whitespace tokens
  as the token counter);
- ``"module:attr"``: a callable or splitter object imported from a module;
- a **callable** ``text -> list[str]`` or ``text -> list[(start, end)]``;
- an **object** with LangChain's ``split_text``, chonkie's ``chunk`` (chunk objects with ``.text``,
  ``.start_index``, ``.end_index``), or a semchunk chunker (``semchunk.chunkerify(...)``).

:func:`spans` turns one act into character spans (:data:`LOCATE_RULE`): chunk texts are located in the act,
whitespace-tolerant, in order; spans are used as given (bounds checked). A chunker that rewrites or drops text
fails with a :class:`~ragcov_data.errors.RagcovError` naming the act and the first chunk not found.

Names and cache keys. A task built with a callable or object is named by :attr:`Chunker.name`: the ``name=``
given, else one derived from the chunker (its function or class name and its ``chunk_size``/``chunk_overlap``
when it has them). The name is for people; the ``datasets`` cache is keyed by what the chunker does
(:func:`with_behaviour`: a sha256 of the spans it returns on the task's acts), so two callables with the same
name, or a chunker changed under its old name, never share a cache entry.
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import re
import types
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from ragcov_data.errors import RagcovError

__all__ = ["Chunker", "resolve", "spans", "locate", "register", "registered", "by_key", "with_behaviour",
           "uncovered_characters",
           "EXTERNAL", "LOCATE_RULE", "PIP"]

PIP = "pip install 'ragcov-data[chunkers]'"
#: External chunkers by name: pattern -> (package to import, pip name, description).
EXTERNAL = {
    "recursive-N": ("langchain_text_splitters", "langchain-text-splitters",
                    "LangChain RecursiveCharacterTextSplitter(chunk_size=N characters, chunk_overlap=0)"),
    "chonkie-sentence-N": ("chonkie", "chonkie",
                           "chonkie SentenceChunker(tokenizer='word', chunk_size=N words, chunk_overlap=0)"),
    "semchunk-N": ("semchunk", "semchunk", "semchunk.chunkerify(word counter, chunk_size=N words)"),
}
LOCATE_RULE = (
    "each chunk's text is located in its act ignoring whitespace (the chunker may collapse or strip it), in "
    "order: right after the previous chunk, else at the first match after the previous chunk's start (chunks "
    "may overlap); its span runs from its first to its last non-space character and the corpus text is the "
    "act's text over the span; chunks given as character spans (or chunk objects whose span holds their "
    "text) are used as given; whitespace-only chunks are skipped; a chunk not found is an error"
)
_BUILTIN = re.compile(r"^(?:words-(\d+)|dispositivo(?:-(\d+))?|article)$")
_EXTERNAL = re.compile(r"^(recursive|chonkie-sentence|semchunk)-(\d+)$")
_EXCERPT = 70


@dataclass(frozen=True, eq=False)
class Chunker:
    """A resolved chunker: a built-in cut (``builtin``: the task's ``chunking``/``chunk_words``/``max_words``
    arguments) or an external ``split`` (``text -> chunks``). Equal and hashed by ``name``."""

    name: str
    builtin: dict | None = None
    split: Callable[[str], Any] | None = field(default=None, repr=False)
    rule: str = ""
    version: str = ""  # library version of an external chunker (a cache key part)
    behaviour: str = ""  # sha256 of the spans it returns on a task's acts (:func:`with_behaviour`)
    memo: dict = field(default_factory=dict, repr=False)  # (act, text) -> spans: each act is cut once

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Chunker) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("Chunker", self.name))

    @property
    def key(self) -> str:
        """Cache key: name, rule, library version and behaviour (an upgraded library, or a chunker whose spans
        on the acts changed, rebuilds the task)."""
        return hashlib.sha256(f"{self.name}|{self.rule}|{self.version}|{self.behaviour}".encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- resolving a spec


def resolve(spec: Any, name: str | None = None) -> Chunker:
    """The :class:`Chunker` of ``spec`` (see the module docstring); ``name`` overrides the derived name.

    Raises
    ------
    RagcovError
        An unknown name (with the accepted forms), a missing extra (with the pip command), an object that
        is no chunker.
    """
    if name is not None and (not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.+-]+", name)):
        raise RagcovError(f"a chunker name must be letters, digits and . _ + - only; got {name!r}.")
    if isinstance(spec, Chunker):
        return spec if name is None else replace(spec, name=name)
    if isinstance(spec, str):
        return _by_name(spec.strip(), name)
    return _of_object(spec, name)


def _by_name(spec: str, name: str | None) -> Chunker:
    m = _BUILTIN.match(spec)
    if m is not None:
        if name is not None and name != spec:
            raise RagcovError(f"the built-in chunking {spec!r} keeps its own name; drop name={name!r}.")
        if spec.startswith("words"):
            kw = {"chunking": "words", "chunk_words": int(m.group(1))}
        elif spec.startswith("dispositivo"):
            kw = {"chunking": "dispositivo", "max_words": int(m.group(2)) if m.group(2) else None}
        else:
            kw = {"chunking": "article"}
        return Chunker(spec, builtin=kw, rule="built-in")
    m = _EXTERNAL.match(spec)
    if m is not None:
        kind, n = m.group(1), int(m.group(2))
        if n < 1:
            raise RagcovError(f"chunker {spec!r}: the size must be at least 1.")
        return _external(kind, n, name or spec)
    if ":" in spec:
        module, _, attr = spec.partition(":")
        try:
            obj = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise RagcovError(f"chunker {spec!r}: cannot import {attr!r} from module {module!r} ({exc}).") from None
        return _of_object(obj, name or re.sub(r"[^A-Za-z0-9_.+-]", "-", spec))
    raise RagcovError(f"unknown chunker {spec!r}; accepted: words-N, dispositivo[-N], article, "
                      f"{', '.join(EXTERNAL)} (the [chunkers] extra: {PIP}), or module:attr of a callable.")


def _need(module: str, pip_name: str, spec: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise RagcovError(f"chunker {spec!r} needs the package {pip_name!r}, which is not installed; install the "
                          f"chunkers extra: {PIP} (or pip install {pip_name}).") from None


def _count_words(text: str) -> int:
    return len(text.split())


def _external(kind: str, n: int, name: str) -> Chunker:
    key = f"{kind}-N"
    module, pip_name, rule = EXTERNAL[key]
    lib = _need(module, pip_name, f"{kind}-{n}")
    version = f"{pip_name}=={_version(pip_name)}"
    rule = rule.replace("=N", f"={n}")
    if kind == "recursive":
        splitter = lib.RecursiveCharacterTextSplitter(chunk_size=n, chunk_overlap=0)
        return Chunker(name, split=splitter.split_text, rule=rule, version=version)
    if kind == "chonkie-sentence":
        chunker = lib.SentenceChunker(tokenizer="word", chunk_size=n, chunk_overlap=0)
        return Chunker(name, split=chunker.chunk, rule=rule, version=version)
    semchunker = lib.chunkerify(_count_words, n)
    return Chunker(name, split=_semchunk_split(semchunker), rule=rule, version=version)


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def _semchunk_split(chunker: Any) -> Callable[[str], list]:
    """A semchunk chunker asked for offsets: its chunks as ``(text, start, end)`` triples."""
    def split(text: str) -> list:
        chunks, offsets = chunker(text, offsets=True)
        return [(c, int(a), int(b)) for c, (a, b) in zip(chunks, offsets)]
    return split


def _of_object(obj: Any, name: str | None) -> Chunker:
    kind = type(obj).__module__.split(".")[0]
    if callable(getattr(obj, "split_text", None)):
        split, rule = obj.split_text, f"{type(obj).__name__}.split_text"
    elif kind == "semchunk" and callable(obj):
        split, rule = _semchunk_split(obj), f"semchunk {type(obj).__name__}"
    elif callable(getattr(obj, "chunk", None)) and not inspect.isroutine(obj):
        split, rule = obj.chunk, f"{type(obj).__name__}.chunk"
    elif callable(obj):
        split, rule = obj, f"callable {getattr(obj, '__qualname__', type(obj).__name__)}"
    else:
        raise RagcovError(f"{type(obj).__name__!r} is not a chunker: give a name (words-N, recursive-N ...), a "
                          "callable text -> list[str] | list[(start, end)], or an object with split_text "
                          "(LangChain), chunk (chonkie) or a semchunk chunker.")
    found = _version(kind) if kind not in ("builtins", "__main__") else "?"
    version = f"{kind}=={found}" if found != "?" else ""  # an installed library's version keys the cache
    return Chunker(name or _derived_name(obj), split=split, rule=rule, version=version)


def _derived_name(obj: Any) -> str:
    """Function or class name plus ``chunk_size``/``chunk_overlap`` when the object has them."""
    base = getattr(obj, "__name__", None) if inspect.isroutine(obj) else type(obj).__name__
    base = (base or type(obj).__name__).replace("<lambda>", "lambda")
    params = []
    for attr in ("chunk_size", "_chunk_size", "chunk_overlap", "_chunk_overlap"):
        v = getattr(obj, attr, None)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            params.append(str(v))
    return re.sub(r"[^A-Za-z0-9_.+-]", "-", "-".join([base, *params]))


# --------------------------------------------------------------------------- registry (names -> chunkers)

_REGISTRY: dict[str, Chunker] = {}
_BY_KEY: dict[str, Chunker] = {}


def register(chunker: Chunker) -> str:
    """Keep ``chunker`` under its name for builders that carry only the name in their config (the last one
    registered under a name wins) and under its :attr:`Chunker.key` (:func:`by_key`, what builds a task)."""
    _REGISTRY[chunker.name] = chunker
    _BY_KEY[chunker.key] = chunker
    return chunker.name


def by_key(key: str, name: str) -> Chunker:
    """The chunker registered with cache key ``key`` (its behaviour), else the one registered as ``name``."""
    return _BY_KEY.get(key) or registered(name)


def with_behaviour(chunker: Chunker, documents: Sequence[Any]) -> Chunker:
    """``chunker`` keyed by what it does: :attr:`Chunker.behaviour` is a sha256 of the spans it returns on
    each of ``documents`` (objects with ``doc_id`` and ``text``), so its :attr:`Chunker.key` changes when its
    output does, whatever its name. The spans are kept (``memo``): building the task does not cut again.

    Raises
    ------
    RagcovError
        As :func:`spans`, for the first act the chunker cannot cut.
    """
    h = hashlib.sha256()
    for doc in documents:
        h.update(f"{doc.doc_id}\0".encode())
        h.update(np.asarray(spans(chunker, doc.text, doc.doc_id), dtype=np.int64).tobytes())
        h.update(b"\1")
    return replace(chunker, behaviour=h.hexdigest()[:16])


def registered(name: str) -> Chunker:
    """The chunker registered (or resolvable by name) as ``name``."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    return resolve(name)


# --------------------------------------------------------------------------- spans of an act


def spans(chunker: Chunker, text: str, act: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the chunks of ``text`` (the act ``act``) under an external chunker.

    Raises
    ------
    RagcovError
        A chunk not found in the act (rewritten or dropped text), a span out of bounds or blank, output of
        mixed or unknown shape; each names the chunker, the act and the chunk.
    """
    if chunker.split is None:
        raise RagcovError(f"chunker {chunker.name!r} is a built-in cut; build it with the task's chunking.")
    if (act, text) not in chunker.memo:
        chunker.memo[(act, text)] = _spans(chunker, text, act)
    return list(chunker.memo[(act, text)])


def _returned(chunker: Chunker, out: Any, act: str) -> list:
    """The chunks a chunker returned, as a list: a list or tuple (or None: no chunk); any other return,
    a ``str`` above all (whose items would be its characters), is refused naming its type."""
    if out is None:
        return []
    if isinstance(out, (list, tuple, types.GeneratorType)):
        return list(out)
    raise RagcovError(f"chunker {chunker.name!r} returned a {type(out).__name__} for act {act!r}, not a list of "
                      "chunks: a chunker must return a list of strings (pieces of the act's text) or of integer "
                      f"(start, end) character spans, e.g. [text[0:500], text[500:1000]] or [(0, 500), (500, 1000)]"
                      f"{'; a str return would make every character a chunk' if isinstance(out, str) else ''}.")


def _spans(chunker: Chunker, text: str, act: str) -> list[tuple[int, int]]:
    try:
        out = chunker.split(text)
    except RagcovError:
        raise
    except Exception as exc:
        raise RagcovError(f"chunker {chunker.name!r} failed on act {act!r}: {type(exc).__name__}: {exc}") from exc
    items = _returned(chunker, out, act)
    if not items:
        if text.strip():
            raise RagcovError(f"chunker {chunker.name!r} returned no chunk for act {act!r} ({len(text)} characters).")
        return []
    kinds = {_kind(x) for x in items}
    if len(kinds) != 1 or None in kinds:
        bad = next((x for x in items if _kind(x) is None), items[0])
        if _kind(bad) is None:
            _refuse_number_offsets(chunker.name, act, items, bad)
        raise RagcovError(f"chunker {chunker.name!r} on act {act!r}: chunks must all be strings, (start, end) "
                          f"pairs or chunk objects with .text; got {type(bad).__name__} {_excerpt(repr(bad))!r}"
                          f"{' mixed with other kinds' if len(kinds) > 1 else ''}.")
    kind = kinds.pop()
    if kind == "span":
        return _given(items, text, act, chunker.name)
    if kind == "text":
        return locate(text, [str(x) for x in items], act=act, chunker=chunker.name)
    hinted = [_hint(x) for x in items]
    return locate(text, [t for t, _ in hinted], act=act, chunker=chunker.name, hints=[h for _, h in hinted])


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _refuse_number_offsets(name: str, act: str, items: Sequence[Any], bad: Any) -> None:
    """A span or (text, start, end) whose offsets are numbers but not integers (``(0.0, 12.0)``, ``12.5``): said
    as that, not as a chunk of unknown shape."""
    if not isinstance(bad, (tuple, list)) or len(bad) not in (2, 3):
        return
    offsets = list(bad[-2:])
    if len(bad) == 3 and not isinstance(bad[0], str):
        return
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in offsets):
        i = next(j for j, x in enumerate(items) if x is bad)
        kind = ", ".join(sorted({type(v).__name__ for v in offsets if not _is_int(v)}))
        whole = all(float(v).is_integer() for v in offsets)
        raise RagcovError(f"chunker {name!r} on act {act!r}: chunk {i} {_excerpt(repr(tuple(bad)))!r} gives its "
                          f"character offsets as {kind}; offsets are integers (a character's position in the act)"
                          + (": return int(start), int(end)." if whole else
                             ", and these are not whole numbers: compute them in characters, e.g. text.find(piece)."))


def _kind(x: Any) -> str | None:
    if isinstance(x, str):
        return "text"
    if isinstance(x, (tuple, list)):
        if len(x) == 2 and all(_is_int(v) for v in x):
            return "span"
        if len(x) == 3 and isinstance(x[0], str) and _is_int(x[1]) and _is_int(x[2]):
            return "object"
        return None
    return "object" if isinstance(getattr(x, "text", None), str) else None


def _hint(x: Any) -> tuple[str, tuple[int, int] | None]:
    """A chunk object's text and its claimed span (chonkie ``start_index``/``end_index``) if it has one."""
    if isinstance(x, tuple):
        return x[0], (int(x[1]), int(x[2]))
    a, b = getattr(x, "start_index", None), getattr(x, "end_index", None)
    return x.text, ((int(a), int(b)) if _is_int(a) and _is_int(b) else None)


def _given(items: Sequence[Any], text: str, act: str, name: str) -> list[tuple[int, int]]:
    out = []
    for i, (a, b) in enumerate(items):
        a, b = int(a), int(b)
        if not 0 <= a < b <= len(text):
            raise RagcovError(f"chunker {name!r} on act {act!r}: span {i} ({a}, {b}) is out of bounds; a span must "
                              f"satisfy 0 <= start < end <= {len(text)} (the act's length in characters).")
        if not text[a:b].strip():
            raise RagcovError(f"chunker {name!r} on act {act!r}: span {i} ({a}, {b}) holds only whitespace.")
        out.append((a, b))
    return out


def _excerpt(s: str) -> str:
    s = " ".join(s.split())
    return s if len(s) <= _EXCERPT else s[:_EXCERPT] + "..."


@dataclass
class _Flat:
    """An act without its whitespace, and where each remaining character sits in the act."""

    flat: str
    pos: np.ndarray


def _flatten(text: str) -> _Flat:
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    keep = ~np.isin(codes, _space_codes())
    flat = "".join(text.split())
    pos = np.flatnonzero(keep)
    if len(pos) != len(flat):  # pragma: no cover - str.split and str.isspace agree by definition
        raise RagcovError("internal: whitespace tables disagree")
    return _Flat(flat, pos)


_SPACES: np.ndarray | None = None


def _space_codes() -> np.ndarray:
    global _SPACES
    if _SPACES is None:
        _SPACES = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)
    return _SPACES


def locate(text: str, chunks: Sequence[str], *, act: str = "?", chunker: str = "?",
           hints: Sequence[tuple[int, int] | None] | None = None) -> list[tuple[int, int]]:
    """Character spans of ``chunks`` in ``text`` (:data:`LOCATE_RULE`).

    ``hints``: a span claimed for each chunk (chunk objects); used as given when the act's text over it
    equals the chunk's text ignoring whitespace, else the chunk is located like a string.
    """
    f = _flatten(text)
    out: list[tuple[int, int]] = []
    prev_start, prev_end = -1, 0  # the previous chunk in flat (whitespace-free) coordinates
    for i, chunk in enumerate(chunks):
        piece = "".join(chunk.split())
        if not piece:
            continue
        hint = hints[i] if hints is not None else None
        if hint is not None and 0 <= hint[0] < hint[1] <= len(text) and "".join(text[hint[0]:hint[1]].split()) == piece:
            out.append(hint)
            prev_start = int(np.searchsorted(f.pos, hint[0]))
            prev_end = prev_start + len(piece)
            continue
        if f.flat.startswith(piece, prev_end):
            at = prev_end
        else:
            at = f.flat.find(piece, prev_start + 1)
        if at < 0:
            where = " (it occurs earlier in the act: chunks must come in the order of the text)" \
                if f.flat.find(piece) >= 0 else ""
            raise RagcovError(
                f"chunker {chunker!r}: chunk {i} is not in act {act!r}{where}: {_excerpt(chunk)!r}. A chunker must "
                "return pieces of the act's text (whitespace may differ) or character spans; one that rewrites "
                "or drops characters cannot be located.")
        out.append((int(f.pos[at]), int(f.pos[at + len(piece) - 1]) + 1))
        prev_start, prev_end = at, at + len(piece)
    return out


def uncovered_characters(text: str, spans_: Sequence[tuple[int, int]]) -> int:
    """Non-space characters of ``text`` inside no span (text a chunker left out of every chunk)."""
    covered = np.zeros(len(text) + 1, dtype=np.int32)
    for a, b in spans_:
        covered[a] += 1
        covered[b] -= 1
    inside = np.cumsum(covered[:-1]) > 0
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    return int((~inside & ~np.isin(codes, _space_codes())).sum())
