"""Passage runs in every verb: each measure the docs list for a task, questions the run lacks, one cut beside a
pipeline, a truncated compressed run, a JSON Lines file cut or mixed, passages placed where the text repeats, and
the miss analysis; each checked against the id run the passages were made from."""
from __future__ import annotations

import gzip
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import ragcov_data
from ragcov_data.cli import main
from ragcov_data.errors import InputFileError, QrelsRunMismatchError
from ragcov_data.eval import evaluate, leaderboard
from ragcov_data.eval.outcomes.passages import locate_run
from ragcov_data.runs import load_run
from ragcov_data.runs.passages import META_KEY


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def _bm25(ds, k, **kw):
    from ragcov_data.baselines import BM25

    corpus, queries = ds["corpus"].to_pandas(), ds["queries"].to_pandas()
    cols = ["_id", "text", *(["chunk_id"] if "chunk_id" in queries.columns else [])]
    extra = {"exclude_self": True} if "chunk_id" in cols else {}
    run = BM25(show_progress=False, **kw).index(corpus).search(queries[cols], k=k, show_progress=False, **extra)
    text = dict(zip(corpus["_id"], corpus["text"]))
    return run, pd.DataFrame({"query-id": run["query-id"], "rank": run["rank"], "text": run["corpus-id"].map(text)})


def _jsonl(path, frame, header=None):
    rows = ([{META_KEY: header}] if header is not None else []) + frame.to_dict("records")
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _unambiguous(ds, passages):
    f = locate_run(load_run(passages), ds).frame
    return set(f["query-id"]) - set(f.loc[f["places"] >= 2, "query-id"])


@pytest.fixture(scope="module")
def irpf(data_dir):
    """IRPF (words-50): the task, a Portuguese BM25 id run (top 20) and the same run as text-only passages."""
    ds = _quiet(ragcov_data.load_dataset, "irpf", "words-50", data_dir=str(data_dir))
    run, passages = _bm25(ds, 20, analyzer="pt")
    return ds, run, passages


@pytest.fixture(scope="module")
def juristcu(data_dir):
    ds = _quiet(ragcov_data.load_dataset, "juristcu", data_dir=str(data_dir))
    run, passages = _bm25(ds, 20)
    return ds, run, passages


def _value(capsys, args):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


# --------------------------------------------------------------------------- 1. every measure the docs list


def test_recall_and_hit_at_k_score_a_passage_run_in_every_verb(irpf, tmp_path, data_dir, capsys):
    """recall@k / hit@k on a passage run: the share of cited provisions a top-k passage overlaps (as for chunks),
    so a text-only run of ragcov's chunks scores as its id run on every question whose passages occur once."""
    ds, run, passages = irpf
    keep = sorted(_unambiguous(ds, passages))
    for metric in ("recall@10", "hit@10", "hit@1"):
        a = evaluate(run, ds, metric=metric, n_resamples=999).per_query.set_index("query-id")["value"]
        b = evaluate(passages, ds, metric=metric, n_resamples=999).per_query.set_index("query-id")["value"]
        common = sorted(set(keep) & set(a.index))
        assert len(common) >= 100 and np.abs(a.loc[common] - b.loc[common]).max() <= 1e-12, metric
        assert b.mean() > 0.2
    path = _jsonl(tmp_path / "p.jsonl", passages)
    other = _jsonl(tmp_path / "q.jsonl", passages[passages["rank"] <= 5])
    base = ["--dataset", "irpf", "--data-dir", str(data_dir), "--n-resamples", "999"]
    for metric in (None, "recall@10", "hit@10"):
        m = ["--metric", metric] if metric else []
        for verb in (["eval", str(path)], ["compare", str(path), str(other)], ["leaderboard", str(path), str(other)]):
            code, out, err = _value(capsys, [*verb, *base, *m])
            assert code == 0, (verb, metric, err)
            if verb[0] == "leaderboard" and metric is None:  # passage runs rank by the share of the cited text
                assert "span_recall@1000w" in out, out
            assert "internal error" not in err


def test_leaderboard_reads_a_passage_run_by_document_for_judged_and_the_pool(juristcu, tmp_path):
    """judged@k, the condensed list and the unjudged-as-relevant reading of a passage run are its document list's:
    a run whose passages carry their documents reads exactly as the id run it was made from."""
    ds, run, passages = juristcu
    hinted = passages.assign(doc_id=run["corpus-id"].to_numpy())
    res = leaderboard({"ids": run, "passages": hinted}, ds, metric="ndcg@10", n_resamples=999, on_missing="zero",
                      estimator="micro")
    s = res.systems[res.systems["group"] == res.systems["group"].iloc[0]].set_index("name")
    for col in ("estimate", "judged", "condensed", "bound_high"):
        assert s.loc["passages", col] == pytest.approx(s.loc["ids", col], abs=1e-12), col
    assert s.loc["ids", "judged"] > 0.3


# --------------------------------------------------------------------------- 2. questions a passage run lacks


def test_a_passage_run_missing_questions_is_refused_alike_everywhere(irpf, tmp_path, data_dir, capsys):
    ds, _, passages = irpf
    qs = passages["query-id"].unique()
    half = _jsonl(tmp_path / "half.jsonl", passages[passages["query-id"].isin(qs[:87])])
    base = ["--dataset", "irpf", "--data-dir", str(data_dir), "--n-resamples", "999"]
    said = {}
    for verb, extra in (("eval", [str(half), "--metric", "recall@1000w"]),
                        ("leaderboard", [str(half), str(_jsonl(tmp_path / "all.jsonl", passages)),
                                         "--metric", "recall@1000w"]),
                        ("chunking", ["--chunking", "words-50", "--passages", str(half), "--budgets", "1000",
                                      "--metrics", "recall@10", "--quiet"])):
        code, out, err = _value(capsys, [verb, *extra, *base])
        assert code == 2, (verb, out[-500:])
        said[verb] = err.strip().splitlines()[-1].split("error: ", 1)[1]
    assert said["eval"] == said["chunking"] == said["leaderboard"]
    assert re.search(r"passage run 'half\.jsonl' has no answer for \d+ of the task's \d+ questions", said["eval"])
    assert "--on-missing zero" in said["eval"] and "resumes" in said["eval"]
    code, out, err = _value(capsys, ["chunking", "--chunking", "words-50", "--passages", str(half), "--budgets",
                                     "1000", "--metrics", "recall@10", "--on-missing", "zero", "--quiet", *base])
    assert code == 0, err
    assert re.search(r"'half\.jsonl' lacked \d+ of \d+ queries \(scored 0\)", out)
    code, out, err = _value(capsys, ["eval", str(half), "--metric", "recall@1000w", "--on-missing", "zero", *base])
    assert code == 0 and re.search(r"'half\.jsonl' lacked \d+ of \d+ queries \(scored 0\)", out)


# --------------------------------------------------------------------------- 3. one cut beside a pipeline


def test_chunking_ranks_one_cut_beside_a_passage_run(irpf, tmp_path, data_dir, capsys):
    _, _, passages = irpf
    path = _jsonl(tmp_path / "lc.jsonl", passages)
    js = tmp_path / "f.json"
    code, out, err = _value(capsys, ["chunking", "--dataset", "irpf", "--data-dir", str(data_dir), "--chunking",
                                     "words-50", "--passages", str(path), "--budgets", "1000", "--n-resamples", "999",
                                     "--quiet", "--json", str(js)])  # default metrics: recall@10 and ndcg@10
    assert code == 0, err
    got = json.loads(js.read_text())
    assert {s["name"] for s in got["budgets"]["1000"]["systems"]} == {"words-50/bm25-pt", "lc"}
    assert {s["name"] for s in got["leaderboards"]["recall@10"]["systems"]} == {"words-50/bm25-pt", "lc"}
    assert "ndcg@10" not in got["leaderboards"]
    assert re.search(r"ndcg@10 grades ragcov's chunks: .*lc.* left out.*one system", out)


# --------------------------------------------------------------------------- 4. a truncated compressed run


def test_a_truncated_gzip_passage_run_says_so_as_for_a_chunk_run(irpf, tmp_path):
    ds, run, passages = irpf
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in passages.to_dict("records")).encode()
    gz = gzip.compress(text)
    cut = tmp_path / "p.jsonl.gz"
    cut.write_bytes(gz[: len(gz) // 2])
    trec = tmp_path / "r.trec.gz"
    lines = "".join(f"{q} Q0 {d} {r} {-r} x\n" for q, d, r in zip(run["query-id"], run["corpus-id"], run["rank"]))
    g2 = gzip.compress(lines.encode())
    trec.write_bytes(g2[: len(g2) // 2])
    with pytest.raises(InputFileError) as chunk_err:
        load_run(trec)
    with pytest.raises(InputFileError) as passage_err:
        load_run(cut)
    said = str(passage_err.value)
    assert said.startswith(str(chunk_err.value).replace(str(trec), str(cut)))
    assert "re-running the pipeline" in said and "resumes" in said


# --------------------------------------------------------------------------- 5. where the text repeats


def test_ambiguous_passages_bound_the_score_and_say_how_to_give_hints(juristcu):
    ds, run, passages = juristcu
    text_only = evaluate(passages, ds, metric="ndcg@10", on_missing="zero", n_resamples=999)
    hinted = evaluate(passages.assign(doc_id=run["corpus-id"].to_numpy()), ds, metric="ndcg@10", on_missing="zero",
                      n_resamples=999)
    ids = evaluate(run, ds, metric="ndcg@10", on_missing="zero", n_resamples=999)
    place = text_only.info["passages"]["placement"]
    t, h = text_only.per_query["value"].mean(), hinted.per_query["value"].mean()
    assert ids.per_query["value"].mean() == pytest.approx(h, abs=1e-12)
    assert t < h - 0.01  # the tester's gap: text alone places repeated enunciados at the first one
    assert place["low"] <= t <= place["high"] and place["low"] <= h <= place["high"]
    said = next(n for n in text_only.info["notices"] if "several places" in n)
    assert re.search(r"may differ from .*run's own documents", said)
    assert f"between {place['low']:.3f} and {place['high']:.3f}" in said
    assert "doc_id" in said and "start_char" in said
    assert "placement" not in hinted.info["passages"] or hinted.info["passages"]["placement"] is None


# --------------------------------------------------------------------------- 6. a JSON Lines file cut or mixed


def test_a_cut_line_an_id_line_and_a_second_header_are_named(irpf, tmp_path):
    ds, _, passages = irpf
    p = passages[passages["query-id"].isin(passages["query-id"].unique()[:3])].reset_index(drop=True)
    header = {"task": "irpf", "config": "words-50", "pipeline": "mine", "k": None}
    good = _jsonl(tmp_path / "good.jsonl", p, header)
    lines = good.read_text(encoding="utf-8").splitlines(keepends=True)
    n = len(lines)

    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-1]) + lines[-1][:25], encoding="utf-8")
    with pytest.raises(InputFileError, match=rf"cut\.jsonl, line {n}: the last line is cut short .*"
                                             r"re-running the pipeline with the same --out resumes"):
        load_run(cut)

    ids = tmp_path / "ids.jsonl"
    ids.write_text("".join(lines[:5]) + json.dumps({"query-id": p["query-id"][0], "corpus-id": "lei-1#3",
                                                    "score": 2.0}) + "\n" + "".join(lines[5:]), encoding="utf-8")
    with pytest.raises(InputFileError, match=r"ids\.jsonl, line 6 holds a document id .*corpus-id.*lei-1#3.* not a "
                                             r"passage"):
        load_run(ids)

    twice = tmp_path / "twice.jsonl"
    twice.write_text("".join(lines[:10]) + lines[0] + "".join(lines[10:]), encoding="utf-8")
    with pytest.raises(InputFileError, match=r"twice\.jsonl, line 11 is a second header line .*ragcov_passage_run.*"
                                             r"the first is line 1.*joined"):
        load_run(twice)

    of = p.assign(of=p.groupby("query-id")["rank"].transform("size"))  # run_pipeline records each answer's size
    short = _jsonl(tmp_path / "short.jsonl", of.iloc[:-1], header)  # its last line lost between two whole lines
    with pytest.raises(InputFileError, match=rf"short\.jsonl, line {n - 1}: the answer to question .* is cut short "
                                             r"\(\d+ of its \d+ passages.*resumes"):
        load_run(short)
    assert load_run(_jsonl(tmp_path / "whole.jsonl", of, header))["query-id"].nunique() == 3


# --------------------------------------------------------------------------- 7. the miss analysis


def test_the_miss_analysis_reads_a_passage_run_through_the_chunks_it_lies_in(data_dir):
    from ragcov_data.eval.misses import misses

    ds = _quiet(ragcov_data.load_dataset, "aneel_taesa", data_dir=str(data_dir))
    run, passages = _bm25(ds, 5)
    a = misses(run, ds)
    b = misses(passages, ds)
    keep = _unambiguous(ds, passages)
    ta, tb = a.to_frame(), b.to_frame()
    qcol = next(c for c in ta.columns if c in ("query-id", "query_id", "qid"))
    ta, tb = ta[ta[qcol].isin(keep)].set_index(qcol), tb[tb[qcol].isin(keep)].set_index(qcol)
    assert len(ta) >= 20 and sorted(ta.index) == sorted(tb.index)
    shared = [c for c in ta.columns if c in tb.columns and c not in ("score", "retrieved_score")]
    pd.testing.assert_frame_equal(ta.loc[sorted(ta.index), shared], tb.loc[sorted(ta.index), shared],
                                  check_dtype=False)
    assert any("passage" in n and "chunk" in n for n in b.info["notices"])


def test_the_miss_analysis_says_why_not_on_a_task_without_own_chunks(irpf):
    from ragcov_data.errors import RagcovError
    from ragcov_data.eval.misses import misses

    ds, _, passages = irpf
    with pytest.raises(RagcovError, match=r"needs a chunked self-retrieval task"):
        misses(passages, ds)


def test_each_questions_range_is_every_placement_scored_by_pytrec_eval(juristcu):
    """Brute force: for every question whose ambiguous passages have few placements, each assignment of every
    ambiguous passage (not only those that can reach the top 10) to one of its documents gives a document list,
    scored by pytrec_eval; the least and greatest equal the question's range."""
    import itertools

    import pytrec_eval
    from ragcov_data.runs.line import character_line

    ds, _, passages = juristcu
    res = evaluate(passages, ds, metric="ndcg@10", on_missing="zero", n_resamples=999)
    ranges = res.info["passages"]["placement"]["questions"]
    located = locate_run(load_run(passages), ds)
    docs = ragcov_data.task_documents(ds)
    line = character_line(docs["doc_id"].tolist(), docs["text"].tolist())
    qrels = ds["qrels"].to_pandas()
    judged = {str(q): {str(d): int(s) for d, s in zip(g["corpus-id"], g["score"])}
              for q, g in qrels.groupby("query-id")}
    f = located.frame
    checked = 0
    for q, g in f.groupby("query-id", sort=False):
        options = []
        for i, s in zip(g.index, g["start"]):
            alt = located.alternatives.get(int(i))
            if int(i) in located.alternatives and alt is None:
                options = None
                break
            ids = ([line.doc_ids[d] for d in dict.fromkeys(line.docs_at(alt[:, 0]).tolist())] if alt is not None
                   else [line.doc_ids[line.doc_at(int(s))] if s >= 0 else None])
            options.append(ids)
        if options is None or q not in judged or np.prod([len(o) for o in options]) > 64:
            continue
        values = []
        for combo in itertools.product(*options):
            ranked = [d for d in dict.fromkeys(combo) if d is not None]
            run = {q: {d: float(len(ranked) - r) for r, d in enumerate(ranked)}}
            ev = pytrec_eval.RelevanceEvaluator({q: judged[q]}, {"ndcg_cut.10"})
            values.append(ev.evaluate(run)[q]["ndcg_cut_10"] if ranked else 0.0)
        lo, hi = ranges.get(q, [None, None])
        if lo is None:  # no ambiguous passage reaches its top 10: every placement scores alike
            assert max(values) - min(values) <= 1e-9, q
        else:
            assert (lo, hi) == pytest.approx((min(values), max(values)), abs=1e-9), q
        checked += len(options) > 1 and max(values) > min(values)
    assert checked >= 10


def test_the_range_holds_the_id_runs_score_on_cited_and_self_retrieval_tasks(irpf, data_dir):
    """Where text repeats, the id run the passages were made from is one of their placements: its mean lies in the
    range, on cited questions (by spans, within k passages or B words) and on self-retrieval (own chunk dropped)."""
    aneel = _quiet(ragcov_data.load_dataset, "aneel_taesa", data_dir=str(data_dir))
    cases = [(irpf[0], *irpf[1:], m) for m in ("recall@10", "hit@5", "recall@500w", "iou@300w")]
    cases += [(aneel, *_bm25(aneel, 5), "hit@1")]  # at 1 the chunk and the document readings agree
    ranged = set()
    for ds, run, passages, metric in cases:
        ids = evaluate(run, ds, metric=metric, n_resamples=999).per_query.set_index("query-id")["value"]
        got = evaluate(passages, ds, metric=metric, n_resamples=999)
        place = got.info["passages"]["placement"]
        if place is None:  # no ambiguous passage reaches this measure: no range to give
            assert not any("several places" in n for n in got.info["notices"])
            continue
        ranged.add(metric)
        assert place["low"] - 1e-12 <= ids.mean() <= place["high"] + 1e-12, metric
        for q, (lo, hi) in place["questions"].items():
            assert lo - 1e-12 <= ids[q] <= hi + 1e-12, (metric, q)
    assert {"recall@500w", "hit@1"} <= ranged
