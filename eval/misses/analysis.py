"""``misses``: where do a run's hit@1 misses go? Flags on each miss, shares with document-clustered intervals.

For every query of a self-retrieval task that scores hit@1 = 0 (exactly as :func:`ragcov_data.eval.evaluate`
scores it: same tie policy, own chunk excluded, same handling of unjudged queries), the top-1 retrieved
chunk is compared with the query's own chunk and document:

``same_type``
    the retrieved chunk's document has the query document's ``doc_type`` (both known);
``same_issuer``
    ... the same ``issuer`` (both known: an unknown issuer matches nothing);
``near_duplicate``
    the Jaccard similarity of the word 5-gram sets of the query's own chunk and the retrieved chunk is
    ``>= 0.5`` (words: casefolded whitespace tokens; a chunk under 5 words has no 5-gram and is never a
    near duplicate);
``boilerplate``
    at least half of the retrieved chunk's distinct 5-grams are *common*: found in at least
    ``max(5, ceil(3% of the corpus documents))`` distinct documents (5 of 147 on the ANEEL sample). On that
    sample 98% of distinct 5-grams occur in one or two documents and 99% in at most three, so a 5-gram
    in five or more takes a formula — a letterhead, "no uso de suas atribuições", "este texto não
    substitui o publicado no D.O.", a series' fixed wording, a citation formula ("Lei nº 9.427, de 26 de
    dezembro de 1996") — not shared content. Counting documents, not chunks, keeps one long act's own
    repeated page headers out. A chunk is boilerplate when such formulas make up most of it. A higher
    threshold (10%: 15 documents) flags no retrieved chunk at all on the sample, since a 100-word chunk
    always carries some names and numbers. The thresholds are parameters, recorded in the result;
``other_edition``
    the retrieved document is another edition of the query document: the same series (same ``doc_type``,
    issuer not different, equal heading pattern: act type + number pattern), another number or date, *and*
    the two documents' texts overlap: Jaccard of their word 5-gram sets ``>= 0.5`` (``edition_overlap``;
    on the ANEEL sample the same-series pairs have median 0.03 and 99th percentile 0.41, so series siblings
    that only share a template stay out) (:mod:`ragcov_data.eval.misses._editions`);
``contains_query``
    the query's words appear, in order and contiguous, in the retrieved chunk (casefolded whitespace words):
    the retriever found the query's text elsewhere, a duplicate the query cannot tell apart;
``retrieved_not_in_force``
    the retrieved chunk is superseded wording (corpus ``in_force`` false: every unit it holds is out of
    force) or its document states that it is revoked or suspended (corpus ``status``, else read from the
    document's text by :func:`ragcov_data.legal.vigencia.document_status`); the table names the out-of-force
    units the retrieved chunk holds (``retrieved_units_not_in_force``, from corpus ``units_not_in_force``)
    and the share of its words they hold (``retrieved_share_not_in_force``), so a chunk with one revoked
    parágrafo (flag false, one unit named) and a chunk all of old wording (flag true) are told apart;
``cites``
    the retrieved document cites the query's act, or the query's document cites the retrieved act (an act
    is its heading's type, number and year; citations such as ``Lei nº 9.427, de 26 de dezembro de 1996``,
    ``REN 1.000/2021``, ``DSP SCG/ANEEL 2.124 de 09.08.2016`` are matched on type, number and year:
    :func:`ragcov_data.eval.misses._editions.citations`).

A voto, decisão or nota técnica whose ``issuer`` is unknown gets the one its heading or signature shows
(:func:`ragcov_data.eval.misses._editions.derive_issuer`: ANEEL's protocol number ``48500.`` or a director's
signature), for ``same_issuer`` and ``other_edition``; the misses table says which issuers were derived.

Each share is a ratio estimator over documents: (misses with the flag) / (misses), where the misses of
one query document move together, so the interval is CR2 (micro) clustered by the query's document —
equal to ``interval(flag_values, query_docs, "micro", "cr2")`` on the misses.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.estimates._bounds import clip_table
from ragcov_data.eval.estimates.verify import design_of, verify_design
from ragcov_data.eval.outcomes.args import check_outcome_args
from ragcov_data.eval.outcomes.metrics._lists import _order
from ragcov_data.eval.outcomes.passages import (CHUNK_RULE, chunk_run, locate_run, location_notice,
                                                missing_answers_error, run_label)
from ragcov_data.eval.outcomes.stage import outcomes
from ragcov_data.runs import load_run
from ragcov_data.runs.passages import is_passage_run
from ragcov_data.eval.outcomes.table import DEFAULT_CLUSTERS, _split_frame, load_task_frames, run_name
from ragcov_data.ties import DEFAULT_TIE_POLICY, check_tie_policy

from ragcov_data.eval.estimates import _kernels, marks
from ragcov_data.eval.misses import _flags
from ragcov_data.eval.estimates._kernels import check_level
from ragcov_data.eval.misses._flags import _META, DEFAULTS, FLAG_NAMES, _contains  # noqa: F401  (_contains: tests)
from ragcov_data.eval.estimates.results import _fmt, _JsonMixin, chosen_unit_words

__all__ = ["misses", "MissesResult", "FLAG_NAMES", "DEFAULTS"]


# ----------------------------------------------------------------------------------------- result
@dataclass
class MissesResult(_JsonMixin):
    """What :func:`misses` found.

    Attributes
    ----------
    n_queries, n_misses : int
        Queries scored and those with hit@1 = 0.
    flags : DataFrame
        One row per flag: ``name, share, low, high, se, df, n_flagged, n_misses, n_documents, method,
        interval_flags`` (share of misses with the flag; CR2 clustered by the query's document).
    by_type : DataFrame
        One row per query ``doc_type``: ``doc_type, n_documents, n_queries, n_misses, hit_at_1, hit_low,
        hit_high`` (hit@1 within the type, CR2 over its documents, NaN with fewer than 2), ``share_of_misses,
        share_low, share_high`` (the type's part of all misses) and ``share_<flag>`` within the type's misses.
    by_type_flags : DataFrame
        ``doc_type, name, share, low, high, n_misses, n_documents``: each flag's share within each type.
    misses : DataFrame
        One row per miss: ``query-id, corpus-id, query_doc, retrieved_doc, query_type, retrieved_type,
        score, jaccard, boilerplate_share`` and one boolean per flag (``corpus-id`` is missing — null in
        JSON — for a query without run rows, scored 0 under ``on_missing="zero"``).
    tie_policy, level, cluster : recorded settings.
    definitions : dict
        Every threshold and rule used (also written to JSON).
    info : dict
        Counts and notices (queries without judgments, partial hits under ``tie_policy="expected"``...).
    """

    _json_indent: ClassVar[int] = 2

    n_queries: int
    n_misses: int
    flags: pd.DataFrame
    by_type: pd.DataFrame
    by_type_flags: pd.DataFrame
    misses: pd.DataFrame
    tie_policy: str
    level: float
    cluster: str
    definitions: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def flag_names(self) -> tuple[str, ...]:
        """The flags computed (a flag whose metadata the task lacks is left out, see ``info``)."""
        return tuple(self.flags["name"])

    def share(self, name: str) -> float:
        """Share of misses under flag ``name``."""
        row = self.flags[self.flags["name"] == name]
        if row.empty:
            raise RagcovError(f"no flag {name!r}; computed: {list(self.flag_names)}.")
        return float(row["share"].iloc[0])

    def to_frame(self) -> pd.DataFrame:
        """The misses table (one row per miss)."""
        return self.misses.copy()

    def to_dict(self) -> dict[str, Any]:
        return {"n_queries": self.n_queries, "n_misses": self.n_misses, "flags": self.flags,
                "by_type": self.by_type, "by_type_flags": self.by_type_flags, "misses": self.misses,
                "tie_policy": self.tie_policy, "level": self.level, "cluster": self.cluster,
                "definitions": self.definitions, "info": self.info}

    def summary(self) -> str:
        """The shares with intervals, the table by type, and the definitions, as text."""
        pct = f"{self.n_misses / self.n_queries:.1%}" if self.n_queries else "-"
        lines = [f"hit@1 misses: {self.n_misses:,} of {self.n_queries:,} queries ({pct}); tie policy "
                 f"{self.tie_policy}; top-1 with the query's own chunk excluded",
                 f"share of misses by flag ({self.level:.0%} CR2 intervals clustered by {self.cluster}"
                 f"{chosen_unit_words(self.cluster, self.info)}, "
                 f"{self.info.get('n_miss_documents', 0)} documents with misses):"]
        for r in self.flags.itertuples(index=False):
            flags = [m for m in (r.interval_flags, "clipped" if getattr(r, "clipped", False) else "") if m]
            note = f"  [{','.join(flags)}]" if flags else ""
            lo, hi = getattr(r, "low_bounded", r.low), getattr(r, "high_bounded", r.high)
            lines.append(f"  {r.name:<15} {_num(r.share)} [{_num(lo)}, {_num(hi)}]{_check_text(r)}  "
                         f"({r.n_flagged} of {r.n_misses}){note}")
        if len(self.by_type):
            show = self.by_type[["doc_type", "n_documents", "n_queries", "n_misses", "hit_at_1", "hit_low",
                                 "hit_high", "share_of_misses"]
                                + [f"share_{f}" for f in self.flag_names if f"share_{f}" in self.by_type]]
            show = show.rename(columns={f"share_{f}": f for f in self.flag_names})
            if "hit_low_bounded" in self.by_type:  # printed in bounds (raw endpoints in the JSON)
                show["hit_low"], show["hit_high"] = self.by_type["hit_low_bounded"], self.by_type["hit_high_bounded"]
            if "hit_verified" in self.by_type:  # the hit@1 interval's check, marked as everywhere
                show.insert(show.columns.get_loc("hit_high") + 1, "check",
                            [marks.mark(_prefixed(r, "hit_")) for r in self.by_type.to_dict(orient="records")])
            lines.append("by doc_type (hit@1 with CR2 over the type's documents; flag shares within its misses):")
            lines.append(show.to_string(index=False, na_rep="-", float_format=lambda x: f"{x:.3f}"))
        lines.extend(_check_notes(self))
        lines.append("definitions: " + "; ".join(f"{k}: {v}" for k, v in self.definitions.items()
                                                  if k in FLAG_NAMES))
        lines.extend(f"note: {n}" for n in self.info.get("notices", []))
        return "\n".join(lines)

    def __repr__(self) -> str:
        shares = ", ".join(f"{r.name}={_fmt(r.share, 3)}" for r in self.flags.itertuples(index=False))
        return (f"MissesResult(n_queries={self.n_queries}, n_misses={self.n_misses}, tie_policy="
                f"{self.tie_policy!r}, {shares})")


def _check_text(r: Any) -> str:
    """`` *`` / `` ‡`` beside an interval by its check's status (:mod:`ragcov_data.eval.estimates.marks`)."""
    m = marks.mark(r._asdict() if hasattr(r, "_asdict") else r)
    return f" {m}" if m else ""


def _prefixed(row: Any, pre: str) -> dict[str, Any]:
    """A by-type record's ``hit_`` or ``share_`` check fields, without the prefix (a row :mod:`.marks` reads)."""
    return {k[len(pre):]: v for k, v in dict(row).items() if k.startswith(pre)}


def _check_notes(res: "MissesResult") -> list[str]:
    """Footnotes on the checks and bounds of every interval printed (flags, by type): each mark in its words."""
    out = marks.footnotes(((str(r["name"]), r) for r in res.flags.to_dict(orient="records")), res.level)
    bt = res.by_type
    if len(bt) and "hit_verified" in bt:
        for pre, what in (("hit_", "hit@1"), ("share_", "share of misses")):
            out += marks.footnotes(((f"{r['doc_type']} {what}", _prefixed(r, pre))
                                    for r in bt.to_dict(orient="records")), res.level)
        flat = [str(r.doc_type) for r in bt.itertuples(index=False) if "zero_variance" in str(r.hit_interval_flags)]
        if flat:
            out.append("no variation between documents (zero_variance: the hit@1 interval is the point): "
                       + ", ".join(flat) + ".")
    btf = res.by_type_flags
    said = [marks.status_of(r) for r in btf.to_dict(orient="records")] if len(btf) else []
    for st in ("not_verified", "unverifiable"):  # counted, not listed: every row is in the JSON with its mark
        if st in said:
            out.append(f"{marks.MARKS[st]} {marks.LABELS[st]}: {said.count(st)} of the {len(btf)} flag-within-type "
                       "intervals (by_type_flags in the JSON: verified_status, verified_reason, mark).")
    clipped = bool(res.flags.get("clipped", pd.Series(dtype=bool)).any()) or \
        any(bool(bt.get(c, pd.Series(dtype=bool)).any()) for c in ("hit_clipped", "share_clipped"))
    if clipped:
        out.append("intervals are cut to [0, 1] (flag clipped; raw endpoints low, high in the JSON).")
    out.append("each interval's check (verified_coverage, verified_mc_se, verified, verified_status in the JSON): "
               "the measured coverage of CR2 micro at its design (its documents resampled).")
    return out


def _num(x: float) -> str:
    return "-" if x is None or not math.isfinite(float(x)) else f"{x:.3f}"


# ----------------------------------------------------------------------------------------- inputs
def _frames(task: Any, cluster: str | None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    frames = load_task_frames(task, [c for c in (cluster, *DEFAULT_CLUSTERS) if c])
    queries, qrels = frames["queries"], frames["qrels"]
    corpus = _split_frame(task, "corpus", ["_id", "text", "doc_id", "chunk_index", *_META, "in_force", "status",
                                           "units_not_in_force", "share_not_in_force"])
    if corpus is None:
        raise RagcovError("`task` has no 'corpus' split; the miss analysis compares chunk texts, so it needs the "
                          "corpus (`_id`, `text`, `doc_id`).")
    missing = [f"queries.{c}" for c in ("doc_id", "chunk_id") if c not in queries.columns]
    missing += [f"corpus.{c}" for c in ("_id", "text", "doc_id") if c not in corpus.columns]
    if missing:
        raise RagcovError(f"the miss analysis needs a chunked self-retrieval task; the task lacks {missing} "
                          "(build one with ragcov_data.build_task or load_dataset('aneel_taesa')).")
    corpus = corpus.assign(_id=corpus["_id"].astype(str), doc_id=corpus["doc_id"].astype(str))
    if corpus["_id"].duplicated().any():
        dup = corpus["_id"][corpus["_id"].duplicated()].iloc[0]
        raise RagcovError(f"the task's corpus lists chunk {dup!r} more than once; each `_id` must be unique.")
    return queries, qrels, corpus


def _top1(run: pd.DataFrame, qrels: pd.DataFrame, qids: np.ndarray, tie_policy: str,
          relevance_threshold: float = 1) -> pd.DataFrame:
    """The first row of each query under the tie policy's order, as the metrics order it
    (``expected`` averages over tied orders; its representative top-1 is the trec_eval one)."""
    index = pd.Index(qids)
    r = pd.DataFrame({"qidx": index.get_indexer(run["query-id"].astype(str).to_numpy(dtype=object)),
                      "corpus-id": run["corpus-id"].astype(str).to_numpy()})
    has_rank = "rank" in run.columns
    if has_rank:
        r["rank"] = pd.to_numeric(run["rank"]).to_numpy(dtype=float)
    r["score"] = (pd.to_numeric(run["score"]).to_numpy(dtype=float) if "score" in run.columns
                  else -r["rank"].to_numpy(dtype=float))
    r = r[r["qidx"].to_numpy() >= 0]
    if tie_policy in ("pessimistic", "optimistic"):  # their order within a tie depends on the grades
        q = pd.DataFrame({"qidx": index.get_indexer(qrels["query-id"].astype(str).to_numpy(dtype=object)),
                          "corpus-id": qrels["corpus-id"].astype(str).to_numpy(),
                          "grade": pd.to_numeric(qrels["score"]).to_numpy(dtype=float)})
        r = r.merge(q[q["qidx"] >= 0], on=["qidx", "corpus-id"], how="left")
        r["rel"] = r["grade"].fillna(-np.inf) >= relevance_threshold
    policy = "trec_eval" if tie_policy == "expected" else tie_policy
    top = _order(r, policy, has_rank).drop_duplicates("qidx")
    return top[["qidx", "corpus-id", "score"]]


# ----------------------------------------------------------------------------------------- intervals
def _shares(indicators: np.ndarray, clusters: np.ndarray, level: float) -> dict[str, np.ndarray]:
    """CR2 micro share of each row of ``indicators`` (R, M) clustered by ``clusters`` (M,)."""
    codes, labels = pd.factorize(pd.Series(clusters), sort=False)
    K = len(labels)
    n = np.bincount(codes, minlength=K).astype(float)
    s = np.stack([np.bincount(codes, weights=row.astype(float), minlength=K) for row in indicators]) \
        if len(indicators) else np.zeros((0, K))
    R = s.shape[0]
    if R == 0 or K == 0:
        nan = np.full(R, np.nan)
        return {"estimate": nan, "se": nan, "df": nan, "low": nan, "high": nan, "flags": np.zeros(R, np.int64)}
    # 0/1 values: the sum of squares equals the sum
    return _kernels.interval_batch(np.broadcast_to(n, (R, K)), s, s, estimator="micro", method="cr2", level=level)


def _checks(indicators: np.ndarray, clusters: np.ndarray, level: float, seed: int | None) -> list[dict[str, Any]]:
    """Each share's check at its design (:mod:`.verify`): the measured coverage of micro CR2 on the 0/1 values
    of its row of ``indicators`` clustered by ``clusters`` (census design: documents drawn with replacement).

    Returns one ``{"verified_coverage", "verified_mc_se", "verified"}`` per row; empty (NaN, None) under two
    clusters or with no values, where there is no interval to check."""
    out = []
    n_clusters = len(pd.unique(pd.Series(clusters))) if len(clusters) else 0
    for row in indicators:
        rec = {"verified_coverage": np.nan, "verified_mc_se": np.nan, "verified": None}
        if n_clusters >= 2:
            r = verify_design(design_of(np.asarray(row, float), clusters, level=level, seed=seed),
                              [("micro", "cr2")]).get("micro/cr2")
            if r is not None:
                rec = {k: r[k] for k in ("verified_coverage", "verified_mc_se", "verified")}
                rec["verified_status"] = r.get("verified_status")
                rec["verified_reason"] = r.get("verified_reason", "")
        out.append(rec)
    return out


def _bounded(low: Any, high: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``low``/``high`` cut to [0, 1] and whether an endpoint moved (:mod:`._bounds`: a share lies in [0, 1])."""
    t = clip_table(pd.DataFrame({"low": np.asarray(low, float), "high": np.asarray(high, float)}), (0.0, 1.0))
    if t.empty:
        return np.zeros(0), np.zeros(0), np.zeros(0, bool)
    return t["low_bounded"].to_numpy(), t["high_bounded"].to_numpy(), t["clipped"].to_numpy(bool)


def _flag_text(bits: int) -> str:
    return ",".join(_kernels.decode_flags(int(bits)))


# ----------------------------------------------------------------------------------------- misses
def misses(run: Any, task: Any, *, tie_policy: str = DEFAULT_TIE_POLICY, cluster: str | None = None,
           level: float = 0.95, exclude_self: bool = True, on_missing: str = "error",
           near_duplicate: float = DEFAULTS["near_duplicate"],
           boilerplate_doc_share: float = DEFAULTS["boilerplate_doc_share"],
           boilerplate_min_docs: int = DEFAULTS["boilerplate_min_docs"],
           boilerplate_share: float = DEFAULTS["boilerplate_share"],
           edition_overlap: float = DEFAULTS["edition_overlap"]) -> MissesResult:
    """Flag every hit@1 miss of ``run`` on a chunked self-retrieval ``task`` and estimate where misses go.

    Parameters
    ----------
    run : path, DataFrame or dict
        Anything :func:`ragcov_data.runs.load_run` reads.
    task : DatasetDict or dict of DataFrames
        ``corpus`` (``_id, text, doc_id`` and ideally ``chunk_index, doc_type, issuer, date``), ``queries``
        (``_id, doc_id, chunk_id``) and ``qrels``.
    tie_policy : str, default: "trec_eval"
        As in :func:`ragcov_data.eval.evaluate`. The top-1 is the first candidate in the policy's order;
        under ``"expected"`` a miss is a query with expected hit@1 = 0 (no relevant candidate among those
        tied at the top; partial credit is not a miss, counted in ``info["n_partial"]``).
    cluster : str, optional
        Queries column of the unit whose misses move together; default as ``evaluate`` (``doc_id`` here).
    level : float, default: 0.95
    exclude_self : bool, default: True
        Drop run rows retrieving the query's own chunk first (as ``evaluate``).
    on_missing : {"error", "zero"}, default: "error"
        Task queries without run rows: an error, or misses with no retrieved chunk (every flag False).
    near_duplicate : float, default: 0.5
        Jaccard threshold of the ``near_duplicate`` flag.
    boilerplate_doc_share, boilerplate_min_docs, boilerplate_share : default 0.03, 5, 0.5
        A 5-gram is common when found in ``>= max(boilerplate_min_docs, ceil(boilerplate_doc_share *
        documents))`` documents; a retrieved chunk is ``boilerplate`` when at least ``boilerplate_share``
        of its distinct 5-grams are common.
    edition_overlap : float, default: 0.5
        Jaccard of two documents' 5-gram sets from which a same-series document is ``other_edition``.

    Returns
    -------
    MissesResult
        ``n_queries``, ``n_misses``, ``flags``, ``by_type``, ``by_type_flags``, ``misses``.

    Raises
    ------
    RagcovError
        A task without corpus texts or chunk ids, a run naming documents outside the corpus, queries
        missing from the run (unless ``on_missing="zero"``), bad thresholds, plus everything
        :func:`~ragcov_data.eval.outcomes.metrics.per_query` rejects.
    """
    tie_policy = check_tie_policy(tie_policy)
    check_level(level)
    _check_shares(near_duplicate, boilerplate_doc_share, boilerplate_share, edition_overlap)
    if not (isinstance(boilerplate_min_docs, (int, np.integer)) and boilerplate_min_docs >= 1):
        raise RagcovError(f"`boilerplate_min_docs` must be an integer >= 1; got {boilerplate_min_docs!r}.")
    check_outcome_args(on_missing, tie_policy, single=True)  # the outcome stage's one check of on_missing
    _, _, corpus = _frames(task, cluster)  # the chunk texts and metadata; checks the task is self-retrieval
    name, said, scored_missing = None, [], on_missing
    if is_passage_run(run):  # a pipeline's text: read through the chunks its passages lie in
        run, name, said = _passage_chunks(run, task, on_missing)
        scored_missing = "zero"  # a question left with no passage has no retrieved chunk: a miss no flag describes
    # the outcome stage, as evaluate scores hit@1: sample, unjudged queries, own chunk, missing queries, ties
    oc = outcomes(run, task, "hit@1", name=name, tie_policy=tie_policy, on_missing=scored_missing, cluster=cluster,
                  exclude_self=exclude_self)
    notices = said + list(oc.notices)
    qids = oc.per_query["query-id"].to_numpy()
    top = _top1(oc.run, oc.qrels, qids, tie_policy)
    w = _flags.locate(corpus, oc.queries, qids, oc.values == 0, top)  # who is who: positions, documents
    jac, bshare, min_docs = _flags.ngram_flags(corpus, w, boilerplate_min_docs, boilerplate_doc_share)
    values, available, cols = _flags.flag_values(task, corpus, w, jac, bshare, near_duplicate=near_duplicate,
                                                 boilerplate_share=boilerplate_share,
                                                 edition_overlap=edition_overlap, notices=notices)
    table = _flags.miss_table(w, values, available, cols, jac, bshare, oc.clusters)
    flags, by_type, by_type_flags, n_zeroed = _share_tables(oc, w, values, available, level, notices)
    definitions = _definitions(oc.cluster, level, near_duplicate, boilerplate_doc_share, boilerplate_min_docs,
                               boilerplate_share, edition_overlap, min_docs, len(w.docs))
    info = _info(oc, w, on_missing, n_zeroed, notices)
    return MissesResult(n_queries=len(qids), n_misses=len(w.mq), flags=flags, by_type=by_type,
                        by_type_flags=by_type_flags, misses=table, tie_policy=tie_policy, level=level,
                        cluster=oc.cluster, definitions=definitions, info=info)


def _passage_chunks(run: Any, task: Any, on_missing: str) -> tuple[pd.DataFrame, str, list[str]]:
    """A passage run as the run of the task's chunks its passages lie in
    (:func:`ragcov_data.eval.outcomes.passages.chunk_run`), its name and what to say; questions it has no answer
    for are refused under ``on_missing="error"``, as by every verb."""
    df = load_run(run)
    name = run_name(run)
    located = locate_run(df, task, name)
    label = run_label(name, df.attrs)
    answered = set(located.frame["query-id"]) | set(located.report["failures"]) | set(located.report["empty"])
    task_ids = _split_frame(task, "queries", ["_id"])["_id"].astype(str).tolist()
    lacking = [q for q in task_ids if q not in answered]
    if lacking and on_missing == "error":
        raise missing_answers_error(name, df.attrs, lacking, len(task_ids))
    said = [location_notice(label, located.report),
            f"{label}: a passage run, read through the task's chunks: {CHUNK_RULE}; the flags compare that chunk with "
            "the query's own chunk."]
    return chunk_run(located, task), label, said


def _check_shares(near_duplicate: Any, boilerplate_doc_share: Any, boilerplate_share: Any, edition_overlap: Any
                  ) -> None:
    """One clear error for the first threshold of :func:`misses` that is not a share in (0, 1]."""
    for name, value in (("near_duplicate", near_duplicate), ("boilerplate_doc_share", boilerplate_doc_share),
                        ("boilerplate_share", boilerplate_share), ("edition_overlap", edition_overlap)):
        if not (isinstance(value, (int, float)) and 0 < value <= 1):
            raise RagcovError(f"`{name}` must be a share in (0, 1]; got {value!r}.")


def _share_tables(oc: Any, w: _flags.Located, values: dict[str, np.ndarray], available: list[str], level: float,
                  notices: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, int]:
    """The flags' shares of the misses with CR2 intervals and checks, the tables by doc_type, and the misses
    left out of the shares (queries the run lacked; a notice says so)."""
    mq, clusters = w.mq, oc.clusters
    zeroed = oc.missing  # queries the run lacked: no retrieved chunk, so no flag can describe them
    # a query the run lacked (scored 0) is a miss with no retrieved chunk: no flag can describe it, so it
    # is left out of every share (counted in info["n_zeroed_excluded"]) instead of diluting them
    rated = ~zeroed[mq]
    n_zeroed = int((~rated).sum())
    if n_zeroed:
        notices.append(f"{n_zeroed} of the {len(mq)} misses are queries run {oc.name!r} lacked (scored 0): they have "
                       f"no retrieved chunk, so they are left out of the shares (over the other {int(rated.sum())}).")
    ind = np.stack([values[f][rated] for f in available]) if available else np.zeros((0, int(rated.sum())), bool)
    sh = _shares(ind, clusters[mq][rated], level)
    flags = pd.DataFrame({
        "name": available, "share": sh["estimate"], "low": sh["low"], "high": sh["high"], "se": sh["se"],
        "df": sh["df"], "n_flagged": ind.sum(1).astype(int), "n_misses": int(rated.sum()),
        "n_documents": len(pd.unique(clusters[mq][rated])), "method": "cr2",
        "interval_flags": [_flag_text(b) for b in sh["flags"]],
    })
    flags = _finish(flags, ind, clusters[mq][rated], level, 0)  # the check's seed: fixed, reproducible
    by_type, by_type_flags = _by_type(oc.queries, oc.values, (oc.values == 0) & ~zeroed, clusters, w.q_doc, w.docs,
                                      ind, available, level, 0)
    return flags, by_type, by_type_flags, n_zeroed


def _definitions(cluster_name: str, level: float, near_duplicate: float, boilerplate_doc_share: float,
                 boilerplate_min_docs: int, boilerplate_share: float, edition_overlap: float, min_docs: int,
                 n_docs: int) -> dict[str, Any]:
    """Every rule and threshold of the analysis, in words and numbers (written to the result's JSON)."""
    return {
        "miss": "hit@1 = 0 under the tie policy, the query's own chunk excluded (as evaluate scores it)",
        "same_type": "the retrieved chunk's document has the query document's doc_type (both known)",
        "same_issuer": "the retrieved chunk's document has the query document's issuer (both known)",
        "near_duplicate": f"Jaccard of the word {DEFAULTS['ngram']}-gram sets (casefolded whitespace words) of "
                          f"the query's own chunk and the retrieved chunk >= {near_duplicate:g}",
        "boilerplate": f"at least {boilerplate_share:.0%} of the retrieved chunk's distinct {DEFAULTS['ngram']}-grams "
                       f"occur in >= {min_docs} of the corpus's {n_docs} documents (max({boilerplate_min_docs}, "
                       f"ceil({boilerplate_doc_share:g} x documents)))",
        "other_edition": "same doc_type, issuer not different, equal heading pattern (act type + number pattern, "
                         "numbers and dates masked), another heading text or another date, and the two documents' "
                         f"word {DEFAULTS['ngram']}-gram sets overlap with Jaccard >= {edition_overlap:g}",
        "contains_query": "the query's casefolded whitespace words occur in order and contiguous in the retrieved "
                          "chunk",
        "retrieved_not_in_force": "the retrieved chunk is superseded wording (corpus in_force false: every "
                                  "unit it holds is out of force) or its document states it is revoked or "
                                  "suspended (corpus status, else ragcov_data.legal.vigencia.document_status of its "
                                  "text); the table's retrieved_units_not_in_force names the out-of-force "
                                  "units the retrieved chunk holds, retrieved_share_not_in_force the share of "
                                  "its words they hold",
        "cites": "the retrieved document cites the query document's act (heading type, number, year), or the "
                 "query document cites the retrieved act",
        "issuer": "a voto, decisão or nota técnica without issuer gets the one its heading (ANEEL process 48500.) "
                  "or signature (Diretor, Superintendente) shows",
        "edition_overlap": edition_overlap,
        "interval": f"CR2 (micro: a ratio over {cluster_name}), Satterthwaite df, level {level:g}",
        "ngram": DEFAULTS["ngram"], "near_duplicate_threshold": near_duplicate,
        "boilerplate_doc_share": boilerplate_doc_share, "boilerplate_min_docs": int(boilerplate_min_docs),
        "boilerplate_common_docs": min_docs, "boilerplate_share": boilerplate_share,
    }


def _info(oc: Any, w: _flags.Located, on_missing: str, n_zeroed: int, notices: list[str]) -> dict[str, Any]:
    """Counts and notices of the analysis (``MissesResult.info``)."""
    mq, clusters = w.mq, oc.clusters
    rated = ~oc.missing[mq]
    n_partial = int(((oc.values > 0) & (oc.values < 1)).sum())  # only under tie_policy="expected"
    return {"n_documents": len(w.docs), "n_query_documents": int(len(pd.unique(clusters))),
            "n_miss_documents": int(len(pd.unique(clusters[mq][rated]))), "n_no_run": oc.n_missing,
            "on_missing": on_missing,
            "n_self_rows_removed": oc.info["n_self_rows_removed"],
            "n_unjudged_queries": oc.info["n_unjudged_queries"],
            "n_partial": n_partial, "n_zeroed_excluded": n_zeroed, "missing_queries": oc.info["missing_queries"],
            "top_tie_share": oc.info["top_tie_share"], "all_tied_share": oc.info["all_tied_share"],
            "notices": notices, **{k: oc.info[k] for k in ("population_clusters", "sample", "task_cluster")
                                   if k in oc.info}}


def _finish(table: pd.DataFrame, indicators: np.ndarray, clusters: np.ndarray, level: float,
            seed: int | None) -> pd.DataFrame:
    """A share table (``share, low, high`` per row of ``indicators``) with its checks and bounds: the three
    ``verified_*`` fields, ``low_bounded``/``high_bounded`` (cut to [0, 1]) and ``clipped``."""
    out = table.copy()
    checks = _checks(indicators, clusters, level, seed)
    for k in ("verified_coverage", "verified_mc_se"):
        out[k] = [c[k] for c in checks] if len(out) else pd.Series(dtype=float)
    out["verified"] = pd.Series([c["verified"] for c in checks], index=out.index, dtype=object)
    out["verified_status"] = pd.Series([c.get("verified_status") for c in checks], index=out.index, dtype=object)
    out["verified_reason"] = [c.get("verified_reason", "") for c in checks] if len(out) else pd.Series(dtype=object)
    out["mark"] = [marks.mark(c) for c in checks] if len(out) else pd.Series(dtype=object)
    out["low_bounded"], out["high_bounded"], out["clipped"] = _bounded(out["low"], out["high"])
    return out


def _by_type(queries: pd.DataFrame, values: np.ndarray, is_miss: np.ndarray, clusters: np.ndarray,
             q_doc: np.ndarray, docs: pd.DataFrame, ind: np.ndarray, flag_names: Sequence[str],
             level: float, seed: int | None = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per query doc_type: hit@1 with CR2 over its documents, its share of all misses, flag shares."""
    if "doc_type" not in docs.columns:
        return pd.DataFrame(), pd.DataFrame()
    qtype = np.array([str(t) if t is not None else "unknown" for t in docs["doc_type"].reindex(q_doc)],
                     dtype=object)
    mq = np.flatnonzero(is_miss)
    mtype = qtype[mq]
    types = sorted(pd.unique(qtype))
    type_ind = np.stack([mtype == t for t in types]) if len(mq) else None
    share_all = _shares(type_ind, clusters[mq], level) if len(mq) else None
    share_chk = _checks(type_ind, clusters[mq], level, seed) if len(mq) else None
    rows, frows = [], []
    for i, t in enumerate(types):
        sel = qtype == t
        hit = _shares(values[sel][None, :], clusters[sel], level)
        hit_chk = _checks(values[sel][None, :], clusters[sel], level, seed)[0]
        msel = mtype == t
        row = {"doc_type": t, "n_documents": int(len(pd.unique(clusters[sel]))), "n_queries": int(sel.sum()),
               "n_misses": int(msel.sum()), "hit_at_1": float(hit["estimate"][0]), "hit_low": float(hit["low"][0]),
               "hit_high": float(hit["high"][0]),
               "share_of_misses": float(share_all["estimate"][i]) if share_all else np.nan,
               "share_low": float(share_all["low"][i]) if share_all else np.nan,
               "share_high": float(share_all["high"][i]) if share_all else np.nan,
               "hit_interval_flags": _flag_text(hit["flags"][0]),
               "share_interval_flags": _flag_text(share_all["flags"][i]) if share_all else ""}
        # each of the row's two intervals with its check; the row's own fields are the weaker of the two
        share_c = share_chk[i] if share_chk else {"verified_coverage": np.nan, "verified_mc_se": np.nan,
                                                  "verified": None}
        for pre, c in (("hit_", hit_chk), ("share_", share_c)):
            row.update({pre + k: v for k, v in c.items()})
        row.update(_weaker(hit_chk, share_c))
        for pre in ("hit_", "share_"):
            lo, hi, cl = _bounded([row[pre + "low"]], [row[pre + "high"]])
            row[pre + "low_bounded"], row[pre + "high_bounded"], row[pre + "clipped"] = \
                float(lo[0]), float(hi[0]), bool(cl[0])
        if msel.any():
            fs = _shares(ind[:, msel], clusters[mq][msel], level)
        for j, f in enumerate(flag_names):
            row[f"share_{f}"] = float(fs["estimate"][j]) if msel.any() else np.nan
            frows.append({"doc_type": t, "name": f, "share": row[f"share_{f}"],
                          "low": float(fs["low"][j]) if msel.any() else np.nan,
                          "high": float(fs["high"][j]) if msel.any() else np.nan,
                          "n_misses": int(msel.sum()),
                          "n_documents": int(len(pd.unique(clusters[mq][msel]))),
                          "interval_flags": _flag_text(fs["flags"][j]) if msel.any() else ""})
        rows.append(row)
    by_type_flags = pd.DataFrame(frows)
    if len(by_type_flags):  # each flag-within-type share checked at its own design
        by_type_flags = _finish_rows(by_type_flags, ind, mtype, clusters[mq], level, seed)
    by_type = pd.DataFrame(rows).sort_values(["n_misses", "doc_type"], ascending=[False, True], kind="stable")
    return by_type.reset_index(drop=True), by_type_flags


def _weaker(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The check of a record holding two intervals: the one with the lower coverage (a missing check
    makes the record's ``verified`` None unless the other one failed)."""
    have = [c for c in (a, b) if c["verified"] is not None]
    if not have:
        return {"verified_coverage": np.nan, "verified_mc_se": np.nan, "verified": None, "verified_status": None}
    w = min(have, key=lambda c: c["verified_coverage"])
    ok = False if any(c["verified"] is False for c in have) else (True if len(have) == 2 else None)
    st = [marks.status_of(c) for c in have]  # shown short beats cannot vouch beats verified
    status = next((x for x in ("not_verified", "unverifiable") if x in st), "verified" if ok else None)
    return {"verified_coverage": w["verified_coverage"], "verified_mc_se": w["verified_mc_se"], "verified": ok,
            "verified_status": status}


def _finish_rows(table: pd.DataFrame, ind: np.ndarray, mtype: np.ndarray, clusters: np.ndarray, level: float,
                 seed: int | None) -> pd.DataFrame:
    """``by_type_flags`` finished as the flags table: each (type, flag) share checked on the type's misses."""
    parts = []
    for t, sub in table.groupby("doc_type", sort=False):
        msel = mtype == t
        names = list(sub["name"])
        rows = ind[:, msel] if msel.any() else np.zeros((len(names), 0))
        parts.append(_finish(sub, rows[: len(names)], clusters[msel], level, seed))
    return pd.concat(parts).loc[table.index]
