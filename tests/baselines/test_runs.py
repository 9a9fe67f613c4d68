"""Run files through the one reader and writer: round trips, formats, trec_eval semantics, errors, ties."""
from __future__ import annotations

import bz2
import lzma
import warnings

import numpy as np
import pandas as pd
import pytest

from ragcov_data.baselines import BM25, load_run, save_run, top_tie_share, top_tie_sizes, validate_run
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.runs import OwnChunkWarning


@pytest.fixture(scope="module")
def real_run(small_task):
    corpus, queries = small_task
    bm = BM25(show_progress=False).index(corpus)
    return bm.search(queries.iloc[:60], k=10, exclude_self=True, show_progress=False)


@pytest.mark.parametrize("suffix", [".parquet", ".trec", ".trec.gz"])
def test_round_trip_is_exact(real_run, tmp_path, suffix):
    path = save_run(real_run, tmp_path / f"run{suffix}")
    back = load_run(path)
    pd.testing.assert_frame_equal(back.reset_index(drop=True), real_run.reset_index(drop=True),
                                  check_dtype=False)
    np.testing.assert_array_equal(back["score"].to_numpy(), real_run["score"].to_numpy())  # bit for bit
    if suffix == ".parquet":
        assert {k: back.attrs[k] for k in real_run.attrs} == real_run.attrs
    else:
        short = real_run.attrs["task_fingerprint"]["corpus_sha256"][:12]  # the tag carries the corpus indexed
        assert back.attrs["tag"] == f"bm25|rc:{short}" and back.attrs["format"] == "trec"
    assert back.attrs["rank_from"] == "file" and back.attrs["score_from"] == "file"
    assert not list(tmp_path.glob(".*.tmp"))  # atomic write left no temp file


def test_retriever_runs_are_already_in_trec_eval_order(real_run):
    # ranks written by the retriever equal the order trec_eval derives from the scores
    again = validate_run(real_run.drop(columns="rank"))
    assert again["rank"].tolist() == real_run["rank"].tolist()
    assert again["corpus-id"].tolist() == real_run["corpus-id"].tolist()


def test_external_dataframe_without_rank_is_ordered_like_trec_eval():
    ext = pd.DataFrame({"qid": ["q1", "q1", "q1", "q2", "q2"],
                        "docid": ["c", "a", "b", "x", "y"],
                        "score": [1.0, 2.0, 1.0, 0.5, 0.7]})
    run = load_run(ext)
    assert run.values.tolist() == [["q1", "a", 1, 2.0], ["q1", "c", 2, 1.0], ["q1", "b", 3, 1.0],
                                   ["q2", "y", 1, 0.7], ["q2", "x", 2, 0.5]]
    assert run.attrs["rank_from"] == "score"


def test_trec_ranks_are_informational(tmp_path):
    p = tmp_path / "pyserini.txt"  # no known suffix: detected by content
    p.write_text("q1 Q0 d1 0 7.5 bm25\nq1\tQ0\td3 0 7.5 bm25\n\n  q1 Q0 d2   7 1.25 bm25  \r\n")
    run = load_run(p)
    assert run.attrs["format"] == "trec"
    assert run["corpus-id"].tolist() == ["d3", "d1", "d2"]  # score, then id descending
    assert run["rank"].tolist() == [0, 0, 7]                # the file's ranks kept for tie_policy="run"


def test_rank_only_csv_like_a_published_juristcu_run(tmp_path):
    p = tmp_path / "juristcu_bm25.csv"
    p.write_text("QUERY_ID,RANK,DOC_ID,ENGINE\n1,2,0042,bm25\n1,1,7,bm25\n2,1,9,bm25\n")
    run = load_run(p)
    assert run["corpus-id"].tolist() == ["7", "0042", "9"]     # ordered by rank; ids stay text
    assert run["score"].tolist() == [-1.0, -2.0, -1.0]
    assert run.attrs["score_from"] == "rank"


def test_columns_mapping_and_tsv(tmp_path):
    p = tmp_path / "r.tsv"
    p.write_text("Q\tD\tS\tother\nq1\ta\t0.5\tx\nq1\tb\t0.9\ty\n")
    with pytest.raises(InputFileError, match=r"r.tsv \(format tsv, by suffix\): no column for \['query-id'"):
        load_run(p)
    run = load_run(p, columns="query-id=Q,corpus-id=D,score=S")
    assert run["corpus-id"].tolist() == ["b", "a"]
    assert load_run(p, columns={"query-id": "Q", "corpus-id": "D", "score": "S"}).equals(run)


def test_json_layouts_and_dicts(tmp_path):
    p = tmp_path / "run.json"
    p.write_text('{"q1": {"a": 1.0, "b": 3.0}, "q2": {"c": 0.5}}')
    run = load_run(p)
    assert run.values.tolist() == [["q1", "b", 1, 3.0], ["q1", "a", 2, 1.0], ["q2", "c", 1, 0.5]]
    ranked = load_run({"q1": ["b", "a"], "q2": ["c"]})
    assert ranked[["query-id", "corpus-id", "rank"]].values.tolist() == run[["query-id", "corpus-id", "rank"]].values.tolist()
    lines = tmp_path / "run.jsonl"
    lines.write_text('{"qid": "q1", "docid": "a", "score": 1}\n{"qid": "q1", "docid": "b", "score": 3}\n')
    assert load_run(lines)["corpus-id"].tolist() == ["b", "a"]
    with pytest.raises(InputFileError, match="mixes the"):
        load_run({"q1": ["a"], "q2": {"b": 1.0}})


def test_bom_and_compression(tmp_path):
    text = "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\n"
    (tmp_path / "bom.trec").write_bytes(b"\xef\xbb\xbf" + text.encode())
    (tmp_path / "r.trec.bz2").write_bytes(bz2.compress(text.encode()))
    (tmp_path / "r.trec.xz").write_bytes(lzma.compress(text.encode()))
    ref = load_run(tmp_path / "bom.trec")
    assert ref["query-id"].tolist() == ["q1", "q1"]
    for name in ("r.trec.bz2", "r.trec.xz"):
        assert load_run(tmp_path / name)[["query-id", "corpus-id", "score"]].equals(ref[["query-id", "corpus-id", "score"]])
    (tmp_path / "bad.trec.gz").write_bytes(b"not gzip")
    with pytest.raises(InputFileError, match="bad.trec.gz: cannot read"):
        load_run(tmp_path / "bad.trec.gz")


@pytest.mark.parametrize(
    "frame, match",
    [
        (pd.DataFrame({"query-id": ["q"], "doc": ["d"], "score": [1.0]}), r"no column for \['corpus-id'\]"),
        (pd.DataFrame({"query-id": ["q", "q", "q"], "corpus-id": ["a", "b", "a"], "score": [1, 2, 3]}),
         r"document 'a' is listed 2 times for query 'q' \(row 0 and row 2"),
        (pd.DataFrame({"query-id": ["q", "q"], "corpus-id": ["a", "b"], "score": [1.0, "high"]}),
         r"row 1: `score` 'high' is not a finite number"),
        (pd.DataFrame({"query-id": ["q", None], "corpus-id": ["a", "b"], "score": [1.0, 2.0]}),
         r"row 1: empty `query-id`"),
        (pd.DataFrame({"query-id": ["q"], "corpus-id": ["a"], "score": [1.0], "rank": [1.5]}),
         r"row 0: `rank` 1.5 is not an integer"),
        (pd.DataFrame({"query-id": ["q"], "corpus-id": ["a"], "score": [np.inf]}), r"is not a finite number"),
    ],
)
def test_validate_run_errors(frame, match):
    with pytest.raises(RagcovError, match=match):
        validate_run(frame)


def test_save_run_errors_and_own_chunk_warning(tmp_path):
    run = pd.DataFrame({"query-id": ["q 1"], "corpus-id": ["a"], "rank": [1], "score": [1.0]})
    with pytest.raises(RagcovError, match="contains whitespace; save as .parquet"):
        save_run(run, tmp_path / "r.trec")
    save_run(run, tmp_path / "r.parquet")  # parquet takes any id
    assert load_run(tmp_path / "r.parquet")["query-id"].tolist() == ["q 1"]
    with pytest.raises(RagcovError, match="no column for"):
        save_run(run.drop(columns="corpus-id"), tmp_path / "r.parquet")
    own = pd.DataFrame({"query-id": ["d#0001", "d#0001"], "corpus-id": ["d#0001", "d#0002"], "score": [9.0, 1.0]})
    with pytest.warns(OwnChunkWarning, match="1 rows rank a query's own chunk"):
        save_run(own, tmp_path / "own.trec")
    juris = pd.DataFrame({"query-id": ["13"], "corpus-id": ["13"], "score": [1.0]})  # a document, not a chunk

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save_run(juris, tmp_path / "juris.trec")


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
