"""Bounded reading of large TREC/CSV/TSV runs (``load_run(depth=k)``): blocks of typed columns, pruned to k
rows a query plus ties as they are read, every row still checked (ids, numbers, repeated pairs, byte-order
marks), and the lines of an error named by reading the file again only when needed."""
from __future__ import annotations

import io
import lzma
import re
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from ragcov_data.errors import InputFileError, RagcovError, binary_kind

from ragcov_data.runs._normal import (_TREC_FIELDS, _check_order, _normalise, _number_column,  # noqa: F401
                                      _refuse_swapped)
from ragcov_data.runs._read import (_BOM, COLUMN_NAMES, _check_bom, _check_magic, _choose, _clean_trec,  # noqa: F401
                              _column_map, _line_labels, _read_error, _read_trec_lines, _refuse_delimiter)
from ragcov_data.ties import TIE_TOL
# ==================================================================================== bounded reading
#: Bytes of text parsed at a time by the bounded reader (``load_run(depth=...)``).
BLOCK_BYTES = 1 << 24


def _check_depth(depth: int | None) -> int | None:
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise RagcovError(f"`depth` must be a positive integer (rows kept a query) or None; got {depth!r}.")
    return int(depth)


def _top_mask(qcode: np.ndarray, key: np.ndarray, depth: int) -> np.ndarray:
    """Rows among their query's first ``depth`` by ``key`` (descending), or tied with its ``depth``-th."""
    n = len(qcode)
    if n == 0:
        return np.zeros(0, dtype=bool)
    idx = np.argsort(-key)  # by key, then stably by query (a radix sort when the codes fit 16 bits)
    qs = qcode[idx]
    if qcode.max() < 2**16:
        qs = qs.astype(np.uint16)
    idx = idx[np.argsort(qs, kind="stable")]
    qs = qcode[idx]
    starts = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]])
    sizes = np.diff(np.r_[starts, n])
    big = sizes >= depth
    if not big.any():
        return np.ones(n, dtype=bool)
    kth = np.full(int(qcode.max()) + 1, -np.inf)
    kth[qs[starts[big]]] = key[idx[starts[big] + depth - 1]]
    bound = kth[qcode]
    # ``ties.tied`` with some room: a row the tie policies could group with the depth-th is kept
    return key >= bound - 4 * TIE_TOL * np.maximum(1.0, np.abs(bound))


def _keep_depth(run: pd.DataFrame, depth: int | None) -> pd.DataFrame:
    """A run in normal form cut to ``depth`` rows a query plus ties (see :func:`load_run`)."""
    if depth is None:
        return run
    qcode = pd.factorize(run["query-id"])[0]
    mask = _top_mask(qcode, run["score"].to_numpy(dtype=np.float64), depth)
    out = run if mask.all() else run[mask].reset_index(drop=True)
    out.attrs = {**run.attrs, "depth": depth, "rows_read": len(run)}
    return out


def _head(path: Path, opener: Callable[..., Any] | None, size: int = 1 << 16) -> bytes:
    import zlib

    try:
        with (opener(path, "rb") if opener else open(path, "rb")) as fh:
            head = fh.read(size)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise _read_error(path, exc) from None
    if opener is None:
        _check_magic(path, head)
    return head[3:] if head.startswith(_BOM) else head


def _iter_blocks(path: Path, opener: Callable[..., Any] | None, size: int | None = None):
    """``(bytes, first line number)`` blocks of whole lines; the byte-order mark, compression and UTF-8
    checks of :func:`_read_bytes`, block by block."""
    import zlib

    size = size or BLOCK_BYTES
    carry, line, first = b"", 1, True
    try:
        fh = opener(path, "rb") if opener else open(path, "rb")
    except OSError as exc:
        raise _read_error(path, exc) from None
    with fh:
        while True:
            try:
                chunk = fh.read(size)
            except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
                raise _read_error(path, exc) from None
            if first:
                if opener is None:
                    _check_magic(path, chunk[:8])
                if chunk.startswith(_BOM):
                    chunk = chunk[3:]
                first = False
            if not chunk:
                if carry:
                    _check_text(carry, path, line)
                    yield carry, line
                return
            buf = carry + chunk if carry else chunk
            del chunk
            cut = buf.rfind(b"\n")
            if cut < 0:
                carry = buf
                continue
            if cut == len(buf) - 1:
                block, carry = buf, b""
            else:
                block, carry = buf[: cut + 1], buf[cut + 1:]
            del buf
            _check_text(block, path, line)
            n_lines = block.count(b"\n")
            yield block, line
            del block
            line += n_lines


def _check_text(block: bytes, path: Path, line: int) -> None:
    _check_bom(block, path, offset_lines=line - 1)
    try:
        block.decode("utf-8")
    except UnicodeDecodeError as exc:
        binary = binary_kind(block[:8]) if line == 1 else None
        if binary is not None:  # a PDF or an image named as a run: not text in another encoding
            raise InputFileError(f"{path}: this file is {binary[0]} (its first bytes are {block[:5]!r}), not a run; "
                                 "give the run file (TREC, CSV/TSV, JSON, parquet).") from None
        no = line + block[: exc.start].count(b"\n")
        raise InputFileError(f"{path}, line {no}: bytes that are not UTF-8 ({block[exc.start:exc.start + 4]!r}); "
                             "re-save the run file as UTF-8.") from None


def _read_streamed(path: Path, opener: Callable[..., Any] | None, fmt: str, colmap: Mapping[str, str], where: str,
                   depth: int, order: str | None) -> pd.DataFrame:
    """TREC / CSV / TSV read block by block into typed columns (ids dictionary-encoded, numbers float64),
    every row checked, each block cut to ``depth`` rows a query plus ties; then the kept rows are cut
    again across blocks and put in normal form. Peak memory: one block, a 64-bit key of every row's
    (query, document) pair (8 bytes a row, for the repeated-pair check) and the rows kept."""
    q_seen: list[Any] = []  # each block's query ids, in order of first appearance
    pair_keys: list[np.ndarray] = []  # a 64-bit hash of every row's (query, document): 8 bytes a row
    kept: list[pd.DataFrame] = []
    tags: set[str] = set()
    chosen: dict[str, Any] | None = None
    n_rows, header_line = 0, 0
    for data, first_line in _iter_blocks(path, opener):
        if not data.strip():
            continue
        if fmt == "trec":
            table = _trec_block(data, where, first_line)
            tags.update(table.column("tag").chunk(0).dictionary.to_pylist() if table.num_rows else [])
            cols = {"query-id": "qid", "corpus-id": "docid", "rank": "rank", "score": "score"}
            skip = 0
        else:
            if chosen is None:
                data, first_line, header_line, chosen = _split_header(data, first_line, fmt, colmap, where)
                if chosen is None:
                    continue  # blank lines before the header
            if not data.strip():
                continue
            table = _delimited_block(data, first_line, fmt, chosen, where)
            cols, skip = chosen, 0
        if table.num_rows == 0:
            continue
        labels = _line_labels(data, skip=skip, first_line=first_line)
        q = table.column(cols["query-id"]).chunk(0)
        d = table.column(cols["corpus-id"]).chunk(0)
        kept.append(_block_rows(table, cols, q, d, labels, fmt, where, depth, order, n_rows))
        q_seen.append(q.dictionary)
        pair_keys.append(_pair_keys(q, d))
        n_rows += table.num_rows
        del data, table, labels
    if n_rows == 0:
        raise InputFileError(f"{where}: no run lines found; expected {_TREC_FIELDS} lines." if fmt == "trec"
                             else f"{where}: no rows under the header.")
    _check_pairs(np.concatenate(pair_keys), path, opener, where, header_line, fmt, chosen)
    del pair_keys
    frame = pd.concat(kept, ignore_index=True)
    # queries in order of first appearance in the file (as without depth), rows in file order within each
    queries = pd.unique(np.concatenate([a.to_numpy(zero_copy_only=False) for a in q_seen]))
    first_seen = pd.Index(queries).get_indexer(frame["query-id"])
    frame = frame.iloc[np.argsort(first_seen, kind="stable")].reset_index(drop=True)
    by_rank = "rank" in frame and ("score" not in frame or order == "rank")
    key = -frame["rank"].to_numpy(np.float64) if by_rank else frame["score"].to_numpy()
    frame = frame[_top_mask(pd.factorize(frame["query-id"])[0], key, depth)].reset_index(drop=True)
    rows = frame.pop("_row").to_numpy()
    frame.attrs["_row_label"] = lambda i: _lines_of(path, opener, [int(rows[i])], header_line)[0]
    attrs: dict[str, Any] = {"depth": depth, "rows_read": n_rows}
    if fmt == "trec":
        attrs["tag"] = sorted(tags)[0] if len(tags) == 1 else sorted(tags)
    return _normalise(frame, source=where, fmt=fmt, attrs=attrs, path=str(path), order=order)


def _block_rows(table: Any, cols: Mapping[str, str], q: Any, d: Any, labels: Callable[[int], str], fmt: str,
                where: str, depth: int, order: str | None, n_rows: int) -> pd.DataFrame:
    """One block's rows checked (ids present, numbers typed) and cut to ``depth`` rows a query plus ties;
    ``_row`` is each kept row's index in the file (the block starts at row ``n_rows``)."""
    import pyarrow as pa

    for name, arr in (("query-id", q), ("corpus-id", d)):
        if arr.null_count:
            i = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputFileError(f"{where}, {labels(i)}: empty `{name}`; every row needs one.")
    score = rank = None
    if "score" in cols:
        score = _number_column(pd.Series(table.column(cols["score"]).to_numpy()), "score", where, labels)
    if "rank" in cols:
        raw = table.column(cols["rank"]).to_numpy()
        try:
            rank = _number_column(pd.Series(raw), "rank", where, labels, integer=True)
        except InputFileError:
            if score is not None:
                qid = pd.Series(q.dictionary.to_numpy(zero_copy_only=False)[q.indices.to_numpy()])
                _refuse_swapped(pd.Series(raw), score, qid, fmt, where, labels)
            raise
    key = -rank.astype(np.float64) if score is None or (order == "rank" and rank is not None) else score
    rows = np.flatnonzero(_top_mask(q.indices.to_numpy().astype(np.int64), key, depth))
    take = pa.array(rows)
    part = {"query-id": q.take(take).dictionary_decode().to_pandas(),
            "corpus-id": d.take(take).dictionary_decode().to_pandas()}
    if rank is not None:
        part["rank"] = rank[rows]
    if score is not None:
        part["score"] = score[rows]
    part["_row"] = n_rows + rows
    return pd.DataFrame(part)


def _dict_type() -> Any:
    import pyarrow as pa

    return pa.dictionary(pa.int32(), pa.string())


def _trec_block(data: bytes, where: str, first_line: int) -> Any:
    """One block of TREC lines as a table (ids and tag dictionary-encoded); a malformed line is named."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = ["qid", "q0", "docid", "rank", "score", "tag"]
    try:
        table = pacsv.read_csv(
            io.BytesIO(_clean_trec(data)),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                                             newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={"qid": _dict_type(), "docid": _dict_type(), "rank": pa.float64(),
                              "score": pa.float64(), "tag": _dict_type()},
                include_columns=["qid", "docid", "rank", "score", "tag"],
                strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[]),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        _read_trec_lines(data, where, first_line)  # raises with the line
        raise InputFileError(f"{where}: unreadable TREC lines near line {first_line} ({exc}).") from None
    return table.unify_dictionaries().combine_chunks()


def _split_header(data: bytes, first_line: int, fmt: str, colmap: Mapping[str, str], where: str
                  ) -> tuple[bytes, int, int, dict[str, Any] | None]:
    """The header of a CSV/TSV file: (rows after it, their first line, the header's line, columns)."""
    import csv

    sep = "," if fmt == "csv" else "\t"
    lines = data.split(b"\n")
    for i, ln in enumerate(lines):
        if ln.strip():
            first = ln.decode("utf-8").rstrip("\r")
            header = next(csv.reader([first], delimiter=sep), [])
            if len(header) < 2:
                _refuse_delimiter(first, sep, where)
            chosen = {**_choose(header, colmap, where), "_names": header}
            return b"\n".join(lines[i + 1:]), first_line + i + 1, first_line + i, chosen
    return b"", first_line + len(lines) - 1, 0, None


def _delimited_block(data: bytes, first_line: int, fmt: str, chosen: Mapping[str, Any], where: str) -> Any:
    """One block of CSV/TSV rows (no header) as a table: ids dictionary-encoded, numbers float64."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    sep = "," if fmt == "csv" else "\t"
    names = [str(c) for c in chosen["_names"]]
    ours = {k: str(v) for k, v in chosen.items() if k != "_names"}
    types = {ours["query-id"]: _dict_type(), ours["corpus-id"]: _dict_type()}
    for col in ("rank", "score"):
        if col in ours:
            types[ours[col]] = pa.float64()

    def read(column_types):
        return pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(delimiter=sep, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(column_types=column_types, include_columns=list(ours.values()),
                                                 strings_can_be_null=False, null_values=[""],
                                                 auto_dict_encode=False))

    try:
        return read(types).unify_dictionaries().combine_chunks()
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        msg = str(exc).split("\n")[0]
    try:  # numbers as text: the number checks name the row
        table = read({c: (pa.string() if t == pa.float64() else t) for c, t in types.items()})
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        raise InputFileError(
            f"{where}: not a {'CSV' if sep == ',' else 'TSV'} table with a header ({msg}) near line {first_line}; "
            "every line needs the header's number of fields."
        ) from None
    labels = _line_labels(data, first_line=first_line)
    for col in ("score", "rank"):
        if col in ours:
            _number_column(table.column(ours[col]).to_pandas(), col, where, labels, integer=col == "rank")
    raise InputFileError(f"{where}: unreadable rows near line {first_line} ({msg}).")


def _hash_strings(values: Any) -> np.ndarray:
    """64-bit hashes of an Arrow string array (pandas' SipHash, fixed key: the same string, the same hash)."""
    return pd.util.hash_array(values.to_numpy(zero_copy_only=False), categorize=False)


def _pair_keys(q: Any, d: Any) -> np.ndarray:
    """A 64-bit key of each row's (query id, document id), from the hashes of the block's dictionaries."""
    hq = _hash_strings(q.dictionary)[q.indices.to_numpy()]
    hd = _hash_strings(d.dictionary)[d.indices.to_numpy()]
    hq *= np.uint64(0x9E3779B97F4A7C15)  # wraps mod 2**64: mixes the query's hash before the document's joins
    hq ^= hd
    return hq


def _check_pairs(keys: np.ndarray, path: Path, opener: Callable[..., Any] | None, where: str, header_line: int,
                 fmt: str, chosen: Mapping[str, Any] | None) -> None:
    """A document listed twice for one query, over every row read (not only the rows kept): equal keys
    are confirmed on the rows' text, so a hash collision never refuses a run."""
    ordered = np.sort(keys)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return
    rows = np.flatnonzero(np.isin(keys, ordered[1:][same]))
    del ordered, same
    text = _rows_text(path, opener, [int(r) for r in rows], header_line)
    seen: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        seen.setdefault(_ids_of(text[int(r)][1], fmt, chosen), []).append(int(r))
    repeated = [v for v in seen.values() if len(v) > 1]
    if not repeated:
        return
    first = min(repeated, key=lambda v: v[1])  # the first repetition in file order, as without depth
    q, d = _ids_of(text[first[0]][1], fmt, chosen)
    n_dup = sum(len(v) - 1 for v in repeated)
    raise InputFileError(
        f"{where}: document {d!r} is listed {len(first)} times for query {q!r} (line {text[first[0]][0]} and line "
        f"{text[first[1]][0]}; {n_dup} repeated pair(s) in all); keep one line per (query, document) pair. A file "
        "holding several systems' runs (e.g. an ENGINE column) must be split into one run each."
    )


def _ids_of(line: str, fmt: str, chosen: Mapping[str, Any] | None) -> tuple[str, str]:
    """(query id, document id) of one data line, as the block reader parses it."""
    if fmt == "trec":
        f = line.split()
        return f[0], f[2]
    import csv

    assert chosen is not None
    names = [str(c) for c in chosen["_names"]]
    f = next(csv.reader([line], delimiter="," if fmt == "csv" else "\t"))
    return f[names.index(str(chosen["query-id"]))], f[names.index(str(chosen["corpus-id"]))]


def _rows_text(path: Path, opener: Callable[..., Any] | None, rows: list[int], header_line: int
               ) -> dict[int, tuple[int, str]]:
    """``{row: (line number, text)}`` of data rows (0-based; blank lines and the header not counted)."""
    want, out, n = set(rows), {}, -1
    for data, first_line in _iter_blocks(path, opener):
        for no, ln in enumerate(data.split(b"\n"), start=first_line):
            if no <= header_line or not ln.strip():
                continue
            n += 1
            if n in want:
                out[n] = (no, ln.decode("utf-8").rstrip("\r"))
        if n >= max(rows):
            break
    return out


def _lines_of(path: Path, opener: Callable[..., Any] | None, rows: list[int], header_line: int) -> list[str]:
    """``"line N"`` of data rows (0-based, blank lines and the header not counted), by reading the file again."""
    text = _rows_text(path, opener, rows, header_line)
    return [f"line {text[r][0]}" if r in text else f"row {r}" for r in rows]


