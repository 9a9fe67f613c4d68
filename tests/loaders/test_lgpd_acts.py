"""The LGPD and the LAI rebuilt from their unit tables, read back by the dispositivo parser and the provision
locator as a compiled page is.

The reference is each table read here with the csv module and a regex of its own: every unit's text
(furniture stripped) must appear in the rebuilt act, in order; the parser must find every ART/PAR/INC/ALI
unit at its place, and the span it gives each unit (and the locator each CPT/PAR/INC/ALI) must hold exactly
that unit's text. The table's CPT and PAR texts have lost their labels (``§ 1º``, and the labels of their
incisos and alíneas), so a span's own labels are taken off before comparing; INC, ALI and ART keep theirs.
"""
from __future__ import annotations

import csv
import re

import pytest

from ragcov_data.errors import InputFileError
from ragcov_data.loaders._unit_tables import read_unit_table, rebuild_act, unit_acervo
from ragcov_data.loaders.articles import locate
from ragcov_data.loaders.dispositivo_parser import find_boundaries, words_and_line_starts

TABLES = ("lei_13709_20180814.csv", "lei_12527_20111118.csv")
#: Amending artigos: the other act's text they insert is in their ART row with its labels (``Art. 7º X –``) but
#: in their CPT row without them, and the table has no unit for it (it is not this act's dispositivo).
AMENDING = {"lei-13709-2018": {"art60_cpt"}, "lei-12527-2011": {"art43_cpt", "art44_cpt"}}
_FURNITURE = re.compile(r"^\[[^\]]*\]|(?:all_inclusive|remove_red_eye)(?:Regulamentação|Normas correlatas)")
_LINE_LABEL = re.compile(r"^(?:Art\. \d+(?:º|\.|-[A-Z]\.)|§ \d+º|Parágrafo único\.|[IVXLC]+(?:-[A-Z])? –|[a-z]\))\s*")
_ANY_LABEL = re.compile(r"(?:Art\. \d+(?:º|\.|-[A-Z]\.)|\b[IVXLC]+(?:-[A-Z])? –|(?<!\S)[a-z]\))\s*")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _table_rows(path) -> list[dict]:
    """The table read independently: rows with ``text`` (furniture stripped) and ``frag`` (the URN's fragment)."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["text"] = _norm(_FURNITURE.sub(" ", r["Texto"]))
        r["frag"] = r["urn"].split("!")[1]
        r["first"], r["last"] = int(r["Num_Inicio"]), int(r["Num_Final"])
    return sorted(rows, key=lambda r: (r["first"], -r["last"]))


def _unlabelled(span: str) -> str:
    return _norm(" ".join(_LINE_LABEL.sub("", line) for line in span.split("\n")))


def _roman(n: int) -> str:
    out = ""
    for v, s in ((50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= v:
            out, n = out + s, n - v
    return out


def _path(frag: str) -> tuple[str, ...]:
    """The parser's label path of a unit, from its URN fragment (``art55-3_cpt_inc5-1`` -> art. 55-C > V-A)."""
    out = []
    for comp in frag.split("_"):
        kind, n, u, suf = re.fullmatch(r"([a-z]+)(\d+)?(u)?(?:-(\d+))?", comp).groups()
        letter = f"-{chr(64 + int(suf))}" if suf else ""
        if kind == "art":
            out.append(f"art. {n}{letter}")
        elif kind == "par":
            out.append("parágrafo único" if u else f"§ {n}{letter}")
        elif kind == "inc":
            out.append(_roman(int(n)) + letter)
        elif kind == "ali":
            out.append(chr(96 + int(n)) + letter)
    return tuple(out)


def _key(frag: str) -> tuple:
    """``(article, paragraph, inciso, alinea, caput)`` of a unit, for the locator."""
    path = _path(frag)
    art = path[0][5:]
    par = next((p[2:] if p.startswith("§") else "único" for p in path[1:] if p.startswith(("§", "parágrafo"))), None)
    inc = next((p for p in path[1:] if re.fullmatch(r"[IVXLC]+(?:-[A-Z])?", p)), None)
    ali = next((p for p in path[1:] if re.fullmatch(r"[a-z](?:-[A-Z])?", p)), None)
    return art, par, inc, ali, "_cpt" in frag


@pytest.fixture(scope="module")
def acts(data_dir):
    paths = [data_dir / "lgpd" / t for t in TABLES]
    acervo, _ = unit_acervo(paths)
    return {d.doc_id: (d, _table_rows(p)) for d, p in zip(acervo.documents, paths)}


def test_the_acts_and_their_titles(acts):
    assert {k: d.metadata["title"] for k, (d, _) in acts.items()} == {
        "lei-13709-2018": "Lei nº 13.709, de 14 de agosto de 2018",
        "lei-12527-2011": "Lei nº 12.527, de 18 de novembro de 2011"}


def test_every_unit_appears_in_order(acts):
    for doc, rows in acts.values():
        text, bare = _norm(doc.text), _unlabelled(doc.text)
        # nothing added, nothing dropped: the ART rows in order, and between them only the headings' own text
        # (a CAP/SEC row's text before the next row in reading order)
        residue, at = [], 0
        for r in rows:
            if r["Tipo"] == "ART":
                k = text.index(r["text"], at)
                residue.append(text[at:k])
                at = k + len(r["text"])
        assert at == len(text)
        heads = [r["text"][:r["text"].index(nxt["text"])] for r, nxt in zip(rows, rows[1:])
                 if r["Tipo"] in ("CAP", "SEC")]
        assert _norm(" ".join(residue)) == _norm(" ".join(heads)) and len(heads) == sum(
            r["Tipo"] in ("CAP", "SEC") for r in rows)
        for kind, hay in (("INC", text), ("ALI", text), ("CPT", bare), ("PAR", bare)):
            cursor = 0
            for r in rows:
                if r["Tipo"] == kind and r["frag"] not in AMENDING[doc.doc_id]:
                    cursor = hay.index(r["text"], cursor)  # found, after the one before it


def test_headings_are_the_chapters_own_text(acts):
    """Each CAP/SEC row is its heading lines followed by its units: nothing dropped between artigos."""
    for doc, rows in acts.values():
        lines = doc.text.split("\n")
        for r in rows:
            if r["Tipo"] not in ("CAP", "SEC"):
                continue
            numeral = re.match(r"(CAPÍTULO|Seção) [IVXLC]+", r["text"]).group(0)
            start = next(i for i, ln in enumerate(lines) if ln == numeral and _norm(" ".join(lines[i:])).startswith(
                r["text"][:200]))
            assert _norm(" ".join(lines[start:]))[:len(r["text"])] == r["text"]


def test_the_parser_finds_every_unit(acts):
    for doc, rows in acts.values():
        got = [b.path for b in find_boundaries(doc.text) if b.kind != "heading"]
        assert got == [_path(r["frag"]) for r in rows if r["Tipo"] in ("ART", "PAR", "INC", "ALI")]


def test_each_parser_unit_holds_its_text(acts):
    """From a unit's boundary to the next boundary at its level or above (within its artigo): the unit's text."""
    for doc, rows in acts.values():
        words, starts = words_and_line_starts(doc.text)
        bounds = find_boundaries(words, starts)
        by_path = {_path(r["frag"]): r for r in rows if r["Tipo"] in ("ART", "PAR", "INC", "ALI")}
        for i, b in enumerate(bounds):
            if b.kind == "heading":
                continue
            # up to the next unit at its level or above, or the next heading or artigo
            stop = next((x.start for x in bounds[i + 1:] if len(x.path) <= len(b.path) or x.kind == "heading"),
                        len(words))
            span = "".join(("\n" if starts[k] else " ") + words[k] for k in range(b.start, stop)).strip()
            r = by_path[b.path]
            assert (_unlabelled(span) if r["Tipo"] == "PAR" else _norm(span)) == r["text"], b.path


def test_the_locator_spans_hold_each_units_text(acts):
    amending_seen = set()
    for doc, rows in acts.values():
        idx = locate(doc.text)
        for r in rows:
            if r["Tipo"] in ("CAP", "SEC"):
                continue
            art, par, inc, ali, caput = _key(r["frag"])
            if r["Tipo"] == "ART":
                p = idx.article(art)
            else:
                p, depth = idx.find(art, par, inc, ali, None, caput)
                assert depth == (3 if ali else 2 if inc else 1), r["frag"]  # every level it names is found
            span = doc.text[p.start:p.end]
            if r["Tipo"] in ("ART", "INC", "ALI"):
                assert _norm(span) == r["text"], r["frag"]
            elif _unlabelled(span) != r["text"]:
                assert r["frag"] in AMENDING[doc.doc_id]  # the quoted act's labels: off anywhere, they agree
                assert _norm(_ANY_LABEL.sub("", _unlabelled(span))) == _norm(_ANY_LABEL.sub("", r["text"]))
                amending_seen.add(r["frag"])
    assert amending_seen == set().union(*AMENDING.values())


def test_rebuild_is_deterministic(data_dir):
    a = unit_acervo([data_dir / "lgpd" / t for t in TABLES])[0]
    b = unit_acervo([data_dir / "lgpd" / t for t in TABLES])[0]
    assert [d.text for d in a.documents] == [d.text for d in b.documents]
    assert [s.sha256 for s in a.sources] == [s.sha256 for s in b.sources]


# --------------------------------------------------------------------------- bad tables


HEADER = "Tipo,Rotulo,Num_Inicio,Num_Final,Texto,urn\n"
URN = "urn:lex:br:federal:lei:2000-01-10;1234"


def _write(tmp_path, body: str, header: str = HEADER, name: str = "t.csv"):
    p = tmp_path / name
    p.write_text(header + body, encoding="utf-8")
    return p


GOOD = (f'ART,"lei_1234_20000110, Art. 1º",1,4,"[ x | y | ] Art. 1º São: I – um; II – dois.",{URN}!art1\n'
        f'CPT,"lei_1234_20000110, Art. 1º, caput",1,4,"[ x | ] São: um; dois.",{URN}!art1_cpt\n'
        f'INC,"lei_1234_20000110, Art. 1º, caput, Inciso I",2,2,"[ x | ] I – um;",{URN}!art1_cpt_inc1\n'
        f'INC,"lei_1234_20000110, Art. 1º, caput, Inciso II",3,3,"[ x | ] II – dois.",{URN}!art1_cpt_inc2\n')


def test_a_small_table_rebuilds(tmp_path):
    units = read_unit_table(_write(tmp_path, GOOD))
    assert rebuild_act(units) == "Art. 1º São:\nI – um;\nII – dois.\n"


@pytest.mark.parametrize("header, body, words", [
    ("Tipo,Rotulo,Num_Inicio,Texto,urn\n", "", ["Num_Final", "missing"]),
    (HEADER, "", ["no units"]),
    (HEADER, GOOD.replace("INC,", "INCISO,", 1), ["row 3", "Tipo 'INCISO'"]),
    (HEADER, GOOD.replace(",2,2,", ",dois,2,", 1), ["row 3", "whole line numbers"]),
    (HEADER, GOOD.replace(",3,3,", ",3,1,", 1), ["row 4", "before Num_Inicio"]),
    (HEADER, GOOD.replace('"[ x | ] II – dois."', '"[ x | ]  "', 1), ["row 4", "no text"]),
    (HEADER, GOOD.replace(f"{URN}!art1_cpt_inc2", "art1_cpt_inc2", 1), ["row 4", "not a LexML URN"]),
    (HEADER, GOOD.replace(f"{URN}!art1_cpt_inc2", "urn:lex:br:federal:lei:2000-01-10;999!art1_cpt_inc2", 1),
     ["2 acts", "one act"]),
])
def test_a_bad_table_is_an_error_naming_the_row(tmp_path, header, body, words):
    p = _write(tmp_path, body, header)
    with pytest.raises(InputFileError) as err:
        read_unit_table(p)
    assert str(p) in str(err.value) and all(w in str(err.value) for w in words), str(err.value)


def test_a_unit_not_in_its_artigo_is_an_error(tmp_path):
    p = _write(tmp_path, GOOD.replace('"[ x | ] II – dois."', '"[ x | ] II – três."', 1))
    with pytest.raises(InputFileError, match=r"row 4 .*Inciso II.*not in its artigo's ART row \(row 1\)"):
        unit_acervo([p])


def test_an_artigo_without_its_label_or_an_unknown_act_type(tmp_path):
    with pytest.raises(InputFileError, match=r"row 1 .*an ART row opens with its label"):
        unit_acervo([_write(tmp_path, GOOD.replace('] Art. 1º São:', '] São:', 1))])
    other = GOOD.replace("federal:lei:", "federal:regimento:")
    with pytest.raises(InputFileError, match=r"t.csv: row 1: .*document type 'regimento'"):
        unit_acervo([_write(tmp_path, other)])


def test_a_table_without_artigos_and_a_missing_or_latin1_file(tmp_path):
    with pytest.raises(InputFileError, match="no ART row"):
        unit_acervo([_write(tmp_path, "\n".join(GOOD.splitlines()[1:]) + "\n")])
    with pytest.raises(InputFileError, match="does not exist"):
        read_unit_table(tmp_path / "missing.csv")
    bad = tmp_path / "latin1.csv"
    bad.write_bytes((HEADER + GOOD.replace("–", "-")).encode("latin-1"))  # "São" in Latin-1
    with pytest.raises(InputFileError, match="not valid UTF-8"):
        read_unit_table(bad)
    with pytest.raises(InputFileError, match="given twice"):
        unit_acervo([_write(tmp_path, GOOD), _write(tmp_path, GOOD, name="again.csv")])
