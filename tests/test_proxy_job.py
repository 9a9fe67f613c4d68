"""The proxy study as a job on the shared LGPD and IRPF acts: the proxy is the documented self-retrieval task of
the same acts and cut, both tasks' estimates equal independent recomputations, tasks built once per process,
and the main job's section and report."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from ragcov_data.baselines.registry import make_retriever
from ragcov_data.errors import RagcovError
from ragcov_data.eval.comparisons.cited import per_query_values
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.execution.engine import run_task
from ragcov_data.jobs import proxy as J
from ragcov_data.jobs.studies import cited_tasks
from ragcov_data.loaders.build import build_task
from ragcov_data.reporting.render import figures, render_html, render_markdown


@pytest.fixture(scope="module")
def lgpd_study(data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return J.proxy_study("lgpd", data_dir, retrievers=["bm25", "tfidf"], cuts=["words-100", "words-200"],
                             units=["act", "artigo"], n_resamples=199, check=False, log=lambda m: None)


def test_every_family_unit_and_measure_is_compared(lgpd_study):
    got = {(c["family"], c["unit"], c["proxy_metric"], c["real_metric"]) for c in lgpd_study.comparisons}
    assert got == {(f, u, p, r) for f in ("retrievers", "cuts") for u in ("act", "artigo")
                   for p in J.PROXY_METRICS for r in J.REAL_METRICS}
    assert sum(c["headline"] for c in lgpd_study.comparisons) == 4
    data = json.loads(lgpd_study.to_json())
    assert data["result_type"] == "ProxyStudyResult"
    for c in data["comparisons"]:  # each system's two estimates, with intervals
        for r in c["result"]["systems"]:
            assert {"proxy_estimate", "proxy_low", "proxy_high", "real_estimate", "real_low", "real_high"} <= set(r)
        assert c["sentence"].startswith(c["proxy_metric"])


def test_the_estimates_equal_independent_recomputations(lgpd_study, data_dir, tmp_path):
    from ragcov_data.loaders.lgpd import build_lgpd_task

    res = lgpd_study.comparison("retrievers", "act", "hit@1", "span_recall@1000w")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cited = build_lgpd_task(data_dir=data_dir, chunking="words", chunk_words=100)
    # real: the mean over the scored questions of the API's per-question span recall (a run as deep as the corpus)
    scored = res.sides["real"]["n_rows"]
    run = make_retriever("bm25").index(cited.corpus).search(cited.queries[["_id", "text"]], k=len(cited.corpus))
    ref = per_query_values(run, cited, metrics=["span_recall@1000w"])["span_recall@1000w"]
    assert len(ref) == scored
    row = res.systems.set_index("name").loc["bm25"]
    assert row["real_estimate"] == pytest.approx(ref.mean(), abs=1e-12)
    # proxy: self-retrieval of the two acts (build_task on the acts' text), trec_eval's hit@1 on its qrels,
    # averaged per act then over acts
    acts = tmp_path / "acts.jsonl"
    acts.write_text("".join(json.dumps({"doc_id": r.doc_id, "text": r.text}, ensure_ascii=False) + "\n"
                            for r in cited.documents.itertuples()), encoding="utf-8")
    task = build_task(acts, chunk_words=100)
    run = run_task(make_retriever("bm25"), task, k=10, exclude_self=True)
    hit = per_query(run, task.qrels, "hit@1", query_ids=list(task.queries["_id"]))
    per_doc = hit.groupby(task.queries.set_index("_id").loc[hit.index, "doc_id"].to_numpy()).mean()
    assert row["proxy_estimate"] == pytest.approx(per_doc.mean(), abs=1e-12)


def test_the_proxy_is_the_same_cut_of_the_same_acts(data_dir, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = J.real_tasks("irpf", data_dir, ["words-100", "article"], note=lambda m: None)
    acts = J.acervo_records(real["words-100"], "act")
    proxy = J.proxy_task(acts, "words-100", tmp_path / "acts.jsonl")
    assert proxy.corpus["text"].tolist() == real["words-100"].corpus["text"].tolist()  # every act has 2+ chunks
    arts = J.acervo_records(real["article"], "artigo")
    assert len(arts) == len(real["article"].corpus) and arts["text"].tolist() == real["article"].corpus["text"].tolist()
    ptask = J.proxy_task(arts, "words-100", tmp_path / "artigos.jsonl")
    c = ptask.manifest["counts"]
    assert c["documents_eligible"] + c["documents_excluded"]["single_chunk"] == len(arts)
    assert set(ptask.queries["doc_id"]) <= set(arts["doc_id"])
    assert ptask.manifest["rules"]["qrels"]  # the documented construction rules, recorded


def test_tasks_are_built_once_per_process(tmp_path, cited_files):
    acts, qs = cited_files
    notes = []
    one = cited_tasks(acts, qs, [("words-20", {"chunking": "words", "chunk_words": 20})], dataset="x",
                      note=lambda n, m: notes.append(m))
    two = cited_tasks(acts, qs, [("words-20", {"chunking": "words", "chunk_words": 20})], dataset="x",
                      note=lambda n, m: notes.append(m))
    assert one["words-20"] is not two["words-20"] and one["words-20"].corpus.equals(two["words-20"].corpus)
    assert len(notes) % 2 == 0 and notes[: len(notes) // 2] == notes[len(notes) // 2:]  # warnings said again
    qs.write_text(qs.read_text(encoding="utf-8").replace("q1", "q9"), encoding="utf-8")  # new content: rebuilt
    three = cited_tasks(acts, qs, [("words-20", {"chunking": "words", "chunk_words": 20})], dataset="x",
                        note=lambda n, m: None)
    assert "q9" in set(three["words-20"].queries["_id"]) and "q9" not in set(one["words-20"].queries["_id"])


@pytest.fixture
def cited_files(tmp_path):
    words = ["aluguel", "pensão", "doação", "herança"]
    acts = tmp_path / "acts.jsonl"
    arts = "\n".join(f"Art. {i}º O contribuinte deve declarar o rendimento {w} recebido no ano, com os seus "
                     f"comprovantes e a indicação da fonte pagadora do rendimento {w}." for i, w in enumerate(words, 1))
    acts.write_text(json.dumps({"doc_id": "lei-10-2000", "title": "Lei nº 10, de 2000", "text": arts},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    qs = tmp_path / "q.jsonl"
    qs.write_text("".join(json.dumps({"qid": f"q{i}", "question": f"Como declarar {w}?",
                                      "citations": f"Lei nº 10, de 2000, art. {i}º; Lei nº 99, de 1999, art. 1º"},
                                     ensure_ascii=False) + "\n" for i, w in enumerate(words, 1)), encoding="utf-8")
    return acts, qs


def test_bad_arguments_are_named_before_any_build(data_dir):
    with pytest.raises(RagcovError, match="article cut has no self-retrieval"):
        J.proxy_study("irpf", data_dir, cuts=["words-100", "article"], check=False)
    with pytest.raises(RagcovError, match="unit"):
        J.proxy_study("irpf", data_dir, units=["chapter"], check=False)
    with pytest.raises(RagcovError, match="cited-questions dataset"):
        J.proxy_study("juristcu", data_dir, check=False)
    with pytest.raises(RagcovError, match="nothing to order"):
        J.proxy_study("irpf", data_dir, retrievers=["bm25"], cuts=None, check=False)
    with pytest.raises(RagcovError, match="proxy metric"):
        J.proxy_study("irpf", data_dir, proxy_metrics=["ndcg@10"], check=False)


def test_fast_retrievers_need_no_transformer():
    from ragcov_data.baselines.registry import RETRIEVERS

    fast = J.fast_retrievers()
    assert {"bm25", "bm25-pt", "tfidf"} <= set(fast)
    assert all(not RETRIEVERS[n].dense or n in J.FAST_ENCODERS for n in fast)
    assert J.fast_retrievers(["dense", "bm25"]) == ["bm25"]


def test_main_job_section_and_report(data_dir, tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    (root / "lgpd").symlink_to(Path(data_dir) / "lgpd")  # irpf/ absent: said and skipped
    said = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        block = J.proxy_section(root, ["bm25", "tfidf", "dense"], log=said.append, n_resamples=199)
    assert list(block) == ["lgpd"] and any("irpf skipped" in s for s in said)
    comps = block["lgpd"]["comparisons"]
    assert {c["unit"] for c in comps} == set(J.SECTION_CUTS) and {c["family"] for c in comps} == {"retrievers", "cuts"}
    assert block["lgpd"]["settings"]["retrievers"] == ["bm25", "tfidf"]  # dense is not fast: left out
    assert all(c["result"]["tau"]["verified_status"] == "unverifiable" for c in comps)  # no check in the main job
    results = {"meta": {"level": 0.95}, "task": {}, "proxy": block}
    page = render_html(results)
    sec = page[page.index('<section id="proxy">'):]
    sec = sec[:sec.index("</section>")]
    assert sec.index("<img ") < sec.index("<table")  # the section leads with its figure
    head = next(c for c in comps if c["headline"])
    assert head["sentence"].replace("'", "&#x27;") in sec
    md = render_markdown(results)
    assert "## Self-retrieval as a proxy for real questions" in md and head["sentence"] in md
    from ragcov_data.reporting import console

    text = console.summary(results)  # the console: each headline sentence, and each mark in its words once
    for c in (c for c in comps if c["headline"]):
        assert " ".join(c["sentence"].split()) in " ".join(text.split())
    assert text.count("‡ UNVERIFIABLE") == 1 and "LGPD retrievers' tau" in text
    png = figures(results)["proxy"][0]
    assert png.clipped == 0 and png.min_font_px >= 12.0
    json.dumps(block)  # plain JSON
