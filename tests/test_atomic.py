"""The one atomic writer: content, permissions, no leftovers on failure."""
from __future__ import annotations

import os
import stat

import pytest

from ragcov_data._atomic import atomic_write


def test_writes_bytes_text_and_callables_with_normal_permissions(tmp_path):
    mask = os.umask(0o022)
    try:
        a = atomic_write(tmp_path / "sub" / "a.bin", b"\x00\x01")
        b = atomic_write(tmp_path / "b.txt", "ação\n")
        c = atomic_write(tmp_path / "c.txt", lambda tmp: open(tmp, "w").write("x"))
    finally:
        os.umask(mask)
    assert a.read_bytes() == b"\x00\x01" and b.read_text(encoding="utf-8") == "ação\n" and c.read_text() == "x"
    for p in (a, b, c):  # readable by others, as any file a user shares (not mkstemp's 0600)
        assert stat.S_IMODE(p.stat().st_mode) == 0o644


def test_failure_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    target = atomic_write(tmp_path / "f.txt", "old")

    def boom(tmp):
        open(tmp, "w").write("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, boom)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]
