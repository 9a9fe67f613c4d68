"""One atomic file write for every writer in ragcov (tasks, runs, reports, caches).

Data goes to a temporary file in the destination folder, is flushed to disk, then moved into place
with ``os.replace``: a reader sees the old file or the new one, never half of one. The file gets the
usual permissions (``0o666`` masked by the umask), not the owner-only mode of ``tempfile.mkstemp``.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable, Union

Payload = Union[bytes, str, Callable[[str], None]]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, data: Payload, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` atomically and return the path.

    ``data`` is bytes, text (encoded with ``encoding``) or a callable that writes the file whose
    name it is given (e.g. ``lambda tmp: pyarrow.parquet.write_table(table, tmp)``).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if callable(data):
            os.close(fd)
            data(tmp)
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data.encode(encoding) if isinstance(data, str) else data)
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
