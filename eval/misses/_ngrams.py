"""Word n-gram sets of many texts at once, as sorted int64 hashes (numpy only, no Python loop per n-gram).

Words are whitespace tokens, casefolded (the task's own word rule, so a chunk's n-grams are the n-grams
of its words). Each distinct word gets an integer id (``pandas.factorize``); an n-gram is hashed by a
polynomial over its word ids in wrapping 64-bit arithmetic, then mixed (splitmix64 finaliser). With a few
hundred thousand distinct n-grams the chance of any collision is below 1e-8; a collision could only
merge two n-grams, never split one.

:class:`NgramSets` holds, for every text, the *set* of its n-gram hashes (sorted, unique) in one flat
array with offsets, and answers the two questions the miss analysis asks, vectorised over pairs or texts:
the Jaccard similarity of two texts' sets, and the share of a text's n-grams that are common across
documents.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

_MULT = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit constant (golden ratio)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: spreads the polynomial hash over all 64 bits."""
    h = h ^ (h >> np.uint64(30))
    h = h * _M1
    h = h ^ (h >> np.uint64(27))
    h = h * _M2
    return h ^ (h >> np.uint64(31))


@dataclass(frozen=True)
class NgramSets:
    """The n-gram set of each of ``len(offsets) - 1`` texts: ``hashes[offsets[i]:offsets[i+1]]``, sorted."""

    hashes: np.ndarray  # int64
    offsets: np.ndarray  # int64, length n_texts + 1
    n: int

    @property
    def sizes(self) -> np.ndarray:
        """Number of distinct n-grams of each text (0 for a text shorter than ``n`` words)."""
        return np.diff(self.offsets)

    def owner(self) -> np.ndarray:
        """Text index of every entry of :attr:`hashes`."""
        return np.repeat(np.arange(len(self.offsets) - 1), self.sizes)

    def jaccard(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``|A ∩ B| / |A ∪ B|`` for the pairs of texts ``(a[i], b[i])``; nan when both sets are empty."""
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        sa, sb = self.sizes[a], self.sizes[b]
        take = np.concatenate([_ranges(self.offsets[a], sa), _ranges(self.offsets[b], sb)])
        pair = np.concatenate([np.repeat(np.arange(len(a)), sa), np.repeat(np.arange(len(b)), sb)])
        h = self.hashes[take]
        order = np.lexsort((h, pair))
        hp, pp = h[order], pair[order]
        dup = (hp[1:] == hp[:-1]) & (pp[1:] == pp[:-1])  # each set is unique, so a repeat is a shared n-gram
        inter = np.bincount(pp[1:][dup], minlength=len(a)).astype(float)
        union = (sa + sb).astype(float) - inter
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(union > 0, inter / union, np.nan)

    def document_frequency(self, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(distinct hashes, number of distinct documents holding each)``; ``docs[i]`` is text i's document."""
        codes = pd.factorize(pd.Series(np.asarray(docs)), sort=False)[0].astype(np.int64)
        own = codes[self.owner()]
        order = np.lexsort((own, self.hashes))
        h, d = self.hashes[order], own[order]
        new_pair = np.ones(len(h), dtype=bool)
        new_pair[1:] = (h[1:] != h[:-1]) | (d[1:] != d[:-1])
        uh, first = np.unique(h[new_pair], return_index=True)
        counts = np.diff(np.append(first, int(new_pair.sum())))
        return uh, counts

    def common_share(self, docs: np.ndarray, min_docs: int) -> np.ndarray:
        """For every text, the share of its n-grams found in at least ``min_docs`` distinct documents
        (nan for a text with no n-gram)."""
        uh, counts = self.document_frequency(docs)
        common = counts[np.searchsorted(uh, self.hashes)] >= min_docs
        sizes = self.sizes
        n_common = np.bincount(self.owner(), weights=common.astype(float), minlength=len(sizes))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(sizes > 0, n_common / np.maximum(sizes, 1), np.nan)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for every (s, l), vectorised."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    base = np.repeat(starts - (ends - lengths), lengths)
    return base + np.arange(total, dtype=np.int64)


def ngram_sets(texts: Sequence[str], n: int = 5) -> NgramSets:
    """The set of casefolded whitespace-word ``n``-grams of every text, hashed to int64."""
    if n < 1:
        raise ValueError(f"`n` must be >= 1; got {n}.")
    words = [t.casefold().split() for t in texts]
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    flat = [w for ws in words for w in ws]
    ids = pd.factorize(pd.Series(flat, dtype=object), sort=False)[0].astype(np.uint64) + np.uint64(1)
    starts = np.cumsum(lengths) - lengths
    n_grams = np.maximum(lengths - n + 1, 0)
    pos = _ranges(starts, n_grams)  # first word of every n-gram, inside its own text
    h = np.zeros(len(pos), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(n):
            h = h * _MULT + ids[pos + j]
        h = _mix(h).view(np.int64)
    owner = np.repeat(np.arange(len(texts)), n_grams)
    # sets: unique (owner, hash) pairs, sorted by owner then hash
    order = np.lexsort((h, owner))
    h, owner = h[order], owner[order]
    keep = np.ones(len(h), dtype=bool)
    keep[1:] = (h[1:] != h[:-1]) | (owner[1:] != owner[:-1])
    h, owner = h[keep], owner[keep]
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.bincount(owner, minlength=len(texts)))
    return NgramSets(hashes=h, offsets=offsets, n=n)
