"""JSON Lines read as specified (``\\n`` / ``\\r\\n`` only, BOM at the start only) and skipped folder files named."""
from __future__ import annotations

import json
import warnings

import pytest

from ragcov_data import build_task, read_acervo
from ragcov_data.legal.acervo import SkippedFilesWarning, jsonl_lines
from ragcov_data.errors import InputFileError

#: Unicode line boundaries that str.splitlines() breaks on but JSON strings may hold raw.
SEPARATORS = {"NEL": "\u0085", "LS": "\u2028", "PS": "\u2029"}


def _record(doc_id: str, text: str) -> dict:
    return {"doc_id": doc_id, "text": text, "doc_type": "despacho", "issuer": "ANEEL",
            "date": "2022-10-04", "source_file": f"{doc_id}.pdf"}


@pytest.fixture()
def texts(words):
    """Texts of real-looking records with each separator inside a word run and in the metadata."""
    return {
        "d1": f"AGÊNCIA NACIONAL DE ENERGIA ELÉTRICA{SEPARATORS['NEL']}DESPACHO Nº 2.826 " + words(200, "a"),
        "d2": f"Art. 1º Fica aprovado{SEPARATORS['LS']}o regulamento. " + words(200, "b") + SEPARATORS["PS"] + "fim",
        "d3": words(150, "c"),
    }


def _dump(records: list[dict], newline: str = "\n", bom: bool = False) -> bytes:
    body = newline.join(json.dumps(r, ensure_ascii=False) for r in records) + newline
    return (b"\xef\xbb\xbf" if bom else b"") + body.encode("utf-8")


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("bom", [False, True])
def test_unicode_line_boundaries_are_content(tmp_path, texts, newline, bom):
    records = [_record(k, v) for k, v in texts.items()]
    records[1]["issuer"] = f"ANEEL{SEPARATORS['LS']}SRG"  # in metadata too
    path = tmp_path / "acervo.jsonl"
    path.write_bytes(_dump(records, newline, bom))
    acervo = read_acervo(path)
    assert [d.doc_id for d in acervo.documents] == ["d1", "d2", "d3"]
    assert [d.text for d in acervo.documents] == list(texts.values())  # byte-for-byte, separators kept
    assert acervo.documents[1].metadata["issuer"] == "ANEEL\u2028SRG"
    assert [d.where for d in acervo.documents] == ["acervo.jsonl, line 1", "acervo.jsonl, line 2",
                                                   "acervo.jsonl, line 3"]
    assert acervo.metadata_columns == ["doc_type", "issuer", "date", "source_file"]  # no BOM in a name


def test_error_after_separators_names_the_right_line(tmp_path, texts):
    records = [_record(k, v) for k, v in texts.items()]
    data = _dump(records, "\r\n") + b'{"doc_id": "d4", "text": \r\n'  # broken 4th record
    path = tmp_path / "broken.jsonl"
    path.write_bytes(data)
    with pytest.raises(InputFileError, match=r"broken\.jsonl, line 4: not valid JSON"):
        read_acervo(path)
    # a duplicate id after the separators: both lines named right
    path.write_bytes(_dump(records + [_record("d2", "x y z")]))
    with pytest.raises(InputFileError, match=r"broken\.jsonl, line 4: duplicate doc_id 'd2' \(first seen at "
                                             r"broken\.jsonl, line 2\)"):
        read_acervo(path)


def test_task_chunks_keep_separator_characters(tmp_path, texts):
    path = tmp_path / "a.jsonl"
    path.write_bytes(_dump([_record(k, v) for k, v in texts.items()]))
    task = build_task(path, chunk_words=100, query_words=20)
    # U+2028 / U+0085 / U+2029 are whitespace to str.split(): the words around them are separate words,
    # exactly as if the document had been read whole
    expected = {k: " ".join(v.split()) for k, v in texts.items()}
    got = task.corpus.groupby("doc_id", sort=False)["text"].agg(" ".join).to_dict()
    assert got == expected


def test_bom_only_at_file_start(tmp_path, texts):
    records = [_record(k, v) for k, v in texts.items()]
    path = tmp_path / "cat.jsonl"
    path.write_bytes(_dump(records[:2], bom=True) + _dump(records[2:], bom=True))  # two files concatenated
    with pytest.raises(InputFileError, match=r"cat\.jsonl, line 3: a byte-order mark \(U\+FEFF\) starts the line; "
                                             r"it is only allowed at the start of the file"):
        read_acervo(path)


def test_blank_lines_skipped_line_numbers_kept(tmp_path, words):
    path = tmp_path / "gaps.jsonl"
    path.write_bytes(b"\n  \r\n" + _dump([_record("a", words(10))]) + b"\t\n" + b'{"doc_id": "b"}\n')
    with pytest.raises(InputFileError, match=r"gaps\.jsonl, line 5: no `text` field"):
        read_acervo(path)
    path.write_bytes("\u2028\n".encode("utf-8"))  # not JSON whitespace: not a blank line
    with pytest.raises(InputFileError, match=r"gaps\.jsonl, line 1: not valid JSON"):
        read_acervo(path)


def test_jsonl_lines_split_on_newline_only():
    text = "a\u2028b\r\nc\u0085d\x0ce\nf\r"
    assert list(jsonl_lines(text)) == [(1, "a\u2028b"), (2, "c\u0085d\x0ce"), (3, "f")]
    assert text.splitlines() != [line for _, line in jsonl_lines(text)]  # what the old reader did


def test_skipped_files_warned_with_reasons(tmp_path, words):
    root = tmp_path / "acervo"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text(words(150), encoding="utf-8")
    (root / "parecer.pdf").write_bytes(b"%PDF-1.4")
    (root / "sub" / "voto.DOCX").write_bytes(b"PK\x03\x04")
    (root / "LEIAME").write_text("x", encoding="utf-8")
    (root / ".cache").mkdir()
    (root / ".cache" / "b.txt").write_text(words(150), encoding="utf-8")
    with pytest.warns(SkippedFilesWarning) as rec:
        acervo = read_acervo(root)
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert msg.startswith("4 file(s) in the acervo folder were not read")
    for part in ("acervo/.cache/b.txt (hidden)", "acervo/LEIAME (unsupported type (no suffix))",
                 "acervo/parecer.pdf (unsupported type .pdf)", "acervo/sub/voto.DOCX (unsupported type .docx)",
                 "convert it to .txt"):
        assert part in msg, part
    assert acervo.skipped_reasons == {"acervo/.cache/b.txt": "hidden",
                                      "acervo/LEIAME": "unsupported type (no suffix)",
                                      "acervo/parecer.pdf": "unsupported type .pdf",
                                      "acervo/sub/voto.DOCX": "unsupported type .docx"}
    assert acervo.skipped_files == list(acervo.skipped_reasons)


def test_no_warning_without_skipped_files(tmp_path, words):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text(words(150), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_acervo(tmp_path / "d").skipped_files == []


def test_many_skipped_files_are_counted(tmp_path, words):
    root = tmp_path / "big"
    root.mkdir()
    (root / "a.txt").write_text(words(150), encoding="utf-8")
    for i in range(25):
        (root / f"scan{i:02d}.pdf").write_bytes(b"%PDF")
    with pytest.warns(SkippedFilesWarning,
                      match=r"^25 file\(s\).*big/scan19\.pdf \(unsupported type \.pdf\) and 5 more\."):
        read_acervo(root)
