"""Vigência per dispositivo on the real compiled IRPF pages: how often the unit rule and the old per-chunk share
rule disagree, and how many chunks hold some wording out of force.

    python benchmarks/bench_vigencia_units.py [--data-dir ../shared/data]

Reads the seven acts as published (``irpf/html/``) with ``keep_superseded=True`` and cuts them with
``chunking="dispositivo"`` (min_words 20, max_words 400) and into 100-word windows. Per chunk: the old rule
(in force unless at least half of its words are superseded wording) against :func:`ragcov_data.legal.
vigencia.chunk_vigencia` (units out of force; the chunk in force unless every unit it holds is out of
force), and the chunks that name an out-of-force unit while in force (a revoked parágrafo beside wording in
force: what the old rule could not say).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir  # noqa: E402

PAGES = ("L9250compilado.html", "L7713compilada.html", "L5172compilado.md", "D9580.html",
         "IN_RFB_1500_2014.html", "IN_RFB_2178_2024.html", "L15270.html")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=default_data_dir())
    args = p.parse_args(argv)
    print(f"$ {command_line()}")
    from ragcov_data.legal import vigencia as vg
    from ragcov_data.legal.acervo import read_acervo
    from ragcov_data.loaders.chunking import chunk_spans
    from ragcov_data.loaders.dispositivos import dispositivo_spans, vigencia_units, words_and_line_starts

    html = Path(args.data_dir) / "irpf" / "html"
    for chunking in ("dispositivo", "words-100"):
        tot = {"chunks": 0, "old_out": 0, "new_out": 0, "old_out_new_in": 0, "old_in_new_out": 0,
               "in_force_naming_units": 0}
        seconds = 0.0
        for page in PAGES:
            doc = read_acervo(html / page, keep_superseded=True).documents[0]
            words, starts = words_and_line_starts(doc.text)
            if chunking == "dispositivo":
                spans = [(s.start, s.stop) for s in dispositivo_spans(
                    words, starts, min_words=20, max_words=400, chunk_words=100, query_words=20)[0]]
            else:
                spans = chunk_spans(len(words), 100, 20)
            sizes = [b - a for a, b in spans]
            flags = vg.word_flags(doc.text, doc.superseded)
            t = time.perf_counter()
            new, names, _ = vg.chunk_vigencia(sizes, flags, doc.status, vigencia_units(doc.text))
            seconds += time.perf_counter() - t
            old = [not (2 * sum(flags[a:b]) >= b - a) and doc.status is None for a, b in spans]
            tot["chunks"] += len(spans)
            tot["old_out"] += sum(not x for x in old)
            tot["new_out"] += sum(not x for x in new)
            tot["old_out_new_in"] += sum(not o and n for o, n in zip(old, new))
            tot["old_in_new_out"] += sum(o and not n for o, n in zip(old, new))
            tot["in_force_naming_units"] += sum(bool(u) and n for u, n in zip(names, new))
        print(f"{chunking}: {tot} (units and vigência of the seven acts: {seconds:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
