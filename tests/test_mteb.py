"""ragcov inside MTEB and MTEB inside ragcov: mteb.evaluate runs ragcov's retrievers on ragcov's JurisTCU task
offline; the prediction files it writes are read as runs (eval, leaderboard) and scored as pytrec_eval scores
them; the result JSON holds ragcov's clustered interval, the one `ragcov eval` gives."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
mteb = pytest.importorskip("mteb", reason="the [mteb] extra (in [test]) is not installed")
pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier (in [test]) is not installed")

from ragcov_data.interop import mteb as rm  # noqa: E402
from ragcov_data.cli import main  # noqa: E402
from ragcov_data.errors import InputFileError, RagcovError  # noqa: E402
from ragcov_data.runs import load_run  # noqa: E402

SYSTEMS = ("bm25", "tfidf", "bm25-pt")
PRED = "RagcovJurisTCU_predictions.json"


@pytest.fixture(scope="module")
def evaluated(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """mteb.evaluate of three ragcov retrievers on ragcov's JurisTCU task: {name: (folder, scores, task)}."""
    root = tmp_path_factory.mktemp("mteb")
    out = {}
    for name in SYSTEMS:
        task = rm.tasks(data_dir, names=["RagcovJurisTCU"])
        res = mteb.evaluate(rm.model(name), tasks=task, prediction_folder=root / name, cache=None,
                            overwrite_strategy="always", show_progress_bar=False)
        out[name] = (root / name, res.task_results[0].scores["test"][0], task[0])
    return out


def _qrels(task: object) -> dict[str, dict[str, int]]:
    q = task.ragcov_task["qrels"].to_pandas()
    rel: dict[str, dict[str, int]] = {}
    for a, b, s in zip(q["query-id"], q["corpus-id"], q["score"]):
        rel.setdefault(str(a), {})[str(b)] = int(s)
    return rel


def _trec_ndcg10(pred_file: Path, qrels: dict) -> float:
    """pytrec_eval's nDCG@10 of a prediction file, mean over the judged queries."""
    run = json.loads(pred_file.read_text())["default"]["test"]
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    per = ev.evaluate({q: {d: float(s) for d, s in docs.items()} for q, docs in run.items() if docs})
    return sum(per[q]["ndcg_cut_10"] if q in per else 0.0 for q in qrels) / len(qrels)


def _eval(pred: Path, data_dir: Path, out: Path, *extra: str) -> dict:
    assert main(["eval", str(pred), "--dataset", "juristcu", "--data-dir", str(data_dir / "juristcu"),
                 "--metric", "ndcg@10", "--json", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_metadata_is_complete(data_dir: Path) -> None:
    tasks = rm.tasks(data_dir)
    assert [t.metadata.name for t in tasks] == list(rm.TASK_NAMES)
    for t in tasks:
        m = t.metadata
        assert m.eval_langs == ["por-Latn"] and m.license and m.domains and m.reference and m.bibtex_citation
    assert tasks[0].metadata.main_score == "ndcg_at_10"
    assert "chunk-level" in tasks[1].metadata.description
    assert tasks[2].ignore_identical_ids is True and tasks[0].ignore_identical_ids is False
    with pytest.raises(RagcovError, match="RagcovJurisTCU"):
        rm.tasks(data_dir, names=["nope"])
    with pytest.raises(RagcovError, match="unknown retriever"):
        rm.model("bm26")


def test_eval_reads_mteb_predictions_and_matches_its_ndcg(evaluated: dict, data_dir: Path, tmp_path: Path) -> None:
    folder, scores, task = evaluated["bm25"]
    ours = _eval(folder / PRED, data_dir, tmp_path / "ev.json")
    micro = next(e for e in ours["estimates"] if e["estimator"] == "micro")["estimate"]
    assert micro == pytest.approx(_trec_ndcg10(folder / PRED, _qrels(task)), abs=1e-9)
    assert micro == pytest.approx(scores["ragcov_mteb_main_score_unrounded"], abs=1e-6)  # MTEB's own mean
    assert micro == pytest.approx(scores["ndcg_at_10"], abs=5e-6)  # ... which MTEB stores rounded to 5 decimals
    assert load_run(folder / PRED).attrs["tag"] == "ragcov/bm25"


def test_result_json_holds_ragcovs_clustered_interval(evaluated: dict, data_dir: Path, tmp_path: Path) -> None:
    folder, scores, _ = evaluated["tfidf"]
    ours = _eval(folder / PRED, data_dir, tmp_path / "ev.json")
    rec = next(e for e in ours["estimates"] if e["estimator"] == "micro" and e["recommended"])
    assert ours["cluster"] == "source_key" and ours["n_clusters"] == scores["ragcov_n_clusters"] < 150
    assert scores["ragcov_ci_low"] == pytest.approx(rec["low"], abs=1e-12)
    assert scores["ragcov_ci_high"] == pytest.approx(rec["high"], abs=1e-12)
    assert scores["ragcov_estimate"] == pytest.approx(rec["estimate"], abs=1e-12)


def test_leaderboard_over_prediction_files(evaluated: dict, data_dir: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture) -> None:
    # a fourth file: bm25's lists with one document from outside the shipped subset on top of every query
    folder = evaluated["bm25"][0]
    obj = json.loads((folder / PRED).read_text())
    obj["mteb_model_meta"]["model_name"] = "perturbed"
    for docs in obj["default"]["test"].values():
        docs["outside-99999"] = 1e6
    (tmp_path / "p").mkdir()
    perturbed = tmp_path / "p" / PRED
    perturbed.write_text(json.dumps(obj))
    files = [evaluated[n][0] / PRED for n in SYSTEMS] + [perturbed]
    out = tmp_path / "lb.json"
    assert main(["leaderboard", *map(str, files), "--dataset", "juristcu", "--data-dir", str(data_dir / "juristcu"),
                 "--metric", "ndcg@10", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert "outside" in (captured.out + captured.err).lower()
    board = {s["name"]: s for s in json.loads(out.read_text())["systems"]}
    assert set(board) == {f"ragcov/{n}" for n in SYSTEMS} | {"perturbed"}
    qrels = _qrels(evaluated["bm25"][2])
    for n, f in zip([f"ragcov/{n}" for n in SYSTEMS] + ["perturbed"], files):
        assert board[n]["estimate"] == pytest.approx(_trec_ndcg10(f, qrels), abs=1e-9)
    assert board["perturbed"]["estimate"] < board["ragcov/bm25"]["estimate"]


def _write(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj))
    return path


def test_bad_prediction_files(tmp_path: Path) -> None:
    run = {"q1": {"d1": 1.0}}
    two = _write(tmp_path / "two.json", {"mteb_model_meta": {"model_name": "m"}, "default": {"test": run, "dev": run}})
    with pytest.raises(InputFileError, match=r"2 splits \(test, dev\).*--split"):
        load_run(two)
    assert load_run(two, split="dev")["corpus-id"].tolist() == ["d1"]
    with pytest.raises(InputFileError, match="no split 'train'.*test, dev"):
        load_run(two, split="train")
    subs = _write(tmp_path / "subs.json", {"mteb_model_meta": {"model_name": "m"}, "a": {"test": run},
                                           "b": {"test": run}})
    with pytest.raises(InputFileError, match=r"2 subsets \(a, b\).*--subset"):
        load_run(subs)
    assert load_run(subs, subset="b").attrs["mteb_subset"] == "b"
    with pytest.raises(InputFileError, match="model_name"):
        load_run(_write(tmp_path / "meta.json", {"mteb_model_meta": "x", "default": {"test": run}}))
    with pytest.raises(InputFileError, match="no subset"):
        load_run(_write(tmp_path / "empty.json", {"mteb_model_meta": {"model_name": "m"}}))
    with pytest.raises(InputFileError, match="split 'test' must be"):
        load_run(_write(tmp_path / "list.json", {"mteb_model_meta": {"model_name": "m"}, "default": {"test": [1]}}))


@pytest.mark.parametrize("name", ["RagcovANEELSelfRetrieval", "RagcovIRPF-400"])
def test_other_tasks_run_and_their_interval_is_ragcovs(name: str, data_dir: Path, tmp_path: Path) -> None:
    """ANEEL: the query's own chunk is ignored by MTEB and by ragcov alike; IRPF: chunk-level recall@10."""
    task = rm.tasks(data_dir, names=[name])
    res = mteb.evaluate(rm.model("bm25"), tasks=task, prediction_folder=tmp_path, cache=None,
                        overwrite_strategy="always", show_progress_bar=False)
    scores = res.task_results[0].scores["test"][0]
    main_score = task[0].metadata.main_score
    assert scores["ragcov_estimate"] == pytest.approx(scores["ragcov_mteb_main_score_unrounded"], abs=1e-9)
    assert scores["ragcov_estimate"] == pytest.approx(scores[main_score], abs=5e-6)
    assert scores["ragcov_ci_low"] < scores["ragcov_estimate"] < scores["ragcov_ci_high"]
    # chunks of one act move together; IRPF questions are clustered by their topic, the task's unit
    assert scores["ragcov_n_clusters"] < scores["ragcov_n_queries"]
    if name == "RagcovIRPF-400":
        topics = task[0].ragcov_task["queries"].to_pandas()
        scored = topics[topics["_id"].isin(set(task[0].ragcov_task["qrels"]["query-id"]))]
        assert scores["ragcov_n_clusters"] == scored["topic"].nunique()


def test_cli_split_picks_one_of_several(evaluated: dict, data_dir: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture) -> None:
    folder = evaluated["bm25"][0]
    obj = json.loads((folder / PRED).read_text())
    run = obj["default"]["test"]
    obj["default"]["dev"] = {q: dict(list(docs.items())[1:]) for q, docs in run.items()}  # another list
    both = _write(tmp_path / PRED, obj)
    base = ["eval", str(both), "--dataset", "juristcu", "--data-dir", str(data_dir / "juristcu"), "--metric", "ndcg@10"]
    assert main(base) == 2
    assert "--split" in capsys.readouterr().err
    test = _eval(both, data_dir, tmp_path / "t.json", "--split", "test")
    dev = _eval(both, data_dir, tmp_path / "d.json", "--split", "dev")
    assert test["estimates"][0]["estimate"] == pytest.approx(_trec_ndcg10(folder / PRED, _qrels(evaluated["bm25"][2])),
                                                             abs=1e-9)
    assert dev["estimates"][0]["estimate"] != test["estimates"][0]["estimate"]


def test_a_packaged_encoder_runs_as_an_mteb_encoder(data_dir: Path, tmp_path: Path) -> None:
    """MTEB's own dense search over a packaged encoder (WordLlama: the fastest on a CPU) ranks as ragcov's dense
    retriever with that model. On JurisTCU (graded judgments; 137k words to encode, half of IRPF-400's): both
    sides encode the whole corpus, so the smaller one checks the same agreement at half the cost."""
    task = rm.tasks(data_dir, names=["RagcovJurisTCU"])
    enc = rm.encoder("wordllama")
    assert enc.mteb_model_meta.name == "ragcov/wordllama" and enc.mteb_model_meta.similarity_fn_name == "cosine"
    theirs = mteb.evaluate(enc, tasks=task, prediction_folder=tmp_path / "enc", cache=None,
                           overwrite_strategy="always", show_progress_bar=False).task_results[0].scores["test"][0]
    ours = mteb.evaluate(rm.model("dense", model="wordllama"), tasks=task, prediction_folder=tmp_path / "ours",
                         cache=None, overwrite_strategy="always",
                         show_progress_bar=False).task_results[0].scores["test"][0]
    assert theirs["recall_at_10"] > 0.05  # a real ranking, not noise
    for key in ("recall_at_10", "ndcg_at_10", "ragcov_estimate"):
        assert theirs[key] == pytest.approx(ours[key], abs=1e-4), key
    with pytest.raises(RagcovError):
        rm.encoder("no-such-model")
