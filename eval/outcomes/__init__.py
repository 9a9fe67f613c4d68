"""Stage 1 of the evaluation flow: a run and a task become per-query outcomes (and the IR metrics that score them).

``run -> outcomes -> estimates -> comparisons -> misses / planning``.
"""
from __future__ import annotations

import inspect
import sys
import types
from typing import Any

from ragcov_data.eval.outcomes.table import (  # noqa: F401
    ALL_GROUP,
    DEFAULT_CLUSTERS,
    EVAL_JSON_FIELDS,
    ON_MISSING,
    OutcomeSet,
    OutcomeTable,
    load_task_frames,
    outcomes_from_eval_json,
    outside_notice,
    read_run,
    run_name,
)

from ragcov_data.eval.outcomes.args import check_outcome_args  # noqa: E402,F401
from ragcov_data.eval.outcomes.prepare import PreparedTask, prepare_task  # noqa: E402,F401
from ragcov_data.eval.outcomes.score import ScoredRun, score_run  # noqa: E402,F401
from ragcov_data.eval.outcomes.align import align  # noqa: E402,F401
from ragcov_data.eval.outcomes.stage import outcomes, outcomes_many  # noqa: E402,F401

__all__ = ["outcomes", "outcomes_many", "OutcomeTable", "OutcomeSet", "load_task_frames", "outcomes_from_eval_json",
           "prepare_task", "score_run", "align", "PreparedTask", "ScoredRun", "check_outcome_args"]


class _Stage(types.ModuleType):
    """This stage's module, callable as its main function: ``ragcov_data.eval.outcomes(run, task, metric)`` calls
    :func:`~ragcov_data.eval.outcomes.stage.outcomes`, while ``import ragcov_data.eval.outcomes as o`` gives the
    module (the package's ``outcomes`` attribute and the stage are one object, so neither shadows the other)."""

    def __call__(self, *args: Any, **kwargs: Any) -> OutcomeTable:
        return outcomes(*args, **kwargs)


sys.modules[__name__].__class__ = _Stage
__signature__ = inspect.signature(outcomes)  # help() and inspect.signature show the function's parameters
