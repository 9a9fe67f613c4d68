"""The dispositivo parser on two layouts of compiled acts: incisos inserted after another (``V-A –``, ``I-A –``)
and annotations with nested parentheses (``(Redação dada por … (Seq. 1) (Diário Oficial … (p. 1, col. 1)))``).

Both are written as the LGPD and the Lei de Acesso à Informação are compiled (one dispositivo a line, annotations
inline): every marker below starts a dispositivo, so each test asks for every one of them, by label and in order.
"""
from __future__ import annotations

from ragcov_data.loaders.articles import locate
from ragcov_data.loaders.dispositivo_parser import find_boundaries

INSERTED = """Art. 55-C. A ANPD é composta de: (Incluído por Lei nº 13.853 de 08.07.2019)
I – Conselho Diretor, órgão máximo de direção; (Incluído por Lei nº 13.853 de 08.07.2019)
IV – Ouvidoria; (Incluído por Lei nº 13.853 de 08.07.2019)
V – (Revogado) (Incluído por Lei nº 13.853 de 08.07.2019) (Revogado por Lei nº 14.460 de 25.10.2022)
V-A – Procuradoria; (Incluído por Lei nº 14.460 de 25.10.2022) (Redação dada por Lei nº 15.352 de 25.02.2026)
V-B – Auditoria; e (Incluído por Lei nº 15.352 de 25.02.2026)
VI – unidades administrativas e unidades especializadas.
Art. 65. Esta Lei entra em vigor:
I – dia 28 de dezembro de 2018, quanto aos arts. 55-A e 55-B; e
I-A – dia 1º de agosto de 2021, quanto aos arts. 52, 53 e 54; (Incluído por Lei nº 14.010 de 10.06.2020)
II – 24 (vinte e quatro) meses após a data de sua publicação, quanto aos demais artigos.
"""

NESTED = """Art. 52. Os agentes de tratamento ficam sujeitos às seguintes sanções administrativas:
VII – (VETADO); (Redação dada por Republicação de Dispositivo da Lei nº 13.709 de 14.08.2018 (Seq. 1) (Diário Oficial da União - Edição Extra de 15.08.2018 (p. 1, col. 1)))
VIII – (VETADO); (Redação dada por Republicação de Dispositivo da Lei nº 13.709 de 14.08.2018 (Seq. 1) (Diário Oficial da União - Edição Extra de 15.08.2018 (p. 1, col. 1)))
X – suspensão parcial do funcionamento do banco de dados; (Incluído com veto por Publicação de Veto Parcialmente Rejeitado da Lei nº 13.853 de 08.07.2019 (Diário Oficial da União de 20.12.2019 (p. 1, col. 1)))
XI – suspensão do exercício da atividade de tratamento dos dados pessoais;
Art. 55-L. Constituem receitas da ANPD:
V – (VETADO); (Inclusão vetada pela Mensagem de Veto Parcial nº 288 de 08.07.2019 à Lei nº 13.853 de 08.07.2019)
VI – os recursos provenientes de acordos, convênios ou contratos.
"""


def _labels(text: str) -> list[str]:
    return [b.label for b in find_boundaries(text)]


def test_inserted_incisos_are_units_of_their_own():
    assert _labels(INSERTED) == ["art. 55-C", "art. 55-C > I", "art. 55-C > IV", "art. 55-C > V", "art. 55-C > V-A",
                                 "art. 55-C > V-B", "art. 55-C > VI", "art. 65", "art. 65 > I", "art. 65 > I-A",
                                 "art. 65 > II"]


def test_inserted_incisos_are_located():
    idx = locate(INSERTED)
    va, depth = idx.find("55-C", inciso="V-A")
    assert depth == 2 and INSERTED[va.start:va.end].startswith("V-A – Procuradoria")
    assert INSERTED[va.start:va.end].rstrip().endswith("25.02.2026)")


def test_nested_annotations_close_their_dispositivo():
    assert _labels(NESTED) == ["art. 52", "art. 52 > VII", "art. 52 > VIII", "art. 52 > X", "art. 52 > XI",
                               "art. 55-L", "art. 55-L > V", "art. 55-L > VI"]


def test_an_open_parenthesis_is_still_no_annotation():
    # "(seis)" closes inside the clause; the line after it continues a sentence that has not ended
    text = "Art. 1º O prazo é de 6 (seis)\nI – meses contados da publicação;\nII – prorrogáveis.\n"
    assert _labels(text) == ["art. 1", "art. 1 > II"]
