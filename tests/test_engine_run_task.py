"""``engine.run_task``: the one entry point (index, search, stamp) gives the run the step-by-step path gives."""
from __future__ import annotations

import pandas as pd
import pytest

from ragcov_data.execution import engine
from ragcov_data.baselines import BM25, TfIdf
from ragcov_data.errors import RagcovError
from ragcov_data.runs.fingerprint import FINGERPRINT_KEY, task_fingerprint


@pytest.fixture(scope="module")
def task(aneel_fulltext):
    import ragcov_data

    return ragcov_data.build_task(aneel_fulltext, chunk_words=200)


@pytest.mark.parametrize("klass", [BM25, TfIdf])
def test_run_task_equals_index_then_search(task, klass):
    old = klass(show_progress=False).index(task.corpus).search(task.queries, k=10, exclude_self=True)
    new = engine.run_task(klass(show_progress=False), task, k=10)
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    assert new.attrs[FINGERPRINT_KEY] == task_fingerprint(task)  # stamped as `ragcov run` stamps it
    assert new.attrs[FINGERPRINT_KEY]["corpus_sha256"] == old.attrs[FINGERPRINT_KEY]["corpus_sha256"]


def test_exclude_self_is_decided_by_the_task(task):
    assert engine.is_self_retrieval(task.queries)
    run = engine.run_task(BM25(show_progress=False), task, k=5)
    own = dict(zip(task.queries["_id"], task.queries["chunk_id"]))
    assert not (run["corpus-id"] == run["query-id"].map(own)).any()  # no query finds its own chunk
    kept = engine.run_task(BM25(show_progress=False), task, k=5, exclude_self=False)
    top = kept[kept["rank"] == 1]
    assert (top["corpus-id"] == top["query-id"].map(own)).mean() > 0.5  # left in, it mostly ranks first
    plain = {"corpus": task.corpus, "queries": task.queries[["_id", "text"]]}
    assert not engine.is_self_retrieval(plain["queries"])


def test_queries_subset_keeps_order_and_the_tasks_fingerprint(task):
    sub = task.queries.iloc[[7, 3, 5]][["_id", "text"]]
    run = engine.run_task(BM25(show_progress=False), task, k=3, queries=sub)
    assert list(dict.fromkeys(run["query-id"])) == list(sub["_id"])
    assert run.attrs[FINGERPRINT_KEY]["corpus_sha256"] == task_fingerprint(task)["corpus_sha256"]


class _Plain:
    """A retriever written elsewhere: ``index(corpus)`` and ``search(queries, k)``, nothing more."""

    def index(self, corpus):
        self.ids = list(corpus["_id"])
        return self

    def search(self, queries, k=10):
        rows = [(q, d, r + 1, float(k - r)) for q in queries["_id"] for r, d in enumerate(self.ids[:k])]
        return pd.DataFrame(rows, columns=["query-id", "corpus-id", "rank", "score"])


def test_a_plain_retriever_runs_but_self_retrieval_is_never_dropped(task):
    plain = {"corpus": task.corpus, "queries": task.queries[["_id", "text"]]}
    run = engine.run_task(_Plain(), plain, k=2)
    assert len(run) == 2 * len(plain["queries"])
    with pytest.raises(RagcovError, match="exclude_self"):
        engine.run_task(_Plain(), task, k=2)  # the task is self-retrieval: silently keeping own chunks is refused


@pytest.mark.parametrize("kw, message", [({"k": 0}, "positive"), ({"engine": "spark"}, "engine"),
                                         ({"workers": 2}, "engine='ray' only")])
def test_bad_options_are_refused(task, kw, message):
    with pytest.raises(RagcovError, match=message):
        engine.run_task(BM25(show_progress=False), task, **kw)
