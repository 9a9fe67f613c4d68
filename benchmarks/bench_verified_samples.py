"""Do ``verified`` rows of a document *sample* cover the population value? The superpopulation grid, sampled.

Run by hand:  OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_verified_samples.py [--populations 8]
              [--samples 10] [--reps 1000] [--alphas 1.2 1.5 2 3] [--slopes 0 -0.5]
              [--dominant 0 0.02 0.05 0.1 0.25] [--designs 20:150 50:500 20:500] [--out FILE.json] [--raw FILE.npz]

The sibling of ``bench_verified_criterion.py`` (its superpopulations: :func:`superpopulation`) for the design
``verify`` checks with a finite population. A *population* is ``G_pop`` clusters drawn from a superpopulation;
with a dominant share ``p`` > 0 one of them is a dominant cluster sized to hold ``p`` of the population's queries
(present in every population; a sample holds it with probability ``K / G_pop``). The population's micro
(``sum s / sum n``) and macro (mean of ``s / n``) are the targets. A *sample* is K of its clusters drawn without
replacement, ``--samples`` of each of ``--populations`` populations a design.

Each sample is checked twice, as ``verify`` checks it (``verify._simulate``, ``--reps`` replicates, 99 bootstrap
replicates): *sizes*, every population cluster's size known (``design["sizes"]``: the sized twins,
``_simulate_sized``) and *no sizes* (only ``G_pop``: the Booth-Butler-Hall twin, micro rows that pass
``unverifiable``, :data:`~ragcov_data.eval.estimates.verify.UNSEEN_SIZES`). Its own intervals are computed as
``evaluate`` computes them for that record (``population={"documents": G_pop}``, with ``"sizes"`` when known):
micro ``known_sizes`` (sizes only), ``cr2``, ``cr1``; macro ``t``, ``cr2``. A row is *claimed* when its status is
``verified``; its true coverage is whether the interval contains the population value. A design is *shown short*
when its claimed rows (at least 10) cover less than 0.93 by more than 2 MC SE (binomial, over the rows). The
*benign* cost: among rows whose pooled check passes (coverage + 2 MC SE >= 0.95, the one-population test) in
designs where those rows cover >= 0.93, the share whose status is ``unverifiable``. Results:
``docs/results/verified-criterion.md`` (Samples).
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, peak_rss_mb, table  # noqa: E402
from bench_verified_criterion import _rates, superpopulation, unpack_design  # noqa: E402

from ragcov_data.eval.estimates import _kernels  # noqa: E402
from ragcov_data.eval.estimates import verify as V  # noqa: E402

LEVEL, BAR, MIN_CLAIMED = 0.95, 0.93, 10
PAIRS = {"sizes": [("micro", "known_sizes"), ("micro", "cr2"), ("micro", "cr1"), ("macro", "t"), ("macro", "cr2")],
         "no sizes": [("micro", "cr2"), ("micro", "cr1"), ("macro", "t"), ("macro", "cr2")]}


def population(sp: dict, G: int, p: float, slope: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``G`` clusters drawn from the superpopulation; with ``p`` > 0 the first is a dominant cluster holding ``p`` of
    the population's queries (its rate from the same Beta at its size)."""
    idx = rng.integers(0, len(sp["n"]), G)
    n, s = sp["n"][idx].copy(), sp["s"][idx].copy()
    if p > 0:
        d = np.array([max(1.0, round(p / (1 - p) * n[1:].sum()))])
        _, r = _rates(rng, d, slope, sp["center"])
        n[0], s[0] = d[0], rng.binomial(d.astype(np.int64), r)[0]
    return n, s


def run_design(sp: dict, G: int, K: int, p: float, slope: float, P: int, S: int, reps: int, seed: int) -> dict:
    """Per sample (``P`` populations x ``S`` samples): whether it holds the dominant cluster, and per record and
    pair its status, pooled check coverage and MC SE, and whether its interval contains the population value."""
    rng = np.random.default_rng([seed, G, K, int(p * 1000), int(abs(slope) * 100)])
    out: dict = {"holds": [], "pop": np.repeat(np.arange(P), S), "status": {}, "cov": {}, "se": {}, "contains": {}}
    for rec, pairs in PAIRS.items():
        for e, m in pairs:
            for part in ("status", "cov", "se", "contains"):
                out[part][f"{rec}|{e}/{m}"] = []
    for j in range(P):
        n, s = population(sp, G, p, slope, rng)
        truth = {"micro": s.sum() / n.sum(), "macro": float((s / n).mean())}
        picks = np.argsort(rng.random((S, G)), axis=1)[:, :K]
        out["holds"] += list((picks == 0).any(1) & (p > 0))
        for rec, pairs in PAIRS.items():
            pop = {"documents": float(G), **({"sizes": n} if rec == "sizes" else {})}
            for e, m in pairs:
                r = _kernels.interval_batch(n[picks], s[picks], s[picks], estimator=e, method=m, level=LEVEL,
                                            population=pop)
                t = truth[e]
                out["contains"][f"{rec}|{e}/{m}"] += list(np.isfinite(r["low"]) & (r["low"] <= t) & (t <= r["high"]))
        for i in range(S):
            for rec, pairs in PAIRS.items():
                design = {"n": n[picks[i]], "s": s[picks[i]], "q": s[picks[i]], "population": float(G),
                          "sizes": n if rec == "sizes" else None, "level": LEVEL, "seed": j * S + i}
                res = V._simulate(design, pairs, reps, V.VERIFY_RESAMPLES)
                for e, m in pairs:
                    k = f"{rec}|{e}/{m}"
                    out["status"][k].append(res[f"{e}/{m}"]["verified_status"])
                    out["cov"][k].append(res[f"{e}/{m}"]["verified_coverage"])
                    out["se"][k].append(res[f"{e}/{m}"]["verified_mc_se"])
    return {part: ({k: np.asarray(v) for k, v in d.items()} if isinstance(d, dict) else np.asarray(d))
            for part, d in out.items()}


def _cov(hit: np.ndarray, pop: np.ndarray | None = None) -> tuple[float, float, int]:
    """Coverage of ``hit``, its MC SE and count: binomial over rows, or, given each row's population ``pop``,
    clustered by population (samples of one population share its value: their rows are not independent)."""
    k = len(hit)
    if not k:
        return float("nan"), float("nan"), 0
    c = float(hit.mean())
    se = math.sqrt(max(c * (1 - c), 1.0 / k) / k)
    if pop is not None:
        _, code = np.unique(pop, return_inverse=True)
        m, h = np.bincount(code), np.bincount(code, weights=hit.astype(float))
        G = len(m)
        if G > 1:
            se = max(math.sqrt(G / (G - 1) * ((h - c * m) ** 2).sum()) / k, math.sqrt(1.0 / k) / k)
    return c, se, k


def keys(results: list[dict]) -> list[str]:
    return list(results[0]["status"].keys())


def design_rows(results: list[dict]) -> list[dict]:
    """Per design and record: per pair, the share verified / unverifiable and the coverage of verified rows."""
    rows = []
    for r in results:
        for rec in PAIRS:
            row = {"design": r["name"], "record": rec}
            for e, m in PAIRS["sizes"]:
                k, tag = f"{rec}|{e}/{m}", f"{e}/{m}"
                if k not in r["status"]:
                    row[f"{tag} ver/unv"] = row[f"{tag} cov ver"] = "n/a"
                    continue
                st, hit = r["status"][k], r["contains"][k]
                c, se, n = _cov(hit[st == "verified"])
                row[f"{tag} ver/unv"] = f"{(st == 'verified').mean():.2f}/{(st == 'unverifiable').mean():.2f}"
                row[f"{tag} cov ver"] = "-" if not n else f"{c:.3f}±{se:.3f}"
            rows.append(row)
    return rows


def summary(results: list[dict]) -> list[dict]:
    """Per record and pair, pooled over the designs: claimed rows and their coverage (MC SE clustered by
    population), designs shown short and the worst design (binomial MC SE over its rows, the stricter test), and
    the benign cost (the share of pooled-check-passed rows marked unverifiable)."""
    rows = []
    for k in keys(results):
        claimed, pops, short, worst, blind, passed = [], [], [], None, 0, 0
        for i, r in enumerate(results):
            st, hit = r["status"][k], r["contains"][k]
            ok = r["cov"][k] + 2 * r["se"][k] >= LEVEL
            c, se, n = _cov(hit[st == "verified"])
            claimed.append(hit[st == "verified"])
            pops.append(i * 1000 + r["pop"][st == "verified"])
            if n >= MIN_CLAIMED:
                if c + 2 * se < BAR:
                    short.append(r["name"])
                if worst is None or c < worst[1]:
                    worst = (r["name"], c, se, n)
            c0, _, n0 = _cov(hit[ok])
            if n0 >= MIN_CLAIMED and c0 >= BAR:
                blind += int((ok & (st == "unverifiable")).sum())
                passed += n0
        c, se, n = _cov(np.concatenate(claimed), np.concatenate(pops))
        rows.append({"record": k.split("|")[0], "pair": k.split("|")[1], "claimed": n,
                     "claimed coverage": "-" if not n else f"{c:.3f}±{se:.3f}", "short": len(short),
                     "worst design (claimed)": "-" if worst is None else
                     f"{worst[0]}: {worst[1]:.3f}±{worst[2]:.3f} ({worst[3]})",
                     "benign unverifiable": "-" if not passed else f"{blind / passed:.3f} of {passed}"})
    return rows


def by_holding(results: list[dict]) -> list[dict]:
    """Sized record, designs with a dominant cluster: claimed rows of samples holding it and lacking it."""
    rows = []
    for k in (k for k in keys(results) if k.startswith("sizes|micro")):
        for holds in (True, False):
            hits, pops, ver, tot = [], [], 0, 0
            for i, r in enumerate(results):
                if r["params"]["dominant"] == 0:
                    continue
                m = r["holds"] == holds
                st = r["status"][k][m]
                hits.append(r["contains"][k][m][st == "verified"])
                pops.append(i * 1000 + r["pop"][m][st == "verified"])
                ver += int((st == "verified").sum())
                tot += int(m.sum())
            c, se, n = _cov(np.concatenate(hits), np.concatenate(pops))
            rows.append({"pair": k.split("|")[1], "sample": "holds the dominant" if holds else "lacks it",
                         "samples": tot, "verified": f"{ver} ({ver / max(tot, 1):.2f})",
                         "coverage of verified": "-" if not n else f"{c:.3f}±{se:.3f}"})
    return rows


def load_raw(path: str) -> list[dict]:
    """The designs a ``--raw`` file holds, as :func:`run_design` returns them (with ``name`` and ``params``)."""
    z = np.load(path)
    out = []
    for i, name in enumerate(z["names"]):
        m = re.match(r"a=(\S+) slope=(\S+) K=(\d+) of (\d+) dom=(\S+)$", str(name))
        r: dict = {"name": str(name), "status": {}, "cov": {}, "se": {}, "contains": {},
                   "params": {"alpha": float(m[1]), "slope": float(m[2]), "K": int(m[3]), "G": int(m[4]),
                              "dominant": float(m[5])}}
        out.append(unpack_design(z, i, r))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--populations", type=int, default=8, help="finite populations drawn per design")
    ap.add_argument("--samples", type=int, default=10, help="samples drawn from each population")
    ap.add_argument("--reps", type=int, default=V.VERIFY_REPS, help="replicates of each check (verify's own)")
    ap.add_argument("--alphas", type=float, nargs="+", default=[1.2, 1.5, 2.0, 3.0])
    ap.add_argument("--slopes", type=float, nargs="+", default=[0.0, -0.5])
    ap.add_argument("--dominant", type=float, nargs="+", default=[0.0, 0.02, 0.05, 0.10, 0.25])
    ap.add_argument("--designs", nargs="+", default=["20:150", "50:500", "20:500"], help="K:G_pop pairs")
    ap.add_argument("--superpop", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=None, help="write the tables as JSON")
    ap.add_argument("--raw", default=None, help="write every sample's statuses and containments (.npz)")
    ap.add_argument("--rescore", default=None, help="print the tables of a --raw file instead of simulating")
    args = ap.parse_args()
    print(f"$ {command_line()}", flush=True)
    t0 = time.perf_counter()
    results = load_raw(args.rescore) if args.rescore else []
    for alpha, slope in itertools.product(args.alphas, args.slopes) if not args.rescore else ():
        sp = superpopulation(alpha, slope, args.superpop, args.seed)
        for kg, p in itertools.product(args.designs, args.dominant):
            K, G = (int(x) for x in kg.split(":"))
            t1 = time.perf_counter()
            r = run_design(sp, G, K, p, slope, args.populations, args.samples, args.reps, args.seed)
            r["name"] = f"a={alpha:g} slope={slope:g} K={K} of {G} dom={p:g}"
            r["params"] = {"alpha": alpha, "slope": slope, "K": K, "G": G, "dominant": p}
            results.append(r)
            print(f"  {r['name']}: {time.perf_counter() - t1:.1f} s", flush=True)
    if args.raw and not args.rescore:
        np.savez_compressed(args.raw, names=np.array([r["name"] for r in results]),
                            **{f"d{i}/{part}/{k}": v for i, r in enumerate(results)
                               for part in ("status", "cov", "se", "contains") for k, v in r[part].items()},
                            **{f"d{i}/{x}": r[x] for i, r in enumerate(results) for x in ("holds", "pop")})
    summ, hold, rows = summary(results), by_holding(results), design_rows(results)
    print("\nclaimed rows pooled over the designs:\n\n" + table(summ) + "\n", flush=True)
    print("sized record, designs with a dominant cluster, by whether the sample holds it:\n\n" + table(hold) + "\n")
    print("designs:\n\n" + table(rows) + "\n", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"command": command_line(), "summary": summ, "by holding": hold,
                                              "designs": rows, "seconds": time.perf_counter() - t0}, indent=1))
    print(f"total {time.perf_counter() - t0:.0f} s; peak RSS {peak_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()
