"""Time to build the IRPF task under each external chunker, against the built-in words-100 in the same run.

    python benchmarks/bench_chunkers.py [--data-dir ../shared/data] [--repeats 3] [--json out.json]

Builds ``build_cited_task`` on the shared IRPF acts and questions (the seven acts, 175 questions) under
``words-100`` (the peer) and each chunker of the ``[chunkers]`` extra (``recursive-800``, ``chonkie-sentence-100``,
``semchunk-100``; plus the other built-ins for reference). One warm-up build (the acts' provision index and the
citation parser are cached per process, for every chunker alike), then ``--repeats`` rounds, the chunkers
interleaved within each round; the median wall time of each is reported with its ratio to words-100's median.
The first build of each external chunker (library import and chunker construction included) is reported apart,
and so is the library's own time (its chunker called on every act, median of the same rounds), so that the rest
of the build (locating the chunks, resolving the citations) is seen apart from the library.
Also printed per chunking: chunks, mean/median words per chunk, qrels, and the share of the act text (non-space
characters) left in no chunk.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir  # noqa: E402

PEER = "words-100"
EXTERNAL = ("recursive-800", "chonkie-sentence-100", "semchunk-100")
OTHERS = ("words-50", "words-200", "dispositivo", "article")


def _build(acts: Path, questions: Path, name: str):
    from ragcov_data.loaders.cited_questions import build_cited_task

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unresolved citations: the same for every chunking
        t0 = time.perf_counter()
        task = build_cited_task(acts, questions, chunker=name)
        return task, time.perf_counter() - t0


def _library_time(acts: Path, name: str) -> float:
    """Seconds the library's chunker alone takes over every act (no location, no task)."""
    from ragcov_data.legal.acervo import read_acervo
    from ragcov_data.loaders.chunkers import resolve

    spec = resolve(name)
    texts = [d.text for d in read_acervo(acts).documents]
    t0 = time.perf_counter()
    for t in texts:
        spec.split(t)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=default_data_dir())
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", dest="json_out", default=None)
    args = ap.parse_args()
    from ragcov_data.loaders.cited_questions import IRPF_FILES, irpf_dir

    folder = irpf_dir(args.data_dir)
    acts, questions = folder / IRPF_FILES["acts"], folder / IRPF_FILES["questions"]
    names = (PEER, *EXTERNAL, *OTHERS)
    _build(acts, questions, PEER)  # warm-up: provision index and citation parsing cached for all
    first = {n: _build(acts, questions, n)[1] for n in EXTERNAL}  # import + construction included
    times: dict[str, list[float]] = {n: [] for n in names}
    tasks = {}
    library: dict[str, list[float]] = {n: [] for n in EXTERNAL}
    for _ in range(args.repeats):
        for n in names:
            tasks[n], dt = _build(acts, questions, n)
            times[n].append(dt)
            if n in library:
                library[n].append(_library_time(acts, n))
    peer = statistics.median(times[PEER])
    rows = []
    print(f"{command_line()}\nIRPF task build time (median of {args.repeats}); ratio = chunking / {PEER} (same run)")
    print(f"{'chunking':22} {'median s':>9} {'ratio':>6} {'first s':>8} {'library s':>9} {'chunks':>7} {'mean w':>7} "
          f"{'median w':>8} {'qrels':>6} {'uncovered':>9}")
    for n in names:
        task = tasks[n]
        words = task.corpus["text"].str.split().str.len()
        unc = sum((task.manifest.get("chunker") or {}).get("uncovered_characters", {}).values())
        med = statistics.median(times[n])
        lib = statistics.median(library[n]) if n in library else None
        row = {"chunking": n, "median_s": med, "ratio_to_words_100": med / peer, "first_s": first.get(n), "library_s": lib,
               "chunks": int(len(task.corpus)), "mean_words": float(words.mean()),
               "median_words": float(words.median()), "qrels": int(len(task.qrels)), "uncovered_chars": int(unc),
               "times_s": times[n]}
        rows.append(row)
        print(f"{n:22} {med:9.3f} {med / peer:6.2f} {first.get(n) or float('nan'):8.3f} "
              f"{lib if lib is not None else float('nan'):9.3f} {row['chunks']:7d} "
              f"{row['mean_words']:7.1f} {row['median_words']:8.0f} {row['qrels']:6d} {unc:9d}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"command": command_line(), "peer": PEER, "rows": rows},
                                                  indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
