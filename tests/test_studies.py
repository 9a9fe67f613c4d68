"""The library jobs behind the command line (:mod:`ragcov_data.jobs.studies`)."""
from __future__ import annotations

import pandas as pd
import pytest

from ragcov_data.jobs import studies
from ragcov_data.baselines import BM25
from ragcov_data.errors import RagcovError
from ragcov_data.runs.fingerprint import FINGERPRINT_KEY, task_fingerprint


@pytest.fixture(scope="module")
def chunkings(data_dir):
    src = {"dataset": None, "data_dir": str(data_dir), "chunk_words": 400, "max_words": 400}
    return studies.acervo_chunkings(src)


def _frames(task):
    return {s: task[s].to_pandas() if hasattr(task[s], "to_pandas") else task[s] for s in ("corpus", "queries")}


def test_acervo_chunkings_cut_one_acervo_twice(chunkings):
    assert list(chunkings) == ["words-400", "dispositivo"]
    words, disp = (_frames(t) for t in chunkings.values())
    w, d = set(words["corpus"]["doc_id"]), set(disp["corpus"]["doc_id"])
    assert len(w & d) >= 0.5 * max(len(w), len(d))  # one acervo's documents, cut two ways
    assert task_fingerprint(words)["corpus_sha256"] != task_fingerprint(disp)["corpus_sha256"]


def test_chunking_comparison_reuses_a_given_run_and_evaluation(chunkings):
    """The benchmark hands its word-window run and evaluation in; the comparison equals the one made from
    scratch (what `ragcov chunking` does), so the two jobs cannot drift apart."""
    from ragcov_data.eval import evaluate

    kw = dict(level=0.95, seed=0, n_resamples=199)
    fresh, runs, evals = studies.chunking_comparison(chunkings, lambda: BM25(show_progress=False), **kw)
    words = next(iter(chunkings))
    given = studies.run_task(BM25(show_progress=False), chunkings[words], k=10)
    pd.testing.assert_frame_equal(given, runs[words], check_exact=True)
    ev = evaluate(given, chunkings[words], "hit@1", cluster="doc_id", **kw)
    reused, runs2, _ = studies.chunking_comparison(chunkings, lambda: BM25(show_progress=False),
                                                   runs={words: given}, evals={words: ev}, **kw)
    assert runs2[words] is given
    assert reused.summary() == fresh.summary()
    assert list(evals) == list(chunkings)


def test_make_run_keeps_the_tasks_fingerprint_over_the_sources_attrs(chunkings):
    task = chunkings["words-400"]
    run, exclude_self, notice = studies.make_run(BM25(show_progress=False), task, k=5,
                                                 attrs={"sample": {"k": 3}, FINGERPRINT_KEY: {"corpus_sha256": "0"}})
    assert exclude_self is True
    assert notice is None or isinstance(notice, str)
    assert run.attrs["sample"] == {"k": 3}
    assert run.attrs[FINGERPRINT_KEY] == task_fingerprint(task)


def test_make_run_refuses_a_task_of_one_document(chunkings):
    task = _frames(chunkings["words-400"])
    one = task["queries"]["doc_id"].iloc[0]
    small = {"corpus": task["corpus"], "queries": task["queries"][task["queries"]["doc_id"] == one]}
    with pytest.raises(RagcovError, match="one document"):
        studies.make_run(BM25(show_progress=False), small)
    with pytest.raises(RagcovError, match="no corpus"):
        studies.make_run(BM25(show_progress=False), {"corpus": task["corpus"].iloc[:0], "queries": task["queries"]})
