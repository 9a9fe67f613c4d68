"""`ragcov proxy` end to end on the shared IRPF acts and questions: both orders, tau with its interval, the pairs
and the winners printed; the JSON holds each system's two estimates, the real ones equal to the API's."""
from __future__ import annotations

import json
import re

import pytest

from ragcov_data.cli import main


def test_proxy_on_irpf(data_dir, tmp_path, capsys, irpf_api_values):
    out = tmp_path / "proxy.json"
    assert main(["proxy", "--dataset", "irpf", "--data-dir", str(data_dir), "--retrievers", "bm25,tfidf",
                 "--cuts", "words-100,words-200", "--cut-retriever", "bm25", "--units", "artigo",
                 "--n-resamples", "199", "--no-check", "--quiet", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "== retrievers family, artigos as documents ==" in text and "== cuts family, artigos as documents ==" in text
    assert re.search(r"tau-b [+-]\d\.\d\d, 95% interval \[[+-]\d\.\d\d, [+-]\d\.\d\d\]‡", text)
    assert "‡ UNVERIFIABLE: the interval for tau: the check cannot vouch here" in text  # --no-check, said
    assert "pair (real order)" in text and ("both name" in text or "the proxy names" in text)
    data = json.loads(out.read_text())
    assert data["result_type"] == "ProxyStudyResult" and data["tasks"]["real"]["questions"] == 174
    head = next(c for c in data["comparisons"] if c["headline"] and c["family"] == "retrievers")
    rows = {r["name"]: r for r in head["result"]["systems"]}
    assert set(rows) == {"bm25", "tfidf"}
    ref = irpf_api_values(_scored(data_dir), ["span_recall@1000w"], k=None, chunking="words", chunk_words=100)
    assert rows["bm25"]["real_estimate"] == pytest.approx(ref["span_recall@1000w"].mean(), abs=1e-12)
    assert all(0 <= r["proxy_estimate"] <= 1 for r in rows.values())
    assert head["result"]["winners"]["real"] in rows and head["result"]["agreement"]["pairs"] == 1


def _scored(data_dir):
    import warnings

    from ragcov_data.eval.outcomes.budget import cited_provisions
    from ragcov_data.loaders.cited_questions import build_cited_task, irpf_dir

    folder = irpf_dir(data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(folder / "laws.jsonl", folder / "questions.jsonl", chunking="words", chunk_words=100)
    prov = cited_provisions(task.citations, "dispositivo")
    return [q for q in task.queries["_id"] if q in prov]


@pytest.mark.parametrize("args, msg", [
    (["--cuts", "words-100,article"], "article cut has no self-retrieval"),
    (["--units", "chapter"], "proxy unit"),
    (["--retrievers", "bm25", "--cuts", "none"], "nothing to order"),
    (["--level", "1.5"], "level"),
])
def test_bad_arguments_are_one_line(data_dir, capsys, args, msg):
    assert main(["proxy", "--dataset", "irpf", "--data-dir", str(data_dir), "--no-check", "--quiet", *args]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and err.count("\n") == 1

