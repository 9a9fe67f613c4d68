"""``lgpd``: real exam questions on the LGPD, cited by LexML URN, over the LGPD and the LAI as published.

The shared ``lgpd/`` folder holds 352 multiple-choice and certo/errado questions from public-service exams,
each with the dispositivos its commented answer rests on as LexML URNs, and two acts as tables of their units
(the LGPD, Lei 13.709/2018, and the Lei de Acesso à Informação, Lei 12.527/2011, a second real act in the
index). The task is a cited-questions task (:mod:`ragcov_data.loaders.cited_questions`): the same configs,
chunkers, grades and splits as ``irpf``::

    import ragcov_data
    ds = ragcov_data.load_dataset("lgpd", data_dir="../shared/data")                  # article chunks
    ds = ragcov_data.load_dataset("lgpd", "words-200", data_dir="../shared/data")     # words-50/100/200, dispositivo,
                                                                                      # article, article-full
    held = ragcov_data.load_dataset("lgpd", data_dir="../shared/data", questions="heldout.jsonl")

Construction
------------
- the acts: each unit table rebuilt as a compiled page (:data:`~ragcov_data.loaders._unit_tables.REBUILD_RULE`:
  one dispositivo a line, headings on their own lines, page furniture stripped, nothing added);
- the questions (:data:`~ragcov_data.loaders._lgpd_questions.QUESTION_RULE`): the query is the statement with
  its alternatives, never the commented answer; the gold is ``URN_FUNDAMENTACAO``, each URN read by
  :func:`ragcov_data.legal.citations.parse_urn`; a URN of an act not here (another law, the Constitution, an
  ANPD resolution) or a source key (``enunciado_cd_anpd_1_2023``) resolves as ``act_not_in_corpus`` and makes
  its question ``partial``; every citation is in the ``citations`` split with its status and span;
- the unit of inference is the exam (``INFORMACOES_CONCURSO``): the queries carry it as ``exam`` and as
  ``topic`` (``ragcov eval --cluster exam``).

Another questions file of the same layout (the held-out half) is read with ``questions=PATH`` or
``data_files={"questions": PATH}`` (and ``"acts"``: other unit tables).
"""
from __future__ import annotations

import functools
import os
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

import datasets
import pandas as pd

from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.legal.acervo import sha256_file
from ragcov_data.loaders import chunkers
from ragcov_data.loaders._cited_gold import STATUS_TEXT, STATUSES, _table
from ragcov_data.loaders._lgpd_questions import QUESTION_RULE, read_lgpd_questions
from ragcov_data.loaders._unit_tables import REBUILD_RULE, unit_acervo
from ragcov_data.loaders.cited_questions import CitedQuestionsBuilder, CitedTask, build_cited_task
from ragcov_data.tasks.paths import data_dir as default_dir

__all__ = ["LGPDBuilder", "build_lgpd_task", "lgpd_dir", "lgpd_sources", "resolution_summary", "LGPD_FILES",
           "CLUSTER_RULE"]

#: Files of the shared ``lgpd`` folder: the unit tables of the acts and the questions.
LGPD_FILES = {"acts": ("lei_13709_20180814.csv", "lei_12527_20111118.csv"), "questions": "questoes.jsonl"}
CLUSTER_RULE = ("the exam (INFORMACOES_CONCURSO, board - body - post - year): questions of one exam were written "
                "and chosen together; queries columns exam and topic")


def lgpd_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder with the unit tables and ``questoes.jsonl``: ``data_dir`` itself or its ``lgpd/``."""
    base = Path(default_dir(None)) if data_dir is None else Path(data_dir).expanduser()
    names = [*LGPD_FILES["acts"], LGPD_FILES["questions"]]
    for folder in (base, base / "lgpd"):
        if all((folder / f).is_file() for f in names):
            return folder.resolve()
    raise InputFileError(f"{str(base)!r} has neither {names} nor an lgpd/ folder with them; pass `data_dir=` the "
                         "shared data folder (or its lgpd/ folder).")


def lgpd_sources(data_dir: str | os.PathLike | None = None, acts: Any = None,
                 questions: str | os.PathLike | None = None) -> tuple[tuple[str, ...], str]:
    """The unit tables and the questions file to read: those given, else the shared folder's."""
    if acts is None or questions is None:
        folder = lgpd_dir(data_dir)
        acts = [folder / a for a in LGPD_FILES["acts"]] if acts is None else acts
        questions = folder / LGPD_FILES["questions"] if questions is None else questions
    acts = [acts] if isinstance(acts, (str, os.PathLike)) else list(acts)
    if not acts:
        raise InputFileError("no unit table given; pass the acts' tables (e.g. lei_13709_20180814.csv).")
    return tuple(str(Path(a).expanduser().resolve()) for a in acts), str(Path(questions).expanduser().resolve())


def build_lgpd_task(acts: Any = None, questions: str | os.PathLike | None = None, *,
                    data_dir: str | os.PathLike | None = None, dataset: str = "lgpd", warn: bool = True,
                    **kw: Any) -> CitedTask:
    """Build the ``lgpd`` task (see the module docstring).

    Parameters
    ----------
    acts : path or list of paths, optional
        Unit tables (default: the shared folder's LGPD and LAI).
    questions : path, optional
        A questions file of the ``lgpd`` layout (default: the shared ``questoes.jsonl``; the held-out half here).
    data_dir : path, optional
        The shared data folder (or its ``lgpd/``), for what is not given.
    **kw
        Every option of :func:`ragcov_data.loaders.cited_questions.build_cited_task` (``chunking``,
        ``chunk_words``, ``granularity``, ``coverage``, ``chunker`` ...).
    """
    acts_files, qfile = lgpd_sources(data_dir, acts, questions)
    acervo, _ = unit_acervo(list(acts_files))
    records = read_lgpd_questions(qfile, _table(acervo.documents))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task = build_cited_task(acervo, records, dataset=dataset, warn=warn, **kw)
    for w in caught:  # said again from here, so the caller's line is the one named
        warnings.warn(w.message, w.category, stacklevel=2)
    exams = {r["qid"]: r["exam"] for r in records}
    q = task.queries
    q.insert(q.columns.get_loc("topic") + 1, "exam", q["_id"].map(exams).astype("str"))
    m = task.manifest
    p = Path(qfile)
    m["sources"].append({"name": p.name, "path": str(p), "sha256": sha256_file(p)})
    m["rules"].update(acts=REBUILD_RULE, questions=QUESTION_RULE, cluster=CLUSTER_RULE)
    m["counts"]["exams"] = int(q["exam"].nunique())
    m["uncovered_references"] = {r["qid"]: r["uncovered_references"] for r in records if r["uncovered_references"]}
    return task


def resolution_summary(task: Any) -> pd.DataFrame:
    """Every citation of a cited-questions task counted by status: ``status``, ``citations``, ``questions``,
    ``meaning`` and a few ``examples`` (``question: citation``), resolved first; what the manifest lists one by
    one (``unresolved``, ``dispositivo_not_found``) in one table to print."""
    cits = task["citations"]
    cits = cits if isinstance(cits, pd.DataFrame) else cits.to_pandas()
    rows = []
    for status in STATUSES:
        sub = cits[cits["status"] == status]
        if len(sub):
            rows.append({"status": status, "citations": int(len(sub)), "questions": int(sub["query-id"].nunique()),
                         "meaning": "located: the provision's span in its act" if status == "resolved"
                         else STATUS_TEXT[status],
                         "examples": "" if status == "resolved" else "; ".join(
                             f"{q}: {c}" for q, c in zip(sub["query-id"][:3], sub["citation"][:3]))})
    return pd.DataFrame(rows, columns=["status", "citations", "questions", "meaning", "examples"])


# --------------------------------------------------------------------------- the datasets builder


@functools.lru_cache(maxsize=8)
def _cached(acts: tuple[str, ...], questions: str, fingerprint: str, cfg: tuple) -> CitedTask:
    chunking, chunk_words, query_words, min_words, max_words, granularity, gold, coverage, dataset, name = cfg[:10]
    chunker = chunkers.by_key(cfg[11], cfg[10]) if cfg[10] else None
    return build_lgpd_task(list(acts), questions, dataset=dataset, chunking=chunking, chunk_words=chunk_words,
                           query_words=query_words, min_words=min_words, max_words=max_words,
                           granularity=granularity, gold=gold, coverage=coverage, config_name=name, chunker=chunker)


class LGPDBuilder(CitedQuestionsBuilder):
    """``lgpd``: the shared LGPD questions over the LGPD and the LAI (``data_dir=`` a folder with ``lgpd/`` or
    the folder itself; default ``$RAGCOV_DATA_DIR``); another questions file of the same layout with
    ``questions=PATH`` or ``data_files={"questions": PATH[, "acts": unit tables]}``."""

    DATASET = "lgpd"
    #: Keywords of ``load_dataset("lgpd", ...)`` beside the config's fields.
    BUILDER_KWARGS = ("questions",)

    def __init__(self, *args: Any, data_dir: Any = None, questions: Any = None, data_files: Any = None,
                 **kwargs: Any) -> None:
        given = {"acts": kwargs.pop("acts_files", None), "questions": kwargs.pop("questions_file", None)}
        if any(v is not None for v in given.values()) and (data_files is None or isinstance(data_files, Mapping)):
            # the config's own fields (acts_files, questions_file), as a saved config holds them
            data_files = {**{k: v for k, v in given.items() if v is not None}, **(data_files or {})}
        acts, q = _files(data_files, questions)
        kwargs["acts_files"], kwargs["questions_file"] = lgpd_sources(data_dir, acts, q)
        super().__init__(*args, **kwargs)

    @staticmethod
    def _acts_documents(acts_files: Sequence[str]) -> list:
        return unit_acervo(list(acts_files))[0].documents

    def task(self) -> CitedTask:
        """The :class:`CitedTask` this builder serves (built once per process and source content)."""
        acts, q = self._sources(self.config)
        return _cached(acts, q, self._fingerprint(acts, q), self._cfg(self.config))

    def _split_features(self) -> dict[str, datasets.Features]:
        feats = super()._split_features()
        feats["queries"] = datasets.Features({**feats["queries"], "exam": datasets.Value("string")})
        order = list(self.task().queries.columns)
        feats["queries"] = datasets.Features({c: feats["queries"][c] for c in order})
        return feats


def _files(data_files: Any, questions: Any) -> tuple[Any, Any]:
    """``(acts, questions)`` from ``data_files`` (a dict with ``questions`` and/or ``acts``) and ``questions``."""
    if data_files is None:
        return None, questions
    if not isinstance(data_files, Mapping) or not data_files or set(data_files) - {"acts", "questions"}:
        raise InputFileError("`data_files` of lgpd must be a dict with 'questions' (a questions file of the lgpd "
                             "layout) and/or 'acts' (unit tables); got "
                             f"{data_files if not isinstance(data_files, Mapping) else sorted(data_files)!r}.")
    q = data_files.get("questions")
    if q is not None and not isinstance(q, (str, os.PathLike)):
        q = list(q)
        if len(q) != 1:
            raise InputFileError(f"`data_files['questions']` must be one file; got {len(q)}.")
        q = q[0]
    if q is not None and questions is not None and Path(q).resolve() != Path(questions).resolve():
        raise RagcovError(f"two questions files given ({questions!r} as `questions=`, {q!r} in `data_files`); "
                          "give one.")
    return data_files.get("acts"), questions if questions is not None else q
