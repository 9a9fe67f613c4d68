"""Tasks: what is scored and where it comes from.

A task is a corpus, queries and graded judgments (qrels) with the column its inference clusters on. This room
holds the task record and its files (``record``: :class:`Task`, written and verified as a folder), the checks of
judgments (``qrels``), the datasets by name (``registry``) and ``load_dataset`` over them (``load``), where a task
comes from in one call (``sources``: a registered benchmark, a task folder, a bring-your-own acervo, a document
sample), document samples themselves (``sampling``), a task's documents as a pipeline ingests them
(``documents``), the default data folder (``paths``) and publishing a task as parquet with its card
(``publish``). The loaders that build each benchmark are :mod:`ragcov_data.loaders`.
"""
