"""Fixtures of the loader tests: the ANEEL sample read independently, and tasks built once a session."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragcov_data import build_task, load_dataset


@pytest.fixture(scope="session")
def aneel_records(aneel_fulltext: Path) -> list[dict]:
    """The ANEEL sample as plain JSON records (read without ragcov)."""
    with open(aneel_fulltext, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="session")
def aneel_task(aneel_fulltext: Path):
    return build_task(aneel_fulltext, chunk_words=100, query_words=20)


@pytest.fixture(scope="session")
def hf_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hf_cache")


@pytest.fixture(scope="session")
def aneel_ds(data_dir: Path, hf_cache: Path):
    """``load_dataset("aneel_taesa")`` on the data folder (default config chunks-100)."""
    return load_dataset("aneel_taesa", data_dir=data_dir, cache_dir=hf_cache, show_progress=False)


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _words(n: int, tag: str = "w") -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


@pytest.fixture(scope="session")
def write_jsonl():
    """``write_jsonl(path, records) -> path``."""
    return _write_jsonl


@pytest.fixture(scope="session")
def words():
    """``words(n, tag="w")``: a text of n distinct words."""
    return _words
