"""`ragcov run / eval / chunking --dataset lgpd` end to end: the exam is the unit, the numbers are the API's."""
from __future__ import annotations

import json
import warnings

import pytest

from ragcov_data.cli import main
from ragcov_data.eval.comparisons.cited import per_query_values
from ragcov_data.loaders.lgpd import build_lgpd_task
from ragcov_data.runs import load_run

IN_CORPUS = ("urn:lex:br:federal:lei:2018-08-14;13709!", "urn:lex:br:federal:lei:2011-11-18;12527!")


@pytest.fixture(scope="module")
def shared(data_dir):
    with open(data_dir / "lgpd" / "questoes.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_run_then_eval_clusters_by_exam(data_dir, tmp_path, capsys, shared):
    trec, out = tmp_path / "lgpd.trec", tmp_path / "eval.json"
    assert main(["run", "--dataset", "lgpd", "--data-dir", str(data_dir), "--retriever", "bm25",
                 "--out", str(trec)]) == 0
    assert "352 queries searched" in capsys.readouterr().out  # (the unresolved citations are said at a first build)
    assert main(["eval", str(trec), "--dataset", "lgpd", "--data-dir", str(data_dir), "--metric", "recall@10",
                 "--cluster", "exam", "--n-resamples", "999", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    scored = [r for r in shared if any(u.startswith(IN_CORPUS) for u in r["URN_FUNDAMENTACAO"])]
    exams = {" ".join(r["INFORMACOES_CONCURSO"].split()) for r in scored}
    assert f"unit: exam ({len(exams)} exams, {len(scored)} queries)" in text and "cluster=exam" in text
    # the per-question values are the API's on the same run and task
    got = {r["query-id"]: r["value"] for r in json.loads(out.read_text())["per_query"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_lgpd_task(data_dir=data_dir)
    ref = per_query_values(load_run(trec), task, metrics=["recall@10"])["recall@10"]
    assert len(got) == len(ref) == len(scored)
    assert all(got[q] == pytest.approx(ref[q], abs=1e-12) for q in ref.index)


def test_chunking_on_lgpd_and_on_a_held_out_file(data_dir, tmp_path, capsys, shared):
    out = tmp_path / "chunking.json"
    assert main(["chunking", "--dataset", "lgpd", "--data-dir", str(data_dir), "--chunking", "words-200,article",
                 "--retriever", "bm25", "--budgets", "1000", "--metrics", "recall@10", "--n-resamples", "499",
                 "--quiet", "--json", str(out)]) == 0
    cap = capsys.readouterr()
    assert "Cited questions: 350 questions (all)" in cap.out and "of acts not in the corpus" in cap.err
    got = json.loads(out.read_text())
    assert [r["article_citations"] - r["resolved"] for r in got["resolution"]] == [0, 0]
    assert {s["name"] for s in got["leaderboards"]["recall@10"]["systems"]} == {"words-200/bm25", "article/bm25"}
    held = tmp_path / "heldout.jsonl"  # the layout of the shared file: twenty of its questions under new ids
    held.write_text("".join(json.dumps({**r, "ID_QUESTAO": f"h{r['ID_QUESTAO']}"}, ensure_ascii=False) + "\n"
                            for r in shared[:20]), encoding="utf-8")
    assert main(["chunking", "--dataset", "lgpd", "--data-dir", str(data_dir), "--questions", str(held),
                 "--chunking", "words-200,article", "--retriever", "bm25", "--budgets", "none", "--metrics",
                 "recall@10", "--n-resamples", "499", "--quiet", "--json", str(out)]) == 0
    assert "Cited questions: 20 questions (all)" in capsys.readouterr().out
    scored = {v["query-id"] for v in json.loads(out.read_text())["values"]}
    assert scored == {f"h{r['ID_QUESTAO']}" for r in shared[:20]}
