"""Runs that cannot pass for another cut: a fingerprint is checked against the run's ids as a run without one
is; a run whose queries are exactly another window size's chunks is refused by eval and the leaderboard alike,
naming that size; a run made on another version of the corpus is told so, and every hint loads."""
from __future__ import annotations

import re
import shutil
import warnings

import pandas as pd
import pytest

import ragcov_data
from ragcov_data.cli import main
from ragcov_data.errors import QrelsRunMismatchError
from ragcov_data.runs import load_run, save_run
from ragcov_data.runs.fingerprint import check_chunk_ids, check_fingerprint, stamp_run


def _cli(args, capsys):
    rc = main([str(a) for a in args])
    out = capsys.readouterr()
    return rc, out.out + out.err


@pytest.fixture(scope="module")
def aneel_runs(tmp_path_factory, data_dir):
    """bm25 at 100 and 120 words, written by `ragcov run`, and copies without the fingerprint."""
    d = tmp_path_factory.mktemp("aneel")
    for words in (100, 120):
        out = d / f"w{words}.trec"
        assert main(["run", "--retriever", "bm25", "--data-dir", str(data_dir), "--chunk-words", str(words),
                     "--cache-dir", str(d / "cache"), "--out", str(out), "--quiet"]) == 0
        (d / f"w{words}_plain.trec").write_text("".join(" ".join(line.split()[:5] + ["other"]) + "\n"
                                                        for line in out.read_text().splitlines()))
    return d


def test_a_run_at_a_nearby_size_is_refused_naming_it(aneel_runs, data_dir, capsys):
    common = ["--data-dir", data_dir, "--cache-dir", aneel_runs / "cache"]
    rc, text = _cli(["eval", aneel_runs / "w120_plain.trec", *common], capsys)
    assert rc != 0 and "the run's query ids are exactly the chunks of a cut at 120 words a chunk" in text
    assert "--chunk-words 120" in text and "on-missing zero" not in text and "on_missing='zero'" not in text
    rc, text = _cli(["leaderboard", aneel_runs / "w100_plain.trec", aneel_runs / "w120_plain.trec",
                     "--on-missing", "intersect", "--n-resamples", 99, *common], capsys)
    assert rc != 0 and "a cut at 120 words a chunk" in text and "--chunk-words 120" in text
    rc, text = _cli(["eval", aneel_runs / "w120_plain.trec", "--chunk-words", 120, *common], capsys)
    assert rc == 0, text  # its own task


def test_a_run_missing_a_few_queries_is_still_told_about_on_missing(aneel_runs, data_dir, capsys):
    run = load_run(aneel_runs / "w100_plain.trec")
    ids = run["query-id"].drop_duplicates()
    idx = ids.str.rsplit("#", n=1).str[1].astype(int)
    last = ids[idx == idx.groupby(ids.str.rsplit("#", n=1).str[0]).transform("max")].iloc[:2]  # two last chunks
    short = aneel_runs / "short.trec"
    save_run(run[~run["query-id"].isin(set(last))].reset_index(drop=True), short, tag="other")
    rc, text = _cli(["eval", short, "--data-dir", data_dir, "--cache-dir", aneel_runs / "cache"], capsys)
    assert rc != 0 and "has no rows for 2 of the task's 2312 queries" in text and "--on-missing zero" in text
    assert "exactly the chunks of a cut" not in text


@pytest.fixture(scope="module")
def irpf_runs(tmp_path_factory, data_dir):
    """IRPF bm25 at words-400 tagged with the article task's fingerprint, and on the article task itself."""
    d = tmp_path_factory.mktemp("irpf")
    kw = {"data_dir": data_dir, "cache_dir": str(d / "cache")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w400 = ragcov_data.load_dataset("irpf", chunking="words", chunk_words=400, **kw)
        article = ragcov_data.load_dataset("irpf", **kw)
    from ragcov_data.baselines.registry import make_retriever

    r = make_retriever("bm25", show_progress=False)
    r.index(w400["corpus"])
    run = r.search(w400["queries"], k=10, exclude_self=False)
    run.attrs = {}
    save_run(stamp_run(run, article), d / "tagged.trec")  # another cut's rows under the article task's tag
    r = make_retriever("bm25", show_progress=False)
    r.index(article["corpus"])
    save_run(stamp_run(r.search(article["queries"], k=10, exclude_self=False), article), d / "own.trec")
    return d


def test_a_tag_is_checked_against_the_run_ids(irpf_runs, data_dir, capsys):
    common = ["--dataset", "irpf", "--data-dir", data_dir, "--metric", "recall@10", "--cache-dir",
              irpf_runs / "cache"]
    assert "|rc:" in (irpf_runs / "tagged.trec").read_text().split("\n")[0]
    rc, text = _cli(["eval", irpf_runs / "tagged.trec", *common], capsys)
    assert rc != 0 and "the run's fingerprint names this task, yet only" in text and "coarser cut" in text
    assert "no task fingerprint" not in text
    rc, text = _cli(["eval", irpf_runs / "own.trec", *common], capsys)
    assert rc == 0, text


def test_the_id_pattern_is_checked_whatever_the_fingerprint():
    corpus = pd.DataFrame({"_id": [f"d{i}#{j:04d}" for i in range(6) for j in range(8)],
                           "doc_id": [f"d{i}" for i in range(6) for j in range(8)], "chunk_index": list(range(8)) * 6})
    run = pd.DataFrame({"query-id": [f"q{k}" for k in range(60)],
                        "corpus-id": [f"d{k % 6}#{k % 3:04d}" for k in range(60)]})  # first half only
    for has in (False, True):
        with pytest.raises(QrelsRunMismatchError, match="coarser cut"):
            check_chunk_ids(run, corpus, "r.trec", has_fingerprint=has)


# --------------------------------------------------------------------------- another version of the corpus


@pytest.fixture(scope="module")
def other_version(tmp_path_factory, data_dir):
    """The shared data with one word changed in an IRPF act and in an ANEEL act, and a run on each."""
    d = tmp_path_factory.mktemp("v2")
    (d / "irpf").mkdir()
    (d / "aneel").mkdir()
    shutil.copy(data_dir / "irpf" / "questions.jsonl", d / "irpf" / "questions.jsonl")
    for src, dst, old, new in ((data_dir / "irpf" / "laws.jsonl", d / "irpf" / "laws.jsonl", " imposto ", " tributo "),
                               (data_dir / "aneel" / "aneel_fulltext.jsonl", d / "aneel" / "aneel_fulltext.jsonl",
                                " energia ", " eletricidade ")):
        text = src.read_text(encoding="utf-8")
        assert old in text
        dst.write_text(text.replace(old, new, 1), encoding="utf-8")
    cache = str(d / "cache")
    assert main(["run", "--retriever", "bm25", "--dataset", "irpf", "--data-dir", str(d), "--cache-dir", cache,
                 "--out", str(d / "irpf.trec"), "--quiet"]) == 0
    assert main(["run", "--retriever", "bm25", "--data-dir", str(d), "--cache-dir", cache,
                 "--out", str(d / "aneel.trec"), "--quiet"]) == 0
    return d


@pytest.mark.parametrize("name, args, cut", [
    ("irpf.trec", ["--dataset", "irpf", "--metric", "recall@10"], "irpf/article"),
    ("aneel.trec", [], "aneel_taesa/chunks-100"),
])
def test_a_run_on_another_version_of_the_corpus_is_told_so(other_version, data_dir, capsys, name, args, cut):
    rc, text = _cli(["eval", other_version / name, *args, "--data-dir", data_dir, "--cache-dir",
                     other_version / "cache"], capsys)
    assert rc != 0 and f"the run was made on {cut}, this task's own cut, but of other text" in text
    assert "the sources changed between the run and this task" in text
    assert "name other chunks" not in text and "--chunk-words 100" not in text and "name=" not in text


@pytest.mark.parametrize("label, config", [("irpf/article", "article"), ("irpf/dispositivo-200", "dispositivo-200"),
                                           ("irpf/words-400", "words-400"),
                                           ("irpf/article-artqrels", "article-artqrels")])
def test_the_hint_for_a_cited_cut_loads_that_cut(data_dir, tmp_path, label, config):
    run = pd.DataFrame({"query-id": ["q"], "corpus-id": ["a#0000"]})
    run.attrs["tag"] = [f"bm25|rc:000000000000@{label}"]
    task_fp = {"corpus_sha256": "f" * 64, "chunks": 10, "dataset": "irpf", "config": "words-100"}
    with pytest.raises(QrelsRunMismatchError) as err:
        check_fingerprint(run, task_fp, "r.trec")
    call = re.search(r"ragcov_data\.load_dataset\('irpf', ([^)]*)\)", str(err.value)).group(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = eval(f"ragcov_data.load_dataset('irpf', {call}, data_dir=data_dir, cache_dir=tmp_path)")  # noqa: S307
    assert ds["corpus"].info.config_name == config
