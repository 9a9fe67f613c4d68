"""Messages that say what is wrong and what to do: metric names on a cited-questions task (every verb and the API
list the valid names, budgeted ones included, and the one meant), a questions file that is not UTF-8, a task none
of whose citations resolves, and the cited questions' notice printed as one console line, not a Python warning."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from ragcov_data import load_dataset
from ragcov_data.cli import main
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.eval import evaluate
from ragcov_data.loaders.questions import read_questions

WORDS = ["aluguel", "pensão", "doação", "herança", "salário", "juros"]
ACTS = "\n".join(f"Art. {i}º O contribuinte deve declarar o rendimento {w} recebido no ano, com os seus comprovantes "
                 f"e a indicação da fonte pagadora do rendimento {w}." for i, w in enumerate(WORDS, 1))
QUESTIONS = [{"qid": f"q{i}", "question": f"Como declarar {w}?", "citations": f"Lei nº 10, de 2000, art. {i}º"}
             for i, w in enumerate(WORDS, 1)]
#: a citation of an act that is not in the corpus: the task warns of it
OTHER = {"qid": "q7", "question": "E a outra lei?", "citations": "Lei nº 9.250, de 1995, art. 3º"}


def _irpf(folder: Path, questions: list[dict], encoding: str = "utf-8") -> Path:
    """A data folder holding an ``irpf/`` of one act (Lei nº 10, de 2000) and ``questions``."""
    d = folder / "irpf"
    d.mkdir(parents=True)
    (d / "laws.jsonl").write_text(json.dumps({"doc_id": "lei-10-2000", "title": "Lei nº 10, de 2000", "text": ACTS},
                                             ensure_ascii=False) + "\n", encoding="utf-8")
    (d / "questions.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions),
                                       encoding=encoding)
    return folder


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    """``(data dir, run)``: the tiny IRPF-like task and a bm25 run of it made by ``ragcov run``."""
    data = _irpf(tmp_path / "data", QUESTIONS + [OTHER])
    run = tmp_path / "bm25.trec"
    assert main(["run", "--dataset", "irpf", "--data-dir", str(data), "--retriever", "bm25", "--out", str(run),
                 "--quiet"]) == 0
    return data, run


# --------------------------------------------------------------------------- metric names on a cited task

BAD = [("recall@0w", "recall@1000w"), ("span_iou@1000w", "iou@1000w"), ("precison@1000w", "precision@1000w"),
       ("recall@-5w", "recall@1000w"), ("recal@10", "recall@10"), ("span_recall@10", "span_recall@10w")]


@pytest.mark.parametrize("verb", ["eval", "compare", "leaderboard"])
def test_every_verb_names_the_valid_metrics_and_the_one_meant(tiny, capsys, verb):
    data, run = tiny
    other = run.with_name("other.trec")
    other.write_bytes(run.read_bytes())
    runs = [str(run)] if verb == "eval" else [str(run), str(other)]
    for metric, meant in BAD:
        assert main([verb, *runs, "--dataset", "irpf", "--data-dir", str(data), "--metric", metric]) == 2
        err = capsys.readouterr().err
        assert f"ragcov {verb}: error: cited-questions metrics must be" in err, err
        assert "'span_recall@Bw'" in err and "'iou@Bw'" in err and "'chunk_recall@k'" in err  # budgeted ones too
        assert f"got {metric!r}. Did you mean {meant!r}?" in err
        assert "go to" not in err and "is a budgeted measure" not in err  # it is on the task that scores them


def test_the_api_says_the_same(tiny):
    data, run = tiny
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = load_dataset("irpf", data_dir=str(data))
    for metric, meant in BAD:
        with pytest.raises(RagcovError, match=rf"cited-questions metrics must be .*'span_recall@Bw'.*Did you mean "
                                              rf"'{meant}'\?"):
            evaluate(str(run), ds, metric)
    rep = evaluate(str(run), ds, "precision@1000w", n_resamples=199)  # the right name scores
    assert rep.metric == "precision@1000w" and len(rep.per_query) == 6


def test_chunking_names_the_one_meant(tiny, capsys):
    data, _ = tiny
    assert main(["chunking", "--dataset", "irpf", "--data-dir", str(data), "--metrics", "precison@1000w",
                 "--quiet"]) == 2
    assert "Did you mean 'precision@1000w'?" in capsys.readouterr().err


def test_a_task_without_citations_still_points_to_the_cited_task():
    from ragcov_data.eval.outcomes.metrics import parse_metric

    with pytest.raises(RagcovError, match=r"budgeted measure .* cited-questions task \(irpf"):
        parse_metric("recall@-5w")


# --------------------------------------------------------------------------- a questions file that is not UTF-8


def test_questions_file_not_utf8_names_the_file_and_the_fix(tmp_path, capsys):
    data = _irpf(tmp_path / "data", QUESTIONS, encoding="latin-1")
    qfile = data / "irpf" / "questions.jsonl"
    fix = r"line 1 \(byte offset \d+\) is not valid UTF-8 .*iconv -f latin1 -t utf-8"
    with pytest.raises(InputFileError, match=str(qfile).replace(".", r"\.") + ": " + fix):
        read_questions(qfile)
    for argv in (["chunking", "--dataset", "irpf", "--data-dir", str(data), "--quiet"],
                 ["chunking", "--dataset", "cited_questions", "--data-files", str(data / "irpf" / "laws.jsonl"),
                  "--questions", str(qfile), "--quiet"],
                 ["eval", str(tmp_path / "run.trec"), "--dataset", "irpf", "--data-dir", str(data)]):
        (tmp_path / "run.trec").write_text("q1 Q0 lei-10-2000#0000 1 1.0 x\n")
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{qfile}: line 1" in err and "not valid UTF-8" in err and "iconv" in err, err
        assert "internal error" not in err and "codec can't decode" not in err


def test_questions_file_with_a_bom_reads(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS).encode())
    assert [q["qid"] for q in read_questions(p)] == [q["qid"] for q in QUESTIONS]


# --------------------------------------------------------------------------- no citation resolves


@pytest.mark.parametrize("citation, reason", [("ver a legislação aplicável", "no citation was read"),
                                              ("Lei nº 9.250, de 1995, art. 3º", "of acts not in the corpus")])
def test_no_citation_resolves_says_so_with_counts(tmp_path, citation, reason):
    data = _irpf(tmp_path / "data", [{**q, "citations": citation} for q in QUESTIONS[:3]])
    files = {"acts": str(data / "irpf" / "laws.jsonl"), "questions": str(data / "irpf" / "questions.jsonl")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputFileError) as exc:
            load_dataset("cited_questions", data_files=files)
    msg = str(exc.value)
    assert "no citation of the 3 question(s) resolved in the acts (3 citation(s): 3 " in msg and reason in msg
    assert "lei-10-2000" in msg and "manifest['unresolved']" in msg and "corresponds to no data" not in msg


# --------------------------------------------------------------------------- the notice on the console


def test_cli_prints_the_notice_as_one_line_the_api_warns(tiny, tmp_path):
    data, run = tiny
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    for argv in (["eval", str(run)], ["leaderboard", f"a={run}", f"b={run}"], ["run", "--retriever", "tfidf", "--out",
                                                                               str(tmp_path / "tfidf.trec")]):
        r = subprocess.run([sys.executable, "-m", "ragcov_data", *argv, "--dataset", "irpf", "--data-dir", str(data)],
                           capture_output=True, text=True, env=env, timeout=300)
        line = (f"ragcov {argv[0]}: cited questions (irpf): 1 citation(s) not graded (1 citation(s) of acts not in "
                "the corpus)")
        assert r.stderr.startswith(line), r.stderr
        assert r.stderr.count("cited questions (irpf)") == 1 and "DIR/manifest.json" in r.stderr
        assert "UserWarning" not in r.stderr and "warnings.warn" not in r.stderr and ".py:" not in r.stderr
    api = _irpf(tmp_path / "api", QUESTIONS + [{**OTHER, "question": "Outra lei, pela API?"}])  # not built yet
    with pytest.warns(UserWarning, match=r"cited questions \(article\): 1 citation\(s\) of acts not in the corpus"):
        load_dataset("irpf", data_dir=str(api))
