"""`ragcov chunking --dataset irpf`: chunkings x retrievers on the shared cited questions, as the API does."""
from __future__ import annotations

import json
import re

import pytest

from ragcov_data.cli import main


def test_chunking_irpf_two_chunkings_one_retriever(data_dir, tmp_path, capsys, irpf_api_values):
    out = tmp_path / "irpf.json"
    assert main(["chunking", "--dataset", "irpf", "--data-dir", str(data_dir), "--chunking", "words-200,article",
                 "--retriever", "bm25", "--n-resamples", "199", "--quiet", "--json", str(out)]) == 0
    cap = capsys.readouterr()
    assert "Cited questions: 174 questions (all), granularity dispositivo, paired by question" in cap.out
    assert "words-200/bm25" in cap.out and "article/bm25" in cap.out
    assert "of acts not in the corpus" in cap.err  # unresolved citations are shown, not dropped
    # said once per command, as one line with the counts and where the whole list is
    notices = [line for line in cap.err.splitlines() if "cited questions (irpf)" in line]
    assert len(notices) == 1 and cap.err.count("of acts not in the corpus") == 1
    assert "2 citation(s) of acts not in the corpus" in notices[0] and "ragcov build --dataset irpf --out DIR" in notices[0]
    assert len(notices[0]) < 600
    assert cap.out.startswith("Within 1,000 words of context, the cut whose context holds the most of the cited "
                              "provisions' text is ")
    assert "Touched (some character of the provision in the context): " in cap.out
    assert "recall@10 (unequal context)" in cap.out and "UNEQUAL CONTEXTS" in cap.out
    got = json.loads(out.read_text())
    assert set(got["leaderboards"]) == {"span_recall@500w", "span_recall@1000w", "span_recall@2000w", "recall@500w",
                                        "recall@1000w", "recall@2000w", "recall@10", "ndcg@10"}
    assert set(got["budgets"]) == {"500", "1000", "2000"} and got["headline"]["budget"] == 1000
    for w, b in got["budgets"].items():  # per budget: the systems, their pair and the family's check, both readings
        assert b["metric"] == f"span_recall@{w}w" and b["touched"]["metric"] == f"recall@{w}w"
        for fam in (b, b["touched"]):
            assert len(fam["systems"]) == 2 and len(fam["pairs"]) == 1 and fam["family_check"]["fwer"] is not None
        assert set(b["text_share_curve"]) == {"words-200/bm25", "article/bm25"}
    systems = {s["name"]: s for s in got["leaderboards"]["recall@10"]["systems"]}
    assert set(systems) == {"words-200/bm25", "article/bm25"}
    # every artigo citation of an act in the corpus resolves but three whose year contradicts the act (Lei 9.250
    # "de 2005", Lei 7.713 "de 1998": listed as year_mismatch)
    assert [r["article_citations"] - r["resolved"] for r in got["resolution"]] == [3, 3]
    # the same numbers from the API: per-question recall@10 of BM25 on the article chunking
    qids = [v["query-id"] for v in got["values"]]
    ref = irpf_api_values(qids, ["recall@10", "ndcg@10"], chunking="article")
    assert systems["article/bm25"]["estimate"] == pytest.approx(ref["recall@10"].mean(), abs=1e-12)
    nd = {s["name"]: s for s in got["leaderboards"]["ndcg@10"]["systems"]}
    assert nd["article/bm25"]["estimate"] == pytest.approx(ref["ndcg@10"].mean(), abs=1e-12)
    assert got["icc"]["decision"] in ("topic", "query")
    ref_b = irpf_api_values(qids, ["span_recall@1000w", "recall@1000w", "covered_90@1000w"], k=None,
                            chunking="article")  # the whole ranking
    at = {s["name"]: s for s in got["budgets"]["1000"]["systems"]}
    assert at["article/bm25"]["estimate"] == pytest.approx(ref_b["span_recall@1000w"].mean(), abs=1e-12)
    touched = {s["name"]: s for s in got["budgets"]["1000"]["touched"]["systems"]}
    assert touched["article/bm25"]["estimate"] == pytest.approx(ref_b["recall@1000w"].mean(), abs=1e-12)
    curve = got["text_share_curve"]["1000"]["article/bm25"]
    assert curve["0.9"] == pytest.approx(ref_b["covered_90@1000w"].mean(), abs=1e-12)
    assert curve["span_recall"] == pytest.approx(at["article/bm25"]["estimate"], abs=1e-12)


@pytest.mark.parametrize("extra, match", [
    (["--dataset", "irpf", "--chunking", "sentences"], "--chunking entries must be words-N"),
    (["--dataset", "irpf", "--retriever", "bm25,splade"], "--retriever must be one of"),
    (["--retriever", "bm25,tfidf"], "a list of retrievers applies to --dataset irpf"),
    (["--dataset", "irpf", "--budgets", "500,lots"], "--budgets entries must be positive whole numbers"),
    (["--budgets", "500"], "--budgets applies to --dataset irpf / cited_questions"),
    # the shared acts must never be used while the user named others
    (["--dataset", "irpf", "--data-files", "my_acts.jsonl"], "--data-files would be ignored"),
    (["--dataset", "irpf", "--questions", "my_q.jsonl"], "--questions would be ignored"),
    (["--questions", "my_q.jsonl"], "--questions applies to --dataset cited_questions"),
])
def test_chunking_irpf_bad_options(data_dir, extra, match, capsys):
    assert main(["chunking", "--data-dir", str(data_dir), "--quiet", *extra]) == 2
    assert match in capsys.readouterr().err


def test_chunking_cited_questions_files(tmp_path, capsys, cited_files):
    acts, qs = cited_files
    assert main(["chunking", "--dataset", "cited_questions", "--data-files", str(acts), "--questions", str(qs),
                 "--chunking", "words-20,article", "--retriever", "bm25,tfidf", "--n-resamples", "199",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "Cited questions: 6 questions (all)" in out and "article/tfidf" in out
    assert main(["chunking", "--dataset", "cited_questions", "--data-files", str(acts), "--quiet"]) == 2
    assert "--questions FILE" in capsys.readouterr().err
    assert main(["chunking", "--dataset", "cited_questions", "--data-files", str(acts), "--questions", str(qs),
                 "--chunking", "words-20,article", "--metric", "hit@1", "--metrics", "recall@5", "--quiet"]) == 0
    assert "recall@5" in capsys.readouterr().out
    assert main(["chunking", "--dataset", "cited_questions", "--data-files", str(acts), "--questions", str(qs),
                 "--chunking", "words-20,article", "--metric", "ndcg@5", "--n-resamples", "199", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "ndcg@5" in out and not re.search(r"recall@10(?!\d)", out)
    js = tmp_path / "none.json"
    assert main(["chunking", "--dataset", "cited_questions", "--data-files", str(acts), "--questions", str(qs),
                 "--chunking", "words-20,article", "--budgets", "none", "--metrics", "recall@5", "--n-resamples",
                 "199", "--quiet", "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert "Within" not in out and out.startswith("Cited questions: 6 questions")
    got = json.loads(js.read_text())
    assert got["budgets"] == {} and got["headline"] is None and list(got["leaderboards"]) == ["recall@5"]
    assert main(["chunking", "--dataset", "cited_questions", "--data-files", str(acts), "--questions", str(qs),
                 "--metric", "ndcg@5", "--metrics", "recall@5", "--quiet"]) == 2
    assert "give the metrics once" in capsys.readouterr().err


@pytest.mark.parametrize("verb", [["eval", "run.trec"], ["run", "--retriever", "bm25", "--out", "x.trec"]])
def test_irpf_with_data_files_is_refused_by_every_verb(data_dir, tmp_path, capsys, verb):
    verb = [str(tmp_path / v) if v.endswith(".trec") else v for v in verb]
    (tmp_path / "run.trec").write_text("q Q0 d 1 1.0 x\n")
    assert main([*verb, "--dataset", "irpf", "--data-dir", str(data_dir), "--data-files",
                 str(tmp_path / "acts.jsonl")]) == 2
    assert "--dataset irpf reads its own files from --data-dir" in capsys.readouterr().err


def test_chunking_budgets_of_five_and_one_hundred_words_differ(data_dir, tmp_path, capsys):
    """--budgets 5 reads 5 words of context, not the first chunk whole (recall@1 under another name)."""
    got = {}
    for b in ("5", "100"):
        out = tmp_path / f"b{b}.json"
        assert main(["chunking", "--dataset", "irpf", "--data-dir", str(data_dir), "--chunking", "article",
                     "--retriever", "bm25,tfidf", "--budgets", b, "--metrics", "recall@1", "--n-resamples", "199",
                     "--quiet", "--json", str(out)]) == 0
        got[b] = json.loads(out.read_text())
    capsys.readouterr()
    est = {b: {s["name"]: s["estimate"] for s in g["budgets"][b]["touched"]["systems"]} for b, g in got.items()}
    rec1 = {s["name"]: s["estimate"] for s in got["5"]["leaderboards"]["recall@1"]["systems"]}
    assert est["5"] != est["100"]
    assert all(est["5"][n] < rec1[n] for n in rec1)  # five words of the top artigo hold fewer provisions
    words = got["5"]["info"]["context_words"]
    assert all(w["5"] == pytest.approx(5.0) for w in words.values())  # every context holds exactly 5 words
    passages = tmp_path / "top.jsonl"  # a pipeline returning one artigo's first words only: its context is short
    ds = _irpf_article(data_dir)
    rows = [{"query-id": q, "rank": 1, "text": " ".join(t.split()[:3])} for q, t in
            zip(ds["queries"]["_id"], [ds["documents"]["text"][0]] * len(ds["queries"]))]
    passages.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "p.json"
    assert main(["chunking", "--dataset", "irpf", "--data-dir", str(data_dir), "--chunking", "article",
                 "--retriever", "bm25", "--budgets", "100", "--metrics", "recall@1", "--passages", str(passages),
                 "--n-resamples", "199", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert json.loads(out.read_text())["info"]["context_words"]["top"]["100"] == pytest.approx(3.0)
    assert re.search(r"top +span_recall@100w 0\.\d+ \[[^]]+\] \(3 words\)", printed)


def _irpf_article(data_dir):
    import warnings

    import ragcov_data

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ragcov_data.load_dataset("irpf", "article", data_dir=str(data_dir))


def test_chunking_on_cited_questions_defaults_to_the_portuguese_bm25(cited_files, capsys):
    """Without --retriever, real questions are ranked with bm25-pt, the retriever the README's answer and the
    main job use, so the three give one number for one answer."""
    acts, qs = cited_files
    assert main(["chunking", "--dataset", "cited_questions", "--data-files", str(acts), "--questions", str(qs),
                 "--chunking", "words-20,article", "--n-resamples", "199", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "article/bm25-pt" in out and "article/bm25 " not in out
