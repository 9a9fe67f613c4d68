"""Reading acervos: JSONL, CSV, parquet, folders of .txt/.md/.html, and every bad input."""
from __future__ import annotations

import pandas as pd
import pytest

from ragcov_data import RagcovError, build_task, read_acervo
from ragcov_data.legal.acervo import SkippedFilesWarning, html_to_text
from ragcov_data.errors import InputFileError


@pytest.fixture()
def records(words):
    return [
        {"doc_id": "a", "text": words(250, "a"), "doc_type": "lei", "date": "2020-01-01"},
        {"doc_id": "b", "text": words(90, "b"), "doc_type": "despacho", "date": None},
        {"doc_id": "c", "text": words(130, "c"), "doc_type": "lei", "date": "2021-05-05"},
    ]


def _frames(task):
    return {s: task[s].reset_index(drop=True) for s in ("corpus", "queries", "qrels")}


def test_jsonl_csv_parquet_give_the_same_task(tmp_path, records, write_jsonl):
    jsonl = write_jsonl(tmp_path / "a.jsonl", records)
    df = pd.DataFrame(records).rename(columns={"doc_id": "ID", "text": "TEXT"})
    df.to_csv(tmp_path / "a.csv", index=False)
    df.to_parquet(tmp_path / "a.parquet", index=False)
    ref = _frames(build_task(jsonl, chunk_words=100, query_words=20))
    for path in (tmp_path / "a.csv", tmp_path / "a.parquet"):
        got = _frames(build_task(path, chunk_words=100, query_words=20, id_column="ID", text_column="TEXT"))
        for split in ref:
            pd.testing.assert_frame_equal(got[split], ref[split], check_dtype=False, obj=f"{path.name} {split}")
    assert list(ref["corpus"]["doc_id"].unique()) == ["a", "c"]  # b (90 words) yields one chunk
    assert ref["corpus"].loc[ref["corpus"]["doc_id"] == "a", "date"].eq("2020-01-01").all()


def test_csv_empty_metadata_cell_is_null(tmp_path, words):
    (tmp_path / "x.csv").write_text(f'doc_id,text,issuer\nd1,"{words(300)}",\nd2,"{words(300)}",MME\n',
                                    encoding="utf-8")
    acervo = read_acervo(tmp_path / "x.csv")
    assert [d.metadata["issuer"] for d in acervo.documents] == [None, "MME"]
    assert [d.where for d in acervo.documents] == ["x.csv, line 2", "x.csv, line 3"]


def test_folder_of_text_files(tmp_path, words):
    root = tmp_path / "acervo"
    (root / "sub").mkdir(parents=True)
    (root / "b.txt").write_text(words(150, "b"), encoding="utf-8")
    (root / "sub" / "a.md").write_text("# Título\n\n" + words(150, "a"), encoding="utf-8")
    (root / "c.html").write_text(
        "<html><head><title>T</title><style>p {color: red}</style><script>var x = 1;</script></head>"
        f"<body><p>Resolução &amp; voto</p><p>{words(150, 'c')}</p></body></html>", encoding="utf-8")
    (root / "notes.pdf").write_bytes(b"%PDF-1.4")
    (root / ".hidden.txt").write_text("x", encoding="utf-8")
    with pytest.warns(SkippedFilesWarning, match=r"acervo/\.hidden\.txt \(hidden\), acervo/notes\.pdf"):
        acervo = read_acervo(root)
    assert [d.doc_id for d in acervo.documents] == ["b.txt", "c.html", "sub/a.md"]
    assert [d.metadata["format"] for d in acervo.documents] == ["txt", "html", "md"]
    assert acervo.skipped_files == ["acervo/.hidden.txt", "acervo/notes.pdf"]
    html = acervo.documents[1].text
    assert "Resolução & voto" in html and "var x" not in html and "color" not in html
    with pytest.warns(SkippedFilesWarning, match="2 file"):
        task = build_task(root, chunk_words=100, query_words=20)
    assert task.manifest["counts"]["files_skipped"] == 2
    assert [s["name"] for s in task.manifest["sources"]] == ["acervo/b.txt", "acervo/c.html", "acervo/sub/a.md"]
    assert "sub/a.md#0001" in set(task.corpus["_id"])


def test_html_to_text_blocks():
    text = html_to_text("<div>um<br>dois</div><script>três</script><p>quatro&nbsp;cinco</p>")
    assert text.split() == ["um", "dois", "quatro", "cinco"]


# --------------------------------------------------------------------------- bad input


def test_missing_file(tmp_path):
    with pytest.raises(InputFileError, match=r"source '.*nope\.jsonl' does not exist"):
        read_acervo(tmp_path / "nope.jsonl")


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_document(tmp_path, write_jsonl, words, text):
    path = write_jsonl(tmp_path / "e.jsonl", [{"doc_id": "ok", "text": words(10)}, {"doc_id": "blank", "text": text}])
    with pytest.raises(InputFileError, match=r"e\.jsonl, line 2: document 'blank' is empty .*remove the record"):
        read_acervo(path)


def test_empty_file_in_folder(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "empty.txt").write_text("\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"d/empty\.txt: document 'empty\.txt' is empty"):
        read_acervo(tmp_path / "d")


def test_duplicate_doc_id_within_and_across_files(tmp_path, write_jsonl, words):
    one = write_jsonl(tmp_path / "one.jsonl", [{"doc_id": "x", "text": words(5)}, {"doc_id": "y", "text": "a"},
                                               {"doc_id": "x", "text": "b"}])
    with pytest.raises(InputFileError, match=r"one\.jsonl, line 3: duplicate doc_id 'x' \(first seen at one\.jsonl, "
                                             r"line 1\).*rename or remove"):
        read_acervo(one)
    a = write_jsonl(tmp_path / "a.jsonl", [{"doc_id": "x", "text": "a"}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"doc_id": "q", "text": "a"}, {"doc_id": "x", "text": "a"}])
    with pytest.raises(InputFileError, match=r"b\.jsonl, line 2: duplicate doc_id 'x' \(first seen at a\.jsonl"):
        read_acervo([a, b])


def test_missing_columns(tmp_path, write_jsonl):
    (tmp_path / "t.csv").write_text("ID,body\n1,hello\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"t\.csv: no `doc_id` column .*pass `id_column=`"):
        read_acervo(tmp_path / "t.csv")
    with pytest.raises(InputFileError, match=r"t\.csv: no `text` column .*pass `text_column=`"):
        read_acervo(tmp_path / "t.csv", id_column="ID")
    assert read_acervo(tmp_path / "t.csv", id_column="ID", text_column="body").documents[0].doc_id == "1"
    pd.DataFrame({"doc_id": ["a"], "body": ["x"]}).to_parquet(tmp_path / "t.parquet")
    with pytest.raises(InputFileError, match=r"t\.parquet: no `text` column .*pass `text_column=`"):
        read_acervo(tmp_path / "t.parquet")
    path = write_jsonl(tmp_path / "m.jsonl", [{"doc_id": "a", "text": "x"}, {"id": "b", "text": "y"}])
    with pytest.raises(InputFileError, match=r"m\.jsonl, line 2: no `doc_id` field.*`id_column=`"):
        read_acervo(path)
    path = write_jsonl(tmp_path / "n.jsonl", [{"doc_id": "a", "body": "x"}])
    with pytest.raises(InputFileError, match=r"n\.jsonl, line 1: no `text` field.*`text_column=`"):
        read_acervo(path)


def test_non_utf8_bytes(tmp_path):
    path = tmp_path / "latin.jsonl"
    data = b'{"doc_id": "a", "text": "ok"}\n{"doc_id": "b", "text": "Resolu\xe7\xe3o"}\n'
    path.write_bytes(data)
    offset = data.index(b"\xe7")
    with pytest.raises(InputFileError, match=rf"latin\.jsonl: line 2 \(byte offset {offset}\) is not valid UTF-8.*iconv"):
        read_acervo(path)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.txt").write_bytes(b"abc\n\xff")
    with pytest.raises(InputFileError, match=r"d/x\.txt: line 2 \(byte offset 4\) is not valid UTF-8"):
        read_acervo(tmp_path / "d")


def test_malformed_records(tmp_path, words):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"doc_id": "a", "text": "x"}\n{"doc_id": "b", "text": \n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"bad\.jsonl, line 2: not valid JSON"):
        read_acervo(path)
    path.write_text('{"doc_id": "a", "_id": "z", "text": "x"}\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"bad\.jsonl, line 1: metadata field '_id' clashes"):
        read_acervo(path)
    # a column the dispositivo chunking adds (was a crash inside build_task) is refused alike, naming the fix
    path.write_text('{"doc_id": "a", "unit": "art. 1", "text": "x"}\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"bad\.jsonl, line 1: metadata field 'unit' clashes.*rename it"):
        read_acervo(path)
    (tmp_path / "bad.docx").write_bytes(b"PK")
    with pytest.raises(InputFileError, match=r"bad\.docx: unknown file type '\.docx'"):
        read_acervo(tmp_path / "bad.docx")


def test_chunk_words_below_query_words(tmp_path, write_jsonl, words):
    path = write_jsonl(tmp_path / "a.jsonl", [{"doc_id": "a", "text": words(500)}])
    with pytest.raises(RagcovError, match=r"`chunk_words` \(10\) must be >= `query_words` \(20\)"):
        build_task(path, chunk_words=10, query_words=20)


def test_no_document_with_two_chunks(tmp_path, write_jsonl, words):
    path = write_jsonl(tmp_path / "short.jsonl", [{"doc_id": "a", "text": words(119)}, {"doc_id": "b", "text": "x"}])
    with pytest.raises(RagcovError, match=r"short\.jsonl: none of the 2 documents yields two chunks of "
                                          r"chunk_words=100.*lower `chunk_words`"):
        build_task(path, chunk_words=100, query_words=20)
    assert build_task(path, chunk_words=50, query_words=20).manifest["counts"]["documents_excluded"] == {
        "single_chunk": 1}
