"""Accuracy of the citation parser on real citation strings it was not written against.

``tests/data/citations_unseen.jsonl`` (170 clauses, ``benchmarks/citation_sample.py --seed 2026 --n 170``) and
``tests/data/citations_unseen_2.jsonl`` (100 more, ``--seed 7 --n 100 --exclude tests/data/citations_unseen.jsonl``)
``tests/data/citations_unseen_3.jsonl`` (``--seed 99``), ``_4`` (``--seed 2027``), ``_5`` (``--seed 31337``) and ``_6``
(``--seed 4242``; the ANEEL clauses were used up, so all from the IRPF acts), 100 more each, each excluding the
samples before it:
clauses holding an artigo citation, drawn from the bodies of the shared ANEEL acts and IRPF acts (never from
the questions or a test), each labelled by hand from its text: every artigo it cites as ``[act,
artigo, parágrafo, inciso, alínea, item]``, ``act`` being ``type:number`` (``lei:9427``, ``resolucao:414``),
``constituicao``, an unnumbered act's type (``regimento_interno``) or ``self`` (no act named in the string:
the enclosing act, or one the string only points back to, ``da indicada Resolução``). Parts cited with no
artigo (``o § 2º``) are not labelled; ``caput`` is not compared.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragcov_data.legal.citations import Act, parse

SAMPLES = [Path(__file__).parent / "data" / name for name in ("citations_unseen.jsonl", "citations_unseen_2.jsonl",
                                                                    "citations_unseen_3.jsonl", "citations_unseen_4.jsonl",
                                                                    "citations_unseen_5.jsonl", "citations_unseen_6.jsonl")]


def _act(act: Act | None) -> str:
    if act is None or act.type == "self":
        return "self"
    if act.type == "constituicao" or act.number is None:
        return act.type
    return f"{act.type}:{act.number.lstrip('0')}"


def _label_act(a: str) -> str:
    kind, _, number = a.partition(":")
    return f"{kind}:{number.lstrip('0')}" if number else kind


def score(sample: Path) -> tuple[int, list[dict]]:
    """Strings of ``sample`` and the ones read wrong (what is missing, what is extra)."""
    rows = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()]
    failures = []
    for r in rows:
        want = {(_label_act(a), *rest) for a, *rest in r["cites"]}
        got = {(_act(c.act), c.article, c.paragraph, c.inciso, c.alinea, c.item) for c in parse(r["text"]) if c.article}
        if got != want:
            failures.append({"text": r["text"], "missing": sorted(want - got, key=str), "extra": sorted(got - want, key=str)})
    return len(rows), failures


def test_sample_is_real_and_labelled():
    rows = [json.loads(line) for s in SAMPLES for line in s.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 650 and len({r["text"] for r in rows}) >= 650  # a few clauses recur across acts
    assert sum(len(r["cites"]) for r in rows) >= 900
    for r in rows:
        assert r["source"] and r["text"]
        for cite in r["cites"]:
            assert len(cite) == 6 and cite[1] and all(v is None or isinstance(v, str) for v in cite)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_at_least_98_percent_right_on_unseen_strings(sample):
    n, failures = score(sample)
    assert (n - len(failures)) / n >= 0.98, json.dumps(failures, ensure_ascii=False, indent=1)
