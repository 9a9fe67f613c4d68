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

A file written piece by piece (a pipeline's passage run, appended as each question finishes) has one writer at a
time: :func:`one_writer` holds an exclusive lock on a file beside it.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, Union

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
    except OSError:  # nothing there, or a parent that is a file (the writability check names it)
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
        raise RagcovError(f"cannot write {named}: it is {what}, not a file; choose a writable path (a file inside the "
                          "folder, or elsewhere).")
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


# --------------------------------------------------------------------------- one writer per file
#: Retries when the lock file was removed between opening and locking it (its holder had just finished).
_LOCK_TRIES = 5


def lock_path(path: str | os.PathLike) -> Path:
    """The lock file of ``path``: ``.NAME.lock`` in the same folder."""
    p = Path(path)
    return p.with_name(f".{p.name}.lock")


@contextlib.contextmanager
def one_writer(path: str | os.PathLike) -> Iterator[Path]:
    """Hold the one-writer lock of ``path`` while the block runs (a file written piece by piece: a passage run).

    The lock is ``fcntl.flock(LOCK_EX | LOCK_NB)`` on a lock file beside ``path`` (:func:`lock_path`), which
    records its holder (process id, host, command, start); the kernel releases it when the holder exits, however
    it exits, so a crash leaves no stale lock. On release the file is removed while still locked; a process that
    opened it just before checks, once it holds the lock, that the file it locked is still the one at the path, and
    tries again if not. Where ``fcntl`` is missing (Windows) ``msvcrt.locking`` plays the same part.

    Raises
    ------
    RagcovError
        Another process holds the lock: names ``path``, the holder and the fix; or the file system cannot lock.
    """
    lock = lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(_LOCK_TRIES):
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            held = _try_lock(fd, lock)
            if held and _same_file(fd, lock):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        if not held:
            raise RagcovError(f"{path} is being written by another run ({_holder(lock)}): one writer at a time, or "
                              "both would append every answer; wait for it to finish (a run started after it "
                              "resumes the file), or give another output path.")
    else:
        raise RagcovError(f"cannot lock {lock} (it keeps being replaced); try again.")
    try:
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "command": _command(),
                                 "since": time.strftime("%Y-%m-%d %H:%M:%S")}).encode("utf-8"))
        yield Path(path)
    finally:
        try:
            os.unlink(lock)  # still held: a newcomer that opened it sees, once it holds it, that it is gone
        except OSError:
            pass
        os.close(fd)  # releases the lock


def _try_lock(fd: int, lock: Path) -> bool:
    """Lock ``fd`` without waiting: True when held, False when another process holds it."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
            return True
        except OSError:
            return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    except OSError as exc:  # e.g. ENOLCK: a network file system without locks
        raise RagcovError(f"cannot lock {lock} ({exc.strerror or exc}): this file system does not lock files, so "
                          "two runs could write one file at once; write the output to a local folder.") from None


def _same_file(fd: int, lock: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(lock).st_ino
    except FileNotFoundError:
        return False


def _command() -> str:
    """This process's command line as typed (``ragcov run ...``, ``python -m ragcov_data run ...``)."""
    argv = list(sys.argv) or ["python"]
    first = Path(argv[0])
    head = f"python -m {first.parent.name}" if first.name == "__main__.py" else (first.name or "python")
    return " ".join([head, *argv[1:]])


def _holder(lock: Path) -> str:
    """Who holds ``lock``, as its holder recorded it."""
    try:
        who = json.loads(lock.read_text(encoding="utf-8"))
        return (f"process {who['pid']} on {who['host']}, since {who['since']}: "
                f"{who['command'] or 'python'}")
    except (OSError, ValueError, KeyError, TypeError):
        return f"a process holding {lock}"
