"""Where the default data lives.

Nothing in the library guesses a path: the data folder comes from an explicit argument or from the
``RAGCOV_DATA_DIR`` environment variable, laid out like the shared data folder (``aneel/``, ``juristcu/``).
"""
from __future__ import annotations

import os
from pathlib import Path

from ragcov_data.errors import InputFileError, RagcovError

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


def check_writable(path: str | os.PathLike, *, folder: bool = False) -> Path:
    """Refuse, before any work starts, an output path that cannot be written.

    ``path`` is a file to write (``folder=False``) or a folder to write into (``folder=True``); neither
    it nor its missing parents are created here. A file path must be new or a regular file
    (:func:`ragcov_data._atomic.check_replaceable`: a device, a named pipe, a socket, a folder or a link to
    nothing is refused). The nearest existing ancestor must be a folder in which a file can be created (probed
    with a temporary file, so read-only mounts are caught too).

    Raises
    ------
    RagcovError
        ``cannot write PATH: <reason>; choose a writable path`` — the path is a folder where a file is
        expected (or the reverse), a parent is a file, or the folder is not writable.
    """
    import tempfile

    from ragcov_data._atomic import check_replaceable, file_kind

    p = Path(path).expanduser()

    def refuse(reason: str) -> RagcovError:
        return RagcovError(f"cannot write {str(path)}: {reason}; choose a writable path")

    if folder and (p.exists() or p.is_symlink()) and not p.is_dir():
        raise refuse(f"it is {file_kind(p) or 'a file'}, not a folder")
    if not folder:
        check_replaceable(p)  # a device, a named pipe, a folder, a link to nothing: refused, not replaced
    anchor = p if folder and p.is_dir() else p.parent
    while not anchor.exists():
        if anchor == anchor.parent:
            break
        anchor = anchor.parent
    if not anchor.is_dir():
        raise refuse(f"{str(anchor)!r} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=anchor, prefix=".ragcov-probe-"):
            pass
    except OSError as exc:
        raise refuse(f"{exc.strerror or exc} in {str(anchor)!r}") from None
    return p
