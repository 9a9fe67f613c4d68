"""Stage 1 of the evaluation flow: a run and a task become per-query outcomes (and the IR metrics that score them).

``run -> outcomes -> estimates -> comparisons -> misses / planning``.
"""
from __future__ import annotations

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
