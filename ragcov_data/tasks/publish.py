"""Publish a task as a self-contained folder: parquet, a dataset card with a ``configs:`` block, manifests.

Layout (one task config a call; publishing more configs into the same folder adds them)::

    out_dir/
      README.md                 dataset card; YAML ``configs:`` maps corpus/queries/qrels to the files
      manifest.json             {"configs": {config: manifest}, "files": {path: sha256}}
      corpus/<config>.parquet
      queries/<config>.parquet
      qrels/<config>.parquet

Plain ``datasets.load_dataset(out_dir, "queries")`` then works offline; each task config is a split,
named after the config with ``-`` replaced by ``_`` (``chunks-100`` -> split ``chunks_100``).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from ragcov_data.errors import RagcovError
from ragcov_data.tasks.registry import builder_class
from ragcov_data.tasks.record import SPLITS, Task, manifest_of, write_json, write_parquet
from ragcov_data._atomic import atomic_write
from ragcov_data.outputs import PUBLISH, mark_folder

_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n?", re.S)
_SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")


def split_name(config_name: str) -> str:
    """HF split name of a task config (``chunks-100`` -> ``chunks_100``)."""
    name = re.sub(r"[^\w.]", "_", config_name)
    if not _SPLIT_NAME.match(name):
        raise RagcovError(f"`config_name` {config_name!r} cannot be turned into a split name; use letters, digits, -, _.")
    return name


def packaged_card(name: str = "dataset_card.md") -> str:
    """Text of a dataset card shipped inside the package."""
    try:
        return resources.files("ragcov_data").joinpath(name).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        raise RagcovError(f"dataset card {name!r} is not shipped with ragcov_data; pass `card=` a card file.") from None


def _default_card(dataset: str | None) -> str:
    """The card a registered builder names in ``DATASET_CARD`` (else a minimal generated card)."""
    if dataset:
        try:
            card = getattr(builder_class(dataset), "DATASET_CARD", None)
        except (RagcovError, ImportError):
            card = None
        if card:
            return packaged_card(card)
    return (f"---\nlicense: other\n---\n# {dataset or 'ragcov task'}\n\nRetrieval task (corpus, queries, qrels) "
            "published by ragcov. [More Information Needed]\n")


def _split_card(text: str) -> tuple[dict[str, Any], str]:
    import yaml

    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text
    meta = yaml.safe_load(m.group(1)) or {}
    if not isinstance(meta, dict):
        raise RagcovError("the dataset card's YAML front matter must be a mapping.")
    return meta, text[m.end():]


def _frames(dataset_dict: Mapping[str, Any]) -> Task:
    if isinstance(dataset_dict, Task):
        return dataset_dict
    missing = [s for s in SPLITS if s not in dataset_dict]
    if missing:
        raise RagcovError(f"`dataset_dict` lacks split(s) {missing}; expected {list(SPLITS)}.")
    return Task.from_dataset_dict(dataset_dict)


def _hf_info(dataset_dict: Any) -> Any:
    """``info`` of the corpus split when it is a ``datasets.Dataset`` (None for DataFrames / Task)."""
    corpus = dataset_dict.get("corpus") if isinstance(dataset_dict, Mapping) or hasattr(dataset_dict, "get") else None
    info = getattr(corpus, "info", None)
    return None if info is None or callable(info) else info


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _hf_config(split: str, manifest: Mapping[str, Any] | None) -> str:
    """HF config of a split file: the split's name, but ``corpus-dispositivo`` for a corpus cut at
    dispositivos (its extra ``unit``/``continued`` columns cannot share a config with word windows)."""
    chunking = ((manifest or {}).get("config") or {}).get("chunking")
    return f"{split}-{chunking}" if split == "corpus" and chunking and chunking != "words" else split


def publish(
    dataset_dict: Mapping[str, Any] | Task,
    out_dir: str | os.PathLike,
    config_name: str | None = None,
    *,
    card: str | os.PathLike | None = None,
) -> Path:
    """Write a task as parquet + dataset card + manifest into ``out_dir``.

    Parameters
    ----------
    dataset_dict : DatasetDict, dict of DataFrames or Task
        Splits ``corpus``, ``queries``, ``qrels`` (as :func:`ragcov_data.load_dataset` returns).
    out_dir : path
        Folder to write; configs already published there are kept and listed in the card.
    config_name : str, optional
        Name of this task config; default: the manifest's config name, else the split's
        ``info.config_name``, else ``"default"``.
    card : path, optional
        Dataset card (Markdown with YAML front matter). Default: the card the dataset's builder ships
        (``dataset_card.md`` for ``aneel_taesa``). Its ``configs:`` block is (re)written.

    Returns
    -------
    pathlib.Path
        ``out_dir``. Same task ⇒ byte-identical files.
    """
    task = _frames(dataset_dict)
    manifest = dict(task.manifest or manifest_of(dataset_dict) or {})
    if config_name is None:
        config_name = (manifest.get("config") or {}).get("name")
    info = _hf_info(dataset_dict)
    if config_name is None and info is not None:
        config_name = info.config_name
    config_name = config_name or "default"
    split = split_name(config_name)
    dataset = manifest.get("dataset") or (info.dataset_name if info is not None else None)

    out = Path(out_dir)
    mark_folder(out, PUBLISH)  # the folder reads back as ragcov's: publishing more configs into it is not refused
    for name in SPLITS:
        write_parquet(task[name], out / name / f"{config_name}.parquet")

    # manifest.json: every config published here, and the sha256 of every parquet file
    index_path = out / "manifest.json"
    index = json.loads(index_path.read_text(encoding="utf-8")) if index_path.exists() else {}
    configs = dict(index.get("configs", {}))
    configs[config_name] = manifest
    files = {f"{s}/{c}.parquet": _sha256(out / s / f"{c}.parquet") for c in sorted(configs) for s in SPLITS
             if (out / s / f"{c}.parquet").exists()}
    write_json({"dataset": dataset, "configs": configs, "files": files}, index_path)

    # README.md: the card, with a configs block listing every published config as a split
    text = Path(card).read_text(encoding="utf-8") if card is not None else _default_card(dataset)
    meta, body = _split_card(text)
    meta["configs"] = []
    for s in SPLITS:  # one HF config a split; a corpus with other columns (dispositivo) gets its own
        groups: dict[str, list[str]] = {}
        for c in sorted(configs):
            groups.setdefault(_hf_config(s, configs[c]), []).append(c)
        meta["configs"] += [{"config_name": hf, "data_files": [{"split": split_name(c), "path": f"{s}/{c}.parquet"}
                                                               for c in names]} for hf, names in groups.items()]
    import yaml

    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    table = ["", "## Published configurations", "",
             "| config (split) | documents | chunks / corpus | queries | qrels |", "|---|---:|---:|---:|---:|"]
    for c in sorted(configs):
        counts = (configs[c] or {}).get("counts", {})
        table.append(f"| `{c}` (`{split_name(c)}`) | {counts.get('documents_eligible', '')} | "
                     f"{counts.get('chunks', '')} | {counts.get('queries', '')} | {counts.get('qrels', '')} |")
    table += ["", "Load one part offline: `datasets.load_dataset(\"<this folder>\", \"queries\", "
              f"split=\"{split}\")`. Source hashes and counts: `manifest.json`.", ""]
    if any(_hf_config("corpus", m) != "corpus" for m in configs.values()):
        table[-1:-1] = ["The corpus of a `dispositivo` config has two more columns (`unit`, `continued`), so it is "
                        "its own part: `datasets.load_dataset(\"<this folder>\", \"corpus-dispositivo\", "
                        "split=\"dispositivo\")`."]
    readme = f"---\n{front}---\n{body.rstrip()}\n" + "\n".join(table)
    atomic_write(out / "README.md", readme)
    return out

