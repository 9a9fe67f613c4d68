"""MTEB prediction files as runs: ``{task}_predictions.json``, written by ``mteb.evaluate(...,
prediction_folder=...)``, holds ``{"mteb_model_meta": {"model_name", "revision"}, subset: {split: {qid: {docid:
score}}}}``. It is recognised by its ``mteb_model_meta`` key wherever ragcov reads a run; one (subset, split) is
read (``subset=``/``split=``, ``--subset``/``--split``, needed only where the file holds several) and the run is
named by ``mteb_model_meta.model_name``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from ragcov_data.errors import InputFileError

MTEB_KEY = "mteb_model_meta"


def is_mteb_predictions(obj: Any) -> bool:
    """Is ``obj`` (a parsed JSON value) an MTEB prediction file?"""
    return isinstance(obj, Mapping) and MTEB_KEY in obj


def mteb_model_name(path: str | Path) -> str | None:
    """The ``model_name`` of an MTEB prediction file (``None`` for any other file); reads the file only when
    its first bytes are ``{"mteb_model_meta"``, as MTEB writes them."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            head = fh.read(64).lstrip()
    except OSError:
        return None
    if not head.startswith(b'{"' + MTEB_KEY.encode() + b'"'):
        return None
    try:
        meta = json.loads(p.read_text(encoding="utf-8")).get(MTEB_KEY)
    except (ValueError, UnicodeDecodeError):
        return None
    name = meta.get("model_name") if isinstance(meta, Mapping) else None
    return str(name) if name else None


def _choose(options: list[str], given: str | None, what: str, where: str) -> str:
    if given is not None:
        if given not in options:
            raise InputFileError(f"{where}: MTEB predictions have no {what} {given!r}; its {what}s: "
                                 f"{', '.join(options)}.")
        return given
    if len(options) != 1:
        raise InputFileError(f"{where}: MTEB predictions hold {len(options)} {what}s ({', '.join(options)}); "
                             f"pick one with --{what} ({what}=).")
    return options[0]


def mteb_predictions(obj: Mapping[str, Any], where: str, subset: str | None = None,
                     split: str | None = None) -> tuple[Mapping[str, Any], dict[str, Any]]:
    """The ``{qid: {docid: score}}`` of one subset and split of an MTEB prediction file, and the run's attrs
    (``tag``: the model name; ``mteb_subset``, ``mteb_split``, ``mteb_revision``)."""
    meta = obj.get(MTEB_KEY)
    if not isinstance(meta, Mapping) or not meta.get("model_name"):
        raise InputFileError(f"{where}: `{MTEB_KEY}` must be an object with a model_name, as MTEB writes it; "
                             f"got {meta!r}.")
    subsets = [k for k in obj if k != MTEB_KEY]
    if not subsets:
        raise InputFileError(f"{where}: MTEB predictions with no subset (only `{MTEB_KEY}`): did the evaluation "
                             "finish?")
    sub = _choose(subsets, subset, "subset", where)
    splits = obj[sub]
    if not isinstance(splits, Mapping) or not splits:
        raise InputFileError(f"{where}: MTEB subset {sub!r} must map splits to {{qid: {{docid: score}}}}; got "
                             f"{type(splits).__name__}.")
    spl = _choose(list(splits), split, "split", where)
    run = splits[spl]
    if not isinstance(run, Mapping):
        raise InputFileError(f"{where}: MTEB subset {sub!r}, split {spl!r} must be {{qid: {{docid: score}}}}; got "
                             f"a JSON {type(run).__name__}.")
    attrs = {"tag": str(meta["model_name"]), "mteb_subset": sub, "mteb_split": spl,
             "mteb_revision": meta.get("revision")}
    return run, attrs
