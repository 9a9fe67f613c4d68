"""Messages that said another problem than the one there was: each now says what happened and what to do.

- an act whose wording is all struck through but its title was told to lower ``chunk_words``;
- a PDF named ``.jsonl`` (or ``.trec``) was told to re-encode it with ``iconv``;
- a chunker returning float spans ``(0.0, 12.0)`` was told its chunks were not ``(start, end)`` pairs;
- ``span_iou@1000w`` on JurisTCU was pointed to IRPF, which rejects that name (there it is ``iou@1000w``);
- terminal colour codes around ``art. 5º`` in a question's citation lost the article with no reason given, and
  in an act's text hid the article from its citations.
"""
from __future__ import annotations

import json
import re
import warnings
import zlib
from pathlib import Path

import pytest

from ragcov_data.cli import main
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.eval.outcomes.budget import parse_cited_metric
from ragcov_data.eval.outcomes.metrics import METRICS, parse_metric
from ragcov_data.loaders.cited_questions import build_cited_task
from ragcov_data.runs import load_run

WORDS = ["aluguel", "pensão", "doação", "herança", "salário", "juros"]


def _pdf(path: Path) -> Path:
    """A small PDF file (its magic bytes, a binary comment line, a compressed stream) at ``path``."""
    path.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"
                     + zlib.compress(b"x" * 500) + b"\n%%EOF\n")
    return path


def test_an_act_all_struck_but_its_title_is_said_to_be_superseded_wording(tmp_path, capsys):
    acts = tmp_path / "acts"
    acts.mkdir()
    (acts / "lei-1.html").write_text(
        "<html><head><title>Lei nº 1, de 2000</title></head><body><h1>Lei nº 1, de 2000</h1>"
        "<p><strike>Art. 1º Fica instituído o imposto sobre a renda das pessoas físicas residentes.</strike></p>"
        "<p><strike>Art. 2º Revogado pela Lei nº 2 de 2001 que trata de toda a matéria.</strike></p></body></html>",
        encoding="utf-8")
    assert main(["build", "--data-files", str(acts), "--out", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert "acts/lei-1.html is mostly superseded wording: 28 of its 38 words are struck through or revoked, taken " \
           "out of the index by default, and the 10 words left are too few. Keep that wording, marked out of " \
           "force, with --keep-superseded" in err, err
    assert main(["build", "--data-files", str(acts), "--out", str(tmp_path / "t"), "--keep-superseded"]) == 2
    err = capsys.readouterr().err  # kept, it is simply short: the plain advice
    assert "superseded" not in err and "lower `chunk_words` or add longer documents" in err


@pytest.mark.parametrize("name", ["doc.jsonl", "acts.csv", "act.html"])
def test_a_pdf_named_as_text_is_said_to_be_a_pdf(tmp_path, capsys, name):
    pdf = _pdf(tmp_path / name)
    assert main(["build", "--data-files", str(pdf), "--out", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert f"{name}: this file is a PDF document (its first bytes are b'%PDF-'), not UTF-8 text, whatever its " \
           "name says; extract its text first (e.g. `pdftotext" in err, err
    assert "iconv" not in err


@pytest.mark.parametrize("name, says", [("run.trec", "not a run"), ("run.csv", "not a run"),
                                        ("passages.jsonl", "not a")])
def test_a_pdf_named_as_a_run_is_said_to_be_a_pdf(tmp_path, name, says):
    with pytest.raises(InputFileError) as exc:
        load_run(_pdf(tmp_path / name))
    assert f"this file is a PDF document (its first bytes are b'%PDF-'), {says}" in str(exc.value)
    assert "UTF-8" not in str(exc.value) and "iconv" not in str(exc.value)
    from ragcov_data.runs.passages import load_passage_run

    if name.endswith(".jsonl"):
        with pytest.raises(InputFileError, match=r"this file is a PDF document .* not a passage run"):
            load_passage_run(tmp_path / name)


@pytest.fixture
def cited(tmp_path):
    """``f(act_text_of, citation_of)``: an act of six articles and six questions, question i citing article i,
    with the act's article lines and the citation strings given by the two functions."""
    def make(article_line=lambda i: f"Art. {i}º", citation=lambda i: f"Lei nº 10, de 2000, art. {i}º"):
        acts = tmp_path / "acts.jsonl"
        arts = "\n".join(f"{article_line(i)} O contribuinte deve declarar o rendimento {w} recebido no ano, com os "
                         f"seus comprovantes e a indicação da fonte pagadora do rendimento {w}."
                         for i, w in enumerate(WORDS, 1))
        acts.write_text(json.dumps({"doc_id": "lei-10-2000", "title": "Lei nº 10, de 2000", "text": arts},
                                   ensure_ascii=False) + "\n", encoding="utf-8")
        qs = tmp_path / "q.jsonl"
        qs.write_text("".join(json.dumps({"qid": f"q{i}", "question": f"Como declarar {w}?", "citations": citation(i)},
                                         ensure_ascii=False) + "\n" for i, w in enumerate(WORDS, 1)), encoding="utf-8")
        return acts, qs
    return make


def floats(text):
    return [(0.0, 12.0), (12.0, float(len(text)))]


def halves(text):
    return [(0, 12.5), (12.5, len(text))]


def ints(text):
    return [(0, 12), (12, len(text))]


def test_float_spans_of_a_chunker_are_said_to_be_floats(cited):
    acts, qs = cited()
    with pytest.raises(RagcovError, match=r"chunker 'floats' on act 'lei-10-2000': chunk 0 '\(0.0, 12.0\)' gives its "
                                          r"character offsets as float; offsets are integers .*: return int\(start\), "
                                          r"int\(end\)\."):
        build_cited_task(acts, qs, chunker=floats)
    with pytest.raises(RagcovError, match=r"chunk 0 '\(0, 12.5\)' gives its character offsets as float; .* not whole "
                                          "numbers"):
        build_cited_task(acts, qs, chunker=halves)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(acts, qs, chunker=ints)  # the fix works
    assert task.corpus["start_char"].tolist() == [0, 12]


def test_a_budgeted_measure_on_juristcu_names_what_irpf_accepts_and_juristcus_own():
    with pytest.raises(RagcovError) as exc:
        parse_metric("span_iou@1000w")
    said = str(exc.value)
    meant = re.search(r"there it is named '([^']+)'", said).group(1)
    assert meant == "iou@1000w" and parse_cited_metric(meant).name == "iou"  # a name IRPF accepts
    with pytest.raises(RagcovError, match="Did you mean 'iou@1000w'"):
        parse_cited_metric("span_iou@1000w")  # what IRPF says of the name given
    assert "This task's measures are " + ", ".join(f"{n}@k" for n in METRICS) in said
    from ragcov_data.eval.outcomes.budget import BUDGET_NAMES

    every = re.escape(", ".join(f"{n}@Bw" for n in BUDGET_NAMES))  # the one list of budgeted names, all of it
    assert "covered_whole" in BUDGET_NAMES and "span_recall" in BUDGET_NAMES
    with pytest.raises(RagcovError, match=rf"'foo@10w' is a budgeted form .* {every} \(not 'foo'\)"):
        parse_metric("foo@10w")
    from ragcov_data.eval.outcomes.budget import _PATTERN, _meant

    for given in ("span_iou@1000w", "recall@500w", "prec@100w", "success@50w", "iou@0w", "span_recal@300w"):
        with pytest.raises(RagcovError) as exc:  # the name said on JurisTCU is the one a cited task suggests
            parse_metric(given)
        said = re.search(r"there it is named '([^']+)'", str(exc.value))
        assert (said.group(1) if said else given) == _meant(_PATTERN.match(given), False), given


def test_terminal_colour_codes_around_a_cited_article_are_taken_out(cited):
    acts, qs = cited(citation=lambda i: {4: "\x1b[31mLei nº 10, de 2000, art. 4º\x1b[0m",
                                         5: "Lei nº 10, de 2000, \x1b[1mart. 5º\x1b[0m"}.get(
        i, f"Lei nº 10, de 2000, art. {i}º"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(acts, qs)
    c = task["citations"].set_index("query-id")
    assert c.loc["q5", "citation"] == "lei-10-2000: art. 5" and c.loc["q5", "status"] == "resolved"  # was act only
    assert c.loc["q4", "citation"] == "lei-10-2000: art. 4" and c.loc["q4", "status"] == "resolved"  # was no act
    from ragcov_data.legal.citations import parse

    assert [(x.article, x.cleaned) for x in parse("Lei nº 10, de 2000, \x1b[1mart. 5º\x1b[0m")] == [("5", True)]


def test_terminal_colour_codes_in_an_acts_text_are_refused_naming_the_line(cited):
    acts, qs = cited(article_line=lambda i: "\x1b[1mArt. 5º\x1b[0m" if i == 5 else f"Art. {i}º")
    with pytest.raises(InputFileError, match=r"acts.jsonl, line 1: document 'lei-10-2000' holds terminal escape codes "
                                             r"\('\\x1b\[1m' at its line 5: .* strip them from the source"):
        build_cited_task(acts, qs)
