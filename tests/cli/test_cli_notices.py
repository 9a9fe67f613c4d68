"""A notice raised once per task a command builds (the cited questions' unresolved citations) is printed once per
command, as its one-line summary; the library keeps the full warning."""
from __future__ import annotations

import warnings

import pytest

from ragcov_data.cli import _notice
from ragcov_data.loaders._cited_gold import UnresolvedCitations


def _w(config: str, by_status: dict, no_gold: int = 0) -> UnresolvedCitations:
    return UnresolvedCitations(f"cited questions ({config}): the full list ...", dataset="irpf", config=config,
                               by_status=by_status, no_gold=no_gold)


def test_the_same_notice_from_several_chunkings_prints_once(capsys):
    show = _notice("ragcov eval")
    for config in ("words-50", "article"):
        w = _w(config, {"act_not_in_corpus": 2, "year_mismatch": 3}, 1)
        show(w, type(w), "x.py", 1)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith("ragcov eval: cited questions (irpf): 5 citation(s) not graded (2 citation(s) of acts not "
                             "in the corpus, 3 citation(s) whose year contradicts")
    assert "1 question(s) with no relevant chunk" in err[0] and "DIR/manifest.json" in err[0]


def test_different_counts_are_each_said(capsys):
    show = _notice("ragcov chunking")
    for w in (_w("a", {"act_only": 1}), _w("b", {"act_only": 2})):
        show(w, type(w), "x.py", 1)
    assert len(capsys.readouterr().err.splitlines()) == 2


def test_other_notices_keep_their_one_line_form(capsys):
    show = _notice("ragcov run")
    show(UserWarning("plain notice"), UserWarning, "x.py", 1)
    show(DeprecationWarning("old"), DeprecationWarning, "x.py", 1)
    assert capsys.readouterr().err.splitlines() == ["ragcov run: plain notice", "ragcov run: DeprecationWarning: old"]


def test_the_library_keeps_the_full_warning():
    with pytest.warns(UnresolvedCitations, match=r"the full list"):
        warnings.warn(_w("words-50", {"act_only": 1}))
