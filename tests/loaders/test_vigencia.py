"""Vigência: compiled acts read as published (Planalto ``<strike>``, SIJUT ``[Revogado(a) ...]``, Markdown
``~~``, plain-text pairs), the status a document states, and the ``in_force`` column of the task.

Snippets are written in the layout of the real pages (Planalto: windows-1252 bytes, ``<p>`` per dispositivo,
annotations as links; SIJUT: Angular ``div.segmento`` with an icon ligature and the annotation link); the
real pages of the shared data are read too.
"""
from __future__ import annotations

import re
import warnings

import pytest

from ragcov_data import build_task, load_dataset
from ragcov_data.legal import vigencia as vg
from ragcov_data.legal.acervo import read_acervo
from ragcov_data.errors import InputFileError

OLD = ("Parágrafo único. Para fins do disposto neste artigo, entende-se como aprovação prévia pelo Ministério do "
       "Trabalho a apresentação de documento hábil definido em ato conjunto dos Ministros de Estado")
NEW = "§ 1º O imposto será retido pela fonte pagadora no mês do pagamento dos rendimentos aos beneficiários"

PLANALTO = f"""<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252">
<title>D9580</title></head><body>
<p align="center"><font face="Arial" size="2" color="#808000"><b>Presidência da República</b></font></p>
<p class="04ParteNormativa">Art. 644. A dedução de que trata esta Seção somente se aplica às despesas com PAT
<a href="https://www.planalto.gov.br/ccivil_03/LEIS/L6321.htm#art1">(Lei nº 6.321, de 1976, art. 1º)</a>.</p>
<p class="04ParteNormativa"><strike><a name="art644p"></a>{OLD}</strike>.&nbsp;&nbsp;
<font face="Arial" size="2"><a href="https://www.planalto.gov.br/D10854.htm#art187">Revogado pelo </a>
<a href="https://www.planalto.gov.br/D10854.htm#art187">Decreto nº 10.854, de 2021</a></font></p>
<p class="04ParteNormativa"><span style="text-decoration: line-through">§ 1º O imposto antigo era retido na
declaração.</span></p>
<p class="04ParteNormativa">{NEW} <a href="https://www.planalto.gov.br/L1.htm">(Redação dada pela Lei nº 1, de
2021)</a></p>
<p class="04ParteNormativa">Art. 645. As despesas serão comprovadas pelos documentos fiscais.</p>
</body></html>"""

SIJUT = """<html><head><meta charset="UTF-8"></head><body>
<div class="segmento" id="1"><span class="conteudo-segmento-ato" title="Tipo: Artigo">Art. 5º São isentos os
seguintes rendimentos:</span></div>
<div class="segmento" id="2"><span class="conteudo-segmento-ato" title="Tipo: Inciso">VIII - dividendo anual
mínimo decorrente de quotas do Fundo Nacional de Desenvolvimento (FND);</span></div>
<div class="segmento" id="3"><span class="conteudo-segmento-ato" title="Tipo: Inciso">IX -</span> &nbsp;&nbsp;
<div title="Anotação" class="icone-ancora-ativa azul"><em class="material-icons">import_export</em></div>
<a class="ancora" href="https://normasinternet2.receita.fazenda.gov.br/#/consulta/externa/148383#2663039">
<span>[Revogado(a) pelo(a) Instrução Normativa RFB nº 2299, de 17 de dezembro de 2025]</span></a>
<div class="inicio-vigencia"><em class="material-icons">date_range</em></div></div>
<div class="segmento" id="4"><span class="conteudo-segmento-ato" title="Tipo: Paragrafo">§ 1º A isenção de que
trata o inciso IV do caput aplica-se aos rendimentos pagos.</span></div>
</body></html>"""

MARKDOWN = """Art. 77. As taxas cobradas pela União têm como fato gerador o exercício do poder de polícia.

~~§ 3º A lei poderá dispor que uma parcela, não superior a 20% (vinte por cento), do impôsto de que trata o inciso I seja destinada ao custeio do respectivo serviço de lançamento e arrecadação.~~ [(Suspensa a execução pela RSF nº 337, de 1983)](https://www.planalto.gov.br/ccivil_03/Congresso/RSF/RSF337-83.htm)

Art. 78. Considera-se poder de polícia a atividade da administração pública.
"""

# Planalto text after the markup is gone: the 2010 alínea printed twice, the later with (Redação dada ...)
PLAIN = """VI - a quantia, correspondente à parcela isenta dos rendimentos de aposentadoria, de:
(Redação dada pela Lei nº 11.482, de 2007)
c) R$ 1.434,59 (mil, quatrocentos e trinta e quatro reais e cinqüenta e nove centavos), por mês, para o ano-calendário de 2009;
(Incluído pela Lei nº 11.482, de 2007)
d) R$ 1.499,15 (mil, quatrocentos e noventa e nove reais e quinze centavos), por mês, para o ano-calendário de 2010;
(Redação dada pela Medida Provisória nº 528, de 2011)
Produção de efeitos
d) R$ 1.499,15 (mil, quatrocentos e noventa e nove reais e quinze centavos), por mês, para o ano-calendário de 2010; (Redação dada pela Lei nº 12.469, de 2011)
e) R$ 1.566,61 (mil, quinhentos e sessenta e seis reais e sessenta e um centavos), por mês, para o ano-calendário de 2011; (Incluído pela Lei nº 12.469, de 2011)
"""


def _write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding))
    return path


@pytest.fixture
def acervo_dir(tmp_path):
    root = tmp_path / "acervo"
    root.mkdir()
    _write(root / "D9580.html", PLANALTO, "cp1252")
    _write(root / "IN.html", SIJUT)
    _write(root / "CTN.md", MARKDOWN)
    _write(root / "L9250.txt", PLAIN)
    return root


def _docs(acervo):
    return {d.doc_id: d for d in acervo.documents}


def test_superseded_wording_is_taken_out_and_counted(acervo_dir):
    acervo = read_acervo(acervo_dir)
    docs = _docs(acervo)
    planalto = docs["D9580.html"].text
    assert "Presidência da República" in planalto  # windows-1252 page decoded by its declared charset
    assert OLD not in " ".join(planalto.split()) and "imposto antigo" not in planalto
    assert NEW in " ".join(planalto.split()) and "Art. 645." in planalto
    sijut = docs["IN.html"].text
    assert "IX -" not in sijut and "Revogado(a)" not in sijut and "VIII - dividendo" in sijut
    assert "import_export" not in sijut and "date_range" not in sijut  # icon ligatures are not text
    ctn = docs["CTN.md"].text
    assert "~~" not in ctn and "impôsto" not in ctn and "Art. 78." in ctn
    plain = docs["L9250.txt"].text
    assert plain.count("R$ 1.499,15") == 1 and "Lei nº 12.469" in plain and "Medida Provisória nº 528" not in plain
    assert all(d.superseded == () for d in acervo.documents)
    info = acervo.vigencia
    removed = [OLD, "§ 1º O imposto antigo era retido na declaração.",
               "IX - [Revogado(a) pelo(a) Instrução Normativa RFB nº 2299, de 17 de dezembro de 2025]",
               MARKDOWN.split("~~")[1], PLAIN.split("2009;")[1].split("d)", 1)[1].split("d)")[0] + "d)"]
    assert info["passages"] == 5 and info["documents"] == 4 and not info["keep_superseded"]
    assert info["words"] == sum(len(r.split()) for r in removed)
    assert info["annotated"] and acervo.metadata_columns[-1] == "status"


def test_keep_superseded_keeps_the_text_and_its_spans(acervo_dir):
    acervo = read_acervo(acervo_dir, keep_superseded=True)
    docs = _docs(acervo)
    d = docs["D9580.html"]
    struck = [" ".join(d.text[a:b].split()) for a, b in d.superseded]
    assert struck == [OLD, "§ 1º O imposto antigo era retido na declaração."]
    md = docs["CTN.md"]
    assert [md.text[a:b] for a, b in md.superseded][0].startswith("§ 3º A lei poderá") and "~~" not in md.text
    plain = docs["L9250.txt"]
    (a, b), = plain.superseded
    assert plain.text[a:b].startswith("d) R$ 1.499,15") and "Medida Provisória nº 528" in plain.text[a:b]
    assert plain.text[b:].startswith("d) R$ 1.499,15")
    assert acervo.vigencia["keep_superseded"] and acervo.vigencia["passages"] == 5


def test_pairs_need_redacao_dada_and_the_same_marker():
    text = "Art. 1º O prazo.\n§ 1º Um.\n§ 2º Dois.\n§ 2º Dois de novo.\nArt. 2º Outro.\n"
    assert vg.pair_spans(text) == []  # a repeated marker without (Redação dada ...) is left alone
    text = ("Art. 8º A base de cálculo será a antiga.\n§ 1º Parágrafo antigo.\n"
            "Art. 8º A base de cálculo será a nova. (Redação dada pela Lei nº 9, de 1999)\nArt. 9º Outro.\n")
    (a, b), = vg.pair_spans(text)
    assert text[a:b] == "Art. 8º A base de cálculo será a antiga.\n§ 1º Parágrafo antigo.\n"
    text = "Art. 8º Caput.\n§ 1º Antigo.\nArt. 9º Outro.\n§ 1º Novo. (Redação dada pela Lei nº 9, de 1999)\n"
    assert vg.pair_spans(text) == []  # another artigo between: not the same provision


DESPACHO = """DESPACHO Nº 2.124, DE 9 DE AGOSTO DE 2016
O SUPERINTENDENTE DE CONCESSÕES E AUTORIZAÇÕES DE GERAÇÃO DA AGÊNCIA NACIONAL DE ENERGIA ELÉTRICA - ANEEL,
no uso das suas atribuições, resolve aprovar o registro da solicitação de DRI-PCH.
HÉLVIO NEVES GUERRA
(Revogado pelo DSP SCG/ANEEL 2.124 de 09.08.2016)
Código Único de Documento
"""
PORTARIA = """PORTARIA Nº 101, DE 22 DE MARÇO DE 2016
Art. 10. Esta Portaria entra em vigor na data de sua publicação.
Art. 11. Fica revogada a Portaria MME nº 182, de 11 de maio de 2016.
FERNANDO COELHO FILHO
Este texto não substitui o publicado no D.O. de 26.10.2016, seção 1, p. 49, v. 153, n. 206.
(Revogada pela PRT MME 364 de 13.09.2017)
ANEXO I
REQUERIMENTO PADRÃO
Art. 1º do requerimento: nome.
"""
LEI = """LEI Nº 14.182, DE 12 DE JULHO DE 2021
Art. 1º A desestatização será executada. Regulamento
(Revogado pela
Medida Provisória nº 1.304, de 2025)
Art. 2º O leilão observará o seguinte.
(Suspensos os efeitos do art. 1º pela ADI 7.000)
Art. 3º Esta Lei entra em vigor na data de sua publicação.
"""
SIJUT_HEADER = """Instrução Normativa SRF nº 15, de 6 de fevereiro de 2001
Histórico de alterações
[Alterado(a) pelo(a) Instrução Normativa SRF nº 208, de 2002]
[Revogado(a) pelo(a) Instrução Normativa RFB nº 1500, de 29 de outubro de 2014]
Art. 1º Esta Instrução Normativa dispõe sobre o imposto.
Art. 2º Revogam-se as disposições em contrário.
"""
SUSPENSA = """RESOLUÇÃO Nº 5, DE 2020
Art. 1º Fica aprovado o regulamento.
Art. 2º Esta Resolução entra em vigor.
(Suspensa a execução pela Resolução do Senado Federal nº 9, de 2021)
"""


@pytest.mark.parametrize("text, status", [
    (DESPACHO, "revoked"), (PORTARIA, "revoked"), (SIJUT_HEADER, "revoked"), (SUSPENSA, "suspended"),
    (LEI, None),  # annotations inside the articulated text are about provisions
    ("Art. 22. Ficam revogados:\nI - o Decreto nº 4.550, de 2002;\n", None),  # an act revoking another
    ("comunica que estão suspensos os efeitos do Despacho nº 2.669, de 31 de agosto de 2021.", None),
])
def test_document_status(text, status):
    assert vg.document_status(text) == status


def test_aneel_statuses_measured(aneel_fulltext):
    acervo = read_acervo(aneel_fulltext)
    assert acervo.vigencia["statuses"] == {"revoked": 28, "suspended": 0}
    assert not acervo.vigencia["annotated"]  # a table source is stored text: no status column by default
    assert "status" not in acervo.metadata_columns
    revoked = [d for d in acervo.documents if d.status == "revoked"]
    assert all(re.search(r"^\s*[(\[]\s*Revogad", d.text, re.M) for d in revoked)
    assert {d.metadata["doc_type"] for d in revoked} == {"despacho", "portaria", "resolucao_autorizativa",
                                                         "resolucao_normativa"}


def test_task_in_force_column(acervo_dir, tmp_path):
    long_old = " ".join(f"antigo{i}" for i in range(60))
    page = PLANALTO.replace("O imposto antigo era retido na\ndeclaração.", long_old)
    _write(acervo_dir / "D9580.html", page, "cp1252")
    _write(acervo_dir / "Revogado.txt", DESPACHO + " ".join(f"palavra{i}" for i in range(60)) + "\n")
    kept = build_task(acervo_dir, chunk_words=20, query_words=5, keep_superseded=True)
    corpus = kept.corpus
    assert corpus["in_force"].dtype == bool
    d = corpus[corpus["doc_id"] == "D9580.html"]
    struck = {f"antigo{i}" for i in range(60)} | set(OLD.split())

    def share(t):
        return sum(w in struck for w in t.split()) / len(t.split())

    assert (~d["in_force"]).sum() >= 3
    # per dispositivo: a window all of struck words is out of force, one of no struck word in force
    assert all(not f for t, f in zip(d["text"], d["in_force"]) if share(t) == 1)
    assert all(f for t, f in zip(d["text"], d["in_force"]) if share(t) == 0)
    assert all(u for t, u in zip(d["text"], d["units_not_in_force"]) if "antigo0" in t)  # struck: its unit named
    assert ((d["share_not_in_force"] >= 0) & (d["share_not_in_force"] <= 1)).all()
    assert not corpus[corpus["doc_id"] == "Revogado.txt"]["in_force"].any()  # the act states it is revoked
    assert set(corpus[corpus["doc_id"] == "Revogado.txt"]["status"]) == {"revoked"}
    assert kept.manifest["config"]["keep_superseded"] is True
    assert kept.manifest["vigencia"]["superseded"].startswith("kept")
    dropped = build_task(acervo_dir, chunk_words=20, query_words=5)
    assert "keep_superseded" not in dropped.manifest["config"]
    assert not dropped.corpus["text"].str.contains("antigo").any()
    assert dropped.corpus[dropped.corpus["doc_id"] == "D9580.html"]["in_force"].all()
    assert dropped.manifest["vigencia"]["superseded_words"] == kept.manifest["vigencia"]["superseded_words"]
    ds = dropped.to_dataset_dict()
    assert ds["corpus"].features["in_force"].dtype == "bool"


def test_load_dataset_passes_keep_superseded(acervo_dir, tmp_path):
    kw = dict(data_files=str(acervo_dir), chunk_words=20, query_words=5, cache_dir=tmp_path / "hf",
              show_progress=False)
    kept = load_dataset("aneel_taesa", keep_superseded=True, **kw)
    dropped = load_dataset("aneel_taesa", **kw)
    assert kept["corpus"].features["in_force"].dtype == "bool"
    assert not all(kept["corpus"]["in_force"]) and len(kept["corpus"]) > len(dropped["corpus"])


def test_cli_option_reaches_the_task():
    import argparse

    from ragcov_data.cli._task_options import add_task_source, chunking_kwargs

    p = argparse.ArgumentParser()
    add_task_source(p)
    assert chunking_kwargs(p.parse_args(["--keep-superseded"])) == {"keep_superseded": True}
    assert chunking_kwargs(p.parse_args([])) == {}
    assert chunking_kwargs(p.parse_args(["--chunking", "dispositivo", "--keep-superseded"])) == {
        "chunking": "dispositivo", "keep_superseded": True}


def test_a_folder_of_pdfs_names_them(tmp_path):
    root = tmp_path / "pdfs"
    root.mkdir()
    (root / "despacho_2124.pdf").write_bytes(b"%PDF-1.4\n")
    (root / "voto.PDF").write_bytes(b"%PDF-1.4\n")
    with pytest.raises(InputFileError) as exc:
        read_acervo(root)
    msg = str(exc.value)
    assert "pdfs/despacho_2124.pdf (unsupported type .pdf)" in msg and "pdfs/voto.PDF" in msg
    assert "convert it to .txt first" in msg


# --------------------------------------------------------------------------- the shared pages


@pytest.fixture(scope="module")
def irpf_html(data_dir):
    folder = data_dir / "irpf" / "html"
    if not folder.is_dir():
        pytest.skip("the shared irpf pages are not here")
    return folder


def test_the_shared_pages(irpf_html):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dropped, kept = read_acervo(irpf_html), read_acervo(irpf_html, keep_superseded=True)
    d, k = _docs(dropped), _docs(kept)
    rir = " ".join(d["D9580.html"].text.split())
    assert "Art. 644. A dedução de que trata esta Seção" in rir and "entende-se como aprovação prévia" not in rir
    assert "entende-se como aprovação prévia" in " ".join(k["D9580.html"].text.split())
    assert d["L9250compilado.html"].text.count("1.499,15") == 1 and k["L9250compilado.html"].text.count("1.499,15") == 2
    assert "Vide Medida Provisória nº 1.303" not in d["L7713compilada.html"].text  # struck annotations
    assert "Revogado(a)" not in d["IN_RFB_1500_2014.html"].text.split("resolve:", 1)[1]
    assert dropped.vigencia["passages"] == kept.vigencia["passages"] == 26
    assert dropped.vigencia["words"] == 709
    for doc in kept.documents:  # every kept span is whole words of the text
        for a, b in doc.superseded:
            assert doc.text[a:b].split() and (a == 0 or doc.text[a - 1].isspace() or doc.text[a] in "§[(")
    # words taken out + words left = words kept (up to punctuation glued to a struck span, e.g. "</strike>.")
    left = sum(len(x.text.split()) for x in dropped.documents)
    assert 0 <= left + 709 - sum(len(x.text.split()) for x in kept.documents) <= dropped.vigencia["passages"]
