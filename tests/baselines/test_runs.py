"""Run files: parquet/TREC round trips, runs from other toolkits, validation errors, top-score ties."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragcov_data.baselines import BM25, load_run, save_run, top_tie_share, top_tie_sizes, validate_run
from ragcov_data.errors import InputFileError, RagcovError


@pytest.fixture(scope="module")
def real_run(small_task):
    corpus, queries = small_task
    bm = BM25(show_progress=False).index(corpus)
    return bm.search(queries.iloc[:60], k=10, exclude_self=True, show_progress=False)


@pytest.mark.parametrize("suffix", [".parquet", ".trec"])
def test_round_trip_is_exact(real_run, tmp_path, suffix):
    path = save_run(real_run, tmp_path / f"run{suffix}")
    back = load_run(path)
    pd.testing.assert_frame_equal(back.reset_index(drop=True), real_run.reset_index(drop=True),
                                  check_dtype=False)
    np.testing.assert_array_equal(back["score"].to_numpy(), real_run["score"].to_numpy())  # bit for bit
    if suffix == ".parquet":
        assert back.attrs == real_run.attrs
    else:
        assert back.attrs == {"tag": "bm25"}
        first = path.read_text().splitlines()[0].split()
        assert first[1] == "Q0" and first[3] == "1" and first[5] == "bm25"
    assert not list(tmp_path.glob(".*.tmp"))  # atomic write left no temp file


def test_external_dataframe_without_rank():
    ext = pd.DataFrame({"query-id": ["q1", "q1", "q1", "q2", "q2"],
                        "corpus-id": ["c", "a", "b", "x", "y"],
                        "score": [1.0, 2.0, 1.0, 0.5, 0.7]})
    run = load_run(ext)
    assert run.values.tolist() == [["q1", "a", 1, 2.0], ["q1", "b", 2, 1.0], ["q1", "c", 3, 1.0],
                                   ["q2", "y", 1, 0.7], ["q2", "x", 2, 0.5]]
    # with the corpus order, ties follow corpus position instead of id order
    run = load_run(ext, corpus_order=["c", "b", "a", "y", "x"])
    assert run[run["query-id"] == "q1"]["corpus-id"].tolist() == ["a", "c", "b"]
    with pytest.raises(RagcovError, match="not in `corpus_order`"):
        load_run(ext, corpus_order=["a", "b"])


def test_trec_from_another_toolkit_rank_recomputed(tmp_path):
    p = tmp_path / "pyserini.txt"
    p.write_text("q1 Q0 d3 1 7.5 bm25\nq1 Q0 d1 2 7.5 bm25\n\nq1 Q0 d2 3 1.25 bm25\n")
    run = load_run(p)
    assert run["corpus-id"].tolist() == ["d3", "d1", "d2"]  # given ranks kept (consistent with scores)
    run = load_run(p, recompute_rank=True)
    assert run["corpus-id"].tolist() == ["d1", "d3", "d2"]  # documented ordering: ties by corpus-id


@pytest.mark.parametrize(
    "frame, match",
    [
        (pd.DataFrame({"query-id": ["q"], "doc": ["d"], "score": [1.0]}), r"lacks column\(s\) \['corpus-id'\]"),
        (pd.DataFrame({"query-id": ["q", "q", "q"], "corpus-id": ["a", "b", "a"], "score": [1, 2, 3]}),
         r"duplicate \(query-id, corpus-id\) pair \('q', 'a'\) at rows 0, 2"),
        (pd.DataFrame({"query-id": ["q", "q"], "corpus-id": ["a", "b"], "score": [1.0, "high"]}),
         r"non-numeric, NaN or infinite `score` at rows 1 \(first value: 'high'\)"),
        (pd.DataFrame({"query-id": ["q", None], "corpus-id": ["a", "b"], "score": [1.0, 2.0]}),
         r"empty or missing `query-id` at rows 1"),
        (pd.DataFrame({"query-id": ["q", "q"], "corpus-id": ["a", "b"], "score": [1.0, 2.0], "rank": [1, 1]}),
         r"rank 1 repeats within query 'q'"),
        (pd.DataFrame({"query-id": ["q", "q"], "corpus-id": ["a", "b"], "score": [1.0, 2.0], "rank": [1, 2]}),
         r"ranks contradict scores in query 'q'"),
        (pd.DataFrame({"query-id": ["q"], "corpus-id": ["a"], "score": [1.0], "rank": [0]}),
         r"`rank` must be a positive integer; bad at rows 0"),
    ],
)
def test_validate_run_errors(frame, match):
    with pytest.raises(RagcovError, match=match):
        validate_run(frame)


def test_trec_file_errors(tmp_path):
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d1 1 2.0 tag\nq1 Q0 d2 2 tag\n")
    with pytest.raises(InputFileError, match=r"bad.trec, line 2: expected 6 fields"):
        load_run(bad)
    bad.write_text("q1 Q0 d1 1 2.0 tag\nq1 Q0 d2 2 two tag\n")
    with pytest.raises(InputFileError, match=r"line 2: rank '2' must be an integer and score 'two' a number"):
        load_run(bad)
    bad.write_text("q1 Q0 d1 1 2.0 tag\nq1 Q0 d1 2 1.0 tag\n")
    with pytest.raises(InputFileError, match=r"duplicate \(query-id, corpus-id\) pair \('q1', 'd1'\) on lines 1, 2"):
        load_run(bad)
    with pytest.raises(InputFileError, match="does not exist"):
        load_run(tmp_path / "missing.trec")


def test_save_run_errors(tmp_path):
    run = pd.DataFrame({"query-id": ["q 1"], "corpus-id": ["a"], "rank": [1], "score": [1.0]})
    with pytest.raises(RagcovError, match="contains whitespace; save as .parquet"):
        save_run(run, tmp_path / "r.trec")
    save_run(run, tmp_path / "r.parquet")  # parquet takes any id
    assert load_run(tmp_path / "r.parquet")["query-id"].tolist() == ["q 1"]
    with pytest.raises(RagcovError, match="lacks column"):
        save_run(run.drop(columns="rank"), tmp_path / "r.parquet")


def test_top_tie_share_hand_made():
    run = pd.DataFrame({
        "query-id": ["q1", "q1", "q1", "q2", "q2", "q3", "q3", "q3", "q4"],
        "corpus-id": ["a", "b", "c", "a", "b", "a", "b", "c", "a"],
        "score": [2.0, 2.0, 1.0, 3.0, 1.0, 5.0, 5.0 * (1 + 1e-12), 5.0, 1.0],
    })
    sizes = top_tie_sizes(run)
    assert sizes.to_dict() == {"q1": 2, "q2": 1, "q3": 3, "q4": 1}
    assert top_tie_share(run) == 0.5


def test_top_tie_share_on_real_run(real_run):
    share = top_tie_share(real_run)
    sizes = top_tie_sizes(real_run)
    assert 0.0 <= share <= 1.0 and len(sizes) == real_run["query-id"].nunique()
    assert share == pytest.approx((sizes > 1).mean())
