"""The proxy study as a job: does self-retrieval rank retrievers and cuts as real questions do?

For a cited-questions corpus (``irpf``: seven acts, questions clustered by topic; ``lgpd``: the LGPD and the
LAI, exam questions clustered by exam) :func:`proxy_study` builds

- the **real task** under each cut (:func:`ragcov_data.jobs.studies.cited_tasks`), scored per question on
  ``span_recall@1000w`` and ``recall@10`` (:func:`ragcov_data.eval.comparisons.cited.per_query_values`);
- the **proxy**: the self-retrieval task on the same acts with the same cut, through the acervo path
  (:func:`ragcov_data.tasks.sources.resolve_task` with ``data_files=``: the documented construction rules),
  scored per query on ``hit@1`` and ``span_recall@1000w`` (:mod:`ragcov_data.eval.outcomes.self_budget`),
  averaged per document (the document is the proxy's sampled unit);

runs every system on both (:func:`ragcov_data.execution.engine.run_task`), and compares the orders
(:func:`ragcov_data.eval.comparisons.proxy.proxy_agreement`) for two families: the **retrievers** at one cut,
and the **cuts** (``words-50/100/200``, ``dispositivo``) with one retriever.

What a document is (``units``), both measured:

- ``act``: each act as published is a document — what ``ragcov build --data-files acts.jsonl`` gives a team
  without questions (7 documents on IRPF, 2 on LGPD: a document-clustered interval this thin says little);
- ``artigo``: each artigo (with the preâmbulo and the annex headings the article cut keeps) is a document,
  the acervo's records being the article chunks of the acts; every document of one chunk is left out by the
  construction rules (so the index holds the longer artigos only).

The ``article`` cut has no self-retrieval counterpart (an artigo document cut into one chunk has no sibling;
``build_task`` cuts acts into windows or dispositivos), so the cut family leaves it out and says so.
"""
from __future__ import annotations

import json
import re
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.comparisons.proxy import ProxyAgreement, Side, proxy_agreement
from ragcov_data.eval.estimates.results import _JsonMixin
from ragcov_data.execution.engine import run_task

__all__ = ["proxy_study", "ProxyStudyResult", "fast_retrievers", "UNITS", "CUTS", "DEFAULT_CUT", "CUT_RETRIEVER",
           "PROXY_METRICS", "REAL_METRICS", "UNIT_RULES", "DATASETS"]

DATASETS = ("irpf", "lgpd")
UNITS = ("act", "artigo")
#: The cuts both tasks can be asked under (the article cut has no self-retrieval counterpart).
CUTS = ("words-50", "words-100", "words-200", "dispositivo")
DEFAULT_CUT = "words-100"
#: The retriever of the cut family (the cited chunking study's default).
CUT_RETRIEVER = "bm25-pt"
PROXY_METRICS = ("hit@1", "span_recall@1000w")
REAL_METRICS = ("span_recall@1000w", "recall@10")
#: Encoders fast enough for every query of a self-retrieval task on two cores (static embeddings).
FAST_ENCODERS = ("wordllama",)
_ENCODER_PACKAGES = {"wordllama": ("torch", "sentence_transformers", "wordllama")}
UNIT_RULES = {
    "act": "each act as published is one document of the self-retrieval task",
    "artigo": ("each artigo (and the preâmbulo and annex headings the article cut keeps) is one document: the "
               "acervo's records are the acts' article chunks; a document of one chunk is left out by the "
               "construction rules"),
}
_CUT = re.compile(r"^(?:words-(\d+)|dispositivo|article)$")


def fast_retrievers(names: Sequence[str] | None = None) -> list[str]:
    """The installed baselines that need no transformer encoder (lexical ones, and :data:`FAST_ENCODERS` where
    their packages are installed), in registry order, among ``names`` when given."""
    import importlib.util

    from ragcov_data.baselines.registry import RETRIEVERS

    def installed(name: str) -> bool:
        if not RETRIEVERS[name].dense:
            return True
        try:  # the packages the encoder needs, found, not imported
            return all(importlib.util.find_spec(m) is not None for m in _ENCODER_PACKAGES.get(name, ("-",)))
        except (ImportError, ValueError):  # pragma: no cover - a broken install
            return False

    fast = [n for n in RETRIEVERS if (not RETRIEVERS[n].dense or n in FAST_ENCODERS) and installed(n)]
    return fast if names is None else [n for n in fast if n in set(names)]


def cut_options(cut: str) -> dict[str, Any]:
    """The build options of a cut name (``words-N``, ``dispositivo``, ``article``)."""
    m = _CUT.match(str(cut))
    if m is None:
        raise RagcovError(f"a cut is words-N, dispositivo or article; got {cut!r}.")
    if m.group(1):
        return {"chunking": "words", "chunk_words": int(m.group(1))}
    return {"chunking": str(cut)}


# --------------------------------------------------------------------------- tasks


def real_tasks(dataset: str, data_dir: Any, cuts: Sequence[str], note: Callable[[str], Any]) -> dict[str, Any]:
    """The cited-questions task of ``dataset`` under each cut (unresolved citations said through ``note``)."""
    # local: the loaders import `datasets`
    from ragcov_data.jobs.studies import cited_tasks

    if dataset == "irpf":
        from ragcov_data.loaders.cited_questions import IRPF_FILES, irpf_dir

        folder = irpf_dir(data_dir)
        acts, questions, build = folder / IRPF_FILES["acts"], folder / IRPF_FILES["questions"], None
    elif dataset == "lgpd":
        from ragcov_data.loaders.lgpd import build_lgpd_task as build, lgpd_sources

        acts, questions = lgpd_sources(data_dir)
    else:
        raise RagcovError(f"the proxy study reads a cited-questions dataset: one of {list(DATASETS)}; got {dataset!r}.")
    said: set[str] = set()

    def once(_: str, msg: str) -> None:
        body = re.sub(r"\([^)]*\)", "", msg, count=1)
        if body not in said:
            said.add(body)
            note(msg)

    return cited_tasks(acts, questions, [(c, cut_options(c)) for c in cuts], dataset=dataset, note=once, build=build)


def acervo_records(task: Any, unit: str) -> pd.DataFrame:
    """The acervo of the proxy task: the acts (``unit="act"``: the task's ``documents``) or their artigos
    (``"artigo"``: an article-cut task's chunks, ``doc_id = <act>/<index>``, with ``act`` and ``label``)."""
    if unit == "act":
        return task.documents[["doc_id", "text"]].copy()
    if unit == "artigo":
        c = task.corpus
        return pd.DataFrame({"doc_id": [f"{d}/{int(i):04d}" for d, i in zip(c["doc_id"], c["chunk_index"])],
                             "text": c["text"].astype(str), "act": c["doc_id"].astype(str),
                             "label": c["unit"].astype(str)})
    raise RagcovError(f"a proxy unit is one of {list(UNITS)}; got {unit!r}.")


def proxy_task(records: pd.DataFrame, cut: str, path: Path) -> Any:
    """The self-retrieval task of ``records`` under ``cut``, built from the JSON Lines acervo ``path`` (written
    from ``records`` if absent) through :func:`ragcov_data.tasks.sources.resolve_task` (``data_files=``: the
    documented construction rules)."""
    from ragcov_data.tasks.sources import resolve_task

    if not path.is_file():
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records.to_dict(orient="records"))
    opts = cut_options(cut)
    if opts["chunking"] == "article":
        raise RagcovError("the article cut has no self-retrieval task (an artigo cut into one chunk has no sibling).")
    return resolve_task(data_files=[str(path)], chunk_words=opts.get("chunk_words"),
                        chunking=None if opts["chunking"] == "words" else opts["chunking"]).task


# --------------------------------------------------------------------------- values


def _budget_of(metrics: Sequence[str]) -> int:
    """The largest budget (words) among ``name@Bw`` metrics (0 when none)."""
    return max([int(m.group(1)) for m in (re.search(r"@(\d+)w$", x) for x in metrics) if m], default=0)


@dataclass
class _Runs:
    """Runs of the study's systems on both tasks, each made once and scored on every metric asked for."""

    proxy_metrics: Sequence[str]
    real_metrics: Sequence[str]
    engine: Mapping[str, Any] | None = None
    show_progress: bool = False
    made: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)
    seconds: float = 0.0

    def _run(self, name: str, task: Any, k: int, exclude_self: bool, queries: Any = None) -> pd.DataFrame:
        from ragcov_data.baselines.registry import make_retriever

        t0 = time.perf_counter()
        run = run_task(make_retriever(name, show_progress=self.show_progress), task, k=int(k),
                       exclude_self=exclude_self, queries=queries, show_progress=self.show_progress,
                       **dict(self.engine or {}))
        self.seconds += time.perf_counter() - t0
        return run

    def real(self, key: tuple, name: str, task: Any, order: Sequence[str]) -> pd.DataFrame:
        """Per-question values of ``name`` on the cited task (``order``: the questions scored)."""
        from ragcov_data.eval.comparisons.cited import per_query_values
        from ragcov_data.eval.outcomes.self_budget import budget_depth

        if key not in self.made:
            q = task.queries.assign(_id=task.queries["_id"].astype(str)).set_index("_id").loc[list(order)]
            depth = max(_k_of(self.real_metrics), budget_depth(task.corpus, _budget_of(self.real_metrics) or 1))
            run = self._run(name, task, depth, False, q.reset_index()[["_id", "text"]])
            self.made[key] = per_query_values(run, task, metrics=self.real_metrics, query_ids=list(order))
        return self.made[key]

    def proxy(self, key: tuple, name: str, task: Any) -> pd.DataFrame:
        """Per-document means of ``name``'s per-query values on the self-retrieval task."""
        from ragcov_data.eval.outcomes.self_budget import budget_depth, corpus_stats, self_values

        if key not in self.made:
            budget = _budget_of(self.proxy_metrics)
            depth = max(_k_of(self.proxy_metrics), budget_depth(task.corpus, budget) if budget else 1)
            run = self._run(name, task, depth, True)
            if self.stats.get(id(task), (None,))[0] is not task:  # the task itself kept: its id stays its own
                self.stats[id(task)] = (task, corpus_stats(task))
            per_q = self_values(run, task, self.proxy_metrics, stats=self.stats[id(task)][1])
            self.made[key] = per_q.groupby(task.queries["doc_id"].astype(str).to_numpy(), sort=False).mean()
        return self.made[key]


def _k_of(metrics: Sequence[str]) -> int:
    return max([int(m.group(1)) for m in (re.search(r"@(\d+)$", x) for x in metrics) if m], default=1)


def _check_metrics(proxy_metrics: Sequence[str], real_metrics: Sequence[str]) -> None:
    from ragcov_data.eval.outcomes.budget import parse_cited_metric

    for m in proxy_metrics:
        if not re.fullmatch(r"(hit@\d+|span_recall@\d+w)", str(m)):
            raise RagcovError(f"a proxy metric is hit@k or span_recall@Bw (the query's document's other text within "
                              f"B words); got {m!r}.")
    for m in real_metrics:
        parse_cited_metric(m)
    if not proxy_metrics or not real_metrics:
        raise RagcovError("give at least one proxy metric and one real metric.")


# --------------------------------------------------------------------------- the study


def _questions(tasks: Mapping[str, Any], cuts: Sequence[str]) -> tuple[list[str], np.ndarray, str]:
    """The questions scored under every cut of ``cuts`` (the first task's order), their clusters (the task's own
    unit of inference, :func:`ragcov_data.eval.comparisons.cited.task_unit`: the exam on LGPD, the topic on IRPF)
    and the unit's name."""
    from ragcov_data.eval.comparisons.cited import task_unit
    from ragcov_data.eval.outcomes.budget import cited_provisions

    sets = [set(cited_provisions(tasks[c].citations, "dispositivo")) for c in cuts]
    q = tasks[cuts[0]].queries.assign(_id=lambda d: d["_id"].astype(str))
    order = [i for i in q["_id"] if all(i in s for s in sets)]
    col = task_unit(q)
    clusters = q.set_index("_id", drop=False).loc[order, col].astype(str).to_numpy(dtype=object)
    return order, clusters, "question" if col == "_id" else col


def _check_study(dataset: str, retrievers: Sequence[str], cut: str, cuts: Sequence[str], cut_retriever: str,
                 units: Sequence[str], level: float, n_resamples: int) -> None:
    """Every argument checked before any task is built."""
    from ragcov_data.baselines.registry import RETRIEVER_NAMES
    from ragcov_data.eval.estimates._kernels import check_level, check_resamples

    check_level(level)
    check_resamples(n_resamples, level ** 0.5, ("cluster_bootstrap",))

    if dataset not in DATASETS:
        raise RagcovError(f"the proxy study reads a cited-questions dataset: one of {list(DATASETS)}; got {dataset!r}.")
    for r in [*retrievers, cut_retriever]:
        if r not in RETRIEVER_NAMES:
            raise RagcovError(f"unknown retriever {r!r}; choose from {', '.join(RETRIEVER_NAMES)}.")
    for c in [cut, *cuts]:
        if cut_options(c)["chunking"] == "article":
            raise RagcovError("the article cut has no self-retrieval task (an artigo cut into one chunk has no "
                              f"sibling); choose among {', '.join(CUTS)}.")
    bad = [u for u in units if u not in UNITS]
    if bad or not units:
        raise RagcovError(f"a proxy unit is one of {list(UNITS)}; got {list(units)}.")
    if len(retrievers) < 2 and len(cuts) < 2:
        raise RagcovError("nothing to order: give at least 2 retrievers or 2 cuts.")
    for what, xs in (("retrievers", retrievers), ("cuts", cuts), ("units", units)):
        if len(set(xs)) != len(xs):
            raise RagcovError(f"`{what}` lists an entry twice: {list(xs)}.")


def proxy_study(dataset: str = "irpf", data_dir: Any = None, *, retrievers: Sequence[str] | None = None,
                cut: str = DEFAULT_CUT, cuts: Sequence[str] | None = CUTS, cut_retriever: str = CUT_RETRIEVER,
                units: Sequence[str] = UNITS, proxy_metrics: Sequence[str] = PROXY_METRICS,
                real_metrics: Sequence[str] = REAL_METRICS, level: float = 0.95, n_resamples: int = 999,
                seed: int | None = 0, check: bool = True, engine: Mapping[str, Any] | None = None,
                show_progress: bool = False, log: Callable[[str], Any] = print,
                unit_cuts: Mapping[str, Sequence[str]] | None = None) -> "ProxyStudyResult":
    """Self-retrieval against real cited questions on the same acts: both orders of every family, compared.

    Parameters
    ----------
    dataset : {"irpf", "lgpd"}
        The cited-questions corpus (read from ``data_dir``, default ``$RAGCOV_DATA_DIR``).
    retrievers : sequence of str, optional
        The retriever family, ranked at ``cut`` (default :func:`fast_retrievers`: every installed baseline that
        needs no transformer encoder). Fewer than 2: no retriever family.
    cut, cuts, cut_retriever
        The cut of the retriever family; the cut family (``cut_retriever`` under each of ``cuts``; None or
        fewer than 2: none).
    units : sequence of {"act", "artigo"}
        What a document of the self-retrieval task is (:data:`UNIT_RULES`); each is its own proxy.
    proxy_metrics, real_metrics
        ``hit@k`` / ``span_recall@Bw`` of self-retrieval; cited-questions metrics (``span_recall@1000w``,
        ``recall@10`` ...). Every pair of one of each is compared; the first of each is the headline.
    level, n_resamples, seed, check
        As :func:`ragcov_data.eval.comparisons.proxy.proxy_agreement`.
    engine, show_progress, log
        Where runs are made (:mod:`ragcov_data.execution.engine`), progress bars, one-line progress messages.
    unit_cuts : mapping unit -> cuts, optional
        The cut family of each unit, when not ``cuts`` for every unit (the main job's :data:`SECTION_CUTS`).

    Returns
    -------
    ProxyStudyResult
    """
    t0 = time.perf_counter()
    retrievers = list(fast_retrievers() if retrievers is None else retrievers)
    cuts = list(cuts or ())
    per_unit = {u: list(cuts if unit_cuts is None else unit_cuts.get(u, ())) for u in units}
    for u in units:
        _check_study(dataset, retrievers, cut, per_unit[u], cut_retriever, list(units), level, n_resamples)
    _check_metrics(proxy_metrics, real_metrics)
    notes: list[str] = []
    fam_cuts = list(dict.fromkeys([cut, *(c for u in units for c in per_unit[u])]))
    build = list(dict.fromkeys(fam_cuts + (["article"] if "artigo" in units else [])))
    log(f"proxy study on {dataset}: cited tasks under {', '.join(build)}")
    real = real_tasks(dataset, data_dir, build, lambda m: notes.append(m))
    order, clusters, ccol = _questions(real, fam_cuts)
    runs = _Runs(list(proxy_metrics), list(real_metrics), engine, show_progress)
    out: list[dict[str, Any]] = []
    cache: dict = {}
    tasks_info: dict[str, Any] = {"real": {"questions": len(order), "cluster": ccol,
                                           "clusters": int(len(set(clusters))), "cuts": fam_cuts}}
    with tempfile.TemporaryDirectory(prefix="ragcov-proxy-") as tmp:
        for unit in units:
            records = acervo_records(real["article" if unit == "artigo" else cut], unit)
            path = Path(tmp) / f"{unit}.jsonl"
            ptasks = {c: proxy_task(records, c, path) for c in dict.fromkeys([cut, *per_unit[unit]])}
            tasks_info[unit] = {c: _task_counts(t) for c, t in ptasks.items()}
            log(f"self-retrieval with {unit}s as documents: "
                + ", ".join(f"{c} {i['documents']} documents" for c, i in tasks_info[unit].items()))
            sides = _families(real, ptasks, unit, order, clusters, ccol, runs, retrievers=retrievers, cut=cut,
                              cuts=per_unit[unit], cut_retriever=cut_retriever, dataset=dataset, log=log,
                              notes=notes)
            out += _compare(sides, proxy_metrics, real_metrics, level=level, n_resamples=n_resamples, seed=seed,
                            check=check, cache=cache, log=log)
    notes.append("the article cut is ranked by the questions only: it has no self-retrieval task (an artigo cut "
                 "into one chunk has no sibling)")
    settings = {"retrievers": retrievers, "cut": cut, "cuts": cuts, "unit_cuts": per_unit, "cut_retriever": cut_retriever,
                "units": list(units), "proxy_metrics": list(proxy_metrics), "real_metrics": list(real_metrics),
                "level": level, "n_resamples": int(n_resamples), "seed": seed, "checked": bool(check)}
    return ProxyStudyResult(dataset=dataset, comparisons=out, tasks=tasks_info, settings=settings, notes=notes,
                            timings={"runs_s": round(runs.seconds, 1), "total_s": round(time.perf_counter() - t0, 1)},
                            units=dict(UNIT_RULES))


def _task_counts(task: Any) -> dict[str, Any]:
    c = task.manifest["counts"]
    return {"documents": int(c["documents_eligible"]), "excluded_single_chunk":
            int(c["documents_excluded"]["single_chunk"]), "queries": int(c["queries"]), "chunks": int(c["chunks"])}


def _families(real: Mapping[str, Any], ptasks: Mapping[str, Any], unit: str, order: Sequence[str],
              clusters: np.ndarray, ccol: str, runs: _Runs, *, retrievers: Sequence[str], cut: str,
              cuts: Sequence[str], cut_retriever: str, dataset: str, log: Callable[[str], Any],
              notes: list[str]) -> list[dict[str, Any]]:
    """Per family (retrievers at ``cut``; ``cut_retriever`` under each of ``cuts``) the per-question values of
    the real task and the per-document values of the proxy, every system run once on each."""
    fams = []
    if len(retrievers) >= 2:
        fams.append(("retrievers", [(r, cut, r) for r in retrievers], f"{dataset} questions, {cut}"))
    if len(cuts) >= 2:
        fams.append(("cuts", [(c, c, cut_retriever) for c in cuts], f"{dataset} questions, {cut_retriever}"))
    out = []
    for family, systems, real_task in fams:
        log(f"{family} family, {unit}s as documents: {len(systems)} systems on both tasks")
        rv = {name: runs.real(("real", c, r), r, real[c], order) for name, c, r in systems}
        pv = {name: runs.proxy(("proxy", unit, c, r), r, ptasks[c]) for name, c, r in systems}
        docs = list(pv[systems[0][0]].index)
        common = [d for d in docs if all(d in v.index for v in pv.values())]
        if len(common) < len(docs) or any(len(v) != len(common) for v in pv.values()):
            notes.append(f"{family}, {unit}s: {len(common)} documents hold two chunks under every cut (the others "
                         "are left out of the proxy's comparison, which pairs documents)")
        out.append({"family": family, "unit": unit, "real_task": real_task, "real": rv, "proxy": pv,
                    "docs": common, "order": list(order), "clusters": clusters, "cluster": ccol,
                    "proxy_task": f"self-retrieval, {unit}s as documents"
                                  + (f", {cut}" if family == "retrievers" else f", {cut_retriever}")})
    return out


def _compare(sides: Sequence[Mapping[str, Any]], proxy_metrics: Sequence[str], real_metrics: Sequence[str], *,
             level: float, n_resamples: int, seed: int | None, check: bool, cache: dict,
             log: Callable[[str], Any]) -> list[dict[str, Any]]:
    """Every (proxy metric, real metric) agreement of every family (the first metric of each: the headline)."""
    out = []
    for s in sides:
        names = list(s["real"])
        real_sides = {m: Side(pd.DataFrame({n: s["real"][n][m].to_numpy(float) for n in names}, index=s["order"]),
                              clusters=s["clusters"], metric=m, task=s["real_task"], cluster_name=s["cluster"])
                      for m in real_metrics}
        proxy_sides = {m: Side(pd.DataFrame({n: s["proxy"][n].loc[s["docs"], m].to_numpy(float) for n in names},
                                            index=s["docs"]), metric=m, task=s["proxy_task"], cluster_name=s["unit"])
                       for m in proxy_metrics}
        for pm in proxy_metrics:
            for rm in real_metrics:
                log(f"  {s['family']} ({s['unit']}s): proxy {pm} against questions' {rm}")
                res = proxy_agreement(proxy_sides[pm], real_sides[rm], level=level, n_resamples=n_resamples,
                                      seed=seed, check=check, cache=cache)
                out.append({"family": s["family"], "unit": s["unit"], "proxy_metric": pm, "real_metric": rm,
                            "headline": pm == proxy_metrics[0] and rm == real_metrics[0], "result": res,
                            "sides": {"proxy": proxy_sides[pm], "real": real_sides[rm]}})
    return out


@dataclass
class ProxyStudyResult(_JsonMixin):
    """What :func:`proxy_study` found: one :class:`~ragcov_data.eval.comparisons.proxy.ProxyAgreement` per
    (family, unit, proxy metric, real metric), the tasks' counts, the settings, notes and timings.

    ``comparisons`` records hold ``family, unit, proxy_metric, real_metric, headline`` and ``result`` (the
    agreement; in JSON its ``to_dict()`` without the two leaderboards' full tables, whose checks are in
    ``result.sides``); ``sides`` (the value tables, for :func:`ragcov_data.eval.planning.proxy_coverage.
    proxy_coverage`) stay out of the JSON."""

    _json_indent: ClassVar[int] = 2

    dataset: str
    comparisons: list[dict[str, Any]]
    tasks: dict[str, Any]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    timings: dict[str, Any] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        comps = []
        for c in self.comparisons:
            d = {k: v for k, v in c.items() if k not in ("result", "sides")}
            d["sentence"] = c["result"].sentence()
            d["result"] = {k: v for k, v in c["result"].to_dict().items() if k != "boards"}
            comps.append(d)
        return {"dataset": self.dataset, "settings": self.settings, "units": self.units, "tasks": self.tasks,
                "comparisons": comps, "notes": self.notes, "timings": self.timings}

    def comparison(self, family: str, unit: str, proxy_metric: str | None = None,
                   real_metric: str | None = None) -> ProxyAgreement:
        """The agreement of ``family`` with ``unit``s as documents (default metrics: the headline's)."""
        for c in self.comparisons:
            if (c["family"], c["unit"]) == (family, unit) and (
                    c["headline"] if proxy_metric is None and real_metric is None else
                    (c["proxy_metric"], c["real_metric"]) == (proxy_metric or self.settings["proxy_metrics"][0],
                                                              real_metric or self.settings["real_metrics"][0])):
                return c["result"]
        raise RagcovError(f"no comparison of the {family} family with {unit}s as documents "
                          f"({proxy_metric or 'headline'} / {real_metric or 'headline'}) in this study.")

    def summary(self) -> str:
        """Per family and unit the headline agreement in full, the other metrics in one sentence each."""
        lines = [f"Self-retrieval as a proxy for real questions: {self.dataset} "
                 f"({self.tasks['real']['questions']} questions, {self.tasks['real']['clusters']} "
                 f"{self.tasks['real']['cluster']}s)"]
        for c in self.comparisons:
            if c["headline"]:
                lines += ["", f"== {c['family']} family, {c['unit']}s as documents ==", c["result"].summary(), ""]
            else:
                lines.append(f"  also: {c['result'].sentence()}")
        lines += ["", *(f"note: {n}" for n in dict.fromkeys(self.notes))]
        return "\n".join(lines)


# --------------------------------------------------------------------------- the main job's section

#: What the main job runs of the study (`ragcov proxy` runs all of it): artigos as documents, both families, each
#: leaderboard without its family check (cost; said as ``unverifiable``). Acts as documents (7 on IRPF, 2 on LGPD)
#: separate no pair of these systems and their tasks are the costly ones (a whole act's chunks are each other's
#: qrels: 4M rows for IRPF's 100-word chunks, 17M for 50-word ones), so they are left to `ragcov proxy`.
SECTION_CUTS = {"artigo": CUTS}


def proxy_section(root: Path, names: Sequence[str], *, log: Callable[[str], Any] = print,
                  show_progress: bool = False, engine: Mapping[str, Any] | None = None, level: float = 0.95,
                  seed: int = 0, n_resamples: int = 999) -> dict[str, Any] | None:
    """The main job's block: :func:`proxy_study` on each cited-questions corpus of ``root`` (``irpf/``,
    ``lgpd/``) with the fast retrievers among ``names`` (:func:`fast_retrievers`), per unit the families of
    :data:`SECTION_CUTS`, no family check; None when neither corpus is there or fewer than 2 fast retrievers ran."""
    from ragcov_data.reporting.blocks import proxy_block

    fast = fast_retrievers(names)
    out: dict[str, Any] = {}
    for dataset in DATASETS:
        if not (Path(root) / dataset).is_dir():
            log(f"proxy section: {dataset} skipped ({Path(root) / dataset} does not exist)")
            continue
        units = [u for u, c in SECTION_CUTS.items() if len(fast) >= 2 or len(c) >= 2]
        if not units:
            log(f"proxy section: {dataset} skipped (fewer than 2 fast retrievers: {fast})")
            continue
        log(f"proxy section: {dataset}, {', '.join(units)} as documents")
        res = proxy_study(dataset, root, retrievers=fast if len(fast) >= 2 else [], units=units,
                          unit_cuts=SECTION_CUTS, level=level, n_resamples=n_resamples, seed=seed, check=False,
                          engine=engine, show_progress=show_progress, log=log)
        out[dataset] = proxy_block(res)
    return out or None
