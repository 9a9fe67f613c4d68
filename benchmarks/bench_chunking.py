"""Speed of ``chunking="dispositivo"`` on the shared ANEEL sample (target: under 1 s) and on the seven
IRPF acts (277k words, the RIR/2018 alone 203k; target: under 2 s).

    python benchmarks/bench_chunking.py [--data-dir ../shared/data] [--reps 5]

Times the chunking alone (parse + units of every document, from the texts in memory) and the whole
``build_task`` (reading, chunking, queries, qrels), best of ``--reps``; prints the command first.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=default_data_dir())
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args(argv)
    print(f"$ {command_line()}")
    from ragcov_data import build_task
    from ragcov_data.loaders.dispositivos import dispositivo_spans, words_and_line_starts

    ok = True
    for name, target in (("aneel/aneel_fulltext.jsonl", 1.0), ("irpf/laws.jsonl", 2.0)):
        path = Path(args.data_dir) / name
        if not path.is_file():
            print(f"{path}: not found, skipped")
            continue
        texts = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        best_chunk = best_build = float("inf")
        for _ in range(args.reps):
            t = time.perf_counter()
            n_chunks = structured = 0
            for text in texts:
                words, starts = words_and_line_starts(text)
                spans, s = dispositivo_spans(words, starts, min_words=20, max_words=400, chunk_words=100,
                                             query_words=20)
                n_chunks += len(spans)
                structured += s
            best_chunk = min(best_chunk, time.perf_counter() - t)
            t = time.perf_counter()
            task = build_task(path, chunking="dispositivo")
            best_build = min(best_build, time.perf_counter() - t)
        words = sum(len(t.split()) for t in texts)
        print(f"{name}: {len(texts)} documents, {words:,} words: {structured} with artigos, {n_chunks:,} chunks "
              f"before the single-chunk exclusion ({len(task.corpus):,} in the task)")
        print(f"  dispositivo chunking: {best_chunk:.3f} s (best of {args.reps}; target < {target:g} s)")
        print(f"  build_task(chunking='dispositivo'): {best_build:.3f} s")
        ok &= best_chunk < target
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
