"""Cited-questions task: provision location, qrels resolution and grades, unresolved listing, partial flag."""
from __future__ import annotations

import json
import warnings

import pytest

from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.loaders.articles import locate
from ragcov_data.loaders.cited_questions import build_cited_task, read_questions

# An act in Planalto's compiled layout: one dispositivo a line, annotations inline, a quoted amendment,
# the source quirks "Art 3." (no period) and "rt. 4." (lost letter), a revoked pair, a chapter heading.
ACT = """Presidência da República
LEI Nº 1.234, DE 10 DE JANEIRO DE 2000.
Dispõe sobre o imposto das pessoas físicas e dá outras providências.
O PRESIDENTE DA REPÚBLICA Faço saber que o Congresso Nacional decreta e eu sanciono a seguinte Lei:
CAPÍTULO I
DISPOSIÇÕES GERAIS
Art. 1º O imposto incide sobre os rendimentos auferidos pelas pessoas físicas residentes no País, observado o disposto no § 1º do art. 2º desta Lei.
§ 1º Consideram-se rendimentos os valores recebidos em dinheiro ou em bens no ano-calendário.
§ 2º Estão isentos do imposto os seguintes rendimentos:
I - as diárias de viagem pagas pelo empregador ao empregado em serviço fora da sede;
II - a indenização por despedida ou dispensa paga nos limites da legislação trabalhista; (Redação dada pela Lei nº 9.999, de 2010)
III - os proventos de aposentadoria por moléstia grave comprovada por laudo pericial oficial.
Art. 2º A pessoa física deve apresentar a declaração anual até o último dia útil de abril.
§ 1º O prazo pode ser prorrogado por ato do Secretário da Receita Federal.
Art 3. Ficam sujeitos ao imposto os ganhos de capital na alienação de bens e direitos de qualquer natureza.
Parágrafo único. O ganho de capital é a diferença positiva entre o valor de alienação e o custo de aquisição.
rt. 4. A Lei nº 8.888, de 1994, passa a vigorar com a seguinte alteração:
“Art. 10. O contribuinte poderá deduzir as despesas médicas comprovadas.” (NR)
Arts. 5º e 6º (Revogados pela Lei nº 9.999, de 2010)
CAPÍTULO II
DAS DISPOSIÇÕES FINAIS
Art. 7º Esta Lei entra em vigor na data de sua publicação.
"""


@pytest.fixture()
def files(tmp_path):
    acts = tmp_path / "acts.jsonl"
    other = "Art. 1º Outra lei com um artigo só, sobre taxas.\nArt. 2º Esta Lei entra em vigor na data de sua publicação."
    acts.write_text(json.dumps({"doc_id": "lei-1234-2000", "title": "Lei nº 1.234, de 10 de janeiro de 2000",
                                "text": ACT}, ensure_ascii=False) + "\n"
                    + json.dumps({"doc_id": "lei-777-2001", "title": "Lei nº 777, de 2001", "text": other},
                                 ensure_ascii=False) + "\n", encoding="utf-8")
    qs = [
        {"qid": "q1", "question": "A indenização por despedida é isenta?", "coverage": "full",
         "question_summary": "ISENÇÕES", "references": [{"raw": "Lei nº 1.234, de 10 de janeiro de 2000, art. 1º, "
                                                                "§ 2º, inciso II"}]},
        {"qid": "q2", "question": "Qual o prazo da declaração?", "coverage": "full", "question_summary": "PRAZO",
         "references": [{"raw": "Lei nº 1.234, de 2000, art. 2º"}]},
        {"qid": "q3", "question": "O que é ganho de capital?", "coverage": "partial", "question_summary": "GANHO",
         "references": [{"raw": "Lei nº 1.234, de 2000, art. 3º, parágrafo único; Lei nº 5.555, de 1999, art. 9"}]},
        {"qid": "q4", "question": "Artigo que não existe", "coverage": "full", "question_summary": "PRAZO",
         "references": [{"doc_id": "lei-1234-2000", "article": "99", "raw": None},
                        {"doc_id": "lei-1234-2000", "article": "2", "paragraph": "5", "raw": None}]},
        {"qid": "q5", "question": "Quando entra em vigor a outra lei?", "citations": "art. 2º da Lei nº 777, de 2001"},
    ]
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs), encoding="utf-8")
    return acts, questions


def _span(needle: str, until: str | None = None) -> tuple[int, int]:
    a = ACT.index(needle)
    b = ACT.index(until, a) if until else ACT.index("\n", a)
    return a, b


def test_locate_real_layout():
    idx = locate(ACT)
    assert idx.articles() == ["1", "2", "3", "4", "5", "6", "7"]  # "Art. 10" inside the quote is not the act's
    art1 = idx.article("1")
    assert (art1.start, art1.end) == (ACT.index("Art. 1º"), ACT.index("Art. 2º"))
    inc2, depth = idx.find("1", "2", "II")
    assert depth == 2 and (inc2.start, inc2.end) == _span("II - a indenização", "III - os")
    cap, depth = idx.find("1", caput=True)
    assert depth == 1 and (cap.start, cap.end) == (ACT.index("Art. 1º"), ACT.index("§ 1º Consideram"))
    assert idx.find("3", "único")[0].start == ACT.index("Parágrafo único. O ganho")
    assert idx.article("4").end == ACT.index("Arts. 5º e 6º")  # the quoted art. 10 stays inside art. 4
    assert idx.article("5") == idx.article("6")._replace(key=idx.article("5").key)
    assert idx.article("6").end == ACT.index("CAPÍTULO II")  # a chapter heading ends the artigo
    assert idx.find("2", "5") == (idx.article("2"), 0)  # § 5 is not there: the artigo, depth 0


def test_grades_on_word_windows_overlap_by_characters(files):
    acts, questions = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(acts, questions, chunking="words", chunk_words=10, query_words=5)
    corpus = task.corpus.set_index("_id")
    q1 = task.qrels[task.qrels["query-id"] == "q1"].set_index("corpus-id")["score"]
    a1, b1 = ACT.index("Art. 1º"), ACT.index("Art. 2º")
    ia, ib = _span("II - a indenização", "III - os")
    lei = corpus[corpus["doc_id"] == "lei-1234-2000"]
    expect = {}
    for cid, r in lei.iterrows():
        if r["start_char"] < b1 and r["end_char"] > a1:
            expect[cid] = 2 if (r["start_char"] < ib and r["end_char"] > ia) else 1
    assert q1.to_dict() == expect
    assert sorted(set(expect.values())) == [1, 2] and len(expect) > 5
    # chunk character spans are the chunk texts' places in the act
    for cid, r in lei.iterrows():
        assert " ".join(ACT[r["start_char"]:r["end_char"]].split()) == r["text"]


def test_article_citation_is_grade_2_throughout_and_other_act_resolves(files):
    acts, questions = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(acts, questions, chunking="article")
    units = task.corpus.set_index("_id")["unit"]
    q2 = task.qrels[task.qrels["query-id"] == "q2"]
    assert [(units[c], s) for c, s in zip(q2["corpus-id"], q2["score"])] == [("art. 2", 2)]
    q1 = task.qrels[task.qrels["query-id"] == "q1"]
    assert [(units[c], s) for c, s in zip(q1["corpus-id"], q1["score"])] == [("art. 1", 2)]
    q5 = task.qrels[task.qrels["query-id"] == "q5"]
    texts = task.corpus.set_index("_id")["text"]
    assert len(q5) == 1 and list(q5["score"]) == [2]  # the doc id comes from the act's title
    assert q5["corpus-id"].iloc[0].startswith("lei-777-2001#") and "Art. 2º Esta Lei" in texts[q5["corpus-id"].iloc[0]]


def test_unresolved_are_listed_and_warned(files):
    acts, questions = files
    with pytest.warns(UserWarning, match=r"1 cited artigo\(s\) not found in their act \(q4: lei-1234-2000: art. 99\)"):
        task = build_cited_task(acts, questions, chunking="dispositivo")
    m = task.manifest
    assert [(u["query-id"], u["citation"], u["status"]) for u in m["unresolved"]] == [
        ("q3", "lei-5555-1999: art. 9", "act_not_in_corpus"), ("q4", "lei-1234-2000: art. 99", "article_not_found")]
    assert [(u["query-id"], u["citation"]) for u in m["dispositivo_not_found"]] == [("q4", "lei-1234-2000: art. 2 > § 5")]
    assert m["counts"]["citations_by_status"] == {"resolved": 4, "dispositivo_not_found": 1, "article_not_found": 1,
                                                  "act_only": 0, "act_not_in_corpus": 1, "unparsed": 0,
                                                  "year_mismatch": 0, "year_out_of_range": 0, "number_out_of_range": 0,
                                                  "relative_without_context": 0, "act_unknown": 0, "not_located": 0,
                                                  "invalid_numeral": 0}
    # q4's § 5 is not in the text: its artigo is grade 1, no grade-2 chunk
    q4 = task.qrels[task.qrels["query-id"] == "q4"]
    assert set(q4["score"]) == {1} and len(q4)
    cits = task.citations.set_index("citation")
    assert cits.loc["lei-1234-2000: art. 2 > § 5", "chunks"] == []
    assert cits.loc["lei-1234-2000: art. 2 > § 5", "article_chunks"] == list(q4["corpus-id"])


def test_partial_flag_and_full_restriction(files):
    acts, questions = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(acts, questions, chunking="article")
        full = build_cited_task(acts, questions, chunking="article", coverage="full")
    flags = dict(zip(task.queries["_id"], task.queries["partial"]))
    assert flags == {"q1": False, "q2": False, "q3": True, "q4": False, "q5": False}  # q5: no coverage -> full
    topics = dict(zip(task.queries["_id"], task.queries["topic"]))
    assert topics == {"q1": "ISENÇÕES", "q2": "PRAZO", "q3": "GANHO", "q4": "PRAZO", "q5": "q5"}  # q5: no summary
    assert list(full.queries["_id"]) == ["q1", "q2", "q4", "q5"]
    assert list(task.full().queries["_id"]) == ["q1", "q2", "q4", "q5"]
    assert set(task.full().qrels["query-id"]) == set(full.qrels["query-id"])
    assert full.manifest["config"]["coverage"] == "full"


def test_article_granularity_is_binary(files):
    acts, questions = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(acts, questions, chunking="words", chunk_words=10, query_words=5, granularity="article")
        disp = build_cited_task(acts, questions, chunking="words", chunk_words=10, query_words=5)
    assert set(task.qrels["score"]) == {1}
    assert set(zip(task.qrels["query-id"], task.qrels["corpus-id"])) == set(zip(disp.qrels["query-id"],
                                                                                 disp.qrels["corpus-id"]))


def test_structured_gold(files):
    acts, questions = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(acts, questions, chunking="article", gold="references")
    # raw-only questions have no structured reference: no citation, listed as without relevant chunk
    assert set(task.citations["query-id"]) == {"q4"}
    assert "q1" in task.manifest["queries_without_relevant_chunk"]


def test_bad_input(tmp_path, files):
    acts, _ = files
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "a", "question": "x", "references": [{"raw": "art. 1"}]}\n{"qid": "b", "question": "y"}\n')
    with pytest.raises(InputFileError, match=r"bad.jsonl: line 2 \(qid 'b'\) has no citations"):
        read_questions(bad)
    bad.write_text('{"qid": "a", "question": "x", "citations": ["art. 1"]}\n{"qid": "a", "question": "y", "citations": "z"}\n')
    with pytest.raises(InputFileError, match="line 2: qid 'a' is used twice"):
        read_questions(bad)
    with pytest.raises(RagcovError, match="`chunking` must be one of"):
        build_cited_task(acts, bad, chunking="sentences")
    with pytest.raises(InputFileError, match="does not exist"):
        read_questions(tmp_path / "none.jsonl")


def test_load_dataset_cited_questions(files, tmp_path):
    import ragcov_data

    acts, questions = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = ragcov_data.load_dataset("cited_questions", data_files={"acts": str(acts), "questions": str(questions)},
                                      chunking="words", chunk_words=20, cache_dir=tmp_path / "cache",
                                      show_progress=False)
    assert set(ds) == {"corpus", "queries", "qrels", "citations", "documents"}
    assert ds["documents"]["doc_id"] == sorted(set(ds["corpus"]["doc_id"]), key=ds["corpus"]["doc_id"].index)
    assert ds["queries"].num_rows == 5 and ds["queries"].features["partial"].dtype == "bool"
    with pytest.raises(RagcovError, match="'acts'"):
        ragcov_data.load_dataset("cited_questions", data_files=str(acts), cache_dir=tmp_path / "cache")


def test_irpf_every_chunking_resolves(data_dir):
    """Done-when: >= 98% of article-level citations resolve to chunks under every chunking, rest listed."""
    from ragcov_data.loaders.cited_questions import irpf_dir

    folder = irpf_dir(data_dir)
    for chunking, kw in (("words", {"chunk_words": 50}), ("words", {"chunk_words": 100}),
                         ("words", {"chunk_words": 200}), ("dispositivo", {}), ("article", {})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = build_cited_task(folder / "laws.jsonl", folder / "questions.jsonl", chunking=chunking, **kw)
        c = t.manifest["counts"]
        assert c["queries"] == 175 and c["queries_partial"] == 115
        assert c["article_citations_resolved"] / c["article_citations_in_corpus"] >= 0.98
        unresolved = c["citations"] - c["citations_by_status"]["resolved"] - c["citations_by_status"]["dispositivo_not_found"]
        assert len(t.manifest["unresolved"]) == unresolved  # every one listed
        assert set(t.qrels["score"]) == {1, 2}


def test_load_dataset_irpf_named_config(data_dir, tmp_path):
    import ragcov_data
    from ragcov_data.tasks.record import manifest_of

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = ragcov_data.load_dataset("irpf", "article-full", data_dir=str(data_dir), cache_dir=tmp_path / "cache",
                                      show_progress=False)
    assert ds["queries"].num_rows == 60 and not any(ds["queries"]["partial"])
    m = manifest_of(ds)
    assert m["dataset"] == "irpf" and m["config"]["coverage"] == "full" and m["config"]["chunking"] == "article"
    assert len(m["sources"]) == 2  # the acts and the questions, with their sha256
    with pytest.raises(InputFileError, match="irpf/ folder"):
        ragcov_data.load_dataset("irpf", data_dir=str(tmp_path), cache_dir=tmp_path / "cache")


def test_article_chunks_and_resolution_by_overlap(tmp_path):
    from ragcov_data.loaders.articles import article_spans
    from ragcov_data.loaders.dispositivos import words_and_line_starts

    words, starts = words_and_line_starts(ACT)
    spans, structured = article_spans(words, starts, chunk_words=100, query_words=20)
    assert structured and [s.unit for s in spans][:3] == ["preâmbulo", "art. 1", "art. 2"]
    assert all(not s.continued for s in spans)
    assert spans[0].start == 0 and spans[-1].stop == len(words)
    assert all(a.stop == b.start for a, b in zip(spans, spans[1:]))  # every word kept, in order
    # whatever artigos the chunker joins, a cited artigo resolves to the chunk holding its text
    acts = tmp_path / "acts.jsonl"
    acts.write_text(json.dumps({"doc_id": "lei-1234-2000", "text": ACT}, ensure_ascii=False) + "\n", encoding="utf-8")
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"qid": "a", "question": "alteração", "references": [
        {"doc_id": "lei-1234-2000", "article": "4"}]}) + "\n", encoding="utf-8")
    task = build_cited_task(acts, q, chunking="article")
    (cid,) = task.qrels["corpus-id"]
    assert "rt. 4. A Lei nº 8.888" in task.corpus.set_index("_id").loc[cid, "text"]


def test_question_records_are_validated(files):
    acts, _ = files
    with pytest.raises(InputFileError, match=r"`questions\[1\]` \(qid 'b'\) has no citations"):
        build_cited_task(acts, [{"qid": "a", "question": "x", "citations": "Lei nº 1.234, de 2000, art. 1º"},
                                {"qid": "b", "question": "y", "references": []}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = build_cited_task(acts, [{"qid": "a", "question": "x", "citations": "Lei nº 1.234, de 2000, art. 2º"}])
    assert list(t.qrels["query-id"]) == ["a"] * len(t.qrels) and len(t.qrels)


def test_acts_identified_by_their_heading(tmp_path):
    """An acts file with only ids and texts: each act is read from the heading atop its text."""
    acts = tmp_path / "acts.jsonl"
    acts.write_text(json.dumps({"doc_id": "a1", "text": ACT}, ensure_ascii=False) + "\n"
                    + json.dumps({"doc_id": "lei-9250-1995", "text": "Art. 1º Outro texto qualquer.\nArt. 2º Fim."},
                                 ensure_ascii=False) + "\n", encoding="utf-8")
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"qid": "x", "question": "prazo", "citations": "Lei nº 1.234, de 2000, art. 2º"},
                            ensure_ascii=False) + "\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(acts, q, chunking="article")
    (cid,) = task.qrels["corpus-id"]
    assert cid.startswith("a1#") and "Art. 2º A pessoa física" in task.corpus.set_index("_id").loc[cid, "text"]
