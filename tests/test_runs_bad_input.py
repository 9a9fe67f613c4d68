"""Bad or odd run files: each ends in a clear message naming the file and line, or a stated, correct result."""
from __future__ import annotations

import bz2
import gzip
import json
import lzma

import numpy as np
import pandas as pd
import pytest

import ragcov_data.runs._stream as runs  # the bounded reader
from ragcov_data.cli import build_parser
from ragcov_data.cli._common import run_options
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.runs import load_run, validate_run

TREC = "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d1 1 0.5 t\n"


# ---------------------------------------------------------------- byte-order marks
def test_bom_at_the_start_is_accepted(tmp_path):
    p = tmp_path / "r.trec"
    p.write_bytes(b"\xef\xbb\xbf" + TREC.encode())
    assert load_run(p)["query-id"].tolist() == ["q1", "q1", "q2"]


# ---------------------------------------------------------------- compression
def test_corrupt_gzip_stream_is_named_not_a_bug(tmp_path):
    good = gzip.compress(TREC.encode() * 200)
    bad = bytearray(good)
    bad[40:60] = b"\x00" * 20  # inside the deflate stream
    p = tmp_path / "r.trec.gz"
    p.write_bytes(bytes(bad))
    with pytest.raises(InputFileError, match=r"r.trec.gz: the gzip stream is corrupt or truncated \((zlib|gzip): "
                                             r".*\); re-create or re-download it"):
        load_run(p)


def test_truncated_compressed_streams(tmp_path):
    for name, data in (("t.trec.gz", gzip.compress(TREC.encode() * 50)),
                       ("t.trec.bz2", bz2.compress(TREC.encode() * 50)),
                       ("t.trec.xz", lzma.compress(TREC.encode() * 50))):
        p = tmp_path / name
        p.write_bytes(data[: len(data) // 2])
        with pytest.raises(InputFileError, match=r"stream is corrupt or truncated .*re-create or re-download it"):
            load_run(p)


@pytest.mark.parametrize("compress, what, suffix", [
    (gzip.compress, "gzip-compressed", ".gz"), (bz2.compress, "bzip2-compressed", ".bz2"),
    (lzma.compress, "xz-compressed", ".xz"),
])
def test_compressed_content_without_its_suffix(tmp_path, compress, what, suffix):
    p = tmp_path / "run.trec"
    p.write_bytes(compress(TREC.encode()))
    with pytest.raises(InputFileError, match=rf"run.trec: this file is {what}: name it run.trec\{suffix}"):
        load_run(p)
    renamed = tmp_path / f"run.trec{suffix}"
    p.rename(renamed)
    assert len(load_run(renamed)) == 3  # the fix the message gives works


def test_parquet_content_under_another_name(tmp_path):
    src = tmp_path / "r.parquet"
    load_run(pd.DataFrame({"query-id": ["q"], "corpus-id": ["a"], "score": [1.0]})).to_parquet(src)
    p = tmp_path / "r.trec"
    p.write_bytes(src.read_bytes())
    with pytest.raises(InputFileError, match="this file is a parquet file: name it r.trec.parquet or pass --run-format parquet"):
        load_run(p)


# ---------------------------------------------------------------- one bad file, one message
#: (file name, its content (None: no file), the message's pattern, load_run options that read it, the corpus ids
#: they give). The message names the file, the line and the fix; where it gives one, the fix works.
BAD_FILES = [
    pytest.param("bad.trec", "q1 Q0 d1 1 2.0 tag\nq1 Q0 d2 2 tag\n",
                 r"bad.trec \(format trec, by suffix\), line 2: expected 6 fields", None, None, id="trec-short-line"),
    pytest.param("bad.trec", "q1 Q0 d1 1 2.0 tag\n\nq1 Q0 d2 2 two tag\n", r"line 3: score 'two' is not a number",
                 None, None, id="trec-score-not-a-number"),
    pytest.param("bad.trec", "q1 Q0 d1 1 2.0 tag\n\nq1 Q0 d1 2 1.0 tag\n",
                 r"document 'd1' is listed 2 times for query 'q1' \(line 1 and line 3", None, None,
                 id="trec-repeated-pair"),
    pytest.param("bad.trec", b"q1 Q0 d1 1 2.0 tag\nq1 Q0 d\xff 2 1.0 tag\n", r"bad.trec, line 2: bytes that are not UTF-8",
                 None, None, id="trec-not-utf8"),
    pytest.param("missing.trec", None, "does not exist", None, None, id="missing"),
    pytest.param("empty.trec", "\n\n", "no run lines found", None, None, id="empty"),
    pytest.param("r.csv", "qid,docid,score\nq1,a,1.0\n\nq1,b,abc\n",
                 r"r.csv \(format csv, by suffix\), line 4: `score` 'abc'", None, None, id="csv-score-not-a-number"),
    # two BOM'd runs concatenated: the second BOM would become part of a query id and lose a row
    pytest.param("cat.trec", b"\xef\xbb\xbf" + TREC.encode() + b"\xef\xbb\xbfq3 Q0 d1 1 0.5 t\n",
                 r"cat.trec, line 4 starts with a byte-order mark \(U\+FEFF\): files were concatenated\? strip it",
                 None, None, id="bom-concatenated-trec"),
    pytest.param("cat.csv", b"query-id,corpus-id,score\nq1,d1,1\n\xef\xbb\xbfq2,d1,1\n",
                 "line 3 starts with a byte-order mark", None, None, id="bom-concatenated-csv"),
    pytest.param("mid.trec", b"q1 Q0 d1 1 2.5 t\nq1 Q0 d\xef\xbb\xbf2 2 1.5 t\n", "line 2 holds a byte-order mark",
                 None, None, id="bom-inside-a-line"),
    # JSON ids
    pytest.param("r.json", json.dumps([{"query-id": {"id": "q1"}, "corpus-id": "d1", "score": 1.0},
                                       {"query-id": "q2", "corpus-id": "d1", "score": 1.0}]),
                 r"record 1: query id is a JSON object \(\{\"id\": \"q1\"\}\), expected a string or number", None, None,
                 id="json-object-query-id"),
    pytest.param("r.jsonl", '{"qid": "q1", "docid": "d1", "score": 1}\n{"qid": ["q", 2], "docid": "d1", "score": 1}\n',
                 r"line 2: query id is a JSON list", None, None, id="jsonl-list-query-id"),
    pytest.param("d.json", json.dumps({"q1": [{"doc": 1}, "d2"]}), r"document id is a JSON object", None, None,
                 id="json-object-document-id"),
    # delimiters that do not match the suffix
    pytest.param("run.csv", "query-id\tcorpus-id\tscore\nq1\td1\t1.0\n",
                 r"run.csv has tab-separated lines: rename it .tsv or pass --run-format tsv", {"format": "tsv"}, ["d1"],
                 id="tabs-in-csv"),
    pytest.param("run.tsv", "query-id,corpus-id,score\nq1,d1,1.0\n",
                 r"run.tsv has comma-separated lines: rename it .csv or pass --run-format csv", None, None,
                 id="commas-in-tsv"),
    pytest.param("trec.csv", TREC, r"trec.csv has space-separated lines of 6 fields \(a TREC run", None, None,
                 id="trec-in-csv"),
    pytest.param("table.trec", "query-id,corpus-id,score\nq1,d1,1.0\n",
                 r"table.trec has comma-separated lines: rename it .csv", None, None, id="csv-in-trec"),
    # rank and score
    pytest.param("sw.trec", "q1 Q0 d1 0.91 1 t\nq1 Q0 d2 0.52 2 t\nq2 Q0 d1 0.33 1 t\n",
                 r"columns 4 and 5 look swapped \(rank, score\).*swap the two columns", None, None,
                 id="trec-rank-and-score-swapped"),
    # a non-integer rank without the swap pattern keeps its own message
    pytest.param("r.trec", "q1 Q0 d1 1.5 0.9 t\nq1 Q0 d2 2 0.8 t\n", r"line 1: `rank` 1.5 is not an integer", None,
                 None, id="trec-non-integer-rank"),
]


@pytest.mark.parametrize("name, content, match, fix, fixed_ids", BAD_FILES)
def test_bad_file_names_its_file_line_and_fix(tmp_path, name, content, match, fix, fixed_ids):
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    elif content is not None:
        p.write_text(content)
    with pytest.raises(InputFileError, match=match):
        load_run(p)
    if fix is not None:
        assert load_run(p, **fix)["corpus-id"].tolist() == fixed_ids


def test_rank_and_score_swapped_in_a_frame():
    frame = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["a", "b"], "rank": [0.9, 0.4], "score": [1, 2]})
    with pytest.raises(InputFileError, match=r"columns `rank` and `score` look swapped"):
        validate_run(frame)


# ---------------------------------------------------------------- rank overflow
@pytest.mark.parametrize("huge", [str(2**63), str(2**64 + 5), str(2**53 + 1)])
def test_huge_rank_is_refused_not_wrapped(tmp_path, huge):
    """A rank >= 2**63 used to overflow int64 and sort first; one above 2**53 merges with its neighbours."""
    p = tmp_path / "r.trec"
    p.write_text(f"q1 Q0 d1 1 0.9 t\nq1 Q0 d2 {huge} 0.8 t\n")
    with pytest.raises(InputFileError, match=r"r.trec.*line 2: `rank` \d+ is too large: ranks must be integers of "
                                             r"magnitude below 2\*\*53"):
        load_run(p)
    rank_only = tmp_path / "r.csv"
    rank_only.write_text(f"qid,docid,rank\nq1,a,1\nq1,b,{huge}\n")
    with pytest.raises(InputFileError, match=r"line 3: `rank` \d+ is too large"):
        load_run(rank_only)


def test_largest_exact_rank_keeps_its_order(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text(f"qid,docid,rank\nq1,a,{2**53 - 1}\nq1,b,{2**53 - 2}\nq1,c,7\n")
    run = load_run(p)
    assert run["corpus-id"].tolist() == ["c", "b", "a"]
    assert run["rank"].tolist() == [7, 2**53 - 2, 2**53 - 1]


# ---------------------------------------------------------------- rank and score disagree
def _distance_run(tmp_path, nq=50, per_q=5):
    """Scores are distances: they rise with rank in every query."""
    rng = np.random.default_rng(1)
    lines = []
    for q in range(nq):
        dist = np.sort(rng.uniform(0, 1, per_q))
        for r, d in enumerate(dist, start=1):
            lines.append(f"q{q} Q0 d{q}_{r} {r} {d:.6f} t")
    p = tmp_path / "dist.trec"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_distance_scored_run_is_refused_unless_the_order_is_named(tmp_path):
    p = _distance_run(tmp_path)
    with pytest.raises(InputFileError, match=r"dist.trec.*scores rise with rank in 100% of queries \(50 of 50; a "
                                             r"distance\?\): pass --order rank .* to order by the file's ranks, or "
                                             r"--order score .* to order by score \(higher = better\)"):
        load_run(p)
    by_rank = load_run(p, order="rank")
    first = by_rank.groupby("query-id", sort=False).head(1)
    assert first["rank"].eq(1).all() and first["corpus-id"].str.endswith("_1").all()
    assert (by_rank["score"] == -by_rank["rank"]).all() and by_rank.attrs["score_from"] == "rank"
    assert by_rank.attrs["order"] == "rank"
    by_score = load_run(p, order="score")  # trec_eval's rule: highest distance first
    assert by_score.groupby("query-id", sort=False).head(1)["rank"].eq(5).all()
    # the stated order survives re-validation (the evaluator normalises runs it is given)
    assert validate_run(by_score)["corpus-id"].tolist() == by_score["corpus-id"].tolist()
    assert validate_run(by_rank)["corpus-id"].tolist() == by_rank["corpus-id"].tolist()


def test_rank_order_breaks_ties_like_trec_eval(tmp_path):
    p = tmp_path / "t.trec"
    p.write_text("q1 Q0 a 1 0.1 t\nq1 Q0 b 2 0.5 t\nq1 Q0 c 2 0.7 t\nq1 Q0 z 3 0.9 t\n")
    run = load_run(p, order="rank")
    assert run["corpus-id"].tolist() == ["a", "c", "b", "z"]  # equal ranks: document id descending


def test_minority_of_rising_queries_is_trec_eval_default(tmp_path):
    lines = ["q1 Q0 a 1 0.1 t", "q1 Q0 b 2 0.2 t",  # rises
             "q2 Q0 a 1 0.9 t", "q2 Q0 b 2 0.2 t", "q3 Q0 a 1 0.9 t", "q3 Q0 b 2 0.2 t"]
    p = tmp_path / "m.trec"
    p.write_text("\n".join(lines) + "\n")
    run = load_run(p)
    assert run[run["query-id"] == "q1"]["corpus-id"].tolist() == ["b", "a"]  # by score, as trec_eval


def test_informational_ranks_are_not_taken_for_a_distance(tmp_path):
    """Ranks all 0 (or any constant) say nothing about the order: trec_eval's rule applies silently."""
    p = tmp_path / "z.trec"
    p.write_text("q1 Q0 a 0 0.1 t\nq1 Q0 b 0 0.9 t\n")
    assert load_run(p)["corpus-id"].tolist() == ["b", "a"]


def test_order_is_checked():
    with pytest.raises(RagcovError, match="`order` must be 'score'"):
        load_run({"q": {"a": 1.0}}, order="distance")


@pytest.mark.parametrize("verb", ["eval", "compare", "leaderboard", "misses", "plan"])
def test_every_run_reading_verb_takes_order(verb):
    argv = {"eval": ["eval", "r"], "compare": ["compare", "a", "b"], "leaderboard": ["leaderboard", "a", "b"],
            "misses": ["misses", "r"], "plan": ["plan", "--difference", "0.1", "--runs", "a", "b"]}[verb]
    args = build_parser().parse_args([*argv, "--order", "rank"])
    assert args.order == "rank"
    assert run_options(args) == {"columns": None, "format": None, "order": "rank", "subset": None, "split": None}


# ---------------------------------------------------------------- bounded reading (depth)
def _ragged_run(tmp_path):
    """Queries of 1-24 rows, scores with ties (one decimal), lines shuffled, ranks agreeing with scores."""
    rng = np.random.default_rng(3)
    rows = []
    for q in range(30):
        n = int(rng.integers(1, 25))
        scores = np.round(rng.uniform(0, 3, n), 1)
        rows += [(f"q{q}", f"d{q}_{j}", scores[j]) for j in range(n)]
    df = pd.DataFrame(rows, columns=["qid", "docid", "score"])
    df["rank"] = df.groupby("qid")["score"].rank(ascending=False, method="first").astype(int)
    df = df.sample(frac=1, random_state=1)[["qid", "docid", "rank", "score"]]
    (tmp_path / "r.trec").write_text("".join(f"{a} Q0 {b} {c} {d} t\n" for a, b, c, d in df.itertuples(index=False)))
    df.to_csv(tmp_path / "r.csv", index=False)
    df.to_csv(tmp_path / "r.tsv", sep="\t", index=False)
    df[["qid", "docid", "rank"]].to_csv(tmp_path / "rank_only.csv", index=False)
    (tmp_path / "r.trec.gz").write_bytes(gzip.compress((tmp_path / "r.trec").read_bytes()))
    return df


@pytest.mark.parametrize("block", [None, 64, 300])
@pytest.mark.parametrize("name", ["r.trec", "r.csv", "r.tsv", "rank_only.csv", "r.trec.gz"])
def test_depth_keeps_the_top_rows_and_their_ties(tmp_path, monkeypatch, block, name):
    df = _ragged_run(tmp_path)
    if block:
        monkeypatch.setattr(runs, "BLOCK_BYTES", block)  # many blocks: queries split across them
    for order in (None, "rank"):
        full = load_run(tmp_path / name, order=order)
        for k in (1, 3, 10):
            part = load_run(tmp_path / name, order=order, depth=k)
            # independent reference: per query, rows whose score is at least the k-th best score
            kth = full.groupby("query-id", sort=False)["score"].transform(
                lambda s: s.sort_values(ascending=False).iloc[k - 1] if len(s) >= k else -np.inf)
            expected = full[full["score"] >= kth].reset_index(drop=True)
            assert part.reset_index(drop=True)[["query-id", "corpus-id", "rank", "score"]].equals(
                expected[["query-id", "corpus-id", "rank", "score"]])
            assert part.attrs["depth"] == k and part.attrs["rows_read"] == len(df)
            assert (part.groupby("query-id").size() >= np.minimum(full.groupby("query-id").size(), k)).all()


def test_depth_keeps_every_row_tied_with_the_kth(tmp_path):
    p = tmp_path / "t.trec"
    p.write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 2 t\nq1 Q0 d 4 2 t\nq1 Q0 e 5 1 t\n")
    assert load_run(p, depth=2)["corpus-id"].tolist() == ["a", "d", "c", "b"]
    assert load_run(p, depth=1)["corpus-id"].tolist() == ["a"]


def test_depth_still_checks_every_row(tmp_path, monkeypatch):
    """Rows cut by depth are still read and checked: no bad input passes because it sits low in a ranking."""
    monkeypatch.setattr(runs, "BLOCK_BYTES", 64)
    body = "".join(f"q1 Q0 d{j} {j} {100 - j} t\n" for j in range(1, 30))
    cases = {
        "nan.trec": (body + "q1 Q0 z 31 nan t\n", r"line 30: `score` nan is not a finite number"),
        "dup.trec": (body + "q1 Q0 d25 31 0.5 t\n", r"document 'd25' is listed 2 times for query 'q1' \(line 25 and line 30"),
        "bom.trec": (body + "\ufeffq2 Q0 a 1 1 t\n", r"line 30 starts with a byte-order mark"),
        "short.trec": (body + "q1 Q0 z 31\n", r"line 30: expected 6 fields"),
        "huge.trec": (body + f"q1 Q0 z {2**63} 0.1 t\n", r"line 30: `rank` \d+ is too large"),
    }
    for name, (text, match) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(InputFileError, match=match):
            load_run(tmp_path / name, depth=5)
    csv = tmp_path / "bad.csv"
    csv.write_text("qid,docid,score\n" + "".join(f"q1,d{j},{j}\n" for j in range(30)) + "q1,z,high\n")
    with pytest.raises(InputFileError, match=r"line 32: `score` 'high' is not a finite number"):
        load_run(csv, depth=5)


def test_depth_refuses_a_distance_run_too(tmp_path):
    p = _distance_run(tmp_path)
    with pytest.raises(InputFileError, match="scores rise with rank"):
        load_run(p, depth=2)
    kept = load_run(p, depth=2, order="rank")
    assert kept.groupby("query-id").size().eq(2).all() and kept["rank"].isin([1, 2]).all()


def test_depth_on_other_sources_and_bad_depth(tmp_path):
    frame = pd.DataFrame({"query-id": ["q"] * 4, "corpus-id": list("abcd"), "score": [4.0, 3.0, 3.0, 1.0]})
    assert load_run(frame, depth=2)["corpus-id"].tolist() == ["a", "c", "b"]
    p = tmp_path / "r.parquet"
    load_run(frame).to_parquet(p)
    assert load_run(p, depth=1)["corpus-id"].tolist() == ["a"]
    assert load_run({"q": {"a": 1.0, "b": 2.0}}, depth=1)["corpus-id"].tolist() == ["b"]
    for bad in (0, -1, 2.5, True):
        with pytest.raises(RagcovError, match="`depth` must be a positive integer"):
            load_run(frame, depth=bad)


def test_depth_pair_check_confirms_hash_matches_on_the_text(tmp_path, monkeypatch):
    """Repeated pairs are found by 64-bit keys and confirmed on the lines: a key collision never refuses a run."""
    monkeypatch.setattr(runs, "_pair_keys", lambda q, d: np.zeros(len(q), dtype=np.uint64))  # every key collides
    p = tmp_path / "r.trec"
    p.write_text("".join(f"q{j % 3} Q0 d{j} {j} {j} t\n" for j in range(12)))
    assert load_run(p, depth=2, order="score")["query-id"].nunique() == 3
    c = tmp_path / "r.csv"
    c.write_text("score,docid,qid\n" + "".join(f"{j},d{j},q{j % 3}\n" for j in range(12)) + "0.5,d4,q1\n")
    with pytest.raises(InputFileError, match=r"document 'd4' is listed 2 times for query 'q1' \(line 6 and line 14"):
        load_run(c, depth=2)
