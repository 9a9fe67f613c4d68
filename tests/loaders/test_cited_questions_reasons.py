"""Cited questions: every citation the task cannot use is listed with its reason and counted in the warning;
relative references read against the act their reference names; NFD questions give the NFC gold."""
from __future__ import annotations

import json
import unicodedata
import warnings

import pytest

from ragcov_data.loaders.cited_questions import build_cited_task

ACT = """LEI Nº 1.234, DE 10 DE JANEIRO DE 2000.
Art. 1º O imposto incide sobre os rendimentos das pessoas físicas.
§ 1º Consideram-se rendimentos os valores recebidos no ano-calendário.
§ 2º Estão isentos do imposto:
I - as diárias de viagem;
II - a indenização por despedida.
Art. 2º A declaração é anual.
Art. 3º Esta Lei entra em vigor na data de sua publicação.
"""

QUESTIONS = [
    ("q1", "O que diz a lei?", [{"raw": "ver a legislação aplicável"}]),                        # unparsed
    ("q2", "Qual o prazo?", [{"raw": "Lei nº 1.234, de 1999, art. 2º"}]),                        # year_mismatch
    ("q3", "As diárias são isentas?", [{"doc_id": "lei-1234-2000", "article": "1",
                                         "raw": "inciso I do § 2º deste artigo"}]),              # relative, resolved
    ("q4", "E a indenização?", [{"raw": "inciso II do § 2º deste artigo"}]),                     # no context
    ("q5", "Quando entra em vigor?", [{"raw": "Lei nº 1.234, de 10 de janeiro de 2000, art. 3º"}]),
    ("q6", "E o anexo?", [{"raw": "Anexo I da Lei nº 1.234, de 2000"}]),                         # not_located
    ("q7", "Artigo impossível", [{"raw": "Lei nº 1.234, de 2000, art. 99999999999999999999"}]),  # out of range
    ("q8", "Um artigo sem lei", [{"raw": "art. 2º"}]),                                          # act_unknown
]


@pytest.fixture()
def task(tmp_path):
    acts = tmp_path / "acts.jsonl"
    acts.write_text(json.dumps({"doc_id": "lei-1234-2000", "title": "Lei nº 1.234, de 10 de janeiro de 2000",
                                "text": ACT}, ensure_ascii=False) + "\n", encoding="utf-8")
    qs = tmp_path / "questions.jsonl"
    qs.write_text("".join(json.dumps({"qid": q, "question": t, "references": r}, ensure_ascii=False) + "\n"
                          for q, t, r in QUESTIONS), encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = build_cited_task(acts, qs, chunking="dispositivo")
    return t, [str(w.message) for w in caught]


def test_every_unusable_citation_listed_with_its_reason(task):
    t, _ = task
    got = [(u["query-id"], u["status"]) for u in t.manifest["unresolved"]]
    assert got == [("q1", "unparsed"), ("q2", "year_mismatch"), ("q4", "relative_without_context"),
                   ("q6", "not_located"), ("q7", "number_out_of_range"), ("q8", "act_unknown")]
    assert t.manifest["unresolved"][0]["citation"] == "?: ver a legislação aplicável"
    by = t.manifest["counts"]["citations_by_status"]
    assert by["resolved"] == 2 and sum(by.values()) == len(t.citations) == 8
    # a question whose only citation cannot be used is kept and listed, never dropped
    assert set(t.queries["_id"]) == {q for q, _, _ in QUESTIONS}
    assert t.manifest["queries_without_relevant_chunk"] == ["q1", "q2", "q4", "q6", "q7", "q8"]
    assert t.queries.set_index("_id").loc["q1", "n_citations"] == 1


def test_warning_counts_each_reason(task):
    _, msgs = task
    (msg,) = [m for m in msgs if m.startswith("cited questions")]
    for text in ("1 citation string(s) in which no citation was read (q1: ?: ver a legislação aplicável)",
                 "1 citation(s) whose year contradicts the act they name (q2: lei-1234-1999: art. 2)",
                 "1 relative citation(s)", "1 citation(s) of an annex", "1 citation(s) of a number no real act has",
                 "1 citation(s) naming no act", "6 question(s) with no relevant chunk"):
        assert text in msg


def test_relative_reference_read_against_its_reference(task):
    t, _ = task
    (row,) = t.citations[t.citations["query-id"] == "q3"].to_dict("records")
    assert (row["doc_id"], row["article"], row["paragraph"], row["inciso"], row["status"]) == (
        "lei-1234-2000", "1", "2", "I", "resolved")
    units = t.corpus.set_index("_id")["text"]
    top = t.qrels[(t.qrels["query-id"] == "q3") & (t.qrels["score"] == 2)]["corpus-id"]
    assert any("as diárias de viagem" in units[c] for c in top)


def test_nfd_questions_give_the_nfc_gold(data_dir, tmp_path):
    folder = data_dir / "irpf"
    nfd = tmp_path / "questions_nfd.jsonl"
    text = (folder / "questions.jsonl").read_text(encoding="utf-8")
    nfd.write_text(unicodedata.normalize("NFD", text), encoding="utf-8")
    assert nfd.read_text(encoding="utf-8") != text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = build_cited_task(folder / "laws.jsonl", folder / "questions.jsonl", chunking="article")
        b = build_cited_task(folder / "laws.jsonl", nfd, chunking="article")
    assert a.qrels.equals(b.qrels) and len(a.qrels) > 300
    cols = ["query-id", "doc_id", "article", "paragraph", "inciso", "alinea", "status"]
    assert a.citations[cols].equals(b.citations[cols])
    assert a.manifest["counts"]["citations_by_status"] == b.manifest["counts"]["citations_by_status"]


def test_constitution_in_the_corpus_is_cited_by_any_of_its_names(tmp_path):
    cf = ("CONSTITUIÇÃO DA REPÚBLICA FEDERATIVA DO BRASIL DE 1988\nArt. 5º Todos são iguais perante a lei.\n"
          "I - homens e mulheres são iguais em direitos e obrigações;\nII - ninguém será obrigado a fazer algo "
          "senão em virtude de lei;\nArt. 6º São direitos sociais a educação e a saúde.\n")
    acts = tmp_path / "acts.jsonl"
    acts.write_text(json.dumps({"doc_id": "cf-1988", "title": "Constituição da República Federativa do Brasil de 1988",
                                "text": cf}, ensure_ascii=False) + "\n", encoding="utf-8")
    qs = [{"qid": f"q{i}", "question": "Quem é obrigado?", "citations": f"art. 5º, inciso II, da {name}"}
          for i, name in enumerate(["Constituição", "Constituição Federal", "CF/88", "Carta Magna"])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = build_cited_task(acts, qs, chunking="dispositivo")
    assert list(t.citations["status"]) == ["resolved"] * 4 and set(t.citations["doc_id"]) == {"cf-1988"}


def test_invalid_numeral_and_control_characters_in_a_question(tmp_path):
    acts = tmp_path / "acts.jsonl"
    acts.write_text(json.dumps({"doc_id": "lei-1234-2000", "title": "Lei nº 1.234, de 10 de janeiro de 2000",
                                "text": ACT}, ensure_ascii=False) + "\n", encoding="utf-8")
    qs = [{"qid": "q1", "question": "Isento?", "references": [{"raw": "Lei nº 1.234, de 2000, art. 1º, § 2º, inciso IIII"}]},
          {"qid": "q2", "question": "Isento?", "references": [{"raw": "Lei nº 1.234, de 2000, art. 1º, § 2º, inc\x00iso \u202eII"}]}]
    with pytest.warns(UserWarning, match=r"1 citation\(s\) of an inciso with no valid Roman numeral or an alínea with no letter \(q1: "):
        t = build_cited_task(acts, qs, chunking="dispositivo")
    got = t.citations.set_index("query-id")[["paragraph", "inciso", "status"]].to_dict("index")
    assert got == {"q1": {"paragraph": "2", "inciso": "IIII", "status": "invalid_numeral"},
                   "q2": {"paragraph": "2", "inciso": "II", "status": "resolved"}}
