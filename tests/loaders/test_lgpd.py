"""``lgpd``: the shared exam questions cited by LexML URN, as a cited-questions task, on the real data.

The references are the shared files read here with json/csv alone: the questions' fields, their URN lists and
the unit tables' rows (the text a resolved citation's span must hold).
"""
from __future__ import annotations

import csv
import json
import re
import warnings

import pandas as pd
import pytest

from ragcov_data import load_dataset
from ragcov_data.loaders.cited_questions import build_cited_task
from ragcov_data.loaders.lgpd import LGPD_FILES, build_lgpd_task, resolution_summary
from ragcov_data.tasks.record import manifest_of

CONFIGS = ("article", "words-50", "words-100", "words-200", "dispositivo", "article-full")
IN_CORPUS = ("urn:lex:br:federal:lei:2018-08-14;13709!", "urn:lex:br:federal:lei:2011-11-18;12527!")
_FURNITURE = re.compile(r"^\[[^\]]*\]|(?:all_inclusive|remove_red_eye)(?:Regulamentação|Normas correlatas)")
_LINE_LABEL = re.compile(r"^(?:Art\. \d+(?:º|\.|-[A-Z]\.)|§ \d+º|Parágrafo único\.|[IVXLC]+(?:-[A-Z])? –|[a-z]\))\s*")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _build(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_lgpd_task(**kw)


@pytest.fixture(scope="module")
def raw(data_dir):
    """The shared questions as published, and every unit table row by URN (furniture stripped)."""
    with open(data_dir / "lgpd" / "questoes.jsonl", encoding="utf-8") as fh:
        questions = [json.loads(line) for line in fh if line.strip()]
    units = {}
    for name in LGPD_FILES["acts"]:
        with open(data_dir / "lgpd" / name, encoding="utf-8", newline="") as fh:
            units.update({r["urn"]: (r["Tipo"], _norm(_FURNITURE.sub(" ", r["Texto"]))) for r in csv.DictReader(fh)})
    return questions, units


@pytest.fixture(scope="module")
def task(data_dir):
    return _build(data_dir=data_dir)


def test_counts_against_the_shared_file(task, raw):
    questions, _ = raw
    q = task.queries.set_index("_id")
    assert list(q.index) == [str(r["ID_QUESTAO"]) for r in questions] and len(q) == 352
    distinct = {str(r["ID_QUESTAO"]): list(dict.fromkeys(r["URN_FUNDAMENTACAO"])) for r in questions}
    partial = {k for k, v in distinct.items() if not all(u.startswith(IN_CORPUS) for u in v)}
    assert set(q.index[q["partial"]]) == partial and len(partial) == 10
    assert (q["coverage"] == q["partial"].map({True: "partial", False: "full"})).all()
    c = task.citations
    assert len(c) == sum(map(len, distinct.values())) == 1005
    by = c["status"].value_counts().to_dict()
    assert by == {"resolved": sum(u.startswith(IN_CORPUS) for v in distinct.values() for u in v),
                  "act_not_in_corpus": sum(not u.startswith(IN_CORPUS) for v in distinct.values() for u in v)}
    assert by == {"resolved": 994, "act_not_in_corpus": 11}
    assert task.manifest["queries_without_relevant_chunk"] == [k for k, v in distinct.items()
                                                                if not any(u.startswith(IN_CORPUS) for u in v)]
    assert task.manifest["uncovered_references"] == {
        k: [u for u in r["URN_FUNDAMENTACAO"] if not u.startswith(IN_CORPUS)]
        for r in questions for k in [str(r["ID_QUESTAO"])] if k in partial}


def test_every_question_has_its_exam(task, raw):
    questions, _ = raw
    q = task.queries.set_index("_id")
    exams = {str(r["ID_QUESTAO"]): _norm(r["INFORMACOES_CONCURSO"]) for r in questions}
    assert q["exam"].to_dict() == exams and (q["topic"] == q["exam"]).all()
    assert q["exam"].nunique() == len(set(exams.values())) == task.manifest["counts"]["exams"] == 251
    # two exams are written once with a double space: the same exam
    assert len({r["INFORMACOES_CONCURSO"] for r in questions}) == 253


def test_queries_are_the_question_as_read_never_the_commented_answer(task, raw):
    questions, _ = raw
    text = task.queries.set_index("_id")["text"]
    for r in questions:
        t = text[str(r["ID_QUESTAO"])]
        assert t == r["ENUNCIADO_COM_ALTERNATIVAS"].strip()
        assert r["RESPOSTA_COMENTADA"].strip() not in t and "Comentário:" not in t and "Resposta:" not in t
        formatted = r["QUESTAO_COM_RESPOSTA_COMENTADA_E_FORMATADA"]
        assert formatted[formatted.index("Comentário:"):] not in t


def test_every_resolved_provision_holds_its_units_text(task, raw):
    """The span of each resolved citation, read from the documents split, is the unit table's text of its URN
    (the caput's and a parágrafo's with their own labels off, as the table writes them)."""
    _, units = raw
    docs = task.documents.set_index("doc_id")["text"]
    ok = task.citations[task.citations["status"] == "resolved"]
    amending = 0
    for raw_urn, doc, a, b in zip(ok["raw"], ok["doc_id"], ok["start_char"], ok["end_char"]):
        kind, want = units[raw_urn]
        span = docs[doc][int(a):int(b)]
        got = _norm(span) if kind in ("ART", "INC", "ALI") else _norm(
            " ".join(_LINE_LABEL.sub("", ln) for ln in span.split("\n")))
        if got != want:  # the caput of an amending artigo: the quoted act's labels are inside its one line
            assert kind == "CPT" and "passa a vigorar" in got and raw_urn.endswith("!art60_cpt"), raw_urn
            amending += 1
            continue
        assert got == want, raw_urn
    assert len(ok) == 994 and amending <= 1


def test_the_manifest_records_rules_and_sources(task, data_dir):
    m = task.manifest
    assert m["dataset"] == "lgpd" and m["config"]["name"] == "article"
    assert {"acts", "questions", "cluster", "resolution", "provisions", "chunking"} <= set(m["rules"])
    assert "ENUNCIADO_COM_ALTERNATIVAS" in m["rules"]["questions"] and "INFORMACOES_CONCURSO" in m["rules"]["cluster"]
    import hashlib

    want = {n: hashlib.sha256((data_dir / "lgpd" / n).read_bytes()).hexdigest()
            for n in (*LGPD_FILES["acts"], LGPD_FILES["questions"])}
    assert {s["name"]: s["sha256"] for s in m["sources"]} == want


def test_resolution_summary_counts_every_citation(task):
    s = resolution_summary(task).set_index("status")
    assert s["citations"].to_dict() == {k: v for k, v in task.manifest["counts"]["citations_by_status"].items() if v}
    assert s.loc["act_not_in_corpus", "questions"] == 10 and s.loc["resolved", "questions"] == 350
    assert s.loc["act_not_in_corpus", "examples"].startswith("284: lei-12965-2014: art. 3 > caput > III")


def test_the_same_task_as_a_cited_questions_build(task, raw, data_dir):
    """The lgpd builder adds the acts' construction and the exam to what build_cited_task makes of the same acts
    and the same URN lists: the corpus, qrels and citations are that task's."""
    from ragcov_data.loaders._unit_tables import unit_acervo

    acervo, _ = unit_acervo([data_dir / "lgpd" / a for a in LGPD_FILES["acts"]])
    refs = [{"qid": str(r["ID_QUESTAO"]), "question": r["ENUNCIADO_COM_ALTERNATIVAS"],
             "citations": r["URN_FUNDAMENTACAO"]} for r in raw[0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = build_cited_task(acervo, refs)
    pd.testing.assert_frame_equal(plain.corpus, task.corpus)
    pd.testing.assert_frame_equal(plain.qrels, task.qrels)
    cols = ["query-id", "doc_id", "article", "paragraph", "inciso", "alinea", "status", "start_char", "end_char"]
    pd.testing.assert_frame_equal(plain.citations[cols], task.citations[cols])


def test_deterministic(task, data_dir):
    again = _build(data_dir=data_dir)
    for split in ("corpus", "queries", "qrels", "citations", "documents"):
        pd.testing.assert_frame_equal(again[split], task[split])
    assert json.dumps(again.manifest, sort_keys=True) == json.dumps(task.manifest, sort_keys=True)


# --------------------------------------------------------------------------- load_dataset


@pytest.fixture(scope="module")
def loaded(data_dir, tmp_path_factory):
    cache = tmp_path_factory.mktemp("lgpd_cache")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {c: load_dataset("lgpd", c, data_dir=data_dir, cache_dir=cache) for c in CONFIGS}


def test_load_dataset_every_config(loaded, data_dir):
    for cfg, ds in loaded.items():
        assert set(ds) == {"corpus", "queries", "qrels", "citations", "documents"}
        m = manifest_of(ds)
        assert m["config"]["name"] == cfg and m["dataset"] == "lgpd"
        q = ds["queries"].to_pandas()
        assert "exam" in q.columns and q["exam"].notna().all() and (q["exam"] == q["topic"]).all()
        corpus = ds["corpus"].to_pandas()
        assert set(ds["qrels"].to_pandas()["corpus-id"]) <= set(corpus["_id"])
        assert m["counts"]["chunks"] == len(corpus) and m["counts"]["queries"] == len(q)
        if cfg.startswith("words-"):
            n = int(cfg.split("-")[1])
            assert corpus["text"].str.split().str.len().max() <= n + 19  # a last window under 20 words joins
        full = cfg == "article-full"
        assert len(q) == (342 if full else 352) and (~q["partial"]).all() == full
    base = _build(data_dir=data_dir)
    pd.testing.assert_frame_equal(loaded["article"]["qrels"].to_pandas(), base.qrels)
    default = load_dataset("lgpd", data_dir=data_dir)
    assert manifest_of(default)["config"]["name"] == "article"


def test_dispositivo_chunks_follow_the_units(loaded):
    corpus = loaded["dispositivo"]["corpus"].to_pandas()
    assert corpus["unit"].notna().all() and corpus["unit"].str.startswith(("art. ", "capítulo", "seção")).all()
    assert loaded["article"]["corpus"].to_pandas()["unit"].str.match(r"art\. \d+(-[A-Z])?$").all()
