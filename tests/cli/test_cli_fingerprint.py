"""A run carries the task it was made on; every reader refuses it on another cut (no silent wrong number)."""
from __future__ import annotations

import re
import warnings

import pandas as pd
import pytest

from ragcov_data.cli import main
from ragcov_data.errors import QrelsRunMismatchError
from ragcov_data.runs.fingerprint import (FINGERPRINT_KEY, check_chunk_ids, run_fingerprint, stamp_run,
                                         task_fingerprint)
from ragcov_data.runs import load_run, save_run


@pytest.fixture(scope="module")
def cuts(tmp_path_factory, data_dir):
    """bm25 runs made by `ragcov run` at 100 and 400 words (TREC and parquet), and tag-less copies."""
    d = tmp_path_factory.mktemp("cuts")
    cache = d / "cache"
    for words in (100, 400):
        for suffix in (".trec", ".parquet"):
            out = d / f"w{words}{suffix}"
            assert main(["run", "--retriever", "bm25", "--data-dir", str(data_dir), "--chunk-words", str(words),
                         "--cache-dir", str(cache), "--out", str(out), "--quiet"]) == 0
        plain = d / f"w{words}_plain.trec"  # the same run as another tool writes it: no fingerprint
        plain.write_text("".join(" ".join(line.split()[:5] + ["other"]) + "\n"
                                 for line in (d / f"w{words}.trec").read_text().splitlines()))
    return d


def _eval(args, capsys):
    rc = main(["eval", *map(str, args)])
    out = capsys.readouterr()
    return rc, out.out + out.err


def test_run_writes_the_fingerprint_in_the_tag_and_metadata(cuts):
    line = (cuts / "w400.trec").read_text().splitlines()[0].split()
    assert len(line) == 6  # still a standard TREC run
    assert re.fullmatch(r"bm25\|rc:[0-9a-f]{12}@aneel_taesa/chunks-400", line[5])
    meta = load_run(cuts / "w400.parquet").attrs[FINGERPRINT_KEY]
    assert meta["chunk_words"] == 400 and meta["dataset"] == "aneel_taesa"
    assert line[5].split("|rc:")[1].startswith(meta["corpus_sha256"][:12])
    assert run_fingerprint(load_run(cuts / "w400.trec").attrs)["short"] == meta["corpus_sha256"][:12]
    ir_measures = pytest.importorskip("ir_measures")  # an outside reader of TREC runs takes the tagged file as is
    assert len(list(ir_measures.read_trec_run(str(cuts / "w400.trec")))) == len(load_run(cuts / "w400.trec"))


@pytest.mark.parametrize("name", ["w400.trec", "w400.parquet"])
def test_run_of_another_cut_is_refused_naming_its_task(cuts, data_dir, capsys, name):
    rc, text = _eval([cuts / name, "--data-dir", data_dir, "--cache-dir", cuts / "cache"], capsys)
    assert rc != 0 and "--chunk-words 400" in text  # parquet: its recorded parameters already name the cut
    assert "the run was made on aneel_taesa/chunks-400" in text or "run made at chunk_words=400" in text
    rc, text = _eval([cuts / name, "--data-dir", data_dir, "--chunk-words", 400, "--cache-dir", cuts / "cache"],
                     capsys)
    assert rc == 0, text


def test_run_without_fingerprint_is_refused_by_its_ids(cuts, data_dir, capsys):
    # coarser cut on a finer task: every id exists, but none reaches a document's second half
    rc, text = _eval([cuts / "w400_plain.trec", "--data-dir", data_dir, "--cache-dir", cuts / "cache"], capsys)
    assert rc != 0 and "no task fingerprint" in text and "coarser cut" in text
    # finer cut on a coarser task: ids past a document's last chunk
    rc, text = _eval([cuts / "w100_plain.trec", "--data-dir", data_dir, "--chunk-words", 400,
                      "--cache-dir", cuts / "cache"], capsys)
    assert rc != 0 and "past their document's last chunk" in text and "on-missing zero" not in text
    rc, text = _eval([cuts / "w100_plain.trec", "--data-dir", data_dir, "--cache-dir", cuts / "cache"], capsys)
    assert rc == 0, text  # its own task: scored


def test_leaderboard_intersect_does_not_pair_two_cuts(cuts, data_dir, capsys):
    rc = main(["leaderboard", str(cuts / "w100.trec"), str(cuts / "w400.trec"), "--on-missing", "intersect",
               "--data-dir", str(data_dir), "--cache-dir", str(cuts / "cache"), "--n-resamples", "99"])
    err = capsys.readouterr().err
    assert rc != 0 and "made on aneel_taesa/chunks-400" in err
    rc = main(["leaderboard", str(cuts / "w100_plain.trec"), str(cuts / "w400_plain.trec"), "--on-missing",
               "intersect", "--data-dir", str(data_dir), "--cache-dir", str(cuts / "cache"), "--n-resamples", "99"])
    assert rc != 0 and "coarser cut" in capsys.readouterr().err


def test_compare_and_misses_check_the_fingerprint(cuts, data_dir, capsys):
    common = ["--data-dir", str(data_dir), "--cache-dir", str(cuts / "cache")]
    assert main(["compare", str(cuts / "w100.trec"), str(cuts / "w400.trec"), *common]) != 0
    assert "made on aneel_taesa/chunks-400" in capsys.readouterr().err
    assert main(["misses", str(cuts / "w400.trec"), *common]) != 0
    assert "made on aneel_taesa/chunks-400" in capsys.readouterr().err


@pytest.fixture(scope="module")
def irpf_cuts(tmp_path_factory, data_dir):
    """bm25 on IRPF words-400 (made through the library) and on IRPF's default cut (`ragcov run`)."""
    import ragcov_data
    from ragcov_data.baselines.registry import make_retriever

    d = tmp_path_factory.mktemp("irpf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = ragcov_data.load_dataset("irpf", chunking="words", chunk_words=400, data_dir=data_dir,
                                      cache_dir=str(d / "cache"))
    r = make_retriever("bm25", show_progress=False)
    r.index(ds["corpus"])
    run = r.search(ds["queries"], k=10, exclude_self=False)
    assert run.attrs[FINGERPRINT_KEY]["corpus_sha256"] == task_fingerprint(ds)["corpus_sha256"]  # search records it
    save_run(run, d / "api.trec")  # as the library saves it: the corpus hash, no task name
    plain = run.copy()
    plain.attrs = {k: v for k, v in run.attrs.items() if k != FINGERPRINT_KEY}  # as another tool writes it
    save_run(plain, d / "plain.trec", tag="bm25")
    save_run(stamp_run(run, ds), d / "w400.trec")
    assert main(["run", "--retriever", "bm25", "--dataset", "irpf", "--data-dir", str(data_dir), "--cache-dir",
                 str(d / "cache"), "--out", str(d / "own.trec"), "--quiet"]) == 0
    return d


@pytest.mark.parametrize("name, says", [("w400.trec", "made on irpf/words-400"), ("plain.trec", "coarser cut"),
                                        ("api.trec", "the run was made on another task")])
def test_irpf_run_of_another_cut_is_refused(irpf_cuts, data_dir, capsys, name, says):
    rc, text = _eval([irpf_cuts / name, "--dataset", "irpf", "--data-dir", data_dir, "--metric", "recall@10",
                      "--cache-dir", irpf_cuts / "cache"], capsys)
    assert rc != 0 and says in text


def test_irpf_run_on_its_own_task_is_scored(irpf_cuts, data_dir, capsys):
    assert "|rc:" in (irpf_cuts / "own.trec").read_text().split("\n")[0]
    rc, text = _eval([irpf_cuts / "own.trec", "--dataset", "irpf", "--data-dir", data_dir, "--metric", "recall@10",
                      "--cache-dir", irpf_cuts / "cache"], capsys)
    assert rc == 0, text


def test_juristcu_run_checks_its_corpus(tmp_path, data_dir, capsys):
    out = tmp_path / "j.trec"
    common = ["--dataset", "juristcu", "--data-dir", str(data_dir), "--cache-dir", str(tmp_path / "cache")]
    assert main(["run", "--retriever", "bm25", *common, "--out", str(out), "--quiet"]) == 0
    assert "|rc:" in out.read_text().split("\n")[0] and "@juristcu" in out.read_text().split("\n")[0]
    assert main(["eval", str(out), *common]) == 0
    capsys.readouterr()
    forged = tmp_path / "forged.trec"  # the same rows marked as made on another corpus
    forged.write_text(re.sub(r"\|rc:[0-9a-f]{12}", "|rc:000000000000", out.read_text()))
    assert main(["eval", str(forged), *common]) != 0
    assert "the run was made on juristcu" in capsys.readouterr().err


def test_fingerprint_depends_on_the_chunks_not_on_the_loading():
    corpus = pd.DataFrame({"_id": ["a#0000", "a#0001"], "doc_id": ["a", "a"], "chunk_index": [0, 1],
                           "text": ["um dois", "tres"]})
    task = {"corpus": corpus}
    same = task_fingerprint({"corpus": corpus.copy()})
    assert task_fingerprint(task)["corpus_sha256"] == same["corpus_sha256"]
    other = corpus.assign(text=["um", "dois tres"])  # same ids, other chunks
    assert task_fingerprint({"corpus": other})["corpus_sha256"] != same["corpus_sha256"]


def test_chunk_ids_past_the_last_chunk_are_refused_even_with_a_fingerprint():
    corpus = pd.DataFrame({"_id": [f"d{i}#{j:04d}" for i in range(2) for j in range(3)],
                           "doc_id": [f"d{i}" for i in range(2) for j in range(3)], "chunk_index": [0, 1, 2] * 2})
    run = pd.DataFrame({"query-id": ["q"] * 2, "corpus-id": ["d0#0001", "d1#0007"]})
    with pytest.raises(QrelsRunMismatchError, match="past their document's last chunk"):
        check_chunk_ids(run, corpus, "r.trec", has_fingerprint=True)
    check_chunk_ids(run.iloc[:1], corpus, "r.trec", has_fingerprint=False)  # too little evidence: no pattern


def test_cited_scoring_of_a_run_file_checks_its_cut(irpf_cuts, data_dir):
    import ragcov_data
    from ragcov_data.eval.comparisons.cited import per_query_values

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        article = ragcov_data.load_dataset("irpf", data_dir=data_dir, cache_dir=str(irpf_cuts / "cache"))
    with pytest.raises(QrelsRunMismatchError, match="made on irpf/words-400"):
        per_query_values(irpf_cuts / "w400.trec", article, metrics=["recall@10"])
    own = per_query_values(irpf_cuts / "own.trec", article, metrics=["recall@10"])
    assert own["recall@10"].between(0, 1).all() and len(own) > 100
