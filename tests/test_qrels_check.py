"""check_qrels: grades outside the range or not numbers, empty ids, repeated pairs, unknown ids."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.tasks.qrels import QrelsCheck, UnknownQrelsWarning, check_qrels, grade_problems


def _qrels(scores, qids=None, dids=None) -> pd.DataFrame:
    n = len(scores)
    return pd.DataFrame({"query-id": qids or [f"q{i % 3}" for i in range(n)],
                         "corpus-id": dids or [f"d{i}" for i in range(n)], "score": scores})


def test_clean_qrels_report_counts():
    q = _qrels([0, 1, 2, 3, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = check_qrels(q, corpus_ids=[f"d{i}" for i in range(5)], query_ids=["q0", "q1", "q2"], grade_range=(0, 3))
    assert isinstance(rep, QrelsCheck) and rep.ok and rep.messages == []
    assert rep.rows == 5 and rep.grades == {0: 1, 1: 1, 2: 1, 3: 2}
    assert rep.unknown_documents == {"rows": 0, "ids": 0, "examples": []}


@pytest.mark.parametrize("scores, bad_row, shown, reason", [
    ([1, 4, 2], 2, "4", "outside the documented range 0..3"),
    ([1, 2, -1], 3, "-1", "outside the documented range 0..3"),
    (["1", "abc", "2"], 2, "'abc'", "not a number"),
    ([1.0, 1.5, 2.0], 2, "1.5", "not an integer"),
    (["1", "", "2"], 2, "''", "empty"),
    ([1, None, 2], 2, "nan", "empty"),  # pandas stores the missing grade as NaN
    ([1, True, 2], 2, "True", "not a number"),
])
def test_bad_grades_raise_naming_row_value_and_fix(scores, bad_row, shown, reason):
    q = _qrels(scores)
    msg = (rf"task/qrels\.csv: row {bad_row} has score {shown} \({reason}; 1 invalid grade\(s\) in all\); grades must "
           r"be integers 0\.\.3\. Fix the score column")
    with pytest.raises(InputFileError, match=msg):
        check_qrels(q, grade_range=(0, 3), source="task/qrels.csv")


def test_first_line_turns_rows_into_file_lines():
    q = _qrels([1, 1, 1, 2])
    with pytest.raises(InputFileError, match=r"qrels\.csv: line 5 has score 2 \(outside the documented range 1\.\.1"):
        check_qrels(q, grade_range=(1, 1), source="qrels.csv", first_line=2)


def test_no_range_still_needs_integers():
    assert check_qrels(_qrels([0, 7, -2])).grades == {-2: 1, 0: 1, 7: 1}
    with pytest.raises(InputFileError, match=r"row 2 has score 'x' \(not a number; 1 invalid .*must be integers\. "):
        check_qrels(_qrels([0, "x"]))


def test_numeric_strings_and_int_valued_floats_accepted():
    grades, problems = grade_problems([" 2", "3", 1.0, np.int64(0)], (0, 3))
    assert problems == [] and grades.tolist() == [2, 3, 1, 0] and grades.dtype == np.int64


def test_unknown_documents_and_queries_warned_with_counts_and_examples():
    q = _qrels([1] * 8, qids=["q1"] * 6 + ["q9", "q9"], dids=[f"d{i}" for i in range(8)])
    corpus = ["d0", "d1"]
    with pytest.warns(UnknownQrelsWarning) as rec:
        rep = check_qrels(q, corpus_ids=corpus, query_ids=["q1"], source="qrels.parquet")
    msg = str(rec[0].message)
    assert msg.startswith("qrels.parquet: 6 judgments name 6 documents not in the task (first: "
                          "['d2', 'd3', 'd4', 'd5', 'd6']); 2 judgments name 1 queries not in the task (first: ['q9'])")
    assert "They are kept" in msg
    assert rep.unknown_documents == {"rows": 6, "ids": 6, "examples": ["d2", "d3", "d4", "d5", "d6"]}
    assert rep.unknown_queries == {"rows": 2, "ids": 1, "examples": ["q9"]}
    assert not rep.ok and len(rep.messages) == 2


def test_unknown_ids_error_or_report_only():
    q = _qrels([1, 1], dids=["d0", "zz"])
    with pytest.raises(InputFileError,
                       match=r"qrels: 1 judgments name 1 documents not in the task \(first: \['zz'\]\)"):
        check_qrels(q, corpus_ids=["d0"], on_unknown="error")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = check_qrels(q, corpus_ids=["d0"], on_unknown="report")
    assert rep.unknown_documents["rows"] == 1
    with pytest.raises(RagcovError, match=r"`on_unknown` must be one of \('warn', 'error', 'report'\); got 'drop'"):
        check_qrels(q, on_unknown="drop")


def test_ids_compared_as_strings():
    q = pd.DataFrame({"query-id": [1, 2], "corpus-id": [21064, 42166], "score": [3, 0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = check_qrels(q, corpus_ids=["21064", "42166"], query_ids=[1, 2], grade_range=(0, 3))
    assert rep.ok


def test_structure_errors():
    with pytest.raises(InputFileError, match=r"x\.csv: qrels lack column\(s\) \['score'\] \(found \['query-id', "
                                             r"'corpus-id', 'grade'\]\); expected"):
        check_qrels(pd.DataFrame({"query-id": ["q"], "corpus-id": ["d"], "grade": [1]}), source="x.csv")
    with pytest.raises(InputFileError, match=r"row 2 has an empty corpus-id \(1 rows in all\)"):
        check_qrels(pd.DataFrame({"query-id": ["q", "q"], "corpus-id": ["d", " "], "score": [1, 1]}))
    with pytest.raises(InputFileError, match=r"row 3 judges the pair \(query-id 'q', corpus-id 'd'\) again "
                                             r"\(1 repeated pairs\); keep one grade per pair"):
        check_qrels(pd.DataFrame({"query-id": ["q", "q", "q"], "corpus-id": ["d", "e", "d"], "score": [1, 0, 2]}))
    with pytest.raises(RagcovError, match=r"qrels must be a DataFrame"):
        check_qrels({"query-id": ["q"]})


def test_real_self_retrieval_qrels_pass(aneel_task_qrels):
    qrels, corpus_ids, query_ids = aneel_task_qrels
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = check_qrels(qrels, corpus_ids=corpus_ids, query_ids=query_ids, grade_range=(1, 1))
    assert rep.rows == len(qrels) and rep.grades == {1: len(qrels)}


@pytest.fixture(scope="module")
def aneel_task_qrels(aneel_fulltext):
    from ragcov_data import build_task

    task = build_task(aneel_fulltext, chunk_words=400, query_words=20)
    return task.qrels, task.corpus["_id"], task.queries["_id"]
