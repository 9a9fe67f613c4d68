"""Passage runs (a pipeline's returned text) scored on every task: the same numbers as ragcov's id runs where the
text is ragcov's chunks, the definition from scratch where it is not, and one clear error for each bad run."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import ragcov_data
from ragcov_data.errors import InputFileError, QrelsRunMismatchError, RagcovError
from ragcov_data.eval import evaluate
from ragcov_data.eval.comparisons.cited import per_query_values
from ragcov_data.runs import load_run
from ragcov_data.eval.outcomes.passages import locate_run
from _span_scratch import MEASURES, scratch_values, windows

BUDGETED = [f"{m}@{b}w" for b in (500, 1000, 2000) for m in ("recall", "span_recall", "precision", "iou", "hit")]


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


@pytest.fixture(scope="module")
def irpf(data_dir):
    """Per cut: the task, a Portuguese BM25 id run, and the same run as passages of text only (no ids, no hints)."""
    from ragcov_data.baselines import BM25

    out = {}
    for cut in ("words-50", "dispositivo", "article"):
        ds = _quiet(ragcov_data.load_dataset, "irpf", cut, data_dir=str(data_dir))
        corpus, queries = ds["corpus"].to_pandas(), ds["queries"].to_pandas()
        run = BM25(analyzer="pt", show_progress=False).index(corpus).search(queries[["_id", "text"]], k=60,
                                                                            show_progress=False)
        text = dict(zip(corpus["_id"], corpus["text"]))
        passages = pd.DataFrame({"query-id": run["query-id"], "rank": run["rank"], "text": run["corpus-id"].map(text)})
        out[cut] = (ds, run, passages)
    return out


_LOCATED: dict[int, tuple] = {}  # a module fixture's passages located once (kept with them: the id stays theirs)


def _unambiguous(ds, passages):
    """The questions none of whose passages occur at two places in the acts."""
    got = _LOCATED.get(id(passages))
    if got is None or got[0] is not passages or got[1] is not ds:
        f = locate_run(load_run(passages), ds).frame
        got = _LOCATED[id(passages)] = (passages, ds, set(f["query-id"]) - set(f.loc[f["places"] >= 2, "query-id"]))
    return set(got[2])


@pytest.mark.parametrize("cut", ["words-50", "dispositivo", "article"])
def test_text_only_run_scores_as_the_id_run(irpf, cut):
    ds, run, passages = irpf[cut]
    metrics = [*BUDGETED, "recall@10", "hit@10"]
    ids = per_query_values(run, ds, metrics=metrics)
    text = per_query_values(passages, ds, metrics=metrics)
    keep = sorted(_unambiguous(ds, passages) & set(ids.index))
    assert len(keep) >= 100  # most questions: every one of their 60 passages occurs once in the acts
    assert np.abs(ids.loc[keep].to_numpy() - text.loc[keep].to_numpy()).max() <= 1e-9
    assert ids["recall@1000w"].mean() > 0.3  # a real run, not all zeros
    said = " ".join(text.attrs["notices"])
    assert re.search(r"passages located in the task's documents: exact \d", said)


def test_text_only_run_gives_the_same_interval(irpf):
    ds, run, passages = irpf["words-50"]
    keep = _unambiguous(ds, passages)
    task = {s: ds[s].to_pandas() for s in ("corpus", "qrels", "citations", "documents")}
    q = ds["queries"].to_pandas()
    task["queries"] = q[q["_id"].isin(keep)].reset_index(drop=True)
    for metric in ("recall@1000w", "iou@500w"):
        a = evaluate(run[run["query-id"].isin(keep)], task, metric=metric, n_resamples=999, seed=3)
        b = evaluate(passages[passages["query-id"].isin(keep)], task, metric=metric, n_resamples=999, seed=3)
        cols = ["estimate", "se", "low", "high"]
        assert len(a.estimates) == len(b.estimates) >= 3
        assert np.abs(a.estimates[cols].to_numpy(float) - b.estimates[cols].to_numpy(float)).max() <= 1e-9
        assert (a.estimates["method"] == b.estimates["method"]).all()
        assert b.info["passages"]["shares"]["unlocated"] == 0.0
        assert a.info["mean_context_words"] == pytest.approx(b.info["mean_context_words"])
        assert a.info["mean_context_words"] > 400


def test_windows_that_are_not_ragcovs_chunks_score_the_definition(irpf):
    """A pipeline returning 37-word windows with an 11-word overlap, ranked by a toy overlap score: every budgeted
    value equals the definition computed from scratch (character sets, the cut word found by a regex)."""
    ds, _, _ = irpf["article"]
    acts = ds["documents"].to_pandas()
    wins = windows(acts, 37, 26)
    queries = ds["queries"].to_pandas().head(40)
    vocab = [set(w[3].lower().split()) for w in wins]
    rows = []
    for qid, qtext in zip(queries["_id"], queries["text"]):
        qset = set(qtext.lower().split())
        score = np.fromiter((len(qset & v) for v in vocab), float, len(vocab))
        top = np.argsort(-score, kind="stable")[:30]
        rows += [(qid, r + 1, wins[i][3]) for r, i in enumerate(top)]
    prun = pd.DataFrame(rows, columns=["query-id", "rank", "text"])
    cits = ds["citations"].to_pandas()
    qids = [q for q in queries["_id"] if q in set(cits.loc[cits["status"] == "resolved", "query-id"])]
    got = per_query_values(prun, ds, metrics=[f"{m}@{b}w" for b in (100, 700) for m in MEASURES], query_ids=qids)
    for (q, name), x in scratch_values(prun, acts, cits, qids, (100, 700)).items():
        assert got.loc[q, name] == pytest.approx(x, abs=1e-9), (q, name)


def test_a_budget_of_five_words_is_not_a_budget_of_one_hundred(irpf):
    ds, run, _ = irpf["article"]
    v = per_query_values(run, ds, metrics=["precision@5w", "precision@100w", "iou@5w", "iou@100w"])
    assert not np.allclose(v["precision@5w"], v["precision@100w"])
    assert not np.allclose(v["iou@5w"], v["iou@100w"])


def test_juristcu_and_self_retrieval_passages_score_by_document(data_dir):
    from ragcov_data.baselines import BM25

    j = _quiet(ragcov_data.load_dataset, "juristcu", data_dir=str(data_dir))
    corpus, queries = j["corpus"].to_pandas(), j["queries"].to_pandas()
    run = BM25(show_progress=False).index(corpus).search(queries[["_id", "text"]], k=20, show_progress=False)
    text = dict(zip(corpus["_id"], corpus["text"]))
    prun = pd.DataFrame({"query-id": run["query-id"], "rank": run["rank"], "text": run["corpus-id"].map(text)})
    f = locate_run(load_run(prun), j).frame
    clean = set(f["query-id"]) - set(f.loc[f["places"] >= 2, "query-id"])
    a = evaluate(run, j, metric="ndcg@10", on_missing="zero").per_query.set_index("query-id")["value"]
    b = evaluate(prun, j, metric="ndcg@10", on_missing="zero").per_query.set_index("query-id")["value"]
    keep = sorted(clean & set(a.index))
    assert len(keep) >= 50 and np.abs(a.loc[keep] - b.loc[keep]).max() <= 1e-9
    # many enunciados hold the whole text of another: text alone cannot tell them apart, the pipeline's doc_id can
    hinted = evaluate(prun.assign(doc_id=run["corpus-id"].to_numpy()), j, metric="ndcg@10",
                      on_missing="zero").per_query.set_index("query-id")["value"]
    assert np.abs(a - hinted.loc[a.index]).max() <= 1e-9

    s = _quiet(ragcov_data.load_dataset, "aneel_taesa", data_dir=str(data_dir))
    corpus, queries = s["corpus"].to_pandas(), s["queries"].to_pandas()
    run = BM25(show_progress=False).index(corpus).search(queries[["_id", "text", "chunk_id"]], k=5, exclude_self=True,
                                                         show_progress=False)
    text = dict(zip(corpus["_id"], corpus["text"]))
    own = dict(zip(queries["_id"], queries["chunk_id"]))
    with_own = pd.concat([pd.DataFrame({"query-id": queries["_id"], "corpus-id": queries["chunk_id"], "rank": 0}),
                          run[["query-id", "corpus-id", "rank"]]])  # the own chunk first: it must be dropped
    with_own = with_own.sort_values(["query-id", "rank"], kind="stable")
    prun = pd.DataFrame({"query-id": with_own["query-id"], "rank": with_own["rank"] + 1,
                         "text": with_own["corpus-id"].map(text)})
    assert (prun.groupby("query-id")["text"].first() == pd.Series(own).map(text).loc[
        prun.groupby("query-id")["text"].first().index]).all()
    a = evaluate(run, s, metric="hit@1").per_query.set_index("query-id")["value"]
    b = evaluate(prun, s, metric="hit@1").per_query.set_index("query-id")["value"]
    f = locate_run(load_run(prun), s).frame
    clean = set(f["query-id"]) - set(f.loc[f["places"] >= 2, "query-id"])
    keep = sorted(clean & set(a.index))
    assert len(keep) > 1500 and np.abs(a.loc[keep] - b.loc[keep]).max() <= 1e-9


# --------------------------------------------------------------------------- bad passage runs


@pytest.fixture()
def small(irpf):
    ds, run, passages = irpf["words-50"]
    return ds, passages[passages["query-id"].isin(passages["query-id"].unique()[:5])].reset_index(drop=True)


def _jsonl(path, frame):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in frame.to_dict("records")),
                    encoding="utf-8")
    return path


def test_bad_passage_runs_end_in_one_clear_error(small, tmp_path):
    ds, p = small
    empty = p.copy()
    empty.loc[3, "text"] = "  "
    with pytest.raises(InputFileError, match=r"line 4: the passage text is empty"):
        evaluate(str(_jsonl(tmp_path / "empty.jsonl", empty)), ds, metric="recall@1000w", on_missing="zero")
    no_text = p.rename(columns={"text": "passage_body"})
    with pytest.raises(InputFileError, match=r"no column for|needs a `text` column"):
        evaluate(str(_jsonl(tmp_path / "no_text.jsonl", no_text)), ds, metric="recall@1000w", on_missing="zero")
    dup = p.copy()
    dup.loc[1, "rank"] = dup.loc[0, "rank"]
    with pytest.raises(InputFileError, match=r"line 2: query .* has rank 1 twice"):
        evaluate(str(_jsonl(tmp_path / "dup.jsonl", dup)), ds, metric="recall@1000w", on_missing="zero")
    other = p.copy()
    other["text"] = [f"Um trecho de outro corpus, o número {i}, sobre assunto sem relação alguma com as leis." for i in
                     range(len(other))]
    with pytest.raises(QrelsRunMismatchError, match=r"100% of its .* passages are found in none .* probably made on "
                                                    "other text"):
        evaluate(other, ds, metric="recall@1000w", on_missing="zero")
    bad_rank = p.copy()
    bad_rank["rank"] = bad_rank["rank"].astype(float)
    bad_rank.loc[2, "rank"] = 0.5
    with pytest.raises(InputFileError, match=r"rank 0.5 is not a whole number >= 1"):
        evaluate(bad_rank, ds, metric="recall@1000w", on_missing="zero")


def test_passage_run_formats_read_alike(small, tmp_path):
    ds, p = small
    base = per_query_values(p, ds, metrics=["recall@500w"], query_ids=sorted(set(p["query-id"]) & set(
        per_query_values(p, ds, metrics=["recall@500w"]).index)))
    p.to_csv(tmp_path / "r.csv", index=False)
    p.to_parquet(tmp_path / "r.parquet")
    (tmp_path / "r.json").write_text(p.to_json(orient="records", force_ascii=False), encoding="utf-8")
    ragas = p.groupby("query-id", sort=False)["text"].agg(list).reset_index().rename(columns={"text":
                                                                                             "retrieved_contexts"})
    qtext = dict(zip(ds["queries"]["_id"], ds["queries"]["text"]))
    ragas["user_input"] = ragas["query-id"].map(qtext)
    ragas = ragas.drop(columns=["query-id"])
    for src in (_jsonl(tmp_path / "r.jsonl", p), tmp_path / "r.csv", tmp_path / "r.parquet", tmp_path / "r.json",
                ragas):
        got = per_query_values(src if isinstance(src, pd.DataFrame) else str(src), ds, metrics=["recall@500w"],
                               query_ids=list(base.index))
        assert np.allclose(got["recall@500w"], base["recall@500w"], atol=1e-12), src if not isinstance(src, pd.DataFrame) else "ragas"
    ragas.at[0, "retrieved_contexts"] = []  # a question answered with nothing is answered, scored with no context
    first = ragas["user_input"].iat[0]
    qid0 = next(q for q, t in qtext.items() if t == first)
    got = per_query_values(ragas, ds, metrics=["recall@500w"], query_ids=list(base.index))
    assert got.loc[qid0, "recall@500w"] == 0.0
    assert np.allclose(got["recall@500w"].drop(qid0), base["recall@500w"].drop(qid0), atol=1e-12)


def test_failed_questions_are_kept_and_named(small, tmp_path):
    ds, p = small
    q_fail = p["query-id"].iloc[-1]
    rows = p[p["query-id"] != q_fail].to_dict("records") + [{"query-id": q_fail, "error": "TimeoutError: slow"}]
    path = tmp_path / "fail.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    run = load_run(path)
    assert run.attrs["failures"] == {q_fail: "TimeoutError: slow"}
    v = per_query_values(str(path), ds, metrics=["recall@1000w"], on_missing="error",
                         query_ids=[q for q in p["query-id"].unique() if q in set(
                             per_query_values(p, ds, metrics=["recall@1000w"]).index)])
    assert v.loc[q_fail, "recall@1000w"] == 0.0
    assert any("failed in the pipeline" in n and q_fail in n for n in v.attrs["notices"])


def test_ndcg_is_refused_for_passages_on_cited_questions(small):
    ds, p = small
    with pytest.raises(RagcovError, match="grades ragcov's chunks, which a passage run has none of"):
        per_query_values(p, ds, metrics=["ndcg@10"])
