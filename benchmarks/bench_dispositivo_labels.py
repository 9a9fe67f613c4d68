"""Do dispositivo chunks name the artigos whose text they hold? Measured on the real compiled IRPF acts.

    python benchmarks/bench_dispositivo_labels.py [--data-dir ../shared/data] [--before REV]

Reads the seven acts as published (``irpf/html/``: Planalto compilations with vetoed, revoked and struck
artigos, SIJUT pages, the CTN Markdown clip), superseded wording taken out (the default) and kept
(``keep_superseded=True``), and cuts them with ``chunking="dispositivo"`` (min_words 20, max_words 400).

The artigo headings of each act are found independently of the parser: a line that opens with ``Art. N``
(``Art 31.``, ``Art. 12-A``, ``rt. 758.``) followed by a word that is neither lower case nor a comma,
outside a quoted block (a line opening with a quote, up to the line that closes it or a ``(NR)``), its
number neither going back nor leaping more than 20 ahead (inserted articles of another act); the numbering
restarts at an ``ANEXO`` line. A chunk is right when (1) every heading inside it is named by
the chunk (its ``articles``; a chunker without that column names only its label's artigo), and (2) its
label's artigo is the first heading inside it whose line is more than a stub (``(VETADO)``,
``(Revogado ...)``), or, with no heading inside, the last heading before it. Prints the share of right
chunks per act for the chunker of ``--before`` (a git revision; default ``HEAD~1`` style: the main
branch's commit given) and for the working tree, with the wrong chunks of the working tree listed.
"""
from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir  # noqa: E402

PAGES = ("L9250compilado.html", "L7713compilada.html", "L5172compilado.md", "D9580.html",
         "IN_RFB_1500_2014.html", "IN_RFB_2178_2024.html", "L15270.html")
_HEAD = re.compile(r"^(?:Art\.?|ART\.?|Artigo|rt\.)\s*(\d{1,4}(?:\.\d{3})*)\s*(?:[º°o]\.?|\.)?\s*(?:-([A-Z])\b)?"
                   r"\s*(\S*)")
_STUB = re.compile(r"^[\(\[]\s*(?:vetad|revogad)", re.I)
_LABEL_ART = re.compile(r"^arts?\. (\d+)(?:-([A-Z]))?")
_OPEN = "“\"«\x93"


def headings(text: str) -> list[tuple[int, str, bool]]:
    """``(word index, artigo number, stub)`` of every artigo heading of the act, found line by line (the
    heading's text may go on on the next line: ``Art. 114.`` / ``Fica facultada ...``)."""
    lines = [ln.split() for ln in text.splitlines()]
    flat = [w for ws in lines for w in ws]
    out: list[tuple[int, str, bool]] = []
    pos = 0
    quoted = False
    for ws in lines:
        if not ws:
            continue
        line = " ".join(ws)
        if ws[0][0] in _OPEN and not quoted:
            quoted = True
        elif quoted and out and out[-1][1] != "ANEXO":  # a lost closing quote: the act's next artigo ends it
            nxt = _heading_at(flat, pos, len(ws))
            if nxt and _key(nxt[0][1])[0] == _key(out[-1][1])[0] + 1:
                quoted = False
        if quoted:
            if "”" in line or "\x94" in line or "(NR)" in line or line.endswith(('"', '".', '";')) and len(line) > 1:
                quoted = False
            pos += len(ws)
            continue
        if ws[0].upper().startswith("ANEXO"):
            out.append((pos, "ANEXO", False))
        out.extend(_heading_at(flat, pos, len(ws)))
        pos += len(ws)
    return _increasing(out)


_ARTS = re.compile(r"^(?:Arts\.?|ARTS\.?)\s*(\d+)\s*[º°o]?\s*(e|a)\s*(\d+)")


def _heading_at(flat: list[str], pos: int, line_words: int) -> list[tuple[int, str, bool]]:
    """The artigo heading(s) opening the line at word ``pos``: ``Art. N`` followed by a word that is not
    lower case or a comma; ``Arts. 28 e 29`` / ``Arts. 52 a 58`` give every number."""
    first = flat[pos]
    if first[:1] not in "AR" and first != "rt.":
        return []
    window = " ".join(flat[pos:pos + 12])
    stub_words = " ".join(flat[pos:pos + max(line_words, 5)])
    m = _ARTS.match(window)
    if m:
        a, b = int(m.group(1)), int(m.group(3))
        nums = [a, b] if m.group(2) == "e" else list(range(a, b + 1))
        return [(pos, str(n), True) for n in nums]
    m = _HEAD.match(window)
    if not m or (first.startswith("rt") and first != "rt."):
        return []
    after = m.group(3)
    head = window[:m.start(3)].rstrip()
    if not after or after[0].islower() or head.endswith(",") or after.startswith(","):
        return []
    number = str(int(m.group(1).replace(".", ""))) + (f"-{m.group(2)}" if m.group(2) else "")
    rest = window[m.start(3):]
    return [(pos, number, bool(_STUB.match(rest)) and len(stub_words.split()) <= 30)]


def _key(number: str) -> tuple[int, str]:
    n, _, letter = number.partition("-")
    return int(n), letter


def _increasing(heads: list[tuple[int, str, bool]]) -> list[tuple[int, str, bool]]:
    """Keep the headings whose number neither goes back (an equal one is a second wording) nor leaps more than
    20 ahead (an article another act inserts, ``Art. 337-E`` in Lei 14.133 art. 178); restart at ANEXO."""
    out = []
    last: tuple[int, str] | None = None
    for h in heads:
        if h[1] == "ANEXO":
            last = None
            continue
        k = _key(h[1])
        if last is None or last <= k and k[0] <= last[0] + 20:
            out.append(h)
            last = k
    return out


def _named(label: str | None) -> set[str]:
    """Artigo numbers an artigo label names: ``anexo > art. 3`` -> {"3"}; ``arts. 28 e 29`` -> {"28", "29"}."""
    if not label:
        return set()
    for part in label.split(" > "):
        if part.startswith("arts. "):
            nums = part[6:].split()
            if len(nums) == 3 and nums[1] == "a":
                return {str(n) for n in range(int(nums[0]), int(nums[2]) + 1)}
            return {x for x in nums if x not in ("e", "a")}
        m = _LABEL_ART.match(part)
        if m:
            return {m.group(1) + (f"-{m.group(2)}" if m.group(2) else "")}
    return set()


def check(words_starts, spans, heads) -> tuple[int, int, list[str]]:
    """(right, total, descriptions of the wrong chunks) for the spans of one act."""
    words, _ = words_starts
    right = total = 0
    wrong = []
    j = 0
    last_before: str | None = None
    for s in spans:
        while j < len(heads) and heads[j][0] < s.start:
            last_before = heads[j][1]
            j += 1
        inside = [h for h in heads[j:] if h[0] < s.stop]
        label_arts = _named(s.unit)
        if not s.unit or (not inside and (last_before is None or not label_arts)):
            continue  # word windows, the preâmbulo, an annex's own text
        total += 1
        named = set().union(*(_named(a) for a in getattr(s, "articles", ()) or ())) | label_arts
        if inside:
            lead = next((h for h in inside if not h[2]), inside[0])[1]
            if last_before is not None and inside[0][0] > s.start and _starts_in_text(words, s.start,
                                                                                       inside[0][0]):
                lead = last_before  # the chunk opens with the rest of the artigo before
            # a label naming no artigo (preâmbulo, an annex's title) names where the chunk starts
            ok = all(h[1] in named for h in inside) and (lead in label_arts or not label_arts)
        else:
            ok = last_before in label_arts
        right += ok
        if not ok:
            wrong.append(f"{s.unit!r} articles={list(getattr(s, 'articles', ()))} holds "
                         f"{[h[1] for h in inside] or ['(text of ' + str(last_before) + ')']}: "
                         + " ".join(words[s.start:s.start + 14]))
    return right, total, wrong


_HEADING_WORDS = re.compile(r"^(?:ANEXOS?|Anexo|T[ÍI]TULO|CAP[ÍI]TULO|Se[çc][ãa]o|SE[ÇC][ÃA]O|Subse[çc][ãa]o|LIVRO)$")


def _starts_in_text(words: list[str], a: int, b: int) -> bool:
    """Do words[a:b] (before the chunk's first heading) hold text of an artigo, not only a heading
    (``CAPÍTULO IV`` and its title)? Judged by the first word."""
    return not _HEADING_WORDS.match(words[a].lstrip("#*"))


def _old_chunker(rev: str):
    """The ``dispositivo_spans`` of git revision ``rev`` (its ``loaders/dispositivos.py``), loaded aside."""
    root = Path(__file__).resolve().parents[1]
    src = subprocess.run(["git", "show", f"{rev}:loaders/dispositivos.py"], cwd=root, capture_output=True,
                         text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_dispositivos.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_dispositivos", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["old_dispositivos"] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod.dispositivo_spans


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=default_data_dir())
    p.add_argument("--before", default="d4b8958", help="git revision of the chunker to compare with")
    p.add_argument("--show", type=int, default=5, help="wrong chunks listed per act (working tree)")
    args = p.parse_args(argv)
    print(f"$ {command_line()}")
    from ragcov_data.legal.acervo import read_acervo
    from ragcov_data.loaders.dispositivos import dispositivo_spans, words_and_line_starts

    chunkers = {f"before ({args.before})": _old_chunker(args.before), "after (working tree)": dispositivo_spans}
    html = Path(args.data_dir) / "irpf" / "html"
    for keep in (False, True):
        print(f"\n## superseded wording {'kept' if keep else 'taken out'}")
        totals = {name: [0, 0] for name in chunkers}
        for page in PAGES:
            text = read_acervo(html / page, keep_superseded=keep).documents[0].text
            ws = words_and_line_starts(text)
            heads = headings(text)
            cells = []
            for name, fn in chunkers.items():
                spans, _ = fn(ws[0], ws[1], min_words=20, max_words=400, chunk_words=100, query_words=20)
                r, t, wrong = check(ws, spans, heads)
                totals[name][0] += r
                totals[name][1] += t
                cells.append(f"{name}: {r}/{t}")
            print(f"{page:24s} " + " | ".join(cells))
            for w in wrong[:args.show]:
                print(f"    wrong: {w}")
        for name, (r, t) in totals.items():
            print(f"ALL {name}: {r}/{t} = {r / t:.1%} of chunks name the artigos whose text they hold")
    _aneel(Path(args.data_dir) / "aneel" / "aneel_fulltext.jsonl", chunkers, args.show)
    return 0


def _aneel(path: Path, chunkers: dict, show: int) -> None:
    """The same check on the acts of the ANEEL sample (PDF/HTML text of laws, decrees, resoluções, portarias:
    acts the parser's IRPF quirks were not written for), those with at least one artigo heading."""
    import json

    from ragcov_data.loaders.dispositivos import words_and_line_starts

    if not path.is_file():
        return
    print(f"\n## ANEEL sample ({path.name}), documents with an artigo heading")
    totals = {name: [0, 0, 0] for name in chunkers}
    wrong_all: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        text = rec["text"]
        heads = headings(text)
        if not heads:
            continue
        ws = words_and_line_starts(text)
        for name, fn in chunkers.items():
            spans, _ = fn(ws[0], ws[1], min_words=20, max_words=400, chunk_words=100, query_words=20)
            r, t, wrong = check(ws, spans, heads)
            totals[name][0] += r
            totals[name][1] += t
            totals[name][2] += 1
            if name.startswith("after"):
                wrong_all.extend(f"{rec['doc_id']}: {w}" for w in wrong)
    for name, (r, t, d) in totals.items():
        print(f"ANEEL {name}: {r}/{t} = {r / max(t, 1):.1%} of chunks of {d} documents name the artigos whose "
              "text they hold")
    for w in wrong_all[:show * 4]:
        print(f"    wrong: {w[:220]}")


if __name__ == "__main__":
    sys.exit(main())
