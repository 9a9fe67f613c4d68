"""Citation grammar: every case of the grammar, in the layouts real citations and acts use."""
from __future__ import annotations

import json

import pytest

from ragcov_data.legal.citations import (Act, Citation, act_key, canonical_id, doc_id, heading_match, is_citation,
                                   normalize_article, parse)


def keys(text: str) -> list[tuple]:
    return [c.key for c in parse(text) if c.article is not None]


# --------------------------------------------------------------------------- acts and aliases


@pytest.mark.parametrize("text, expected", [
    ("Lei nº 9.250, de 26 de dezembro de 1995", ("lei", "9250", 1995, None)),
    ("Lei nº 7.713, de 1988", ("lei", "7713", 1988, None)),
    ("Lei º 7.713, de 22 de dezembro de 1988", ("lei", "7713", 1988, None)),
    ("LEI Nº 9.250, DE 26 DE DEZEMBRO DE 1995.", ("lei", "9250", 1995, None)),
    ("Lei 8.023, de 12.4.90", ("lei", "8023", 1990, None)),
    ("Instrução Normativa RFB nº 1.500, de 29 de outubro de 2014", ("instrucao_normativa", "1500", 2014, "RFB")),
    ("Instrução Normativa SRF nº 208, de 27 de setembro de 2002", ("instrucao_normativa", "208", 2002, "SRF")),
    ("Decreto nº 9.580, de 2018", ("decreto", "9580", 2018, None)),
    ("Decreto-Lei nº 5.844, de 23 de setembro de 1943", ("decreto_lei", "5844", 1943, None)),
    ("Lei Complementar nº 109, de 29 de maio de 2001", ("lei_complementar", "109", 2001, None)),
    ("Medida Provisória nº 2.158-35, de 24 de agosto de 2001", ("medida_provisoria", "2158-35", 2001, None)),
    ("Solução de Consulta Cosit nº 63, de 29 de março de 2021", ("solucao_de_consulta", "63", 2021, "Cosit")),
])
def test_act_forms(text, expected):
    (c,) = parse(text)
    assert c.article is None and c.level == "act"
    assert (c.act.type, c.act.number, c.act.year, c.act.issuer) == expected


@pytest.mark.parametrize("text, doc", [
    ("RIR/2018, art. 1º", "decreto-9580-2018"),
    ("Regulamento do Imposto sobre a Renda - RIR/2018, art. 1º, aprovado pelo Decreto nº 9.580, de 22 de "
     "novembro de 2018", "decreto-9580-2018"),
    ("Regulamento do Imposto sobre a Renda RIR/2018, art. 35, § 4º, aprovado pelo Decreto nº 9.580", "decreto-9580-2018"),
    ("Lei nº 5.172, de 25 de outubro de 1966 – Código Tributário Nacional – CTN, art. 117, inciso I", "lei-5172-1966"),
    ("CTN, art. 43", "lei-5172-1966"),
    ("art. 43 do Código Tributário Nacional", "lei-5172-1966"),
    ("Lei nº 9.250, de 26 de dezembro de 1995, art. 12", "lei-9250-1995"),
    ("Instrução Normativa RFB nº 2.178, de 5 de março de 2024, art. 2º", "in-rfb-2178-2024"),
])
def test_aliases_map_to_doc_ids(text, doc):
    cits = [c for c in parse(text) if c.article]
    assert cits and {c.doc_id for c in cits} == {doc}


def test_approving_decree_is_not_a_citation_of_its_own():
    cits = parse("Regulamento do Imposto sobre a Renda - RIR/2018, art. 1º, aprovado pelo Decreto nº 9.580, de 22 de "
                 "novembro de 2018")
    assert [(c.doc_id, c.article, c.act.alias) for c in cits] == [("decreto-9580-2018", "1", "RIR/2018")]


def test_doc_id_table_and_canonical_id():
    act = Act("instrucao_normativa", "1500", 2014, "RFB")
    assert act_key(act) == ("instrucao_normativa", "RFB", "1500")
    assert doc_id(act) == "in-rfb-1500-2014" and canonical_id(act) == "in-rfb-1500-2014"
    assert doc_id(Act("instrucao_normativa", "1500", 2014, None)) == "in-rfb-1500-2014"  # issuer left out
    assert doc_id(Act("instrucao_normativa", "208", 2002, "SRF")) is None  # not in the table
    assert doc_id(Act("lei", "9250", 1995), {("lei", None, "9250"): "x"}) == "x"
    assert canonical_id(Act("decreto_lei", "5844", 1943)) == "decreto-lei-5844-1943"


# --------------------------------------------------------------------------- dispositivos in list order


@pytest.mark.parametrize("text, expected", [
    ("Lei nº 7.713, de 22 de dezembro de 1988, art. 12-A", [("12-A", None, None, None)]),
    ("art. 3º-A da Lei nº 9.250, de 1995", [("3-A", None, None, None)]),
    ("Lei nº 9.250, de 26 de dezembro de 1995, art.10, inciso IX", [("10", None, "IX", None)]),
    ("RIR/2018, art. 1.003", [("1003", None, None, None)]),
    ("RIR/2018, arts. 47, 134 e 151", [("47", None, None, None), ("134", None, None, None), ("151", None, None, None)]),
    ("Lei nº 7.713, de 1988, art. 34, parágrafo único", [("34", "único", None, None)]),
    ("RIR/2018, art. 54, §§ 1º e 4º", [("54", "1", None, None), ("54", "4", None, None)]),
    ("Instrução Normativa RFB nº 2.178, de 2024, art. 7º, §§ 3º a 5º",
     [("7", "3", None, None), ("7", "4", None, None), ("7", "5", None, None)]),
    ("Lei nº 7.713, de 1988, art. 6º, XV", [("6", None, "XV", None)]),
    ("Lei nº 7.713, de 1988, art. 6º, incisos XIV e XXI", [("6", None, "XIV", None), ("6", None, "XXI", None)]),
    ("Lei nº 7.713, de 1988, art. 6º, inciso XV, alínea “i”", [("6", None, "XV", "i")]),
    ("RIR/2018, art. 35, inciso II, alíneas “b” e “c”, e § 4º",
     [("35", None, "II", "b"), ("35", None, "II", "c"), ("35", "4", None, None)]),
    ("Lei nº 9.250, de 1995, art. 8º, caput, inciso II, \"b\"", [("8", None, "II", "b")]),
    ("RIR/2018, art. 35, inciso VI, alínea “b, e art. 133, inciso II",  # unclosed quote in the source
     [("35", None, "VI", "b"), ("133", None, "II", None)]),
    ("RIR/2018, art. 55, § 1º e § 2º, inciso III", [("55", "1", None, None), ("55", "2", "III", None)]),
    ("RIR/2018, art. 73, § 1º, incisos II e III", [("73", "1", "II", None), ("73", "1", "III", None)]),
    ("Instrução Normativa RFB nº 1.500, de 2014, art. 90, caput, incisos IV e V, § 1º, incisos I e II",
     [("90", None, "IV", None), ("90", None, "V", None), ("90", "1", "I", None), ("90", "1", "II", None)]),
    ("Instrução Normativa RFB nº 1.500, de 2014, arts. 2º, parágrafo único, inciso II, 19, inciso XVI, e 21, "
     "parágrafo único", [("2", "único", "II", None), ("19", None, "XVI", None), ("21", "único", None, None)]),
    ("RIR/2018, arts. 53, inciso II, § 4º, 54, 65, § 2º, e 81",
     [("53", None, "II", None), ("53", "4", None, None), ("54", None, None, None), ("65", "2", None, None),
      ("81", None, None, None)]),
    ("RIR/2018, arts. 128, § 4º, inciso II, 134, § 3º e 136, § 6º",
     [("128", "4", "II", None), ("134", "3", None, None), ("136", "6", None, None)]),
    ("Lei nº 9.250, de 1995, art. 4º, inciso V, art. 8º, inciso II, “e” e art. 33",
     [("4", None, "V", None), ("8", None, "II", "e"), ("33", None, None, None)]),
    ("RIR/2018, art. 732 e 786", [("732", None, None, None), ("786", None, None, None)]),
    ("RIR/2018, arts. 118 a 121 e art. 123",
     [("118", None, None, None), ("119", None, None, None), ("120", None, None, None), ("121", None, None, None),
      ("123", None, None, None)]),
])
def test_list_order(text, expected):
    assert [k[1:5] for k in keys(text)] == expected


def test_item_caput_and_range_flags():
    (c,) = parse("Lei nº 9.250, de 26 de dezembro de 1995, art. 8º, caput, inciso II, alínea “b”, item 10")
    assert (c.article, c.paragraph, c.inciso, c.alinea, c.item, c.caput) == ("8", None, "II", "b", "10", True)
    assert c.level == "dispositivo"
    cits = parse("RIR/2018, arts. 744, caput, e 775")
    assert [(c.article, c.caput, c.level) for c in cits] == [("744", True, "dispositivo"), ("775", False, "article")]
    cits = parse("RIR/2018, arts. 36, inciso XIV, e 690 a 696")
    assert [c.article for c in cits] == ["36"] + [str(k) for k in range(690, 697)]
    assert [c.from_range for c in cits] == [False, False] + [True] * 6


# --------------------------------------------------------------------------- running text


def test_running_order_and_forward_binding():
    assert keys("no inciso IV do § 2º do art. 458 do Decreto-Lei nº 5.452, de 1º de maio de 1943") == [
        (None, "458", "2", "IV", None, None)]
    cits = parse("alínea “a” do inciso II do caput do art. 8º da Lei nº 9.250, de 1995")
    assert [(c.key, c.caput) for c in cits] == [(("lei-9250-1995", "8", None, "II", "a", None), True)]
    assert keys("os rendimentos de que trata o art. 6º, inciso XIV, da Lei nº 7.713, de 1988") == [
        ("lei-7713-1988", "6", None, "XIV", None, None)]


def test_chains_of_one_clause_share_the_act_named_at_its_end():
    text = ("tendo em vista o disposto no art. 1º, no § 2º do art. 63 e no art. 100 do Decreto-Lei nº 5.844, de 23 "
            "de setembro de 1943, no art. 5º da Lei nº 4.154, de 28 de novembro de 1962")
    got = [(c.act.number, c.article, c.paragraph) for c in parse(text) if c.article]
    assert got == [("5844", "1", None), ("5844", "63", "2"), ("5844", "100", None), ("4154", "5", None)]


def test_preamble_of_an_instrucao_normativa():
    text = ("no uso das atribuições que lhe conferem os incisos III e XXVI do art. 280 do Regimento Interno da "
            "Secretaria da Receita Federal do Brasil, aprovado pela Portaria MF nº 203, de 14 de maio de 2012, e tendo "
            "em vista o disposto no inciso VIII do art. 7º, no inciso II do art. 150 e no caput do art. 202 da "
            "Constituição Federal de 1988; nos arts. 43, 45 e 98 da Lei nº 5.172, de 25 de outubro de 1966 - Código "
            "Tributário Nacional, no caput do art. 68 e no art. 69 da Lei Complementar nº 109, de 29 de maio de 2001")
    got = [(c.act.type if c.act else None, c.article, c.inciso, c.caput) for c in parse(text) if c.article]
    # the Regimento Interno is an act of its own (unnumbered); the Portaria that approves it is not cited
    assert got == [("regimento_interno", "280", "III", False), ("regimento_interno", "280", "XXVI", False),
                   ("constituicao", "7", "VIII", False), ("constituicao", "150", "II", False),
                   ("constituicao", "202", None, True),
                   ("lei", "43", None, False), ("lei", "45", None, False), ("lei", "98", None, False),
                   ("lei_complementar", "68", None, True), ("lei_complementar", "69", None, False)]


def test_legal_basis_in_parentheses_rir_layout():
    text = ("Art. 1º As pessoas físicas que perceberem renda ou proventos de qualquer natureza são contribuintes do "
            "imposto sobre a renda (Lei nº 4.506, de 30 de novembro de 1964, art. 1º ; Lei nº 5.172, de 25 de outubro "
            "de 1966 - Código Tributário Nacional, art. 43 e art. 45 ; Lei nº 7.713, de 22 de dezembro de 1988, "
            "art. 2º ; e Lei nº 9.250, de 26 de dezembro de 1995, art. 3º, parágrafo único).\n\n"
            "§ 1º São também contribuintes as pessoas físicas (Lei nº 5.172, de 1966 - Código Tributário Nacional, "
            "art. 43 e art. 45).\n\n"
            "Art. 2º O imposto será devido à medida que os rendimentos forem percebidos, observado o disposto no "
            "art. 78 (Lei nº 8.134, de 27 de dezembro de 1990, art. 2º) .")
    got = [(c.act.number if c.act else None, c.article, c.paragraph) for c in parse(text) if c.article]
    # the headings "Art. 1º", "§ 1º", "Art. 2º" are not citations; "no art. 78" is one of the act itself
    assert got == [("4506", "1", None), ("5172", "43", None), ("5172", "45", None), ("7713", "2", None),
                   ("9250", "3", "único"), ("5172", "43", None), ("5172", "45", None), (None, "78", None),
                   ("8134", "2", None)]


def test_two_acts_in_one_string_and_acts_cited_alone():
    cits = parse("Lei nº 5.172, de 25 de outubro de 1966, art. 29; Lei nº 9.393, de 19 de dezembro de 1996, art. 8")
    assert [(c.act.number, c.article, c.doc_id) for c in cits] == [("5172", "29", "lei-5172-1966"),
                                                                    ("9393", "8", None)]
    cits = parse("Instrução Normativa RFB nº 1.500, de 29 de outubro de 2014, arts. 2º, parágrafo único, inciso II; "
                 "Instrução Normativa RFB nº 1.585, de 31 de agosto de 2015")
    assert [(c.act.number, c.level) for c in cits] == [("1500", "dispositivo"), ("1585", "act")]
    assert parse("Instrução Normativa RFB nº 1.585, de 2015", acts=False) == []


def test_self_reference():
    (c,) = parse("ressalvado o disposto nos arts. 9º a 14 desta Lei")[:1]
    assert c.act.type == "self" and c.doc_id is None and c.article == "9"
    assert [c.article for c in parse("ressalvado o disposto nos arts. 9º a 14 desta Lei")] == [str(k) for k in range(9, 15)]


# --------------------------------------------------------------------------- headings against citations


@pytest.mark.parametrize("line, kind, number", [
    ("Art. 7º O imposto será calculado", "art", "7"),
    ("Art. 3º-A. A partir do mês de janeiro", "art", "3-A"),
    ("Art 31. Ficam sujeitos à incidência do imposto", "art", "31"),          # Lei 7.713: no period
    ("rt. 758. A incorporação ao capital de lucros", "art", "758"),           # RIR/2018: lost letter
    ("Art. 19. (VETADO).", "art", "19"),
    ("Art. 1.042. Este Regulamento", "art", "1042"),
    ("§ 4o O disposto neste artigo", "par", "4"),                            # "o" for "º"
    ("§ 1º Constituem rendimento bruto", "par", "1"),
    ("Parágrafo único. O imposto de que trata este artigo", "par", "único"),
    ("IV - os rendimentos do trabalho", "inc", "IV"),
    ("XXI – os valores recebidos", "inc", "XXI"),
    ("b) despesas com instrução", "ali", "b"),
    ("“Art. 3º-A. A partir do mês", "art", "3-A"),
])
def test_heading_match(line, kind, number):
    h = heading_match(line)
    assert h is not None and (h.kind, h.number) == (kind, number)
    assert not is_citation(line)


def test_heading_match_plural_revoked():
    h = heading_match("Arts. 28 e 29 (Revogados pela Lei nº 8.134, de 1990)")
    assert h.numbers == ("28", "29")
    h = heading_match("Arts. 52 a 58 . (Revogados pelo Decreto-lei nº 406, de 1968)")
    assert h.numbers == tuple(str(k) for k in range(52, 59))


@pytest.mark.parametrize("line", [
    "§ 1º do art. 7º desta Lei",
    "Art. 5º da Lei nº 9.250, de 1995, passa a vigorar",
    "art. 3º, com a redação dada",
    "inciso II do caput do art. 8º",
    "arts. 3º e 4º",
    "alínea “a” do inciso II",
])
def test_citations_at_line_start(line):
    assert heading_match(line) is None
    assert is_citation(line)


def test_not_a_citation():
    assert not is_citation("O imposto de renda das pessoas físicas")
    assert not is_citation("")


def test_normalize_article_and_bad_input():
    assert normalize_article("3º-A") == "3-A" and normalize_article("1.042") == "1042"
    with pytest.raises(ValueError, match="not an article number"):
        normalize_article("caput")
    with pytest.raises(TypeError, match="`text` must be a string"):
        parse(None)  # type: ignore[arg-type]


def test_citation_record():
    (c,) = parse("Lei nº 9.250, de 26 de dezembro de 1995, art. 25, § 4º")
    assert isinstance(c, Citation) and c.level == "dispositivo"
    d = c.to_dict()
    assert (d["doc_id"], d["article"], d["paragraph"], d["inciso"], d["alinea"]) == ("lei-9250-1995", "25", "4", None, None)
    assert d["act"]["number"] == "9250"


# --------------------------------------------------------------------------- the shared questions


def test_agreement_with_structured_references(data_dir):
    """Article level: the parsed raw strings agree with the structured references on >= 95%."""
    from ragcov_data.legal.citations import agreement

    qs = [json.loads(line) for line in open(data_dir / "irpf" / "questions.jsonl", encoding="utf-8")]
    res = agreement(qs)
    art = res["article"]
    assert art["agreement"] >= 0.95 and art["both"] >= 360
    # the article-level disagreements: raw strings whose year contradicts the act (Lei 9.250 "de 2005", Lei 7.713
    # "de 1998": left unresolved, reason year_mismatch), and the source giving Lei 9.250 art. 22 where its raw
    # cites art. 23
    assert [(d["qid"], d["structured_only"], d["parsed_only"]) for d in art["disagreements"]] == [
        ("irpf2024-q068", [["lei-9250-1995", "39"]], []),
        ("irpf2024-q560", [["lei-7713-1988", "18"], ["lei-7713-1988", "22"], ["lei-9250-1995", "22"]], [])]


@pytest.mark.parametrize("text, expected", [
    ("Parecer Normativo CST nº 2, de 15 de janeiro de 1980", ("parecer_normativo", "CST", "2", 1980)),
    ("Parecer PGFN/CRJ Nº 2271/2013, de 10 de dezembro de 2013", ("parecer", "PGFN/CRJ", "2271", 2013)),
    ("Parecer PGFN/PGA/Nº 2683/2008, de 28 de novembro de 2008", ("parecer", "PGFN/PGA", "2683", 2008)),
    ("Solução de Consulta SRRF03/Disit nº 15, de 9 de março de 2009", ("solucao_de_consulta", "SRRF03/Disit", "15", 2009)),
    ("Solução de Consulta Interna Cosit nº 11, de 28 de junho de 2012", ("solucao_de_consulta", "Cosit", "11", 2012)),
    ("Solução de Divergência Cosit nº 10, de 14 de agosto de 2014", ("solucao_de_divergencia", "Cosit", "10", 2014)),
    ("Ato Declaratório Executivo Codac nº 23, de 4 de dezembro de 2019", ("ato_declaratorio", "Codac", "23", 2019)),
    ("Portaria Conjunta PGFN-RFB nº 1, de 12 de fevereiro de 2009", ("portaria", "Conjunta/PGFN-RFB", "1", 2009)),
])
def test_other_issuers_and_types(text, expected):
    (c,) = parse(text)
    assert (c.act.type, c.act.issuer, c.act.number, c.act.year) == expected


def test_uncovered_reference_layouts():
    # "2.158- 35": a space inside the number of a medida provisória; the artigo after it is still bound
    cits = parse("Lei nº 9.532, de 10 de dezembro de 1997, art. 11, caput, e §§ 5º a 7º; Medida Provisória nº 2.158- 35, "
                 "de 24 de agosto de 2001, art. 61")
    assert [(c.act.number, c.article, c.paragraph, c.caput) for c in cits] == [
        ("9532", "11", None, True), ("9532", "11", "5", False), ("9532", "11", "6", False), ("9532", "11", "7", False),
        ("2158-35", "61", None, False)]
    (c,) = parse("Lei nº 13.105, de 16 de março de 2015 - Código de Processo Civil - CPC, art. 369")
    assert (c.act.number, c.article) == ("13105", "369")
    # an artigo and its paragraph joined by "e": the artigo's caput and the paragraph
    assert [(c.article, c.paragraph, c.caput) for c in parse("Instrução Normativa SRF nº 81, de 2001, art. 8º e § 1º")] \
        == [("8", None, True), ("8", "1", False)]
    # a chain with no artigo ("item 4" of an act) leaves the act cited as a whole
    (c,) = parse("Instrução Normativa SRF nº 107, de 14 de julho de 1988, item 4")
    assert c.level == "act" and c.act.number == "107"
    # no act where none is named
    assert parse("a Lei de 1995 e o Decreto que 10") == []
