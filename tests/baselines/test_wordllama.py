"""The packaged WordLlama encoder: offline from the wheel, vectors equal the package's own, exact ties."""
from __future__ import annotations

import logging

import numpy as np
import pytest

wordllama = pytest.importorskip("wordllama", reason="optional extra [dense] (wordllama) not installed")

from ragcov_data.baselines import Dense  # noqa: E402
from ragcov_data.baselines.encoders import WordLlamaEncoder, load_encoder  # noqa: E402


def test_vectors_equal_the_package_and_load_without_network(small_task, monkeypatch):
    import requests

    def no_network(*a, **k):
        raise AssertionError("WordLlama tried to download")

    monkeypatch.setattr(requests, "get", no_network)
    corpus, _ = small_task
    texts = corpus["text"].head(50).tolist()
    enc = load_encoder("wordllama")
    assert isinstance(enc, WordLlamaEncoder) and enc.model_id.startswith("wordllama==")
    got = enc.encode_passages(texts)
    from pathlib import Path

    ref = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    want = ref.embed(texts, norm=True)
    want = want / np.linalg.norm(want, axis=1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(enc.encode_queries(texts[:3]), got[:3])  # symmetric: no prompts


def test_dense_wordllama_retrieves_and_ties_duplicates(small_task, tmp_path):
    corpus, queries = small_task
    c = corpus.head(120).copy()
    c.loc[c.index[1], "text"] = c.loc[c.index[0], "text"]  # a duplicate passage
    d = Dense("wordllama", cache_dir=tmp_path, show_progress=False).index(c)
    run = d.search(queries.head(40), k=5, exclude_self=True)
    assert run["query-id"].nunique() == 40
    own = dict(zip(queries["_id"], queries["chunk_id"]))
    assert not (run["corpus-id"] == run["query-id"].map(own)).any()
    q0 = run[run["query-id"] == queries["_id"].iloc[2]].set_index("corpus-id")["score"]
    full = d.corpus_embeddings @ d.encode_queries([queries["text"].iloc[2]])[0]
    assert full[0] == full[1]  # identical texts share one vector: an exact tie
    full[list(c["_id"]).index(own[queries["_id"].iloc[2]])] = -np.inf  # its own chunk is excluded
    assert q0.max() == pytest.approx(float(full.max()), rel=1e-6)


def test_loading_wordllama_leaves_the_root_logger_as_it_was():
    """wordllama configures the root logger at INFO when imported; ragcov's loader restores it, so a dependency's
    INFO lines (matplotlib's font cache on a first run) stay off the console. In a fresh interpreter, where
    wordllama was never imported."""
    import subprocess
    import sys

    code = ("import logging; from ragcov_data.baselines.encoders import load_encoder; load_encoder('wordllama'); "
            "import wordllama; r = logging.getLogger(); print(r.level, len(r.handlers))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(logging.WARNING), "0"]
