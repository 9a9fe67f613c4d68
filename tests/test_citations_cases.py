"""Citation strings real acts and questions use that the grammar once misread: the Constitution, relative
references, list grammar, case and Unicode variants, years, impossible numbers and annexes."""
from __future__ import annotations

import unicodedata

import pytest

from ragcov_data.legal.citations import Act, Citation, parse, resolve_act


def levels(text: str, **kw) -> list[tuple]:
    return [(c.article, c.paragraph, c.inciso, c.alinea, c.item) for c in parse(text, **kw) if c.article]


# --------------------------------------------------------------------------- the Constitution


@pytest.mark.parametrize("name", ["Constituição", "Constituição Federal", "CF", "CF/88", "Carta Magna",
                                  "Constituição da República Federativa do Brasil de 1988", "CONSTITUIÇÃO FEDERAL",
                                  "Constituição Federal de 1988", "CRFB/88"])
def test_constitution_by_every_common_name(name):
    cits = [c for c in parse(f"art. 84, caput, inciso IV, da {name}") if c.article]
    assert [(c.act.type, c.article, c.inciso, c.caput) for c in cits] == [("constituicao", "84", "IV", True)]
    assert cits[0].act.year == 1988 and cits[0].ok


def test_decree_preamble_constitution_and_law_apart():
    text = ("O PRESIDENTE DA REPÚBLICA, no uso da atribuição que lhe confere o art. 84, caput, inciso IV, da "
            "Constituição, e tendo em vista o disposto no art. 4º da Lei nº 13.334, de 13 de setembro de 2016,")
    got = [(c.act.type, c.act.number, c.article, c.inciso) for c in parse(text) if c.article]
    assert got == [("constituicao", None, "84", "IV"), ("lei", "13334", "4", None)]


def test_state_constitution_is_not_the_federal_one():
    assert all(c.act is None or c.act.type != "constituicao" for c in parse("art. 5º da Constituição Estadual"))


# --------------------------------------------------------------------------- relative references


def test_relative_reference_needs_a_context():
    (c,) = parse("inciso III do § 3º deste artigo")
    assert c.reason == "relative_without_context" and c.article is None and c.doc_id is None
    assert (c.paragraph, c.inciso) == ("3", "III")


@pytest.mark.parametrize("text, context, expected", [
    ("inciso III do § 3º deste artigo", {"doc_id": "lei-9250-1995", "article": "8"},
     [("lei-9250-1995", "8", "3", "III", None, False)]),
    ("alínea “a” do inciso II do caput", {"doc_id": "lei-9250-1995", "artigo": "8º", "parágrafo": "2"},
     [("lei-9250-1995", "8", None, "II", "a", True)]),
    ("nos termos do inciso I deste parágrafo", {"doc_id": "lei-7713-1988", "article": "6", "paragraph": "único"},
     [("lei-7713-1988", "6", "único", "I", None, False)]),
    ("observado o disposto no art. 12 desta Lei", {"doc_id": "lei-7713-1988", "article": "6"},
     [("lei-7713-1988", "12", None, None, None, False)]),
    ("o § 2º", {"doc_id": "decreto-9580-2018", "article": "35"}, [("decreto-9580-2018", "35", "2", None, None, False)]),
])
def test_relative_reference_resolved_against_context(text, context, expected):
    got = [(c.doc_id, c.article, c.paragraph, c.inciso, c.alinea, c.caput) for c in parse(text, context=context)]
    assert got == expected and all(c.ok for c in parse(text, context=context))


def test_context_as_a_citation_and_a_named_act_wins():
    (ctx,) = parse("Lei nº 9.250, de 1995, art. 8º")
    (c,) = parse("inciso II do caput deste artigo", context=ctx)
    assert (c.act.number, c.doc_id, c.article, c.inciso, c.caput) == ("9250", "lei-9250-1995", "8", "II", True)
    (c,) = parse("art. 6º da Lei nº 7.713, de 1988", context=ctx)  # a named act is not the context's
    assert c.doc_id == "lei-7713-1988"


def test_context_bad_input():
    with pytest.raises(ValueError, match="unknown key"):
        parse("§ 2º deste artigo", context={"artcle": "5"})
    with pytest.raises(TypeError, match="`context` must be"):
        parse("§ 2º deste artigo", context=5)


# --------------------------------------------------------------------------- list grammar


@pytest.mark.parametrize("text, expected", [
    ("Lei nº 9.250, de 1995, art. 8º, §§ 1º, inciso III, e 2º", [("8", "1", "III", None, None), ("8", "2", None, None, None)]),
    ("Lei nº 9.250, de 1995, art. 8º, incisos I e II de seu § único",
     [("8", "único", "I", None, None), ("8", "único", "II", None, None)]),
    ("Lei nº 9.250, de 1995, art. 8º, inciso II, alíneas “b”, item 10, e “c”, item 9",
     [("8", None, "II", "b", "10"), ("8", None, "II", "c", "9")]),
    ("Lei nº 9.250, de 1995, arts. 4º, inciso V, e 8º", [("4", None, "V", None, None), ("8", None, None, None, None)]),
])
def test_list_grammar(text, expected):
    assert levels(text) == expected


# --------------------------------------------------------------------------- case and Unicode


def test_upper_case():
    (c,) = parse("ART. 5º, § 2º, INCISO III, ALÍNEA B DA LEI Nº 9.250/1995")
    assert (c.doc_id, c.article, c.paragraph, c.inciso, c.alinea) == ("lei-9250-1995", "5", "2", "III", "b")


@pytest.mark.parametrize("odd", ["\u200b", "\ufeff", "\u00ad", "\u2060"])
def test_invisible_characters_inside_a_marker(odd):
    text = f"Lei nº 9.250, de 1995, ar{odd}t. 8º, inciso{odd} II"
    (c,) = parse(text)
    assert (c.doc_id, c.article, c.inciso) == ("lei-9250-1995", "8", "II")
    assert text[c.start:c.end].startswith("ar") and text[c.start:c.end].endswith("II")  # spans on the text given


def test_nfd_and_non_breaking_spaces_read_as_nfc():
    nfc = "Lei nº 9.250, de 26 de dezembro de 1995, art. 8º, inciso II, alínea “b”; parágrafo único do art. 3º"
    want = [c[:11] for c in parse(nfc)]
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfd != nfc and [c[:11] for c in parse(nfd)][0][1:8] == want[0][1:8]
    assert [c.key for c in parse(nfd)] == [c.key for c in parse(nfc)]
    nbsp = nfc.replace(" ", "\u00a0")
    assert [c.key for c in parse(nbsp)] == [c.key for c in parse(nfc)]
    c = parse(nfd)[0]
    assert unicodedata.normalize("NFC", nfd[c.start:c.end]) == nfc[parse(nfc)[0].start:parse(nfc)[0].end]


# --------------------------------------------------------------------------- years and impossible numbers


@pytest.mark.parametrize("text", ["Decreto nº 9.580, de 1942, art. 1º", "Lei nº 9.250/1990, art. 8º",
                                  "Lei nº 9.250, de 26 de dezembro de 2005, art. 39, § 4º"])
def test_year_contradicting_the_known_act_is_left_unresolved(text):
    (c,) = parse(text)
    assert c.reason == "year_mismatch" and c.doc_id is None and not c.ok
    assert c.article is not None  # the citation is kept, not dropped


def test_year_agreeing_or_absent_resolves():
    assert [c.doc_id for c in parse("Decreto nº 9.580, de 2018, art. 1º; Lei nº 9.250, art. 8º")] == [
        "decreto-9580-2018", "lei-9250-1995"]
    assert resolve_act(Act("lei", "9250", 1990)) == (None, "year_mismatch")
    assert resolve_act(Act("lei", "9250", 1995)) == ("lei-9250-1995", None)


@pytest.mark.parametrize("text, field", [
    ("Lei nº 9.250, de 1995, art. 99999999999999999999", "article"),
    ("Lei nº 9.250, de 1995, art. 3000", "article"),
    ("Lei nº 9.250, de 1995, art. 8º, § 400", "paragraph"),
])
def test_numbers_outside_any_real_act(text, field):
    (c,) = parse(text)
    assert c.reason == "number_out_of_range" and c.doc_id is None
    assert getattr(c, field) in text.replace(".", "")  # read whole, never cut to its first digits


def test_act_number_outside_its_series():
    (c,) = parse("Lei nº 99.999, de 2020, art. 1º")
    assert c.reason == "number_out_of_range"
    assert parse("Lei Complementar nº 109, de 2001, art. 2º")[0].ok
    (c,) = parse("art. 2.046 do Código Civil")
    assert c.ok and c.article == "2046"


# --------------------------------------------------------------------------- annexes


def test_annex_is_a_level_of_its_own():
    (c,) = parse("Anexo VII, inciso VII, da Resolução Normativa nº 414, de 2010")
    assert (c.act.number, c.annex, c.article, c.inciso, c.level) == ("414", "VII", None, "VII", "annex")
    (c,) = parse("art. 5º do Anexo I do Decreto nº 8.000, de 2013")
    assert (c.act.number, c.annex, c.article, c.level) == ("8000", "I", "5", "article")
    (c,) = parse("Anexo Único da Portaria nº 12, de 2020")
    assert (c.annex, c.level) == ("único", "annex")
    assert c.to_dict()["annex"] == "único"


def test_annex_heading_is_not_a_citation():
    text = "Art. 1º Fica aprovado o Regulamento.\nANEXO I\nREGULAMENTO DO IMPOSTO\nArt. 1º O imposto"
    assert [c for c in parse(text) if c.annex] == []


def test_citation_positional_fields_unchanged():
    c = Citation(None, "5", "1", "II", "a", "3", True, False, 0, 4, "x")
    assert (c.doc_id, c.annex, c.reason, c.level) == ("x", None, None, "dispositivo")


# --------------------------------------------------------------------------- layouts of the unseen sample


@pytest.mark.parametrize("text, expected", [
    # two parts joined by "e" hang on the one artigo named at the end
    ("multas previstas na alínea “a” do inciso I e no inciso II do caput do art. 1.003",
     [("1003", None, "I", "a", None), ("1003", None, "II", None, None)]),
    ("o disposto no § 2º e no art. 6º", [("6", None, None, None, None)]),  # not parallel: § 2º is not art. 6's
    # "art. 2º ao art. 4º": a range
    ("Lei nº 8.134, de 1990, art. 2º ao art. 4º", [("2", None, None, None, None), ("3", None, None, None, None),
                                                   ("4", None, None, None, None)]),
    # a part before its artigo, joined by a comma; "caput" with no comma
    ("o desconto previsto no inciso II, art. 1º do Decreto nº 7.891, de 2013", [("1", None, "II", None, None)]),
    ("(Lei nº 11.482, de 2007, art. 1º caput , incisos IV e V)", [("1", None, "IV", None, None),
                                                                 ("1", None, "V", None, None)]),
])
def test_sample_layouts(text, expected):
    assert levels(text) == expected


def test_quoted_or_elided_heading_of_amending_text_is_not_a_citation():
    cits = parse("Alterar o art. 69 da Resolução Normativa n o 414 , de 2010, que passa a vigorar com a seguinte "
                 "redação: “Art. 69.")
    assert [(c.act.number, c.article) for c in cits if c.article] == [("414", "69")]
    assert [c for c in parse("de valoração da proposta técnica.  Art. 54 ..........") if c.article] == []
    # a citation in capitals at the end of a string is still one
    assert [(c.act.number, c.article) for c in parse("Lei nº 9.250, de 1995, Art. 12.") if c.article] == [("9250", "12")]


def test_acts_of_regulators():
    (c,) = parse("inciso VI do art. 43 da Norma de Organização ANEEL nº 0013")
    assert (c.act.type, c.act.issuer, c.act.number, c.article, c.inciso) == ("norma_de_organizacao", "ANEEL", "0013",
                                                                           "43", "VI")
    assert [(c.act.type, c.act.number, c.act.year, c.article) for c in parse("(art. 624 da REN nº 1.000/2021)")] == [
        ("resolucao", "1000", 2021, "624")]
    assert [(c.act.type, c.article) for c in parse("o art. 70-A na Resolução Normativa nº 414, de 2010")] == [
        ("resolucao", "70-A")]
    assert [c.act.type for c in parse("no art. 9º do Regimento Interno da ANEEL")] == ["regimento_interno"]


def test_constitution_as_a_common_noun_is_no_act():
    assert parse("a constituição de garantia de fiel cumprimento") == []
    assert [c.act.type for c in parse("CONSTITUIÇÃO FEDERAL, art. 5º")] == ["constituicao"]


def test_amending_formula_binds_the_new_artigo_to_the_amended_act():
    (c,) = parse("A Lei nº 9.074, de 7 de julho de 1995, passa a vigorar acrescida do seguinte art. 4º-E:")
    assert (c.act.number, c.article) == ("9074", "4-E")


@pytest.mark.parametrize("text, expected", [
    # Windows-1252 quotes read as Latin-1 in PDF text
    ("a alínea \x93a\x94 do inciso XXI do caput do art. 6º", [("6", None, "XXI", "a", None)]),
    ("nas alíneas f e g do inciso IV do caput do art. 75", [("75", None, "IV", "f", None), ("75", None, "IV", "g", None)]),
    ("no artigo 150 e seus §§ 1º e 4º", [("150", None, None, None, None), ("150", "1", None, None, None),
                                         ("150", "4", None, None, None)]),
    ("observarão o disposto nos § 7º, § 8º e § 10 do art. 836", [("836", "7", None, None, None),
                                                                  ("836", "8", None, None, None),
                                                                  ("836", "10", None, None, None)]),
    ("O disposto no § 2º ao § 4º do art. 691", [("691", "2", None, None, None), ("691", "3", None, None, None),
                                                ("691", "4", None, None, None)]),
    ("e aos arts. 45 a 47-A da Lei nº 12.462, de 2011", [("45", None, None, None, None), ("46", None, None, None, None),
                                                        ("47", None, None, None, None), ("47-A", None, None, None, None)]),
])
def test_held_out_layouts(text, expected):
    assert levels(text) == expected


def test_acronym_in_parentheses_and_interministerial_issuer():
    assert [(c.act.type, c.act.number, c.article) for c in parse(
        "arts. 43 e 47, §1º, da Norma de Organização ANEEL (NOA) 001, revisada pela REN 273/2007") if c.article] == [
        ("norma_de_organizacao", "001", "43"), ("norma_de_organizacao", "001", "47")]
    (c,) = [c for c in parse("na lista do art. 1º da Portaria Interministerial MF/MME nº 25/2002") if c.article]
    assert (c.act.type, c.act.number, c.act.year, c.article) == ("portaria", "25", 2002, "1")


def test_possessive_points_back_to_the_act_just_named():
    (c,) = [c for c in parse("amparada no comando legal trazido pelo Decreto nº 10.139/2019 em seu art. 8º.") if c.article]
    assert (c.act.number, c.article) == ("10139", "8")


def test_chains_share_a_forward_act_only_within_one_clause():
    text = ("As disposições desta Lei, notadamente as dos arts 17, 74, § 2º e 77, parágrafo único, bem como a do art. 54 "
            "da Lei 5.025, de 10 de junho de 1966")
    got = [(c.act.number if c.act else None, c.article) for c in parse(text) if c.article]
    assert got == [(None, "17"), (None, "74"), (None, "77"), ("5025", "54")]
    got = [(c.act.number, c.article) for c in parse("o art. 1º, § 1º, inciso I e o art. 7º, caput, inciso I, da Lei nº "
                                                    "13.334, de 2016") if c.article]
    assert got == [("13334", "1"), ("13334", "7")]


def test_act_numbers_with_a_letter_or_a_stray_space_and_a_list_label():
    (c,) = [c for c in parse("os seguintes dispositivos da Lei nº 3.890-A, de 25 de abril de 1961 : a) art. 7º") if c.article]
    assert (c.act.number, c.act.year, c.article) == ("3890-A", 1961, "7")
    (c,) = parse("( Lei nº 9. 249, de 1995, art. 15, § 1º )")
    assert (c.act.number, c.article, c.paragraph) == ("9249", "15", "1")
    (c,) = [c for c in parse("o art. 19 da Instrução Administrativa nº 1, de 27 de agosto de 2009") if c.article]
    assert (c.act.type, c.act.number, c.article) == ("instrucao_administrativa", "1", "19")


def test_comma_running_order_up_to_an_annex_and_the_act_after_a_comma():
    (c,) = [c for c in parse("O inciso XL, art. 4o, Anexo I, Decreto no 2.335, de 6 de outubro de 1997, estabelece")
            if c.article]
    assert (c.act.number, c.annex, c.article, c.inciso) == ("2335", "I", "4", "XL")
    # an act after a comma is a last resort: an act before the chain still wins
    got = [(c.act.number, c.article) for c in parse("Lei nº 9.250, de 1995, art. 4º, Lei nº 7.713, de 1988, art. 6º")
           if c.article]
    assert got == [("9250", "4"), ("7713", "6")]


def test_paragraph_right_after_its_artigo_and_norma_organizacional():
    (c,) = parse("Art. 16 § 1º do Decreto nº 2.335/1997")
    assert (c.act.number, c.article, c.paragraph) == ("2335", "16", "1")
    (c,) = [c for c in parse("por força do § 5º, do art. 47, da Norma Organizacional nº 001") if c.article]
    assert (c.act.type, c.article, c.paragraph) == ("norma_de_organizacao", "47", "5")
    # a paragraph heading on the next line is not joined to a citation at the end of a line
    assert [(c.article, c.paragraph) for c in parse("observado o art. 5º\n§ 1º O imposto") if c.article] == [("5", None)]


def test_lower_case_inciso_missing_de_in_a_date_and_an_inline_vetoed_heading():
    (c,) = [c for c in parse("com fulcro no art. 57, inciso ii, da lei n. 8.666/1993 e reajustar") if c.article]
    assert (c.act.number, c.article, c.inciso) == ("8666", "57", "II")
    (c,) = parse("e Lei nº 12.213, de 20 janeiro de 2010, art. 3º) :")
    assert (c.act.number, c.act.year, c.article) == ("12213", 2010, "3")
    assert [c for c in parse("até a data de início de suprimento. (NR) Art. 17. (VETADO).") if c.article] == []


def test_year_read_from_a_document_id_only_after_the_act_number():
    table = {("lei", None, "9250"): "lei-9250", ("lei", None, "1999"): "lei-1999", ("lei", None, "7713"): "L7713-1988"}
    assert resolve_act(Act("lei", "9250", 1995), table) == ("lei-9250", None)  # no year in the id: not checked
    assert resolve_act(Act("lei", "1999", 1995), table) == ("lei-1999", None)  # 1999 is the number, not a year
    assert resolve_act(Act("lei", "7713", 1998), table) == (None, "year_mismatch")
    assert resolve_act(Act("constituicao", None, 1988), {("constituicao", None, None): "cf-1988"}) == ("cf-1988", None)
