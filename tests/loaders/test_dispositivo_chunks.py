"""Dispositivo chunks name the artigos whose text they hold, on acts built by hand in the layouts of
Planalto pages (vetoed and revoked stubs, struck artigos, an inciso numeral and its dash on two lines), and
on the real compiled IRPF pages of the shared data.

Every chunk is checked against the artigo headings found in its own words by a line regex written here,
independently of the parser: the label's artigo is the first heading in the chunk that is more than a stub
(or, with none, the artigo whose text ran into the chunk), and ``articles`` is exactly the headings it holds
(plus the artigo it continues).
"""
from __future__ import annotations

import re

import pytest

from ragcov_data import build_task
from ragcov_data.legal.acervo import read_acervo
from ragcov_data.loaders import dispositivos as dv

_HEAD = re.compile(r"^(?:Art\.?)\s*(\d+)(?:º|\.)?(?:-([A-Z]))?\.?$")
_STUB = re.compile(r"^\((?:VETADO|Vetado|Revogad)")


def _words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


PREAMBLE = ("Presidência da República\nLEI Nº 1.234, DE 2 DE JANEIRO DE 2020\nDispõe sobre a comercialização de "
            "pareceres de acesso e dá outras providências.\nO PRESIDENTE DA REPÚBLICA Faço saber que o Congresso "
            "Nacional decreta e eu sanciono a seguinte Lei:\n")
# vetoed and revoked stubs (one on the line of the next artigo), a short artigo, incisos whose numeral and
# dash sit on two lines, a compilation's two wordings of one artigo
ACT = (PREAMBLE
       + f"Art. 1º Esta Lei regula {_words(25, 'um')}.\n"
       + "Art. 2º (VETADO)\n"
       + f"Art. 3º O acesso será {_words(25, 'tres')}.\n"
       + "Art. 4º (Revogado pela Lei nº 14.000, de 2021)\n"
       + "Art. 5º Fica vedada a comercialização de pareceres de acesso.\n"
       + f"Art. 6º São deveres do titular:\nI - {_words(8, 'ia')};\nII\n- {_words(8, 'iia')};\nIII\n"
         f"– {_words(8, 'iiia')}.\n"
       + f"Art. 7º O prazo será {_words(22, 'velho')}.\n"
       + f"Art. 7º O prazo será {_words(22, 'novo')}. (Redação dada pela Lei nº 14.000, de 2021)\n"
       + f"Art. 8º (VETADO). Art. 9º Esta Lei entra em vigor {_words(22, 'nove')}.\n")


def _heads(words: list[str], starts, a: int, b: int) -> list[tuple[int, str, bool]]:
    """``(word index, number, stub)`` of the artigo headings in words[a:b]: ``Art.`` opening a line, or
    right after a stub's closing bracket, with its number."""
    out = []
    for k in range(a, b - 1):
        after_stub = k > 0 and words[k - 1].rstrip(".;").endswith(")")
        num = re.match(r"(\d+)[º.]*$", words[k + 1])
        if words[k] == "Art." and (starts[k] or after_stub) and num:
            out.append((k, num.group(1), k + 2 < b and bool(_STUB.match(words[k + 2]))))
    return out


def _number(label: str | None) -> str | None:
    m = re.search(r"art\. (\d+)", label or "")
    return m.group(1) if m else None


def _check_every_chunk(text: str, min_words: int = 20, max_words: int = 400) -> list:
    """Chunk ``text`` and check every chunk against the headings in its own words (module docstring)."""
    words, starts = dv.words_and_line_starts(text)
    spans, structured = dv.dispositivo_spans(words, starts, min_words=min_words, max_words=max_words,
                                             chunk_words=100, query_words=20)
    assert structured
    last: str | None = None  # the artigo whose heading came last before the chunk
    for s in spans:
        heads = _heads(words, starts, s.start, s.stop)
        named = [_number(a) for a in s.articles]
        runs_in = last is not None and (not heads or heads[0][0] > s.start)  # text of the artigo before
        expected = ([last] if runs_in else []) + [n for _, n, _ in heads]
        if runs_in:
            lead = last
        elif heads:
            lead = next((n for _, n, stub in heads if not stub), heads[0][1])
        else:
            lead = None  # the preâmbulo
        assert _number(s.unit) == lead, (s, heads)
        assert named == list(dict.fromkeys(expected)), (s, heads)
        if heads:
            last = heads[-1][1]
    return spans


def test_every_chunk_names_the_artigos_whose_text_it_holds():
    spans = _check_every_chunk(ACT)
    got = [(s.unit, list(s.articles)) for s in spans]
    assert got == [("preâmbulo", []),
                   ("art. 1", ["art. 1", "art. 2"]),  # the vetoed stub joins the chunk before it
                   ("art. 3", ["art. 3", "art. 4"]),  # so does the revoked one
                   ("art. 5", ["art. 5", "art. 6"]),  # a short artigo joins the next: both named
                   ("art. 7", ["art. 7", "art. 8"]),  # both wordings of art. 7, then the stub of art. 8
                   ("art. 9", ["art. 9"])]
    words = ACT.split()
    for s in spans:  # no stub carries the next artigo's text under its own label
        assert not (s.unit or "").startswith(("art. 2", "art. 4", "art. 8"))
        assert words[s.start] != "Art." or s.unit.startswith("art. " + words[s.start + 1].rstrip("º."))


def test_numeral_and_dash_on_two_lines_are_one_inciso():
    labels = [b.label for b in dv.find_boundaries(ACT)]
    assert ["art. 6 > I", "art. 6 > II", "art. 6 > III"] == [x for x in labels if x.startswith("art. 6 >")]
    small = _check_every_chunk(ACT, min_words=5, max_words=12)  # art. 6 is cut at its incisos
    units = [s.unit for s in small]
    assert {"art. 6 > I", "art. 6 > II", "art. 6 > III"} <= set(units)


def test_a_stub_with_no_chunk_before_joins_the_next_and_is_named():
    text = ("Art. 1º (VETADO)\n" + f"Art. 2º O titular {_words(30, 'dois')}.\n"
            + f"Art. 3º O prazo {_words(30, 't')}.\n")
    spans = _check_every_chunk(text)
    assert [(s.unit, list(s.articles)) for s in spans] == [("art. 2", ["art. 1", "art. 2"]), ("art. 3", ["art. 3"])]


@pytest.mark.parametrize("stub", ["(VETADO)", "(VETADO).", "(Revogado pela Lei nº 8.383, de 1991)",
                                  "[Revogado(a) pelo(a) Instrução Normativa RFB nº 2299, de 2025]",
                                  "(Revogado pela Lei nº 15.270, de 2025) Produção de efeitos",
                                  "[(Revogado pela Lei Complementar nº 227, de 2026)](https://www.planalto.gov.br/"
                                  "ccivil_03/leis/LCP/Lcp227.htm#art181) ^3gd32g",
                                  "(VETADO).      [(Incluído pela Lei Complementar nº 227, de 2026)](https://x.htm) "
                                  "^j53z5h"])
def test_stub_shapes(stub):
    words = f"Art. 11. {stub}".split()
    assert dv.is_stub(words, 0, len(words))
    words = f"Art. 11. {stub} O prazo será contado da data".split()
    assert not dv.is_stub(words, 0, len(words))  # text after the annotation: not a stub
    words = "Arts. 52 a 58 . [(Revogados pelo Decreto-lei nº 406, de 1968](https://x.htm#art13)".split()
    assert dv.is_stub(words, 0, len(words))
    words = "Art. 11. (Vide Lei nº 1, de 2020) O prazo será contado da data".split()
    assert not dv.is_stub(words, 0, len(words))


STRUCK_PAGE = """<html><body>
<p>Presidência da República</p><p>LEI Nº 9.999, DE 1 DE MARÇO DE 1999</p>
<p>Art. 1º O imposto incide sobre {one}.</p>
<p><strike>Art. 2º As deduções antigas {old}.</strike></p>
<p><strike>Art. 3º O limite antigo {old3}.</strike></p>
<p>Art. 3º O limite será {new3}. (Redação dada pela Lei nº 10.000, de 2000)</p>
<p>Art. 4º Esta Lei entra em vigor {four}.</p>
</body></html>"""


@pytest.mark.parametrize("keep", [False, True])
def test_struck_artigos_do_not_shift_the_labels(tmp_path, keep):
    page = STRUCK_PAGE.format(one=_words(25, "um"), old=_words(25, "dois"), old3=_words(25, "v"),
                              new3=_words(25, "n"), four=_words(25, "q"))
    (tmp_path / "L9999.html").write_text(page, encoding="utf-8")
    text = read_acervo(tmp_path / "L9999.html", keep_superseded=keep).documents[0].text
    spans = _check_every_chunk(text)
    words = text.split()
    for s in spans:  # the struck art. 2's words never sit under another label, and so on
        for tag, art in (("dois0", "art. 2"), ("v0", "art. 3"), ("n0", "art. 3"), ("q0", "art. 4")):
            if tag in words[s.start:s.stop]:
                assert s.unit == art
    assert ("dois0" in text) is keep


def test_real_irpf_pages_chunks_name_their_artigos(data_dir):
    """The three Planalto pages with vetoed, revoked and struck artigos (Lei 7.713 arts. 12 + 12-A, CTN 42/43)."""
    html = data_dir / "irpf" / "html"
    for page in ("L7713compilada.html", "L9250compilado.html", "L5172compilado.md"):
        text = read_acervo(html / page).documents[0].text
        words, starts = dv.words_and_line_starts(text)
        spans, _ = dv.dispositivo_spans(words, starts, min_words=20, max_words=400, chunk_words=100,
                                        query_words=20)
        by_unit = {s.unit: list(s.articles) for s in spans}
        if page == "L7713compilada.html":
            assert by_unit["art. 11"] == ["art. 11", "art. 12"]  # art. 12 (Revogado) joins the chunk before
            assert by_unit["art. 12-A"][0] == "art. 12-A"
        for s in spans:  # a label's artigo is always the first it names (or the one it continues)
            if s.articles and s.unit and s.unit.startswith("art"):
                assert s.unit.split(" > ")[0] in s.articles, (page, s)


def test_articles_column_of_the_task(tmp_path):
    (tmp_path / "acts.jsonl").write_text(
        '{"doc_id": "lei", "text": ' + __import__("json").dumps(ACT) + '}\n', encoding="utf-8")
    task = build_task(tmp_path / "acts.jsonl", chunking="dispositivo")
    assert task.corpus["articles"].map(list).tolist()[1:3] == [["art. 1", "art. 2"], ["art. 3", "art. 4"]]
    ds = task.to_dataset_dict()
    assert ds["corpus"]["articles"][1] == ["art. 1", "art. 2"]
    assert "articles" in task.manifest["rules"]["unit_columns"]


@pytest.mark.parametrize("text, labels", [
    # Planalto: a chapter inserted between II and III, its annotation and title, then art. 6-A
    ("Art. 6º Os rendimentos serão convertidos.\nCAPÍTULO II-A\n(Incluído pela Lei nº 15.270, de 2025)\n"
     "Produção de efeitos\nDA TRIBUTAÇÃO MENSAL DE ALTAS RENDAS\nArt.\n6º-A.\nA partir do mês de janeiro.\n",
     ["art. 6", "capítulo II-A", "art. 6-A"]),
    # the CTN Markdown clip: Obsidian block ids and annotations as Markdown links end the line before
    ("Art. 185. Presume-se fraudulenta a alienação. ^a1b2c3\nParágrafo único. Não se aplica. [(Redação dada pela "
     "Lcp nº 118, de 2005)](https://www.planalto.gov.br/Lcp118.htm#art1) ^fy23y8\nArt. 185-A. Na hipótese de o "
     "devedor não pagar.\n", ["art. 185", "art. 185 > parágrafo único", "art. 185-A"]),
    # SIJUT: an annotation in square brackets closes the clause before a heading
    ("Art. 102. As despesas.\n§ 2º Observa-se o disposto no art. 99.\n[Redação dada pelo(a) Instrução Normativa RFB "
     "nº 1869, de 25 de janeiro de 2019]\nSeção VI\nDas Despesas Escrituradas\nArt. 104. O contribuinte poderá.\n",
     ["art. 102", "art. 102 > § 2", "seção VI", "art. 104"]),
    # Planalto's bare annotation links, and a parágrafo único renumbered § 1 (both wordings printed)
    ("Art. 644. A dedução se aplica às despesas.\nParágrafo único. Para fins do disposto neste artigo.\nRevogado pelo\n"
     "Decreto nº 10.854, de 2021\n§ 1º O imposto será retido. (Redação dada pela Lei nº 1, de 2021)\n"
     "Art. 645. As despesas.\n",
     ["art. 644", "art. 644 > parágrafo único", "art. 644 > § 1", "art. 645"]),
    # the first artigo of an excerpt after a page header
    ("Presidência da República\nArt. 644. A dedução se aplica.\nArt. 645. As despesas.\n",
     ["art. 644", "art. 645"]),
])
def test_layouts_of_the_compiled_pages(text, labels):
    assert [b.label for b in dv.find_boundaries(text)] == labels


def test_a_citation_after_a_year_is_still_no_boundary():
    text = ("Art. 1º O prazo conta-se conforme a Lei nº 9.250, de 1995\n§ 1º do art. 7º aplica-se.\n"
            "Revogado pelo Decreto nº 1, de 2021\nArt. 2º Outro.\n")
    assert [b.label for b in dv.find_boundaries(text)] == ["art. 1", "art. 2"]


def test_cited_task_corpus_names_the_artigos(tmp_path):
    import json

    from ragcov_data.loaders.cited_questions import build_cited_task

    acts = tmp_path / "acts.jsonl"
    acts.write_text(json.dumps({"doc_id": "lei", "text": ACT}) + "\n", encoding="utf-8")
    questions = [{"qid": "q1", "question": "Quais são os deveres do titular?",
                  "references": [{"doc_id": "lei", "article": "6"}]}]
    disp = build_cited_task(acts, questions, chunking="dispositivo", warn=False).corpus
    assert [list(a) for a in disp["articles"]][1:4] == [["art. 1", "art. 2"], ["art. 3", "art. 4"],
                                                       ["art. 5", "art. 6"]]
    art = build_cited_task(acts, questions, chunking="article", warn=False).corpus
    assert [list(a) for a in art["articles"]][1:3] == [["art. 1"], ["art. 2"]]  # one artigo a chunk
    words = build_cited_task(acts, questions, chunking="words", warn=False).corpus
    assert all(len(a) == 0 for a in words["articles"])


def test_a_heading_that_ends_the_document_joins_the_last_artigo_chunk():
    """Article chunks and dispositivo units come from one scan of the boundaries; a heading with no unit
    after it keeps its own label as a unit and joins the artigo before it as an article chunk."""
    from ragcov_data.loaders.articles import article_spans

    text = ("LEI Nº 1, DE 2000\nArt. 1º O imposto é devido por todos os contribuintes.\n"
            "Art. 2º Esta lei entra em vigor na data de sua publicação.\nCAPÍTULO II\nDAS DISPOSIÇÕES FINAIS\n")
    words, starts = dv.words_and_line_starts(text)
    assert dv.unit_segments(words, starts) == [(0, 5, "preâmbulo"), (5, 15, "art. 1"), (15, 27, "art. 2"),
                                               (27, len(words), "capítulo II")]
    spans, structured = article_spans(words, starts, chunk_words=100, query_words=20)
    assert structured
    assert [(s.start, s.stop, s.unit) for s in spans] == [(0, 5, "preâmbulo"), (5, 15, "art. 1"),
                                                          (15, len(words), "art. 2")]
