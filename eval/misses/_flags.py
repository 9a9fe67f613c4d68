"""The flags on each hit@1 miss of :func:`ragcov_data.eval.misses.misses` (their definitions: the docstring of
:mod:`ragcov_data.eval.misses.analysis`).

:func:`locate` finds who is who for every miss (the query's own chunk and document, the retrieved top-1 chunk
and its document), :func:`ngram_flags` and :func:`flag_values` compute the flags and :func:`miss_table` lays
them out, one row a miss.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError

from ragcov_data.eval.misses import _editions
from ragcov_data.eval.misses._ngrams import ngram_sets
from ragcov_data.eval.outcomes.table import _split_frame
from ragcov_data.legal import vigencia

#: The flags, in output order, and the metadata columns each needs.
FLAG_NAMES = ("same_type", "same_issuer", "near_duplicate", "boilerplate", "other_edition", "contains_query",
              "retrieved_not_in_force", "cites")
_NEEDS = {"same_type": ("doc_type",), "same_issuer": ("issuer",), "near_duplicate": (), "boilerplate": (),
          "other_edition": ("doc_type", "issuer", "date"), "contains_query": (), "retrieved_not_in_force": (),
          "cites": ()}

#: Default thresholds (see the module docstring for why).
DEFAULTS = {"ngram": 5, "near_duplicate": 0.5, "boilerplate_doc_share": 0.03, "boilerplate_min_docs": 5,
            "boilerplate_share": 0.5, "edition_overlap": _editions.EDITION_OVERLAP}

_META = ("doc_type", "issuer", "date")


def _documents(corpus: pd.DataFrame) -> pd.DataFrame:
    """One row per document: its metadata, its heading (from its first chunk), its whole text (chunks in
    order), an issuer derived for votos and decisões without one, and the status its text states."""
    order = corpus.sort_values(["doc_id", "chunk_index"], kind="stable") if "chunk_index" in corpus.columns \
        else corpus
    first = corpus.sort_values("chunk_index", kind="stable").drop_duplicates("doc_id").set_index("doc_id") \
        if "chunk_index" in corpus.columns else corpus.drop_duplicates("doc_id").set_index("doc_id")
    docs = pd.DataFrame(index=first.index)
    for c in _META:
        if c in first.columns:
            vals = first[c].to_numpy(dtype=object)
            docs[c] = pd.Series(np.where(pd.isna(vals), None, vals), index=first.index, dtype=object)  # None: unknown
    docs["heading"] = [_editions.heading(t) for t in first["text"].astype(str)]
    full = order.groupby("doc_id", sort=False)["text"].agg(lambda t: " ".join(map(str, t)))
    docs["full_text"] = full.reindex(docs.index).to_numpy(dtype=object)
    docs["issuer_derived"] = False
    if "doc_type" in docs.columns:
        derived = [None if (docs.get("issuer") is not None and docs.at[d, "issuer"] is not None)
                   else _editions.derive_issuer(docs.at[d, "doc_type"], docs.at[d, "full_text"],
                                                docs.at[d, "full_text"]) for d in docs.index]
        mask = np.array([x is not None for x in derived], dtype=bool)
        if mask.any():
            if "issuer" not in docs.columns:
                docs["issuer"] = pd.Series([None] * len(docs), index=docs.index, dtype=object)
            docs.loc[mask, "issuer"] = [x for x in derived if x is not None]
            docs["issuer_derived"] = mask
    if "status" in first.columns:  # the acervo's stated status (vigência columns)
        vals = first["status"].to_numpy(dtype=object)
        docs["status"] = [None if pd.isna(v) or str(v) in ("", "None", "nan") else str(v) for v in vals]
    else:
        docs["status"] = [vigencia.document_status(t) for t in docs["full_text"]]
    return docs

@dataclass
class Located:
    """Who is who: per query (``qids`` order) its own chunk's corpus position and document, and the score of
    its top-1; per miss (``mq``: positions of the misses among the queries) the retrieved top-1 chunk id
    (None: the run had no row for the query), its corpus position (-1 without) and its document."""

    qids: np.ndarray
    mq: np.ndarray
    own_pos: np.ndarray
    q_doc: np.ndarray
    top_score: np.ndarray
    r_id: np.ndarray
    has_r: np.ndarray
    r_pos: np.ndarray
    r_doc: np.ndarray
    docs: pd.DataFrame
    doc_of: np.ndarray


def locate(corpus: pd.DataFrame, queries: pd.DataFrame, qids: np.ndarray, is_miss: np.ndarray,
           top: pd.DataFrame) -> Located:
    """Positions in the corpus, documents and the top-1 of every miss; an error for a query whose own chunk
    is not in the corpus."""
    pos = pd.Index(corpus["_id"])
    own_chunk = queries["chunk_id"].astype(str).to_numpy()
    own_pos = pos.get_indexer(own_chunk)
    if (own_pos < 0).any():
        bad = own_chunk[own_pos < 0][0]
        raise RagcovError(f"query {qids[own_pos < 0][0]!r} names its own chunk {bad!r}, which is not in the task's "
                          "corpus; the task is inconsistent (rebuild it).")
    mq = np.flatnonzero(is_miss)
    top_id = np.full(len(qids), None, dtype=object)
    top_score = np.full(len(qids), np.nan)
    top_id[top["qidx"].to_numpy()] = top["corpus-id"].to_numpy()
    top_score[top["qidx"].to_numpy()] = top["score"].to_numpy()
    r_id = top_id[mq]
    has_r = np.array([x is not None for x in r_id], dtype=bool)
    r_pos = np.full(len(mq), -1, dtype=np.int64)
    r_pos[has_r] = pos.get_indexer(r_id[has_r].astype(str))
    docs = _documents(corpus)
    doc_of = corpus["doc_id"].to_numpy(dtype=object)
    q_doc = doc_of[own_pos]
    r_doc = np.where(has_r, doc_of[np.maximum(r_pos, 0)], None)
    return Located(qids, mq, own_pos, q_doc, top_score, r_id, has_r, r_pos, r_doc, docs, doc_of)


def ngram_flags(corpus: pd.DataFrame, w: Located, boilerplate_min_docs: int, boilerplate_doc_share: float
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """Per miss: the Jaccard of the own and retrieved chunks' 5-gram sets and the retrieved chunk's share of
    common 5-grams (NaN without a retrieved chunk); and the documents a common 5-gram is found in."""
    sets = ngram_sets(corpus["text"].astype(str).tolist(), DEFAULTS["ngram"])
    n_docs = len(w.docs)
    min_docs = max(int(boilerplate_min_docs), math.ceil(boilerplate_doc_share * n_docs - 1e-9))
    common = sets.common_share(w.doc_of, min_docs)
    jac = np.full(len(w.mq), np.nan)
    bshare = np.full(len(w.mq), np.nan)
    if w.has_r.any():
        jac[w.has_r] = sets.jaccard(w.own_pos[w.mq][w.has_r], w.r_pos[w.has_r])
        bshare[w.has_r] = common[w.r_pos[w.has_r]]
    return jac, bshare, min_docs


def meta(docs: pd.DataFrame, col: str, doc_ids: np.ndarray) -> np.ndarray:
    """Column ``col`` of ``docs`` for each of ``doc_ids`` (None: unknown or no such column)."""
    if col not in docs.columns:
        return np.full(len(doc_ids), None, dtype=object)
    vals = docs[col].reindex(pd.Index(doc_ids, dtype=object)).to_numpy(dtype=object)
    return np.where(pd.isna(vals), None, vals)


def flag_values(task: Any, corpus: pd.DataFrame, w: Located, jac: np.ndarray, bshare: np.ndarray, *,
                near_duplicate: float, boilerplate_share: float, edition_overlap: float, notices: list[str]
                ) -> tuple[dict[str, np.ndarray], list[str], dict[str, Any]]:
    """Every flag per miss, the flags the task's metadata allows (a notice for each one left out, appended to
    ``notices``) and the table's other per-miss columns (``q_meta``, ``r_meta``, ``doc_jac``, ``r_status``,
    ``r_units``, ``r_share``)."""
    docs, mq, has_r = w.docs, w.mq, w.has_r
    q_meta = {c: meta(docs, c, w.q_doc[mq]) for c in (*_META, "heading")}
    r_meta = {c: meta(docs, c, w.r_doc) for c in (*_META, "heading")}

    def known_equal(col: str) -> np.ndarray:
        a, b = q_meta[col], r_meta[col]
        return np.array([x is not None and y is not None and str(x) == str(y) for x, y in zip(a, b)], dtype=bool)

    available = [f for f in FLAG_NAMES if all(c in docs.columns for c in _NEEDS[f])]
    for f in FLAG_NAMES:
        if f not in available:
            lacking = [c for c in _NEEDS[f] if c not in docs.columns]
            notices.append(f"flag {f} left out: the task's corpus has no {', '.join(lacking)} column.")
    # other edition: the same series, another number or date, and the documents' texts overlap
    series = _editions.other_edition(w.q_doc[mq], w.r_doc, q_meta["doc_type"], r_meta["doc_type"],
                                     q_meta["issuer"], r_meta["issuer"], q_meta["date"], r_meta["date"],
                                     q_meta["heading"], [h or "" for h in r_meta["heading"]]) & has_r
    doc_jac = _edition_jaccard(w, series)
    r_status = meta(docs, "status", w.r_doc)
    values = {
        "same_type": known_equal("doc_type") & has_r,
        "same_issuer": known_equal("issuer") & has_r,
        "near_duplicate": np.nan_to_num(jac, nan=-1.0) >= near_duplicate,
        "boilerplate": np.nan_to_num(bshare, nan=-1.0) >= boilerplate_share,
        "other_edition": series & (np.nan_to_num(doc_jac, nan=-1.0) >= edition_overlap),
        "contains_query": _contains_query(task, corpus, w),
        "retrieved_not_in_force": _not_in_force(corpus, w, r_status),
        "cites": _cites(w),
    }
    r_units, r_share = _units_not_in_force(corpus, w.r_pos, has_r)
    return values, available, {"q_meta": q_meta, "r_meta": r_meta, "doc_jac": doc_jac, "r_status": r_status,
                               "r_units": r_units, "r_share": r_share}


def _edition_jaccard(w: Located, series: np.ndarray) -> np.ndarray:
    """Per miss of the same series: the Jaccard of the two documents' 5-gram sets (NaN for the others)."""
    mq, docs = w.mq, w.docs
    doc_jac = np.full(len(mq), np.nan)
    if series.any():  # on the distinct document pairs, over the documents involved only
        pairs = pd.DataFrame({"q": w.q_doc[mq][series].astype(str), "r": w.r_doc[series].astype(str)})
        uniq = pairs.drop_duplicates()
        involved = pd.Index(pd.unique(np.concatenate([uniq["q"].to_numpy(), uniq["r"].to_numpy()])))
        doc_sets = ngram_sets(docs["full_text"].reindex(involved).astype(str).tolist(), DEFAULTS["ngram"])
        jac_u = doc_sets.jaccard(involved.get_indexer(uniq["q"]), involved.get_indexer(uniq["r"]))
        key = pd.MultiIndex.from_frame(uniq)
        doc_jac[series] = jac_u[key.get_indexer(pd.MultiIndex.from_frame(pairs))]
    return doc_jac


def _contains_query(task: Any, corpus: pd.DataFrame, w: Located) -> np.ndarray:
    """contains_query: the query's words, in order and contiguous, inside the retrieved chunk."""
    mq, has_r, r_pos = w.mq, w.has_r, w.r_pos
    q_frame = _split_frame(task, "queries", ["_id", "text"])
    q_text = None
    if q_frame is not None and "text" in q_frame.columns:
        q_text = (q_frame.assign(_id=q_frame["_id"].astype(str)).drop_duplicates("_id").set_index("_id")["text"]
                  .reindex(w.qids[mq]).fillna("").astype(str).to_numpy(dtype=object))
    texts = corpus["text"].astype(str).to_numpy(dtype=object)
    return np.array([bool(has_r[i]) and q_text is not None and _contains(q_text[i], texts[r_pos[i]])
                     for i in range(len(mq))], dtype=bool)


def _not_in_force(corpus: pd.DataFrame, w: Located, r_status: np.ndarray) -> np.ndarray:
    """retrieved_not_in_force: the retrieved chunk (corpus ``in_force``) or its document's stated status."""
    vigencia_statuses = {"revoked", "suspended"}
    has_r, r_pos = w.has_r, w.r_pos
    chunk_out = np.zeros(len(w.mq), dtype=bool)
    if "in_force" in corpus.columns and has_r.any():
        inf = corpus["in_force"].to_numpy()
        chunk_out[has_r] = [not _truthy(inf[p]) for p in r_pos[has_r]]
    return has_r & (chunk_out | np.array([s in vigencia_statuses for s in r_status], dtype=bool))


def _cites(w: Located) -> np.ndarray:
    """cites: the retrieved document cites the query's act, or the reverse."""
    docs, mq, has_r, q_doc, r_doc = w.docs, w.mq, w.has_r, w.q_doc, w.r_doc
    none = [None] * len(docs)
    keys = {d: _editions.act_key(h, dt, ty) for d, h, dt, ty in zip(
        docs.index, docs["heading"], docs["date"] if "date" in docs.columns else none,
        docs["doc_type"] if "doc_type" in docs.columns else none)}
    cited_by: dict[Any, frozenset] = {}

    def cited(d: Any) -> frozenset:
        if d not in cited_by:
            cited_by[d] = _editions.citations(str(docs.at[d, "full_text"]))
        return cited_by[d]

    return np.array([bool(has_r[i]) and q_doc[mq][i] != r_doc[i]
                     and (_editions.cites(cited(r_doc[i]), keys.get(q_doc[mq][i]))
                          or _editions.cites(cited(q_doc[mq][i]), keys.get(r_doc[i])))
                     for i in range(len(mq))], dtype=bool)


def miss_table(w: Located, values: dict[str, np.ndarray], available: list[str], cols: dict[str, Any],
               jac: np.ndarray, bshare: np.ndarray, clusters: np.ndarray) -> pd.DataFrame:
    """One row per miss: who, the scores behind the flags, the flags the task allows."""
    mq, docs, q_meta, r_meta = w.mq, w.docs, cols["q_meta"], cols["r_meta"]
    return pd.DataFrame({
        "query-id": w.qids[mq], "corpus-id": w.r_id, "query_doc": w.q_doc[mq], "retrieved_doc": w.r_doc,
        "query_type": q_meta["doc_type"], "retrieved_type": r_meta["doc_type"], "score": w.top_score[mq],
        "jaccard": jac, "boilerplate_share": bshare, "cluster": clusters[mq],
        **{f: values[f] for f in available},
        "document_jaccard": cols["doc_jac"], "retrieved_status": cols["r_status"],
        "retrieved_units_not_in_force": cols["r_units"], "retrieved_share_not_in_force": cols["r_share"],
        "query_issuer": q_meta["issuer"] if "issuer" in q_meta else None,
        "retrieved_issuer": r_meta["issuer"] if "issuer" in r_meta else None,
        "issuer_derived": meta(docs, "issuer_derived", w.r_doc) if "issuer_derived" in docs.columns else False,
    })


def _contains(query: str, text: str) -> bool:
    """Do ``query``'s casefolded whitespace words occur, in order and contiguous, in ``text``'s?"""
    q = " ".join(query.casefold().split())
    return bool(q) and f" {q} " in f" {' '.join(text.casefold().split())} "


def _units_not_in_force(corpus: pd.DataFrame, r_pos: np.ndarray, has_r: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Per miss: the out-of-force units of the retrieved chunk (corpus ``units_not_in_force``, labels joined
    with ``"; "``; None when it holds none or the corpus has no such column) and the share of its words they
    hold (NaN without the column), so a chunk with one revoked parágrafo and one all of old wording are
    told apart."""
    units = np.full(len(r_pos), None, dtype=object)
    share = np.full(len(r_pos), np.nan)
    if "units_not_in_force" not in corpus.columns or not has_r.any():
        return units, share
    col = corpus["units_not_in_force"].to_numpy(dtype=object)
    shares = (corpus["share_not_in_force"].to_numpy(dtype=float) if "share_not_in_force" in corpus.columns
              else np.full(len(corpus), np.nan))
    for i in np.flatnonzero(has_r):
        labels = col[r_pos[i]]
        labels = [] if labels is None or (isinstance(labels, float) and math.isnan(labels)) else list(labels)
        units[i] = "; ".join(str(x) for x in labels) or None
        share[i] = shares[r_pos[i]]
    return units, share


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "0", "", "none", "nan")
    return bool(value) if not (isinstance(value, float) and math.isnan(value)) else True
