"""Locating passages in a task's documents: every path of the rule, against positions known by construction."""
from __future__ import annotations

import re
import unicodedata

import numpy as np
import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.runs.line import character_line, flat_text
from ragcov_data.runs.locate import FUZZY_THRESHOLD, locate_passages

A = "Art. 1º Esta Lei dispõe sobre o imposto.\n\n  Parágrafo único. O imposto incide sobre a renda  e os proventos."
B = "Art. 2º Os rendimentos são tributados.\nArt. 3º Fica revogado o art. 9º. Art. 4º Esta Lei entra em vigor."
C = "Texto repetido aqui. Outro trecho qualquer. Texto repetido aqui. Fim."


@pytest.fixture(scope="module")
def line():
    return character_line(["A", "B", "C"], [A, B, C])


def _where(line, loc, i):
    d = int(loc.doc[i])
    off = line.offsets[line.doc_ids[d]]
    return line.doc_ids[d], int(loc.start[i]) - off, int(loc.end[i]) - off


def test_exact_tolerant_and_nfd(line):
    exact = "Parágrafo único. O imposto incide sobre a renda  e os proventos."
    tolerant = "Parágrafo único.\nO   imposto incide sobre a renda e os proventos."  # whitespace differs
    nfd = unicodedata.normalize("NFD", "Os rendimentos são tributados.")
    loc = locate_passages([exact, tolerant, nfd, "  Art. 2º Os rendimentos \n", "Art. 2º  Os rendimentos"], line)
    assert list(loc.how) == ["exact", "tolerant", "tolerant", "exact", "tolerant"]  # outer whitespace aside
    assert _where(line, loc, 0) == ("A", A.index("Parágrafo"), len(A))
    assert _where(line, loc, 1) == _where(line, loc, 0)  # same characters of A, whitespace aside
    s = B.index("Os rendimentos")
    assert _where(line, loc, 2) == ("B", s, s + len("Os rendimentos são tributados."))
    assert (loc.places == 1).all() and not loc.hinted.any()


def test_ambiguous_first_place_unless_a_hint_decides(line):
    text = "Texto repetido aqui."
    second = C.index(text, 1)
    loc = locate_passages([text, text, text], line, doc_hints=[None, "C", "C"], start_hints=[None, second, 50])
    assert (loc.places == 2).all()
    assert _where(line, loc, 0)[1] == 0  # no hint: the first place in document order
    assert _where(line, loc, 1)[1] == second and loc.hinted[1]  # its offsets hold the text: used as given
    assert _where(line, loc, 2)[1] == second and loc.hinted[2]  # the nearest place to a shifted start
    assert loc.shares()["ambiguous"] == 1.0


def test_wrong_hints_are_checked_not_trusted(line):
    text = "Esta Lei entra em vigor."
    right = B.index(text)
    for doc, start, end in (("B", -1, None), ("B", right + 3, right + 3 + len(text)), ("A", 0, len(text)),
                            ("nope", 4, 9)):
        loc = locate_passages([text], line, doc_hints=[doc], start_hints=[start], end_hints=[end])
        assert _where(line, loc, 0) == ("B", right, right + len(text)), (doc, start)
        assert loc.how[0] == "exact"


def test_fuzzy_and_unlocated(line):
    words = [f"palavra{k}" for k in range(400)]
    doc = " ".join(words)
    ln = character_line(["D"], [doc])
    s = doc.index("palavra100")
    e = doc.index("palavra300") + len("palavra300")
    edited = doc[s:e].replace("palavra200", "palavr4200")  # one edit: found approximately
    other = "Um texto que não está em documento nenhum, de outro corpus inteiramente diferente " * 3
    loc = locate_passages([edited, other], ln)
    assert loc.how[0] == "fuzzy" and loc.score[0] >= FUZZY_THRESHOLD
    assert abs(int(loc.start[0]) - s) <= 3 and abs(int(loc.end[0]) - e) <= 3
    assert loc.how[1] == "unlocated" and loc.doc[1] == -1 and loc.start[1] == -1
    assert loc.shares()["fuzzy"] == loc.shares()["unlocated"] == 0.5


def test_matches_do_not_cross_documents(line):
    across = A[-20:] + B[:20]  # the end of A and the start of B, as if concatenated
    loc = locate_passages([across], line)
    assert loc.how[0] != "exact" and loc.how[0] != "tolerant"


def test_empty_passage_is_refused(line):
    with pytest.raises(RagcovError, match="passage 1 has no text"):
        locate_passages(["Art. 1º", "   \n "], line)


def test_line_end_after_counts_non_space_characters(line):
    # the end of a span holding the first j words of a chunk starting at a position
    start = line.offsets["A"] + A.index("Parágrafo")
    words = A[A.index("Parágrafo"):].split()
    for j in (1, 3, 7, len(words)):
        end = line.end_after(start, len(flat_text(" ".join(words[:j]))))
        m = list(re.finditer(r"\S+", A[A.index("Parágrafo"):]))[j - 1]
        assert end - line.offsets["A"] == A.index("Parágrafo") + m.end()


def test_random_windows_are_found_exactly():
    rng = np.random.default_rng(0)
    docs = [" ".join(f"w{rng.integers(0, 50)}" for _ in range(3000)) + "\n" for _ in range(3)]
    ln = character_line(["x", "y", "z"], docs)
    spans = []
    for _ in range(200):
        d = int(rng.integers(3))
        toks = [m.span() for m in re.finditer(r"\S+", docs[d])]
        a = int(rng.integers(0, len(toks) - 60))
        spans.append((d, toks[a][0], toks[a + 59][1]))
    loc = locate_passages([docs[d][s:e] for d, s, e in spans], ln)
    for i, (d, s, e) in enumerate(spans):
        assert loc.how[i] == "exact"
        first = docs[d].find(docs[d][s:e])  # the first place in the document holding it
        earlier = [k for k in range(d) if docs[k].find(docs[d][s:e]) >= 0]
        if not earlier:
            assert (int(loc.doc[i]), int(loc.start[i]) - ln.offsets["xyz"[d]]) == (d, first)
        assert loc.places[i] == sum(_count(doc, docs[d][s:e]) for doc in docs)


def _count(hay: str, needle: str) -> int:
    n, at = 0, hay.find(needle)
    while at >= 0:
        n, at = n + 1, hay.find(needle, at + 1)
    return n


#: Format characters a pipeline's text extraction adds or drops: soft hyphen, zero-width space, ZWNJ, ZWJ, byte-order
#: mark (zero-width no-break space), word joiner.
FORMAT = ["\u00ad", "\u200b", "\u200c", "\u200d", "\ufeff", "\u2060"]


@pytest.mark.parametrize("ch", FORMAT)
def test_format_characters_are_tolerated_like_whitespace(line, ch):
    """A passage with a format character inside its words, or a document holding one the passage lacks, is found
    at the same span as the clean text (tolerant), never fuzzy or unlocated."""
    clean = "O imposto incide sobre a renda  e os proventos."
    s = A.index(clean)
    marked = clean.replace("imposto", f"im{ch}pos{ch}to").replace("renda", f"ren{ch}da") + ch
    loc = locate_passages([clean, marked], line)
    assert list(loc.how) == ["exact", "tolerant"]
    assert _where(line, loc, 1) == ("A", s, s + len(clean)) == _where(line, loc, 0)
    doc = A.replace("proventos", f"pro{ch}ven{ch}tos")  # the document holds them, the passage does not
    ln = character_line(["A"], [doc])
    loc = locate_passages([clean], ln)
    assert loc.how[0] == "tolerant" and _where(ln, loc, 0) == ("A", s, s + len(clean) + 2)


def test_a_location_is_kept_for_the_same_passages_line_and_hints_only(line, monkeypatch):
    """The memo returns what locating again returns, as the caller's own copy; other hints, another line or other
    passages are located afresh."""
    from ragcov_data.runs import locate as mod

    texts = ["Texto repetido aqui.", "Os rendimentos são tributados.", "nada disto existe em parte alguma"]
    calls = []
    real = mod._locate
    monkeypatch.setattr(mod, "_locate", lambda *a: calls.append(a[0]) or real(*a))
    mod.clear_memo()
    first = locate_passages(texts, line)
    first.doc[:] = -7  # the caller's copy: changing it changes nothing kept
    again = locate_passages(texts, line)
    assert len(calls) == 1 and list(again.doc) == list(real(texts, line, None, None, None, FUZZY_THRESHOLD).doc)
    assert again.alternatives.keys() == {0} and (again.doc >= 0).sum() == 2
    hinted = locate_passages(texts, line, doc_hints=["C", None, None], start_hints=[44, None, None])
    assert len(calls) == 2 and hinted.hinted[0] and not again.hinted[0]
    other = character_line(["C", "B"], [C, B])
    assert other.doc_ids[int(locate_passages(texts, other).doc[0])] == "C" and len(calls) == 3
    locate_passages(texts[:2], line)
    assert len(calls) == 4
