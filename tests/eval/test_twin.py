"""The population twin reproduces the ANEEL–TAESA figures within stated tolerances."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.eval.planning.twin import DocType, population_figures, simulate_population


@pytest.fixture(scope="module")
def twin() -> pd.DataFrame:
    return simulate_population(seed=0)


def test_twin_matches_article_figures(twin):
    f = population_figures(twin)
    assert f["n_docs"] == 1300 and f["n_chunks"] == 33503 and len(twin) == 33503
    assert f["median_size"] == 7
    assert abs(f["top10_share"] - 0.59) <= 0.01
    assert abs(f["micro"] - 0.1846) <= 0.003
    assert abs(f["macro"] - 0.1596) <= 0.003
    assert abs(f["icc"] - 0.293) <= 0.02
    assert abs(f["deff"] - 33.2) <= 2.0
    assert abs(f["never_hit_share"] - 0.5) <= 0.03
    assert abs(f["lag1"] - 0.17) <= 0.03


def test_twin_types_span_article_range(twin):
    rates = twin.groupby("doc_type")["value"].mean()
    assert rates["aviso_dividendos"] == 0.0
    assert rates["resolucao_normativa"] > 0.40 and rates["despacho"] > 0.30
    assert rates["demonstracoes_contabeis_regulatorias"] < 0.10
    assert twin.groupby("doc_id").size().min() >= 2


def test_twin_schema_and_ids(twin):
    assert list(twin.columns) == ["query-id", "doc_id", "doc_type", "chunk_index", "value"]
    assert twin["query-id"].is_unique
    first = twin.iloc[0]
    assert first["query-id"] == f"{first['doc_id']}#{first['chunk_index']:04d}"
    assert set(np.unique(twin["value"])) <= {0.0, 1.0}


def test_twin_reproducible_and_seed_dependent():
    a = simulate_population(n_docs=200, n_chunks=5000, seed=3)
    b = simulate_population(n_docs=200, n_chunks=5000, seed=3)
    c = simulate_population(n_docs=200, n_chunks=5000, seed=4)
    pd.testing.assert_frame_equal(a, b)
    assert not a["value"].equals(c["value"])


def test_twin_overrides():
    types = [DocType("a", 60, 0.1, 0.0), DocType("b", 40, 0.4, 1.0)]
    pop = simulate_population(n_docs=100, n_chunks=2500, micro=0.30, macro=0.25, icc=0.2,
                              never_hit_share=0.3, lag1=None, deff=None, types=types, seed=1)
    f = population_figures(pop)
    assert f["n_docs"] == 100 and f["n_chunks"] == 2500
    assert set(pop["doc_type"]) == {"a", "b"}
    assert abs(f["micro"] - 0.30) < 0.02 and abs(f["macro"] - 0.25) < 0.02


def test_lag1_measures_independence_as_near_zero():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"doc_id": np.repeat(np.arange(300), 40), "chunk_index": np.tile(np.arange(40), 300),
                       "value": rng.random(12000) < 0.3})
    f = population_figures(df)
    # demeaning within 40-chunk documents biases lag-1 by about -1/39
    assert abs(f["lag1"] + 1 / 39) < 0.03
    assert abs(f["icc"]) < 0.02


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_chunks": 100}, "n_chunks"),
        ({"micro": 1.5}, "micro"),
        ({"median_size": 2}, "median_size"),
        ({"types": [DocType("a", 5, 0.1)]}, "types"),
    ],
)
def test_simulate_population_iv(kwargs, match):
    with pytest.raises(RagcovError, match=match):
        simulate_population(**kwargs)
