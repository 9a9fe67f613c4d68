"""JurisTCU-format adapter: a legal IR benchmark with graded relevance (0-3), as a ``datasets`` builder.

Reads the three files of the JurisTCU dataset (Fernandes et al., 2025) -- ``doc.csv``, ``query.csv``,
``qrel.csv`` -- in either published layout and returns the common task schema (``corpus``,
``queries``, ``qrels``)::

    import ragcov_data
    ds = ragcov_data.load_dataset("juristcu", data_dir="../shared/data")           # enunciado (default)
    ds = ragcov_data.load_dataset("juristcu", "both", data_dir="path/to/JurisTCU")   # 2025 layout only

Layouts
-------
2023 (GitHub ``marcusborela/ind-ir``; the files shipped in the shared data folder)
    ``doc.csv``: ``ID, TEXT`` (the enunciado); ``query.csv``: ``ID, TEXT, SOURCE``;
    ``qrel.csv``: ``QUERY_ID, DOC_ID, SCORE, ENGINE, RANK``.
2025 (Hugging Face ``LeandroRibeiro/JurisTCU``)
    ``doc.csv``: an id (``KEY``, e.g. ``JURISPRUDENCIA-SELECIONADA-13``, or ``ID``), the text fields
    ``ENUNCIADO`` (the holding) and ``EXCERTO`` (the excerpt of the decision, may hold HTML) and metadata
    columns (e.g. ``AREA``, ``TEMA``, ``SUBTEMA``, ``NUMACORDAO``, ``ANOACORDAO``, ``COLEGIADO``);
    ``query.csv`` and ``qrel.csv`` as in 2023 (``ENGINE``/``RANK`` optional). The field separator is
    detected (``,``, ``|``, ``;`` or tab). Without an ``ID`` column the document id is the trailing number
    of ``KEY`` (the number the qrels' ``DOC_ID`` uses), or ``KEY`` itself when that is not unique.

Output
------
corpus: ``_id`` (= ``doc_id``), ``doc_id``, ``chunk_index`` (0), ``text`` (HTML stripped, whitespace
collapsed), then metadata (2025: every other column, lower-cased names, as strings).
queries: ``_id``, ``text``, ``group`` (``G1`` = ``search log``, ``G2`` = ``expression from LLM question``,
``G3`` = ``LLM``), ``source_key``, ``source``. G2 query ``i`` and G3 query ``i + 50`` were written from the
same source summary, so they share ``source_key`` (``s051`` ... ``s100``, the G2 id); each G1 query has its
own (``s001`` ...). Cluster on ``source_key`` when pooling G2 and G3.
qrels: ``query-id``, ``corpus-id``, ``score`` (graded 0-3, kept), ``engine``, ``rank`` (null if absent).

Qrels naming unknown documents or queries are kept (a relevant document missing from a corpus subset is
still relevant) and reported -- count and examples -- in a warning and in the manifest (``strict=True``
makes them an error). The manifest (JSON in each split's ``info.description``, read it with
:func:`ragcov_data.tasks.record.manifest_of`) also records the layout, sources with sha256, counts per group and
grade, and :data:`SUBSET_NOTE` when the corpus is the 3,022-document subset.

Outside scorers: seven document ids of the shared files equal query ids (13, 30, 32, 65, 83, 109, 115) and
no query has an own document, so score with BEIR's ``ignore_identical_ids=False`` (its default ``True``
would drop those documents from the runs of the queries with the same id).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pandas as pd

from ragcov_data import __version__
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.legal.acervo import html_to_text
from ragcov_data.loaders.base import TaskBuilder
from ragcov_data.tasks.paths import default_source
from ragcov_data.tasks.qrels import grade_problems
from ragcov_data.tasks.record import manifest_description

FILES = ("doc.csv", "query.csv", "qrel.csv")

#: SOURCE value in query.csv -> query group.
GROUPS = {"search log": "G1", "expression from LLM question": "G2", "LLM": "G3"}
GROUP_NAMES = {"G1": "real search-log keyword queries", "G2": "synthetic keyword queries",
               "G3": "synthetic questions"}

#: Text fields indexed by each config.
TEXT_FIELDS = {"enunciado": ("enunciado",), "excerto": ("excerto",), "both": ("enunciado", "excerto")}

#: Columns expected per layout (upper-cased header names).
LAYOUTS = {
    "2023": {"doc.csv": ["ID", "TEXT"], "query.csv": ["ID", "TEXT", "SOURCE"],
             "qrel.csv": ["QUERY_ID", "DOC_ID", "SCORE", "ENGINE", "RANK"]},
    "2025": {"doc.csv": ["KEY or ID", "ENUNCIADO", "EXCERTO", "(metadata...)"], "query.csv": ["ID", "TEXT", "SOURCE"],
             "qrel.csv": ["QUERY_ID", "DOC_ID", "SCORE", "(ENGINE)", "(RANK)"]},
}

#: Documents in the 2023 subset shipped with the shared data (judged + retrieved documents only).
SUBSET_DOCS = 3022
FULL_CORPUS_DOCS = 16045
SUBSET_NOTE = (
    f"The corpus is the {SUBSET_DOCS:,}-document subset of JurisTCU (all judged documents plus documents the "
    f"source project's retrievers returned), not the full {FULL_CORPUS_DOCS:,}-document corpus: figures are not "
    "comparable with the paper's full-corpus figures."
)

CORPUS_CORE = ("_id", "doc_id", "chunk_index", "text")
QUERY_COLUMNS = ("_id", "text", "group", "source_key", "source")
QREL_COLUMNS = ("query-id", "corpus-id", "score", "engine", "rank")
#: Documented relevance grades of qrel.csv (inclusive): 0 = not relevant ... 3 = highly relevant.
GRADE_RANGE = (0, 3)
_SEPARATORS = (",", "|", ";", "\t")
_TAG = re.compile(r"<[^>]+>")
_WS = re.compile(r"\s+")


# --------------------------------------------------------------------------- config


@dataclass
class JurisTCUConfig(datasets.BuilderConfig):
    """Config of the JurisTCU builder.

    Attributes
    ----------
    name : {'enunciado', 'excerto', 'both'}, default: 'enunciado'
        Which text is indexed: the holding, the decision excerpt (2025 layout), or both (joined by a
        blank line; 2025 layout).
    strict : bool, default: False
        Raise instead of warning when qrels name unknown documents or queries.
    """

    name: str = "enunciado"
    strict: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.name not in TEXT_FIELDS:
            raise RagcovError(
                f"JurisTCU config must be one of {sorted(TEXT_FIELDS)}; got {self.name!r}. "
                "Example: ragcov_data.load_dataset('juristcu', 'enunciado', data_dir=...)."
            )

    @property
    def text_fields(self) -> tuple[str, ...]:
        return TEXT_FIELDS[self.name]


# --------------------------------------------------------------------------- reading


def resolve_dir(data_dir: str | os.PathLike | None) -> Path:
    """The folder holding the three files: ``data_dir`` itself, its ``juristcu/`` subfolder, or
    ``$RAGCOV_DATA_DIR/juristcu``."""
    if data_dir is None:
        p = default_source("juristcu")
    else:
        p = Path(data_dir).expanduser()
        if not (p / "doc.csv").exists() and (p / "juristcu" / "doc.csv").exists():
            p = p / "juristcu"
    missing = [f for f in FILES if not (p / f).is_file()]
    if missing:
        raise InputFileError(
            f"JurisTCU folder {str(p)!r} lacks {missing}; pass `data_dir=` a folder with doc.csv, query.csv and "
            "qrel.csv (or a data folder with a juristcu/ subfolder)."
        )
    return p


def sources_hash(folder: Path) -> dict[str, str]:
    """sha256 of each of the three files."""
    out = {}
    for f in FILES:
        h = hashlib.sha256()
        with open(folder / f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        out[f] = h.hexdigest()
    return out


def _read_csv(path: Path) -> pd.DataFrame:
    """Read a CSV as strings, detecting the separator from the header; header names upper-cased."""
    try:
        raw = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(
            f"{path}: byte offset {exc.start} is not valid UTF-8; re-encode the file as UTF-8."
        ) from None
    header = raw.split("\n", 1)[0]
    sep = max(_SEPARATORS, key=header.count) if any(s in header for s in _SEPARATORS) else ","
    try:
        df = pd.read_csv(io.StringIO(raw), sep=sep, dtype=str, keep_default_na=False, na_values=[],
                         quoting=csv.QUOTE_MINIMAL, engine="c")
    except (pd.errors.ParserError, ValueError) as exc:
        raise InputFileError(f"{path}: not a readable CSV ({exc}); check quoting and the separator.") from None
    df.columns = [str(c).strip().upper() for c in df.columns]
    return df


def _layout_error(path: Path, found: list[str], need: str) -> InputFileError:
    exp = "; ".join(f"{lay}: {LAYOUTS[lay][path.name]}" for lay in LAYOUTS)
    return InputFileError(
        f"{path}: unknown JurisTCU layout; columns found {found}, expected ({exp}). Missing: {need}. "
        "Pass the published doc.csv/query.csv/qrel.csv files."
    )


def clean_text(value: str) -> str:
    """Strip HTML tags and entities and collapse whitespace."""
    if "<" in value or "&" in value:
        value = html_to_text(value) if "<" in value else _unescape(value)
    return _WS.sub(" ", value).strip()


def _unescape(value: str) -> str:
    import html

    return html.unescape(value)


def _doc_ids_2025(df: pd.DataFrame) -> tuple[pd.Series, str]:
    if "ID" in df.columns:
        return df["ID"].str.strip(), "ID column"
    key = df["KEY"].str.strip()
    tail = key.str.extract(r"(\d+)\s*$", expand=False)
    if tail.notna().all() and tail.astype(np.int64).is_unique:
        return tail.astype(np.int64).astype(str), "trailing number of KEY"
    return key, "KEY"


def read_docs(path: Path, text_fields: tuple[str, ...]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read doc.csv (either layout) into corpus rows; returns (corpus, facts for the manifest)."""
    df = _read_csv(path)
    cols = list(df.columns)
    if {"ENUNCIADO", "EXCERTO"} <= set(cols) and ({"KEY", "ID"} & set(cols)):
        layout = "2025"
        ids, id_rule = _doc_ids_2025(df)
        texts = {f: df[f.upper()].map(clean_text) for f in ("enunciado", "excerto")}
        text = texts[text_fields[0]]
        for f in text_fields[1:]:
            other = texts[f]
            text = pd.Series([(a + "\n\n" + b).strip() for a, b in zip(text, other)], index=df.index)
        meta_cols = [c for c in cols if c not in ("ID", "ENUNCIADO", "EXCERTO")]
    elif {"ID", "TEXT"} <= set(cols) and "ENUNCIADO" not in cols:
        layout = "2023"
        if text_fields != ("enunciado",):
            raise RagcovError(
                f"{path}: the 2023 layout has only the enunciado text (column TEXT); config "
                f"{'+'.join(text_fields)!r} needs the 2025 layout (ENUNCIADO and EXCERTO). Use config 'enunciado'."
            )
        ids, id_rule = df["ID"].str.strip(), "ID column"
        text = df["TEXT"].map(clean_text)
        meta_cols = [c for c in cols if c not in ("ID", "TEXT")]
    else:
        need = [c for c in ("ENUNCIADO", "EXCERTO") if c not in cols] if "ENUNCIADO" in cols or "EXCERTO" in cols \
            else [c for c in ("ID", "TEXT") if c not in cols]
        if not need:
            need = ["KEY or ID"]
        raise _layout_error(path, cols, str(need))
    blank = ids == ""
    if blank.any():
        raise InputFileError(f"{path}: row {int(np.flatnonzero(blank)[0]) + 2} has an empty document id; "
                             "every document needs an id.")
    dup = ids[ids.duplicated()]
    if len(dup):
        raise InputFileError(f"{path}: duplicate document ids ({len(dup)}; first: {list(dup[:3])}); ids must be unique.")
    meta_names = [c.lower() for c in meta_cols]
    clash = [c for c in meta_names if c in CORPUS_CORE]
    if clash:
        raise InputFileError(f"{path}: metadata column(s) {clash} clash with the corpus schema {CORPUS_CORE}; rename them.")
    corpus = pd.DataFrame({"_id": ids.to_numpy(dtype=object), "doc_id": ids.to_numpy(dtype=object),
                           "chunk_index": np.zeros(len(df), dtype=np.int64),
                           "text": text.to_numpy(dtype=object)})
    for c, name in zip(meta_cols, meta_names):
        corpus[name] = df[c].to_numpy(dtype=object)
    n_empty = int((corpus["text"] == "").sum())
    facts = {"layout": layout, "doc_id_rule": id_rule, "metadata_columns": meta_names, "empty_texts": n_empty}
    return corpus, facts


def read_queries(path: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read query.csv into query rows with ``group`` and ``source_key``."""
    df = _read_csv(path)
    need = [c for c in ("ID", "TEXT", "SOURCE") if c not in df.columns]
    if need:
        raise _layout_error(path, list(df.columns), str(need))
    ids = df["ID"].str.strip()
    dup = ids[ids.duplicated()]
    if len(dup):
        raise InputFileError(f"{path}: duplicate query ids (first: {list(dup[:3])}); ids must be unique.")
    lookup = {k.lower(): v for k, v in GROUPS.items()}
    src = df["SOURCE"].str.strip()
    group = src.str.lower().map(lookup)
    if group.isna().any():
        i = int(np.flatnonzero(group.isna())[0])
        raise InputFileError(
            f"{path}: row {i + 2} (query {ids.iloc[i]!r}) has SOURCE {src.iloc[i]!r}; known values "
            f"{list(GROUPS)} (G1, G2, G3). Fix the SOURCE column."
        )
    keys, rule = _source_keys(ids, group)
    queries = pd.DataFrame({"_id": ids.to_numpy(dtype=object), "text": df["TEXT"].map(clean_text).to_numpy(dtype=object),
                            "group": group.to_numpy(dtype=object), "source_key": keys, "source": src.to_numpy(dtype=object)})
    return queries, {"source_key_rule": rule}


def _source_keys(ids: pd.Series, group: pd.Series) -> tuple[np.ndarray, str]:
    """G2 query i and G3 query i + n (n = size of G2) share the key ``s<G2 id>``; others own ``s<id>``."""
    num = pd.to_numeric(ids, errors="coerce")
    width = max(3, int(ids.str.len().max()))

    def key(x: str) -> str:
        return "s" + (x.zfill(width) if x.isdigit() else x)

    keys = np.array([key(x) for x in ids], dtype=object)
    g2 = np.flatnonzero(group.to_numpy() == "G2")
    g3 = np.flatnonzero(group.to_numpy() == "G3")
    if len(g2) and len(g2) == len(g3) and num.notna().all():
        a = g2[np.argsort(num.to_numpy()[g2], kind="stable")]
        b = g3[np.argsort(num.to_numpy()[g3], kind="stable")]
        if (num.to_numpy()[b] - num.to_numpy()[a] == len(g2)).all():
            keys[b] = keys[a]
            return keys, f"G2 query i and G3 query i+{len(g2)} share 's<G2 id>' (same source summary); G1 own keys"
    warnings.warn(
        "JurisTCU queries: G2 and G3 do not pair as 'G3 id = G2 id + |G2|'; every query gets its own source_key, "
        "so pooled G2+G3 estimates are not clustered by source summary.", stacklevel=3)
    return keys, "own key per query (G2/G3 pairing not found)"


def _file_line(path: Path, row: int) -> int:
    """File line where data row ``row`` (0-based, header excluded, blank lines skipped) starts."""
    raw = path.read_bytes().decode("utf-8-sig")
    header = raw.split("\n", 1)[0]
    sep = max(_SEPARATORS, key=header.count) if any(s in header for s in _SEPARATORS) else ","
    reader = csv.reader(io.StringIO(raw, newline=""), delimiter=sep)
    start, seen = 1, -1  # the header is record -1
    for record in reader:
        if record:
            if seen == row:
                return start
            seen += 1
        start = reader.line_num + 1
    return start


def read_qrels(path: Path) -> pd.DataFrame:
    """Read qrel.csv: graded scores kept (integers in :data:`GRADE_RANGE`), ``engine``/``rank`` when present.

    A grade that is empty, not a number, not an integer or outside 0..3 is an :class:`InputFileError`
    naming the file line, the value and the fix (a silently accepted 4 or -1 would skew nDCG).
    """
    df = _read_csv(path)
    need = [c for c in ("QUERY_ID", "DOC_ID", "SCORE") if c not in df.columns]
    if need:
        raise _layout_error(path, list(df.columns), str(need))
    score, problems = grade_problems(df["SCORE"], GRADE_RANGE)
    if problems:
        i, value, reason = problems[0]
        lo, hi = GRADE_RANGE
        raise InputFileError(
            f"{path}: line {_file_line(path, i)} (QUERY_ID {df['QUERY_ID'].iloc[i].strip()!r}, DOC_ID "
            f"{df['DOC_ID'].iloc[i].strip()!r}) has SCORE {value!r}: {reason} ({len(problems)} invalid grade(s) in "
            f"all). JurisTCU grades are integers {lo}..{hi} (0 = not relevant, {hi} = highly relevant); fix the "
            "SCORE column."
        )
    rank = None
    if "RANK" in df.columns:
        rank = pd.to_numeric(df["RANK"].str.strip().replace("", None), errors="coerce").astype("Int64")
    qrels = pd.DataFrame({
        "query-id": df["QUERY_ID"].str.strip().to_numpy(dtype=object),
        "corpus-id": df["DOC_ID"].str.strip().to_numpy(dtype=object),
        "score": score,
        "engine": df["ENGINE"].to_numpy(dtype=object) if "ENGINE" in df.columns else np.full(len(df), None, object),
        "rank": rank.astype(object).where(rank.notna(), None).to_numpy(dtype=object) if rank is not None
        else np.full(len(df), None, object),
    })
    dup = qrels.duplicated(["query-id", "corpus-id"])
    if dup.any():
        r = qrels[dup].iloc[0]
        raise InputFileError(f"{path}: the pair (QUERY_ID {r['query-id']!r}, DOC_ID {r['corpus-id']!r}) is judged "
                             "more than once; keep one grade per pair.")
    return qrels


def unknown_ids(qrels: pd.DataFrame, corpus: pd.DataFrame, queries: pd.DataFrame, n_examples: int = 5
                ) -> dict[str, Any]:
    """Qrels whose document or query is missing: counts (rows and distinct ids) and examples."""
    out: dict[str, Any] = {}
    for col, ids, name in (("corpus-id", corpus["_id"], "documents"), ("query-id", queries["_id"], "queries")):
        miss = ~qrels[col].isin(set(ids))
        distinct = pd.unique(qrels.loc[miss, col])
        out[f"unknown_{name}"] = {"rows": int(miss.sum()), "ids": int(len(distinct)),
                                  "examples": [str(x) for x in distinct[:n_examples]]}
    return out


def read_juristcu(data_dir: str | os.PathLike | None = None, config: str = "enunciado", *, strict: bool = False
                  ) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Read the three JurisTCU files into ``{"corpus", "queries", "qrels"}`` DataFrames plus a manifest.

    Parameters
    ----------
    data_dir : path, optional
        Folder with doc.csv, query.csv, qrel.csv (or with a ``juristcu/`` subfolder); default
        ``$RAGCOV_DATA_DIR/juristcu``.
    config : {'enunciado', 'excerto', 'both'}, default: 'enunciado'
    strict : bool, default: False
        Raise :class:`InputFileError` when qrels name unknown documents or queries (else warn).

    Returns
    -------
    frames : dict of DataFrame
    manifest : dict
        Layout, rules, sources (path, sha256), counts and the unknown-id report.
    """
    if config not in TEXT_FIELDS:
        raise RagcovError(f"`config` must be one of {sorted(TEXT_FIELDS)}; got {config!r}.")
    folder = resolve_dir(data_dir)
    corpus, doc_facts = read_docs(folder / "doc.csv", TEXT_FIELDS[config])
    queries, q_facts = read_queries(folder / "query.csv")
    qrels = read_qrels(folder / "qrel.csv")
    unknown = unknown_ids(qrels, corpus, queries)
    bad = {k: v for k, v in unknown.items() if v["rows"]}
    if bad:
        msg = "; ".join(f"{v['rows']} qrels name {v['ids']} unknown {k.split('_')[1]} (e.g. {v['examples']})"
                        for k, v in bad.items())
        if strict:
            raise InputFileError(f"{folder / 'qrel.csv'}: {msg}. Pass the matching doc.csv/query.csv, or strict=False "
                                 "to keep them (reported in the manifest).")
        warnings.warn(f"JurisTCU {folder / 'qrel.csv'}: {msg}; kept (they count as relevant but cannot be retrieved).",
                      stacklevel=2)
    hashes = sources_hash(folder)
    grades = qrels["score"].value_counts().sort_index()
    is_subset = len(corpus) < FULL_CORPUS_DOCS
    manifest = {
        "dataset": "juristcu",
        "task": "graded legal retrieval (JurisTCU format)",
        "config": {"name": config, "text_fields": list(TEXT_FIELDS[config]), "strict": strict},
        "layout": doc_facts["layout"],
        "rules": {"doc_id": doc_facts["doc_id_rule"], "source_key": q_facts["source_key_rule"],
                  "groups": dict(GROUPS), "text": "HTML stripped, whitespace collapsed",
                  "unknown_qrels": "kept and reported"},
        "sources": [{"name": f, "path": str(folder / f), "sha256": hashes[f]} for f in FILES],
        "metadata_columns": doc_facts["metadata_columns"],
        "counts": {
            "documents": int(len(corpus)), "queries": int(len(queries)), "qrels": int(len(qrels)),
            "queries_per_group": {g: int(n) for g, n in queries["group"].value_counts().sort_index().items()},
            "grades": {str(int(g)): int(n) for g, n in grades.items()},
            "judged_documents": int(qrels["corpus-id"].nunique()),
            "empty_texts": doc_facts["empty_texts"],
        },
        "unknown_ids": unknown,
        "corpus_note": SUBSET_NOTE if is_subset else None,
        "ragcov_version": __version__,
    }
    if doc_facts["empty_texts"]:
        warnings.warn(f"JurisTCU {folder / 'doc.csv'}: {doc_facts['empty_texts']} documents have an empty "
                      f"{'+'.join(TEXT_FIELDS[config])} text; kept (they can only be retrieved by chance).", stacklevel=2)
    return {"corpus": corpus, "queries": queries, "qrels": qrels}, manifest


def features(metadata_columns: list[str] | tuple[str, ...] = ()) -> dict[str, datasets.Features]:
    """Explicit ``datasets.Features`` of each split."""
    V = datasets.Value
    return {
        "corpus": datasets.Features({"_id": V("string"), "doc_id": V("string"), "chunk_index": V("int64"),
                                     "text": V("string"), **{c: V("string") for c in metadata_columns}}),
        "queries": datasets.Features({c: V("string") for c in QUERY_COLUMNS}),
        "qrels": datasets.Features({"query-id": V("string"), "corpus-id": V("string"), "score": V("int64"),
                                    "engine": V("string"), "rank": V("int64")}),
    }


def _header_metadata(folder: Path) -> list[str]:
    """Metadata column names from doc.csv's header (cheap: first line only)."""
    with open(folder / "doc.csv", "rb") as fh:
        line = fh.readline().decode("utf-8-sig", errors="replace")
    sep = max(_SEPARATORS, key=line.count)
    cols = [c.strip().strip('"').upper() for c in next(csv.reader([line.strip()], delimiter=sep))]
    if "ENUNCIADO" in cols:
        return [c.lower() for c in cols if c not in ("ID", "ENUNCIADO", "EXCERTO")]
    return [c.lower() for c in cols if c not in ("ID", "TEXT")]


# --------------------------------------------------------------------------- builder


class JurisTCUBuilder(TaskBuilder):
    """``datasets`` builder of the JurisTCU benchmark (splits ``corpus``, ``queries``, ``qrels``).

    Each split has its own explicit features (:func:`features`; swapped in per split by
    :class:`~ragcov_data.loaders.base.TaskBuilder`). The cache directory is keyed by the
    sha256 of the three source files, so edited files are never served from a stale cache.

    Examples
    --------
    >>> b = JurisTCUBuilder(data_dir="../shared/data", cache_dir="/tmp/juristcu-cache")  # doctest: +SKIP
    >>> b.download_and_prepare(); ds = b.as_dataset()                                     # doctest: +SKIP
    """

    BUILDER_CONFIG_CLASS = JurisTCUConfig
    BUILDER_CONFIGS = [JurisTCUConfig(name=n, description=f"indexed text: {' + '.join(f)}")
                       for n, f in TEXT_FIELDS.items()]
    DEFAULT_CONFIG_NAME = "enunciado"
    VERSION = datasets.Version("1.0.0")

    def __init__(self, *args: Any, data_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        folder = resolve_dir(data_dir)
        self._folder = folder
        # cache key: sha256 of the three sources, combined with any code hash the caller passes
        content = json.dumps(sources_hash(folder), sort_keys=True) + str(kwargs.get("hash") or "")
        kwargs["hash"] = hashlib.sha256(content.encode()).hexdigest()[:16]
        kwargs.setdefault("dataset_name", "juristcu")
        super().__init__(*args, data_dir=str(folder), **kwargs)
        self.manifest: dict[str, Any] | None = None
        self._frames: dict[str, pd.DataFrame] | None = None

    def source_files(self) -> list[Path]:
        """The three source files (the cache is keyed on their sha256)."""
        return [self._folder / f for f in FILES]

    def _split_features(self) -> dict[str, datasets.Features]:
        return features(_header_metadata(self._folder))

    def _info(self) -> datasets.DatasetInfo:
        folder = getattr(self, "_folder", None) or resolve_dir(self.config.data_dir)
        self._folder = folder
        return datasets.DatasetInfo(
            description="JurisTCU-format graded legal retrieval benchmark (corpus, queries, qrels).",
            features=features(_header_metadata(folder))["corpus"],
            homepage="https://huggingface.co/datasets/LeandroRibeiro/JurisTCU",
            license="CC BY 4.0",
            citation=("Fernandes, L. C. et al. JurisTCU: A Brazilian Portuguese Information Retrieval Dataset "
                      "with Query Relevance Judgments. arXiv:2503.08379 (2025)."),
        )

    def _load(self) -> dict[str, pd.DataFrame]:
        if self._frames is None:
            self._frames, self.manifest = read_juristcu(self._folder, self.config.name, strict=self.config.strict)
        return self._frames

    def _split_frame(self, split: str) -> pd.DataFrame:
        return self._load()[split]

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        self._load()
        self.info.description = manifest_description(self.manifest)
        return [datasets.SplitGenerator(name=s, gen_kwargs={"split": s}) for s in ("corpus", "queries", "qrels")]


__all__ = ["JurisTCUBuilder", "JurisTCUConfig", "read_juristcu", "features", "GROUPS", "SUBSET_NOTE",
           "TEXT_FIELDS", "clean_text"]
