"""`ragcov chunking`: both chunkings of the shared sample, compared paired by document, as the API does."""
from __future__ import annotations

import json

import pytest

import ragcov_data
from ragcov_data.baselines import BM25
from ragcov_data.cli import main
from ragcov_data.eval import evaluate
from ragcov_data.eval.comparisons.paired_chunkings import compare_chunkings


def test_chunking_verb_equals_the_api(data_dir, tmp_path, capsys):
    out = tmp_path / "chunking.json"
    assert main(["chunking", "--data-dir", str(data_dir), "--quiet", "--n-resamples", "999",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "words-100 vs dispositivo, paired by document" in printed
    got = json.loads(out.read_text())
    assert [c["name"] for c in got["chunkings"]] == ["words-100", "dispositivo"]
    assert {"estimator", "estimate", "low", "high"} <= set(got["chunkings"][0]["estimates"][0])
    assert set(got["difference"]) >= {"estimate", "low", "high", "method", "n_documents"}
    results = {}
    for name, cfg in (("words-100", {"chunk_words": 100}), ("dispositivo", {"chunking": "dispositivo"})):
        ds = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir), show_progress=False, **cfg)
        run = BM25(show_progress=False).index(ds["corpus"]).search(ds["queries"], k=10, exclude_self=True,
                                                                    show_progress=False)
        results[name] = evaluate(run, ds, n_resamples=999)
    ref = compare_chunkings(results, n_resamples=999)
    for key in ("estimate", "low", "high", "n_documents"):
        assert got["difference"][key] == pytest.approx(ref.difference[key], abs=1e-12)


@pytest.mark.parametrize("extra, match", [
    (["--chunking", "words"], "builds both chunkings itself"),
    (["--dataset", "juristcu"], "builds tasks from an acervo"),
])
def test_chunking_verb_bad_options(data_dir, extra, match, capsys):
    assert main(["chunking", "--data-dir", str(data_dir), "--quiet", *extra]) == 2
    assert match in capsys.readouterr().err


def test_acervo_without_artigo_is_words_vs_words_and_few_documents_are_flagged(tmp_path, capsys):
    """No document has an artigo: the dispositivo side falls back to word windows everywhere, which the output
    says instead of a bare +0.0000 [+0.0000, +0.0000]; with 5 documents the document bootstrap is flagged."""
    import numpy as np

    rng = np.random.default_rng(0)
    words = [f"palavra{i}" for i in range(400)]
    acervo = tmp_path / "acervo.jsonl"
    acervo.write_text("".join(json.dumps({"doc_id": f"doc{d}", "text": " ".join(rng.choice(words, 260))}) + "\n"
                              for d in range(5)))
    out = tmp_path / "c.json"
    assert main(["chunking", "--data-files", str(acervo), "--quiet", "--n-resamples", "199", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "notice: both sides fell back to word windows: the comparison is words vs words" in printed
    assert "dispositivo: 5 of 5 documents have no artigo and fell back to word windows (every document)" in printed
    assert "(cluster_bootstrap) [few_clusters]" in printed
    got = json.loads(out.read_text())
    assert got["info"]["fallback"] == {"words-100": True, "dispositivo": True} and got["info"]["few_clusters"] is True
    flags = {(d["estimator"], d["method"]): d["flags"] for d in got["differences"]}
    assert flags == {("macro", "t"): "", ("micro", "linearised_t"): "", ("micro", "cluster_bootstrap"): "few_clusters"}
