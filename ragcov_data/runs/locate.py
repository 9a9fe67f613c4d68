"""Where a returned passage sits in the task's documents (:data:`LOCATE_RULE`).

A pipeline returns passages of text, not ragcov's chunk ids, and the offsets it reports cannot be trusted
blindly (some splitters report ``start_index = -1`` or shifted offsets). Each passage is located on the task's
character line (:mod:`ragcov_data.runs.line`) in four steps, the first that succeeds deciding:

1. **search**: every place where the passage's non-space characters (NFC) occur, through one Aho–Corasick
   automaton (``pyahocorasick``) over the passages' first characters, each candidate checked in full. A place is
   **exact** when the document's text over it equals the passage (leading and trailing whitespace aside), else
   **tolerant** (the passage differs in whitespace, Unicode normalisation or invisible format characters only:
   :data:`FORMAT_CHARACTERS`, the soft hyphen, zero-width space, ZWNJ, ZWJ, byte-order mark, word joiner and the
   direction marks, which text extraction adds or drops, are read like whitespace);
2. **hints**: with several places, the one in the hinted document (``doc_id``) nearest the hinted
   ``start_char`` decides, else the first in document order; the passage is **ambiguous** either way;
3. **fuzzy**: a passage found nowhere is matched approximately: eight 16-character pieces of it (seeds) found
   exactly vote for a region, the seeds agreeing on it bound the span (from the first seed back to the passage's
   start, from the last on to its end), and ``rapidfuzz``'s ratio (normalised Indel similarity, on non-space
   characters) of passage and span must reach :data:`FUZZY_THRESHOLD` of 100;
4. else it is **unlocated**: it keeps its words in a context budget and holds no document's characters.

A hint (``doc_id`` with ``start_char`` and, optionally, ``end_char``) whose offsets hold the passage exactly is used
as given.

Locating is the costly step of scoring a passage run, and one run is often scored several times in a session
(``evaluate``, then ``compare`` and ``leaderboard`` beside other runs): the last :data:`MEMO_SIZE` locations are kept
in memory, keyed by the sha256 of the passages and hints and by the line itself, and each caller gets its own copy.
"""
from __future__ import annotations

import copy
import hashlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ragcov_data.errors import RagcovError
from ragcov_data.runs.line import CharacterLine, flat_text

__all__ = ["Located", "locate_passages", "clear_memo", "LOCATE_RULE", "FUZZY_THRESHOLD", "HOW", "PASSAGES_EXTRA",
           "FORMAT_CHARACTERS", "MAX_ALTERNATIVES"]

#: rapidfuzz ratio (0-100, normalised Indel similarity on non-space characters) at or above which a passage is
#: located fuzzily.
FUZZY_THRESHOLD = 90.0
#: How a passage was located, best first.
HOW = ("exact", "tolerant", "fuzzy", "unlocated")
#: The optional extra that brings the matchers.
PASSAGES_EXTRA = "pip install 'ragcov-data[passages]'"
_ANCHOR = 64  # non-space characters of a passage the automaton searches for
_SEED = 16  # characters of each fuzzy seed
_SEEDS = 8  # seeds a passage
_MAX_PLACES = 1000  # places kept per passage (all are counted)
#: Places of an unplaced ambiguous passage listed in :attr:`Located.alternatives` (more: None).
MAX_ALTERNATIVES = 32
#: Invisible format characters read like whitespace when locating (a fixed list, the same in every Python): soft
#: hyphen, Arabic letter mark, Mongolian vowel separator, zero-width space, ZWNJ, ZWJ, left-to-right and right-to-left
#: marks, the bidirectional embeddings, overrides and isolates, word joiner, the invisible operators, byte-order mark.
FORMAT_CHARACTERS = ("\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                     "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff")
_FORMAT_RE = re.compile(f"[{FORMAT_CHARACTERS}]")
_NO_FORMAT = {ord(c): None for c in FORMAT_CHARACTERS}

LOCATE_RULE = (
    "each passage is located in the task's documents by its non-space characters in NFC: exact where the "
    "document's text equals the passage (outer whitespace aside), tolerant where only whitespace, Unicode "
    "normalisation or invisible format characters (soft hyphen, zero-width space, ZWNJ, ZWJ, byte-order mark, word "
    "joiner, direction marks: read like whitespace) differ; found in several places, the hinted document and "
    "start_char decide, else the first place (the passage counts as ambiguous); found nowhere, a fuzzy match (the "
    "span 16-character seeds found exactly bound, rapidfuzz ratio >= "
    f"{FUZZY_THRESHOLD:g} on non-space characters); else unlocated "
    "(its words count in a context budget, it holds no document's characters); a hint whose offsets hold the "
    "passage exactly is used as given"
)


@dataclass
class Located:
    """Where each passage was found, one entry per passage (arrays aligned with the passages given).

    ``doc`` is the document's index in the line (-1: unlocated); ``start``/``end`` its span on the line (-1);
    ``how`` one of :data:`HOW`; ``places`` how many places the passage occurs at (exact or tolerant search);
    ``hinted`` whether a hint decided (its offsets held the passage, or its document and start chose among
    several places); ``score`` the match score (100 where found by search, the fuzzy ratio where fuzzy, else 0).
    ``alternatives``: for each passage found in several places that no hint placed (its place is the first), the
    line spans of every place (an ``(m, 2)`` array), or None where it has more than :data:`MAX_ALTERNATIVES`.
    """

    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    how: np.ndarray
    places: np.ndarray
    hinted: np.ndarray
    score: np.ndarray
    alternatives: dict[int, np.ndarray | None] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.doc)

    def shares(self) -> dict[str, float]:
        """Shares of the passages located exactly, tolerantly, fuzzily, not at all, and ambiguously."""
        n = max(len(self), 1)
        out = {h: float((self.how == h).sum() / n) for h in HOW}
        out["ambiguous"] = float((self.places >= 2).sum() / n)
        out["hinted"] = float(self.hinted.sum() / n)
        return out


def _need(module: str) -> Any:
    try:
        return __import__(module)
    except ImportError as exc:  # pragma: no cover - the extra is installed wherever the tests run
        raise RagcovError(f"locating passages needs the `{module}` package: {PASSAGES_EXTRA}.") from exc


def _key(text: str) -> str:
    """What a passage is searched by: its non-space characters in NFC, without :data:`FORMAT_CHARACTERS`."""
    flat = flat_text(text)
    # str.translate reads a dict per character (about 3 s on 51 M characters); a regex scan finds none far faster
    return flat.translate(_NO_FORMAT) if _FORMAT_RE.search(flat) else flat


@dataclass(frozen=True)
class _View:
    """The line as passages are searched on it: ``flat`` without :data:`FORMAT_CHARACTERS`, ``pos`` each kept
    character's line position (the line's own ``flat``/``pos`` where it holds none)."""

    flat: str
    pos: np.ndarray


def _view(line: CharacterLine) -> _View:
    if _FORMAT_RE.search(line.flat) is None:
        return _View(line.flat, line.pos)
    drop = np.fromiter((m.start() for m in _FORMAT_RE.finditer(line.flat)), np.int64)
    return _View(_FORMAT_RE.sub("", line.flat), np.delete(line.pos, drop))


def _anchor(text: str) -> str:
    """The first :data:`_ANCHOR` characters of :func:`_key` of ``text`` (all of them in a shorter one)."""
    n = 4 * _ANCHOR
    while True:
        a = _key(text[:n])
        if len(a) >= _ANCHOR or n >= len(text):
            return a[:_ANCHOR]
        n *= 4


@dataclass
class _Places:
    """Where one (unique) passage occurs: flat indices, whether each is exact, and the full count."""

    at: list[int] = field(default_factory=list)
    exact: list[bool] = field(default_factory=list)
    count: int = 0


def _search(texts: Sequence[str], line: CharacterLine, view: _View) -> list[_Places]:
    """Every place each (unique, stripped, non-empty) passage occurs on the line. A candidate found by its anchor
    is checked against the document's text first (exact: one comparison, no normalising), then, only if that
    fails, on non-space characters (tolerant)."""
    ahocorasick = _need("ahocorasick")
    auto = ahocorasick.Automaton()
    by_anchor: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        by_anchor.setdefault(_anchor(t), []).append(i)
    for anchor, members in by_anchor.items():
        auto.add_word(anchor, (len(anchor), members))
    auto.make_automaton()
    found = [_Places() for _ in texts]
    flats: dict[int, str] = {}
    hay, pos = view.flat, view.pos
    for end, (n, members) in auto.iter(hay):
        at = end - n + 1
        p = int(pos[at])
        d = line.doc_at(p)
        body, off = line.texts[d], line.offsets[line.doc_ids[d]]
        for i in members:
            exact = body.startswith(texts[i], p - off)
            if not exact:
                f = flats.get(i)
                if f is None:
                    f = flats[i] = _key(texts[i])
                if not (len(f) <= n or hay.startswith(f, at)):
                    continue
            pl = found[i]
            pl.count += 1
            if len(pl.at) < _MAX_PLACES:
                pl.at.append(at)
                pl.exact.append(exact)
    return found


def _choose(places: _Places, doc_hint: str | None, start_hint: int | None, line: CharacterLine,
            view: _View) -> tuple[int, bool]:
    """Which of ``places`` to use (its position in the list: the hint's document and start decide, else the
    first) and whether the hint decided."""
    at = places.at
    if len(at) == 1 or doc_hint is None or doc_hint not in line.offsets:
        return 0, False
    d = line.index[doc_hint]
    lo = line.offsets[doc_hint]
    hi = lo + len(line.texts[d])
    pos = view.pos[np.asarray(at)]
    inside = np.flatnonzero((pos >= lo) & (pos < hi))
    if not len(inside):
        return 0, False
    if start_hint is None:
        return int(inside[0]), True
    return int(inside[np.argmin(np.abs(pos[inside] - (lo + start_hint)))]), True


def _hint_holds(text: str, doc_hint: Any, s: Any, e: Any, line: CharacterLine) -> tuple[int, int] | None:
    """The hinted span on the line when the document's text over it equals ``text`` (a stripped passage; the
    document's outer whitespace over the span aside)."""
    if doc_hint is None or s is None or str(doc_hint) not in line.offsets:
        return None
    doc_hint = str(doc_hint)
    d = line.index[doc_hint]
    body = line.texts[d]
    s, e = _int_or_none(s), _int_or_none(e)
    if s is not None and e is None:  # a start offset only (LangChain's start_index): the passage runs from it
        e = s + len(text)
    if s is None or not (0 <= s < e <= len(body)) or body[s:e].strip() != text:
        return None
    lead = len(body[s:e]) - len(body[s:e].lstrip())
    trail = len(body[s:e]) - len(body[s:e].rstrip())
    off = line.offsets[doc_hint]
    return off + s + lead, off + e - trail


def _fuzzy(todo: list[int], flats: Mapping[int, str], view: _View, threshold: float
           ) -> dict[int, tuple[int, int, float]]:
    """``{i: (flat start, flat length, score)}`` of the passages ``todo`` matched approximately."""
    if not todo:
        return {}
    fuzz = _need("rapidfuzz").fuzz
    ahocorasick = _need("ahocorasick")
    auto = ahocorasick.Automaton()
    seeds: dict[str, list[tuple[int, int]]] = {}
    for i in todo:
        f = flats[i]
        if len(f) < 2 * _SEED:
            continue
        for off in np.linspace(0, len(f) - _SEED, _SEEDS).astype(int):
            seeds.setdefault(f[off:off + _SEED], []).append((i, int(off)))
    if not seeds:
        return {}
    for s, members in seeds.items():
        auto.add_word(s, members)
    auto.make_automaton()
    hits: dict[str, list[int]] = {}
    for end, members in auto.iter(view.flat):
        seed = view.flat[end - _SEED + 1:end + 1]
        hits.setdefault(seed, []).append(end - _SEED + 1)
    votes: dict[int, dict[int, float]] = {}
    marks: dict[int, dict[int, list[tuple[int, int]]]] = {}  # per passage and region: (seed offset, place)
    for seed, at in hits.items():  # a seed found in many places says little: its vote is split among them
        for i, off in seeds[seed]:
            width = max(len(flats[i]) // 4, 1)
            v, m = votes.setdefault(i, {}), marks.setdefault(i, {})
            for a in at[:_MAX_PLACES]:
                b = (a - off) // width
                v[b] = v.get(b, 0.0) + 1.0 / len(at)
                m.setdefault(b, []).append((off, a))
    seps = np.flatnonzero(np.frombuffer(view.flat.encode("utf-32-le"), dtype=np.uint32) == 0)
    out: dict[int, tuple[int, int, float]] = {}
    for i, v in votes.items():
        best: tuple[int, int, float] | None = None
        for bucket in sorted(v, key=lambda b: (-v[b], b))[:3]:  # the three regions most seeds point to
            got = _align(flats[i], marks[i][bucket], view.flat, seps, fuzz, threshold)
            if got is not None and (best is None or got[2] > best[2]):
                best = got
        if best is not None:
            out[i] = best
    return out


def _align(f: str, marks: list[tuple[int, int]], hay: str, seps: np.ndarray, fuzz: Any, threshold: float
           ) -> tuple[int, int, float] | None:
    """The span the seeds ``marks`` (offset in ``f``, place on the line) bound — from the first seed's place back
    to the passage's start, to the last seed's place on to its end, inside one document — and its similarity to
    ``f`` (rapidfuzz's normalised Indel ratio): (flat start, flat length, score), or None below ``threshold``."""
    first = min(marks)
    last = max(marks)
    lo, hi = first[1] - first[0], last[1] + (len(f) - last[0])
    k = int(np.searchsorted(seps, first[1]))  # keep the span inside the seeds' document
    lo = max(lo, int(seps[k - 1]) + 1 if k > 0 else 0)
    hi = min(hi, int(seps[k]) if k < len(seps) else len(hay))
    if hi - lo < len(f) // 2:
        return None
    score = float(fuzz.ratio(f, hay[lo:hi], score_cutoff=threshold))
    return (lo, hi - lo, score) if score >= threshold else None


def locate_passages(texts: Sequence[str], line: CharacterLine, *, doc_hints: Sequence[Any] | None = None,
                    start_hints: Sequence[Any] | None = None, end_hints: Sequence[Any] | None = None,
                    fuzzy_threshold: float = FUZZY_THRESHOLD) -> Located:
    """Locate every passage on ``line`` (:data:`LOCATE_RULE`).

    Parameters
    ----------
    texts : sequence of str
        The passages' texts (each with at least one non-space character).
    line : CharacterLine
        The task's documents (:func:`ragcov_data.runs.line.character_line`).
    doc_hints, start_hints, end_hints : sequences, optional
        Per passage: the document id and character offsets its pipeline reported (None where not given).
    fuzzy_threshold : float
        Partial-ratio score (0-100) a fuzzy match needs.

    Returns
    -------
    Located
    """
    key = _memo_key(texts, doc_hints, start_hints, end_hints, fuzzy_threshold)
    with _MEMO_LOCK:
        hit = _MEMO.get(key)
        if hit is not None and hit[0] is line:  # the same line object: character_line caches lines by content
            _MEMO.move_to_end(key)
            return copy.deepcopy(hit[1])
    out = _locate(texts, line, doc_hints, start_hints, end_hints, fuzzy_threshold)
    with _MEMO_LOCK:
        _MEMO[key] = (line, copy.deepcopy(out))
        while len(_MEMO) > MEMO_SIZE:
            _MEMO.popitem(last=False)
    return out


#: Locations kept in memory (see the module docstring).
MEMO_SIZE = 8
_MEMO: OrderedDict[str, tuple[CharacterLine, Located]] = OrderedDict()
_MEMO_LOCK = threading.Lock()


def clear_memo() -> None:
    """Forget every kept location (a benchmark timing the locator itself, or a caller freeing the memory)."""
    with _MEMO_LOCK:
        _MEMO.clear()


def _memo_key(texts: Sequence[str], *rest: Any) -> str:
    """sha256 of the passages' texts, the hints and the threshold (what a location depends on besides the line)."""
    h = hashlib.sha256()
    for t in texts:  # each text led by its length: no two lists of texts hash alike
        b = str(t).encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    h.update(repr([None if r is None else [str(x) for x in r] for r in rest[:3]] + [float(rest[3])]).encode())
    return h.hexdigest()


def _locate(texts: Sequence[str], line: CharacterLine, doc_hints: Sequence[Any] | None,
            start_hints: Sequence[Any] | None, end_hints: Sequence[Any] | None, fuzzy_threshold: float) -> Located:
    """:func:`locate_passages` without the memo."""
    n = len(texts)
    hints = [list(h) if h is not None else [None] * n for h in (doc_hints, start_hints, end_hints)]
    stripped = [str(t).strip() for t in texts]
    empty = [i for i, t in enumerate(stripped) if not t]
    if empty:
        raise RagcovError(f"passage {empty[0]} has no text to locate (empty or whitespace only).")
    uniq: dict[str, int] = {}
    idx = np.fromiter((uniq.setdefault(t, len(uniq)) for t in stripped), np.int64, n)
    keys = list(uniq)
    view = _view(line)
    found = _search(keys, line, view)
    out = Located(*(np.full(n, -1, dtype=np.int64) for _ in range(3)), np.full(n, "unlocated", dtype=object),
                  np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool), np.zeros(n, dtype=float))
    todo: dict[int, list[int]] = {}
    for i in range(n):
        pl = found[idx[i]]
        out.places[i] = pl.count
        held = _hint_holds(stripped[i], *(h[i] for h in hints), line)
        if held is not None:
            (s, e), exact, out.hinted[i] = held, True, True
        elif pl.count:
            k, out.hinted[i] = _choose(pl, hints[0][i], _int_or_none(hints[1][i]), line, view)
            s, e = _span(pl, k, stripped[i], view)
            exact = pl.exact[k]
            if pl.count >= 2 and not out.hinted[i]:
                out.alternatives[i] = _spans(pl, stripped[i], view)
        else:
            todo.setdefault(int(idx[i]), []).append(i)
            continue
        out.doc[i], out.start[i], out.end[i] = line.doc_at(s), s, e
        out.how[i], out.score[i] = ("exact" if exact else "tolerant"), 100.0
    got = _fuzzy(list(todo), {u: _key(keys[u]) for u in todo}, view, fuzzy_threshold)
    for u, members in todo.items():
        if u in got:
            at, length, sc = got[u]
            s, e = int(view.pos[at]), int(view.pos[at + length - 1]) + 1
            for i in members:
                out.doc[i], out.start[i], out.end[i], out.how[i], out.score[i] = line.doc_at(s), s, e, "fuzzy", sc
    return out


def _span(pl: _Places, k: int, text: str, view: _View) -> tuple[int, int]:
    """The line span of place ``k`` of a (stripped) passage."""
    at = pl.at[k]
    s = int(view.pos[at])
    return s, (s + len(text) if pl.exact[k] else int(view.pos[at + len(_key(text)) - 1]) + 1)


def _spans(pl: _Places, text: str, view: _View) -> np.ndarray | None:
    """Every place of a passage as line spans (distinct, in line order), or None beyond :data:`MAX_ALTERNATIVES`."""
    if pl.count > MAX_ALTERNATIVES:
        return None
    return np.unique(np.asarray([_span(pl, k, text, view) for k in range(len(pl.at))], dtype=np.int64), axis=0)


def _int_or_none(v: Any) -> int | None:
    try:
        return None if v is None or (isinstance(v, float) and np.isnan(v)) else int(v)
    except (TypeError, ValueError):
        return None
