"""Every result reads back from its own JSON (one registry of result classes): ``X.from_json(x.to_json())``
gives an object whose JSON is the same, and the module-level ``from_json`` picks the class from the file."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from ragcov_data.errors import RagcovError  # noqa: E402
from ragcov_data.eval import compare, design_effect, evaluate, from_json, interval, leaderboard  # noqa: E402
from ragcov_data.eval.estimates.results import RESULT_TYPES, EvaluationResult, IntervalResult  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_evaluate import make_run, tiny_task  # noqa: E402


def _results():
    task = tiny_task()
    a = make_run(task, {"A": lambda i: True, "C": lambda i: i < 3}, seed=1)
    b = make_run(task, {"B": lambda i: True}, seed=2)
    rng = np.random.default_rng(0)
    values, clusters = rng.integers(0, 2, 40).astype(float), np.repeat(np.arange(10), 4)
    return {
        "interval": interval(values, clusters, estimator="micro", method="cr2"),
        "design": design_effect(values, clusters),
        "evaluate": evaluate(a, task, metric="hit@1", n_resamples=99, seed=0),
        "compare": compare(a, b, task, metric="hit@1", n_resamples=99, seed=0),
        "leaderboard": leaderboard({"a": a, "b": b}, task, metric="hit@1", n_resamples=99, seed=0),
    }


@pytest.fixture(scope="module")
def results():
    return _results()


@pytest.mark.parametrize("name", ["interval", "design", "evaluate", "compare", "leaderboard"])
def test_a_result_reads_back_from_its_json(results, name, tmp_path):
    r = results[name]
    path = tmp_path / f"{name}.json"
    text = r.to_json(str(path))
    again = type(r).from_json(str(path))
    assert type(again) is type(r)
    assert json.loads(again.to_json()) == json.loads(text)
    assert type(from_json(text)) is type(r)  # the registry picks the class from the text too
    assert json.loads(text)["result_type"] == type(r).__name__


def test_interval_fields_and_methods_survive(results):
    r = results["interval"]
    again = IntervalResult.from_json(r.to_json())
    assert again.confidence_interval() == r.confidence_interval()
    assert again.flags == r.flags and isinstance(again.flags, tuple)


def test_evaluation_result_keeps_its_tables(results):
    r = results["evaluate"]
    again = EvaluationResult.from_json(r.to_json())
    pd.testing.assert_frame_equal(again.per_document.reset_index(drop=True), r.per_document.reset_index(drop=True),
                                  check_dtype=False)
    assert again.interval() == pytest.approx(r.interval())
    assert again.summary().splitlines()[0] == r.summary().splitlines()[0]


def test_every_result_class_is_registered():
    assert {"IntervalResult", "DesignEffectResult", "EvaluationResult", "ComparisonResult",
            "LeaderboardResult", "MissesResult", "PowerResult"} <= set(RESULT_TYPES)


def test_bad_files_are_refused_clearly(results, tmp_path):
    with pytest.raises(RagcovError, match="is not JSON"):
        from_json("{not json")
    with pytest.raises(RagcovError, match="names no result type"):
        from_json('{"a": 1}')
    with pytest.raises(RagcovError, match="holds a EvaluationResult, not a IntervalResult"):
        IntervalResult.from_json(results["evaluate"].to_json())
    with pytest.raises(RagcovError, match="cannot read the result file"):
        from_json(str(tmp_path / "missing.json"))
    with pytest.raises(RagcovError, match="lacks"):
        IntervalResult.from_json('{"result_type": "IntervalResult", "estimate": 0.5}')


def test_confidence_interval_has_one_signature_on_every_result(results):
    import inspect

    from ragcov_data.eval.comparisons.paired_chunkings import ChunkingComparison
    from ragcov_data.eval.estimates.results import CI_SIGNATURE, ComparisonResult, ConfidenceInterval

    for cls in (IntervalResult, EvaluationResult, ComparisonResult, ChunkingComparison):
        params = list(inspect.signature(cls.confidence_interval).parameters)[1:]
        assert tuple(params) == CI_SIGNATURE, cls.__name__
    for name in ("interval", "evaluate", "compare"):
        ci = results[name].confidence_interval()
        assert isinstance(ci, ConfidenceInterval) and ci.low <= ci.high
    ev = results["evaluate"]
    assert ev.confidence_interval("macro", "t") == ev.interval("macro", "t")
    r = results["interval"]
    assert r.confidence_interval(r.estimator, r.method) == r.confidence_interval()
    with pytest.raises(RagcovError, match="asked for method"):
        r.confidence_interval(method="bootstrap")
