"""Citations that would lose a level or their act say why: unquoted alínea ranges read as ranges, invalid Roman
numerals and zeros refused with a ``reason``, control characters removed before parsing (and recorded), numbers of
any length refused by range instead of raising."""
from __future__ import annotations

import sys
import unicodedata

import pytest

from ragcov_data.legal._citation_text import REMOVED, clean
from ragcov_data.legal.citations import parse

LEI = "da Lei nº 9.250, de 26 de dezembro de 1995"


def levels(text: str) -> list[tuple]:
    return [(c.doc_id, c.article, c.paragraph, c.inciso, c.alinea, c.reason) for c in parse(text) if c.article]


# --------------------------------------------------------------------------- unquoted alínea ranges


@pytest.mark.parametrize("text, inciso", [
    (f"art. 5º, alíneas a a d, {LEI}", None),
    (f"art. 5º, inciso II, alíneas a a d, {LEI}", "II"),
    (f"alíneas a a d do inciso II do art. 5º {LEI}", "II"),
    (f"art. 5º, inciso II, alíneas “a” a “d”, {LEI}", "II"),  # the quoted form, read before too
])
def test_unquoted_alinea_range_is_a_range(text, inciso):
    assert levels(text) == [("lei-9250-1995", "5", None, inciso, x, None) for x in "abcd"]
    assert all(c.from_range for c in parse(text) if c.alinea in ("b", "c", "d"))


def test_unquoted_letters_after_a_plural_marker_only():
    # "a alínea b a que se refere" is no range; a singular alínea takes one letter
    assert [c.alinea for c in parse(f"a alínea b a que se refere o art. 5º {LEI}") if c.alinea] == ["b"]
    assert [c.alinea for c in parse(f"art. 5º, alínea b, {LEI}")] == ["b"]


# --------------------------------------------------------------------------- numbers that are no numbers


@pytest.mark.parametrize("text, field, value, reason", [
    (f"art. 5º, inciso IIII, {LEI}", "inciso", "IIII", "invalid_numeral"),
    (f"art. 5º, inciso VV, {LEI}", "inciso", "VV", "invalid_numeral"),
    (f"art. 5º, inciso 0, {LEI}", "inciso", "0", "invalid_numeral"),
    (f"art. 5º, inciso 5, {LEI}", "inciso", "5", "invalid_numeral"),
    (f"inciso IIII do art. 5º {LEI}", "inciso", "IIII", "invalid_numeral"),
    (f"art. 5º, inciso MMM, {LEI}", "inciso", "MMM", "invalid_numeral"),
    (f"art. 5º, alínea 1, {LEI}", "alinea", "1", "invalid_numeral"),
    (f"alínea 12 do inciso II do art. 5º {LEI}", "alinea", "12", "invalid_numeral"),
    (f"art. 0 {LEI}", "article", "0", "number_out_of_range"),
    (f"art. 0º {LEI}", "article", "0", "number_out_of_range"),
    (f"art. 5º, § 0, {LEI}", "paragraph", "0", "number_out_of_range"),
    (f"art. 5º, § 2º, item 0, {LEI}", "item", "0", "number_out_of_range"),
])
def test_invalid_level_refused_with_a_reason_not_dropped(text, field, value, reason):
    (c,) = parse(text, acts=False)
    assert getattr(c, field) == value and c.reason == reason and c.doc_id is None
    assert c.act is not None and c.act.number == "9250"  # still bound to its act


def test_a_bad_numeral_in_a_list_refuses_that_value_only():
    got = levels(f"art. 5º, incisos I e IIII, {LEI}")
    assert got == [("lei-9250-1995", "5", None, "I", None, None), (None, "5", None, "IIII", None, "invalid_numeral")]
    got = levels(f"art. 5º, incisos I a IIII, {LEI}")
    assert got[0] == ("lei-9250-1995", "5", None, "I", None, None) and got[-1][3:] == ("IIII", None, "invalid_numeral")


def test_valid_numerals_and_words_unchanged():
    assert levels(f"art. 5º, incisos XIV e XL, {LEI}") == [("lei-9250-1995", "5", None, v, None, None)
                                                            for v in ("XIV", "XL")]
    assert levels(f"art. 5º, inciso iv, {LEI}") == [("lei-9250-1995", "5", None, "IV", None, None)]
    assert levels(f"o inciso civil do art. 5º {LEI}") == [("lei-9250-1995", "5", None, None, None, None)]


@pytest.mark.parametrize("text, field", [
    ("art. " + "9" * 4301, "article"),                          # was Python's integer-conversion ValueError
    ("arts. 5 a " + "9" * 5000, "article"),
    ("art. 5, item " + "9" * 5000, "item"),
    ("§ 9999 do art. 5 " + LEI, "paragraph"),                   # was read as the heading "§ 999" and dropped
    ("Lei nº " + "9" * 5000 + ", de 1995, art. 5", "article"),   # the act was unread: art. 5 lost its act
    ("art. 5º do Decreto nº 12345678", "article"),
])
def test_numbers_of_any_length_refused_by_range(text, field):
    cits = [c for c in parse(text) if getattr(c, field) is not None]
    bad = [c for c in cits if c.reason == "number_out_of_range"]
    assert bad and all(c.doc_id is None for c in bad)
    assert all(len(getattr(c, field)) <= 6 or c.reason == "number_out_of_range" for c in cits)


# --------------------------------------------------------------------------- control characters

BASES = [f"art. 5º, § 2º, inciso II, alínea “a”, {LEI}",
         "no inciso IV do § 2º do art. 458 do Decreto-Lei nº 5.452, de 1943",
         "Lei nº 7.713, de 22 de dezembro de 1988, arts. 3º, § 1º, e 6º, incisos XII a XIV",
         f"alíneas a a d do inciso II do caput do art. 8º {LEI}",
         "RIR/2018, art. 35, parágrafo único, item 10"]
CONTROLS = ["\x00", "\ufffd", "\u202e", "\u2066", "\u2069", "\u200f", "\u061c", "\x1b", "\x7f", "\x9f"]


def _key(cits) -> list[tuple]:
    return [(c.act and c.act.number, c.article, c.paragraph, c.inciso, c.alinea, c.item, c.caput, c.doc_id, c.reason)
            for c in cits]


@pytest.mark.parametrize("base", BASES)
def test_a_control_character_anywhere_changes_nothing_and_is_recorded(base):
    want = _key(parse(base))
    assert not any(c.cleaned for c in parse(base))
    first, last = min(c.start for c in parse(base)), max(c.end for c in parse(base))
    for ch in CONTROLS:
        for i in range(1, len(base)):
            text = base[:i] + ch + base[i:]
            got = parse(text)
            assert _key(got) == want, (repr(text), _key(got))
            assert any(c.cleaned for c in got) or not first < i < last, repr(text)
            assert all(text[c.start:c.end].replace(ch, "") == base[c.start - (c.start > i):c.end - (c.end > i)]
                       for c in got)  # spans still point into the caller's text


def test_cleaned_only_on_the_citation_it_touches():
    a, b = parse(f"art. 5º {LEI}; e o art. 3º\x00 da Lei nº 7.713, de 1988")
    assert (a.cleaned, b.cleaned) == (False, True) and b.doc_id == "lei-7713-1988"
    assert parse(f"art. 5º {LEI}")[0].to_dict()["cleaned"] is False


def test_an_accent_lost_to_u_fffd_in_a_marker_still_reads():
    assert levels(f"art. 5º, al\ufffdnea b, {LEI}") == [("lei-9250-1995", "5", None, None, "b", None)]
    assert levels(f"art. 5º, par\ufffdgrafo \ufffdnico, {LEI}") == [("lei-9250-1995", "5", "único", None, None, None)]


def test_removed_set_is_every_control_and_format_character():
    for k in range(sys.maxunicode + 1):
        ch = chr(k)
        cat = unicodedata.category(ch)
        if cat in ("Cf", "Cs") or (cat == "Cc" and not ch.isspace() and ch not in "\x91\x92\x93\x94\x96\x97"):
            assert ch in REMOVED, hex(k)
    assert "\ufffd" in REMOVED and not REMOVED & set(" \t\n\r\x0b\x0c\x85\xa0")
    assert clean("inc\x00iso \u202eII")[0] == "inciso II" and clean("inc\x00iso")[2] == [3]
    assert clean("a\x93b\x94")[0] == "a“b”"  # Windows-1252 quotes read as meant, not removed
