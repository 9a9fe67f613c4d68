"""One level check and one JSON cleaning for every result."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from ragcov_data._json import to_jsonable
from ragcov_data.errors import RagcovError
from ragcov_data.eval.estimates import _kernels
from ragcov_data.eval import design_effect, evaluate, interval


@pytest.mark.parametrize("bad", [0, 1, 1.0, -0.5, 95, float("nan"), "0.95", True, None])
def test_check_level_refuses_everything_outside_the_open_unit_interval(bad):
    with pytest.raises(RagcovError, match=r"`level` must be in \(0, 1\), e.g. 0.95; got"):
        _kernels.check_level(bad)
    assert isinstance(RagcovError("x"), ValueError)


def test_check_level_float_only_and_every_caller_says_the_same():
    assert _kernels.check_level(0.9) == 0.9 and _kernels.check_level(np.float32(0.5)) == 0.5
    with pytest.raises(RagcovError, match=r"`level` must be a float in \(0, 1\)"):
        _kernels.check_level(1, float_only=True)
    v, c = np.array([1.0, 0, 1, 1, 0, 0]), np.array(list("aabbcc"))
    for call in (lambda: interval(v, c, level=1.5),
                 lambda: _kernels.interval_batch(np.ones((1, 3)), np.ones((1, 3)), np.ones((1, 3)), estimator="micro",
                                              method="cr2", level=1.5)):
        with pytest.raises(RagcovError, match=r"`level` must be in \(0, 1\), e.g. 0.95; got 1.5"):
            call()


def test_to_jsonable_cleans_numpy_frames_and_non_finite_numbers():
    frame = pd.DataFrame({"a": [1, 2], "b": [np.nan, 0.5]})
    obj = {1: np.int64(3), "f": np.float32(0.25), "inf": float("inf"), "nan": np.nan, "b": np.bool_(True),
           "arr": np.array([1.0, np.nan]), "t": (np.str_("x"), None), "df": frame}
    out = to_jsonable(obj)
    assert out == {"1": 3, "f": 0.25, "inf": None, "nan": None, "b": True, "arr": [1.0, None], "t": ["x", None],
                   "df": [{"a": 1, "b": None}, {"a": 2, "b": 0.5}]}
    assert type(out["1"]) is int and type(out["b"]) is bool and type(out["t"][0]) is str
    json.dumps(out, allow_nan=False)  # strictly valid JSON


def test_results_write_json_through_the_one_cleaning():
    d = design_effect([1.0, 1, 1, 1], list("aabb"))  # zero variance: nan ICC and DEFF
    js = json.loads(d.to_json())
    assert js["icc"] is None and js["deff"] is None
    assert js == {**to_jsonable(d.to_dict()), "result_type": "DesignEffectResult"}  # + the class, for from_json
    assert math.isnan(d.icc)


def test_run_metadata_goes_through_the_one_cleaning(tmp_path):
    """The run writer cleans its metadata (parquet attrs) with the one JSON cleaning: numpy scalars become numbers,
    nan becomes null, and the attrs come back from the file as that cleaning gives them."""
    import pandas as pd

    from ragcov_data import runs

    assert not hasattr(runs, "_jsonable") and runs.to_jsonable is to_jsonable
    attrs = {"retriever": "bm25", "params": {"k1": np.float64(1.2), "b": 0.75, "n": np.int64(3)},
             "exclude_self": True, "sample": {"k": 25, "documents": ["a", "b"], "ratio": float("nan")}}
    run = pd.DataFrame({"query-id": ["q1"], "corpus-id": ["d1"], "rank": [1], "score": [1.0]})
    run.attrs = attrs
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pyarrow's "Could not serialize pd.DataFrame.attrs" must not arise
        runs.save_run(run, tmp_path / "r.parquet")
    back = runs.load_run(tmp_path / "r.parquet").attrs
    assert pd.read_parquet(tmp_path / "r.parquet").attrs.get("params") == to_jsonable(attrs)["params"]
    want = to_jsonable(attrs)
    assert {k: back[k] for k in want} == want
