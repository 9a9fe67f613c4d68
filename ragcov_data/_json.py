"""One JSON cleaning for every result, report and run metadata ragcov writes."""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

__all__ = ["to_jsonable"]


def to_jsonable(obj: Any) -> Any:
    """A JSON-safe copy of ``obj``: DataFrames to lists of records, mappings to dicts with str keys, lists,
    tuples and arrays to lists, numpy scalars to Python ones, non-finite floats to ``None`` (JSON has no
    NaN or infinity). Anything else is returned as is."""
    if hasattr(obj, "to_dict") and hasattr(obj, "columns"):  # a DataFrame
        return [to_jsonable(r) for r in obj.to_dict(orient="records")]
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, np.generic):  # numpy strings, datetimes...
        return obj.item()
    return obj
