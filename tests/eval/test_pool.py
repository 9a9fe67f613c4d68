"""The pool's three readings of unjudged documents: the metric readings against pytrec_eval / hand
computation, and the leaderboard's ``bound_high`` / ``robust`` on hand-made qrels where a pair flips."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.eval import leaderboard
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.eval.outcomes.metrics._lists import lowest_relevant_grade
from ragcov_data.eval.comparisons.pool import outside_notice, pool_line

N = 30


def _task(engines: bool = False) -> dict[str, pd.DataFrame]:
    """30 queries; each has one relevant document r<i> (grade 2 or 1) and one judged non-relevant n<i>."""
    q = [f"q{i}" for i in range(N)]
    qrels = pd.DataFrame({"query-id": q * 2, "corpus-id": [f"r{i}" for i in range(N)] + [f"n{i}" for i in range(N)],
                          "score": [2 if i % 2 else 1 for i in range(N)] + [0] * N})
    if engines:
        qrels["engine"] = ["BM25+LLM"] * 40 + ["STS+Reranker"] * 20
    return {"queries": pd.DataFrame({"_id": q, "text": q}), "qrels": qrels}


def _run(first: dict[int, str]) -> pd.DataFrame:
    """Per query two rows: ``first[i]`` (default r<i>) at rank 1, then r<i> or n<i> at rank 2."""
    rows = []
    for i in range(N):
        top = first.get(i, f"r{i}")
        second = f"r{i}" if top != f"r{i}" else f"n{i}"
        rows += [(f"q{i}", top, 2.0, 1), (f"q{i}", second, 1.0, 2)]
    return pd.DataFrame(rows, columns=["query-id", "corpus-id", "score", "rank"])


@pytest.fixture(scope="module")
def runs():
    # pooled: every top document judged; A misses 5 queries (a judged non-relevant first), C misses 18 (A and C
    # differ on 13 one-query clusters: enough for the macro family to separate them at 5%)
    a = _run({i: f"n{i}" for i in range(25, 30)})
    c = _run({i: f"n{i}" for i in range(12, 30)})
    # not pooled: an unjudged document u<i> above the relevant one in every query
    b = _run({i: f"u{i}" for i in range(N)})
    return {"A": a, "B": b, "C": c}


@pytest.fixture(scope="module")
def board(runs):
    return leaderboard(runs, _task(engines=True), metric="ndcg@10", n_resamples=499)


# ------------------------------------------------------------------------------------------ metric readings
def _dicts(run, qrels):
    qd, rd = {}, {}
    for q, d, s in zip(qrels["query-id"], qrels["corpus-id"], qrels["score"]):
        qd.setdefault(q, {})[d] = int(s)
    for q, d, s in zip(run["query-id"], run["corpus-id"], run["score"]):
        rd.setdefault(q, {})[d] = float(s)
    return qd, rd


@pytest.mark.parametrize("metric,measure", [("p@10", "P_10"), ("mrr@10", "recip_rank"), ("hit@1", "success_1")])
def test_relevant_reading_equals_pytrec_eval_on_completed_qrels(runs, metric, measure):
    """P, RR, success do not use the ideal: reading unjudged documents as relevant equals judging them so."""
    import pytrec_eval

    task = _task()
    qd, rd = _dicts(runs["B"], task["qrels"])
    g = lowest_relevant_grade(task["qrels"])
    assert g == 1.0
    done = {q: {**docs, **{d: int(g) for d in rd[q] if d not in docs}} for q, docs in qd.items()}
    ev = pytrec_eval.RelevanceEvaluator(done, {measure.split("_1")[0] if measure != "recip_rank" else measure})
    ref = ev.evaluate(rd)
    got = per_query(runs["B"], task["qrels"], metric, unjudged="relevant")
    for q, v in ref.items():
        assert got[q] == pytest.approx(v[measure], abs=1e-12)
    assert (got >= per_query(runs["B"], task["qrels"], metric) - 1e-12).all()


def test_relevant_reading_ndcg_by_hand_and_capped():
    """nDCG: the unjudged document gains the lowest positive grade, the ideal stays the judged one; capped at 1."""
    qrels = pd.DataFrame({"query-id": ["q", "q", "p"], "corpus-id": ["a", "b", "c"], "score": [3, 0, 1]})
    run = pd.DataFrame({"query-id": ["q", "q", "q", "p", "p"], "corpus-id": ["u", "b", "a", "v", "c"],
                        "score": [3.0, 2.0, 1.0, 2.0, 1.0]})
    got = per_query(run, qrels, "ndcg@10", unjudged="relevant")
    g = 1.0  # the lowest positive grade of these qrels
    assert lowest_relevant_grade(qrels) == g
    dcg_q = g / np.log2(2) + 0 / np.log2(3) + 3 / np.log2(4)
    assert got["q"] == pytest.approx(dcg_q / 3.0)
    assert got["p"] == 1.0  # g + 1/log2(3) > the judged ideal 1: capped
    low = per_query(run, qrels, "ndcg@10")
    assert (got >= low).all() and low["q"] == pytest.approx(1.5 / 3.0)


def test_relevant_reading_rejects_a_bad_grade(runs):
    with pytest.raises(RagcovError, match="unjudged_grade"):
        per_query(runs["B"], _task()["qrels"], "p@10", unjudged="relevant", unjudged_grade=0)
    with pytest.raises(RagcovError, match="`unjudged` must be one of"):
        per_query(runs["B"], _task()["qrels"], "p@10", unjudged="maybe")


# ------------------------------------------------------------------------------------------ leaderboard
def test_pair_that_flips_under_the_pool_is_not_robust(board):
    sy = board.systems.set_index("name")
    pr = board.pairs.set_index(["a", "b"])
    # estimate: A above C above B, every pair separable (Holm)
    assert list(board.systems["name"]) == ["A", "C", "B"]
    assert pr["significant"].all()
    # A and C were pooled: their order holds under every reading; B's unjudged first documents reverse it
    assert pr.loc[("A", "C"), "robust"] is True or pr.loc[("A", "C"), "robust"] == True  # noqa: E712
    assert not pr.loc[("A", "B"), "robust"] and not pr.loc[("C", "B"), "robust"]
    pool = board.info["pool"]["groups"]["__all__"]
    assert pool["n_separable"] == 3 and pool["n_robust"] == 1
    assert sorted(map(tuple, pool["depends"])) == [("A", "B"), ("C", "B")]
    # condensed lists put B first: every query of B becomes a hit at rank 1
    assert pool["readings"]["skip"]["B"] == pytest.approx(1.0)
    assert pool["readings"]["skip"]["B"] > pool["readings"]["skip"]["A"]
    # bound_high: the high reading, never below the estimate (the low reading)
    assert (sy["bound_high"].astype(float) >= sy["estimate"] - 1e-12).all()
    assert sy.loc["B", "bound_high"] == pytest.approx(1.0) and sy.loc["A", "bound_high"] == pytest.approx(sy.loc["A", "estimate"])


def test_headline_counts_robust_separations_and_names_the_pool_pairs(board):
    s = board.separable()
    # only the pair separable under every reading counts; the two whose order depends on the pool are named
    assert s.startswith("1 of 3 pairs of 3 systems are separable") and "under every reading" in s
    assert "order depends on the pool, so not counted: A–B, C–B" in s
    assert "every pair is separable" not in s
    text = board.summary()
    assert "Judgments pooled from 2 engines: BM25+LLM (40), STS+Reranker (20)" in text
    d = board.to_dict()
    assert "bound_high" in board.systems.columns and "robust" in board.pairs.columns
    import json

    j = json.loads(board.to_json())
    assert all("bound_high" in r for r in j["systems"]) and all("robust" in r for r in j["pairs"])
    assert d["info"]["pool"]["line"].startswith("Judgments pooled from 2 engines")


def test_no_engine_column_no_pool_line(runs):
    b = leaderboard(runs, _task(), metric="p@10", n_resamples=199)
    assert b.info["pool"]["line"] is None and "pooled from" not in b.summary()
    assert pool_line(_task()["qrels"]) is None


def test_outside_notice_names_every_run_once():
    n = outside_notice({"x": 3, "y": 0, "z": 1200}, "The corpus is a subset.")
    assert n.count("outside the shipped corpus") == 1 and "'x' 3" in n and "'z' 1,200" in n and "'y'" not in n
    assert outside_notice({"x": 0}, None) is None


def test_default_metric_is_the_tasks_own(runs):
    b = leaderboard(runs, _task(), n_resamples=199)
    assert b.metric == "ndcg@10" and b.info["metric_default"] is True
    assert "ndcg@10 (the task's default metric)" in b.summary()


def test_zero_policy_every_panel_says_how_many_queries_each_run_lacked(runs):
    task = _task()
    task["queries"]["group"] = ["G1" if i < 10 else "G2" for i in range(N)]
    r = dict(runs)
    r["B"] = r["B"][~r["B"]["query-id"].isin([f"q{i}" for i in range(7)])]  # 7 of G1's 10 queries missing
    b = leaderboard(r, task, metric="p@10", by="group", on_missing="zero", n_resamples=199)
    sy = b.systems.set_index(["group", "name"])
    assert sy.loc[("__all__", "B"), "n_missing"] == 7 and sy.loc[("G1", "B"), "n_missing"] == 7
    assert sy.loc[("G2", "B"), "n_missing"] == 0 and sy.loc[("G1", "A"), "n_missing"] == 0
    text = b.summary()
    assert "missing queries scored 0: B lacks 7 of 10." in text and "B lacks 7 of 30." in text
    g2 = text[text.index("group G2"):]
    assert "missing queries scored 0" not in g2.split("pairs (")[0]
    page = b.to_html()
    assert page.count("missing queries scored 0") == 2 and "__all__" not in page.replace('data-group="all queries"', "")


# ------------------------------------------------------------------------------------------ readings named as readings
def test_readings_are_named_as_readings_and_old_names_stay(board):
    import json

    from ragcov_data.eval.comparisons.pool import NOT_BOUNDS, READING_NAMES

    j = json.loads(board.to_json())
    for r in j["systems"]:  # new names beside the old ones, same numbers
        assert r["unjudged_as_nonrelevant"] == pytest.approx(r["estimate"])
        assert r["unjudged_as_relevant"] == pytest.approx(r["bound_high"])
    pool = j["info"]["pool"]
    assert pool["reading_names"] == READING_NAMES
    g = pool["groups"]["__all__"]
    assert g["readings_named"]["condensed"] == g["readings"]["skip"]
    assert g["readings_named"]["unjudged_as_relevant"] == g["readings"]["relevant"]
    text = board.summary()
    assert "unjudged_as_nonrelevant" in text and "unjudged_as_relevant" in text and NOT_BOUNDS.split(":")[0] in text
    assert "no reading bounds the others" in text and "low bound" not in text
    assert "no reading bounds the others" in board.to_html() and "no reading bounds the others" in board.to_markdown()


def test_condensed_can_lie_above_unjudged_as_relevant():
    """Why the readings are not bounds: condensing moves a judged relevant document up past an unjudged one,
    which scores more than reading the unjudged one as relevant at the lowest positive grade."""
    qrels = pd.DataFrame({"query-id": ["q", "q"], "corpus-id": ["a", "b"], "score": [3, 1]})
    run = pd.DataFrame({"query-id": ["q", "q"], "corpus-id": ["u", "a"], "score": [2.0, 1.0]})
    cond = per_query(run, qrels, "ndcg@10", unjudged="skip")["q"]
    rel = per_query(run, qrels, "ndcg@10", unjudged="relevant")["q"]
    ideal = 3 + 1 / np.log2(3)
    # condensed: [a] -> 3 / ideal; relevant: [u = 1, a = 3] -> (1 + 3 / log2(3)) / ideal
    assert cond == pytest.approx(3 / ideal) and rel == pytest.approx((1 + 3 / np.log2(3)) / ideal)
    assert cond > rel


def test_a_fully_judged_run_is_named_a_pooled_engine(board):
    sy = board.systems.set_index("name")
    assert sy.loc["A", "judged"] == pytest.approx(1.0) and sy.loc["B", "judged"] < 0.99
    assert bool(sy.loc["A", "pooled_like"]) and bool(sy.loc["C", "pooled_like"]) and not bool(sy.loc["B", "pooled_like"])
    line = board.info["pool"]["pooled_like"]
    assert line.startswith("judged like a pooled engine (judged@10 >= 0.99): A, C")
    assert line in board.summary() and "1.00 pooled" in board.summary()


def test_tiers_carry_a_mark_where_the_order_flips(board):
    from ragcov_data.eval.comparisons.leaderboard_render import tier_text

    sy = board.systems.set_index("name")
    flips = {n for p in board.info["pool"]["groups"]["__all__"]["flips"] for n in p}
    assert flips == {"A", "B", "C"}  # B's unjudged first documents reverse its order against A and C
    for name in "ABC":
        assert bool(sy.loc[name, "tier_flip"]) == (name in flips)
        assert tier_text(board, "__all__", sy.loc[name].to_dict()) == sy.loc[name, "tier"] + "~"
    assert "a tier marked ~" in board.summary()


def test_a_run_lacking_most_of_a_group_is_shown_but_not_tiered(runs):
    task = _task()
    task["queries"]["group"] = ["G1" if i < 10 else "G2" for i in range(N)]
    r = dict(runs)
    r["B"] = r["B"][~r["B"]["query-id"].isin([f"q{i}" for i in range(7)])]  # 7 of G1's 10: most of G1
    b = leaderboard(r, task, metric="ndcg@10", by="group", on_missing="zero", n_resamples=199)
    sy = b.systems.set_index(["group", "name"])
    assert sy.loc[("G1", "B"), "tier"] == "–" and not sy.loc[("G1", "B"), "tiered"]
    assert sy.loc[("__all__", "B"), "tier"] != "–" and sy.loc[("__all__", "B"), "tiered"]  # 7 of 30: tiered
    assert sy.loc[("G2", "B"), "tiered"]
    g1 = b.pairs[(b.pairs["group"] == "G1")]
    with_b = g1[(g1["a"] == "B") | (g1["b"] == "B")]
    assert len(with_b) == 2 and not with_b["tiered"].any() and with_b["robust"].isna().all()
    assert b.groups["G1"]["untiered"] == ["B"] and "B" not in b.best_set("G1")
    pool = b.info["pool"]["groups"]["G1"]
    assert pool["n_separable"] == int(g1[g1["tiered"].astype(bool)]["significant"].sum())
    text = b.summary()
    assert "B lacks most of them: shown, not tiered here" in text
    # no rank interval for the untiered run, and its pairs are not counted as separable or not
    from ragcov_data.eval.comparisons.leaderboard_latex import latex
    from ragcov_data.eval.comparisons.leaderboard_render import rank_text, sentence, short_sentence

    assert rank_text(sy.loc[("G1", "B")].to_dict()) == "–"
    assert rank_text(sy.loc[("G2", "B")].to_dict()).startswith(str(sy.loc[("G2", "B"), "rank"]) + " [")
    row_b = next(ln for ln in text.split("group G1")[1].splitlines() if " B " in f" {ln} ")
    assert "[" not in row_b.split("B")[0]  # the rank cell before the name shows no interval
    n_tiered = len(g1) - 2
    n_sig = int(g1[g1["tiered"].astype(bool)]["significant"].sum())
    assert short_sentence(b, "G1").startswith(f"{n_sig} of {n_tiered} pairs separable")
    assert "(2 pairs with a run not tiered left out)" in sentence(b, "G1")
    g1_rows = [ln for ln in latex(b).split("tab:leaderboard-g1")[0].splitlines() if " & B & " in ln]
    assert g1_rows and not g1_rows[-1].split(" & B & ")[0].strip().endswith("]")  # no rank interval in LaTeX
    # without the zero policy nothing is left untiered
    full = leaderboard(runs, task, metric="ndcg@10", by="group", n_resamples=199)
    assert full.systems["tiered"].all() and "–" not in set(full.systems["tier"])


def test_headline_says_the_winner_is_judged_like_a_pooled_engine(board):
    sy = board.systems[board.systems["group"] == "__all__"]
    top = sy.iloc[0]
    assert top["name"] == "A" and bool(top["pooled_like"]) and top["judged"] == 1.0
    from ragcov_data.eval.comparisons.leaderboard_render import sentence, short_sentence

    for s in (short_sentence(board), sentence(board)):
        assert "A is judged like a pooled engine, judged@10 = 1.00: its lead may owe to the pool" in s
    assert len(short_sentence(board)) <= 200


def test_latex_carries_judged_the_readings_robustness_and_the_missing_note(board, runs):
    from ragcov_data.eval.comparisons.leaderboard_latex import latex

    tex = latex(board)
    assert "judged@10 & condensed & unjudged\\_as\\_relevant \\\\" in tex
    assert "1.00 pooled" in tex and "0.50 !" in tex
    assert "Unjudged documents read three ways" in tex and "Judgments pooled from 2 engines" in tex
    assert "robust to the pool \\\\" in tex and "& yes & no \\\\" in tex
    task = _task()
    r = dict(runs)
    r["B"] = r["B"][~r["B"]["query-id"].isin(["q0", "q1"])]
    zero = leaderboard(r, task, metric="ndcg@10", on_missing="zero", n_resamples=199)
    assert "lack" in latex(zero) and "scored 0" in latex(zero)
