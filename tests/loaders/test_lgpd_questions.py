"""``lgpd``: another questions file of the same layout (the held-out half), and every bad record."""
from __future__ import annotations

import hashlib
import json
import warnings

import pytest

from ragcov_data import load_dataset
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.loaders.lgpd import build_lgpd_task
from ragcov_data.tasks.record import manifest_of

LGPD = "urn:lex:br:federal:lei:2018-08-14;13709"
LAI = "urn:lex:br:federal:lei:2011-11-18;12527"


def _q(qid, urns, exam="Banca - Órgão - Cargo - 2024", text="Sobre a LGPD, julgue o item.", **extra):
    rec = {"ID_QUESTAO": qid, "INFORMACOES_CONCURSO": exam, "ENUNCIADO": text, "ENUNCIADO_COM_ALTERNATIVAS": text,
           "RESPOSTA_COMENTADA": "Segundo o art. 5º, V, titular é a pessoa natural.", "RESPOSTA": "Certo",
           "QUESTAO_COM_RESPOSTA_COMENTADA_E_FORMATADA": f"{text}\n\nComentário: ...", "URN_FUNDAMENTACAO": urns}
    rec.update(extra)
    return rec


def _write(tmp_path, records, name="heldout.jsonl"):
    p = tmp_path / name
    p.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records),
                 encoding="utf-8")
    return p


HELD = [_q("9001", [f"{LGPD}!art5_cpt_inc5"], text="Quem é o titular dos dados pessoais?"),
        _q(9002, [f"{LAI}!art4_cpt_inc4", f"{LGPD}!art5_cpt_inc1"], exam="Outra - Banca - 2023",
           text="O que é informação pessoal?"),
        _q("9003", [f"{LGPD}!art55-12_cpt_inc1", "enunciado_cd_anpd_1_2023"], text="Quais as receitas da ANPD?")]


def test_a_held_out_file_is_scored_over_the_shared_acts(tmp_path, data_dir):
    p = _write(tmp_path, HELD)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = load_dataset("lgpd", data_dir=data_dir, questions=str(p), cache_dir=tmp_path / "c1")
        same = load_dataset("lgpd", data_dir=data_dir, data_files={"questions": str(p)}, cache_dir=tmp_path / "c2")
        field = load_dataset("lgpd", data_dir=data_dir, questions_file=str(p), cache_dir=tmp_path / "c3")
    q = ds["queries"].to_pandas()
    assert q["_id"].tolist() == ["9001", "9002", "9003"] == same["queries"].to_pandas()["_id"].tolist()
    assert field["queries"].to_pandas()["_id"].tolist() == q["_id"].tolist()
    assert q["exam"].tolist() == ["Banca - Órgão - Cargo - 2024", "Outra - Banca - 2023",
                                  "Banca - Órgão - Cargo - 2024"]
    assert q["partial"].tolist() == [False, False, True]
    cits = ds["citations"].to_pandas()
    lai = cits[cits["raw"] == f"{LAI}!art4_cpt_inc4"].iloc[0]
    assert (lai["doc_id"], lai["article"], lai["inciso"], lai["status"]) == ("lei-12527-2011", "4", "IV", "resolved")
    docs = ds["documents"].to_pandas().set_index("doc_id")["text"]
    span = docs["lei-12527-2011"][int(lai["start_char"]):int(lai["end_char"])]
    assert span.startswith("IV – informação pessoal:") and span.endswith("identificável;\n")
    m = manifest_of(ds)
    sources = {s["name"]: s["sha256"] for s in m["sources"]}
    assert sources["heldout.jsonl"] == hashlib.sha256(p.read_bytes()).hexdigest() and "questoes.jsonl" not in sources
    assert m["uncovered_references"] == {"9003": ["enunciado_cd_anpd_1_2023"]}


def test_questions_and_data_files_must_agree(tmp_path, data_dir):
    p, other = _write(tmp_path, HELD), _write(tmp_path, HELD[:1], "other.jsonl")
    with pytest.raises(RagcovError, match="two questions files"):
        load_dataset("lgpd", data_dir=data_dir, questions=str(p), data_files={"questions": str(other)})
    for bad in ([str(p)], {"query": str(p)}, {}):
        with pytest.raises(InputFileError, match="`data_files` of lgpd must be a dict"):
            load_dataset("lgpd", data_dir=data_dir, data_files=bad)
    with pytest.raises(InputFileError, match="has neither"):
        load_dataset("lgpd", data_dir=tmp_path)


@pytest.mark.parametrize("record, words", [
    ({k: v for k, v in _q("7", [f"{LGPD}!art5"]).items() if k != "INFORMACOES_CONCURSO"},
     ["question '7'", "INFORMACOES_CONCURSO is missing"]),
    (_q("7", [f"{LGPD}!art5"], text="   "), ["question '7'", "ENUNCIADO_COM_ALTERNATIVAS is str '   '"]),
    (_q("7", f"{LGPD}!art5"), ["question '7'", "URN_FUNDAMENTACAO is str", "non-empty list of strings"]),
    (_q("7", []), ["question '7'", "URN_FUNDAMENTACAO is list []"]),
    (_q("7", [f"{LGPD}!art5", None]), ["question '7'", "URN_FUNDAMENTACAO is list"]),
    (_q("7", [f"{LGPD}!art5_inc"]), ["question '7'", "'inc' is malformed", "Fix the URN in URN_FUNDAMENTACAO"]),
    (_q("7", [f"{LGPD}!cap2"]), ["question '7'", "names no artigo"]),
    (_q("7", ["Lei nº 13.709/2018, art. 5º"]), ["question '7'", "neither a LexML URN", "source key"]),
    ({k: v for k, v in _q("7", [f"{LGPD}!art5"]).items() if k != "ID_QUESTAO"}, ["has no ID_QUESTAO"]),
    (_q(True, [f"{LGPD}!art5"]), ["has no ID_QUESTAO"]),
    ("[1, 2]", ["is not a JSON object"]),
    ('{"ID_QUESTAO": "7", ', ["is not valid JSON"]),
])
def test_a_bad_record_names_the_file_line_and_question(tmp_path, data_dir, record, words):
    p = _write(tmp_path, [HELD[0], record])
    with pytest.raises(InputFileError) as err:
        build_lgpd_task(questions=p, data_dir=data_dir)
    msg = str(err.value)
    assert f"{p}: line 2" in msg and all(w in msg for w in words), msg


def test_repeated_ids_an_empty_and_a_missing_file(tmp_path, data_dir):
    with pytest.raises(InputFileError, match=r"line 2: qid '9001' is used twice"):
        build_lgpd_task(questions=_write(tmp_path, [HELD[0], HELD[0]]), data_dir=data_dir)
    with pytest.raises(InputFileError, match="no questions"):
        build_lgpd_task(questions=_write(tmp_path, ["", "  "], "empty.jsonl"), data_dir=data_dir)
    with pytest.raises(InputFileError, match="does not exist"):
        build_lgpd_task(questions=tmp_path / "nope.jsonl", data_dir=data_dir)
    with pytest.raises(InputFileError, match="not valid UTF-8"):
        (tmp_path / "latin1.jsonl").write_bytes(json.dumps(HELD[0], ensure_ascii=False).encode("latin-1"))
        build_lgpd_task(questions=tmp_path / "latin1.jsonl", data_dir=data_dir)


def test_questions_citing_nothing_here_are_an_error_not_an_empty_task(tmp_path, data_dir):
    p = _write(tmp_path, [_q("1", ["enunciado_cd_anpd_1_2023"]), _q("2", ["urn:lex:br:federal:lei:2014-04-23;12965"
                                                                           "!art3"])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_lgpd_task(questions=p, data_dir=data_dir)
    assert task.queries["partial"].all() and len(task.qrels) == 0
    assert task.manifest["queries_without_relevant_chunk"] == ["1", "2"]
    with pytest.raises(InputFileError, match="no citation of the 2 question"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            load_dataset("lgpd", data_dir=data_dir, questions=str(p), cache_dir=tmp_path / "c")
