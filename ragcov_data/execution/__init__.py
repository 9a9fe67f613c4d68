"""Execution: running retrievers and a team's pipelines on a task, to a run.

``engine`` is the one way to run a retriever on a task (index, search, stamp the task's fingerprint), in this
process or on a Ray cluster; ``pipelines`` asks a team's own pipeline (LangChain, LlamaIndex, any callable) every
question of a task and keeps the passages it returns as a passage run (``user_code`` imports the team's module
named on the command line, saying what went wrong by its cause); ``examples`` holds two real pipelines to
score and to copy. The runs are read and written by :mod:`ragcov_data.runs`; the retrievers are
:mod:`ragcov_data.baselines`.
"""
