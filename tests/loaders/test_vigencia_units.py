"""Vigência per dispositivo: each unit (artigo caput, parágrafo, inciso, alínea) is in force or not; a chunk
records which of its units are out of force and the share of its words they hold; the misses table names
them. Pages are written in the layout of the Planalto compilations (``<strike>`` for superseded wording, the
revoking act as bare links: ``Revogado pelo`` / ``Decreto nº 10.854, de 2021`` / ``Vigência``); the real
RIR/2018 page of the shared data is read too.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragcov_data import build_task
from ragcov_data.eval.misses import misses
from ragcov_data.legal import vigencia as vg
from ragcov_data.legal.acervo import read_acervo
from ragcov_data.loaders import dispositivos as dv


def _w(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


HEAD = "<html><body><p>Presidência da República</p><p>{title}</p>\n"
CAPUT_644 = ("Art. 644. A dedução de que trata esta Seção somente se aplica às despesas com PAT, aprovados "
             "previamente pelo Ministério do Trabalho")
PAR_644 = ("Parágrafo único. Para fins do disposto neste artigo, entende-se como aprovação prévia pelo Ministério do "
           "Trabalho a apresentação de documento hábil definido em ato conjunto dos Ministros de Estado do Trabalho, "
           "da Saúde e da Fazenda.")
# (a) RIR art. 644 as the Planalto page prints it: the revoked parágrafo único struck, 36 of the chunk's words
RIR = (HEAD.format(title="DECRETO Nº 9.580, DE 22 DE NOVEMBRO DE 2018")
       + f"<p>Art. 643. As despesas de custeio do programa serão comprovadas {_w(30, 'c')}.</p>\n"
       + f'<p>{CAPUT_644}\n<a href="L6321.htm">(Lei nº 6.321, de 1976, art. 1º)</a>\n.</p>\n'
       + f'<p><strike>{PAR_644}</strike>&nbsp;&nbsp;\n<a href="D10854.htm">Revogado pelo </a>\n'
         '<a href="D10854.htm">Decreto nº 10.854, de 2021</a>\n<a href="D10854.htm">Vigência</a></p>\n'
       + f"<p>Art. 645. Os programas de que trata esta Seção deverão conferir prioridade {_w(30, 'p')}.</p>\n"
       + "</body></html>")
# (b) two superseded wordings of one parágrafo and the one in force, in a chunk mostly of old wording
TWO_OLD = (HEAD.format(title="LEI Nº 9.250, DE 26 DE DEZEMBRO DE 1995")
           + "<p>Art. 10. O contribuinte poderá deduzir as despesas com dependentes.</p>\n"
           + f"<p><strike>§ 1º O limite anual é de mil reais por dependente {_w(20, 'um')}.</strike></p>\n"
           + f"<p><strike>§ 1º O limite anual é de dois mil reais por dependente {_w(20, 'dois')}.</strike> "
             "(Redação dada pela Lei nº 11.000, de 2005)</p>\n"
           + f"<p>§ 1º O limite anual é de três mil reais por dependente {_w(20, 'tres')}. "
             "(Redação dada pela Lei nº 12.000, de 2010)</p>\n"
           + f"<p>Art. 11. O imposto será pago até o último dia útil do mês {_w(20, 'onze')}.</p>\n"
           + "</body></html>")
# (c) a long artigo (over max_words) with one revoked parágrafo
LONG = (HEAD.format(title="LEI Nº 7.713, DE 22 DE DEZEMBRO DE 1988")
        + f"<p>Art. 20. O rendimento será tributado na forma deste artigo {_w(40, 'cap')}.</p>\n"
        + "".join(f"<p>{'<strike>' if n == 4 else ''}§ {n}º O disposto neste artigo se aplica {_w(70, f'p{n}x')}."
                  f"{'</strike> (Revogado pela Lei nº 13.000, de 2015)' if n == 4 else ''}</p>\n" for n in range(1, 7))
        + f"<p>Art. 21. Esta Lei entra em vigor na data de sua publicação {_w(20, 'vig')}.</p>\n</body></html>")


def _acervo(tmp_path, pages: dict[str, str]):
    root = tmp_path / "acervo"
    root.mkdir(exist_ok=True)
    for name, page in pages.items():
        (root / name).write_text(page, encoding="utf-8")
    return root


def _chunk(corpus: pd.DataFrame, doc: str, word: str) -> pd.Series:
    rows = corpus[(corpus["doc_id"] == doc) & corpus["text"].str.contains(word, regex=False)]
    assert len(rows) == 1, rows
    return rows.iloc[0]


def test_a_chunk_with_a_revoked_paragrafo_names_it(tmp_path):
    task = build_task(_acervo(tmp_path, {"D9580.html": RIR}), chunking="dispositivo", keep_superseded=True,
                      query_words=5)
    row = _chunk(task.corpus, "D9580.html", "Art. 644.")
    words = row["text"].split()
    struck = " ".join(words).count(PAR_644)
    assert struck == 1 and len(PAR_644.split()) == 36  # the revoked parágrafo's 36 words are in the chunk
    assert row["in_force"]  # the caput is in force
    assert list(row["units_not_in_force"]) == ["art. 644 > parágrafo único"]
    # the unit: the struck wording and its annotation "Revogado pelo Decreto nº 10.854, de 2021 Vigência"
    assert row["share_not_in_force"] == pytest.approx((36 + 8) / len(words))
    others = task.corpus[~task.corpus["text"].str.contains("Art. 644.", regex=False)]
    assert others["in_force"].all() and not others["units_not_in_force"].map(len).any()
    assert task.manifest["vigencia"]["units_not_in_force"] == 1


def test_the_real_rir_page_art_644(data_dir):
    doc = read_acervo(data_dir / "irpf" / "html" / "D9580.html", keep_superseded=True).documents[0]
    words, starts = dv.words_and_line_starts(doc.text)
    spans, _ = dv.dispositivo_spans(words, starts, min_words=20, max_words=400, chunk_words=100, query_words=20)
    flags = vg.word_flags(doc.text, doc.superseded)
    f, names, shares = vg.chunk_vigencia([s.stop - s.start for s in spans], flags, doc.status,
                                         dv.vigencia_units(doc.text))
    k = next(i for i, s in enumerate(spans) if s.unit == "anexo > art. 644")
    s = spans[k]
    assert s.stop - s.start == 81 and sum(flags[s.start:s.stop]) == 36  # the 36 of 81 words
    assert f[k] and names[k] == ["anexo > art. 644 > parágrafo único"] and shares[k] == pytest.approx(44 / 81)
    # the old rule (in force iff fewer than half its words superseded) said "in force" and named nothing
    assert vg.chunk_in_force([81], flags[s.start:s.stop], None) == [True]


def test_two_superseded_wordings_and_the_one_in_force(tmp_path):
    task = build_task(_acervo(tmp_path, {"L9250.html": TWO_OLD}), chunking="dispositivo", keep_superseded=True,
                      query_words=5)
    row = _chunk(task.corpus, "L9250.html", "Art. 10.")
    words = row["text"].split()
    old = sum(w.startswith(("um", "dois")) and w.rstrip(".")[-1].isdigit() for w in words)
    assert old == 40 and "tres0" in words
    assert row["in_force"]  # it holds the wording in force
    assert list(row["units_not_in_force"]) == ["art. 10 > § 1", "art. 10 > § 1"]  # the two old ones only
    old_units = (len(f"§ 1º O limite anual é de mil reais por dependente {_w(20, 'um')}.".split())
                 + len(f"§ 1º O limite anual é de dois mil reais por dependente {_w(20, 'dois')}.".split())
                 + len("(Redação dada pela Lei nº 11.000, de 2005)".split()))
    assert row["share_not_in_force"] == pytest.approx(old_units / len(words))
    # the old rule: at least half of the words struck -> the whole chunk "not in force"
    doc = read_acervo(tmp_path / "acervo" / "L9250.html", keep_superseded=True).documents[0]
    dflags = vg.word_flags(doc.text, doc.superseded)
    start = doc.text.split().index("Art.", doc.text.split().index("Art.") + 0)
    assert vg.chunk_in_force([len(words)], dflags[start:start + len(words)], None) == [False]


def test_one_revoked_paragrafo_in_a_long_artigo(tmp_path):
    root = _acervo(tmp_path, {"L7713.html": LONG})
    task = build_task(root, chunking="dispositivo", keep_superseded=True, query_words=5)
    c = task.corpus
    par4 = _chunk(c, "L7713.html", "p4x0")
    assert par4["unit"] == "art. 20 > § 4" and not par4["in_force"]
    assert list(par4["units_not_in_force"]) == ["art. 20 > § 4"] and par4["share_not_in_force"] == 1.0
    rest = c[c["_id"] != par4["_id"]]
    assert rest["in_force"].all() and (rest["share_not_in_force"] == 0).all()
    # the whole artigo in one chunk: in force, the parágrafo named with its share of the words
    whole = build_task(root, chunking="dispositivo", keep_superseded=True, query_words=5, max_words=1000)
    row = _chunk(whole.corpus, "L7713.html", "Art. 20.")
    n4 = len(f"§ 4º O disposto neste artigo se aplica {_w(70, 'p4x')}.".split()) + 7  # and "(Revogado ... 2015)"
    assert row["in_force"] and list(row["units_not_in_force"]) == ["art. 20 > § 4"]
    assert row["share_not_in_force"] == pytest.approx(n4 / len(row["text"].split()))
    # word windows: a window mostly of § 4 is out of force, its unit named
    windows = build_task(root, chunk_words=50, query_words=5, keep_superseded=True).corpus
    inside = windows[windows["text"].str.split().map(lambda ws: 2 * sum(w.startswith("p4x") for w in ws) > len(ws))]
    assert len(inside) >= 1 and not inside["in_force"].any()
    assert all(list(u) == ["art. 20 > § 4"] for u in inside["units_not_in_force"])
    outside = windows[~windows["text"].str.contains("p4x|13.000|§ 4º", regex=True)]  # words of § 4
    assert outside["in_force"].all() and not outside["units_not_in_force"].map(len).any()


def test_misses_name_the_out_of_force_units_retrieved(tmp_path):
    root = _acervo(tmp_path, {"D9580.html": RIR, "L9250.html": TWO_OLD, "L7713.html": LONG})
    task = build_task(root, chunking="dispositivo", keep_superseded=True, query_words=5)
    c = task.corpus
    a644 = _chunk(c, "D9580.html", "Art. 644.")["_id"]
    a10 = _chunk(c, "L9250.html", "Art. 10.")["_id"]
    p4 = _chunk(c, "L7713.html", "p4x0")["_id"]
    q_rir = c[c["doc_id"] == "D9580.html"]["_id"].iloc[0]
    q_lei = c[c["doc_id"] == "L7713.html"]["_id"].iloc[0]
    q_9250 = c[c["doc_id"] == "L9250.html"]["_id"].iloc[-1]
    run = pd.DataFrame([{"query-id": q_rir, "corpus-id": p4, "rank": 1, "score": 3.0},
                        {"query-id": q_lei, "corpus-id": a644, "rank": 1, "score": 3.0},
                        {"query-id": q_9250, "corpus-id": p4, "rank": 1, "score": 2.0}])
    m = misses(run, task, on_missing="zero").misses.set_index("query-id")
    assert {q_rir, q_lei, q_9250} <= set(m.index)
    m = m.loc[[q_rir, q_lei, q_9250]].reset_index().set_index("corpus-id", drop=False)
    # a query of Lei 7.713 retrieving the two-wordings chunk
    run2 = pd.DataFrame([{"query-id": q_lei, "corpus-id": a10, "rank": 1, "score": 3.0}])
    m2 = misses(run2, task, on_missing="zero").misses.set_index("query-id")
    # all old wording: flagged, the unit named, all its words
    r4 = m.loc[[p4]]
    assert r4["retrieved_not_in_force"].all() and (r4["retrieved_units_not_in_force"] == "art. 20 > § 4").all()
    assert (r4["retrieved_share_not_in_force"] == 1.0).all()
    # one revoked parágrafo: not flagged, but named with its share
    r644 = m.loc[[a644]].iloc[0]
    assert not bool(r644["retrieved_not_in_force"])
    assert r644["retrieved_units_not_in_force"] == "art. 644 > parágrafo único"
    assert 0 < r644["retrieved_share_not_in_force"] < 1
    # two old wordings and the one in force: not flagged, only the two old units named
    r10 = m2.loc[q_lei]
    assert not bool(r10["retrieved_not_in_force"])
    assert r10["retrieved_units_not_in_force"] == "art. 10 > § 1; art. 10 > § 1"


def test_superseded_wording_in_a_code_fence_is_left_alone(tmp_path):
    md = ("Art. 1º O imposto incide sobre a renda.\n\n"
          "~~§ 1º O limite antigo.~~ (Revogado pela Lei nº 1, de 2000)\n\n"
          "```\n~~Art. 2º Exemplo de marcação riscada dentro de um bloco de código.~~\n"
          "§ 2º Texto antigo.\n§ 2º Texto novo. (Redação dada pela Lei nº 2, de 2001)\n```\n\n"
          "Art. 3º Esta Lei entra em vigor.\n")
    text, struck = vg.markdown_struck(md)
    assert "~~Art. 2º Exemplo" in text and "~~§ 1º" not in text  # the fence keeps its tildes
    assert [text[a:b] for a, b in struck] == ["§ 1º O limite antigo."]
    spans = vg.outside(vg.superseded_spans(text, struck), vg.code_fences(text))
    assert [text[a:b] for a, b in spans] == ["§ 1º O limite antigo."]  # the fenced pair is not read
    (tmp_path / "a.md").write_text(md, encoding="utf-8")
    doc = read_acervo(tmp_path / "a.md").documents[0]
    assert "§ 2º Texto antigo." in doc.text and "O limite antigo" not in doc.text


def test_numeral_and_dash_on_two_lines_in_the_pair_rule():
    text = ("Art. 6º Ficam isentos:\nI - as diárias;\nII\n- a ajuda de custo antiga;\nII\n"
            "- a ajuda de custo nova; (Redação dada pela Lei nº 8.000, de 1990)\nIII\n- o auxílio.\n")
    spans = vg.pair_spans(text)
    assert [text[a:b] for a, b in spans] == ["II\n- a ajuda de custo antiga;\n"]
    glued = text.replace("II\n-", "II -").replace("III\n-", "III -")
    assert [glued[a:b] for a, b in vg.pair_spans(glued)] == ["II - a ajuda de custo antiga;\n"]


def test_chunk_vigencia_rule_by_brute_force():
    """chunk_vigencia against the rule written out per chunk and unit, on random units and flags."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        cuts = np.sort(rng.choice(np.arange(1, 60), size=rng.integers(1, 8), replace=False))
        bounds = [0, *cuts.tolist(), 60]
        units = [(a, b, f"u{k}", bool(rng.random() < 0.1)) for k, (a, b) in enumerate(zip(bounds, bounds[1:]))]
        flags = (rng.random(60) < rng.random()).tolist()
        sizes = []
        left = 60
        while left:
            sizes.append(int(min(left, rng.integers(1, 25))))
            left -= sizes[-1]
        f, names, shares = vg.chunk_vigencia(sizes, flags, None, units)
        pos = 0
        for n, ok, nm, sh in zip(sizes, f, names, shares):
            lo, hi = pos, pos + n
            pos = hi
            out = {u[2]: u[3] or 2 * sum(flags[u[0]:u[1]]) >= u[1] - u[0] for u in units}
            common = {u[2]: max(0, min(u[1], hi) - max(u[0], lo)) for u in units}
            held = {k: common[k] > 0 and (2 * common[k] >= u[1] - u[0] or 2 * common[k] >= n)
                    for k, u in zip(common, units)}
            assert nm == [k for k in out if out[k] and common[k] > 0]
            assert sh == pytest.approx(sum(common[k] for k in nm) / n)
            in_held = any(held[k] and not out[k] for k in out)
            out_held = any(held[k] and out[k] for k in out)
            assert ok == (in_held or not (out_held or 2 * sum(common[k] for k in nm) >= n))
        assert vg.chunk_vigencia(sizes, flags, "revoked", units)[0] == [False] * len(sizes)


def test_misses_json_carries_the_units(tmp_path):
    import json

    root = _acervo(tmp_path, {"D9580.html": RIR, "L7713.html": LONG})
    task = build_task(root, chunking="dispositivo", keep_superseded=True, query_words=5)
    c = task.corpus
    a644 = _chunk(c, "D9580.html", "Art. 644.")["_id"]
    q = c[c["doc_id"] == "L7713.html"]["_id"].iloc[0]
    res = misses(pd.DataFrame([{"query-id": q, "corpus-id": a644, "rank": 1, "score": 1.0}]), task,
                 on_missing="zero")
    rows = json.loads(res.to_json())["misses"]
    row = next(r for r in rows if r["query-id"] == q)
    assert row["retrieved_units_not_in_force"] == "art. 644 > parágrafo único"
    assert 0 < row["retrieved_share_not_in_force"] < 1 and row["retrieved_not_in_force"] is False
