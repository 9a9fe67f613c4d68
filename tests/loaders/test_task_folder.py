"""Task folders (``Task.to_parquet`` / ``read_task``): hashed, verified on read, written atomically."""
from __future__ import annotations

import hashlib
import json
import shutil

import pandas as pd
import pytest

import ragcov_data.tasks.record as task_mod
from ragcov_data import build_task
from ragcov_data.errors import ChecksumError, InputFileError, RagcovError
from ragcov_data.tasks.record import Task, is_task_folder, read_task


@pytest.fixture()
def acervo(tmp_path, write_jsonl, words):
    return write_jsonl(tmp_path / "acervo.jsonl",
                       [{"doc_id": f"d{j}", "text": words(130 + 40 * j, f"t{j}_")} for j in range(4)])


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_manifest_records_sha256_and_read_back_is_equal(acervo, tmp_path):
    task = build_task(acervo, chunk_words=50, query_words=10)
    out = tmp_path / "task"
    paths = task.to_parquet(out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    for name in ("corpus.parquet", "queries.parquet", "qrels.parquet"):
        assert manifest["files"][name] == hashlib.sha256((out / name).read_bytes()).hexdigest()
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths.values())
    assert is_task_folder(out) and not is_task_folder(tmp_path)
    back = read_task(out)
    assert back.manifest == task.manifest  # "files" belongs to the folder, not to the task
    for split in ("corpus", "queries", "qrels"):
        pd.testing.assert_frame_equal(back[split], task[split], check_dtype=False)
    # writing the read-back task again gives the same bytes
    again = back.to_parquet(tmp_path / "again")
    assert all(again[k].read_bytes() == paths[k].read_bytes() for k in paths)


def test_mixed_folder_is_refused_naming_the_file(acervo, tmp_path):
    old = tmp_path / "old"
    build_task(acervo, chunk_words=50, query_words=10).to_parquet(old)
    new = tmp_path / "new"
    build_task(acervo, chunk_words=30, query_words=10).to_parquet(new)
    shutil.copy(old / "qrels.parquet", new / "qrels.parquet")  # an old qrels beside a new corpus and queries
    with pytest.raises(ChecksumError) as exc:
        read_task(new)
    msg = str(exc.value)
    assert "qrels.parquet does not match manifest.json" in msg and "mixes files from different builds" in msg
    assert f"ragcov build ... --out {new}" in msg


def test_missing_file_old_manifest_and_publish_folder(acervo, tmp_path):
    out = tmp_path / "t"
    build_task(acervo, chunk_words=50, query_words=10).to_parquet(out)
    (out / "queries.parquet").unlink()
    with pytest.raises(InputFileError, match=r"lacks queries.parquet; rebuild the folder"):
        read_task(out)
    older = tmp_path / "older"
    task = build_task(acervo, chunk_words=50, query_words=10)
    task.to_parquet(older)
    m = json.loads((older / "manifest.json").read_text(encoding="utf-8"))
    del m["files"]
    (older / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(ChecksumError, match=r"records no sha256 of the split files .* rebuild the folder"):
        read_task(older)
    pub = tmp_path / "pub"
    pub.mkdir()
    (pub / "manifest.json").write_text(json.dumps({"dataset": "x", "configs": {}, "files": {}}), encoding="utf-8")
    assert not is_task_folder(pub)
    with pytest.raises(InputFileError, match="written by `ragcov publish`, not a task folder"):
        read_task(pub)
    with pytest.raises(InputFileError, match="has no manifest.json"):
        read_task(tmp_path)


@pytest.mark.parametrize("error", [OSError("disk full"), KeyboardInterrupt()])
def test_failure_mid_write_leaves_the_old_folder_intact(acervo, tmp_path, monkeypatch, error):
    out = tmp_path / "task"
    build_task(acervo, chunk_words=50, query_words=10).to_parquet(out)
    before = _snapshot(out)
    real = task_mod.write_parquet

    def failing(df, path):
        if str(path).endswith("qrels.parquet"):  # corpus and queries already written
            raise error
        return real(df, path)

    monkeypatch.setattr(task_mod, "write_parquet", failing)
    with pytest.raises(type(error)):
        build_task(acervo, chunk_words=30, query_words=10).to_parquet(out)
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acervo.jsonl", "task"]  # no temporary folder left
    read_task(out)  # still a consistent folder


def test_replacing_a_task_folder_and_refusing_foreign_files(acervo, tmp_path):
    out = tmp_path / "task"
    build_task(acervo, chunk_words=50, query_words=10).to_parquet(out)
    build_task(acervo, chunk_words=30, query_words=10).to_parquet(out)
    assert read_task(out).manifest["config"]["chunk_words"] == 30
    (out / "notes.txt").write_text("mine")
    before = _snapshot(out)
    with pytest.raises(RagcovError, match=r"holds files that are not part of a task \(notes.txt\)"):
        build_task(acervo, chunk_words=50, query_words=10).to_parquet(out)
    assert _snapshot(out) == before
    with pytest.raises(RagcovError, match=r"cannot write .*acervo.jsonl/t: .* is a file, not a folder"):
        Task.to_parquet(build_task(acervo, chunk_words=50, query_words=10), acervo / "t")


def test_failed_swap_restores_the_old_folder(acervo, tmp_path, monkeypatch):
    out = tmp_path / "task"
    build_task(acervo, chunk_words=50, query_words=10).to_parquet(out)
    before = _snapshot(out)
    real, calls = task_mod.os.rename, []

    def rename(src, dst):
        calls.append((src, dst))
        if len(calls) == 2:  # the old folder was moved aside; moving the new one in fails
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(task_mod.os, "rename", rename)
    with pytest.raises(KeyboardInterrupt):
        build_task(acervo, chunk_words=30, query_words=10).to_parquet(out)
    monkeypatch.undo()
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acervo.jsonl", "task"]
