"""Benchmark builders (``datasets.GeneratorBasedBuilder`` subclasses), installed as ``ragcov_data.loaders``.

- :mod:`.chunking`: pure chunking rules of the self-retrieval task;
- :mod:`.base`: :class:`~ragcov_data.loaders.base.TaskBuilder`, a builder whose corpus/queries/qrels splits
  each have their own features;
- :mod:`.build`: :func:`~ragcov_data.loaders.build.build_task`, the construction rules of the chunked
  self-retrieval task (chunking an acervo into corpus, queries and qrels);
- :mod:`.self_retrieval`: ``aneel_taesa`` (chunked self-retrieval over any acervo);
- :mod:`.juristcu`: ``juristcu``;
- :mod:`.cited_questions`: ``cited_questions`` and ``irpf`` (real questions, gold = cited provisions);
  :mod:`.articles` locates provisions and cuts article-level chunks;
- :mod:`.lgpd`: ``lgpd`` (exam questions cited by LexML URN, over acts rebuilt from unit tables by
  :mod:`._unit_tables`).

Use them through :func:`ragcov_data.load_dataset`; builders are imported lazily by the registry.
"""
