"""The retriever registry: every baseline by name, for the API and `ragcov run --retriever NAME`."""
from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from ragcov_data.baselines import BM25, RM3, Hybrid, TfIdf
from ragcov_data.baselines.registry import RETRIEVER_NAMES, RETRIEVERS, make_retriever
from ragcov_data.cli import main
from ragcov_data.errors import RagcovError

LEXICAL = ["bm25", "bm25-pt", "bm25-rm3", "bm25-pt-rm3", "tfidf", "tfidf-pt"]


def test_names_cover_every_baseline():
    assert set(LEXICAL + ["dense", "use-multilingual", "e5-small", "minilm", "hybrid-bm25pt-e5",
                          "hybrid-bm25pt-use"]) <= set(RETRIEVER_NAMES)
    assert list(RETRIEVERS) == list(RETRIEVER_NAMES)
    assert all(RETRIEVERS[n].dense for n in RETRIEVER_NAMES if n not in LEXICAL)


@pytest.mark.parametrize("name", LEXICAL)
def test_lexical_names_build_what_they_say(name, small_task):
    r = make_retriever(name, show_progress=False)
    assert r.name == name
    expected = RM3 if name.endswith("rm3") else (TfIdf if name.startswith("tfidf") else BM25)
    assert type(r) is expected
    assert r.analyzer.params()["stem"] == ("pt" if "-pt" in name else None)
    if isinstance(r, RM3):
        assert (r.fb_docs, r.fb_terms, r.original_query_weight) == (10, 10, 0.5)
    corpus, queries = small_task
    run = r.index(corpus.iloc[:100]).search(queries.iloc[:5], k=5, exclude_self=True)
    assert run.attrs["retriever"] == name and len(run)


def test_dense_and_hybrid_names_without_encoding():
    e5 = make_retriever("e5-small", show_progress=False)
    assert e5.name == "e5-small" and "e5-small" in e5.encoder.model_id
    hy = make_retriever("hybrid-bm25pt-use", show_progress=False)
    assert isinstance(hy, Hybrid) and hy.method == "rrf" and hy.k == 60
    assert [type(r).__name__ for r in hy.retrievers] == ["BM25", "Dense"]
    assert hy.retrievers[0].analyzer.params()["stem"] == "pt" and hy.retrievers[1].model_name == "use-multilingual"
    assert make_retriever("dense", model="e5-small", show_progress=False).name == "dense"


def test_registry_import_does_not_import_torch():
    code = ("import sys; from ragcov_data.baselines.registry import make_retriever; "
            "make_retriever('bm25-pt-rm3'); assert 'torch' not in sys.modules; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def test_unknown_names_and_options():
    with pytest.raises(RagcovError, match=r"unknown retriever 'bm25pt'; the baselines are bm25, bm25-pt, .*"
                                          r"Did you mean 'bm25-pt'\?"):
        make_retriever("bm25pt")
    with pytest.raises(RagcovError, match=r"retriever 'tfidf' takes no option 'variant'"):
        make_retriever("tfidf", variant="lucene")
    assert make_retriever("bm25-pt-rm3", variant="lucene").base.variant == "lucene"


def test_cli_run_takes_every_lexical_name(tmp_path, data_dir, capsys):
    from ragcov_data.baselines import load_run

    out = tmp_path / "rm3.parquet"
    assert main(["run", "--retriever", "bm25-pt-rm3", "--dataset", "juristcu", "--data-dir", str(data_dir),
                 "--quiet", "--out", str(out)]) == 0
    run = load_run(out)
    assert run.attrs["retriever"] == "bm25-pt-rm3" and run["query-id"].nunique() == 150
    assert main(["run", "--retriever", "tfidf-pt", "--model", "x", "--dataset", "juristcu", "--data-dir",
                 str(data_dir), "--out", str(tmp_path / "x.trec")]) == 2
    assert "--model` applies to --retriever dense only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "--retriever", "bm25pt", "--out", "x"])
    assert "bm25-pt-rm3" in capsys.readouterr().err
