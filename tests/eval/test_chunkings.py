"""Two chunkings compared paired by document: macro t, micro linearisation and document bootstrap."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ragcov_data.errors import RagcovError
from ragcov_data.eval import evaluate
from ragcov_data.eval.comparisons.paired_chunkings import compare_chunkings


def _task_and_run(sizes: dict[str, int], hits: dict[str, list[int]]):
    """A tiny self-retrieval task (document d has sizes[d] chunks) and a run hitting as `hits` says."""
    q, qr, rows = [], [], []
    for d, n in sizes.items():
        for i in range(n):
            qid = f"{d}#{i:04d}"
            q.append({"_id": qid, "doc_id": d, "chunk_id": qid, "chunk_index": i})
            qr.append({"query-id": qid, "corpus-id": f"{d}#{(i + 1) % n:04d}", "score": 1})
            target = f"{d}#{(i + 1) % n:04d}" if hits[d][i] else "other#0000"
            rows.append({"query-id": qid, "corpus-id": target, "score": 1.0})
    corpus = pd.DataFrame({"_id": [x["_id"] for x in q] + ["other#0000"], "chunk_index": [x["chunk_index"] for x in q] + [0]})
    task = {"corpus": corpus, "queries": pd.DataFrame(q), "qrels": pd.DataFrame(qr)}
    return task, pd.DataFrame(rows)


def _eval(sizes, hits):
    task, run = _task_and_run(sizes, hits)
    return evaluate(run, task, n_resamples=199)


def test_macro_difference_is_a_paired_t_over_shared_documents():
    rng = np.random.default_rng(0)
    docs = [f"D{i}" for i in range(12)]
    size_a = {d: int(rng.integers(2, 9)) for d in docs}
    size_b = {d: int(rng.integers(2, 5)) for d in docs[:10]}  # two documents absent under B
    a = _eval(size_a, {d: list(rng.integers(0, 2, n)) for d, n in size_a.items()})
    b = _eval(size_b, {d: list(rng.integers(0, 2, n)) for d, n in size_b.items()})
    c = compare_chunkings({"A": a, "B": b}, n_resamples=999)
    pa = a.per_document.set_index("cluster")["rate"]
    pb = b.per_document.set_index("cluster")["rate"]
    d = (pa.reindex(pb.index) - pb).to_numpy()
    ref = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert c.difference["estimate"] == pytest.approx(d.mean(), abs=1e-12)
    assert (c.difference["low"], c.difference["high"]) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert c.difference["n_documents"] == 10 and c.only_in == {"A": 2, "B": 0}
    # micro: each chunking's own micro over the shared documents
    s = c.per_document
    micro = (s["rate_A"] * s["n_A"]).sum() / s["n_A"].sum() - (s["rate_B"] * s["n_B"]).sum() / s["n_B"].sum()
    assert c._row("micro", "linearised_t")["estimate"] == pytest.approx(micro, abs=1e-12)
    assert set(c.to_dict()) >= {"chunkings", "difference"}
    assert set(c.to_dict()["difference"]) >= {"estimate", "low", "high", "method", "n_documents"}


def test_equal_sizes_make_the_micro_linearisation_the_paired_t():
    rng = np.random.default_rng(1)
    sizes = {f"D{i}": 6 for i in range(15)}
    a = _eval(sizes, {d: list(rng.integers(0, 2, 6)) for d in sizes})
    b = _eval(sizes, {d: list(rng.integers(0, 2, 6)) for d in sizes})
    c = compare_chunkings({"A": a, "B": b})
    lin = c._row("micro", "linearised_t")
    mac = c._row("macro", "t")
    assert lin["se"] == pytest.approx(mac["se"], rel=1e-12) and lin["low"] == pytest.approx(mac["low"], abs=1e-12)
    boot = c._row("micro", "cluster_bootstrap")
    assert boot["low"] < lin["estimate"] < boot["high"]
    assert boot["high"] - boot["low"] == pytest.approx(lin["high"] - lin["low"], rel=0.25)


def test_bad_inputs():
    sizes = {"D0": 3, "D1": 3}
    a = _eval(sizes, {"D0": [1, 0, 1], "D1": [0, 0, 1]})
    with pytest.raises(RagcovError, match="exactly two"):
        compare_chunkings({"A": a})
    other = _eval({"E0": 3, "E1": 2}, {"E0": [1, 1, 1], "E1": [0, 1]})
    with pytest.raises(RagcovError, match="only 0 document"):
        compare_chunkings({"A": a, "B": other})
    with pytest.raises(RagcovError, match="at least 39"):
        compare_chunkings({"A": a, "B": a}, n_resamples=5)


def test_few_documents_flag_the_bootstrap_as_the_core_does():
    from ragcov_data.eval.estimates import _kernels

    rng = np.random.default_rng(3)
    for k, few in ((6, True), (12, False)):
        sizes = {f"D{i}": 4 for i in range(k)}
        a = _eval(sizes, {d: list(rng.integers(0, 2, 4)) for d in sizes})
        b = _eval(sizes, {d: list(rng.integers(0, 2, 4)) for d in sizes})
        c = compare_chunkings({"A": a, "B": b}, n_resamples=199)
        assert c._row("micro", "cluster_bootstrap")["flags"] == ("few_clusters" if few else "")
        assert c._row("macro", "t")["flags"] == "" and c.info["few_clusters"] is few
        # the same rule as the core's own interval of the bootstrap (few_clusters below FEW_CLUSTERS)
        assert (k < _kernels.FEW_CLUSTERS) is few
        assert ("few_clusters" in c.summary()) is few
        assert c.info["fallback"] == {"A": False, "B": False}  # plain frames: no chunking recorded, nothing said
