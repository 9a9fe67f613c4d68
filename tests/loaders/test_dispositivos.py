"""``chunking="dispositivo"``: the parser of Brazilian normative text and the chunks it gives.

The acts below are written out in the layout text extraction gives them (planalto.gov.br HTML for the lei
and the decreto: short lines, blank lines between dispositivos, the article number on its own line; PDF for
the resolução: ``Art. 1 o``, ``Art.2º``), with citations of other articles broken across lines.
"""
from __future__ import annotations

import json
import re

import pytest

from ragcov_data import RagcovError, build_task, load_dataset
from ragcov_data.loaders import chunking as ch
from ragcov_data.loaders import dispositivos as dv
from ragcov_data.tasks.record import manifest_of

LEI = """L14999

 Presidência da República
 Secretaria-Geral

 LEI Nº 14.999, DE 3 DE MARÇO DE 2023

 Dispõe sobre a comercialização de energia
 elétrica e altera a Lei nº 9.427, de 26 de dezembro de 1996.

 O PRESIDENTE DA REPÚBLICA
 Faço saber que o Congresso Nacional decreta e eu sanciono a seguinte Lei:

 TÍTULO I

 DISPOSIÇÕES PRELIMINARES

 CAPÍTULO I

 DO ÂMBITO DE APLICAÇÃO

 Art. 1º
 Esta Lei estabelece normas gerais para a comercialização de energia elétrica
 no ambiente regulado, observado o disposto no
 § 1º do art. 7º da Lei nº 14.182, de 12 de julho de 2021, e abrange:

 I -
 as concessionárias de distribuição de energia elétrica;

 II - as permissionárias e autorizadas, nos termos do art.
 10 da Lei nº 9.074, de 7 de julho de 1995; e

 III -
 os agentes de comercialização, desde que:

 a)
 estejam registrados na câmara de comercialização;

 b) não tenham débitos com a União.

 § 1º
 O disposto neste artigo aplica-se também aos contratos celebrados antes
 da publicação desta Lei, conforme o
 § 2º do art. 5º desta Lei.

 § 2º (VETADO).

 Art. 1º-A
 Os contratos de que trata o art. 1º serão registrados na câmara. (Incluído pela Lei nº 15.001, de 2024)
 Vigência

 CAPÍTULO II

 DAS DEFINIÇÕES

 Art. 2º Para os fins desta Lei, considera-se:

 I - energia assegurada: o montante de energia que pode ser comercializado; e

 II - contrato regulado: o contrato celebrado no ambiente regulado.

 Parágrafo único.
 A Agência Nacional de Energia Elétrica - ANEEL regulamentará o disposto
 neste artigo, observado o
 art. 3º desta Lei.

 Art. 10. Esta Lei entra em vigor na data de sua publicação.

 Brasília, 3 de março de 2023; 202º da Independência e 135º da República.
"""

LEI_UNITS = ["preâmbulo", "título I", "capítulo I", "art. 1", "art. 1 > I", "art. 1 > II", "art. 1 > III",
             "art. 1 > III > a", "art. 1 > III > b", "art. 1 > § 1", "art. 1 > § 2", "art. 1-A", "capítulo II",
             "art. 2", "art. 2 > I", "art. 2 > II", "art. 2 > parágrafo único", "art. 10"]

DECRETO = """D11999

 Presidência da República

 DECRETO Nº 11.999, DE 5 DE ABRIL DE 2023

 Altera o Decreto nº 9.915, de 16 de julho de 2019.

 O
 PRESIDENTE DA REPÚBLICA , no uso da atribuição que lhe confere o art. 84, caput , inciso IV,
 da Constituição, e tendo em vista o disposto no art.
 4º da Lei nº 5.899, de 5 de julho de 1973,

 DECRETA :

 Art.
 1º \xa0O Decreto nº 9.915, de
 16 de julho de 2019 , passa a vigorar com as seguintes alterações:

 \x93Art. 4º\xa0
 .......................................................................................................

 § 9º
 \xa0O prazo para conclusão dos trabalhos do Comitê será de duzentos dias, contado
 na forma do
 § 2º do art. 3º deste Decreto.

 ...........................................................................................................\x94
 (NR)

 Art.
 2º\xa0 Fica revogado o
 Decreto nº 10.762, de 2 de agosto de 2021 .

 Art.
 3º \xa0Este Decreto entra em vigor na data de sua publicação.

 Brasília, 5 de abril de 2023; 202º da Independência e 135º da República.
"""

DECRETO_UNITS = ["preâmbulo", "art. 1", "art. 1 > art. 4", "art. 1 > art. 4 > § 9", "art. 2", "art. 3"]

RESOLUCAO = """AGÊNCIA NACIONAL DE ENERGIA ELÉTRICA – ANEEL

RESOLUÇÃO NORMATIVA Nº 1.099, DE 10 DE JULHO DE 2023

Estabelece os procedimentos para o cadastro de agentes e dá outras providências.

O DIRETOR-GERAL DA AGÊNCIA NACIONAL DE ENERGIA ELÉTRICA – ANEEL, no uso de suas atribuições
regimentais, tendo em vista o disposto no art. 2º da Lei nº 9.427, de 26 de dezembro de 1996, e o que
consta do Processo nº 48500.001234/2023-00, resolve:

CAPÍTULO I
DAS DISPOSIÇÕES GERAIS

Seção I
Do Objeto

Art. 1 o Esta Resolução estabelece os procedimentos para o cadastro de agentes do setor elétrico
na forma do Anexo desta Resolução.

Art.2º O cadastro deve conter, conforme o
§ 2º do art. 5º desta Resolução:
I – a razão social do agente;
II – o número de inscrição no CNPJ; e
III – os dados do responsável, a saber:
a) nome completo;
b) endereço, com:
1. logradouro;
2. município.
§ 1º O agente deve manter o cadastro atualizado, nos termos do art.
10 da Resolução Normativa nº 414, de 2010.
§ 2º A ANEEL pode solicitar documentos complementares.

Seção II
Da Atualização

Art. 3º A atualização do cadastro deve ser feita em até 30 (trinta) dias da alteração.
Parágrafo único. O prazo de que trata o caput pode ser prorrogado uma vez, a pedido do agente.

Art. 4º Esta Resolução entra em vigor na data de sua publicação.

ANDRÉ PEPITONE DA NÓBREGA

ANEXO
MODELO DE CADASTRO DE AGENTES
O modelo de cadastro compreende os campos listados na tabela a seguir, preenchidos pelo agente.
Art. 1º O formulário deve ser enviado por meio eletrônico.
"""

RESOLUCAO_UNITS = ["preâmbulo", "capítulo I", "seção I", "art. 1", "art. 2", "art. 2 > I", "art. 2 > II",
                   "art. 2 > III", "art. 2 > III > a", "art. 2 > III > b", "art. 2 > III > b > 1",
                   "art. 2 > III > b > 2", "art. 2 > § 1", "art. 2 > § 2", "seção II", "art. 3",
                   "art. 3 > parágrafo único", "art. 4", "anexo", "anexo > art. 1"]

DESPACHO = """AGÊNCIA NACIONAL DE ENERGIA ELÉTRICA – ANEEL

DESPACHO Nº 2.826, DE 4 DE OUTUBRO DE 2022

O DIRETOR-GERAL DA AGÊNCIA NACIONAL DE ENERGIA ELÉTRICA – ANEEL, no uso de suas atribuições regimentais,
tendo em vista o disposto no
art. 4º do Anexo I do Decreto nº 2.335, de 1997, e o que consta do Processo nº 48500.002509/2014-96,
decide: (i) registrar o requerimento de outorga da central geradora; (ii) determinar a publicação deste
despacho. """ + " ".join(f"palavra{i}" for i in range(150))

ACTS = {"lei": LEI, "decreto": DECRETO, "resolucao_normativa": RESOLUCAO, "despacho": DESPACHO}
#: Citations broken across lines in the acts above: where a chunk must never start.
CITATIONS = ["§ 1º do art. 7º da Lei nº 14.182", "10 da Lei nº 9.074", "§ 2º do art. 5º desta Lei",
             "art. 3º desta Lei", "§ 2º do art. 3º deste Decreto", "4º da Lei nº 5.899",
             "§ 2º do art. 5º desta Resolução", "10 da Resolução Normativa", "Anexo desta Resolução",
             "art. 4º do Anexo I"]
#: What a dispositivo starts with (the text after a marker is never checked here).
MARKER = re.compile(r"^(\x93?Art\.?|§|Parágrafo único|[IVX]+ [-–]|[a-z]\)|\d\.|TÍTULO|CAPÍTULO|Seção|ANEXO)")


def _labels(text: str) -> list[str]:
    words, starts = dv.words_and_line_starts(text)
    bounds = dv.find_boundaries(words, starts)
    return (["preâmbulo"] if bounds and bounds[0].start > 0 else []) + [b.label for b in bounds]


@pytest.mark.parametrize("text, units", [(LEI, LEI_UNITS), (DECRETO, DECRETO_UNITS),
                                         (RESOLUCAO, RESOLUCAO_UNITS)])
def test_dispositivos_found_with_their_labels(text, units):
    assert _labels(text) == units


def test_despacho_has_no_structure():
    assert dv.find_boundaries(DESPACHO) == []


def test_ocr_and_glued_variants():
    text = "resolve:\nArt.1º Fica aprovado o regulamento.\nArt. 2o Fica revogada a norma.\nArt. 3 o Esta entra em vigor."
    assert [b.label for b in dv.find_boundaries(text)] == ["art. 1", "art. 2", "art. 3"]


@pytest.mark.parametrize("line_before, candidate", [
    ("observado o disposto no", "§ 1º do art. 7º da Lei"),   # citation word before
    ("nos termos do art.", "10 da Lei nº 9.074"),            # not a marker at all
    ("conforme previsto.", "§ 3º do art. 2º desta Lei"),     # lower-case word after the number
    ("como dispõe o", "Art. 5º, § 2º, da Lei"),              # a comma after the number
])
def test_citations_are_not_boundaries(line_before, candidate):
    text = f"resolve:\nArt. 1º Fica estabelecido o seguinte, {line_before}\n{candidate} e o mais.\n"
    assert [b.label for b in dv.find_boundaries(text)] == ["art. 1"]


def test_sequence_rejects_a_lower_number():
    """A paragraph number that does not increase inside its artigo is text, not a new unit."""
    text = "resolve:\nArt. 1º Fica estabelecido.\n§ 2º O prazo é de dez dias.\n§ 1º O mesmo prazo vale.\n"
    assert [b.label for b in dv.find_boundaries(text)] == ["art. 1", "art. 1 > § 2"]


@pytest.fixture(scope="module")
def acts_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("acts") / "acts.jsonl"
    path.write_text("".join(json.dumps({"doc_id": k, "doc_type": k, "text": v}, ensure_ascii=False) + "\n"
                            for k, v in ACTS.items()), encoding="utf-8")
    return path


def _check_invariants(task, texts: dict[str, str], min_words: int, max_words: int) -> None:
    corpus = task.corpus
    for doc_id, group in corpus.groupby("doc_id", sort=False):
        # every word kept, in order
        assert " ".join(group["text"]).split() == texts[doc_id].split(), doc_id
        assert group["chunk_index"].tolist() == list(range(len(group)))
        assert group["_id"].tolist() == [f"{doc_id}#{i:04d}" for i in range(len(group))]
        sizes = group["text"].str.split().str.len()
        assert sizes.min() >= min_words and sizes.max() <= max_words + min_words - 1, doc_id
    q = task.queries.set_index("_id")["text"]
    assert all(q[i] == " ".join(t.split()[:20]) for i, t in zip(corpus["_id"], corpus["text"]))


def test_acts_chunked(acts_file):
    task = build_task(acts_file, chunking="dispositivo", min_words=20, max_words=60, chunk_words=50)
    _check_invariants(task, ACTS, 20, 60)
    corpus = task.corpus
    structured = corpus[corpus["unit"].notna()]
    assert set(structured["doc_id"]) == {"lei", "decreto", "resolucao_normativa"}
    for unit, text, cont in zip(structured["unit"], structured["text"], structured["continued"]):
        assert cont or unit == "preâmbulo" or MARKER.match(text), (unit, text[:40])
    for text in corpus["text"]:
        assert not any(text.startswith(c) for c in CITATIONS), text[:40]
    # the labels are the dispositivos' where the chunk starts
    assert set(structured["unit"]) <= set(LEI_UNITS + DECRETO_UNITS + RESOLUCAO_UNITS)
    lei = corpus[corpus["doc_id"] == "lei"]
    assert lei["text"].iloc[0].startswith("L14999") and lei["unit"].iloc[0] == "preâmbulo"
    starts = dict(zip(lei["unit"], lei["text"]))
    assert starts["art. 1"].startswith("TÍTULO I DISPOSIÇÕES PRELIMINARES CAPÍTULO I DO ÂMBITO DE APLICAÇÃO Art. 1º")
    assert starts["art. 2"].startswith("CAPÍTULO II DAS DEFINIÇÕES Art. 2º")  # headings join the unit after them
    assert starts["art. 10"].startswith("Art. 10. Esta Lei")


PREAMBLE = "O DIRETOR-GERAL DA AGÊNCIA, no uso de suas atribuições regimentais e tendo em vista o que consta do Processo nº 1, resolve:\n"


def _spans(text: str, **sizes) -> list[tuple[str, bool, int]]:
    words, starts = dv.words_and_line_starts(text)
    spans, structured = dv.dispositivo_spans(words, starts, chunk_words=100, query_words=20, **sizes)
    assert structured
    return [(s.unit, s.continued, s.stop - s.start) for s in spans]


def test_long_units_split_and_flagged(acts_file):
    """A unit with no lower level is cut into windows of max_words; the windows after the first are flagged."""
    text = PREAMBLE + "Art. 1º " + " ".join(f"W{i}" for i in range(130)) + ".\nArt. 2º Fim " + "X " * 30
    assert _spans(text, min_words=20, max_words=50) == [
        ("preâmbulo", False, 22), ("art. 1", False, 50), ("art. 1", True, 50), ("art. 1", True, 32),
        ("art. 2", False, 33)]
    # an artigo longer than the maximum is cut at its parágrafos, a parágrafo at its incisos
    text = (PREAMBLE + "Art. 1º Caput " + "C " * 25 + "\n§ 1º Primeiro " + "P " * 25 + ":\nI - inciso " + "I " * 25
            + ";\nII - inciso " + "J " * 25 + ".\n§ 2º Segundo " + "S " * 25)
    assert _spans(text, min_words=20, max_words=60) == [
        ("preâmbulo", False, 22), ("art. 1", False, 28), ("art. 1 > § 1", False, 29), ("art. 1 > § 1 > I", False, 29),
        ("art. 1 > § 1 > II", False, 29), ("art. 1 > § 2", False, 28)]
    assert _spans(text, min_words=20, max_words=100) == [
        ("preâmbulo", False, 22), ("art. 1", False, 28), ("art. 1 > § 1", False, 87), ("art. 1 > § 2", False, 28)]
    task = build_task(acts_file, chunking="dispositivo", min_words=20, max_words=30)
    lei = task.corpus[task.corpus["doc_id"] == "lei"]
    assert {"art. 1 > I", "art. 1 > § 1"} <= set(lei["unit"])  # the lei's art. 1 (> 30 words) cut at its parts


def test_short_units_merge_with_the_next_of_their_artigo():
    text = (PREAMBLE + "Art. 1º Curto.\n§ 1º Também curto.\n§ 2º " + "Y " * 25 + "\nArt. 2º " + "Z " * 25
            + "\n§ 1º Curto no fim.")
    # art. 1 (35 words) is cut: its caput and § 1 (4 words each) join § 2; art. 2's short § 1 joins the chunk before
    assert _spans(text, min_words=20, max_words=30) == [("preâmbulo", False, 22), ("art. 1", False, 34),
                                                         ("art. 2", False, 32)]
    assert _spans(text, min_words=20, max_words=400) == [("preâmbulo", False, 22), ("art. 1", False, 34),
                                                          ("art. 2", False, 32)]
    # a short last unit with no room before it joins the next artigo
    text = PREAMBLE + "Art. 1º " + "A " * 45 + "fim.\n§ 1º Curto.\nArt. 2º " + "B " * 25
    assert _spans(text, min_words=20, max_words=30) == [("preâmbulo", False, 22), ("art. 1", False, 48),
                                                         ("art. 1 > § 1", False, 30)]


def test_fallback_is_word_windows(acts_file):
    task = build_task(acts_file, chunking="dispositivo", chunk_words=50)
    words = DESPACHO.split()
    rows = task.corpus[task.corpus["doc_id"] == "despacho"]
    assert rows["text"].tolist() == [" ".join(words[a:b]) for a, b in ch.chunk_spans(len(words), 50, 20)]
    assert rows["unit"].isna().all() and not rows["continued"].any()
    counts = task.manifest["counts"]
    assert (counts["documents_structured"], counts["documents_fallback"]) == (3, 1)
    assert counts["chunks_fallback"] == len(rows)


def test_settings_errors():
    with pytest.raises(RagcovError, match=r"`chunking` must be one of \['words', 'dispositivo'\]; got 'artigo'"):
        dv.settings("artigo", None, None, 20)
    with pytest.raises(RagcovError, match="`max_words` applies to chunking='dispositivo'"):
        dv.settings("words", None, 200, 20)
    with pytest.raises(RagcovError, match=r"`min_words` \(10\) must be >= `query_words` \(20\)"):
        dv.settings("dispositivo", 10, None, 20)
    with pytest.raises(RagcovError, match=r"`max_words` \(30\) must be >= `min_words` \(40\)"):
        dv.settings("dispositivo", 40, 30, 20)
    assert dv.settings("dispositivo", None, None, 25) == (25, 400)
    assert dv.config_name(400, 20, 100, 20) == "dispositivo"
    assert dv.config_name(200, 30, 50, 20) == "dispositivo-200-min30-w50"


# --------------------------------------------------------------------------- the real ANEEL sample


@pytest.fixture(scope="module")
def disp_task(aneel_fulltext):
    return build_task(aneel_fulltext, chunking="dispositivo")


def test_aneel_sample_invariants(disp_task, aneel_records, aneel_fulltext, aneel_task, tmp_path):
    texts = {r["doc_id"]: r["text"] for r in aneel_records}
    _check_invariants(disp_task, texts, 20, 400)
    corpus = disp_task.corpus
    counts = disp_task.manifest["counts"]
    assert counts["documents_structured"] + counts["documents_fallback"] == len(aneel_records)
    assert counts["chunks_fallback"] == int(corpus["unit"].isna().sum())
    assert counts["chunks_continued"] == int(corpus["continued"].sum())
    # structured documents are among those with an "Art." starting a line; every act of these types is one
    with_art = {r["doc_id"] for r in aneel_records if re.search(r"(?m)^\s*\S?Art\.?\s*\d", r["text"])}
    structured = set(corpus.loc[corpus["unit"].notna(), "doc_id"])
    assert structured <= with_art
    acts = {r["doc_id"] for r in aneel_records if r["doc_type"] in ("lei", "portaria", "resolucao_normativa",
                                                                   "resolucao_autorizativa") and r["doc_id"] in with_art}
    assert acts <= structured
    # a document without structure is cut exactly as chunking="words" cuts it
    fallback_docs = set(corpus.loc[corpus["unit"].isna(), "doc_id"])
    words = aneel_task.corpus[aneel_task.corpus["doc_id"].isin(fallback_docs)]
    assert corpus.loc[corpus["unit"].isna(), "text"].tolist() == words["text"].tolist()
    # deterministic: the same input gives byte-identical files
    again = build_task(aneel_fulltext, chunking="dispositivo")
    a, b = disp_task.to_parquet(tmp_path / "a"), again.to_parquet(tmp_path / "b")
    assert all(a[k].read_bytes() == b[k].read_bytes() for k in ("corpus", "queries", "qrels"))


def test_words_chunking_unchanged(aneel_fulltext, aneel_task, tmp_path):
    explicit = build_task(aneel_fulltext, chunking="words")
    assert "unit" not in explicit.corpus and explicit.manifest["config"] == aneel_task.manifest["config"]
    a, b = explicit.to_parquet(tmp_path / "a"), aneel_task.to_parquet(tmp_path / "b")
    assert all(a[k].read_bytes() == b[k].read_bytes() for k in a)


def test_load_dataset_dispositivo(data_dir, hf_cache, disp_task):
    ds = load_dataset("aneel_taesa", "dispositivo", data_dir=data_dir, cache_dir=hf_cache, show_progress=False)
    assert ds["corpus"].info.config_name == "dispositivo"
    assert ds["corpus"].features["continued"].dtype == "bool"
    assert ds["corpus"]["_id"] == disp_task.corpus["_id"].tolist()
    assert manifest_of(ds)["config"] == {"name": "dispositivo", "chunk_words": 100, "query_words": 20,
                                         "chunking": "dispositivo", "min_words": 20, "max_words": 400}
    ds200 = load_dataset("aneel_taesa", "dispositivo-200", data_dir=data_dir, cache_dir=hf_cache,
                         show_progress=False)
    assert manifest_of(ds200)["config"]["max_words"] == 200 and ds200["corpus"].info.config_name == "dispositivo-200"
    assert max(len(t.split()) for t in ds200["corpus"]["text"]) <= 219


# --------------------------------------------------------------------------- insertions, transcriptions, stubs, quirks
# Acts below are excerpts of the shared data in their extracted layout (Planalto HTML: the article number on
# its own line, cp1252 quotes \x93 \x94 left as they came; PDF votos: numbered paragraphs).

LEI_14133_ART_178 = (
    " Art. \n 177. O caput do art. 1.048 da\n Lei nº 13.105, de 16 de \n março de 2015 (Código de Processo Civil), "
    "passa a vigorar acrescido do \n seguinte inciso IV: \n\n \x93Art.1.048. \n ........................................"
    "\n\n IV - em que se discuta a aplicação do disposto nas normas gerais de licitação e contratação a que se "
    "refere o inciso XXVII do caput do art. 22 da Constituição Federal. \n ...............................\x94 \n (NR) "
    "\n\n Art. \n 178. O Título XI da Parte Especial do\n Decreto-Lei nº 2.848, de 7 de \n dezembro de 1940 (Código "
    "Penal), passa a vigorar acrescido do seguinte \n Capítulo II-B: \n\n \x93CAPÍTULO II-B \n\n DOS \n CRIMES EM "
    "LICITAÇÕES E CONTRATOS ADMINISTRATIVOS \n\n Contratação direta ilegal \n\n Art. 337-E . \n Admitir, possibilitar "
    "ou dar causa à contratação direta fora das \n hipóteses previstas em lei: \n\n Pena - reclusão, de 4 (quatro) a 8 "
    "(oito) anos, e multa. \n\n Fraude em licitação ou contrato \n\n Art. 337-L . \n Fraudar, em prejuízo da "
    "Administração Pública, licitação ou contrato \n dela decorrente, mediante: \n\n I - entrega de mercadoria ou "
    "prestação de serviços com qualidade ou em quantidade diversas das previstas; \n\n II - fornecimento, como "
    "verdadeira ou perfeita, de mercadoria falsificada: \n\n Pena - reclusão, de 4 (quatro) anos a 8 (oito) anos, e "
    "multa. \n\n Art. 337-P. A \n pena de multa cominada aos crimes previstos neste Capítulo seguirá a \n metodologia "
    "de cálculo prevista neste Código e não poderá ser \n inferior a 2% (dois por cento) do valor do contrato "
    "licitado ou \n celebrado com contratação direta.\x94 \n\n Art. \n 179. Os incisos II e III do caput do art. 2º "
    "da\n Lei nº 8.987, de 13 de fevereiro de \n 1995 , passam a vigorar com a seguinte redação: \n\n \x93Art. \n 2º "
    "........................................ \n\n II - concessão de serviço público: a delegação de sua prestação, "
    "feita pelo poder concedente; \n ..............................\x94 (NR) \n\n CAPÍTULO III \n DISPOSIÇÕES "
    "TRANSITÓRIAS E FINAIS \n\n Art. 181. Os entes federativos instituirão centrais de compras, com o objetivo de "
    "realizar compras em grande escala. \n\n Parágrafo único. No caso dos Municípios com até 10.000 (dez mil) "
    "habitantes, serão preferencialmente constituídos consórcios. \n\n Art. \n 182. O Poder Executivo federal "
    "atualizará os valores fixados por esta Lei. \n"
)


def test_inserted_text_keeps_the_enclosing_acts_labels():
    """Lei 14.133 art. 178 inserts Código Penal articles (the quote opens on a chapter heading, not on an
    artigo): they are units of art. 178, and the law's own arts. 179 to 182 follow with their own labels."""
    labels = _labels(LEI_14133_ART_178)
    assert labels == ["art. 177", "art. 177 > art. 1048", "art. 177 > art. 1048 > IV",
                      "art. 178", "art. 178 > capítulo II-B", "art. 178 > art. 337-E", "art. 178 > art. 337-L",
                      "art. 178 > art. 337-L > I",
                      "art. 178 > art. 337-L > II", "art. 178 > art. 337-P", "art. 179", "art. 179 > art. 2",
                      "art. 179 > art. 2 > II", "capítulo III", "art. 181", "art. 181 > parágrafo único",
                      "art. 182"]


def test_insertion_without_quotes_ends_at_the_acts_next_artigo():
    text = ("Art. 4º A Lei nº 9.250, de 26 de dezembro de 1995, passa a vigorar acrescida do seguinte artigo:\n"
            "Art. 10-A. O contribuinte poderá deduzir as despesas de que trata este artigo.\n"
            "§ 1º O limite é anual.\n"
            "Art. 5º Esta Lei entra em vigor na data de sua publicação.\n")
    assert [b.label for b in dv.find_boundaries(text)] == ["art. 4", "art. 4 > art. 10-A", "art. 4 > art. 10-A > § 1",
                                                         "art. 5"]


def test_a_colon_without_an_amending_formula_opens_no_insertion():
    """"acrescido de:" in running text (RIR art. 133) introduces the act's own alíneas."""
    text = ("Art. 133. Fica isento o ganho de capital.\n§ 4º Para fins do disposto neste artigo:\n"
            "IV - a inobservância importará em exigência do imposto, acrescido de:\n"
            "a) juros de mora, calculados a partir do segundo mês;\nb) multa, de mora ou de ofício.\n"
            "Art. 134. O ganho de capital será apurado.\n")
    assert [b.label for b in dv.find_boundaries(text)] == [
        "art. 133", "art. 133 > § 4", "art. 133 > § 4 > IV", "art. 133 > § 4 > IV > a", "art. 133 > § 4 > IV > b",
        "art. 134"]


VOTO = """VOTO
PROCESSO: 48500.000001/2021-00
I – RELATÓRIO
1. Trata-se de pedido de dispensa da exigência de informação de acesso.
2. A Interessada protocolou o pedido em 2021.
II – ANÁLISE
3. A Resolução Normativa nº 1.000, de 2021, dispõe nos Procedimentos de Distribuição:
Art. 88. A distribuidora deve concluir as obras nos seguintes prazos: [...]
§ 2º A contagem dos prazos disposta neste artigo inicia-se a partir da: [...]
II - devolução dos contratos assinados pelo consumidor;
4. Portanto, destaca-se que não há garantia da conexão.
5. Além disso, o dispositivo foi alterado:
Parágrafo único. A dispensa da exigência de que trata o caput se aplica:
I - aos empreendimentos que solicitarem a outorga, dentre outras coisas que:
a) os empreendimentos com base em fontes solar tenham protocolado o pedido.
22. Com efeito, os pedidos realizados em até trinta dias da data de outorga foram aceitos.
23. Os protocolos de informações ocorridos após o prazo não foram aceitos.
III – DISPOSITIVO
24. Ante o exposto, voto por conhecer do pedido e, no mérito, negar-lhe provimento.
"""


def test_a_votos_transcribed_articles_are_not_its_own():
    """A voto's own structure is its numbered paragraphs: the articles it quotes give no labels (its
    paragraph 22 must not become art. 88 > parágrafo único > I > a > 22), so it is cut into word windows."""
    assert dv.find_boundaries(VOTO) == []
    words, starts = dv.words_and_line_starts(VOTO)
    spans, structured = dv.dispositivo_spans(words, starts, min_words=20, max_words=400, chunk_words=50,
                                             query_words=20)
    assert not structured and all(s.unit is None for s in spans)


def test_an_annex_after_the_votos_paragraphs_is_an_act():
    text = VOTO + "ANEXO\nMINUTA DE RESOLUÇÃO\nArt. 1º Fica negado o pedido.\nArt. 2º Esta Resolução entra em vigor.\n"
    assert [b.label for b in dv.find_boundaries(text)] == ["anexo", "anexo > art. 1", "anexo > art. 2"]


def test_an_act_with_numbered_items_is_not_a_voto():
    text = ("Art. 1º Ficam aprovados os itens:\na) os seguintes:\n1. primeiro;\n2. segundo;\n3. terceiro;\n"
            "4. quarto;\n5. quinto.\nArt. 2º Esta Resolução entra em vigor.\n")
    assert [b.label for b in dv.find_boundaries(text)] == [
        "art. 1", "art. 1 > a", "art. 1 > a > 1", "art. 1 > a > 2", "art. 1 > a > 3", "art. 1 > a > 4",
        "art. 1 > a > 5", "art. 2"]


@pytest.mark.parametrize("text, labels", [
    ("Art. 18. A Lei passa a valer.\nArt. 19. (VETADO). Art. 20. O poder concedente contratará a energia.\n",
     ["art. 18", "art. 19", "art. 20"]),
    ("Art. 31. Ficam sujeitos ao imposto os rendimentos.\n§ 1º O imposto será retido no pagamento.\n"
     "§ 2º (Vetado). Art. 32. Ficam sujeitos à incidência os benefícios.\n",
     ["art. 31", "art. 31 > § 1", "art. 31 > § 2", "art. 32"]),
    ("Art. 6º Ficam isentos:\nI - (Revogado pela Lei nº 9.250, de 1995); II - as diárias destinadas ao pagamento.\n",
     ["art. 6", "art. 6 > I", "art. 6 > II"]),
])
def test_vetoed_and_revoked_stubs_are_their_own_units(text, labels):
    assert [b.label for b in dv.find_boundaries(text)] == labels


def test_mid_line_markers_after_running_text_are_not_units():
    text = "Art. 1º Fica estabelecido o prazo. Art. 2º do Decreto não se aplica.\nArt. 2º Esta Lei entra em vigor.\n"
    assert [b.label for b in dv.find_boundaries(text)] == ["art. 1", "art. 2"]
    assert dv.find_boundaries(text)[1].start == text.split().index("Art.", 7)  # the line's, not the citation


def test_source_quirks_of_the_irpf_acts():
    """RIR/2018 art. 758 headed ``rt. 758.``; Lei 7.713 ``Arts. 28 e 29 (Revogados ...)``, ``Art 31.``
    without the period, ``§ 4o`` for ``§ 4º``; CTN ``Arts. 52 a 58. (Revogados ...)``."""
    rir = ("Art. 757. Os lucros serão tributados.\nSubseção V\nDa capitalização de lucros\n"
           "rt. 758. A incorporação ao capital de lucros apurados não sofrerá tributação.\n"
           "Art. 759. Na tributação das operações financeiras observa-se o disposto neste artigo.\n")
    assert [b.label for b in dv.find_boundaries(rir)] == ["art. 757", "subseção V", "art. 758", "art. 759"]
    lei = ("Art. 27. (Revogado pela Lei nº 9.250, de 1995)\nArts. 28 e 29 (Revogados pela Lei nº 8.134, de 1990)\n"
           "Art. 30. Permanecem em vigor as isenções.\n§ 4o Não se aplica ao disposto neste artigo.\n"
           "Art 31. Ficam sujeitos à incidência do imposto de renda.\n")
    assert [b.label for b in dv.find_boundaries(lei)] == ["art. 27", "arts. 28 e 29", "art. 30", "art. 30 > § 4",
                                                        "art. 31"]
    ctn = "Art. 51. Contribuinte do imposto é o importador.\nArts. 52 a 58. (Revogados pelo Decreto-lei nº 406, de 1968).\nArt. 59. (Revogado).\n"
    assert [b.label for b in dv.find_boundaries(ctn)] == ["art. 51", "arts. 52 a 58", "art. 59"]


def test_rt_only_as_the_next_artigo():
    text = "Art. 10. Fica estabelecido.\nrt. 40. Uma linha perdida.\nArt. 11. O prazo.\n"
    assert [b.label for b in dv.find_boundaries(text)] == ["art. 10", "art. 11"]


@pytest.fixture(scope="module")
def irpf_laws(data_dir):
    path = data_dir / "irpf" / "laws.jsonl"
    if not path.is_file():
        pytest.skip("the shared irpf data is not here")
    return {r["doc_id"]: r["text"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_irpf_acts_parse_their_quirks(irpf_laws):
    def labels(doc):
        words, starts = dv.words_and_line_starts(irpf_laws[doc])
        return [b.label for b in dv.find_boundaries(words, starts)]

    rir, l7713, l9250, ctn = (labels(d) for d in ("decreto-9580-2018", "lei-7713-1988", "lei-9250-1995",
                                                  "lei-5172-1966"))
    assert "anexo > art. 758" in rir
    tops = [x for x in rir if x.count(">") == 1 and x.startswith("anexo > art")]
    assert len(tops) == len(set(tops))  # every article of the RIR once
    assert "arts. 28 e 29" in l7713 and "art. 31" in l7713 and "art. 40" in l7713
    assert "art. 8 > § 4" in l9250
    assert "arts. 52 a 58" in ctn
    # every top-level artigo number increases through each act
    for doc in irpf_laws:
        nums = [int(re.match(r"(?:anexo > )?arts?\. (\d+)", x).group(1)) for x in labels(doc)
                if re.fullmatch(r"(?:anexo > )?arts?\. [\d\-A-Z a e]+", x)]
        assert nums == sorted(nums), doc


def test_lei_14133_in_the_aneel_sample(aneel_records):
    rec = next(r for r in aneel_records if r["text"].lstrip().startswith("L14133"))
    words, starts = dv.words_and_line_starts(rec["text"])
    labels = [b.label for b in dv.find_boundaries(words, starts)]
    tops = [x for x in labels if " > " not in x and x.startswith("art.")]
    assert tops.count("art. 191") == 2  # two wordings of art. 191 in a row, the second (Redação dada pela MP 1.167)
    tops = [x for k, x in enumerate(tops) if k == 0 or x != tops[k - 1]]
    assert tops[-17:] == [f"art. {n}" for n in range(179, 185)] + ["art. 184-A"] + [
        f"art. {n}" for n in range(185, 195)]
    assert not any(x.startswith("art. 337") for x in labels)
    assert sum(x.startswith("art. 178 > art. 337-") and x.count(">") == 1 for x in labels) == 12


def test_new_wording_under_the_same_number_is_its_own_unit():
    """Planalto text without its strike marks: the 2010 alínea printed twice (Lei 9.250 art. 4º, VI, d), the
    second carrying (Redação dada ...); a repeated number without it stays text of the unit before."""
    text = ("Art. 4º Na determinação da base de cálculo poderão ser deduzidas:\n"
            "VI - a quantia correspondente à parcela isenta, de:\n"
            "c) R$ 1.434,59 por mês, para o ano-calendário de 2009; (Incluído pela Lei nº 11.482, de 2007)\n"
            "d) R$ 1.499,15 por mês, para o ano-calendário de 2010; (Redação dada pela Medida Provisória nº 528, "
            "de 2011) Produção de efeitos\n"
            "d) R$ 1.499,15 por mês, para o ano-calendário de 2010; (Redação dada pela Lei nº 12.469, de 2011)\n"
            "e) R$ 1.566,61 por mês, para o ano-calendário de 2011; (Incluído pela Lei nº 12.469, de 2011)\n"
            "§ 1º O limite vale por mês.\n§ 1º O mesmo limite, repetido sem anotação.\nArt. 5º Outro.\n")
    bounds = dv.find_boundaries(text)
    assert [b.label for b in bounds] == ["art. 4", "art. 4 > VI", "art. 4 > VI > c", "art. 4 > VI > d",
                                         "art. 4 > VI > d", "art. 4 > VI > e", "art. 4 > § 1", "art. 5"]
    words = text.split()
    assert words[bounds[4].start:bounds[4].start + 2] == ["d)", "R$"] and bounds[4].start > bounds[3].start
