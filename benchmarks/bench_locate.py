"""Locating a pipeline's passages in the IRPF acts (target: 20,000 passages of 50-800 words in under 2 s).

    python benchmarks/bench_locate.py [--data-dir ../shared/data] [--passages 20000] [--reps 3] [--seed 0]

Passages are word windows of 50 to 800 words drawn at random from the seven acts (``--seed``), as a pipeline
returns them: most verbatim, a share re-spaced (``" ".join(text.split())``: the tolerant path) and a share with
one word edited (the fuzzy path; ``--edited``, default 1%). Times, best of ``--reps``, in the same run:

- ragcov's locator (:func:`ragcov_data.runs.locate.locate_passages`: one Aho-Corasick pass, exact check, the
  tolerant and fuzzy paths), the character line built once before (what a scored run builds once per task);
- the peer: a plain ``str.find`` loop over the acts for every passage (exact matches only, first place only: it
  does less than the locator, which also counts every place and finds the re-spaced and edited passages).

Prints the ratio, the passages' characters, the shares located by each path and the peak memory the locator
added (``tracemalloc``). Prints the command first.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir  # noqa: E402


def passages(ids: list[str], texts: list[str], n: int, seed: int, edited: float) -> tuple[list[str], int]:
    """``n`` windows of 50-800 words: verbatim, re-spaced (every 10th) or with one word edited (``edited``)."""
    rng = np.random.default_rng(seed)
    tokens = [[m.span() for m in re.finditer(r"\S+", t)] for t in texts]
    out, n_verbatim = [], 0
    while len(out) < n:
        d = int(rng.integers(len(texts)))
        size = int(rng.integers(50, 801))
        if len(tokens[d]) <= size:
            continue
        a = int(rng.integers(0, len(tokens[d]) - size))
        s, e = tokens[d][a][0], tokens[d][a + size - 1][1]
        text = texts[d][s:e]
        u = rng.random()
        if u < edited:
            words = text.split()
            words[len(words) // 2] = words[len(words) // 2][::-1] + "x"
            text = " ".join(words)
        elif len(out) % 10 == 9:
            text = " ".join(text.split())
        else:
            n_verbatim += 1
        out.append(text)
    return out, n_verbatim


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=default_data_dir())
    p.add_argument("--passages", type=int, default=20_000)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--edited", type=float, default=0.01)
    args = p.parse_args(argv)
    print(f"$ {command_line()}")
    from ragcov_data.legal.acervo import read_acervo
    from ragcov_data.loaders.cited_questions import IRPF_FILES, irpf_dir
    from ragcov_data.runs.line import character_line
    from ragcov_data.runs.locate import clear_memo, locate_passages

    acts = read_acervo(irpf_dir(args.data_dir) / IRPF_FILES["acts"])
    ids, texts = [d.doc_id for d in acts.documents], [d.text for d in acts.documents]
    t0 = time.perf_counter()
    line = character_line(ids, texts)
    t_line = time.perf_counter() - t0
    ps, n_verbatim = passages(ids, texts, args.passages, args.seed, args.edited)
    ours, peer = [], []
    loc = None
    for _ in range(args.reps):
        clear_memo()  # each rep locates: the memo would answer a repeated call from memory
        t0 = time.perf_counter()
        loc = locate_passages(ps, line)
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for t in ps:  # the peer: the first act holding the passage, by str.find (exact matches only)
            for x in texts:
                if x.find(t) >= 0:
                    break
        peer.append(time.perf_counter() - t0)
    clear_memo()
    tracemalloc.start()
    locate_passages(ps, line)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    chars = sum(map(len, ps))
    print(f"{len(ps):,} passages ({n_verbatim:,} verbatim), {chars / 1e6:.1f} M characters; the acts: "
          f"{sum(map(len, texts)) / 1e6:.2f} M characters, line built in {t_line:.2f} s")
    print(f"locate_passages: {min(ours):.2f} s (best of {args.reps})   str.find loop: {min(peer):.2f} s   ratio "
          f"{min(peer) / min(ours):.1f}x faster")
    print("located: " + ", ".join(f"{k} {v:.1%}" for k, v in loc.shares().items()))
    print(f"peak memory added by locating: {peak / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
