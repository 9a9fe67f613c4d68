"""The shared analyzer: normalisation, tokenisation rules, options, doctests of the lexical modules."""
from __future__ import annotations

import doctest
import pickle
import subprocess
import sys

import pytest

from ragcov_data.baselines import BM25, PT_STOPWORDS, Analyzer, TfIdf, analyzer as analyzer_mod
from ragcov_data.errors import RagcovError


def test_nfkc_casefold_and_numbers():
    a = Analyzer()
    assert a("ＡＮＥＥＬ ﬁscalização Straße") == ["aneel", "fiscalização", "strasse"]
    assert a("Processos nºs 48500.002509/2014-96, 48500.002132/2014-75.") == [
        "processos", "nos", "48500.002509/2014-96", "48500.002132/2014-75"]
    assert a("R$ 1.000,50 em 2022.") == ["r", "1.000,50", "em", "2022"]
    assert a("art. 5º, § 2º, inciso II-A") == ["art", "5o", "2o", "inciso", "ii", "a"]
    assert a("") == [] and a("— ; §") == []


def test_accents_stopwords_min_len():
    assert Analyzer(fold_accents=True)("Ação ELÉTRICA pública") == ["acao", "eletrica", "publica"]
    sw = Analyzer(stopwords="pt")
    assert sw("A tarifa de energia não é da ANEEL") == ["tarifa", "energia", "aneel"]
    # with accent folding the stop list is folded too ("não" -> "nao" is still removed)
    assert Analyzer(stopwords="pt", fold_accents=True)("não há tarifa") == ["tarifa"]
    assert Analyzer(min_token_len=4)("a lei de 2022 sobre tarifa") == ["2022", "sobre", "tarifa"]
    assert Analyzer(stopwords=["Tarifa"])("tarifa social") == ["social"]
    assert {"de", "não", "têm", "que"} <= PT_STOPWORDS and "tém" not in PT_STOPWORDS


def test_analyzer_is_the_retrievers_tokenizer():
    an = Analyzer(stopwords="pt")
    assert BM25(analyzer=an).analyzer is an and TfIdf(analyzer=an).analyzer is an
    assert BM25().analyzer("Resolução Normativa nº 1.000") == ["resolução", "normativa", "no", "1.000"]


def test_analyzer_pickles_and_compares():
    a = Analyzer(fold_accents=True, stopwords="pt", min_token_len=2)
    b = pickle.loads(pickle.dumps(a))
    assert a == b and hash(a) == hash(b) and a != Analyzer()
    assert b("Energia Elétrica") == ["energia", "eletrica"]
    assert "fold_accents=True" in repr(a) and a.params()["stopwords"] == "pt"


@pytest.mark.parametrize(
    "kwargs, match",
    [({"stopwords": "en"}, r"`stopwords` must be None, one of \['pt'\]"),
     ({"min_token_len": 0}, "`min_token_len` must be a positive integer")],
)
def test_analyzer_iv(kwargs, match):
    with pytest.raises(RagcovError, match=match):
        Analyzer(**kwargs)


@pytest.mark.parametrize("module", ["analyzer", "bm25", "tfidf", "top_ties"])
def test_doctests(module):
    import importlib

    mod = importlib.import_module(f"ragcov_data.baselines.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_import_does_not_import_torch():
    code = ("import sys, ragcov_data.baselines as b; assert 'torch' not in sys.modules, 'torch imported'; "
            "assert 'Dense' in dir(b) and 'Dense' in b.__all__; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert analyzer_mod.TOKEN_PATTERN


def test_fast_tokenizer_equals_the_pattern_on_real_text(aneel_fulltext):
    """The whitespace fast path must give exactly ``TOKEN_PATTERN.findall`` (the documented rule)."""
    import json
    import re
    import unicodedata

    from ragcov_data.baselines.analyzer import TOKEN_PATTERN, _tokenize

    pattern = re.compile(TOKEN_PATTERN)
    with open(aneel_fulltext, encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh][:40]
    texts += ["a_b c__d 1.000,5 x-y 48500.002509/2014-96 ½ ²³ \u00a0nbsp\u2003em § art.5º"]
    for text in texts:
        norm = unicodedata.normalize("NFKC", text).casefold()
        assert _tokenize(norm) == pattern.findall(norm)


def _reference_tokens(text: str, fold: bool) -> list[str]:
    """The documented rule applied to the whole text at once: NFKC, casefold, [fold], TOKEN_PATTERN."""
    import re
    import unicodedata

    from ragcov_data.baselines.analyzer import TOKEN_PATTERN, fold_accents

    norm = unicodedata.normalize("NFKC", text).casefold()
    if fold:
        norm = fold_accents(norm)
    return re.findall(TOKEN_PATTERN, norm)


def test_word_memo_equals_whole_text_rule_on_real_text(aneel_fulltext):
    import json

    from ragcov_data.baselines import Analyzer

    with open(aneel_fulltext, encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh][:60]
    for fold in (False, True):
        analyzer = Analyzer(fold_accents=fold)
        for text in texts + texts[:5]:  # second pass hits the memo
            assert analyzer(text) == _reference_tokens(text, fold)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_TRICKY = "aé1.,/-_ \u00a0\u2003\u00a8\u0301\u0308ß İ½²ﬁ\u3000\t\n\x1c\x85ºª§"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.one_of(st.sampled_from(_TRICKY), st.characters()), max_size=40), st.booleans())
def test_word_memo_equals_whole_text_rule_on_any_text(text, fold):
    from ragcov_data.baselines import Analyzer

    analyzer = Analyzer(fold_accents=fold)
    assert analyzer(text) == _reference_tokens(text, fold)
    assert analyzer(text) == _reference_tokens(text, fold)  # again, from the memo


def _counts_by_text(tc) -> list[dict[str, float]]:
    c = tc.counts
    assert c.shape == (c.shape[0], len(tc.terms)) and len(set(tc.terms)) == len(tc.terms)
    return [{tc.terms[j]: v for j, v in zip(c[i].indices, c[i].data)} for i in range(c.shape[0])]


@pytest.mark.parametrize("kwargs", [{}, {"fold_accents": True, "stopwords": "pt", "min_token_len": 3}])
def test_count_terms_equals_the_analyzer_on_real_text(aneel_fulltext, kwargs):
    import json
    from collections import Counter

    with open(aneel_fulltext, encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh][:40]
    texts = [t[i:i + 700] for t in texts for i in range(0, len(t), 700)]  # chunk-sized, many repeats
    analyzer = Analyzer(**kwargs)
    tc = analyzer.count_terms(texts)
    assert tc.counts.has_sorted_indices
    assert _counts_by_text(tc) == [dict(Counter(analyzer(t))) for t in texts]
    # terms in order of first occurrence in the token stream
    first = list(dict.fromkeys(tok for t in texts for tok in analyzer(t)))
    assert tc.terms == first


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.one_of(st.sampled_from(_TRICKY), st.characters(exclude_categories=["Cs"])),
                        max_size=30), max_size=6),
       st.booleans(), st.sampled_from([None, "pt"]))
def test_count_terms_equals_the_analyzer_on_any_text(texts, fold, stop):
    from collections import Counter

    analyzer = Analyzer(fold_accents=fold, stopwords=stop)
    tc = analyzer.count_terms(texts)
    assert tc.counts.shape[0] == len(texts)
    assert _counts_by_text(tc) == [dict(Counter(_reference_tokens_filtered(analyzer, t, fold))) for t in texts]


def _reference_tokens_filtered(analyzer, text, fold):
    return [t for t in _reference_tokens(text, fold) if t not in analyzer.stopwords]


def test_count_terms_splits_words_exactly_as_str_split():
    """The batch path splits words with Arrow; it must agree with ``str.split`` on every code point."""
    import sys

    import pyarrow as pa
    import pyarrow.compute as pc

    strs = [f"a{chr(c)}b" for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000]
    got = pc.utf8_split_whitespace(pa.array(strs)).to_pylist()
    wrong = [hex(ord(s[1])) for s, g in zip(strs, got) if [w for w in g if w] != s.split()]
    assert wrong == []
    assert Analyzer().count_terms(["", "  ", "\u3000x\x1cy\x85"]).counts.toarray().tolist() == [[0, 0], [0, 0], [1, 1]]


def test_count_terms_rejects_text_that_is_not_unicode():
    with pytest.raises(RagcovError, match=r"text 1 of `texts` is not valid Unicode .*surrogate.*'\\udcc3'"):
        Analyzer().count_terms(["ok", "a\udcc3b"])
    with pytest.raises(RagcovError, match="item 1 is None"):
        Analyzer().count_terms(["ok", None])
