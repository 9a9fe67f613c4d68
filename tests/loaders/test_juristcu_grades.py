"""JurisTCU qrel.csv grades: integers 0..3 only; anything else names the file line, the value and the fix."""
from __future__ import annotations

import shutil

import pandas as pd
import pytest

from ragcov_data.errors import InputFileError
from ragcov_data.loaders.juristcu import GRADE_RANGE, read_juristcu


@pytest.fixture()
def copy(juristcu_dir, tmp_path):
    folder = tmp_path / "juristcu"
    folder.mkdir()
    for name in ("doc.csv", "query.csv"):
        shutil.copy(juristcu_dir / name, folder / name)
    return folder


def _qrels(juristcu_dir) -> pd.DataFrame:
    return pd.read_csv(juristcu_dir / "qrel.csv", dtype=str, keep_default_na=False)


@pytest.mark.parametrize("value, reason", [("4", "outside the documented range 0..3"),
                                           ("-1", "outside the documented range 0..3"),
                                           ("abc", "not a number"), ("1.5", "not an integer"), ("", "empty")])
def test_bad_grade_names_line_value_and_fix(juristcu_dir, copy, value, reason):
    r = _qrels(juristcu_dir)
    row = 40
    r.loc[row, "SCORE"] = value
    r.to_csv(copy / "qrel.csv", index=False)
    q, d = r.loc[row, "QUERY_ID"], r.loc[row, "DOC_ID"]
    lines = (copy / "qrel.csv").read_text(encoding="utf-8").split("\n")
    line = row + 2  # header is line 1
    assert lines[line - 1].startswith(f"{q},{d},{value},")  # the line the message must name
    msg = (rf"qrel\.csv: line {line} \(QUERY_ID '{q}', DOC_ID '{d}'\) has SCORE '{value}': {reason} "
           r"\(1 invalid grade\(s\) in all\)\. JurisTCU grades are integers 0\.\.3 .*fix the SCORE column")
    with pytest.raises(InputFileError, match=msg):
        read_juristcu(copy)


def test_line_number_counts_quoted_multiline_fields(juristcu_dir, copy):
    r = _qrels(juristcu_dir).head(6).copy()
    r.loc[1, "ENGINE"] = "BM25\nSTS"  # a quoted field spanning two lines
    r.loc[4, "SCORE"] = "7"
    r.to_csv(copy / "qrel.csv", index=False)
    text = (copy / "qrel.csv").read_text(encoding="utf-8").split("\n")
    assert text[6].split(",")[2] == "7"  # row 4 starts on file line 7 (header, rows 0-3 with row 1 on two lines)
    with pytest.raises(InputFileError, match=r"qrel\.csv: line 7 .* has SCORE '7': outside"):
        read_juristcu(copy)


def test_every_invalid_grade_is_counted(juristcu_dir, copy):
    r = _qrels(juristcu_dir)
    r.loc[[5, 9, 11], "SCORE"] = ["3", "x", "9"]
    r.to_csv(copy / "qrel.csv", index=False)
    with pytest.raises(InputFileError, match=r"line 11 .* has SCORE 'x': not a number \(2 invalid grade\(s\) in all\)"):
        read_juristcu(copy)


def test_valid_grades_kept_and_range_documented(juristcu_dir):
    frames, manifest = read_juristcu(juristcu_dir)
    raw = _qrels(juristcu_dir)["SCORE"].astype(int)
    assert frames["qrels"]["score"].tolist() == raw.tolist()
    assert frames["qrels"]["score"].dtype == "int64"
    assert GRADE_RANGE == (0, 3) and set(raw) == {0, 1, 2, 3}
