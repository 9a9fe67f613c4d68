"""TermCounter: corpus counts in batches and query counts from remembered words equal the analyzer's."""
from __future__ import annotations

from collections import Counter

import pytest

from ragcov_data.baselines import Analyzer
from ragcov_data.baselines._counter import TermCounter


def _rows(matrix, vocabulary) -> list[dict[str, float]]:
    terms = {i: t for t, i in vocabulary.items()}
    m = matrix.tocsr()
    return [{terms[j]: v for j, v in zip(m[i].indices, m[i].data)} for i in range(m.shape[0])]


@pytest.mark.parametrize("batch", [10_000, 37])
@pytest.mark.parametrize("kwargs", [{}, {"fold_accents": True, "stopwords": "pt", "min_token_len": 2}])
def test_fit_transform_and_transform_equal_the_analyzer(small_task, batch, kwargs):
    corpus, queries = small_task
    texts = corpus["text"].tolist()
    analyzer = Analyzer(**kwargs)
    counter = TermCounter(analyzer)
    counts = counter.fit_transform(texts[s:s + batch] for s in range(0, len(texts), batch))
    vocab = counter.vocabulary_
    assert counts.shape == (len(texts), len(vocab)) == (len(texts), max(vocab.values()) + 1)
    assert _rows(counts, vocab) == [dict(Counter(analyzer(t))) for t in texts]
    assert list(vocab) == list(dict.fromkeys(tok for t in texts for tok in analyzer(t)))  # first occurrence
    # queries: corpus words (from memory), unseen words and terms (dropped), punctuation variants
    q = queries["text"].tolist()[:50] + ["Xyzzy inédito ANEEL, energia; 1.000,00 nº", "", "   —  "]
    got = _rows(counter.transform(q), vocab)
    assert got == [{t: c for t, c in Counter(analyzer(x)).items() if t in vocab} for x in q]
    # searching never grows the vocabulary or the remembered words
    n_words = len(counter._words)
    counter.transform(["palavrainexistente outrapalavra"])
    assert len(counter._words) == n_words and len(vocab) == len(counter.vocabulary_)


def test_words_are_remembered_once(small_task):
    corpus, _ = small_task
    texts = corpus["text"].tolist()
    counter = TermCounter(Analyzer())
    counter.fit_transform([texts[:200], texts[100:300], texts[200:]])
    words = counter._words.to_pylist()
    assert len(words) == len(set(words)) == len({w for t in texts for w in t.split()})
    assert counter._word_terms.shape == (len(words), len(counter.vocabulary_))
