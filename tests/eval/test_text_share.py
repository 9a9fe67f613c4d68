"""The headline at a context budget is the share of the cited text the context holds (``span_recall@Bw``), counted
in non-space characters.

Two kinds of evidence, each against a reference written here from the task's own tables:

- ``span_recall@Bw`` (and the coverage curve) equal a from-scratch count on the shared IRPF and LGPD questions
  under the words-50, dispositivo and article cuts: a chunk's text is placed by the ordinal of its first
  non-space character in its act, the context cut after the B-th word, and sets of (act, non-space ordinal) are
  intersected with the provisions' spans.
- Adversarial pipelines, asked through :func:`ragcov_data.run_pipeline` on the IRPF questions at 1,000 words —
  (a) 5-word fragments, (b) one chunk per act, (c) windows overlapping by half, (d) the same passage at every
  rank, (e) every passage twice, (f) an oracle returning the cited provisions' own text — are ranked with plain
  cuts in one family. None beats a plain cut on a question unless its context holds more of that question's
  cited text (counted from scratch), the fragments win the touch reading and lose the headline, and the oracle
  scores 1.0 wherever the cited text fits in the budget.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
import unicodedata
import warnings

import numpy as np
import pandas as pd
import pytest

import ragcov_data
from ragcov_data.baselines.registry import make_retriever
from ragcov_data.cli import main
from ragcov_data.eval.comparisons.cited import cited_chunking_study, per_query_values

BUDGET = 1000
CUTS = ("words-50", "dispositivo", "article")
CURVE = {"covered_any": lambda x: x > 0, "covered_50": lambda x: x >= 0.5, "covered_90": lambda x: x >= 0.9,
         "covered_whole": lambda x: x == 1}


def _load(name, config, data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ragcov_data.load_dataset(name, config, data_dir=str(data_dir))


def _frames(ds):
    return {k: ds[k].to_pandas() for k in ("corpus", "queries", "citations", "documents")}


# --------------------------------------------------------------------------- the reference


class Acts:
    """Each act's non-space characters by ordinal: ``ordinal[d][i]`` is the number of non-space characters of act
    ``d`` before position ``i``; ``text[d]`` the act."""

    def __init__(self, documents: pd.DataFrame):
        self.text = dict(zip(documents["doc_id"], documents["text"]))
        self.ordinal = {}
        for d, t in self.text.items():
            assert unicodedata.is_normalized("NFC", t)  # a character of the act is a character of its NFC form
            self.ordinal[d] = np.concatenate([[0], np.cumsum([not c.isspace() for c in t])])
        self._sets: dict[tuple, frozenset] = {}  # each span and placed piece counted once (the same sets, reused)

    def span(self, d, s, e) -> frozenset:
        """The non-space characters of act ``d`` in ``[s, e)``, as (act, ordinal)."""
        key = ("span", d, s, e)
        if key not in self._sets:
            o = self.ordinal[d]
            self._sets[key] = frozenset((d, k) for k in range(o[s], o[e]))
        return self._sets[key]

    def text_from(self, d, s, text, words=None) -> frozenset:
        """The non-space characters a piece of text placed at ``s`` covers (its first ``words`` words only): as many
        as the piece holds, from the ordinal of ``s``; the piece must be the act's text there."""
        key = ("piece", d, s, text, words)
        if key in self._sets:
            return self._sets[key]
        piece = " ".join(text.split(None, words)[:words]) if words is not None else text  # its first `words` words
        n = len("".join(piece.split()))
        o = self.ordinal[d]
        end = int(np.searchsorted(o, o[s] + n))  # the act's text from s holding n non-space characters
        assert "".join(self.text[d][s:end].split()) == "".join(piece.split()), (d, s, piece[:40])
        self._sets[key] = frozenset((d, k) for k in range(o[s], o[s] + n))
        return self._sets[key]


@lru_cache(maxsize=None)
def _words(text: str) -> int:
    """Words of a piece (counted once a text: whole acts come back for every question)."""
    return len(text.split())


def provisions(citations: pd.DataFrame) -> dict[str, set]:
    """Per question its distinct cited dispositivos (resolved, with a span): (act, start, end)."""
    ok = citations[(citations["status"] == "resolved") & citations["start_char"].notna()]
    out: dict[str, set] = {}
    for q, d, s, e in zip(ok["query-id"], ok["doc_id"], ok["start_char"], ok["end_char"]):
        out.setdefault(str(q), set()).add((str(d), int(s), int(e)))
    return out


def context(acts: Acts, ranked: list[tuple[str, int, str]], budget: int) -> set:
    """The non-space characters of the first ``budget`` words of ``ranked`` pieces (act, start, text)."""
    out, left = set(), budget
    for d, s, text in ranked:
        if left <= 0:
            break
        n = _words(text)
        out |= acts.text_from(d, s, text, None if n <= left else left)
        left -= n
    return out


def reference(acts: Acts, provs: set, ctx: set) -> dict[str, float]:
    """span_recall and the coverage curve of one question, from sets."""
    cited = set().union(*(acts.span(*p) for p in provs))
    out = {"span_recall": len(cited & ctx) / len(cited)}
    share = [len(acts.span(*p) & ctx) / len(acts.span(*p)) for p in provs]  # (each span's set built once: Acts)
    out.update({m: sum(map(f, share)) / len(share) for m, f in CURVE.items()})
    return out


def covered(acts: Acts, provs: set, ctx: set) -> int:
    """How many of the cited non-space characters the context holds."""
    return len(set().union(*(acts.span(*p) for p in provs)) & ctx)


# --------------------------------------------------------------------------- every cut, both corpora


@pytest.mark.parametrize("dataset", ["irpf", "lgpd"])
def test_span_recall_equals_a_count_of_non_space_characters(dataset, data_dir):
    """span_recall@Bw and the coverage curve of BM25 under words-50, dispositivo and article chunks equal the
    from-scratch count to 1e-9, and whitespace never decides: a provision the context holds to its last
    non-space character is whole."""
    for cut in CUTS:
        f = _frames(_load(dataset, cut, data_dir))
        acts = Acts(f["documents"])
        run = make_retriever("bm25").index(f["corpus"]).search(f["queries"][["_id", "text"]], k=80)
        chunk = {str(i): (str(d), int(s), str(t)) for i, d, s, t in
                 zip(f["corpus"]["_id"], f["corpus"]["doc_id"], f["corpus"]["start_char"], f["corpus"]["text"])}
        provs = {q: p for q, p in provisions(f["citations"]).items()
                 if any(acts.ordinal[d][e] > acts.ordinal[d][s] for d, s, e in p)}
        metrics = [f"{m}@{b}w" for b in (500, BUDGET) for m in ("span_recall", *CURVE)]
        ours = per_query_values(run, _load(dataset, cut, data_dir), metrics=metrics)
        assert len(ours) >= 170
        # trec_eval's order (score descending, ties by id descending), each question's rows in it
        rows = run.sort_values("corpus-id", ascending=False, kind="stable").sort_values("score", ascending=False,
                                                                                         kind="stable")
        ranked_of = {q: [chunk[c] for c in g["corpus-id"]] for q, g in rows.groupby("query-id", sort=False)}
        got = ours.to_dict("index")
        for q in ours.index:
            ranked = ranked_of.get(q, [])
            for b in (500, BUDGET):
                ref = reference(acts, provs[q], context(acts, ranked, b))
                for m, x in ref.items():
                    assert abs(got[q][f"{m}@{b}w"] - x) <= 1e-9, (dataset, cut, q, m, b)
        assert ours[f"span_recall@{BUDGET}w"].mean() > 0.2  # the runs find cited text: not all zeros


# --------------------------------------------------------------------------- adversarial pipelines


def _windows(documents: pd.DataFrame, size: int, step: int) -> pd.DataFrame:
    """Word windows of every act (``size`` words, a new one every ``step``): ``_id``, ``doc_id``, ``start_char``,
    ``end_char``, ``text`` (the act's own text there)."""
    rows = []
    for d, text in zip(documents["doc_id"], documents["text"]):
        toks = [m.span() for m in re.finditer(r"\S+", text)]
        for a in range(0, len(toks), step):
            b = min(a + size, len(toks)) - 1
            rows.append({"_id": f"{d}@{a}", "doc_id": d, "start_char": toks[a][0], "end_char": toks[b][1],
                         "text": text[toks[a][0]:toks[b][1]]})
            if b == len(toks) - 1:
                break
    return pd.DataFrame(rows)


def _ranked(units: pd.DataFrame, queries: pd.DataFrame, k: int) -> dict[str, list[dict]]:
    """The Portuguese BM25's top ``k`` units per question, as passages carrying their place (hints)."""
    run = make_retriever("bm25-pt").index(units[["_id", "text"]]).search(queries[["_id", "text"]], k=k)
    by_id = {c: (t, d, int(s), int(e)) for c, t, d, s, e in
             zip(*(units[k] for k in ("_id", "text", "doc_id", "start_char", "end_char")))}
    out: dict[str, list[dict]] = {}
    for q, g in run.groupby("query-id", sort=False):
        g = g.sort_values("corpus-id", ascending=False, kind="stable").sort_values("score", ascending=False,
                                                                                   kind="stable")
        out[str(q)] = [{"text": t, "doc_id": d, "start_char": s, "end_char": e, "score": float(x)}
                       for (t, d, s, e), x in zip(map(by_id.__getitem__, g["corpus-id"]), g["score"])]
    return out


def _oracle(citations: pd.DataFrame, acts: Acts) -> dict[str, list[dict]]:
    """Per question the text of each cited dispositivo, as the act writes it."""
    return {q: [{"text": acts.text[d][s:e], "doc_id": d, "start_char": s, "end_char": e}
                for d, s, e in sorted(p)] for q, p in provisions(citations).items()}


@pytest.fixture(scope="module")
def adversarial(data_dir, tmp_path_factory):
    """Plain cuts (dispositivo, article; bm25-pt) and six pipelines on the IRPF questions, one family at 1,000
    words; each pipeline asked through run_pipeline, its passages carrying where they are in the acts."""
    tasks = {c: _load("irpf", c, data_dir) for c in ("dispositivo", "article")}
    f = _frames(tasks["dispositivo"])
    acts = Acts(f["documents"])
    queries = f["queries"]
    qid = dict(zip(queries["text"], queries["_id"]))
    assert len(qid) == len(queries)  # a pipeline is asked the question's text: one text, one question
    windows = _windows(f["documents"], 100, 100)
    answers = {
        "fragments": _ranked(_windows(f["documents"], 5, 5), queries, 200),  # (a) 200 five-word fragments
        "whole_acts": _ranked(_windows(f["documents"], 10 ** 6, 10 ** 6), queries, 7),  # (b) one chunk per act
        "half_overlap": _ranked(_windows(f["documents"], 100, 50), queries, 20),  # (c) 100 words, a new one every 50
        "windows": _ranked(windows, queries, 20),
    }
    answers["same_passage"] = {q: p[:1] * 50 for q, p in answers["windows"].items()}  # (d) one passage, every rank
    answers["twice"] = {q: [x for x in p for _ in (0, 1)] for q, p in answers["windows"].items()}  # (e) duplicated
    answers["oracle"] = _oracle(f["citations"], acts)  # (f) the cited provisions' own text
    runs = {}
    for name, by_q in answers.items():  # written to a file for the command line (whole acts: kept in memory)
        path = None if name == "whole_acts" else tmp_path_factory.mktemp("pipes") / f"{name}.jsonl"
        runs[name] = ragcov_data.run_pipeline(lambda question, by_q=by_q: by_q.get(qid[question], []),
                                              tasks["dispositivo"], out=path and str(path), name=name,
                                              show_progress=False)
        runs[name].attrs["path"] = str(path)
    study = cited_chunking_study(tasks, {"bm25-pt": lambda: make_retriever("bm25-pt")}, metrics=["recall@10"],
                                 budgets=[500, BUDGET], cluster="query", n_resamples=199,
                                 passages={k: v for k, v in runs.items() if k != "oracle"})
    oracle = per_query_values(runs["oracle"], tasks["dispositivo"], query_ids=list(study.values.index),
                              metrics=[f"span_recall@{BUDGET}w", f"covered_whole@{BUDGET}w", f"recall@{BUDGET}w"])
    return {"study": study, "oracle": oracle, "acts": acts, "answers": answers, "runs": runs, "tasks": tasks, "f": f}


PIPES = ("fragments", "whole_acts", "half_overlap", "same_passage", "twice")
PLAIN = ("dispositivo/bm25-pt", "article/bm25-pt")


def test_pipelines_score_the_text_their_context_holds(adversarial):
    """Every pipeline's span_recall@1000w equals the cited text its first 1,000 words hold, counted from scratch;
    so a pipeline beats a plain cut on a question exactly when its context holds more of that question's cited
    text, and nowhere else."""
    a = adversarial
    acts, study = a["acts"], a["study"]
    provs = provisions(a["f"]["citations"])
    v = study.values[f"span_recall@{BUDGET}w"].assign(oracle=a["oracle"][f"span_recall@{BUDGET}w"])
    held: dict[str, dict[str, int]] = {}
    for name in (*PIPES, "oracle"):
        held[name] = {q: covered(acts, provs[q], context(acts, [(p["doc_id"], p["start_char"], p["text"])
                                                               for p in a["answers"][name].get(q, [])], BUDGET))
                      for q in v.index}
    for name in PLAIN:
        cut = name.split("/")[0]
        task = _frames(a["tasks"][cut])
        chunk = {str(c): (str(d), int(s), str(t)) for c, d, s, t in
                 zip(*(task["corpus"][k] for k in ("_id", "doc_id", "start_char", "text")))}
        run = make_retriever("bm25-pt").index(task["corpus"]).search(task["queries"][["_id", "text"]], k=200)
        held[name] = {}
        for q, g in run.groupby("query-id"):
            if str(q) not in v.index:  # a question the family leaves out (no cited dispositivo located)
                continue
            g = g.sort_values("corpus-id", ascending=False, kind="stable").sort_values("score", ascending=False,
                                                                                       kind="stable")
            held[name][str(q)] = covered(acts, provs[str(q)], context(acts, [chunk[c] for c in g["corpus-id"]],
                                                                      BUDGET))
    size = {q: len(set().union(*(acts.span(*p) for p in provs[q]))) for q in v.index}
    for name in held:
        assert np.allclose(v[name].to_numpy(), [held[name][q] / size[q] for q in v.index], atol=1e-9), name
    for p in (*PIPES, "oracle"):
        for s in PLAIN:
            beats = v[p] > v[s] + 1e-12
            more = pd.Series({q: held[p][q] > held[s][q] for q in v.index})
            assert (beats == more.reindex(v.index)).all(), (p, s)


def test_fragments_win_the_touch_reading_and_lose_the_headline(adversarial):
    """(a) 200 five-word fragments touch more cited provisions within 1,000 words than any plain cut and hold less
    of their text than either: the headline names a plain cut, the touch reading the fragments, and the summary
    says why in one sentence."""
    study = adversarial["study"]
    touch = study.leaderboards[f"recall@{BUDGET}w"].systems.set_index("name")["estimate"]
    text = study.leaderboards[f"span_recall@{BUDGET}w"].systems.set_index("name")["estimate"]
    assert all(touch["fragments"] > touch[s] for s in PLAIN)
    assert all(text["fragments"] < text[s] for s in PLAIN)
    assert study.touch_answer(BUDGET)["leader"] == "fragments"
    assert study.budget_answer(BUDGET)["leader"] in PLAIN
    said = study.disagreement(BUDGET)
    assert not said["agree"] and said["touch_winner"] == "fragments"
    assert "more, shorter chunks touch more provisions" in said["sentence"] and said["sentence"] in study.summary()
    items = study.info["context_items"]
    # about 200 five-word fragments fill the 1,000 words (a few questions match fewer), ten times the dispositivos
    assert items["fragments"][BUDGET] > 190 and items["fragments"][BUDGET] > 10 * items["dispositivo/bm25-pt"][BUDGET]


def test_no_adversarial_pipeline_beats_a_plain_cut_on_text_share(adversarial):
    """(b)–(e): one chunk per act, half-overlapping windows, one passage at every rank and every passage twice
    hold less of the cited text within 1,000 words than the plain dispositivo cut; repeated text counts once."""
    study = adversarial["study"]
    text = study.values[f"span_recall@{BUDGET}w"]
    best_plain = max(text[s].mean() for s in PLAIN)
    for name in PIPES:
        assert text[name].mean() < best_plain, name
    # (d) one passage at every rank holds that passage's text: the same as the plain windows' first passage
    once = study.values[f"span_recall@{BUDGET}w"]["same_passage"]
    windows = per_query_values(adversarial["runs"]["windows"].query("rank == 1"), adversarial["tasks"]["dispositivo"],
                               metrics=[f"span_recall@{BUDGET}w"], query_ids=list(text.index))
    assert np.allclose(once.to_numpy(), windows[f"span_recall@{BUDGET}w"].to_numpy(), atol=1e-12)
    # (e) every 100-word passage twice: 1,000 words hold the text of the first five, as 500 words of the windows
    half = per_query_values(adversarial["runs"]["windows"], adversarial["tasks"]["dispositivo"],
                            metrics=["span_recall@500w"], query_ids=list(text.index))
    twice = study.values[f"span_recall@{BUDGET}w"]["twice"]
    assert np.allclose(twice.to_numpy(), half["span_recall@500w"].to_numpy(), atol=1e-12)
    assert (study.values[f"recall@{BUDGET}w"]["twice"] <= study.values[f"recall@{BUDGET}w"]["windows"] + 1e-12).all()


def test_the_oracle_scores_one_wherever_the_cited_text_fits(adversarial):
    """(f) A pipeline returning the cited provisions' own text scores span_recall 1.0 and holds every provision
    whole on every question whose provisions fit in 1,000 words (their trailing newlines aside: whitespace never
    decides), far above every plain cut."""
    a = adversarial
    fits = [q for q, p in a["answers"]["oracle"].items() if sum(len(x["text"].split()) for x in p) <= BUDGET]
    fits = [q for q in fits if q in a["oracle"].index]
    assert len(fits) >= 150
    assert any(x["text"] != x["text"].rstrip() for q in fits for x in a["answers"]["oracle"][q])  # spans end in space
    v = a["oracle"].loc[fits]
    assert (v[f"span_recall@{BUDGET}w"] == 1.0).all() and (v[f"covered_whole@{BUDGET}w"] == 1.0).all()
    assert (v[f"recall@{BUDGET}w"] == 1.0).all()
    best = max(a["study"].values[(f"span_recall@{BUDGET}w", s)].mean() for s in PLAIN)
    assert a["oracle"][f"span_recall@{BUDGET}w"].mean() > best + 0.3


def test_chunking_prints_the_fragments_text_share_beside_their_touch_reading(adversarial, data_dir, tmp_path,
                                                                              capsys):
    """`ragcov chunking --passages` prints each system's text share beside its touch reading (the curve's lines) and
    the sentence saying the two readings disagree, the numbers those of its JSON."""
    out = tmp_path / "c.json"
    frag = adversarial["runs"]["fragments"].attrs["path"]
    assert main(["chunking", "--dataset", "irpf", "--data-dir", str(data_dir), "--chunking", "dispositivo",
                 "--retriever", "bm25-pt", "--budgets", str(BUDGET), "--metrics", "recall@10", "--passages", frag,
                 "--cluster", "query", "--n-resamples", "199", "--quiet", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    got = json.loads(out.read_text())
    row = got["text_share_curve"][str(BUDGET)]["fragments"]
    line = next(x for x in printed.splitlines() if x.strip().startswith("fragments ") and "@" not in x)
    assert line.split()[1:3] == [f"{row['span_recall']:.3f}", f"{row['touched']:.3f}"]
    assert row["touched"] > row["span_recall"] * 1.5
    assert got["disagreement"]["touch_winner"] == "fragments" and got["disagreement"]["sentence"] in printed
    assert got["headline"]["leader"] == "dispositivo/bm25-pt" and got["touched_headline"]["leader"] == "fragments"


def test_leaderboard_of_passage_runs_ranks_by_text_share(adversarial):
    """`leaderboard` over pipelines' passage runs on a cited-questions task ranks, by default, the share of the cited
    text within 1,000 words (said as the task's default), the same numbers as the study's family."""
    from ragcov_data.eval import leaderboard

    runs = {k: adversarial["runs"][k] for k in ("fragments", "half_overlap")}
    res = leaderboard(runs, adversarial["tasks"]["dispositivo"], n_resamples=199, on_missing="zero")
    assert res.metric == "span_recall@1000w" and res.info["metric_default"]
    est = res.systems[res.systems["group"] == "__all__"].set_index("name")["estimate"]
    for k in runs:
        assert est[k] == pytest.approx(adversarial["study"].values[(f"span_recall@{BUDGET}w", k)].mean(), abs=1e-12)
