"""Draw real citation strings from acts the tests never use, for the hand-labelled accuracy set.

    python benchmarks/citation_sample.py [--data-dir ../shared/data] [--n 170] [--seed 2026] > strings.jsonl

Sources: the bodies of the ANEEL acts (``aneel/aneel_fulltext.jsonl``: preambles and bodies cite laws,
decrees, resolutions and the Constitution) and of the IRPF acts (``irpf/laws.jsonl``). Each text is cut
into clauses (at line breaks, ``;`` and sentence ends); a clause is a candidate when it holds an artigo
marker (``art.``, ``arts.``, ``artigo``) and is 25 to 260 characters long; clauses that appear in a test
file are left out. ``--n`` are drawn with a fixed seed, half from each source where there are enough.
The labels (``tests/data/citations_unseen.jsonl``) were then written by hand from the text.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_data_dir  # noqa: E402

_CLAUSE = re.compile(r"[^\n;]+?(?:[;\n]|\.(?=\s+[A-ZÀ-Ý])|$)")
_ARTIGO = re.compile(r"\b(?:[Aa]rts?\.|[Aa]rtigos?)\s*\d")
#: The heading that opens a dispositivo (``Art. 6º``, ``§ 2º``, ``Parágrafo único.``, ``IV -``, ``a)``): cut off.
_HEADING = re.compile(r"^\s*(?:\d+\s+)?(?:Art\.?\s*\d+(?:\.\d{3})?\s*[º°o]?(?:-[A-Z])?\s*\.?|§\s*\d+\s*[º°o]?(?:-[A-Z])?|"
                      r"Parágrafo único\.?|[IVXLC]+(?:-[A-Z])?\s*[-–]|[a-z]\))\s+(?=[A-ZÀ-Ýa-zà-ý“\"(])")

_INNER_HEADING = re.compile(r"\s(?=(?:Art\.?\s*\d+(?:\.\d{3})?\s*[º°o]?(?:-[A-Z])?\s*\.?|§\s*\d+\s*[º°o]?|[IVXLC]+\s*[-–])"
                            r"\s+[A-ZÀ-Ý])")


def clauses(text: str, join_lines: bool) -> list[str]:
    """Clauses of ``text`` holding an artigo citation, each without the heading that opens its dispositivo.
    ``join_lines``: line breaks are page layout (PDF text), not clause ends."""
    if join_lines:  # and a dispositivo heading inside the joined text starts a clause
        text = re.sub(r"-\n(?=[a-zà-ý])", "", text).replace("\n", " ")
        text = _INNER_HEADING.sub("\n", text)
    out = []
    for m in _CLAUSE.finditer(text):
        s = " ".join(m.group(0).split()).strip(" ;")
        s = _HEADING.sub("", s, count=1)
        if 25 <= len(s) <= 260 and _ARTIGO.search(s):
            out.append(s)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=default_data_dir())
    p.add_argument("--n", type=int, default=170)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--exclude", action="append", default=[],
                   help="a labelled JSONL file whose strings are not drawn again (repeatable)")
    args = p.parse_args(argv)
    data = Path(args.data_dir)
    tests = Path(__file__).resolve().parents[1] / "tests"
    seen = " ".join(" ".join(f.read_text(encoding="utf-8").split()) for f in tests.rglob("*.py"))
    drawn = {json.loads(line)["text"] for f in args.exclude for line in open(f, encoding="utf-8") if line.strip()}
    pools: dict[str, list[tuple[str, str]]] = {"aneel": [], "irpf": []}
    for src, path in (("aneel", data / "aneel" / "aneel_fulltext.jsonl"), ("irpf", data / "irpf" / "laws.jsonl")):
        for line in open(path, encoding="utf-8"):
            doc = json.loads(line)
            for s in dict.fromkeys(clauses(doc["text"], join_lines=src == "aneel")):
                if s not in seen and s not in drawn:
                    pools[src].append((doc["doc_id"], s))
    rng = random.Random(args.seed)
    half = args.n // 2
    pick = rng.sample(pools["aneel"], min(half, len(pools["aneel"])))
    pick += rng.sample(pools["irpf"], args.n - len(pick))
    for doc_id, s in pick:
        print(json.dumps({"source": doc_id, "text": s}, ensure_ascii=False))
    print(f"# pools: aneel {len(pools['aneel'])}, irpf {len(pools['irpf'])} clauses", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
