"""Cited questions: per-question metrics of cited provisions, and chunkings x retrievers as one family.

A cited-questions task (:mod:`ragcov_data.loaders.cited_questions`) asks the same questions under every
chunking, so chunkings and retrievers are compared *paired by question*. What changes between chunkings
is the corpus and therefore the qrels; what stays is the question and the provisions its answer cites.
So each (chunking, retriever) run is scored per question against its own chunking's qrels, and the
per-question values of every system go into one value table that the leaderboard's family machinery
(:func:`leaderboard_from_values`) ranks: simultaneous pair intervals with their own adjusted p-values, ranks, tiers.

Metrics (per question; :func:`per_query_values`)
-----------------------------------------------
- ``span_recall@Bw``, the headline: the share of the cited provisions' text (non-space characters) inside a
  context of ``B`` words (:mod:`ragcov_data.eval.outcomes.budget`): every chunking gets the same number of
  words, so this, not ``recall@k``, says which cut brings the cited provision to a model.
  :func:`cited_chunking_study` ranks one family per budget (default 500, 1,000 and 2,000 words) on it, and one
  on ``recall@Bw``, the touch reading (some character of the provision in the context), which more, shorter
  chunks win whatever they carry (:mod:`ragcov_data.eval.comparisons.text_share`); ``precision@Bw``,
  ``iou@Bw``, ``hit@Bw`` and the coverage curve ``covered_any/50/90/whole@Bw`` are recorded too.
- ``recall@k``: the share of the question's cited provisions that a chunk in the top ``k`` overlaps
  (provision-level recall: a provision split over five windows counts once, found when any of them
  is retrieved). Across chunkings it compares unequal contexts: ten whole artigos are many more words
  than ten 50-word windows. At ``granularity="article"`` the
  provisions are the cited artigos; at ``"dispositivo"`` the cited dispositivos themselves (the
  artigo for an artigo cited alone; a dispositivo not found in the text is left out, and listed by the
  task).
- ``hit@k``: 1 if any cited provision is overlapped in the top ``k``.
- ``ndcg@k``: trec_eval's nDCG (linear gain) on the chunk qrels of the granularity (dispositivo: grade 2
  for chunks overlapping the cited dispositivo, 1 for the rest of its artigo; article: 1), computed by
  :func:`ragcov_data.eval.outcomes.metrics.per_query`. Caveat: a provision split over many small chunks has
  many relevant chunks, so its ideal DCG is larger; nDCG rewards retrieving all of them, recall@k does
  not.

Ties in a run are broken as trec_eval does (score descending, then document id descending).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.execution.engine import run_task
from ragcov_data.errors import RagcovError

from ragcov_data.eval.comparisons.leaderboard import (FAMILY, JUDGED_THRESHOLD, LeaderboardResult, PAIR_COLUMNS,
                                                      SYSTEM_COLUMNS, _one_group)
from ragcov_data.eval.comparisons.verify_family import check_leaderboard
from ragcov_data.eval.estimates import marks
from ragcov_data.eval.estimates._kernels import check_resamples
from ragcov_data.eval.estimates.design import design_effect
from ragcov_data.eval.estimates.results import _JsonMixin
from ragcov_data.eval.outcomes.align import align
from ragcov_data.eval.outcomes.budget import (CONTEXT_NOTE, cited_provisions, cited_values, context_size,
                                              parse_cited_metric)
from ragcov_data.eval.outcomes.metrics import per_query
from ragcov_data.eval.outcomes.passages import (cited_passage_values, cited_placements, passage_notices,
                                                placement_notices)
from ragcov_data.eval.outcomes.prepare import prepare_task
from ragcov_data.eval.comparisons.text_share import (MEASURE_NOTES, budget_answer, curve_lines, disagreement,
                                                      family_metric, text_share_curve, winners)
from ragcov_data.eval.outcomes.table import default_cluster
from ragcov_data.eval.outcomes.score import score_run
from ragcov_data.eval.outcomes.table import run_name
from ragcov_data.runs import load_run
from ragcov_data.ties import DEFAULT_TIE_POLICY

__all__ = ["per_query_values", "granularity_qrels", "leaderboard_from_values", "cited_chunking_study",
           "CitedChunkingResult", "budget_answer", "DEFAULT_BUDGETS", "topic_of", "task_unit", "METRIC_NAMES"]

METRIC_NAMES = ("recall", "hit", "ndcg", "span_recall", "precision", "iou")
#: Units of inference of :func:`cited_chunking_study` (None: the task's own, :func:`task_unit`; ``"auto"`` says the
#: same, kept for earlier scripts).
CLUSTERS = ("auto", "query", "topic", "exam", "article")
#: Context budgets (words) of the chunking family.
DEFAULT_BUDGETS = (500, 1000, 2000)
GRANULARITIES = ("dispositivo", "article")


def topic_of(summary: Any) -> str | None:
    """The topic of a question: its ``question_summary`` up to the first dash (``"DOENÇA GRAVE - ..."``)."""
    # local: the cited-questions loader imports `datasets`, which importing the comparisons stage does not need
    from ragcov_data.loaders.cited_questions import topic_of as _topic

    return _topic(summary)


def _frame(task: Any, split: str) -> pd.DataFrame:
    obj = getattr(task, split, None) if not isinstance(task, Mapping) else task.get(split)
    if obj is None:
        raise RagcovError(f"the task has no {split!r} split; pass a cited-questions task "
                          "(ragcov_data.load_dataset('irpf', ...) or build_cited_task(...)).")
    return obj if isinstance(obj, pd.DataFrame) else obj.to_pandas()


def _documents(task: Any) -> pd.DataFrame | None:
    """The task's ``documents`` split (the acts' text), or None when it has none (the budget says what to do)."""
    try:
        return _frame(task, "documents")
    except RagcovError:
        return None


def _provisions(citations: pd.DataFrame, granularity: str) -> dict[str, list[tuple]]:
    """Per question: its distinct cited provisions at ``granularity`` (see :func:`cited_provisions`)."""
    return cited_provisions(citations, granularity)


def granularity_qrels(citations: pd.DataFrame, granularity: str = "dispositivo") -> pd.DataFrame:
    """Chunk qrels of ``granularity`` from a task's ``citations`` split (see the module docstring)."""
    if granularity not in GRANULARITIES:
        raise RagcovError(f"`granularity` must be one of {list(GRANULARITIES)}; got {granularity!r}.")
    grades: dict[tuple[str, str], int] = {}
    ok = citations[citations["status"].isin(["resolved", "dispositivo_not_found"])]
    for qid, status, chunks, art in zip(ok["query-id"], ok["status"], ok["chunks"], ok["article_chunks"]):
        for c in art:
            grades.setdefault((str(qid), str(c)), 1)
        if granularity == "dispositivo" and status == "resolved":
            for c in chunks:
                grades[(str(qid), str(c))] = 2
    return pd.DataFrame([(q, c, g) for (q, c), g in grades.items()], columns=["query-id", "corpus-id", "score"])


def per_query_values(run: Any, task: Any, *, metrics: Sequence[str] = ("recall@10", "ndcg@10", "hit@10"),
                     granularity: str = "dispositivo", query_ids: Sequence[str] | None = None,
                     on_missing: str = "zero") -> pd.DataFrame:
    """Per-question values of a run on a cited-questions task.

    Parameters
    ----------
    run : DataFrame or path
        ``query-id, corpus-id, score`` (and/or ``rank``); checked as every run of the outcome stage is
        (:func:`ragcov_data.eval.outcomes.score.score_run`): a run of another cut is refused.
    task : CitedTask or DatasetDict
        With ``queries`` and ``citations`` splits.
    metrics : sequence of str
        ``recall@k``, ``hit@k``, ``ndcg@k``, and within a budget of B words ``recall@Bw``,
        ``span_recall@Bw``, ``precision@Bw``, ``iou@Bw``, ``hit@Bw`` (see the module docstring; budgeted
        measures read the corpus's ``doc_id, start_char, end_char, text`` and the citations' spans).
    granularity : {"dispositivo", "article"}
    query_ids : sequence of str, optional
        Questions to score (default: every question with at least one resolved provision at
        ``granularity``).
    on_missing : {"zero", "error"}, default: "zero"
        A question the run has no rows for scores 0 (said in ``attrs["notices"]``), or is an error.

    Returns
    -------
    DataFrame
        Index ``query-id``, one column per metric; ``attrs["excluded"]`` lists the questions left out
        (no resolved provision), ``attrs["notices"]`` what the outcome stage said.
    """
    if granularity not in GRANULARITIES:
        raise RagcovError(f"`granularity` must be one of {list(GRANULARITIES)}; got {granularity!r}.")
    metrics = [str(parse_cited_metric(m)) for m in metrics]  # checked (and named) before any work
    queries = _frame(task, "queries")
    citations = _frame(task, "citations")
    prov = _provisions(citations, granularity)
    all_q = [str(q) for q in queries["_id"]]
    qids = [q for q in all_q if q in prov] if query_ids is None else [str(q) for q in query_ids]
    missing = [q for q in qids if q not in prov]
    if missing:
        raise RagcovError(f"`query_ids` holds {len(missing)} question(s) with no resolved provision at granularity "
                          f"{granularity!r} (first: {missing[:3]}); they cannot be scored.")
    table, located = _staged_run(run, task, metrics[0], citations, granularity, qids, on_missing)
    if located is not None:  # a pipeline's passages: read by their located spans
        out = cited_passage_values(located, citations, granularity, metrics, qids)
        out.attrs.update(passages=table.info.get("passages"), missing_queries=table.info["missing_queries"],
                         placements=cited_placements(located, citations, granularity, out))
    else:
        out = _id_run_values(table.run, task, citations, granularity, metrics, qids, prov)
    out.attrs["excluded"] = [q for q in all_q if q not in set(qids)]
    out.attrs["granularity"] = granularity
    out.attrs["notices"] = list(table.notices)
    return out


def _id_run_values(run: pd.DataFrame, task: Any, citations: pd.DataFrame, granularity: str, metrics: Sequence[str],
                   qids: Sequence[str], prov: Mapping[str, list[tuple]]) -> pd.DataFrame:
    """Per-question values of a run of ragcov's chunk ids (provision-level, budgeted and chunk nDCG)."""
    plain = [m for m in metrics if parse_cited_metric(m).name != "ndcg"]
    budgeted = any(parse_cited_metric(m).budget for m in plain)
    corpus = _frame(task, "corpus") if budgeted else None
    documents = _documents(task) if budgeted else None
    out = cited_values(run, citations, corpus, plain, query_ids=qids, granularity=granularity, provisions=prov,
                       documents=documents)
    attrs = dict(out.attrs)
    out = out.reindex(columns=list(dict.fromkeys(metrics)))
    for spec in (parse_cited_metric(m) for m in metrics):
        if spec.name == "ndcg":
            out[str(spec)] = _chunk_ndcg(run, citations, granularity, spec.k, qids)
    out.attrs = attrs
    return out


def _staged_run(run: Any, task: Any, metric: str, citations: pd.DataFrame, granularity: str, qids: Sequence[str],
                on_missing: str) -> tuple[Any, Any]:
    """The run read once and put through the outcome stage on the questions ``qids`` at ``granularity``
    (qrels: :func:`granularity_qrels`): the checks of every run (recorded task parameters, fingerprint and
    chunk ids, documents outside the corpus, the document sample), then the missing-question policy.
    Returns the run's outcome table (the run as scored, the stage's notices) and, for a passage run, its located
    passages."""
    df = load_run(run)
    prepared = prepare_task(task, metric, single=True, runs={"run": df}, query_ids=qids,
                            qrels=granularity_qrels(citations, granularity), granularity=granularity)
    scored = score_run(prepared, df, run_name(df))
    table = align(prepared, [scored], on_missing=on_missing).tables[scored.name]
    return table, scored.located


def _chunk_ndcg(run: pd.DataFrame, citations: pd.DataFrame, granularity: str, k: int,
                qids: Sequence[str]) -> np.ndarray:
    """trec_eval's nDCG@k on the chunk qrels of ``granularity`` (:func:`granularity_qrels`)."""
    return per_query(run, granularity_qrels(citations, granularity), f"ndcg@{k}", query_ids=qids,
                     tie_policy=DEFAULT_TIE_POLICY).to_numpy(dtype=float)


def leaderboard_from_values(values: pd.DataFrame, *, metric: str, clusters: Sequence[Any] | None = None,
                            cluster_name: str = "query", level: float = 0.95, n_resamples: int = 5000,
                            seed: int | None = 0, estimator: str = "micro") -> Any:
    """A leaderboard from a per-query value table (one column per system, same queries for all).

    The entry point of :func:`ragcov_data.eval.leaderboard` for values computed elsewhere (e.g. each
    system against its own qrels): the same family machinery (CR2/t per system, simultaneous pair
    intervals with their own adjusted p-values, ranks and tiers).

    Parameters
    ----------
    values : DataFrame
        Rows = queries (the index are their ids), columns = systems; no missing value.
    metric : str
        Name recorded in the result.
    clusters : sequence, optional
        Cluster of each query (default: each query its own cluster).

    Returns
    -------
    LeaderboardResult
    """
    if not isinstance(values, pd.DataFrame) or values.shape[1] < 2:
        raise RagcovError("`values` must be a DataFrame with one column per system (at least 2 systems).")
    if values.isna().any().any():
        bad = values.columns[values.isna().any()].tolist()
        raise RagcovError(f"`values` has missing values in {bad}; score every query under every system.")
    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise RagcovError(f"`level` must be in (0, 1); got {level!r}.")
    check_resamples(n_resamples, level, ("cluster_bootstrap",))
    V = values.to_numpy(dtype=float).T
    cl = np.asarray(values.index.astype(str)) if clusters is None else np.asarray(clusters, dtype=object)
    if len(cl) != V.shape[1]:
        raise RagcovError(f"`clusters` has {len(cl)} entries for {V.shape[1]} queries.")
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    names = [str(c) for c in values.columns]
    srows, prows, info = _one_group("__all__", V, cl, names, estimator, level, int(n_resamples), rng, None, None, {})
    # every interval's check at this design: per system (as evaluate), the family's FWER on null families
    check_said: list[str] = []

    systems, pairs = check_leaderboard(pd.DataFrame(srows, columns=SYSTEM_COLUMNS),
                                       pd.DataFrame(prows, columns=PAIR_COLUMNS), {"__all__": info}, V, cl, names,
                                       [("__all__", np.ones(V.shape[1], dtype=bool))], estimator=estimator,
                                       level=level, notices=check_said,
                                       unit=_UNIT_WORDS.get(cluster_name, cluster_name))
    return LeaderboardResult(
        systems=systems, pairs=pairs,
        metric=metric, level=level, cluster=cluster_name, n_clusters=info["n_clusters"], n_queries=int(V.shape[1]),
        family=dict(FAMILY), estimator=estimator, tie_policy="trec_eval", relevance_threshold=1, by=None,
        judged_k=None, judged_threshold=JUDGED_THRESHOLD, groups={"__all__": info},
        info={"n_resamples": int(n_resamples), "seed": seed, "on_missing": "error", "n_dropped": 0,
              "n_missing": {}, "self_retrieval": False,
              "notices": ["values computed per system against its own chunking's qrels (cited provisions)",
                          *check_said]})


@dataclass
class CitedChunkingResult(_JsonMixin):
    """Chunkings x retrievers on cited questions: one leaderboard a metric, paired by question.

    Attributes
    ----------
    leaderboards : dict of str to LeaderboardResult
        Keyed by metric (``recall@10``, ``ndcg@10``).
    values : DataFrame
        Per-question values: rows = questions, columns = ``(metric, system)``.
    resolution : DataFrame
        Per chunking: chunks, article-level citations in the corpus and resolved, unresolved.
    icc : dict
        ICC of the reference system's recall@k by topic (and by first cited artigo), with the decision.
    granularity, where, cluster : the design.
    """

    _json_indent: ClassVar[int] = 2

    leaderboards: dict[str, Any]
    values: pd.DataFrame
    resolution: pd.DataFrame
    icc: dict[str, Any]
    granularity: str
    where: str
    cluster: str
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        vals = self.values.copy()
        vals.columns = [f"{m}|{s}" for m, s in vals.columns]
        curve = self.text_share_curve()
        budgets = {}
        for b in self.budgets:  # the headline family (text share), with the touch reading's beside it
            budgets[str(b)] = {"words": b, **self._family_record(family_metric(b)), "answer": self.budget_answer(b),
                               "touched": {**self._family_record(family_metric(b, "touched")),
                                           "answer": self.touch_answer(b)},
                               "text_share_curve": curve[str(b)], "disagreement": self.disagreement(b)}
        return {"granularity": self.granularity, "where": self.where, "cluster": self.cluster,
                "leaderboards": {m: lb.to_dict() for m, lb in self.leaderboards.items()},
                "resolution": self.resolution, "icc": self.icc,
                "values": vals.reset_index(), "info": self.info,
                "budgets": budgets, "context": CONTEXT_NOTE, "measures": dict(MEASURE_NOTES),
                "headline": self.budget_answer() if self.budgets else None,
                "touched_headline": self.touch_answer() if self.budgets else None,
                "disagreement": self.disagreement() if self.budgets else None,
                "winners": {str(b): self.budget_answer(b)["chunking"] for b in self.budgets},
                "text_share_curve": curve,
                "unequal_context_metrics": [m for m in self.leaderboards if not parse_cited_metric(m).budget]}

    def _family_record(self, metric: str) -> dict[str, Any]:
        d = self.leaderboards[metric].to_dict()
        return {"metric": metric, "systems": d["systems"], "pairs": d["pairs"], "family_check": d["family_check"],
                "best_set": d["best_set"]}

    @property
    def budgets(self) -> list[int]:
        """The context budgets (words) ranked, in the order given."""
        return [int(b) for b in self.info.get("budgets", [])]

    def headline_budget(self) -> int | None:
        """The budget the headline names: 1,000 words when ranked, else the middle budget."""
        bs = self.budgets
        return None if not bs else (1000 if 1000 in bs else bs[(len(bs) - 1) // 2])

    def _budget_family(self, budget: int | None, reading: str) -> tuple[int, Any]:
        b = self.headline_budget() if budget is None else int(budget)
        if b is None or family_metric(b, reading) not in self.leaderboards:
            raise RagcovError(f"no family at {budget!r} words; ranked budgets: {self.budgets}.")
        return b, self.leaderboards[family_metric(b, reading)]

    def budget_answer(self, budget: int | None = None) -> dict[str, Any]:
        """The answer at ``budget`` words (default :meth:`headline_budget`): which system's context holds the most
        of the cited provisions' text (``span_recall@Bw``), and its difference with simultaneous interval against
        the best system of another chunking (the next cut)."""
        b, lb = self._budget_family(budget, "text_share")
        return budget_answer(lb, b)

    def touch_answer(self, budget: int | None = None) -> dict[str, Any]:
        """The touch reading at ``budget`` words: which system touches the most cited provisions (``recall@Bw``)."""
        b, lb = self._budget_family(budget, "touched")
        return budget_answer(lb, b)

    def disagreement(self, budget: int | None = None) -> dict[str, Any]:
        """Whether touch and text share name the same winning cut at ``budget`` words, with the sentence saying
        why when they do not (:func:`ragcov_data.eval.comparisons.text_share.disagreement`)."""
        b, text_lb = self._budget_family(budget, "text_share")
        return disagreement(text_lb, self._budget_family(b, "touched")[1], b, self.text_share_curve()[str(b)])

    def text_share_curve(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Per budget and system: text share, touched, the coverage curve (``any``, ``0.5``, ``0.9``, ``whole``)
        and the context's mean words and chunks (:func:`ragcov_data.eval.comparisons.text_share.text_share_curve`)."""
        return text_share_curve(self.values, self.budgets, self.info)

    def table(self) -> pd.DataFrame:
        """One row per system: estimate [low, high], rank and tier of every metric."""
        rows = {}
        for m, lb in self.leaderboards.items():
            s = lb.systems.set_index("name")
            for name, r in s.iterrows():
                row = rows.setdefault(name, {"system": name})
                row[m] = r["estimate"]
                row[f"{m} low"] = r["low"]
                row[f"{m} high"] = r["high"]
                row[f"{m} rank"] = f"{r['rank']} [{r['rank_low']}, {r['rank_high']}]"
                row[f"{m} tier"] = r["tier"]
                row[f"{m} verified"] = r.get("verified")
                row[f"{m} mark"] = marks.mark(r)  # the check's mark (eval/estimates/marks.py)
                spec = parse_cited_metric(m)
                if spec.budget:  # the words each context holds, on average: less than B when a system returns less
                    row[f"{m} words"] = (self.info.get("context_words") or {}).get(name, {}).get(spec.k)
        hb = self.headline_budget()
        first = family_metric(hb) if hb is not None else next(iter(self.leaderboards))
        return pd.DataFrame(list(rows.values())).sort_values(first, ascending=False).reset_index(drop=True)

    def to_markdown(self) -> str:
        t = self.table()
        mets = list(self.leaderboards)
        head = "| system | " + " | ".join(f"{_label(m)} [{self.leaderboards[m].level:.0%} CI] | rank | tier"
                                          for m in mets) + " |"
        lines = [head, "|" + "---|" * (1 + 3 * len(mets))]
        for _, r in t.iterrows():
            cells = [f"{r['system']}"]
            for m in mets:
                cells += [_cell(r, m) + _mark_text(r.get(f"{m} mark")), _or_dash(r.get(f"{m} rank")),
                          _or_dash(r.get(f"{m} tier"))]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines + [f"\n{x}" for x in self.footnotes()])

    def footnotes(self) -> list[str]:
        """What each mark of the table means for the rows carrying it, per metric (:mod:`.marks`)."""
        out = []
        for m, lb in self.leaderboards.items():
            rows = ((f"{r['name']} ({_label(m)})", r) for r in lb.systems[lb.systems["group"] == "__all__"]
                    .to_dict(orient="records"))
            out += marks.footnotes(rows, lb.level)
        return out

    def summary(self) -> str:
        lb0 = next(iter(self.leaderboards.values()))
        lines = self._answer_lines()
        lines.append(f"Cited questions: {lb0.n_queries} questions ({self.where}), granularity {self.granularity}, "
                     f"paired by question; unit of inference: {self.cluster} ({lb0.n_clusters} clusters).")
        if self.budgets:
            lines += [f"{MEASURE_NOTES['text_share']}; {MEASURE_NOTES['touched']}.", f"{CONTEXT_NOTE}."]
        unequal = [m for m in self.leaderboards if not parse_cited_metric(m).budget]
        if unequal:
            lines.append(f"{', '.join(unequal)}: k chunks of whatever size each chunking makes — UNEQUAL CONTEXTS "
                         "across chunkings, not the answer to which cut is better.")
        lines.append("Resolution per chunking:")
        lines += ["  " + x for x in self.resolution.to_string(index=False).splitlines()]
        lines.append(f"ICC: {self.icc.get('sentence', '')}")
        if self.budgets:
            lines += ["", *curve_lines(self.text_share_curve()[str(self.headline_budget())], self.headline_budget())]
        lines.append("")
        lines.append(self.table_text())
        for m, lb in self.leaderboards.items():
            lines.append("")
            if not parse_cited_metric(m).budget:
                lines.append(f"{m} (unequal contexts across chunkings):")
            lines.append(lb.summary())
        return "\n".join(lines)

    def _answer_lines(self) -> list[str]:
        """The answer by text share at the headline budget, the touch reading beside it, where the two disagree
        (one sentence each, every budget), and the winning cut at each budget."""
        if not self.budgets:
            return []
        touch = self.touch_answer()
        lines = [self.budget_answer()["sentence"],
                 f"Touched (some character of the provision in the context): {touch['leader']} leads recall@"
                 f"{touch['budget']}w ({touch['estimate']:.3f})."]
        lines += [d["sentence"] for d in (self.disagreement(b) for b in self.budgets) if d["sentence"]]
        lines.append(winners({b: self.budget_answer(b) for b in self.budgets}))
        return lines

    def table_text(self) -> str:
        t = self.table()
        width = max([22, *(len(str(x)) for x in t["system"])])  # chunker names can be long
        cells = []
        for _, r in t.iterrows():
            row = [f"{r['system']:<{width}}"]
            for m in self.leaderboards:
                row.append(f"{_label(m)} {_cell(r, m)}{_mark_text(r.get(f'{m} mark'))}")
                row.append(f"rank {_or_dash(r.get(m + ' rank')):<9} {_or_dash(r.get(m + ' tier')):<4}")
            cells.append(row)
        widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))] if cells else []
        out = ["  ".join(c.ljust(w) if i % 2 else c for i, (c, w) in enumerate(zip(row, widths))).rstrip()
               for row in cells]
        out += self.footnotes()  # each mark in its words: a shortfall with its coverage, else the check's reason
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"CitedChunkingResult(systems={len(self.info.get('systems', []))}, " \
               f"questions={len(self.values)})\n{self.summary()}"


def _mark_text(m: Any) -> str:
    """`` *`` / `` ‡`` after a cell, ``""`` without a mark."""
    return f" {m}" if isinstance(m, str) and m else ""


def _or_dash(x: Any) -> str:
    return "—" if x is None or (isinstance(x, float) and np.isnan(x)) else str(x)


def _cell(r: Mapping[str, Any], m: str) -> str:
    """``estimate [low, high]`` of one system and metric (a dash where the metric does not apply to it, e.g. chunk
    nDCG for a passage run), with the mean words of context at a budget when they fall short of it."""
    x = r.get(m)
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "—"
    out = f"{x:.3f} [{r[m + ' low']:.3f}, {r[m + ' high']:.3f}]"
    words = r.get(f"{m} words")
    spec = parse_cited_metric(m)
    if spec.budget and words is not None and not np.isnan(words) and words < spec.k - 0.5:
        out += f" ({words:,.0f} words)"
    return out


def _label(metric: str) -> str:
    """A metric's name as printed across chunkings: ``recall@10`` says it compares unequal contexts."""
    return metric if parse_cited_metric(metric).budget else f"{metric} (unequal context)"


def cited_chunking_study(
    tasks: Mapping[str, Any],
    retrievers: Mapping[str, Callable[[], Any]],
    *,
    metrics: Sequence[str] = ("recall@10", "ndcg@10"),
    budgets: Sequence[int] | None = DEFAULT_BUDGETS,
    granularity: str = "dispositivo",
    where: str = "all",
    cluster: str | None = None,
    level: float = 0.95,
    n_resamples: int = 5000,
    seed: int | None = 0,
    icc_threshold: float = 0.05,
    runner: Callable[..., pd.DataFrame] | None = None,
    passages: Mapping[str, Any] | None = None,
    on_missing: str = "error",
) -> CitedChunkingResult:
    """Run every retriever on every chunking and rank the systems as one family, paired by question.

    Parameters
    ----------
    tasks : mapping name -> CitedTask
        The same questions under each chunking.
    retrievers : mapping name -> factory
        A fresh retriever per chunking (``index(corpus)``, ``search(queries, k)``).
    runner : callable, optional
        ``runner(retriever, task, k=..., queries=...) -> run`` on a chunking's task (the questions scored, in
        order; default :func:`ragcov_data.execution.engine.run_task` here). The study never indexes or searches.
    metrics : sequence of str
        One leaderboard each (default recall@10 and nDCG@10; ``hit@10`` recorded too): at ``k`` chunks, unequal
        contexts across chunkings (ten whole artigos are many more words than ten 50-word windows).
    budgets : sequence of int, optional
        Context budgets in words (default 500, 1000, 2000; :mod:`ragcov_data.eval.outcomes.budget`): one family
        each on ``span_recall@Bw`` (the share of the cited text in the context), then on ``recall@Bw`` (touched);
        precision, IoU and the coverage curve recorded in ``values``; runs retrieved deep enough to fill them.
    granularity : {"dispositivo", "article"}
    where : {"all", "full"}
        ``"full"``: only questions whose cited acts are all in the corpus.
    cluster : {None, "query", "topic", "exam", "article"}
        Unit of inference. None (or ``"auto"``): the task's own, read from its queries columns as ``evaluate``
        reads it (:func:`task_unit`: IRPF's ``topic``, LGPD's ``exam``), so ``ragcov eval`` and this study give
        one interval for one run; ``"query"``: the question; ``"topic"``, ``"exam"``: that queries column;
        ``"article"``: the question's first cited artigo (a sensitivity design: questions citing one provision
        share it). A unit other than the task's is said in the ICC sentence and the summary.
    icc_threshold : float
        Kept for earlier callers and recorded (the unit no longer depends on the ICC).
    passages : mapping name -> passage run, optional
        Pipelines' runs of returned text (:mod:`ragcov_data.runs.passages`: a path or DataFrame, e.g. from
        :func:`ragcov_data.run_pipeline`), ranked in the same families as the (chunking, retriever) systems,
        paired by question: every budget and ``recall@k``/``hit@k`` read their located passages; ``ndcg@k``
        grades ragcov's chunks, so its family leaves them out (said; a family left with one system is not ranked).
    on_missing : {"error", "zero"}, default: "error"
        Questions a passage run has no answer for: an error (as in every verb), or scored 0 (said in the notices).

    Returns
    -------
    CitedChunkingResult
    """
    _check_study(where, cluster, len(tasks) * len(retrievers) + len(passages or {}))
    budgets = _check_budgets(budgets)
    family, specs, kmax, all_metrics = _study_metrics(metrics, budgets)
    res_rows, order, queries0, notices = _common_questions(tasks, where, granularity)
    per_sys = _system_values(tasks, retrievers, runner, order, depth_of=lambda c: max(kmax, _budget_depth(
        c, max(budgets, default=0))), metrics=all_metrics, granularity=granularity)
    said: dict[str, list[str]] = {}  # a metric's own notices (a passage run's ambiguous passages may move it)
    per_sys.update(_passage_values(passages, tasks[next(iter(tasks))], order, all_metrics, granularity, per_sys,
                                   on_missing, notices, said))
    values = pd.concat(dict(per_sys), axis=1).swaplevel(0, 1, axis=1).sort_index(axis=1, level=0,
                                                                                sort_remaining=False)
    rec_name = next((str(s) for s in specs if s.name == "recall" and not s.budget), all_metrics[0])
    icc, clusters, cname_ = _unit_of_inference(tasks, per_sys, queries0, order, rec_name, cluster)
    icc["threshold"] = icc_threshold
    lbs = {m: _family(values[m], m, clusters, cname_, notices + said.get(m, []), level=level,
                      n_resamples=n_resamples, seed=seed) for m in _rankable(family, values, notices)}
    return CitedChunkingResult(leaderboards=lbs, values=values, resolution=pd.DataFrame(res_rows), icc=icc,
                               granularity=granularity, where=where, cluster=cname_,
                               info={"n_resamples": int(n_resamples), "seed": seed, "notices": notices,
                                     "systems": list(per_sys), "level": level, "budgets": list(budgets),
                                     "context": CONTEXT_NOTE, **_context_means(per_sys),
                                     "passage_systems": list(passages or {})})


def _context_means(per_sys: Mapping[str, pd.DataFrame]) -> dict[str, dict[str, dict]]:
    """Per system and budget the mean words (``context_words``) and chunks or passages (``context_items``) of
    context."""
    return {key: {name: dict(v.attrs.get(key) or {}) for name, v in per_sys.items()}
            for key in ("context_words", "context_items")}


def _study_metrics(metrics: Sequence[str], budgets: list[int]) -> tuple[list[str], list[Any], int, list[str]]:
    """The ranked metrics (budgets first: each budget's text share ``span_recall@Bw``, then its touch reading
    ``recall@Bw``), their specs, the deepest ``k`` asked for, and every metric recorded (``hit@k`` and the budgets'
    precision, IoU and coverage curve besides)."""
    metrics = [str(parse_cited_metric(m)) for m in metrics]
    family = list(dict.fromkeys([*(family_metric(b) for b in budgets), *(family_metric(b, "touched") for b in budgets),
                                 *metrics]))
    if not family:
        raise RagcovError("give at least one metric or budget to rank the systems on.")
    specs = [parse_cited_metric(m) for m in family]
    kmax = max([s.k for s in specs if not s.budget], default=10)
    extra = [f"{m}@{b}w" for b in budgets for m in ("precision", "iou", "covered_any", "covered_50", "covered_90",
                                                   "covered_whole")]
    return family, specs, kmax, list(dict.fromkeys([*family, f"hit@{kmax}", *extra]))


def _common_questions(tasks: Mapping[str, Any], where: str,
                      granularity: str) -> tuple[list[dict[str, Any]], list[str], pd.DataFrame, list[str]]:
    """Per chunking its resolution record; the questions with a resolved provision under every chunking (in
    the first task's order); the first task's queries; notices for questions left out."""
    res_rows, qsets, queries0 = [], {}, None
    for cname, task in tasks.items():
        queries = _frame(task, "queries")
        if where == "full":
            queries = queries[~queries["partial"].astype(bool)]
        prov = _provisions(_frame(task, "citations"), granularity)
        qsets[cname] = [q for q in queries["_id"].astype(str) if q in prov]
        queries0 = queries if queries0 is None else queries0
        counts = getattr(task, "manifest", {}).get("counts", {})
        res_rows.append({"chunking": cname, "chunks": int(len(_frame(task, "corpus"))),
                         "article_citations": counts.get("article_citations_in_corpus"),
                         "resolved": counts.get("article_citations_resolved"),
                         "questions_scored": len(qsets[cname])})
    common = set.intersection(*(set(v) for v in qsets.values()))
    notices = [f"{cname}: {len(q) - len(common)} question(s) scored there but not under every chunking were left "
               "out of the family" for cname, q in qsets.items() if len(q) != len(common)]
    if len(common) < 2:
        raise RagcovError("fewer than 2 questions have a resolved provision under every chunking.")
    order = [q for q in queries0["_id"].astype(str) if q in common]
    return res_rows, order, queries0, notices


def _system_values(tasks: Mapping[str, Any], retrievers: Mapping[str, Callable[[], Any]],
                   runner: Callable[..., pd.DataFrame] | None, order: list[str], *,
                   depth_of: Callable[[pd.DataFrame], int], metrics: list[str],
                   granularity: str) -> dict[str, pd.DataFrame]:
    """Per system ``chunking/retriever`` the per-question values: a fresh retriever run (by ``runner``) on the
    chunking's task, over the questions of ``order``, deep enough for every metric and budget."""
    if runner is None:
        from functools import partial

        runner = partial(run_task, exclude_self=False, show_progress=None)
    per_sys: dict[str, pd.DataFrame] = {}
    for cname, task in tasks.items():
        q = _frame(task, "queries")
        q = q[q["_id"].astype(str).isin(set(order))].set_index("_id").loc[order].reset_index()
        depth = depth_of(_frame(task, "corpus"))
        for rname, make in retrievers.items():
            run = runner(make(), task, k=depth, queries=q[["_id", "text"]])
            per_sys[f"{cname}/{rname}"] = per_query_values(run, task, metrics=metrics, granularity=granularity,
                                                           query_ids=order)
    return per_sys


def _check_study(where: str, cluster: str | None, n_systems: int) -> None:
    if where not in ("all", "full"):
        raise RagcovError(f"`where` must be 'all' or 'full'; got {where!r}.")
    if cluster is not None and cluster not in CLUSTERS:
        raise RagcovError(f"`cluster` must be one of {list(CLUSTERS)} or None (the task's unit); got {cluster!r}.")
    if n_systems < 2:
        raise RagcovError("need at least two systems (chunkings x retrievers, and passage runs).")


def _family(values: pd.DataFrame, metric: str, clusters: Any, cluster_name: str, notices: list[str],
            **kw: Any) -> Any:
    """One metric's family over the systems it applies to (a passage run has no chunk nDCG: left out, and said)."""
    vm = values.dropna(axis=1, how="all")
    left_out = [c for c in values.columns if c not in vm.columns]
    lb = leaderboard_from_values(vm, metric=metric, clusters=clusters, cluster_name=cluster_name, **kw)
    lb.info["notices"] += notices + ([f"{metric} grades ragcov's chunks: {', '.join(left_out)} (passage runs) left "
                                      "out of this family"] if left_out else [])
    return lb


def _passage_values(passages: Mapping[str, Any] | None, task: Any, order: list[str], metrics: list[str],
                    granularity: str, taken: Mapping[str, Any], on_missing: str, notices: list[str],
                    said: dict[str, list[str]]) -> dict[str, pd.DataFrame]:
    """Per passage run the per-question values of every metric a passage run has (all but ``ndcg@k``), scored on
    ``task`` (any chunking: a passage run's spans and the cited provisions are on the acts, not the chunks);
    questions it lacks as ``on_missing`` says; where its passages were found, and the questions it lacked, said
    in ``notices``; how far its ambiguous passages may move a metric, in ``said[metric]``."""
    out: dict[str, pd.DataFrame] = {}
    ok = [m for m in metrics if parse_cited_metric(m).name != "ndcg"]
    for name, run in (passages or {}).items():
        if name in taken or name in out:
            raise RagcovError(f"the passage run {name!r} has the name of another system; name it otherwise.")
        out[str(name)] = per_query_values(run, task, metrics=ok, granularity=granularity, query_ids=order,
                                          on_missing=on_missing)
        label = run_name(run) if run_name(run) != "run" else str(name)
        notices += passage_notices(label, out[str(name)].attrs, len(order))
        for m, note in placement_notices(label, out[str(name)].attrs).items():
            said.setdefault(m, []).append(note)
    return out


def _rankable(family: list[str], values: pd.DataFrame, notices: list[str]) -> list[str]:
    """The metrics of ``family`` with at least two systems to rank; a family that leaving out the passage runs
    (chunk nDCG) leaves with one system is not ranked, and said; none left is an error."""
    out = []
    for m in family:
        vm = values[m].dropna(axis=1, how="all")
        if vm.shape[1] >= 2:
            out.append(m)
            continue
        gone = [str(c) for c in dict.fromkeys(values.columns.get_level_values(1)) if c not in vm.columns]
        notices.append(f"{m} grades ragcov's chunks: {', '.join(gone)} (passage runs) left out, which leaves one "
                       f"system ({', '.join(map(str, vm.columns))}): no {m} family is ranked")
    if not out:
        raise RagcovError(f"nothing to rank: {', '.join(family)} grade ragcov's chunks, which a passage run has none "
                          "of, and one system is left; add a budget (--budgets 1000) or recall@10 / hit@10, or "
                          "another chunking or retriever.")
    return out


def task_unit(queries: pd.DataFrame) -> str:
    """The task's unit of inference, read from its queries columns as ``evaluate`` reads it
    (:func:`ragcov_data.eval.outcomes.table.default_cluster`): ``exam`` (LGPD), ``topic`` (IRPF), else the
    question (``_id``)."""
    return default_cluster(queries.attrs.get("all_columns") or queries.columns)


#: How the ICC sentence and the summary name each unit.
_UNIT_WORDS = {"topic": "topic", "exam": "exam", "article": "first cited artigo", "_id": "question",
               "query": "question"}


def _icc_words(de: Any, unit: str, n: int, n_questions: int) -> str:
    """``ICC by topic +0.271 over 162 topics (deff 1.12)``, or ``ICC by exam undefined (every exam holds one
    question)`` where no cluster holds two (never ``+nan``)."""
    word = _UNIT_WORDS.get(unit, unit)
    plural = f"{word}s" if not word.endswith("artigo") else "artigos"
    if not np.isfinite(de.icc):
        why = f"every {word} holds one question" if n == n_questions else "no variation to split"
        return f"ICC by {word} undefined ({why}; {n} {plural})"
    return f"ICC by {word} {de.icc:+.3f} over {n} {plural} (deff {de.deff:.2f})"


def _unit_of_inference(tasks: Mapping[str, Any], per_sys: Mapping[str, pd.DataFrame], queries0: pd.DataFrame,
                       order: list[str], rec_name: str,
                       cluster: str | None) -> tuple[dict[str, Any], np.ndarray | None, str]:
    """The unit of inference (the task's own unless ``cluster`` names another), the ICC record of the first
    system's recall by it and by the first cited artigo, the clusters of the unit (None: the question) and the
    unit's name. The ICC describes the design; it no longer chooses the unit."""
    qinfo = queries0.set_index(queries0["_id"].astype(str)).loc[order]
    own = task_unit(queries0)
    chosen = own if cluster in (None, "auto") else ("_id" if cluster == "query" else cluster)
    if chosen not in ("_id", "article") and chosen not in qinfo.columns:
        raise RagcovError(f"`cluster={cluster!r}`: the task's queries have no {chosen!r} column (they have "
                          f"{sorted(map(str, queries0.columns))}); choose 'query', 'article' or one of those.")
    y = per_sys[next(iter(per_sys))][rec_name].to_numpy(dtype=float)
    first_cits = _first_article(tasks[next(iter(tasks))], order)
    unit_col = own if own != "_id" else ("topic" if "topic" in qinfo.columns else None)
    units = None if unit_col is None else np.asarray(qinfo[unit_col].astype(str).to_numpy(), dtype=object)
    de_u = design_effect(y, units) if units is not None else None
    de_art = design_effect(y, first_cits)
    icc = {"system": next(iter(per_sys)), "metric": rec_name, "unit": None if chosen in ("_id", "article") else chosen,
           "task_unit": own, "decision": {"_id": "query"}.get(chosen, chosen),
           "first_article_icc": float(de_art.icc), "first_article_deff": float(de_art.deff),
           "n_first_articles": int(len(set(first_cits)))}
    if units is not None:
        icc.update(unit_icc=float(de_u.icc), unit_deff=float(de_u.deff), n_units=int(len(set(units))))
    if "topic" in qinfo.columns:  # kept for readers of earlier records (IRPF's unit; LGPD's topic is its exam)
        de_t = de_u if unit_col == "topic" else design_effect(y, qinfo["topic"].astype(str).to_numpy(dtype=object))
        icc.update(topic_icc=float(de_t.icc), topic_deff=float(de_t.deff), n_topics=int(qinfo["topic"].nunique()))
    said = [_icc_words(de_u, unit_col, len(set(units)), len(y))] if units is not None else []
    said.append(_icc_words(de_art, "article", len(set(first_cits)), len(y)))
    name = _UNIT_WORDS.get(chosen, chosen)
    whose = (" (the task's unit)" if chosen == own else
             f" (chosen, cluster={cluster!r}; the task's unit is the {_UNIT_WORDS.get(own, own)})")
    icc["sentence"] = f"{rec_name} of {icc['system']}: {'; '.join(said)}; unit of inference: the {name}{whose}."
    clusters = None if chosen == "_id" else first_cits if chosen == "article" else \
        np.asarray(qinfo[chosen].astype(str).to_numpy(), dtype=object)
    return icc, clusters, name


def _check_budgets(budgets: Sequence[int] | None) -> list[int]:
    out = []
    for b in budgets or ():
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
            raise RagcovError(f"`budgets` must be positive whole numbers of words (e.g. 500, 1000, 2000); got {b!r}.")
        out.append(int(b))
    if len(set(out)) != len(out):
        raise RagcovError(f"`budgets` lists a budget twice: {out}.")
    return out


def _budget_depth(corpus: pd.DataFrame, budget: int) -> int:
    """Chunks a run needs so that no context within ``budget`` words is cut short: as many as the corpus's
    smallest chunks that fit (an upper bound on any context's size), at least one."""
    if budget < 1:
        return 0
    words = np.sort(corpus["text"].astype(str).str.split().str.len().to_numpy(dtype=np.int64))
    return context_size(words, budget)


def _first_article(task: Any, order: Sequence[str]) -> np.ndarray:
    cits = _frame(task, "citations")
    ok = cits[cits["article"].notna()]
    first = {}
    for q, d, a in zip(ok["query-id"], ok["doc_id"], ok["article"]):
        first.setdefault(str(q), f"{d}:{a}")
    return np.asarray([first.get(q, q) for q in order], dtype=object)
