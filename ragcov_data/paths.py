"""Where the default data lives.

Nothing in the library guesses a path: the data folder comes from an explicit argument or from the
``RAGCOV_DATA_DIR`` environment variable, laid out like the shared data folder (``aneel/``, ``juristcu/``).
"""
from __future__ import annotations

import os
from pathlib import Path

from ragcov_data.errors import InputFileError

ENV_VAR = "RAGCOV_DATA_DIR"

#: Relative locations of the default sources inside a data folder.
DEFAULT_SOURCES = {
    "aneel_fulltext": "aneel/aneel_fulltext.jsonl",
    "aneel_ementas": "aneel/aneel_ementas.jsonl",
    "juristcu": "juristcu",
}


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """Return the data folder: ``path`` if given, else ``$RAGCOV_DATA_DIR``.

    Raises
    ------
    InputFileError
        If neither is set, or the folder does not exist.
    """
    if path is None:
        env = os.environ.get(ENV_VAR)
        if not env:
            raise InputFileError(
                f"no data folder given: pass `data_dir=` (CLI: `--data-dir`) or set ${ENV_VAR} to a folder "
                "laid out like the shared data folder (aneel/, juristcu/)."
            )
        path = env
    p = Path(path).expanduser()
    if not p.is_dir():
        raise InputFileError(f"data folder {str(p)!r} does not exist; pass an existing folder or set ${ENV_VAR}.")
    return p


def default_source(name: str, path: str | os.PathLike | None = None) -> Path:
    """Path of a default source (a key of :data:`DEFAULT_SOURCES`) inside :func:`data_dir`."""
    if name not in DEFAULT_SOURCES:
        raise InputFileError(f"`name` must be one of {sorted(DEFAULT_SOURCES)}; got {name!r}.")
    p = data_dir(path) / DEFAULT_SOURCES[name]
    if not p.exists():
        raise InputFileError(f"default source {name!r} not found at {str(p)!r}; check the data folder layout.")
    return p
