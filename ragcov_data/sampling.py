"""Document-sampled tasks: queries from K documents drawn without replacement, the index over every document.

Making every chunk a query grows with the corpus; the planner (``ragcov plan``) says how many documents
K give a target interval width. :func:`sample_task` keeps the task's whole corpus (every eligible
document's chunks stay retrievable, so hit@1 means what it means on the census) and keeps the queries
and qrels of K sampled documents only. The evaluator then applies the finite-population correction
``1 - K/N`` (N = eligible documents) by itself (:func:`population_for_eval`).

The draw (recorded verbatim as :data:`SAMPLE_RULE`): every eligible document gets the key
``sha256("ragcov-sample\\0<seed>\\0<doc_id>")``; the K documents with the smallest keys are the sample.
Sorting by independent uniform keys and keeping the K smallest is a simple random sample without
replacement; with hashed keys it is reproducible from the seed and the document ids alone — whatever
their order, the machine or the numpy version — so an evaluator holding the whole task can draw the same
sample again from ``(K, seed, strata)``. With ``strata`` (a document column such as ``doc_type``) the
K documents are allocated to strata proportionally (:data:`ALLOCATION_RULE`) and drawn the same way
within each.

The record (``manifest["sample"]``, and a run's ``attrs["sample"]``): ``k``, ``seed``, ``strata``,
``population`` (``documents`` N and ``per_stratum`` N_h), ``allocation`` (k_h), ``documents`` (the sampled
ids, sorted), ``documents_sha256``, ``unit`` and the rules. A TREC run has no metadata, so its tag
carries the spec (``bm25;sample:k=20,seed=0,docs=<sha12>``, see :func:`sample_tag`).
"""
from __future__ import annotations

import hashlib
import re
from typing import Any, Mapping, Sequence
from urllib.parse import quote, unquote

import numpy as np
import pandas as pd

from ragcov_data.errors import QrelsRunMismatchError, RagcovError
from ragcov_data.task import Task, manifest_of

SAMPLE_KEY = "sample"
UNIT = "doc_id"
SAMPLE_RULE = ("documents drawn without replacement: each eligible document gets the key "
               "sha256('ragcov-sample\\0<seed>\\0<doc_id>'); the K documents with the smallest keys are the "
               "sample (with strata: the k_h smallest within each stratum). Queries and qrels of the sampled "
               "documents only; the corpus keeps every eligible document.")
ALLOCATION_RULE = ("proportional: k_h = K * N_h / N, rounded by largest remainder (equal remainders: larger N_h, "
                   "then label); a stratum whose quota rounds to 0 gets no document (recorded as 0), so the sample "
                   "stays self-weighting")
_TAG = re.compile(r";sample:(?P<spec>[^\s;]+)$")


# --------------------------------------------------------------------------- the draw


def _keys(doc_ids: Sequence[str], seed: int) -> np.ndarray:
    prefix = f"ragcov-sample\0{int(seed)}\0".encode()
    return np.array([hashlib.sha256(prefix + str(d).encode("utf-8", "surrogatepass")).hexdigest() for d in doc_ids],
                    dtype=object)


def check_k(k: Any, n: int, what: str = "eligible documents") -> int:
    """``k`` as an int, 2 <= k <= n, else the one-line error."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise RagcovError(f"`sample_docs` must be a whole number of documents; got {k!r}.")
    if k < 2:
        raise RagcovError(f"`sample_docs` must be at least 2 (an interval needs two documents); got {k}.")
    if k > n:
        raise RagcovError(f"`sample_docs` ({k}) is larger than the {n} {what}; give at most {n} "
                          "(all of them is the census: drop --sample-docs).")
    return int(k)


def allocate(k: int, sizes: Mapping[str, int]) -> dict[str, int]:
    """Proportional allocation of ``k`` documents to strata of ``sizes`` (see :data:`ALLOCATION_RULE`)."""
    labels = sorted(sizes)
    n = sum(sizes.values())
    quota = {h: k * sizes[h] / n for h in labels}
    alloc = {h: int(np.floor(quota[h])) for h in labels}
    rest = k - sum(alloc.values())
    order = sorted(labels, key=lambda h: (-(quota[h] - alloc[h]), -sizes[h], h))
    for h in order[:rest]:
        alloc[h] += 1
    return alloc


def draw(doc_ids: Sequence[str], k: int, seed: int = 0, strata: Sequence[str] | None = None) -> dict[str, Any]:
    """Draw ``k`` of ``doc_ids`` (distinct) without replacement; returns the sample record.

    ``strata`` (one label per document) draws within strata, allocated proportionally.
    """
    ids = [str(d) for d in doc_ids]
    if len(set(ids)) != len(ids):
        raise RagcovError("`doc_ids` must be distinct to draw documents.")
    k = check_k(k, len(ids))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RagcovError(f"the sample seed must be an integer; got {seed!r}.")
    keys = _keys(ids, seed)
    frame = pd.DataFrame({"doc": ids, "key": keys})
    if strata is None:
        chosen = frame.sort_values("key", kind="mergesort")["doc"].iloc[:k].tolist()
        per_stratum, alloc = None, None
    else:
        frame["h"] = [str(h) for h in strata]
        per_stratum = {str(h): int(c) for h, c in frame["h"].value_counts().sort_index().items()}
        alloc = allocate(k, per_stratum)
        chosen = []
        for h, grp in frame.groupby("h", sort=True):
            chosen += grp.sort_values("key", kind="mergesort")["doc"].iloc[:alloc[str(h)]].tolist()
    docs = sorted(chosen)
    return {
        "unit": UNIT, "k": k, "seed": int(seed), "strata": None,
        "population": {"documents": len(ids), "per_stratum": per_stratum},
        "allocation": alloc, "documents": docs, "documents_sha256": docs_sha256(docs),
        "rule": SAMPLE_RULE, "allocation_rule": ALLOCATION_RULE if strata is not None else None,
    }


def docs_sha256(docs: Sequence[str]) -> str:
    """sha256 of the sorted sampled ids, one a line (identifies a sample)."""
    return hashlib.sha256("\n".join(sorted(map(str, docs))).encode("utf-8", "surrogatepass")).hexdigest()


# --------------------------------------------------------------------------- tasks


def eligible_documents(corpus: pd.DataFrame, strata: str | None = None, where: str = "the task's corpus"
                       ) -> tuple[list[str], list[str] | None]:
    """The population: every document of ``corpus`` (in first-appearance order), and its stratum labels."""
    if "doc_id" not in corpus.columns:
        raise RagcovError(f"{where} has no `doc_id` column, so documents cannot be sampled; sample a chunked "
                          "self-retrieval task (ragcov build / load_dataset('aneel_taesa')).")
    if strata is None:
        return pd.unique(corpus["doc_id"].astype(str)).tolist(), None
    if strata not in corpus.columns:
        raise RagcovError(f"strata column {strata!r} is not a column of {where}; available: "
                          f"{sorted(c for c in corpus.columns if c not in ('_id', 'text', 'chunk_index'))}.")
    docs = corpus[["doc_id", strata]].astype({"doc_id": str}).drop_duplicates()
    missing = docs[docs[strata].isna()]
    if len(missing):
        raise RagcovError(f"strata column {strata!r} is missing for {len(missing)} eligible documents (first: "
                          f"{missing['doc_id'].iloc[0]!r}); fill it in the acervo or sample without strata.")
    mixed = docs["doc_id"].duplicated(keep=False)
    if mixed.any():
        raise RagcovError(f"strata column {strata!r} varies within document {docs['doc_id'][mixed].iloc[0]!r}; "
                          "strata must be document metadata.")
    return docs["doc_id"].tolist(), docs[strata].astype(str).tolist()


def sample_task(task: Any, k: int, seed: int = 0, strata: str | None = None) -> Any:
    """The task with the queries and qrels of ``k`` documents drawn from its corpus (the corpus kept whole).

    ``task`` is a :class:`ragcov_data.task.Task` (or anything with corpus/queries/qrels DataFrames and a
    ``manifest``); the result is a new Task whose manifest records the sample (``manifest["sample"]``)
    and whose ``counts`` gain ``queries_sampled`` / ``qrels_sampled``.
    """
    if (task.manifest or {}).get(SAMPLE_KEY):
        raise RagcovError("the task is already a document sample; sample the whole task once.")
    ids, labels = eligible_documents(task.corpus, strata)
    rec = draw(ids, k, seed, labels)
    rec["strata"] = strata
    keep = pd.Index(rec["documents"])
    queries = task.queries.loc[task.queries["doc_id"].astype(str).isin(keep)].reset_index(drop=True)
    qrels = task.qrels.loc[task.qrels["query-id"].astype(str).isin(pd.Index(queries["_id"].astype(str)))]
    qrels = qrels.reset_index(drop=True)
    rec["queries"] = int(len(queries))
    manifest = dict(task.manifest or {})
    manifest[SAMPLE_KEY] = rec
    counts = dict(manifest.get("counts") or {})
    counts.update(queries=int(len(queries)), qrels=int(len(qrels)))
    manifest["counts"] = counts
    return Task(task.corpus, queries, qrels, manifest, getattr(task, "_read_types", None))


def sample_of(task: Any) -> dict[str, Any] | None:
    """The sample record of a task (Task, DatasetDict, or dict of frames with a manifest), else None."""
    manifest = getattr(task, "manifest", None)
    if manifest is None:
        try:
            manifest = manifest_of(task) if hasattr(task, "get") else None
        except Exception:
            manifest = None
    rec = (manifest or {}).get(SAMPLE_KEY)
    return rec if isinstance(rec, dict) else None


# --------------------------------------------------------------------------- runs


def sample_tag(name: str, rec: Mapping[str, Any]) -> str:
    """TREC run tag carrying the sample spec: ``<name>;sample:k=K,seed=S[,strata=COL],docs=<sha12>``."""
    parts = [f"k={rec['k']}", f"seed={rec['seed']}"]
    if rec.get("strata"):
        parts.append(f"strata={quote(str(rec['strata']), safe='')}")
    parts.append(f"docs={str(rec['documents_sha256'])[:12]}")
    return f"{name};sample:{','.join(parts)}"


def parse_tag(tag: Any) -> dict[str, Any] | None:
    """The spec in a run tag written by :func:`sample_tag` (``k``, ``seed``, ``strata``, ``docs``), else None."""
    if not isinstance(tag, str):
        return None
    m = _TAG.search(tag)
    if not m:
        return None
    spec: dict[str, Any] = {"strata": None}
    for item in m.group("spec").split(","):
        key, _, value = item.partition("=")
        spec[key] = unquote(value)
    try:
        return {"k": int(spec["k"]), "seed": int(spec["seed"]), "strata": spec.get("strata") or None,
                "documents_sha256": spec.get("docs")}
    except (KeyError, ValueError):
        raise RagcovError(f"run tag {tag!r} has a malformed sample spec; expected "
                          "'<name>;sample:k=K,seed=S[,strata=COL],docs=SHA' as `ragcov run --sample-docs` writes it.")


def run_sample(attrs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The sample a run was made on: ``attrs["sample"]`` (parquet metadata) or its TREC tag's spec."""
    rec = attrs.get(SAMPLE_KEY)
    if isinstance(rec, Mapping):
        return dict(rec)
    return parse_tag(attrs.get("tag"))


# --------------------------------------------------------------------------- evaluation


def _documents_frame(task: Any, strata: str | None) -> tuple[pd.DataFrame | None, str]:
    """``doc_id`` (and ``strata``) of the task's corpus, else of its queries: the population's documents."""
    for split in ("corpus", "queries"):
        try:
            part = task[split]
        except (KeyError, TypeError):
            continue
        names = list(getattr(part, "column_names", None) or getattr(part, "columns", []))
        if "doc_id" not in names:
            continue
        cols = [c for c in ("doc_id", strata) if c and c in names]
        frame = part[cols] if isinstance(part, pd.DataFrame) else part.select_columns(cols).to_pandas()
        return frame, f"the task's {split}"
    return None, "the task"


def resolve_for_eval(task_sample: Mapping[str, Any] | None, run_attrs: Mapping[str, Any],
                     task: Any) -> dict[str, Any] | None:
    """The sample a run is evaluated on, or None for a census.

    The task's own record wins (a sampled task folder); a run made on a sample and scored against the
    whole task has its sample drawn again from ``(k, seed, strata)`` on the task's documents and checked
    against the recorded ids (``documents_sha256``) and population size: a run from another task is
    refused, never scored against the wrong population.
    """
    from_run = run_sample(run_attrs)
    if task_sample:
        if from_run and from_run.get("documents_sha256") and not str(task_sample.get("documents_sha256", "")
                                                                      ).startswith(str(from_run["documents_sha256"])):
            raise QrelsRunMismatchError(
                f"the run was made on another document sample (k={from_run.get('k')}, seed={from_run.get('seed')}) "
                f"than the task's (k={task_sample.get('k')}, seed={task_sample.get('seed')}); evaluate it on the "
                "task it was made on.")
        return dict(task_sample)
    if not from_run:
        return None
    source = run_attrs.get("source") or "the run"
    pool, where = _documents_frame(task, from_run.get("strata"))
    if pool is None:
        raise RagcovError(f"{source} was made on a document sample, but the task has no `doc_id` column; evaluate "
                          "it on the chunked task it was made on.")
    ids, labels = eligible_documents(pool, from_run.get("strata"), where)
    rec = draw(ids, from_run["k"], from_run["seed"], labels)
    rec["strata"] = from_run.get("strata")
    want = from_run.get("documents_sha256")
    if want and not rec["documents_sha256"].startswith(str(want)):
        raise QrelsRunMismatchError(
            f"{source} was made on a sample of {from_run['k']} documents (seed {from_run['seed']}) of another task: "
            f"drawn again on this task's {len(ids)} documents it gives other documents. Evaluate it on the task "
            "it was made on (same acervo and chunking).")
    pop = (from_run.get("population") or {}).get("documents")
    if pop is not None and int(pop) != len(ids):
        raise QrelsRunMismatchError(
            f"{source} was made on a population of {pop} documents; this task has {len(ids)}. Evaluate it on the "
            "task it was made on.")
    rec["queries"] = None
    return rec


def population_for_eval(rec: Mapping[str, Any], cluster: str, strata: str | None, notices: list[str]) -> Any:
    """``population_sizes`` for :func:`ragcov_data.eval.evaluate` from a sample record, or None.

    One-stage (no ``strata`` in the evaluation): N. With ``strata`` equal to the sample's strata:
    ``{"documents": {h: N_h}, "strata": H}`` with H the strata that got documents (a stratified design over
    them; strata allocated none are named in a notice: the estimate does not cover them). The correction
    needs the evaluation's unit to be the sampled one (``doc_id``); otherwise none is applied, said in a notice.
    """
    pop = rec.get("population") or {}
    if cluster != rec.get("unit", UNIT):
        notices.append(f"the task is a sample of {rec.get('k')} documents of {pop.get('documents')}, but the "
                       f"evaluation clusters by {cluster!r}: no finite-population correction applied.")
        return None
    k, n = int(rec["k"]), int(pop["documents"])
    if strata is None:
        notices.append(f"the queries are those of a sample of {k} of {n} documents (seed {rec.get('seed')}"
                       + (f", within {rec['strata']}" if rec.get("strata") else "")
                       + f"): finite-population correction 1 - K/N = {1 - k / n:.4f} applied to the variance of "
                       "the analytic intervals (--no-fpc / fpc=False: none).")
        return float(n)
    if strata == rec.get("strata") and pop.get("per_stratum"):
        alloc = rec.get("allocation") or {}
        per = {str(h): float(n) for h, n in pop["per_stratum"].items() if alloc.get(h, 1) > 0}
        empty = sorted(h for h, a in alloc.items() if a == 0)
        if empty:
            notices.append(f"{len(empty)} strata of {strata!r} got no document in the sample ({', '.join(empty[:5])}"
                           f"{', ...' if len(empty) > 5 else ''}): the stratified estimate covers the other "
                           f"{len(per)} strata only.")
        return {"documents": per, "strata": float(len(per))}
    drawn = f"within {rec.get('strata')!r}" if rec.get("strata") else "without strata"
    notices.append(f"the documents were drawn {drawn}; evaluated with strata {strata!r}, no automatic finite-"
                   "population correction (give --stratum-sizes for one).")
    return None


def restrict_frames(task: Any, run_attrs: Mapping[str, Any], frames: dict[str, Any]
                    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The evaluator's hook: the sample behind ``task``/the run (or None), and ``frames`` (queries, qrels,
    corpus) restricted to the sampled documents' queries — a no-op on a task already sampled."""
    rec = resolve_for_eval(sample_of(task), run_attrs, task)
    if rec is None:
        return frames, None
    queries = frames["queries"]
    if "doc_id" not in queries.columns:
        raise RagcovError("the run was made on a document sample, but the task's queries have no `doc_id`; "
                          "evaluate it on the chunked task it was made on.")
    keep = queries["doc_id"].astype(str).isin(pd.Index(rec["documents"])).to_numpy()
    if keep.all():
        return frames, rec
    queries = queries.loc[keep].reset_index(drop=True)
    qrels = frames["qrels"]
    qrels = qrels.loc[qrels["query-id"].astype(str).isin(pd.Index(queries["_id"].astype(str)))].reset_index(drop=True)
    return {**frames, "queries": queries, "qrels": qrels}, rec


def eval_info(rec: Mapping[str, Any] | None, population_sizes: Any, applied: bool) -> dict[str, Any]:
    """``population_clusters`` (documents in the population the intervals were corrected for; None: none,
    treated as infinite) and the ``sample`` summary recorded in an evaluation's ``info``."""
    if rec is None:
        if population_sizes is None:
            return {"population_clusters": None}
        if isinstance(population_sizes, Mapping):
            docs = population_sizes.get("documents")
            total = sum(docs.values()) if isinstance(docs, Mapping) else docs
            return {"population_clusters": None if total is None else float(total)}
        return {"population_clusters": float(population_sizes)}
    pop = rec.get("population") or {}
    keep = ("k", "seed", "strata", "unit", "allocation", "documents_sha256")
    return {"population_clusters": int(pop["documents"]) if applied else None,
            "sample": {**{key: rec.get(key) for key in keep}, "population": pop, "fpc": bool(applied)}}


__all__ = ["restrict_frames", "eval_info", "SAMPLE_KEY", "SAMPLE_RULE", "ALLOCATION_RULE", "allocate", "draw", "sample_task", "sample_of",
           "sample_tag", "parse_tag", "run_sample", "resolve_for_eval", "population_for_eval", "eligible_documents",
           "docs_sha256", "check_k"]
