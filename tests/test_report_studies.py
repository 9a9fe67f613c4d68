"""The report's study sentence, its sign convention, the big-table side files and legacy pairwise records."""
from __future__ import annotations

import json

import pandas as pd

from ragcov_data.reporting import write_report
from ragcov_data.reporting.render import render_html, render_markdown
from ragcov_data.reporting.sections import verdict_items
from ragcov_data.reporting.blocks import flip_difference, study_sentence


def _flag(name, share, low, high):
    return {"name": name, "share": share, "low": low, "high": high, "n_flagged": 1, "n_misses": 10}


MISSES = {"retriever": "bm25", "chunking": "words-100", "n_queries": 40, "n_misses": 1234, "level": 0.9,
          "flags": [_flag("near_duplicate", 0.061, 0.031, 0.094), _flag("same_type", 0.594, 0.503, 0.687)]}


def _chunkings(names, est, low, high):
    return {"names": names, "difference": {"estimate": est, "low": low, "high": high, "method": "t",
                                           "estimator": "macro", "n_documents": 12}}


def test_study_sentence_reads_the_numbers_given():
    text = study_sentence(MISSES, _chunkings(["words-100", "dispositivo"], 0.021, 0.001, 0.041))
    assert text.startswith("Of BM25's 1,234 hit@1 misses on the words-100 chunking, ")
    # flags in the sentence's own order (same_type before near_duplicate), whole percentage points
    assert "59% [50, 69] retrieved a chunk of a document of the same type, 6% [3, 9] a near-identical passage" in text
    # words-100 - dispositivo = +0.021 is read as the change from cutting by dispositivo: -0.021
    assert "cutting by dispositivo instead of words-100 changes per-document hit@1 by -0.021 [-0.041, -0.001]" in text
    assert "over the 12 documents in both" in text and text.endswith(
        "(90% intervals: CR2 by document for the shares, t over documents for the change).")


def test_flip_difference_keeps_the_sign_when_dispositivo_comes_first():
    d = flip_difference(_chunkings(["dispositivo", "words-100"], -0.02, -0.05, 0.01))
    assert (d["estimate"], d["low"], d["high"], d["a"], d["b"]) == (-0.02, -0.05, 0.01, "dispositivo", "words-100")
    d = flip_difference(_chunkings(["words-100", "dispositivo"], -0.02, -0.05, 0.01))
    assert (d["estimate"], d["low"], d["high"]) == (0.02, -0.01, 0.05)
    assert flip_difference(_chunkings(["a", "b"], 0.1, 0.0, 0.2)) is None


def test_study_sentence_without_chunkings_or_misses():
    assert study_sentence(None, None) is None
    text = study_sentence(MISSES, None)
    assert "cutting by" not in text and "1,234 hit@1 misses" in text


def test_write_report_puts_big_tables_beside_results_json(tmp_path):
    table = pd.DataFrame({"chunking": ["words-100", "dispositivo"], "query-id": ["q1", "q2"], "same_type": [True, False]})
    paths = write_report({"meta": {}, "task": {}, "retrievers": [], "_tables": {"misses": table}}, tmp_path)
    assert paths["misses"] == tmp_path / "misses.csv"
    pd.testing.assert_frame_equal(pd.read_csv(paths["misses"]), table)
    assert "_tables" not in json.loads((tmp_path / "results.json").read_text())


def test_one_retriever_says_there_is_nothing_to_separate():
    res = {"meta": {"metric": "hit@1"}, "task": {}, "retrievers": [{"name": "bm25"}], "leaderboard": None}
    assert verdict_items(res) == [("aneel_taesa", "ANEEL self-retrieval (hit@1)",
                                   "only one system ran (bm25): there is no pair to separate.")]


def test_legacy_unadjusted_comparisons_are_not_printed_as_pairwise_tables():
    """A results.json from before the leaderboard: its comparisons lack p_adj, so no pairwise table or figure."""
    legacy = {"a": "bm25", "b": "tfidf", "estimates": [{"estimator": "micro", "method": "cr2", "estimate": 0.01,
                                                         "low": -0.01, "high": 0.03}],
              "interval": {"estimator": "micro", "method": "cr2", "estimate": 0.01, "low": -0.01, "high": 0.03}}
    jt = {"estimates": [], "comparisons": [{"retriever_a": "bm25", "retriever_b": "tfidf", "metric": "ndcg@10",
                                            "group": "G1", "method": "t", "estimate": 0.01, "low": 0.0, "high": 0.02}]}
    res = {"meta": {}, "task": {}, "retrievers": [], "comparisons": [legacy], "juristcu": jt}
    html = render_html(res)
    assert "bm25 − tfidf" not in html and "juristcu-comparisons" not in html and "fig-paired" not in html
    assert "bm25 − tfidf" not in render_markdown(res)


def test_paired_figure_follows_the_leaderboard_order():
    """comparisons keep retriever order; the figure re-orients them as the leaderboard (a ranked above b)."""
    from ragcov_data.reporting.blocks import as_ranked

    comp = {"a": "bm25", "b": "tfidf", "wins": 3, "losses": 5, "per_doc_diff": [0.5, -1.0],
            "interval": {"estimate": -0.1, "low": -0.3, "high": 0.2}}
    board = {"pairs": [{"a": "tfidf", "b": "bm25", "group": "__all__"}, {"a": "x", "b": "y", "group": "G1"}]}
    (flipped,) = as_ranked([comp], board)
    assert (flipped["a"], flipped["b"], flipped["wins"], flipped["losses"]) == ("tfidf", "bm25", 5, 3)
    assert flipped["per_doc_diff"] == [-0.5, 1.0]
    assert (flipped["interval"]["estimate"], flipped["interval"]["low"], flipped["interval"]["high"]) == (0.1, -0.2, 0.3)
    assert comp["a"] == "bm25" and comp["interval"]["estimate"] == -0.1  # the record itself is untouched
    assert as_ranked([comp], None) == [comp]


def test_reporting_only_renders_and_the_pipeline_builds_retrievers_in_one_place():
    """reporting/ imports neither the baselines nor the main job; the main job makes every retriever through
    _make_retriever."""
    import ast
    from pathlib import Path

    import ragcov_data.reporting as rep
    from ragcov_data.jobs import benchmark as pipeline
    from ragcov_data.baselines import BM25

    for path in Path(rep.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                assert not any(n.startswith(("ragcov_data.baselines", "ragcov_data.jobs.benchmark")) for n in names), path
    assert isinstance(pipeline._make_retriever("bm25", show_progress=False), BM25)
    src = Path(pipeline.__file__).read_text(encoding="utf-8")
    assert src.count(" make_retriever(") == 1  # only inside _make_retriever, through the registry
    assert "ragcov_data.baselines.registry import make_retriever" in src


def test_study_sentence_never_prints_minus_zero():
    m = {**MISSES, "flags": [_flag("other_edition", 0.03, -0.004, 0.06)]}
    text = study_sentence(m, None)
    assert "3% [0, 6] another edition of the same series" in text and "-0" not in text


def test_paired_figure_keeps_its_size_with_many_retrievers():
    """Eight retrievers make 28 pairs: the figure draws the 7 pairs of rank neighbours (all pairs stay in the
    pair matrix), and its caption says which of the family's pairs it shows."""
    from ragcov_data.reporting.render import MAX_PAIRS_DRAWN, neighbour_pairs

    names = [f"r{i}" for i in range(8)]
    board = {"systems": [{"name": n, "group": "__all__", "rank": i + 1, "estimate": 1 - i / 10}
                         for i, n in enumerate(names[::-1])]}  # r7 ranked first
    ranked = [{"a": a, "b": b} for i, a in enumerate(names) for b in names[i + 1:]]
    shown = neighbour_pairs(ranked, board)
    assert len(ranked) == 28 and len(shown) == 7
    assert {frozenset((c["a"], c["b"])) for c in shown} == {frozenset((f"r{i}", f"r{i + 1}")) for i in range(7)}
    assert neighbour_pairs(ranked[:MAX_PAIRS_DRAWN], board) == ranked[:MAX_PAIRS_DRAWN]


def test_benchmark_retrievers_come_from_the_registry():
    """Every registry name is accepted, 'all' runs every installed one once (use-multilingual is `dense`), the
    default is the installed fast set, and a typo gets a suggestion."""
    import pytest

    from ragcov_data.jobs import benchmark as pipeline
    from ragcov_data.baselines.registry import RETRIEVER_NAMES
    from ragcov_data.errors import RagcovError

    iv = lambda r: pipeline._benchmark_iv(r, [5], None)  # noqa: E731
    assert iv(None) == pipeline.default_retrievers()
    assert set(iv(None)) <= set(pipeline.DEFAULT_RETRIEVERS) and {"bm25", "bm25-pt", "tfidf"} <= set(iv(None))
    assert not {"e5-small", "minilm", "hybrid-bm25pt-e5"} & set(pipeline.DEFAULT_RETRIEVERS)
    everything = iv(["all"])
    assert "use-multilingual" not in everything and set(everything) <= set(RETRIEVER_NAMES)
    assert set(everything) == set(pipeline.available_retrievers()) - {"use-multilingual"}
    assert iv(["bm25-pt-rm3", "tfidf-pt"]) == ["bm25-pt-rm3", "tfidf-pt"]
    with pytest.raises(RagcovError, match="Did you mean 'bm25-pt'"):
        iv(["bm25-tp"])
    with pytest.raises(RagcovError, match="stands alone"):
        iv(["all", "bm25"])


def test_first_screen_marks_unverified_intervals():
    """An interval whose method was not verified at its design carries a mark and the caption says what it means."""
    from ragcov_data.reporting.render import _answer_html

    def sys_row(name, verified):
        return {"name": name, "group": "__all__", "estimate": 0.5, "low": 0.4, "high": 0.6, "tier": "a",
                "rank": 1, "rank_low": 1, "rank_high": 2, "verified": verified, "verified_coverage": 0.8}

    results = {"meta": {"metric": "hit@1", "level": 0.95},
               "leaderboard": {"metric": "hit@1", "sentence": "one sentence.",
                               "systems": [sys_row("x", False), sys_row("y", True)]}}
    html = _answer_html(results)
    assert html.count("[0.4000, 0.6000] *") == 1 and "NOT VERIFIED" in html
    results["leaderboard"]["systems"][0]["verified"] = True
    assert "NOT VERIFIED" not in _answer_html(results)


def test_glossary_gives_each_term_once_with_its_own_anchor():
    """One entry a term (case aside) and one id a term: a link to a glossary entry lands on that entry alone."""
    import re

    from ragcov_data.reporting.glossary import glossary, glossary_html

    terms = glossary({"bm25": "BM25 (okapi)", "cr2": "a name shared with an interval method"})
    lowered = [t.lower() for t in terms]
    assert len(set(lowered)) == len(lowered)
    ids = re.findall(r'<dt id="([^"]+)"', glossary_html(terms))
    assert len(ids) == len(terms) == len(set(ids))
    assert "g-cr2" in ids and "g-cr2--interval-method" in ids and "g-cr2--retriever" in ids
