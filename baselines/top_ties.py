"""Runs for the baselines: the run I/O of :mod:`ragcov_data.runs` (re-exported here, where the
retrievers' users look for it) and the share of queries whose top score is tied.

Run files are the evaluator's input, so their reader and writer live on the ground floor
(:mod:`ragcov_data.runs`): one reader for TREC, CSV/TSV, parquet and JSON runs, one writer.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ragcov_data.runs import load_run, save_run, validate_run
from ragcov_data.ties import TIE_TOL, tied


# ---- ties ---------------------------------------------------------------------------------------
def top_tie_sizes(run: pd.DataFrame) -> pd.Series:
    """Number of candidates tied with each query's best score (1 = no tie), indexed by query-id.

    Ties use :func:`ragcov_data.ties.tied` (relative tolerance ``TIE_TOL``). Queries with no row in
    the run do not appear.
    """
    run = validate_run(run)
    top = run.groupby("query-id", sort=False)["score"].transform("max").to_numpy()
    in_top = tied(run["score"].to_numpy(), top)
    return (
        pd.Series(in_top.astype(np.int64), index=run["query-id"].to_numpy())
        .groupby(level=0, sort=False)
        .sum()
        .rename("top_tie_size")
        .rename_axis("query-id")
    )


def top_tie_share(run: pd.DataFrame) -> float:
    """Share of the run's queries whose best score is tied by two or more candidates.

    Examples
    --------
    >>> import pandas as pd
    >>> run = pd.DataFrame({"query-id": ["q1", "q1", "q1", "q2", "q2"],
    ...                     "corpus-id": ["a", "b", "c", "a", "b"],
    ...                     "score": [2.0, 2.0, 1.0, 3.0, 1.0]})
    >>> top_tie_share(run)
    0.5
    """
    sizes = top_tie_sizes(run)
    return float((sizes > 1).mean()) if len(sizes) else 0.0


__all__ = ["validate_run", "save_run", "load_run", "top_tie_sizes", "top_tie_share", "TIE_TOL"]
