"""A run is read once: ``ragcov eval X`` and ``evaluate("X")`` say the same things about every run file.

The command line reads the run (with a depth) and hands the DataFrame to the outcome stage; that stage
must not re-describe the file (rank-only, ranks made from scores, ties) differently from a path given to
the library.
"""
from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest

from ragcov_data.cli import main
from ragcov_data.eval import evaluate
from ragcov_data.runs import load_run, save_run
from ragcov_data.tasks.sources import resolve_task


@pytest.fixture(scope="module")
def acervo(twelve_acts):
    """Twelve acts of the shared acervo, chunked at 100 words: a small task, and bm25 run files in every form."""
    src, out = twelve_acts("bm25.parquet")
    d = src.parent
    run = load_run(out)
    rng = np.random.default_rng(0)
    q = run["query-id"].unique()
    tied_q = set(rng.choice(q, size=int(0.75 * len(q)), replace=False))
    tied = run.assign(score=np.where(run["query-id"].isin(tied_q), 1.0, run["score"]))
    plain = run[["query-id", "corpus-id", "rank", "score"]]
    files = {"bm25.parquet": None}
    plain.to_csv(d / "r.csv", index=False)
    plain.to_csv(d / "r.tsv", sep="\t", index=False)
    tied[["query-id", "corpus-id", "rank", "score"]].to_csv(d / "tied.csv", index=False)
    tied[["query-id", "corpus-id", "score"]].to_csv(d / "tied_score_only.csv", index=False)
    rank_tied = tied.assign(rank=np.where(tied["query-id"].isin(tied_q), 1, tied["rank"]))
    rank_tied[["query-id", "corpus-id", "rank"]].to_csv(d / "tied_rank_only.csv", index=False)
    plain[["query-id", "corpus-id", "rank"]].to_csv(d / "rank_only.csv", index=False)
    save_run(run, d / "r.trec")
    with gzip.open(d / "r.trec.gz", "wt") as fh:
        fh.write((d / "r.trec").read_text())
    nested: dict = {}
    for a, b, s in zip(plain["query-id"], plain["corpus-id"], plain["score"]):
        nested.setdefault(a, {})[b] = s
    (d / "r.json").write_text(json.dumps(nested))
    plain.to_json(d / "r.jsonl", orient="records", lines=True)
    files.update({p: None for p in ("r.csv", "r.tsv", "tied.csv", "tied_score_only.csv", "tied_rank_only.csv",
                                    "rank_only.csv", "r.trec", "r.trec.gz", "r.json", "r.jsonl")})
    return d, src, list(files)


def _said(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.startswith(("notice", "top score tied"))]


@pytest.mark.parametrize("metric", ["hit@1", "ndcg@10"])
def test_cli_and_api_print_the_same_notices_for_every_run(acervo, capsys, metric):
    d, src, names = acervo
    task = resolve_task(data_files=[str(src)]).task
    said_tied = []
    for name in names:
        assert main(["eval", str(d / name), "--data-files", str(src), "--metric", metric, "--n-resamples",
                     "199"]) == 0
        cli = _said(capsys.readouterr().out)
        api = _said(evaluate(str(d / name), task, metric, n_resamples=199).summary())
        assert cli == api, name
        said_tied.append(any("share one score" in line for line in cli))
    # the tied files are said tied both ways (the rank-only one too: its equal ranks tie)
    assert dict(zip(names, said_tied))["tied.csv"] and dict(zip(names, said_tied))["tied_score_only.csv"]
    assert not dict(zip(names, said_tied))["r.trec"]


def test_a_run_read_once_keeps_its_provenance(acervo):
    d, _, _ = acervo
    for name, key, value in (("rank_only.csv", "score_from", "rank"), ("tied_score_only.csv", "rank_from", "score")):
        first = load_run(d / name, depth=3)
        again = load_run(first)
        assert first.attrs[key] == value and again.attrs[key] == value
        edited = first.assign(score=-np.arange(len(first), dtype=float) * 2.5)  # scores written over: no longer from ranks
        if key == "score_from":
            assert load_run(edited).attrs["score_from"] == "file"
    frame = pd.DataFrame({"query-id": ["q", "q"], "corpus-id": ["a", "b"], "rank": [1, 2]})
    assert load_run(load_run(frame)).attrs["score_from"] == "rank"
