"""Shared fixtures: the shared data folder (read in place, never copied into the project)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# A fresh `datasets` cache for every test session, set before anything imports `datasets`: plain
# `datasets.load_dataset(folder)` keys its cache by the folder's name, so a folder published again under the
# same name in an earlier session would be read back stale from the user's cache.
os.environ["HF_DATASETS_CACHE"] = tempfile.mkdtemp(prefix="ragcov-tests-hf-")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared data folder: $RAGCOV_DATA_DIR, else ../shared/data beside the repository.

    Missing data is an error, not a skip: these tests exist to run on the real sample.
    """
    path = Path(os.environ.get("RAGCOV_DATA_DIR") or REPO.parent / "shared" / "data")
    if not (path / "aneel" / "aneel_fulltext.jsonl").is_file():
        raise RuntimeError(f"shared data not found at {path}; set RAGCOV_DATA_DIR to the shared data folder")
    return path


@pytest.fixture(scope="session")
def aneel_fulltext(data_dir: Path) -> Path:
    return data_dir / "aneel" / "aneel_fulltext.jsonl"


@pytest.fixture(scope="session")
def juristcu_dir(data_dir: Path) -> Path:
    return data_dir / "juristcu"


# ------------------------------------------------------------------------------------------ the fast lane
from _lanes import mark_slow  # noqa: E402  (the lists and the rule live in tests/_lanes.py)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` what the fast lane (``-m "not slow"``) leaves out: see :mod:`_lanes`."""
    mark_slow(items)
