"""One atomic file write for every writer in ragcov (tasks, runs, reports, caches), and the one check of
what may be replaced.

Data goes to a temporary file in the destination folder, is flushed to disk, then moved into place
with ``os.replace``: a reader sees the old file or the new one, never half of one. The file gets the
usual permissions (``0o666`` masked by the umask), not the owner-only mode of ``tempfile.mkstemp``.

Because the new file is moved over the path, only a regular file may stand there: :func:`check_replaceable`
refuses a device (``/dev/null``, ``/dev/full``), a named pipe, a socket or a folder, and a symbolic link that
points nowhere, naming what the path is. :func:`atomic_write` runs it before every write, and the command line
runs it on every output path before any work (:func:`ragcov_data.tasks.paths.check_writable`). A symbolic link
to a regular file is replaced by the new file; the file it pointed to is left as it was.
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Callable, Union

from ragcov_data.errors import RagcovError

Payload = Union[bytes, str, Callable[[str], None]]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def file_kind(path: str | os.PathLike) -> str | None:
    """What stands at ``path`` when it is not a regular file ("a character device", "a named pipe (FIFO)",
    "a folder", "a symbolic link to 'x', which does not exist", ...); None for a regular file, a link to
    one, or nothing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    link = ""
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return f"a symbolic link to {target!r}, which does not exist"
        except OSError as exc:  # a loop of links
            return f"a symbolic link that cannot be followed ({exc.strerror or exc})"
        link = f"a symbolic link to {target!r}, "
    if stat.S_ISREG(st.st_mode):
        return None
    what = next((w for test, w in _KINDS if test(st.st_mode)), "not a regular file")
    return link + what


def check_replaceable(path: str | os.PathLike, option: str | None = None) -> Path:
    """Refuse ``path`` as a file to write when something other than a regular file stands there.

    An output is written by moving a new file over its path, so a device, a named pipe, a socket or a folder
    there would be replaced by a file (``--json /dev/null`` would replace ``/dev/null``), and a link that
    points nowhere would be replaced instead of written through. ``option`` (``"--json"``) names the path in
    the message.

    Raises
    ------
    RagcovError
        ``--json '/dev/null' is a character device: ragcov writes an output by replacing the file at its path
        ...`` (the path, what it is and the fix).
    """
    what = file_kind(path)
    if what is None:
        return Path(path)
    named = f"{option} {str(path)!r}" if option else repr(str(path))
    if what.endswith("a folder"):
        raise RagcovError(f"{named} is {what}, not a file: ragcov writes a file at that path; give a file path "
                          "(inside the folder, or elsewhere).")
    if what.endswith("does not exist"):
        fix = "remove the link, or give the path of the file itself"
    else:
        fix = "give the path of a regular file, or a new path (to discard an output, leave its option out)"
    raise RagcovError(f"{named} is {what}: ragcov writes an output by moving a new file over its path, which would "
                      f"replace it rather than write into it; {fix}.")


def atomic_write(path: str | os.PathLike, data: Payload, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` atomically and return the path.

    ``data`` is bytes, text (encoded with ``encoding``) or a callable that writes the file whose
    name it is given (e.g. ``lambda tmp: pyarrow.parquet.write_table(table, tmp)``). A path where something
    other than a regular file stands (a device, a named pipe, a folder, a link to nothing) is refused
    (:func:`check_replaceable`).
    """
    path = check_replaceable(path)
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
