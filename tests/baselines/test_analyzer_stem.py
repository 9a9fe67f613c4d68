"""Snowball Portuguese stemming in the shared analyzer: equal to PyStemmer's own output on real text."""
from __future__ import annotations

import json
import pickle
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest
import Stemmer

from ragcov_data.baselines import BM25, PT_STOPWORDS, Analyzer, TfIdf
from ragcov_data.baselines.analyzer import ANALYZER_PRESETS, fold_accents
from ragcov_data.errors import RagcovError


@pytest.fixture(scope="module")
def real_texts(aneel_fulltext, juristcu_dir) -> list[str]:
    with open(aneel_fulltext, encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh][:30]
    texts += pd.read_csv(juristcu_dir / "doc.csv")["TEXT"].astype(str).tolist()[:300]
    texts += pd.read_csv(juristcu_dir / "query.csv")["TEXT"].astype(str).tolist()
    return texts


def _reference(text: str, *, stopwords: bool, fold: bool) -> list[str]:
    """PyStemmer applied by hand to the unstemmed analyzer's tokens: stop words compared (folded if
    ``fold``), then each token stemmed by Snowball, then the stem accent-folded if ``fold``."""
    stemmer = Stemmer.Stemmer("portuguese")
    stop = {fold_accents(w) if fold else w for w in PT_STOPWORDS} if stopwords else set()
    out = []
    for tok in Analyzer()(text):
        if (fold_accents(tok) if fold else tok) in stop:
            continue
        stem = stemmer.stemWord(tok)
        out.append(fold_accents(stem) if fold else stem)
    return out


@pytest.mark.parametrize("stopwords, fold", [(False, False), (True, False), (True, True)])
def test_stems_equal_pystemmer_on_real_text(real_texts, stopwords, fold):
    an = Analyzer(stem="pt", stopwords="pt" if stopwords else None, fold_accents=fold)
    n_changed = 0
    for text in real_texts:
        got = an(text)
        assert got == _reference(text, stopwords=stopwords, fold=fold)
        n_changed += sum(a != b for a, b in zip(got, Analyzer()(text)))
    assert n_changed > 1000  # the stemmer did real work on this text


def test_preset_pt_is_stopwords_folding_stemming():
    assert ANALYZER_PRESETS["pt"] == {"stopwords": "pt", "fold_accents": True, "stem": "pt"}
    pt = Analyzer.preset("pt")
    assert pt == Analyzer(stopwords="pt", fold_accents=True, stem="pt")
    # stemmed with accents, folded after: "resolução" and "resoluções" meet; "não" and "nao" are stop words
    assert pt("Resolução resoluções não nao licitações") == ["resolu", "resolu", "licit"]
    assert BM25(analyzer="pt").analyzer == pt and TfIdf(analyzer="pt").analyzer == pt
    assert BM25(analyzer="default").analyzer == Analyzer()
    assert pt.params()["stem"] == "pt" and "stem='pt'" in repr(pt)
    assert pt != Analyzer(stopwords="pt", fold_accents=True) and hash(pt) != hash(Analyzer(stopwords="pt", fold_accents=True))


def test_batch_path_equals_single_text_path(real_texts):
    for an in (Analyzer(stem="pt"), Analyzer.preset("pt"), Analyzer(stem="pt", min_token_len=3)):
        tc = an.count_terms(real_texts)
        assert len(set(tc.terms)) == len(tc.terms)
        for i, text in enumerate(real_texts):
            row = tc.counts[i]
            got = {tc.terms[j]: v for j, v in zip(row.indices, row.data)}
            want: dict[str, float] = {}
            for t in an(text):
                want[t] = want.get(t, 0.0) + 1.0
            assert got == want


def test_stemming_analyzer_pickles_and_is_thread_safe(real_texts):
    an = pickle.loads(pickle.dumps(Analyzer.preset("pt")))
    fresh = Analyzer.preset("pt")
    want = [fresh(t) for t in real_texts]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda t: Analyzer.preset("pt").count_terms([t]).terms, real_texts))
    assert [sorted(set(w)) for w in want] == [sorted(g) for g in got]
    assert an(real_texts[0]) == want[0]


def test_stemmed_bm25_ranks_inflected_forms():
    corpus = pd.DataFrame({"_id": ["a", "b", "c"], "text": ["licitações e contratos", "tarifa de energia", "outorga"]})
    q = pd.DataFrame({"_id": ["q"], "text": ["licitação"]})
    assert BM25(show_progress=False).index(corpus).search(q).empty  # unstemmed: no shared term
    assert BM25(analyzer="pt", show_progress=False).index(corpus).search(q)["corpus-id"].tolist() == ["a"]


@pytest.mark.parametrize("kwargs, match", [({"stem": "en"}, r"`stem` must be None or one of \['pt'\]")])
def test_stem_iv(kwargs, match):
    with pytest.raises(RagcovError, match=match):
        Analyzer(**kwargs)
    with pytest.raises(RagcovError, match=r"unknown analyzer preset 'xx'; the presets are \['default', 'pt'\]"):
        BM25(analyzer="xx")
