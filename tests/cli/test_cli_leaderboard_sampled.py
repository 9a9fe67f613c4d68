"""On a document-sampled task the leaderboard's header names the interval it prints (known sizes), not CR2."""
from __future__ import annotations

import json

from ragcov_data.cli import main


def test_sampled_leaderboard_header_names_the_printed_interval(tmp_path, data_dir, capsys):
    runs = []
    for r in ("bm25", "tfidf"):
        out = tmp_path / f"{r}.trec"
        assert main(["run", "--retriever", r, "--data-dir", str(data_dir), "--sample-docs", "30", "--seed", "1",
                     "--chunk-words", "400", "--cache-dir", str(tmp_path / "c"), "--out", str(out), "--quiet"]) == 0
        runs.append(str(out))
    capsys.readouterr()
    js = tmp_path / "b.json"
    assert main(["leaderboard", *runs, "--data-dir", str(data_dir), "--chunk-words", "400", "--cache-dir",
                 str(tmp_path / "c"), "--n-resamples", "199", "--json", str(js)]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("hit@1 ·"))
    assert "known-sizes interval" in header and "CR2" not in header
    got = json.loads(js.read_text())
    group = got["groups"]["__all__"] if "__all__" in got["groups"] else next(iter(got["groups"].values()))
    assert group["method"] == "known_sizes" == got["systems"][0]["method"]
