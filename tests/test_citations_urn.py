"""LexML URNs and source keys read as citations (:func:`ragcov_data.legal.citations.parse` / ``parse_urn``).

Every citation of the shared LGPD questions is parsed and checked against an independent reference: the unit
tables' own label (``Rotulo``: ``lei_13709_20180814, Art. 55-L., caput, Inciso VI``) of the row whose ``urn`` is
the cited one, read here with a plain split. Each URN shape is also written out by hand.
"""
from __future__ import annotations

import collections
import csv
import json
import re

import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.legal.citations import DOC_IDS, UrnError, is_source_key, is_urn, parse, parse_urn, urn_title

LGPD = "urn:lex:br:federal:lei:2018-08-14;13709"
TABLE = {**DOC_IDS, ("lei", None, "13709"): "lei-13709-2018", ("lei", None, "12527"): "lei-12527-2011"}


def _levels(c) -> tuple:
    return (c.article, c.paragraph, c.inciso, c.alinea, c.item, c.caput)


@pytest.mark.parametrize("fragment, levels", [
    ("art5", ("5", None, None, None, None, False)),                       # the whole artigo
    ("art5_cpt", ("5", None, None, None, None, True)),                    # its caput
    ("art5_cpt_inc6", ("5", None, "VI", None, None, True)),               # an inciso of the caput
    ("art4_cpt_inc2_ali1", ("4", None, "II", "a", None, True)),           # an alínea: ali1 = "a"
    ("art11_cpt_inc2_ali7", ("11", None, "II", "g", None, True)),
    ("art3_par1", ("3", "1", None, None, None, False)),                   # § 1º
    ("art1_par1u", ("1", "único", None, None, None, False)),              # parágrafo único
    ("art3_par1_inc2", ("3", "1", "II", None, None, False)),              # an inciso of a parágrafo
    ("art55-12", ("55-L", None, None, None, None, False)),                # art. 55-L: L is the 12th letter
    ("art55-1_cpt", ("55-A", None, None, None, None, True)),
    ("art55-10_cpt_inc17", ("55-J", None, "XVII", None, None, True)),
    ("art55-4_par5", ("55-D", "5", None, None, None, False)),
    ("art55-3_cpt_inc5-2", ("55-C", None, "V-B", None, None, True)),      # inciso V-B
    ("art65_cpt_inc1-1", ("65", None, "I-A", None, None, True)),
    ("art50_par2_inc1_ali8", ("50", "2", "I", "h", None, False)),
    ("art2_cpt_inc3_ali1_ite4", ("2", None, "III", "a", "4", True)),     # an item
])
def test_each_fragment_shape(fragment, levels):
    c = parse_urn(f"{LGPD}!{fragment}", table=TABLE)
    assert _levels(c) == levels
    assert (c.act.type, c.act.number, c.act.year, c.doc_id, c.reason) == ("lei", "13709", 2018, "lei-13709-2018", None)
    assert parse(f"{LGPD}!{fragment}", table=TABLE) == [c]


def test_urn_equals_the_written_citation():
    """The URN and the citation a person writes of the same provision parse to the same levels and document."""
    pairs = [("art5_cpt_inc6", "Lei nº 13.709, de 14 de agosto de 2018, art. 5º, caput, inciso VI"),
             ("art55-12", "Lei nº 13.709/2018, art. 55-L"),
             ("art1_par1u", "Lei nº 13.709/2018, art. 1º, parágrafo único"),
             ("art4_cpt_inc2_ali1", "alínea “a” do inciso II do caput do art. 4º da Lei nº 13.709, de 2018")]
    for frag, written in pairs:
        u, w = parse(f"{LGPD}!{frag}", table=TABLE)[0], parse(written, table=TABLE)[0]
        assert (_levels(u), u.doc_id, u.act.number, u.act.year) == (_levels(w), w.doc_id, w.act.number, w.act.year)


def test_acts_not_in_the_corpus_keep_their_act():
    res = parse_urn("urn:lex:br:autoridade.nacional.protecao.dados;conselho.diretor:resolucao:2024-04-24;15;anexo.1"
                    "!art6_cpt", table=TABLE)
    assert (res.act.type, res.act.number, res.act.year, res.act.issuer) == ("resolucao", "15", 2024, "ANPD/CD")
    assert (res.annex, res.article, res.caput, res.doc_id, res.reason) == ("I", "6", True, None, None)
    cf = parse_urn("urn:lex:br:federal:constituicao:1988-10-05;1988!art70", table=TABLE)
    assert (cf.act.type, cf.act.number, cf.act.year, cf.article, cf.doc_id) == ("constituicao", None, 1988, "70", None)
    mci = parse_urn("urn:lex:br:federal:lei:2014-04-23;12965!art3_cpt_inc3", table=TABLE)
    assert (mci.act.number, mci.article, mci.inciso, mci.doc_id) == ("12965", "3", "III", None)
    act = parse_urn(LGPD, table=TABLE)  # no fragment: the act as a whole
    assert (act.article, act.level, act.doc_id) == (None, "act", "lei-13709-2018")
    assert parse(LGPD, table=TABLE, acts=False) == []


def test_the_act_is_checked_as_a_written_one_is():
    wrong_year = parse_urn("urn:lex:br:federal:lei:2011-08-14;13709!art5", table=TABLE)
    assert (wrong_year.doc_id, wrong_year.reason) == (None, "year_mismatch")
    too_far = parse_urn(f"{LGPD}!art99999", table=TABLE)
    assert (too_far.doc_id, too_far.reason) == (None, "number_out_of_range")


@pytest.mark.parametrize("key", ["enunciado_cd_anpd_1_2023", "jurisprudencia_em_teses_mci_iii:item 4",
                                 "informativo_jurisprudencia_stj_766:aresp 2.130.619-sp"])
def test_source_keys_are_sources_cited_whole(key):
    assert is_source_key(key) and not is_urn(key)
    (c,) = parse(key, table=TABLE)
    assert (c.act.type, c.act.text, c.article, c.doc_id, c.reason, c.level) == ("source", key, None, None, None, "act")
    assert parse(key, acts=False) == []


def test_running_text_is_no_source_key():
    for text in ("caput", "item 4", "art. 5º da Lei nº 13.709", "Lei Geral de Proteção de Dados"):
        assert not is_source_key(text)


@pytest.mark.parametrize("urn, part", [
    ("urn:lex:br:federal:lei:2018-08-14;13709!", "nothing after '!'"),
    ("urn:lex:br:federal:lei:2018-08-14;13709!art5_inc", "'inc'"),
    ("urn:lex:br:federal:lei:2018-08-14;13709!art5_cpt1", "'cpt1'"),
    ("urn:lex:br:federal:lei:2018-08-14;13709!art5_par2u", "'par2u'"),
    ("urn:lex:br:federal:lei:2018-08-14;13709!art5_inc6_cpt", "out of order"),
    ("urn:lex:br:federal:lei:2018-08-14;13709!cpt_inc6", "out of order"),
    ("urn:lex:br:federal:lei:2018-08-14;13709!art5_art6", "out of order"),
    ("urn:lex:br:federal:lei:2018-08-14;13709!art0", "numbers from 1"),
    ("urn:lex:br:federal:lei:2018-08-14;13709!art5_cpt_inc1_ali27", "no letter"),
    ("urn:lex:br:federal:lei:2018-08-14;13709!art5_xyz3", "'xyz3'"),
    ("urn:lex:br:federal:lei:2018-08-14;13709!cap2_sec1", "names no artigo"),
    ("urn:lex:br:federal:lei:2018-14-08;13709!art5", "not a date"),
    ("urn:lex:br:federal:lei:13709!art5", "not a LexML URN"),
    ("urn:lex:br:federal:portarianova:2018-08-14;1!art5", "'portarianova'"),
    ("urn:lex:br:federal:lei:2018-08-14;13709;apendice.2!art5", "'apendice.2'"),
])
def test_a_broken_urn_is_an_error_naming_its_part(urn, part):
    with pytest.raises(UrnError) as err:
        parse(urn)
    assert urn in str(err.value) and part in str(err.value) and "e.g. urn:lex:" in str(err.value)
    assert isinstance(err.value, RagcovError)


def test_case_space_version_and_structural_prefix_are_read():
    c = parse_urn(f"  {LGPD.upper()}!ART5_CPT_INC6  ", table=TABLE)
    assert (_levels(c), c.doc_id, c.start, c.end) == (("5", None, "VI", None, None, True), "lei-13709-2018", 2,
                                                       2 + len(LGPD) + len("!art5_cpt_inc6"))
    assert _levels(parse_urn(f"{LGPD}@2019-07-08!art5_cpt_inc6")) == _levels(c)
    assert _levels(parse_urn(f"{LGPD}!cap2_sec1_art7_cpt_inc1")) == ("7", None, "I", None, None, True)


def test_titles_read_back_as_the_act():
    for urn in (LGPD, "urn:lex:br:federal:lei:2011-11-18;12527", "urn:lex:br:federal:constituicao:1988-10-05;1988",
                "urn:lex:br:federal:medida.provisoria:2001-08-24;2158-35"):
        u = parse_urn(urn)
        w = parse(urn_title(urn))[0]
        assert (w.act.type, w.act.number, w.act.year) == (u.act.type, u.act.number, u.act.year), urn_title(urn)
    assert urn_title(LGPD) == "Lei nº 13.709, de 14 de agosto de 2018"


# --------------------------------------------------------------------------- the shared questions


def _rotulo(label: str) -> tuple:
    """The levels a unit table's ``Rotulo`` names (the independent reference)."""
    act, *parts = label.split(", ")
    kind, number, date = act.split("_")
    art = par = inc = ali = None
    caput = False
    for p in parts:
        if p.startswith("Art. "):
            art = re.sub(r"[º.]", "", p[5:])
        elif p == "caput":
            caput = True
        elif p.startswith("§ "):
            par = p[2:].rstrip("º")
        elif p.startswith("Parágrafo único"):
            par = "único"
        elif p.startswith("Inciso "):
            inc = p[7:]
        elif p.startswith("Alínea "):
            ali = p[7:]
    return (kind, number, int(date[:4])), (art, par, inc, ali, None, caput)


@pytest.fixture(scope="module")
def shared(data_dir):
    rows = {}
    for name in ("lei_13709_20180814.csv", "lei_12527_20111118.csv"):
        with open(data_dir / "lgpd" / name, encoding="utf-8", newline="") as fh:
            rows.update({r["urn"]: r["Rotulo"] for r in csv.DictReader(fh)})
    with open(data_dir / "lgpd" / "questoes.jsonl", encoding="utf-8") as fh:
        cited = [u for line in fh if line.strip() for u in json.loads(line)["URN_FUNDAMENTACAO"]]
    return rows, cited


def test_every_shared_urn_against_the_unit_tables(shared):
    rows, cited = shared
    assert len(cited) == 1009
    checked = 0
    for urn in cited:
        (c,) = parse(urn, table=TABLE)
        if urn in rows:
            act, levels = _rotulo(rows[urn])
            assert (c.act.type, c.act.number, c.act.year) == act, urn
            assert _levels(c) == levels, urn
            assert c.doc_id == f"{act[0]}-{act[1]}-{act[2]}" and c.reason is None, urn
            checked += 1
    assert checked == 998  # every citation of the LGPD is a unit of its table


def test_every_shared_citation_names_an_act_or_a_source(shared):
    """The 11 citations that are not units of the tables: 4 other acts by URN, 7 source keys; none dropped."""
    rows, cited = shared
    others = [u for u in cited if u not in rows]
    kinds = collections.Counter(parse(u, table=TABLE)[0].act.type for u in others)
    assert kinds == {"source": 7, "resolucao": 2, "constituicao": 1, "lei": 1}
    assert all(parse(u, table=TABLE)[0].doc_id is None for u in others)
