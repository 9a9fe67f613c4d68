"""Messages a user can act on: each names the cause and the fix (the vague ones of the third hostile-input round)."""
from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

from ragcov_data.baselines.analyzer import Analyzer
from ragcov_data.cli import main
from ragcov_data.errors import InputFileError, RagcovError


@pytest.fixture(scope="module")
def small(twelve_acts):
    """Twelve acts of the shared acervo and a bm25 TREC run of them."""
    src, run = twelve_acts("bm25.trec")
    return src.parent, src, run


def _err(argv, capsys) -> str:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2, err
    return err


def test_semicolon_csv_names_its_delimiter(small, capsys):
    d, src, run = small
    lines = [ln.split() for ln in run.read_text().splitlines()]
    semi = d / "semi.csv"
    semi.write_text("QID;DOC;score\n" + "".join(f"{a[0]};{a[2]};{a[4]}\n" for a in lines))
    err = _err(["eval", semi, "--data-files", src, "--columns", "query-id=QID,corpus-id=DOC"], capsys)
    assert "';'-separated lines" in err and "commas" in err and "not a column" not in err


def test_unknown_cluster_lists_every_queries_column(small, capsys):
    _, src, run = small
    err = _err(["eval", run, "--data-files", src, "--cluster", "nope"], capsys)
    assert "doc_type" in err and "--cluster COL" in err


def test_chunking_on_a_tables_folder_does_not_blame_chunking(small, tmp_path, capsys):
    _, src, _ = small
    from ragcov_data.tasks.sources import resolve_task

    task = resolve_task(data_files=[str(src)]).task
    for split in ("corpus", "queries", "qrels"):
        task[split].to_parquet(tmp_path / f"{split}.parquet")
    err = _err(["chunking", "--data-dir", tmp_path, "--retriever", "bm25"], capsys)
    assert "queries/qrels tables" in err and "--data-files ACERVO" in err and "drop --chunking" not in err


def test_sample_larger_than_the_task_does_not_name_an_option_eval_lacks(small, capsys):
    d, src, run = small
    tagged = d / "sampled.trec"  # made on a 140-document sample of another task (no fingerprint: an older run)
    tagged.write_text("".join(" ".join(ln.split()[:5] + ["bm25;sample:k=140,seed=0,docs=0123456789ab"]) + "\n"
                              for ln in run.read_text().splitlines()))
    err = _err(["eval", tagged, "--data-files", src], capsys)
    assert "sample of 140 documents" in err and "made on another task" in err and "drop --sample-docs" not in err


def test_known_sizes_names_the_option_that_took_the_sizes_away(small, capsys):
    d, src, _ = small
    run = d / "s.trec"
    assert main(["run", "--retriever", "bm25", "--data-files", str(src), "--sample-docs", "6", "--seed", "0",
                 "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    base = ["eval", run, "--data-files", src, "--methods", "known_sizes", "--n-resamples", "199"]
    assert "--no-fpc" in _err([*base, "--no-fpc"], capsys)
    err = _err([*base, "--population-size", "50"], capsys)
    assert "--population-size" in err and "drop --population-size" in err
    assert main([str(a) for a in base]) == 0  # the sample's own sizes: known_sizes runs


@pytest.mark.parametrize("bad", [None, 3, float("nan"), b"lei"])
def test_analyzer_refuses_what_is_not_text(bad):
    for a in (Analyzer(), Analyzer(stem="pt")):
        with pytest.raises(RagcovError, match="the analyzer tokenises text"):
            a(bad)


def test_all_struck_html_act_names_superseded_wording(tmp_path, capsys):
    folder = tmp_path / "acts"
    folder.mkdir()
    (folder / "a.html").write_text("<html><body><p>Art. 1º Lei em vigor sobre tarifas de energia.</p>"
                                   "<p>Art. 2º Outra regra vigente.</p></body></html>", encoding="utf-8")
    (folder / "b.html").write_text("<html><body><p><strike>Art. 1º Regra antiga revogada.</strike></p>"
                                   "<p><s>Art. 2º Outra regra revogada.</s></p></body></html>", encoding="utf-8")
    from ragcov_data.legal.acervo import read_acervo

    with pytest.raises(InputFileError, match=r"b.html: every word of this act is superseded wording.*"
                                             r"--keep-superseded"):
        read_acervo([folder])
    assert len(read_acervo([folder], keep_superseded=True).documents) == 2


ACT = ("Art. 1º Esta Lei trata do imposto.\nArt. 8º São dedutíveis:\nI - as despesas médicas;\n"
       "II - as despesas com educação:\na) do contribuinte;\nb) dos dependentes;\n"
       "Art. 9º Esta Lei entra em vigor na data de sua publicação.\n")


def test_structured_references_as_people_write_them_resolve(tmp_path):
    from ragcov_data.loaders.cited_questions import build_cited_task

    acts = tmp_path / "acts.jsonl"
    acts.write_text(json.dumps({"doc_id": "lei-1-2000", "title": "Lei nº 1, de 2000", "text": ACT},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    written = {"doc_id": "lei-1-2000", "article": "8º", "inciso": "ii", "alinea": "A"}
    canonical = {"doc_id": "lei-1-2000", "article": "8", "inciso": "II", "alinea": "a"}
    qs = [{"qid": "q1", "question": "Despesas do contribuinte?", "references": [written]},
          {"qid": "q2", "question": "Despesas do contribuinte?", "references": [canonical]}]
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(acts, questions, chunking="dispositivo", gold="references")
    c = task.citations.set_index("query-id")
    assert c.loc["q1", "status"] == c.loc["q2", "status"] == "resolved"
    q = task.qrels
    assert sorted(q[q["query-id"] == "q1"]["corpus-id"]) == sorted(q[q["query-id"] == "q2"]["corpus-id"])


def test_every_chunk_alike_is_not_called_sharing_no_word(tmp_path, capsys):
    folder = tmp_path / "same"
    folder.mkdir()
    text = " ".join(["tarifa energia"] * 150)
    rows = [{"doc_id": f"d{i}", "text": text} for i in range(4)]
    (folder / "acts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.trec"
    rc = main(["run", "--retriever", "bm25", "--data-files", str(folder / "acts.jsonl"), "--out", str(out),
               "--quiet"])
    said = capsys.readouterr()
    assert "shares a word" not in said.err + said.out
    assert rc == 0 and len(pd.read_csv(out, sep=" ", header=None)) > 0  # BM25 keeps the matching rows
