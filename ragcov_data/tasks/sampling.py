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
sample again from ``(K, seed, strata)``.

With ``strata`` (a document column such as ``doc_type``) the K documents are allocated to strata by
systematic randomised rounding of the proportional quotas ``q_h = K N_h / N`` (:data:`ALLOCATION_RULE`,
:func:`allocate`): ``k_h`` is ``floor(q_h)`` or ``ceil(q_h)``, with ``E[k_h] = q_h`` exactly and
``sum k_h = K``, the rounding driven by the seed. So every stratum with an eligible document can be
drawn (a stratum of quota 0.3 gets a document in 30% of the seeds), every document's inclusion
probability is ``E[k_h] / N_h = K / N`` (the sample is self-weighting), and the seed matters in every
stratum, singletons included. Within a stratum the ``k_h`` smallest keys are drawn.

The record (``manifest["sample"]``, and a run's ``attrs["sample"]``): ``k``, ``seed``, ``strata``,
``population`` (``documents`` N, ``per_stratum`` N_h and, once a task is sampled, ``queries``: the
census's queries), ``allocation`` (k_h), ``allocation_scheme``, ``design`` (per stratum N_h, the
expected and the drawn k_h, the inclusion probability E[k_h]/N_h and, given the drawn allocation,
k_h/N_h), ``inclusion_probabilities`` (every sampled document's), ``documents`` (the sampled ids,
sorted), ``documents_sha256``, ``unit`` and the rules. :func:`design_weights` gives the weights 1/pi the
evaluator needs. A TREC run has no metadata, so its tag carries the spec
(``bm25;sample:k=20,seed=0,docs=<sha12>``, see :func:`sample_tag`).

Samples drawn by earlier versions within strata used a fixed largest-remainder allocation
(:data:`LEGACY_ALLOCATION_RULE`): strata whose quota rounded to 0 could never be drawn and k_h/N_h
differed between strata. Such records are still recognised (a run's tag is matched against both
allocations); their inclusion probabilities are unequal, so scoring them as one simple random sample is
refused (:func:`population_for_eval`) unless the evaluation weights by them or is stratified.
"""
from __future__ import annotations

import hashlib
import math
import re
from fractions import Fraction
from typing import Any, Mapping, Sequence
from urllib.parse import quote, unquote

import numpy as np
import pandas as pd

from ragcov_data.errors import QrelsRunMismatchError, RagcovError
from ragcov_data.tasks.record import Task, manifest_of

SAMPLE_KEY = "sample"
UNIT = "doc_id"
SAMPLE_RULE = ("documents drawn without replacement: each eligible document gets the key "
               "sha256('ragcov-sample\\0<seed>\\0<doc_id>'); the K documents with the smallest keys are the "
               "sample (with strata: the k_h smallest within each stratum). Queries and qrels of the sampled "
               "documents only; the corpus keeps every eligible document.")
ALLOCATION_SCHEME = "systematic"
ALLOCATION_RULE = ("proportional quotas q_h = K * N_h / N rounded by systematic randomised rounding: strata in the "
                   "order of their keys sha256('ragcov-allocate\\0<seed>\\0<label>'), u = the first 64 bits of "
                   "sha256('ragcov-allocate\\0<seed>') / 2^64, k_h = floor(C_h - u) - floor(C_{h-1} - u) with C_h "
                   "the cumulative quotas; so k_h is floor(q_h) or ceil(q_h), E[k_h] = q_h, sum k_h = K, every "
                   "stratum can be drawn, and every document's inclusion probability is E[k_h] / N_h = K / N "
                   "(self-weighting)")
LEGACY_ALLOCATION_RULE = ("proportional: k_h = K * N_h / N, rounded by largest remainder (equal remainders: larger "
                          "N_h, then label); a stratum whose quota rounds to 0 gets no document (recorded as 0)")
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


def _largest_remainder(k: int, sizes: Mapping[str, int]) -> dict[str, int]:
    labels = sorted(sizes)
    n = sum(sizes.values())
    quota = {h: k * sizes[h] / n for h in labels}
    alloc = {h: int(np.floor(quota[h])) for h in labels}
    rest = k - sum(alloc.values())
    order = sorted(labels, key=lambda h: (-(quota[h] - alloc[h]), -sizes[h], h))
    for h in order[:rest]:
        alloc[h] += 1
    return alloc


def _uniform(seed: int) -> Fraction:
    """The seed's offset u in [0, 1) of the systematic rounding (exact: 64 bits of a hash over 2^64)."""
    digest = hashlib.sha256(f"ragcov-allocate\0{int(seed)}".encode()).digest()
    return Fraction(int.from_bytes(digest[:8], "big"), 2 ** 64)


def _systematic(k: int, sizes: Mapping[str, int], seed: int) -> dict[str, int]:
    n = sum(sizes.values())
    order = sorted(sizes, key=lambda h: hashlib.sha256(f"ragcov-allocate\0{int(seed)}\0{h}".encode(
        "utf-8", "surrogatepass")).hexdigest())
    u = _uniform(seed)
    alloc, cum, before = {}, 0, math.floor(-u)
    for h in order:
        cum += sizes[h]
        after = math.floor(Fraction(k * cum, n) - u)  # points u, u+1, ... in (C_{h-1}, C_h]
        alloc[h] = after - before
        before = after
    return {h: alloc[h] for h in sorted(alloc)}


def allocate(k: int, sizes: Mapping[str, int], seed: int | None = None) -> dict[str, int]:
    """Allocation of ``k`` documents to strata of ``sizes`` (documents N_h per stratum label).

    With ``seed``: systematic randomised rounding of the proportional quotas ``q_h = k N_h / N``
    (:data:`ALLOCATION_RULE`, what :func:`draw` uses): ``k_h`` is ``floor(q_h)`` or ``ceil(q_h)``,
    ``E[k_h] = q_h`` exactly over seeds, ``sum k_h = k``. Without: the fixed largest-remainder rounding of
    earlier versions (:data:`LEGACY_ALLOCATION_RULE`), kept to recognise their samples; under it a stratum
    whose quota rounds to 0 is never drawn.
    """
    if seed is None:
        return _largest_remainder(k, sizes)
    return _systematic(k, sizes, seed)


def _design(k: int, per_stratum: Mapping[str, int], alloc: Mapping[str, int], scheme: str | None
            ) -> dict[str, dict[str, float]]:
    """Per stratum: N_h, expected and drawn k_h, inclusion probability, and k_h/N_h given the allocation."""
    n = sum(per_stratum.values())
    out = {}
    for h, n_h in per_stratum.items():
        # exact fractions, so equal probabilities are equal floats; the legacy allocation is fixed: E[k_h] = k_h
        expected = Fraction(k * n_h, n) if scheme == ALLOCATION_SCHEME else Fraction(alloc[h])
        out[h] = {"documents": int(n_h), "expected_k": float(expected), "k": int(alloc[h]),
                  "inclusion_probability": float(expected / n_h), "k_over_n": float(Fraction(alloc[h], n_h))}
    return out


def draw(doc_ids: Sequence[str], k: int, seed: int = 0, strata: Sequence[str] | None = None, *,
         scheme: str = ALLOCATION_SCHEME) -> dict[str, Any]:
    """Draw ``k`` of ``doc_ids`` (distinct) without replacement; returns the sample record.

    ``strata`` (one label per document) draws within strata, allocated by :func:`allocate` with the
    seed (``scheme="largest-remainder"``: the fixed allocation of earlier versions, to redraw their
    samples). The record gives every sampled document's inclusion probability (see the module notes).
    """
    ids = [str(d) for d in doc_ids]
    if len(set(ids)) != len(ids):
        raise RagcovError("`doc_ids` must be distinct to draw documents.")
    k = check_k(k, len(ids))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RagcovError(f"the sample seed must be an integer; got {seed!r}.")
    if scheme not in (ALLOCATION_SCHEME, "largest-remainder"):
        raise RagcovError(f"`scheme` must be {ALLOCATION_SCHEME!r} or 'largest-remainder'; got {scheme!r}.")
    keys = _keys(ids, seed)
    design = None
    if strata is None:
        chosen = [ids[i] for i in sorted(range(len(ids)), key=lambda i: keys[i])[:k]]
        per_stratum, alloc, used = None, None, None
        pi = {d: k / len(ids) for d in chosen}
    else:
        labels = [str(h) for h in strata]
        if len(labels) != len(ids):
            raise RagcovError(f"`strata` has {len(labels)} labels for {len(ids)} documents; give one a document.")
        members: dict[str, list[int]] = {}
        for i, h in enumerate(labels):
            members.setdefault(h, []).append(i)
        per_stratum = {h: len(members[h]) for h in sorted(members)}
        used = scheme
        alloc = allocate(k, per_stratum, int(seed) if scheme == ALLOCATION_SCHEME else None)
        design = _design(k, per_stratum, alloc, scheme)
        chosen, pi = [], {}
        for h in per_stratum:
            docs_h = [ids[i] for i in sorted(members[h], key=lambda i: keys[i])[:alloc[h]]]
            chosen += docs_h
            pi.update((d, design[h]["inclusion_probability"]) for d in docs_h)
    docs = sorted(chosen)
    return {
        "unit": UNIT, "k": k, "seed": int(seed), "strata": None,
        "population": {"documents": len(ids), "per_stratum": per_stratum},
        "allocation": alloc, "documents": docs, "documents_sha256": docs_sha256(docs),
        "rule": SAMPLE_RULE,
        "allocation_rule": None if strata is None else ALLOCATION_RULE if used == ALLOCATION_SCHEME
        else LEGACY_ALLOCATION_RULE,
        "allocation_scheme": used, "design": design,
        "inclusion_probabilities": {d: float(pi[d]) for d in docs},
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

    ``task`` is a :class:`ragcov_data.tasks.record.Task` (or anything with corpus/queries/qrels DataFrames and a
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
    rec["population"]["queries"] = int(len(task.queries))  # the census's queries: the micro mean's denominator
    per_doc = task.queries["doc_id"].astype(str).value_counts()
    rec["population"]["sizes"] = {d: int(per_doc.get(d, 0)) for d in ids}  # every document's queries (known_sizes)
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
    if task_sample and task_sample.get("strata") and "inclusion_probabilities" not in task_sample:
        task_sample = _complete_legacy(task_sample, task)
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
    want = from_run.get("documents_sha256")
    scheme = from_run.get("allocation_scheme")
    if scheme is None and from_run.get("allocation"):  # the full record of an earlier version's stratified draw
        scheme = "largest-remainder"
    if isinstance(from_run["k"], (int, np.integer)) and from_run["k"] > len(ids):  # not "drop --sample-docs":
        raise QrelsRunMismatchError(  # eval has no such option, and the run was made on another task
            f"{source} was made on a sample of {from_run['k']} documents, but this task has only {len(ids)} eligible "
            "documents: the run was made on another task (another acervo, chunk size or data folder). Evaluate it "
            "on the task it was made on (the same --data-dir/--data-files, --chunk-words and --sample-docs "
            f"{from_run['k']} --seed {from_run['seed']}), or make the run again on this task.")
    rec = draw(ids, from_run["k"], from_run["seed"], labels, scheme=scheme or ALLOCATION_SCHEME)
    if (labels is not None and from_run.get("allocation_scheme") is None and want
            and not rec["documents_sha256"].startswith(str(want))):
        # a run tag carries no scheme: an earlier version's stratified draw used the fixed allocation
        legacy = draw(ids, from_run["k"], from_run["seed"], labels, scheme="largest-remainder")
        if legacy["documents_sha256"].startswith(str(want)):
            rec = legacy
    rec["strata"] = from_run.get("strata")
    try:
        rec["population"]["queries"] = int(len(task["queries"]))
    except (KeyError, TypeError):
        pass
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


class DocumentPopulation(float):
    """The number of population documents N (a float, as every finite-population consumer reads it) that
    also knows each population document's number of queries (``sizes``, length N): what the ``known_sizes``
    interval needs (:mod:`ragcov_data.eval.estimates._kernels`)."""

    sizes: np.ndarray

    def __new__(cls, documents: float, sizes: Any) -> "DocumentPopulation":
        obj = super().__new__(cls, float(documents))
        obj.sizes = np.asarray(sizes, dtype=float)
        return obj

    def __reduce__(self) -> tuple:  # pickle / copy keep the sizes (float's own reduction would drop them)
        return (type(self), (float(self), self.sizes))


def census_sizes(rec: Mapping[str, Any], census_queries: pd.DataFrame | None) -> np.ndarray | None:
    """Queries of every population document of a sample: recorded by :func:`sample_task` (``population
    ["sizes"]``), else counted in the census's queries (a census task read with a sampled run); None when
    neither is there or the count does not match the recorded population."""
    pop = rec.get("population") or {}
    n = pop.get("documents")
    sizes = pop.get("sizes")
    if sizes is not None:
        out = np.asarray(list(sizes.values()) if isinstance(sizes, Mapping) else sizes, dtype=float)
    elif census_queries is not None and "doc_id" in census_queries.columns:
        out = census_queries["doc_id"].astype(str).value_counts(sort=False).to_numpy(dtype=float)
    else:
        return None
    return out if n is not None and len(out) == int(n) and (out >= 0).all() else None


def population_for_eval(rec: Mapping[str, Any], cluster: str, strata: str | None, notices: list[str], *,
                        weighted: bool = False) -> Any:
    """``population_sizes`` for :func:`ragcov_data.eval.evaluate` from a sample record, or None.

    One-stage (no ``strata`` in the evaluation): N. With ``strata`` equal to the sample's strata:
    ``{"documents": {h: N_h}, "strata": H}`` with H the strata that got documents (a stratified design over
    them; strata allocated none are named in a notice: the estimate does not cover them). The correction
    needs the evaluation's unit to be the sampled one (``doc_id``); otherwise none is applied, said in a notice.

    A sample whose documents had unequal inclusion probabilities (a stratified sample of an earlier
    version, see the module notes) is refused unless the evaluation is stratified by the sample's strata
    or ``weighted`` (the caller weights every query by :func:`design_weights`): an unweighted mean over
    it is biased.
    """
    pop = rec.get("population") or {}
    if not weighted and not (strata is not None and strata == rec.get("strata")):
        problem = unequal_probabilities(rec)
        if problem:
            raise RagcovError(problem)
    if cluster != rec.get("unit", UNIT):
        notices.append(f"the task is a sample of {rec.get('k')} documents of {pop.get('documents')}, but the "
                       f"evaluation clusters by {cluster!r}: no finite-population correction applied.")
        return None
    k, n = int(rec["k"]), int(pop["documents"])
    if strata is None:
        notices.append(f"the queries are those of a sample of {k} of {n} documents (seed {rec.get('seed')}"
                       + (f", within {rec['strata']}" if rec.get("strata") else "")
                       + f"): finite-population correction 1 - K/N = {1 - k / n:.4f} applied to the variance of "
                       "the analytic macro intervals, not to micro, where it under-covers (--no-fpc / fpc=False: none).")
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
    if rec.get("inclusion_probabilities") is not None or not rec.get("strata"):
        rec = {**rec, "weights": design_weights(rec)}  # 1/pi per sampled document, for a weighted estimate
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


def _stratum_probabilities(rec: Mapping[str, Any]) -> dict[str, float] | None:
    """Inclusion probability of each stratum's documents (None without strata)."""
    design = rec.get("design")
    if design:
        return {h: float(d["inclusion_probability"]) for h, d in design.items()}
    per, alloc = (rec.get("population") or {}).get("per_stratum"), rec.get("allocation")
    if not per or not alloc:
        return None
    return {h: alloc.get(h, 0) / n for h, n in per.items()}  # a fixed allocation: k_h / N_h


def unequal_probabilities(rec: Mapping[str, Any]) -> str | None:
    """Why an unweighted mean over this sample is biased (unequal inclusion probabilities), else None."""
    probs = _stratum_probabilities(rec)
    if not probs:
        return None
    values = list(probs.values())
    if max(values) - min(values) <= 1e-12 * max(values):
        return None
    never = sorted(h for h, p in probs.items() if p == 0)
    strata = rec.get("strata")
    return (f"the {rec.get('k')} sampled documents were drawn within {strata!r} by a fixed allocation of an earlier "
            f"ragcov, so their inclusion probabilities differ (k_h/N_h from {min(values):.3g} to {max(values):.3g}"
            + (f"; {len(never)} strata could never be drawn" if never else "")
            + f"): an unweighted mean over them is biased. Evaluate with --strata {strata} (strata=...: a "
            f"stratified estimate over the drawn strata), or draw the sample again with this version "
            f"(--sample-docs {rec.get('k')} --strata {strata}), whose documents all have probability K/N.")


def design_weights(rec: Mapping[str, Any]) -> dict[str, float]:
    """Weight 1/pi of every sampled document (pi: its inclusion probability; K/N in every design this
    version draws). Horvitz-Thompson: a total is estimated by sum_i w_i y_i over the sampled documents."""
    probs = rec.get("inclusion_probabilities")
    if probs is None:
        if rec.get("strata"):
            raise RagcovError("the sample record has no inclusion probabilities per document (a stratified "
                              "sample of an earlier ragcov); evaluate it on the task it was made on.")
        n = (rec.get("population") or {}).get("documents")
        probs = {d: int(rec["k"]) / int(n) for d in rec["documents"]}
    zero = [d for d, p in probs.items() if not float(p) > 0]
    if zero:
        raise RagcovError(f"sampled document {zero[0]!r} has inclusion probability 0 in the record; the record is "
                          "damaged or from another task: draw the sample again.")
    return {str(d): 1.0 / float(p) for d, p in probs.items()}


def weights_summary(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The ``weights`` item of an evaluation's sample summary: 1/pi per stratum (or one value), and
    whether they are equal (then the plain mean over sampled queries is the weighted one)."""
    probs = _stratum_probabilities(rec)
    rule = "1/pi, pi = the probability that a document is in the sample (E[k_h]/N_h within strata)"
    if probs is None:
        n = (rec.get("population") or {}).get("documents")
        return {"rule": rule, "equal": True, "value": None if not n else float(n) / int(rec["k"])}
    w = {h: (1.0 / p if p > 0 else None) for h, p in probs.items()}
    return {"rule": rule, "equal": unequal_probabilities(rec) is None, "per_stratum": w}


def micro_estimates(values: Sequence[float], doc_ids: Sequence[str], rec: Mapping[str, Any],
                    population_queries: int | None = None) -> dict[str, float]:
    """Weighted micro means (mean over queries) of a document sample, from per-query ``values``.

    Returns ``horvitz_thompson`` = sum_i w_i Y_i / Q (Y_i: the sum over document i's queries; Q: the
    census's queries, ``population_queries`` or the record's ``population["queries"]``), unbiased over
    draws; and ``hajek`` = sum_i w_i Y_i / sum_i w_i n_i, the ratio estimator (equal weights: the plain
    mean over the sampled queries), biased by O(1/K) when documents' sizes vary with their means.
    """
    w = design_weights(rec)
    frame = pd.DataFrame({"doc": [str(d) for d in doc_ids], "y": np.asarray(values, dtype=float)})
    per = frame.groupby("doc", sort=False)["y"].agg(["sum", "count"])
    missing = sorted(set(per.index) - set(w))
    if missing:
        raise RagcovError(f"{len(missing)} documents of the values are not in the sample (first: {missing[0]!r}).")
    weights = per.index.map(w).to_numpy(dtype=float)
    total_q = population_queries if population_queries is not None else (rec.get("population") or {}).get("queries")
    out = {"hajek": float((weights * per["sum"]).sum() / (weights * per["count"]).sum())}
    out["horvitz_thompson"] = float("nan") if not total_q else float((weights * per["sum"]).sum() / total_q)
    return out


def _complete_legacy(rec: Mapping[str, Any], task: Any) -> dict[str, Any]:
    """A stratified record of an earlier version, given per-document inclusion probabilities k_h/N_h."""
    out = dict(rec)
    probs = _stratum_probabilities(rec) or {}
    pool, _ = _documents_frame(task, rec.get("strata"))
    if pool is None or rec.get("strata") not in pool.columns:
        return out
    label = pool.astype({"doc_id": str}).drop_duplicates("doc_id").set_index("doc_id")[rec["strata"]].astype(str)
    out["inclusion_probabilities"] = {d: float(probs.get(label.get(d), 0.0)) for d in rec["documents"]}
    out.setdefault("allocation_scheme", "largest-remainder")
    return out


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
    keep = ("k", "seed", "strata", "unit", "allocation", "documents_sha256", "allocation_scheme")
    return {"population_clusters": int(pop["documents"]) if applied else None,
            "sample": {**{key: rec.get(key) for key in keep}, "population": pop, "fpc": bool(applied),
                       "weights": weights_summary(rec)}}


__all__ = ["restrict_frames", "eval_info", "SAMPLE_KEY", "SAMPLE_RULE", "ALLOCATION_RULE", "LEGACY_ALLOCATION_RULE",
           "ALLOCATION_SCHEME", "allocate", "draw", "sample_task", "sample_of", "design_weights", "weights_summary",
           "micro_estimates", "unequal_probabilities",
           "sample_tag", "parse_tag", "run_sample", "resolve_for_eval", "population_for_eval", "census_sizes",
           "DocumentPopulation", "eligible_documents",
           "docs_sha256", "check_k"]
