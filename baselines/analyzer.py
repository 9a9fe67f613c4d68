"""The one tokenizer shared by BM25 and TF-IDF, so both see the same terms for corpus and queries.

Steps, in order:

1. Unicode NFKC normalisation (compatibility forms fold: ``"ﬁ"`` -> ``"fi"``, ``"²"`` -> ``"2"``, and the
   ordinal indicators ``"º"``/``"ª"`` become the letters ``"o"``/``"a"``, so ``"nº"`` -> ``"no"``,
   ``"1º"`` -> ``"1o"``).
2. Case folding (:meth:`str.casefold`, a stronger ``lower``).
3. Optional accent folding (``fold_accents=True``: ``"resolução"`` -> ``"resolucao"``).
4. Tokenisation by one regular expression (:data:`TOKEN_PATTERN`):

   * a *number* with inner separators stays one token when every separator (``.`` ``,`` ``/`` ``-``)
     sits between digits: ``"1.000"``, ``"2,5"``, ``"48500.002509/2014-96"``, ``"9.610/98"``;
   * otherwise a token is a run of word characters (letters, digits, ``_``), so every other
     punctuation mark or symbol separates tokens and is dropped: ``"art."`` -> ``"art"``,
     ``"DIRETOR-GERAL"`` -> ``"diretor"``, ``"geral"``, ``"§ 1º"`` -> ``"1o"``.

5. Optional Portuguese stop-word removal (``stopwords="pt"``, the list :data:`PT_STOPWORDS`; with
   ``fold_accents`` the list is folded too) and a minimum token length (``min_token_len``).
6. Optional stemming (``stem="pt"``): the Snowball Portuguese stemmer (PyStemmer, the C build of the
   Snowball reference implementation). Snowball's Portuguese rules are written for accented input
   (``"-ção"``, ``"-ões"``), so with ``stem`` set accents are folded *after* stemming, on the stems:
   ``"resolução"`` -> ``"resolu"`` (folded before, it would give ``"resoluca"`` and no longer meet
   ``"resoluções"`` -> ``"resolu"``). Stop words are still compared accent-folded when
   ``fold_accents`` is on, so ``"nao"`` is removed like ``"não"``.

:data:`ANALYZER_PRESETS` names ready-made settings: ``"pt"`` is stop words + accent folding + stemming
(``Analyzer.preset("pt")``; the lexical retrievers take ``analyzer="pt"``).

Calling the analyzer on one text gives its token list. :meth:`Analyzer.count_terms` gives the token
counts of many texts at once, equal to counting each call's tokens (tested on real and random text)
and several times faster: the retrievers index and search through it.

Examples
--------
>>> from ragcov_data.baselines import Analyzer
>>> Analyzer()("Resolução Normativa nº 1.000, art. 5º, § 2º")
['resolução', 'normativa', 'no', '1.000', 'art', '5o', '2o']
>>> Analyzer()("Processo 48500.002509/2014-96 (DIRETOR-GERAL).")
['processo', '48500.002509/2014-96', 'diretor', 'geral']
>>> Analyzer(fold_accents=True, stopwords="pt")("A Agência Nacional de Energia Elétrica – ANEEL")
['agencia', 'nacional', 'energia', 'eletrica', 'aneel']
>>> Analyzer(min_token_len=3)("O valor é de R$ 2,5 mil")
['valor', '2,5', 'mil']
>>> Analyzer.preset("pt")("As resoluções e a Resolução Normativa não são tarifárias")
['resolu', 'resolu', 'normat', 'tarifar']
>>> tc = Analyzer().count_terms(["Art. 1º A tarifa", "tarifa, tarifa"])
>>> tc.terms, tc.counts.toarray().tolist()
(['art', '1o', 'a', 'tarifa'], [[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 2.0]])
"""
from __future__ import annotations

import re
import threading
import unicodedata
from itertools import chain
from typing import Any, NamedTuple, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from ragcov_data.errors import RagcovError

#: Numbers with inner separators (kept whole), else runs of word characters.
TOKEN_PATTERN = r"\d+(?:[.,/-]\d+)+|\w+"
_TOKEN_RE = re.compile(TOKEN_PATTERN)
# The batch path joins distinct words with a newline and matches it too, to know where words end.
_SEP = "\n"
_SEP_TOKEN_RE = re.compile(_SEP + "|" + TOKEN_PATTERN)
_chain = chain.from_iterable
_COMBINING_RE = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")

#: Portuguese stop words: the Snowball project's Portuguese list (BSD licence; the list NLTK ships),
#: with NLTK's typo ``"tém"`` corrected to ``"têm"``. Closed-class words (articles, prepositions,
#: pronouns, conjunctions) and the forms of *estar*, *haver*, *ser* and *ter*. Lowercase, accented.
PT_STOPWORDS: frozenset[str] = frozenset(
    """
    a à ao aos aquela aquelas aquele aqueles aquilo as às até com como da das de dela delas dele deles
    depois do dos e é ela elas ele eles em entre era eram éramos essa essas esse esses esta está
    estamos estão estas estava estavam estávamos este esteja estejam estejamos estes esteve estive
    estivemos estiver estivera estiveram estivéramos estiverem estivermos estivesse estivessem
    estivéssemos estou eu foi fomos for fora foram fôramos forem formos fosse fossem fôssemos fui há
    haja hajam hajamos hão havemos hei houve houvemos houver houvera houverá houveram houvéramos
    houverão houverei houverem houveremos houveria houveriam houveríamos houvermos houvesse houvessem
    houvéssemos isso isto já lhe lhes mais mas me mesmo meu meus minha minhas muito na não nas nem no
    nos nós nossa nossas nosso nossos num numa o os ou para pela pelas pelo pelos por qual quando que
    quem são se seja sejam sejamos sem ser será serão serei seremos seria seriam seríamos seu seus só
    somos sou sua suas também te têm tem temos tenha tenham tenhamos tenho terá terão terei teremos
    teria teriam teríamos teu teus teve tinha tinham tínhamos tive tivemos tiver tivera tiveram
    tivéramos tiverem tivermos tivesse tivessem tivéssemos tu tua tuas um uma você vocês vos
    """.split()
)

_STOPWORD_LISTS: dict[str, frozenset[str]] = {"pt": PT_STOPWORDS}

#: Stemmers by ``stem=`` name -> the Snowball (PyStemmer) algorithm.
STEMMERS: dict[str, str] = {"pt": "portuguese"}

#: Named analyzer settings (``Analyzer.preset(name)``, ``BM25(analyzer=name)``, ``TfIdf(analyzer=name)``).
#: ``"default"`` is ``Analyzer()``; ``"pt"`` adds Portuguese stop words, accent folding and Snowball stemming.
ANALYZER_PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "pt": {"stopwords": "pt", "fold_accents": True, "stem": "pt"},
}


def _tokenize(text: str, _findall=_TOKEN_RE.findall) -> list[str]:
    """``TOKEN_PATTERN.findall(text)``, faster: no token spans whitespace, and a word made only of
    alphanumerics is a single ``\\w+`` match, so only words with punctuation go through the regex
    (``isalnum`` and ``\\w`` agree on every character except ``_``, which takes the regex path)."""
    out: list[str] = []
    append, extend = out.append, out.extend
    for word in text.split():
        if word.isalnum():
            append(word)
        else:
            extend(_findall(word))
    return out


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def text_word_matrix(n_words: np.ndarray, word_ids: np.ndarray, n_distinct: int) -> sp.csr_matrix:
    """Texts x distinct words CSR straight from the word ids: a repeated word is a repeated entry,
    which a product with it sums (exact integer counts in float64)."""
    return sp.csr_matrix((np.ones(len(word_ids)), word_ids, _indptr(n_words)), shape=(len(n_words), n_distinct))


def _indptr(lengths: np.ndarray) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def _fold_case(text: str, fold: bool) -> str:
    """NFKC, case folding and (``fold``) accent folding."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return fold_accents(text) if fold else text


def _load_stemmer(algorithm: str) -> Any:
    try:
        import Stemmer
    except ImportError as e:  # pragma: no cover - a default dependency
        raise ImportError("stemming needs the PyStemmer package: `pip install PyStemmer`.") from e
    return Stemmer.Stemmer(algorithm)


def fold_accents(text: str) -> str:
    """Remove combining diacritics: ``"ação"`` -> ``"acao"`` (NFKD, drop marks, NFC)."""
    return unicodedata.normalize("NFC", _COMBINING_RE.sub("", unicodedata.normalize("NFKD", text)))


class TermCounts(NamedTuple):
    """Token counts of many texts (:meth:`Analyzer.count_terms`).

    ``counts[i, j]`` is how often ``terms[j]`` occurs in text ``i``: float64 CSR, shape
    ``(n_texts, len(terms))``, sorted indices. ``terms`` are distinct, in order of first occurrence.
    """

    terms: list[str]
    counts: sp.csr_matrix


class Analyzer:
    """Turn a text into the list of index terms (callable; picklable; equal when parameters are equal).

    Parameters
    ----------
    fold_accents : bool, default: False
        Strip diacritics after case folding (``"eletrica"`` then matches ``"elétrica"``).
    stopwords : {None, "pt"} or iterable of str, default: None
        Remove these words (compared after normalisation, case and accent folding). ``"pt"`` is
        :data:`PT_STOPWORDS`.
    min_token_len : int, default: 1
        Drop tokens shorter than this many characters (measured before stemming).
    stem : {None, "pt"}, default: None
        ``"pt"``: reduce each kept token to its Snowball Portuguese stem (PyStemmer); with
        ``fold_accents`` the stem is then accent-folded (see the module notes for why after).

    Notes
    -----
    See the module docstring for the steps and examples. The analyzer is deterministic, so the
    corpus and the queries are always tokenised alike. No token spans whitespace and normalisation
    never joins text across it, so text is processed one whitespace-separated word at a time with a
    memo of words already seen (bounded; the result equals normalising the whole text and applying
    :data:`TOKEN_PATTERN`, which the tests check): repeated words, most of a legal text, cost one
    dictionary look-up.
    """

    #: Words remembered by the memo before it is emptied (bounds memory on huge vocabularies).
    memo_size: int = 500_000

    def __init__(
        self,
        *,
        fold_accents: bool = False,
        stopwords: str | None | Any = None,
        min_token_len: int = 1,
        stem: str | None = None,
    ) -> None:
        if stem is not None and stem not in STEMMERS:
            raise RagcovError(f"`stem` must be None or one of {sorted(STEMMERS)}; got {stem!r}.")
        if not isinstance(min_token_len, int) or isinstance(min_token_len, bool) or min_token_len < 1:
            raise RagcovError(f"`min_token_len` must be a positive integer; got {min_token_len!r}.")
        if isinstance(stopwords, str):
            if stopwords not in _STOPWORD_LISTS:
                raise RagcovError(
                    f"`stopwords` must be None, one of {sorted(_STOPWORD_LISTS)} or an iterable of words; "
                    f"got {stopwords!r}."
                )
            words = _STOPWORD_LISTS[stopwords]
            self._stopwords_name: str | None = stopwords
        elif stopwords is None:
            words = frozenset()
            self._stopwords_name = None
        else:
            words = frozenset(str(w) for w in stopwords)
            self._stopwords_name = "custom"
        self.fold_accents = bool(fold_accents)
        self.min_token_len = min_token_len
        self.stem = stem
        # The stop list goes through the same normalisation as the text (accent folding included), so
        # it always matches.
        norm = {_fold_case(w, self.fold_accents) for w in words}
        self.stopwords: frozenset[str] = frozenset(t for w in norm for t in _TOKEN_RE.findall(w))
        self._memo: dict[str, tuple[str, ...]] = {}
        self._stemmers: dict[int, Any] = {}  # one Snowball stemmer per thread (they are not thread-safe)

    @classmethod
    def preset(cls, name: str) -> "Analyzer":
        """The analyzer of a named preset (:data:`ANALYZER_PRESETS`), e.g. ``Analyzer.preset("pt")``."""
        if not isinstance(name, str) or name not in ANALYZER_PRESETS:
            raise RagcovError(f"unknown analyzer preset {name!r}; the presets are {sorted(ANALYZER_PRESETS)}.")
        return cls(**ANALYZER_PRESETS[name])

    def _normalise(self, text: str) -> str:
        # Stemming wants accented words: then accents are folded on the stems (``_stem_words``) instead.
        return _fold_case(text, self.fold_accents and self.stem is None)

    def _stem_words(self, tokens: list[str]) -> list[str]:
        """Stems of ``tokens`` (then accent-folded if ``fold_accents``); tokens unchanged without ``stem``."""
        if self.stem is None:
            return tokens
        stemmer = self._stemmers.get(threading.get_ident())
        if stemmer is None:
            stemmer = self._stemmers[threading.get_ident()] = _load_stemmer(STEMMERS[self.stem])
        stems = stemmer.stemWords(tokens)
        return [fold_accents(t) for t in stems] if self.fold_accents else stems

    def __call__(self, text: str) -> list[str]:
        """Tokens of ``text``, in order, repeats kept. ``text`` must be a str: anything else (None, a number,
        NaN from a missing table cell, bytes) is refused with what it was, not tokenised as its repr."""
        if not isinstance(text, str):
            kind = "bytes (decode them first, e.g. text.decode('utf-8'))" if isinstance(text, (bytes, bytearray)) \
                else f"{type(text).__name__} {text!r}"
            raise RagcovError(f"the analyzer tokenises text (a str); got {kind}. A missing text in a table arrives as "
                              "None or NaN: fill or drop those rows (e.g. df['text'].fillna('')).")
        memo = self._memo
        if len(memo) > self.memo_size:
            memo.clear()
        words = text.split()
        found = list(map(memo.get, words))
        if None in found:  # first sight of some words: tokenise and remember them
            for i, tokens in enumerate(found):
                if tokens is None:
                    word = words[i]
                    tokens = memo.get(word)
                    found[i] = tokens if tokens is not None else memo.setdefault(word, self._word_tokens(word))
        return list(_chain(found))

    def count_terms(self, texts: Sequence[str]) -> TermCounts:
        """Count the tokens of many texts at once; the same counts as calling the analyzer on each.

        Why: this is the indexing path of the lexical retrievers, and most of a corpus is repeated
        words. Texts are split into words, the words are factorised (a C hash table), and only the
        distinct words are normalised and tokenised, joined into one string so that normalisation
        and the regular expression each run once, in C. Text-term counts are then the product of
        the text-word counts and the word-term counts (sparse, exact integers in float64).
        """
        n_words, word_ids, words = self._split_words(texts)
        terms, word_terms = self._word_term_matrix(words.to_pylist())
        counts = sp.csr_matrix(text_word_matrix(n_words, word_ids, len(words)) @ word_terms)
        counts.sort_indices()
        return TermCounts(terms, counts)

    def _split_words(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, pa.Array]:
        """Words per text, the id of every word (texts concatenated) and the distinct words (Arrow),
        in order of first occurrence.

        Arrow splits on exactly ``str.split``'s whitespace (checked on every code point in the tests);
        runs of whitespace may leave empty words, which have no tokens.
        """
        try:
            array = pa.array(texts, type=pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise RagcovError(f"`texts` must be a sequence of str: {exc}") from exc
        except UnicodeEncodeError as exc:
            bad = next(i for i, t in enumerate(texts) if not _is_unicode(t))
            raise RagcovError(
                f"text {bad} of `texts` is not valid Unicode ({exc.reason}: {exc.object[exc.start:exc.end]!r}); "
                "it was probably decoded with errors='surrogateescape'. Decode the source as UTF-8 "
                "(errors='replace' to keep going) before indexing."
            ) from None
        if array.null_count:
            raise RagcovError(f"`texts` must be a sequence of str; item {array.is_null().index(True).as_py()} is None.")
        split = pc.utf8_split_whitespace(array)
        encoded = pc.dictionary_encode(split.flatten())
        return np.diff(split.offsets.to_numpy()), encoded.indices.to_numpy(), encoded.dictionary

    def _word_term_matrix(self, words: list[str]) -> tuple[list[str], sp.csr_matrix]:
        """Terms of distinct ``words`` and the word x term count matrix (after stop words, min length)."""
        if not words:
            return [], sp.csr_matrix((0, 0), dtype=np.float64)
        # NFKC, case and accent folding neither make nor remove a newline, so joins mark word ends
        pieces = np.empty(len(found := _SEP_TOKEN_RE.findall(self._normalise(_SEP.join(words)))), dtype=object)
        pieces[:] = found
        is_sep = pieces == _SEP
        word_of = np.cumsum(is_sep)[~is_sep]  # tokens know their word by the joins before them
        tokens = pieces[~is_sep]
        if not len(tokens):
            return [], sp.csr_matrix((len(words), 0), dtype=np.float64)
        term_ids, terms = pd.factorize(tokens)
        terms = terms.tolist()
        if self._filters:
            keep = np.fromiter(map(self._is_term, terms), dtype=bool, count=len(terms))
            new_id = np.cumsum(keep) - 1
            kept = keep[term_ids]
            word_of, term_ids = word_of[kept], new_id[term_ids[kept]]
            terms = [t for t, k in zip(terms, keep) if k]
        if self.stem is not None and terms:  # stem each distinct token once; tokens sharing a stem merge
            stem_ids, stems = pd.factorize(np.array(self._stem_words(terms), dtype=object))
            term_ids, terms = stem_ids[term_ids], stems.tolist()
        n_tokens = np.bincount(word_of, minlength=len(words))  # word_of is sorted
        return terms, sp.csr_matrix((np.ones(len(term_ids)), term_ids, _indptr(n_tokens)), shape=(len(words), len(terms)))

    def _word_tokens(self, word: str) -> tuple[str, ...]:
        tokens = _tokenize(self._normalise(word))
        if self._filters:
            tokens = list(filter(self._is_term, tokens))
        return tuple(self._stem_words(tokens) if self.stem is not None and tokens else tokens)

    @property
    def _filters(self) -> bool:
        """Are tokens filtered at all (stop words or a minimum length)?"""
        return bool(self.stopwords) or self.min_token_len > 1

    def _is_term(self, token: str) -> bool:
        """Does a token survive the stop-word list and the minimum length?"""
        if len(token) < self.min_token_len:
            return False
        if self.stem is not None and self.fold_accents:  # tokens kept their accents for the stemmer
            token = fold_accents(token)
        return token not in self.stopwords

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_memo"] = {}  # a cache, not state: never pickled
        state["_stemmers"] = {}  # C objects, rebuilt on first use
        return state

    def params(self) -> dict[str, Any]:
        """Parameters recorded in run metadata (``stopwords`` is ``"custom"`` for a user list)."""
        return {
            "fold_accents": self.fold_accents,
            "stopwords": self._stopwords_name,
            "min_token_len": self.min_token_len,
            "stem": self.stem,
            "token_pattern": TOKEN_PATTERN,
            "normalization": "NFKC+casefold",
        }

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Analyzer)
            and self.params() == other.params()
            and self.stopwords == other.stopwords
        )

    def __hash__(self) -> int:
        return hash((self.fold_accents, self.min_token_len, self.stopwords, self.stem))

    def __repr__(self) -> str:
        sw = self._stopwords_name
        return (
            f"Analyzer(fold_accents={self.fold_accents}, "
            f"stopwords={sw if sw == 'custom' else repr(sw)}, min_token_len={self.min_token_len}"
            + (f", stem={self.stem!r})" if self.stem is not None else ")")
        )
