"""The miss analysis: flags known by construction on a hand-made task, the real ANEEL task with BM25, JSON."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import ragcov_data
from ragcov_data.baselines import BM25
from ragcov_data.errors import RagcovError
from ragcov_data.eval import evaluate, interval, misses
from ragcov_data.eval.misses._editions import (act_key, citations, cites, derive_issuer, heading, other_edition,
                                               pattern)
from ragcov_data.eval.misses.analysis import _contains
from ragcov_data.eval.misses._ngrams import ngram_sets

FLAGS = ["same_type", "same_issuer", "near_duplicate", "boilerplate", "other_edition", "contains_query",
         "retrieved_not_in_force", "cites"]
FORMULA = "este texto não substitui o publicado no diário oficial da união em sua forma original"


def uniq(tag: str, n: int) -> str:
    """``n`` words that occur nowhere else."""
    return " ".join(f"{tag}w{i}" for i in range(n))


A1 = uniq("a1", 30)
CHUNKS = {  # doc -> (doc_type, issuer, date, [chunk texts])
    "A": ("despacho", "ANEEL", "2021-01-05",
          ["AGÊNCIA NACIONAL DE ENERGIA ELÉTRICA DESPACHO Nº 10, DE 5 DE JANEIRO DE 2021 " + uniq("a0", 20), A1]),
    "B": ("despacho", "ANEEL", "2022-03-07",
          ["AGÊNCIA NACIONAL DE ENERGIA ELÉTRICA DESPACHO Nº 2.345, DE 7 DE MARÇO DE 2022 " + uniq("b0", 20),
           A1.rsplit(" ", 1)[0] + " trocada"]),  # A1 with its last word changed: 25 of 27 5-grams shared
    "C": ("portaria", "MME", "2021-06-01",
          ["MINISTÉRIO DE MINAS E ENERGIA PORTARIA Nº 5/GM/MME, DE 1 DE JUNHO DE 2021 " + uniq("c0", 20),
           FORMULA + " " + uniq("c1", 3)]),  # 14 5-grams, 11 of them the formula's
    "D": ("despacho", None, None, ["DESPACHO Nº 30, DE 9 DE MAIO DE 2021 " + uniq("d0", 20),
                                   FORMULA + " " + uniq("d1", 30)]),  # 41 5-grams, 11 common
    "E": ("resolucao", "ANEEL", "2021-01-05", ["RESOLUÇÃO Nº 10, DE 5 DE JANEIRO DE 2021 " + uniq("e0", 20),
                                               FORMULA + " " + uniq("e1", 2)]),  # 13 5-grams, 11 common
}
# query -> [(retrieved chunk, score)], the query's own chunk never listed
RUN = {
    "A#0000": [("B#0000", 9.0), ("A#0001", 5.0)],
    "A#0001": [("B#0001", 9.0), ("A#0000", 1.0)],
    "B#0000": [("B#0001", 9.0), ("A#0000", 2.0)],
    "B#0001": [("A#0001", 9.0), ("B#0000", 1.0)],
    "C#0000": [("C#0001", 4.0), ("A#0000", 4.0)],  # tie: trec_eval puts C#0001 (id descending) first
    "C#0001": [("E#0001", 9.0), ("C#0000", 1.0)],
    "D#0000": [("A#0000", 9.0), ("D#0001", 1.0)],
    "D#0001": [("C#0001", 9.0), ("D#0000", 1.0)],
    "E#0000": [("A#0000", 9.0), ("E#0001", 1.0)],
    "E#0001": [("E#0000", 9.0), ("A#0000", 1.0)],
}
# expected flags of each miss, by construction (see the comments above); the queries are the chunks' first 5
# words, so a retrieved chunk opening with the same heading words or holding A1 / the formula contains its
# query; no document states a status or cites another
# (query, retrieved document, its flags in FLAGS' order: same_type, same_issuer, near_duplicate, boilerplate,
# other_edition, contains_query, retrieved_not_in_force, cites)
EXPECTED = {q: dict(retrieved=doc, **dict(zip(FLAGS, flags, strict=True))) for q, doc, flags in [
    ("A#0000", "B", (1, 1, 0, 0, 1, 1, 0, 0)),
    ("A#0001", "B", (1, 1, 1, 0, 1, 1, 0, 0)),
    ("B#0001", "A", (1, 1, 1, 0, 1, 1, 0, 0)),
    ("C#0001", "E", (0, 0, 1, 1, 0, 1, 0, 0)),
    ("D#0000", "A", (1, 0, 0, 0, 0, 0, 0, 0)),
    ("D#0001", "C", (0, 0, 0, 1, 0, 1, 0, 0)),
    ("E#0000", "A", (0, 1, 0, 0, 0, 0, 0, 0)),
]}
# the formula is in 3 of the 5 documents: common at 3 documents; A and B share 14 of their 46 document
# 5-grams (Jaccard 0.304): editions at an overlap threshold of 0.3
SMALL = dict(boilerplate_min_docs=3, boilerplate_doc_share=0.01, edition_overlap=0.3)


def tiny_task() -> dict[str, pd.DataFrame]:
    rows = []
    for doc, (dtype, issuer, date, texts) in CHUNKS.items():
        for i, text in enumerate(texts):
            rows.append({"_id": f"{doc}#{i:04d}", "text": text, "doc_id": doc, "chunk_index": i,
                         "doc_type": dtype, "issuer": issuer, "date": date})
    corpus = pd.DataFrame(rows)
    queries = pd.DataFrame({"_id": corpus["_id"], "text": corpus["text"].str.split().str[:5].str.join(" "),
                            "doc_id": corpus["doc_id"], "chunk_id": corpus["_id"], "doc_type": corpus["doc_type"]})
    qrels = pd.DataFrame([{"query-id": q, "corpus-id": c, "score": 1}
                          for q, d in zip(corpus["_id"], corpus["doc_id"])
                          for c in corpus["_id"][corpus["doc_id"] == d] if c != q])
    return {"corpus": corpus, "queries": queries, "qrels": qrels}


def tiny_run() -> pd.DataFrame:
    return pd.DataFrame([{"query-id": q, "corpus-id": c, "rank": r, "score": s}
                         for q, cands in RUN.items() for r, (c, s) in enumerate(cands, 1)])


# ----------------------------------------------------------------------------------------- hand-made task
def test_every_flag_on_the_hand_made_task():
    res = misses(tiny_run(), tiny_task(), **SMALL)
    m = res.misses.set_index("query-id")
    assert res.n_queries == 10 and res.n_misses == len(EXPECTED)
    assert sorted(m.index) == sorted(EXPECTED)
    for q, exp in EXPECTED.items():
        assert m.loc[q, "retrieved_doc"] == exp["retrieved"], q
        assert m.loc[q, "query_doc"] == q.split("#")[0]
        for f in FLAGS:
            assert bool(m.loc[q, f]) == bool(exp[f]), (q, f)
    # the flag shares are the hand counts
    for f in FLAGS:
        assert res.share(f) == pytest.approx(sum(e[f] for e in EXPECTED.values()) / len(EXPECTED))


def test_near_duplicate_jaccard_by_hand():
    res = misses(tiny_run(), tiny_task(), **SMALL)
    m = res.misses.set_index("query-id")
    assert m.loc["A#0001", "jaccard"] == pytest.approx(25 / 27)   # 26 5-grams each, 25 shared
    assert m.loc["C#0001", "jaccard"] == pytest.approx(11 / 16)   # 14 and 13 5-grams, the formula's 11 shared
    assert m.loc["D#0001", "jaccard"] == pytest.approx(11 / 44)   # 41 and 14
    assert m.loc["D#0001", "boilerplate_share"] == pytest.approx(11 / 14)


def test_boilerplate_depends_on_the_document_threshold():
    # the formula is in 3 documents: with 4 required, nothing is boilerplate
    res = misses(tiny_run(), tiny_task(), boilerplate_min_docs=4, boilerplate_doc_share=0.01)
    assert not res.misses["boilerplate"].any()
    assert res.definitions["boilerplate_common_docs"] == 4
    # 0.5 of 5 documents rounds up to 3 documents
    res = misses(tiny_run(), tiny_task(), boilerplate_min_docs=1, boilerplate_doc_share=0.5)
    assert res.definitions["boilerplate_common_docs"] == 3 and res.misses["boilerplate"].sum() == 2


def test_tie_policy_decides_the_top_1():
    task, run = tiny_task(), tiny_run()
    assert "C#0000" not in set(misses(run, task, **SMALL).misses["query-id"])  # trec_eval: C#0001 first, a hit
    pes = misses(run, task, tie_policy="pessimistic", **SMALL).misses.set_index("query-id")
    assert pes.loc["C#0000", "corpus-id"] == "A#0000"  # pessimistic: the non-relevant tied chunk first
    exp = misses(run, task, tie_policy="expected", **SMALL)
    assert "C#0000" not in set(exp.misses["query-id"]) and exp.info["n_partial"] == 1


def test_shares_are_clustered_cr2_intervals():
    res = misses(tiny_run(), tiny_task(), **SMALL)
    m = res.misses
    for row in res.flags.itertuples(index=False):
        ref = interval(m[row.name].astype(float).to_numpy(), m["query_doc"].to_numpy(), "micro", "cr2")
        assert (row.share, row.low, row.high) == pytest.approx((ref.estimate, ref.low, ref.high))
    assert set(res.flags["method"]) == {"cr2"}


def test_by_type_counts_and_hit_rates():
    res = misses(tiny_run(), tiny_task(), **SMALL)
    bt = res.by_type.set_index("doc_type")
    assert bt.loc["despacho", ["n_documents", "n_queries", "n_misses"]].tolist() == [3, 6, 5]
    assert bt.loc["despacho", "hit_at_1"] == pytest.approx(1 / 6)
    assert bt.loc["despacho", "share_of_misses"] == pytest.approx(5 / 7)
    assert bt.loc["despacho", "share_near_duplicate"] == pytest.approx(2 / 5)
    # one document of type portaria / resolucao: no interval (K < 2), never a made-up one
    assert np.isnan(bt.loc["portaria", "hit_low"]) and bt.loc["portaria", "hit_at_1"] == pytest.approx(1 / 2)
    ref = interval(np.r_[0, 0, 1, 0, 0, 0.0], ["A", "A", "B", "B", "D", "D"], "micro", "cr2")
    assert (bt.loc["despacho", "hit_low"], bt.loc["despacho", "hit_high"]) == pytest.approx((ref.low, ref.high))
    f = res.by_type_flags
    row = f[(f["doc_type"] == "despacho") & (f["name"] == "same_type")].iloc[0]
    assert row["share"] == pytest.approx(4 / 5) and row["n_misses"] == 5 and row["n_documents"] == 3


def test_json_field_names(tmp_path):
    res = misses(tiny_run(), tiny_task(), **SMALL)
    out = tmp_path / "m.json"
    res.to_json(str(out))
    d = json.loads(out.read_text())
    assert {"n_queries", "n_misses", "flags", "by_type", "misses"} <= set(d)
    assert d["n_queries"] == 10 and d["n_misses"] == 7
    assert [r["name"] for r in d["flags"]] == FLAGS
    assert all({"name", "share", "low", "high"} <= set(r) for r in d["flags"])
    assert {"query-id", "corpus-id", "query_doc", "retrieved_doc", *FLAGS} <= set(d["misses"][0])
    assert all(isinstance(r[f], bool) for r in d["misses"] for f in FLAGS)
    assert {"doc_type", "hit_at_1", "share_of_misses"} <= set(d["by_type"][0])
    assert "MissesResult(n_queries=10, n_misses=7" in repr(res)
    text = res.summary()
    assert "7 of 10 queries" in text and "near_duplicate" in text and "by doc_type" in text
    assert list(res.to_frame()["query-id"]) == list(res.misses["query-id"])


def test_query_without_run_rows():
    run = tiny_run()
    run = run[run["query-id"] != "E#0001"]
    with pytest.raises(RagcovError, match="no rows for 1 of the task's 10 queries"):
        misses(run, tiny_task(), **SMALL)
    res = misses(run, tiny_task(), on_missing="zero", **SMALL)
    row = res.misses.set_index("query-id").loc["E#0001"]
    assert pd.isna(row["corpus-id"]) and pd.isna(row["retrieved_doc"]) and not row[FLAGS].any()
    assert res.n_misses == 8 and res.info["n_no_run"] == 1
    rec = [r for r in json.loads(res.to_json())["misses"] if r["query-id"] == "E#0001"][0]
    assert rec["corpus-id"] is None and rec["retrieved_doc"] is None


def test_own_chunk_rows_are_excluded():
    run = pd.concat([tiny_run(), pd.DataFrame([{"query-id": "A#0000", "corpus-id": "A#0000", "rank": 0,
                                                "score": 99.0}])])
    res = misses(run, tiny_task(), **SMALL)
    assert res.misses.set_index("query-id").loc["A#0000", "corpus-id"] == "B#0000"
    assert res.info["n_self_rows_removed"] == 1


def test_unknown_issuer_on_both_sides_is_not_the_same_issuer():
    task = tiny_task()
    c = task["corpus"]
    c["issuer"] = c["issuer"].astype(object)
    c.loc[c["doc_id"] == "C", "issuer"] = np.nan  # D (None) retrieves C (NaN) for D#0001
    res = misses(tiny_run(), task, **SMALL)
    m = res.misses.set_index("query-id")
    assert m.loc["D#0001", "retrieved_doc"] == "C" and not m.loc["D#0001", "same_issuer"]
    assert res.share("same_issuer") == pytest.approx(4 / 7)


def test_missing_metadata_leaves_the_flag_out():
    task = tiny_task()
    task["corpus"] = task["corpus"].drop(columns=["issuer"])
    res = misses(tiny_run(), task, **SMALL)
    assert list(res.flags["name"]) == ["same_type", "near_duplicate", "boilerplate", "contains_query",
                                       "retrieved_not_in_force", "cites"]
    assert "same_issuer" not in res.misses.columns
    assert any("flag same_issuer left out: the task's corpus has no issuer column" in n for n in res.info["notices"])


def test_bad_input_errors():
    task, run = tiny_task(), tiny_run()
    with pytest.raises(RagcovError, match="has no 'corpus' split"):
        misses(run, {"queries": task["queries"], "qrels": task["qrels"]})
    with pytest.raises(RagcovError, match=r"lacks \['queries.chunk_id'\]"):
        misses(run, {**task, "queries": task["queries"].drop(columns=["chunk_id"])})
    bad = run.copy()
    bad.loc[0, "corpus-id"] = "Z#0000"
    with pytest.raises(RagcovError, match="not in the task's corpus"):
        misses(bad, task)
    with pytest.raises(RagcovError, match=r"`near_duplicate` must be a share in \(0, 1\]; got 1.5"):
        misses(run, task, near_duplicate=1.5)
    with pytest.raises(RagcovError, match="`boilerplate_min_docs` must be an integer >= 1; got 0"):
        misses(run, task, boilerplate_min_docs=0)
    with pytest.raises(RagcovError, match="unknown|tie"):
        misses(run, task, tie_policy="random")


# ----------------------------------------------------------------------------------------- building blocks
def test_ngram_sets_against_python_sets():
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(6)]
    texts = [" ".join(rng.choice(vocab, rng.integers(0, 14))) for _ in range(40)]
    sets = ngram_sets(texts, 5)
    ref = [{tuple(t.casefold().split()[i:i + 5]) for i in range(len(t.split()) - 4)} for t in texts]
    assert list(sets.sizes) == [len(s) for s in ref]
    a, b = rng.integers(0, 40, 60), rng.integers(0, 40, 60)
    got = sets.jaccard(a, b)
    for x, y, g in zip(a, b, got):
        u = ref[x] | ref[y]
        assert (np.isnan(g) and not u) or g == pytest.approx(len(ref[x] & ref[y]) / len(u))
    docs = np.array([i % 7 for i in range(40)])
    share = sets.common_share(docs, 3)
    df = {}
    for d in set(docs):
        for g in set().union(*[ref[i] for i in np.flatnonzero(docs == d)]):
            df[g] = df.get(g, 0) + 1
    for i, s in enumerate(ref):
        exp = np.mean([df[g] >= 3 for g in s]) if s else np.nan
        assert (np.isnan(share[i]) and np.isnan(exp)) or share[i] == pytest.approx(exp)


def test_headings_and_patterns_by_hand():
    assert heading("AGÊNCIA NACIONAL DE ENERGIA ELÉTRICA – ANEEL DESPACHO Nº 2.826, DE 4 DE OUTUBRO DE 2022 Texto "
                   "Original O DIRETOR") == "DESPACHO Nº 2.826, DE 4 DE OUTUBRO DE 2022"
    assert heading("MINISTÉRIO DE MINAS E ENERGIA PORTARIA Nº 1.238/SPE/MME, DE 07 DE MARÇO DE 2022 Texto") == \
        "PORTARIA Nº 1.238/SPE/MME, DE 07 DE MARÇO DE 2022"
    assert heading("ANEEL EXTRATO DE CONTRATO Nº 15/2021 - UASG 323028") == "EXTRATO DE CONTRATO Nº 15/2021"
    assert heading("1 PLANO ANUAL DE AUDITORIA INTERNA PAINT/2022 Dezembro/2021 2 ÍNDICE 1. A ANEEL 3") == \
        "1 PLANO ANUAL DE AUDITORIA INTERNA PAINT/2022 Dezembro/2021 2 ÍNDICE 1. A"  # no number: 12 words
    assert pattern("PORTARIA Nº 1.238/SPE/MME, DE 07 DE MARÇO DE 2022") == \
        pattern("PORTARIA N° 546/SPE/MME, DE 11 DE FEVEREIRO DE 2021") == "portaria no #/spe/mme de # de # de #"
    assert pattern("PORTARIA Nº 637/GM/MME, DE 31 DE MARÇO DE 2022") != pattern("PORTARIA Nº 546/SPE/MME, DE 1 DE "
                                                                                 "MAIO DE 2021")
    assert pattern("DESPACHO Nº 3.079, DE 1º DE OUTUBRO DE 2021") == pattern("DESPACHO No 4 DE 2 DE MAIO DE 2016")


def test_other_edition_on_hand_made_records():
    h1 = "RESOLUÇÃO HOMOLOGATÓRIA Nº 2.865, DE 27 DE ABRIL DE 2021"
    h2 = "RESOLUÇÃO HOMOLOGATÓRIA Nº 3.080, DE 26 DE JULHO DE 2022"
    plan = "PLANO ANUAL DE AUDITORIA INTERNA"
    records = [  # (q_doc, r_doc, q_type, r_type, q_issuer, r_issuer, q_date, r_date, q_head, r_head, expected)
        ("a", "b", "reh", "reh", "ANEEL", "ANEEL", "2021-04-27", "2022-07-26", h1, h2, True),   # another number
        ("a", "a", "reh", "reh", "ANEEL", "ANEEL", "2021-04-27", "2021-04-27", h1, h1, False),  # same document
        ("a", "b", "reh", "rea", "ANEEL", "ANEEL", "2021-04-27", "2022-07-26", h1, h2, False),  # another type
        ("a", "b", "reh", "reh", "ANEEL", "MME", "2021-04-27", "2022-07-26", h1, h2, False),    # another issuer
        ("a", "b", "reh", "reh", "ANEEL", None, "2021-04-27", "2022-07-26", h1, h2, False),     # issuer unknown on one
        ("a", "b", "reh", "reh", None, None, "2021-04-27", "2022-07-26", h1, h2, True),         # unknown on both
        ("a", "b", "plano", "plano", "ANEEL", "ANEEL", "2021-12-01", "2022-12-01", plan, plan, True),  # date only
        ("a", "b", "plano", "plano", "ANEEL", "ANEEL", None, None, plan, plan, False),          # nothing differs
        ("a", "b", "reh", "reh", "ANEEL", "ANEEL", "2021-04-27", "2022-07-26", h1,
         "RESOLUÇÃO AUTORIZATIVA Nº 3.080, DE 26 DE JULHO DE 2022", False),                     # another series
    ]
    cols = list(zip(*records))
    assert list(other_edition(*cols[:10])) == list(cols[10])


# ----------------------------------------------------------------------------------------- the real task
@pytest.fixture(scope="module")
def aneel(data_dir):
    ds = ragcov_data.load_dataset("aneel_taesa", data_dir=str(data_dir))
    run = BM25().index(ds["corpus"]).search(ds["queries"], k=10, exclude_self=True, show_progress=False)
    return ds, run


def test_misses_are_the_queries_evaluate_scores_zero(aneel):
    ds, run = aneel
    res = misses(run, ds)
    pq = evaluate(run, ds, methods=["cr2"]).per_query
    assert set(res.misses["query-id"]) == set(pq["query-id"][pq["value"] == 0])
    assert res.n_queries == len(pq) and res.n_misses == int((pq["value"] == 0).sum())
    # the top-1 is trec_eval's first row: score descending, then corpus-id descending (own chunk excluded)
    order = run.sort_values(["query-id", "score", "corpus-id"], ascending=[True, False, False])
    first = order.drop_duplicates("query-id").set_index("query-id")["corpus-id"]
    got = res.misses.set_index("query-id")["corpus-id"]
    assert (first.loc[got.index] == got).all()
    rel = set(zip(ds["qrels"]["query-id"], ds["qrels"]["corpus-id"]))
    assert not any((q, c) in rel for q, c in got.items())
    doc = pd.Series(ds["corpus"]["doc_id"], index=ds["corpus"]["_id"])
    assert (doc.loc[got.to_numpy()].to_numpy() == res.misses["retrieved_doc"].to_numpy()).all()
    assert res.share("same_type") == pytest.approx(res.misses["same_type"].mean())


# ----------------------------------------------------------------------------------------- vigência, citations, issuers
def _doc(doc, dtype, issuer, date, texts):
    return [{"_id": f"{doc}#{i:04d}", "text": t, "doc_id": doc, "chunk_index": i, "doc_type": dtype,
             "issuer": issuer, "date": date} for i, t in enumerate(texts)]


def explain_task(in_force: bool = False) -> dict[str, pd.DataFrame]:
    """Q is a despacho; R revokes nothing but cites Q and states it is revoked (ANEEL's layout: the
    annotation after the signature); S a voto without issuer (ANEEL process number, director's signature)."""
    rows = (_doc("Q", "despacho", "ANEEL", "2021-01-05",
                 ["DESPACHO Nº 100, DE 5 DE JANEIRO DE 2021 " + uniq("q0", 20), uniq("q1", 25)])
            + _doc("R", "despacho", "ANEEL", "2022-02-01",
                   ["DESPACHO Nº 7, DE 1 DE FEVEREIRO DE 2022 " + uniq("r0", 20),
                    "prorroga o prazo do Despacho nº 100, de 5 de janeiro de 2021 " + uniq("r1", 20)
                    + " HÉLVIO NEVES GUERRA (Revogado pelo DSP SCG/ANEEL 2.124 de 09.08.2023)"])
            + _doc("S", "voto", None, None,
                   ["VOTO PROCESSO: 48500.003739/2020-11. INTERESSADOS: Eletronorte RELATOR: Diretor Hélvio "
                    + uniq("s0", 20), uniq("s1", 20) + " Brasília, 22 de julho de 2022. HÉLVIO NEVES GUERRA Diretor"]))
    corpus = pd.DataFrame(rows)
    if in_force:
        corpus["in_force"] = [True, True, True, True, True, False]
    queries = pd.DataFrame({"_id": corpus["_id"], "text": corpus["text"].str.split().str[:5].str.join(" "),
                            "doc_id": corpus["doc_id"], "chunk_id": corpus["_id"]})
    qrels = pd.DataFrame([{"query-id": q, "corpus-id": c, "score": 1} for q, d in zip(corpus["_id"], corpus["doc_id"])
                          for c in corpus["_id"][corpus["doc_id"] == d] if c != q])
    return {"corpus": corpus, "queries": queries, "qrels": qrels}


EXPLAIN_RUN = {"Q#0000": "R#0001", "Q#0001": "S#0000", "R#0000": "Q#0000", "R#0001": "Q#0001",
               "S#0000": "Q#0001", "S#0001": "R#0000"}


def test_vigencia_citation_and_issuer_flags():
    run = pd.DataFrame([{"query-id": q, "corpus-id": c, "rank": 1, "score": 5.0} for q, c in EXPLAIN_RUN.items()])
    m = misses(run, explain_task()).misses.set_index("query-id")
    assert len(m) == 6
    # retrieved_not_in_force: R states it is revoked (read from its text); nothing else does
    assert m["retrieved_not_in_force"].to_dict() == {q: c.startswith("R") for q, c in EXPLAIN_RUN.items()}
    assert m.loc["Q#0000", "retrieved_status"] == "revoked"
    # cites: R cites Q (Despacho nº 100, de 5 de janeiro de 2021), in either direction; S cites nothing
    assert m["cites"].to_dict() == {"Q#0000": True, "Q#0001": False, "R#0000": True, "R#0001": True,
                                    "S#0000": False, "S#0001": False}
    # the voto's issuer comes from its heading: ANEEL, as Q's, so same_issuer holds for Q#0001 and S#0000
    assert bool(m.loc["Q#0001", "same_issuer"]) and bool(m.loc["S#0000", "same_issuer"])
    assert m.loc["Q#0001", "retrieved_issuer"] == "ANEEL" and bool(m.loc["Q#0001", "issuer_derived"])


def test_in_force_column_marks_the_retrieved_chunk():
    run = pd.DataFrame([{"query-id": q, "corpus-id": c, "rank": 1, "score": 5.0} for q, c in EXPLAIN_RUN.items()])
    task = explain_task(in_force=True)
    task["corpus"]["text"] = task["corpus"]["text"].str.replace(" (Revogado pelo DSP SCG/ANEEL 2.124 de "
                                                                "09.08.2023)", "", regex=False)
    m = misses(run, task).misses.set_index("query-id")
    assert m["retrieved_not_in_force"].to_dict() == {q: c == "S#0001" for q, c in EXPLAIN_RUN.items()}


def test_other_edition_needs_the_documents_to_overlap():
    res = misses(tiny_run(), tiny_task(), boilerplate_min_docs=3, boilerplate_doc_share=0.01)  # default 0.5
    m = res.misses.set_index("query-id")
    assert not m["other_edition"].any()  # A and B: same series, but their texts share 30% of their 5-grams
    assert m.loc["A#0000", "document_jaccard"] == pytest.approx(14 / 46)
    assert np.isnan(m.loc["D#0000", "document_jaccard"])  # not the same series: no overlap computed
    assert "Jaccard >= 0.5" in res.definitions["other_edition"]
    with pytest.raises(RagcovError, match="edition_overlap"):
        misses(tiny_run(), tiny_task(), edition_overlap=0)


def test_contains_query_is_contiguous_and_casefolded():
    assert _contains("Fica  APROVADO o", "art. 1º fica aprovado o regulamento")
    assert not _contains("fica aprovado o", "fica aprovado, o regulamento")  # "aprovado," is another word
    assert not _contains("fica o aprovado", "fica aprovado o")
    assert not _contains("", "qualquer texto")


@pytest.mark.parametrize("text, key", [
    ("AGÊNCIA NACIONAL DE ENERGIA ELÉTRICA DESPACHO Nº 2.124, DE 9 DE AGOSTO DE 2016", ("despacho", 2124, 2016)),
    ("PORTARIA Nº 1.238/SPE/MME, DE 07 DE MARÇO DE 2022", ("portaria", 1238, 2022)),
    ("RESOLUÇÃO HOMOLOGATÓRIA Nº 2.865, DE 27 DE ABRIL DE 2021", ("resolucao", 2865, 2021)),
    ("LEI Nº 14.133, DE 1º DE ABRIL DE 2021", ("lei", 14133, 2021)),
    ("PLANO ANUAL DE AUDITORIA INTERNA", None),
])
def test_act_keys(text, key):
    assert act_key(text) == key


def test_citations_in_running_text():
    text = ("nos termos da Lei nº 9.427, de 26 de dezembro de 1996, da Resolução Normativa nº 1.000/2021 e da REN "
            "875, de 2020. (Revogado pelo DSP SCG/ANEEL 2.124 de 09.08.2016) Portaria MME nº 182, de 11 de maio "
            "de 2016; a lei que trata do tema 5; o art. 3º do Decreto nº 10.854")
    got = citations(text)
    assert got == {("lei", 9427, 1996), ("resolucao", 1000, 2021), ("resolucao", 875, 2020),
                   ("despacho", 2124, 2016), ("portaria", 182, 2016), ("decreto", 10854, None)}
    assert cites(got, ("decreto", 10854, 2021))       # no year in the citation: the number decides (>= 100)
    assert not cites(got, ("lei", 9427, 1997))        # another year
    assert not cites(got, ("portaria", 183, 2016)) and not cites(got, None)
    assert not cites(citations("Despacho nº 24"), ("despacho", 24, 2021))  # a short number needs its year


def test_derived_issuer():
    voto = "VOTO PROCESSO: 48500.001755/2021-50 INTERESSADOS: Powertech RELATOR: Diretor Efrain Pereira da Cruz"
    assert derive_issuer("voto", voto, "") == "ANEEL"
    decisao = ("DECISÃO PROCESSO Nº: 48500.002891/2009-71. ASSUNTO: Recurso Administrativo")
    assert derive_issuer("decisao", decisao, "") == "ANEEL"
    signed = "ANEEL ... Brasília, 4 de maio de 2016. ROMEU DONIZETE RUFINO Diretor-Geral"
    assert derive_issuer("decisao", "DECISÃO sem processo", signed) == "ANEEL"
    assert derive_issuer("despacho", voto, "") is None  # only votos, decisões and notas técnicas
    assert derive_issuer("voto", "VOTO do conselho", "assinado pelo presidente") is None


def test_aneel_new_flags_measured(aneel):
    ds, run = aneel
    res = misses(run, ds)
    m = res.misses
    assert res.n_misses == 927
    assert int(m["contains_query"].sum()) == 110  # the 20-word query word for word in the retrieved chunk
    # every voto and decisão now has an issuer (ANEEL), none had one in the metadata
    votos = m[m["retrieved_type"].isin(["voto", "decisao"])]
    assert len(votos) and votos["retrieved_issuer"].notna().all()
    assert set(m.loc[m["retrieved_not_in_force"], "retrieved_status"]) == {"revoked"}
    assert m["other_edition"].sum() < m["same_type"].sum() / 10  # no longer "same type and issuer"
    assert (m.loc[m["other_edition"], "document_jaccard"] >= 0.5).all()


def test_act_key_of_a_document_that_discusses_another_act():
    """A decisão heads its text with the act it discusses: that is not its own number."""
    head = "Resolução Homologatória nº 2.919, de 3 de agosto de 2021"
    assert act_key(head) == ("resolucao", 2919, 2021)
    assert act_key(head, doc_type="decisao") is None and act_key(head, doc_type="procedimento_anexo") is None
    assert act_key(head, doc_type="resolucao_homologatoria") == ("resolucao", 2919, 2021)
    assert act_key("DESPACHO Nº 24", "2021-01-07", "despacho") == ("despacho", 24, 2021)  # year from the date
