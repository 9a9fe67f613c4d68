"""`ragcov chunking --dataset irpf --chunker NAME ...`: built-in and external chunkers in one family, as the API
scores them."""
from __future__ import annotations

import json
import warnings

import pytest

from ragcov_data.baselines import BM25
from ragcov_data.cli import main
from ragcov_data.eval.comparisons.cited import per_query_values
from ragcov_data.loaders.cited_questions import build_cited_task, irpf_dir


def test_chunking_irpf_with_chunkers_end_to_end(data_dir, tmp_path, capsys):
    out = tmp_path / "chunkers.json"
    assert main(["chunking", "--dataset", "irpf", "--data-dir", str(data_dir), "--chunker", "words-50",
                 "--chunker", "dispositivo", "--chunker", "recursive-800", "--retriever", "bm25",
                 "--metrics", "recall@10", "--n-resamples", "199", "--quiet", "--json", str(out)]) == 0
    cap = capsys.readouterr()
    assert "recursive-800/bm25" in cap.out and "dispositivo/bm25" in cap.out and "words-50/bm25" in cap.out
    got = json.loads(out.read_text())
    systems = {s["name"]: s for s in got["leaderboards"]["recall@10"]["systems"]}
    assert set(systems) == {"words-50/bm25", "dispositivo/bm25", "recursive-800/bm25"}
    # the external chunker's number from the API: per-question recall@10 of BM25 on recursive-800
    folder = irpf_dir(data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(folder / "laws.jsonl", folder / "questions.jsonl", chunker="recursive-800")
    qids = [v["query-id"] for v in got["values"]]
    q = task.queries.set_index("_id").loc[qids].reset_index()
    run = BM25(show_progress=False).index(task.corpus).search(q[["_id", "text"]], k=10, show_progress=False)
    ref = per_query_values(run, task, metrics=["recall@10"], query_ids=qids)
    assert systems["recursive-800/bm25"]["estimate"] == pytest.approx(ref["recall@10"].mean(), abs=1e-12)


def test_chunker_beside_chunking_and_bad_chunkers(data_dir, tmp_path, capsys):
    acts = tmp_path / "acts.jsonl"
    arts = "\n".join(f"Art. {i}º O contribuinte deve declarar o rendimento {w} recebido no ano, com os seus "
                     f"comprovantes e a indicação da fonte pagadora do rendimento {w}." for i, w in
                     enumerate(["aluguel", "pensão", "doação", "herança", "salário", "juros"], 1))
    acts.write_text(json.dumps({"doc_id": "lei-10-2000", "title": "Lei nº 10, de 2000", "text": arts},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    qs = tmp_path / "q.jsonl"
    qs.write_text("".join(json.dumps({"qid": f"q{i}", "question": f"Como declarar {w}?",
                                      "citations": f"Lei nº 10, de 2000, art. {i}º"}, ensure_ascii=False) + "\n"
                          for i, w in enumerate(["aluguel", "pensão", "doação", "herança", "salário", "juros"], 1)),
                  encoding="utf-8")
    base = ["chunking", "--dataset", "cited_questions", "--data-files", str(acts), "--questions", str(qs),
            "--retriever", "bm25", "--n-resamples", "199", "--quiet", "--metrics", "recall@5"]
    out = tmp_path / "o.json"
    assert main([*base, "--chunking", "article", "--chunker", "semchunk-20", "--chunker", "chonkie-sentence-20",
                 "--json", str(out)]) == 0
    names = {s["name"] for s in json.loads(out.read_text())["leaderboards"]["recall@5"]["systems"]}
    assert names == {"article/bm25", "semchunk-20/bm25", "chonkie-sentence-20/bm25"}
    rows = [ln for ln in capsys.readouterr().out.splitlines() if "/bm25 " in ln and " recall@5 " in ln]
    assert len(rows) == 3 and len({ln.index(" recall@5 ") for ln in rows}) == 1  # long names keep columns aligned
    assert main([*base, "--chunker", "sentences"]) == 2
    assert "unknown chunker 'sentences'" in capsys.readouterr().err
    assert main([*base, "--chunking", "article", "--chunker", "article"]) == 2
    assert "list a chunking twice" in capsys.readouterr().err
    assert main(["chunking", "--data-dir", str(data_dir), "--chunker", "recursive-800", "--quiet"]) == 2
    assert "--chunker applies to --dataset irpf / cited_questions" in capsys.readouterr().err
