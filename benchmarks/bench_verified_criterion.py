"""Which census designs can the census check vouch for micro? A superpopulation grid for the concentration rule.

Run by hand:  OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_verified_criterion.py [--censuses 300]
              [--reps 300] [--alphas 1.2 1.5 2 3] [--dominant 0 0.02 0.05 0.1 0.25] [--dominant-modes present drawn]
              [--gs 20 50 150 500] [--slopes 0 -0.5] [--out FILE.json] [--raw FILE.npz]
              [--rescore FILE.npz] [--aneel-draws 600 --data-dir DIR]

A *superpopulation* holds ``--superpop`` (100,000) clusters whose sizes are ``floor`` of a Pareto(alpha) draw with
minimum 1 (many singletons; tail exponent alpha), each with a rate drawn from a Beta of precision 3 whose mean is
``expit(logit 0.6 + slope * (log n - mean log n))`` (``slope`` < 0: larger clusters score lower, so a large
cluster moves micro) and binomial 0/1 outcomes at that rate. A *census* is G clusters drawn with replacement from
it. With a dominant share ``p`` > 0 (:func:`censuses`): *present*, one of the G is a dominant cluster holding ``p``
of the census's queries; *drawn*, each of the G is of the dominant type with probability 1 / G. The micro value is
``sum s / sum n`` over the superpopulation (with a dominant share: ``p m_dom + (1 - p) sum s / sum n``).

For each census: the census check of ``ragcov`` (``verify._simulate`` with ``--reps`` replicates; its coverage and
MC SE, pass when ``coverage + 2 SE >= 0.95``) for micro ``cr2``, ``cr1`` and macro ``t``, ``cr2``; the census's own
interval of each and whether it contains the superpopulation value (the *true* coverage); the census's size
diagnostics (largest share, G* at rho 0 and 1, CV, Hill's tail exponent). Each candidate rule (:data:`FAMILIES`:
largest share times ``G^b`` above c, G* below g, the share above m, the CV above v, Hill's exponent below h) is
scored (:func:`score`): a row is claimed (``verified``) when the check passes and the rule is silent; a design is
shown short when its claimed rows (at least 20) cover less than 0.93 by more than 2 MC SE; the cost is the share of
check-passed rows marked ``unverifiable`` in benign designs (where the check-passed rows cover >= 0.93 with no
rule). A family's threshold (:func:`choose`) is the least strict one such that it and every stricter one leave no
design shown short, for cr2 and cr1 alike, over the designs without a drawn dominant cluster (no rule on a
census's sizes sees a cluster type the census happens to lack; those designs are reported apart). Then every
design under the module's rule (:func:`~ragcov_data.eval.estimates.concentration.is_concentrated`). Results and
the run of 2026-12-07: ``docs/results/verified-criterion.md``.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, default_data_dir, peak_rss_mb, table  # noqa: E402

from ragcov_data.eval.estimates import _kernels  # noqa: E402
from ragcov_data.eval.estimates import concentration as C  # noqa: E402
from ragcov_data.eval.estimates import verify as V  # noqa: E402

PAIRS = [("micro", "cr2"), ("micro", "cr1"), ("macro", "t"), ("macro", "cr2")]
LEVEL, BAR, MIN_CLAIMED = 0.95, 0.93, 20
PREC, BASE = 3.0, math.log(0.6 / 0.4)


def _rates(rng: np.random.Generator, n: np.ndarray, slope: float, center: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean rate at each size and a Beta(PREC) draw around it."""
    m = 1.0 / (1.0 + np.exp(-(BASE + slope * (np.log(n) - center))))
    return m, rng.beta(m * PREC, (1 - m) * PREC)


def superpopulation(alpha: float, slope: float, M: int, seed: int) -> dict:
    """M clusters: Pareto(alpha) sizes (floor, minimum 1), Beta rates tied to size, binomial outcomes."""
    rng = np.random.default_rng([seed, int(alpha * 100), int(abs(slope) * 100)])
    n = np.floor(rng.pareto(alpha, M) + 1.0)
    center = float(np.log(n).mean())
    _, r = _rates(rng, n, slope, center)
    s = rng.binomial(n.astype(np.int64), r).astype(float)
    return {"n": n, "s": s, "center": center, "micro": s.sum() / n.sum(), "macro": float((s / n).mean())}


def censuses(sp: dict, G: int, p: float, slope: float, D: int, rng: np.random.Generator, drawn: bool = False):
    """``D`` censuses of G clusters, ``(n, s)`` each of shape (D, G), and the superpopulation's values.

    With a dominant share ``p``: *present*, every census holds one dominant cluster sized to hold ``p`` of its
    queries; *drawn* (``drawn``), each of the G clusters is of the dominant type with probability 1 / G (the
    superpopulation holds such clusters once per G, so a census holds none, one or more, as a draw of the
    ANEEL acts holds the act with 18% of the queries), its size the one that holds ``p`` of a typical census."""
    idx = rng.integers(0, len(sp["n"]), (D, G))
    n, s = sp["n"][idx].copy(), sp["s"][idx].copy()
    truth = {"micro": sp["micro"], "macro": sp["macro"]}
    if p > 0:
        typical = max(1.0, round(p / (1 - p) * (G - 1) * sp["n"].mean()))
        m_dom, _ = _rates(rng, np.array([typical]), slope, sp["center"])
        if drawn:
            where = rng.random((D, G)) < 1.0 / G
            d = np.full(int(where.sum()), typical)
        else:
            where = np.zeros((D, G), bool)
            where[:, 0] = True
            d = np.maximum(1.0, np.round(p / (1 - p) * n[:, 1:].sum(1)))
        _, r = _rates(rng, d, slope, sp["center"])
        n[where], s[where] = d, rng.binomial(d.astype(np.int64), r)
        # the superpopulation's queries: p from dominant clusters (mean rate m_dom), 1 - p from the rest
        truth = {"micro": p * float(m_dom[0]) + (1 - p) * sp["micro"],
                 "macro": (float(m_dom[0]) + (G - 1) * sp["macro"]) / G}
    return n, s, truth


def hill(x: np.ndarray) -> float:
    """Hill's estimate of the Pareto tail exponent from the ``k = max(5, sqrt(G))`` largest sizes (inf when
    they are all equal: no tail to see)."""
    top = np.sort(x)[::-1][:max(5, int(math.sqrt(len(x))) + 1)]
    logs = np.log(top[:-1] / top[-1])
    return float(len(logs) / logs.sum()) if logs.sum() > 0 else float("inf")


def diagnostics(n: np.ndarray) -> dict[str, np.ndarray]:
    """Per census (row of ``n``): largest share, G* (rho 0 and 1), CV and G."""
    return {"share": np.array([C.largest_share(x) for x in n]),
            "gstar0": np.array([C.effective_clusters(x, 0.0) for x in n]),
            "gstar1": np.array([C.effective_clusters(x, 1.0) for x in n]),
            "cv": np.array([V.size_cv(x) for x in n]), "hill": np.array([hill(x) for x in n]),
            "G": np.full(len(n), n.shape[1], float)}


def run_design(sp: dict, G: int, p: float, slope: float, D: int, reps: int, seed: int, drawn: bool = False) -> dict:
    """Per census: the check's pass and the true containment of each pair, and the size diagnostics."""
    rng = np.random.default_rng([seed, G, int(p * 1000), int(drawn)])
    n, s, truth = censuses(sp, G, p, slope, D, rng, drawn)
    out = {"diag": diagnostics(n), "pass": {}, "contains": {}, "check_coverage": {}}
    for est, m in PAIRS:
        r = _kernels.interval_batch(n, s, s, estimator=est, method=m, level=LEVEL)
        t = truth[est]
        out["contains"][f"{est}/{m}"] = np.isfinite(r["low"]) & (r["low"] <= t) & (t <= r["high"])
    cov = {f"{e}/{m}": np.empty(D) for e, m in PAIRS}
    ok = {f"{e}/{m}": np.empty(D, bool) for e, m in PAIRS}
    for d in range(D):
        design = {"n": n[d], "s": s[d], "q": s[d], "population": None, "level": LEVEL, "seed": d}
        res = V._simulate(design, PAIRS, reps, V.VERIFY_RESAMPLES)
        for k, r in res.items():
            c, se = r["verified_coverage"], r["verified_mc_se"]
            cov[k][d], ok[k][d] = c, c + 2 * se >= LEVEL
    out["pass"], out["check_coverage"] = ok, cov
    return out


def rule_fires(diag: dict, family: str, x: float) -> np.ndarray:
    """Where the candidate rule marks a census concentrated (micro blind). ``share*G^b``: largest share times
    ``G^b`` above ``x`` and the share above ``2 / G`` (as :func:`~concentration.is_concentrated`)."""
    if family.startswith("share*G^"):
        b = float(family.split("^")[1])
        return (diag["share"] * diag["G"] ** b > x) & (diag["share"] > 2.0 / diag["G"])
    if family == "G*(rho=0)":
        return diag["gstar0"] < x
    if family == "G*(rho=1)":
        return diag["gstar1"] < x
    if family == "share":
        return diag["share"] > x
    if family == "hill":
        return diag["hill"] < x
    return diag["cv"] > x  # "cv"


_LOG = list(np.round(np.exp(np.linspace(math.log(0.01), math.log(3.0), 300)), 4))
#: Thresholds tried per family, from the strictest to the least strict.
FAMILIES = {**{f"share*G^{b:g}": _LOG for b in (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6)},
            "G*(rho=0)": [400, 300, 250, 200, 150, 120, 100, 80, 60, 50, 40, 30, 25, 20, 15, 10, 8, 5, 3, 2, 1],
            "G*(rho=1)": [400, 300, 250, 200, 150, 120, 100, 80, 60, 50, 40, 30, 25, 20, 15, 10, 8, 5, 3, 2, 1],
            "share": list(np.round(np.arange(0.01, 0.51, 0.005), 3)),
            "cv": list(np.round(np.arange(0.2, 5.01, 0.05), 2)),
            "hill": [5, 4, 3, 2.5, 2, 1.75, 1.5, 1.25, 1, 0.75, 0.5]}
MICRO = ("micro/cr2", "micro/cr1")


def _cov(hit: np.ndarray) -> tuple[float, float, int]:
    k = len(hit)
    if not k:
        return float("nan"), float("nan"), 0
    c = float(hit.mean())
    return c, math.sqrt(max(c * (1 - c), 1.0 / k) / k), k


def score(results: list[dict], fires: list[np.ndarray], key: str) -> dict:
    """One rule (``fires``: per design, where it marks a census blind) for pair ``key``: the designs whose
    claimed rows (check passed, rule silent) are shown short of BAR (coverage + 2 MC SE < BAR, at least
    MIN_CLAIMED rows), the share of check-passed rows it marks unverifiable in benign designs (where the rows
    the check passed cover >= BAR with no rule), and the pooled coverage of claimed rows."""
    short, blind, passed, pooled = [], 0, 0, []
    for r, fire in zip(results, fires):
        ok, hit = r["pass"][key], r["contains"][key]
        c, se, k = _cov(hit[ok & ~fire])
        pooled.append(hit[ok & ~fire])
        if k >= MIN_CLAIMED and c + 2 * se < BAR:
            short.append(r["name"])
        c0, _, k0 = _cov(hit[ok])
        if k0 >= MIN_CLAIMED and c0 >= BAR:
            blind += int((ok & fire).sum())
            passed += k0
    hits = np.concatenate(pooled)
    return {"short": short, "benign unverifiable": blind / max(passed, 1), "claimed": len(hits),
            "claimed coverage": float(hits.mean()) if len(hits) else float("nan")}


def choose(results: list[dict]) -> list[dict]:
    """Per family: the least strict threshold such that it and every stricter one leave no design shown short
    of BAR, for micro cr2 and cr1 alike (a noisy design cannot pick a lax threshold by luck); its score."""
    rows = []
    for family, xs in FAMILIES.items():
        best = None
        for x in xs:
            fires = [rule_fires(r["diag"], family, x) for r in results]
            sc = {k: score(results, fires, k) for k in MICRO}
            if any(s["short"] for s in sc.values()):
                break
            best = (x, sc)
        row = {"family": family, "threshold": "none" if best is None else f"{best[0]:g}"}
        for k in MICRO:
            s = best[1][k] if best else None
            tag = k.split("/")[1]
            row[f"{tag} benign unverifiable"] = "-" if s is None else f"{s['benign unverifiable']:.3f}"
            row[f"{tag} claimed (coverage)"] = "-" if s is None else f"{s['claimed']} ({s['claimed coverage']:.3f})"
        rows.append(row)
    return rows


def module_rule(diag: dict) -> np.ndarray:
    """:func:`~concentration.is_concentrated` with the module's constants, per census."""
    return rule_fires(diag, f"share*G^{C.CONCENTRATION_POWER:g}", C.CONCENTRATION_C)


def design_rows(results: list[dict]) -> list[dict]:
    """Each design under the module's rule: per micro pair, the share of censuses verified and unverifiable (the
    rule), the coverage of verified rows (MC SE) and of all rows; macro t: verified and coverage of verified."""
    rows = []
    for r in results:
        fire = module_rule(r["diag"])
        stat = r["diag"]["share"] * r["diag"]["G"] ** C.CONCENTRATION_POWER
        row = {"design": r["name"], "median stat": f"{np.median(stat):.2f}"}
        for key in ("micro/cr2", "micro/cr1", "macro/t"):
            ok, hit = r["pass"][key], r["contains"][key]
            micro = key.startswith("micro")
            claimed = ok & ~fire if micro else ok
            cc, se, k = _cov(hit[claimed])
            tag = key.split("/")[1] if micro else "macro t"
            row[f"{tag} ver/unv"] = f"{claimed.mean():.2f}/{(ok & fire).mean() if micro else 0:.2f}"
            row[f"{tag} cov ver"] = "-" if not k else f"{cc:.3f}±{se:.3f}"
            if micro:
                row[f"{tag} cov all"] = f"{hit.mean():.3f}"
        rows.append(row)
    return rows


def summary(results: list[dict]) -> list[dict]:
    """Claimed rows pooled over design sets, under the module's rule and under the CV rule it replaces."""
    sets = {"no dominant": lambda r: " dom=0" in r["name"] and "drawn" not in r["name"] and "present" not in r["name"],
            "dominant present": lambda r: r["name"].endswith("present"),
            "dominant drawn": lambda r: r["name"].endswith("drawn")}
    rows = []
    for name, keep in sets.items():
        sub = [r for r in results if keep(r)]
        for rule, fires in (("module", [module_rule(r["diag"]) for r in sub]),
                            ("cv > 0.5", [rule_fires(r["diag"], "cv", 0.5) for r in sub])):
            for k in MICRO:
                s = score(sub, fires, k)
                rows.append({"designs": f"{name} ({len(sub)})", "rule": rule, "pair": k, "short": len(s["short"]),
                             "claimed": s["claimed"], "claimed coverage": f"{s['claimed coverage']:.3f}",
                             "benign unverifiable": f"{s['benign unverifiable']:.3f}"})
    return rows


def aneel_superpop(data_dir: str, draws: int) -> list[dict]:
    """The draws of ``bench_verified_grid.py --parts superpop`` (the 147 ANEEL acts at 100 words, with
    replacement, each evaluated as a census) that the module's rule leaves unconcentrated: each row's status
    and whether it contains the 147 acts' value (every other draw's micro rows are unverifiable)."""
    import pandas as pd

    import _verified_grid as VG

    v, codes, _ = VG.aneel_census(data_dir, "100")
    n, s, _q = VG.cluster_sums(v, codes)
    truth = VG.truths(n, s)
    K0 = len(n)
    by = [v[codes == c] for c in range(K0)]
    rng = np.random.default_rng([2026, 12, 5])  # bench_verified_grid.py's superpopulation draws
    recs = []
    with tempfile.TemporaryDirectory() as cache:
        for d in range(draws):
            idx = rng.integers(0, K0, K0)
            if C.is_concentrated(n[idx])[0]:
                continue
            t = VG.sample_table(np.concatenate([by[c] for c in idx]), np.repeat(np.arange(K0), n[idx].astype(int)),
                                None, None, cache)
            recs += [{"draw": d, "estimator": r["estimator"], "method": r["method"], "status": r["verified_status"],
                      "recommended": bool(r["recommended"]), "stat": C.concentration(n[idx]),
                      "contains": bool(r["low"] <= truth[r["estimator"]] <= r["high"])} for _, r in t.iterrows()]
    df = pd.DataFrame(recs)
    rows = []
    for (est, m), g in df.groupby(["estimator", "method"], sort=False):
        ver = g[g["status"] == "verified"]
        rows.append({"estimator": est, "method": m, "draws": f"{g['draw'].nunique()} of {draws}",
                     "verified": len(ver), "coverage of verified": f"{ver['contains'].mean():.3f}" if len(ver) else "-",
                     "coverage of all": f"{g['contains'].mean():.3f}"})
    if len(df):
        print(f"  unconcentrated draws: statistic {df['stat'].min():.3f}-{df['stat'].max():.3f}", flush=True)
    return rows


def save_raw(path: str, results: list[dict]) -> None:
    """Every census's numbers, one array per design and field (``d{i}/pass/micro/cr2`` ...), to re-score rules."""
    arrays = {"names": np.array([r["name"] for r in results])}
    for i, r in enumerate(results):
        for part in ("pass", "contains", "check_coverage", "diag"):
            for k, v in r[part].items():
                arrays[f"d{i}/{part}/{k}"] = np.asarray(v)
    np.savez_compressed(path, **arrays)


def unpack_design(z: Any, i: int, r: dict) -> dict:
    """Design ``i`` of a saved ``.npz`` into ``r``: key ``d{i}/part/k`` to ``r[part][k]``, ``d{i}/part`` to
    ``r[part]`` (this script's :func:`load_raw` and the samples' share the layout)."""
    for key in z.files:
        if key.startswith(f"d{i}/"):
            part, _, k = key.split("/", 1)[1].partition("/")
            if k:
                r[part][k] = z[key]
            else:
                r[part] = z[key]
    return r


def load_raw(path: str) -> list[dict]:
    """The designs :func:`save_raw` wrote, as :func:`run_design` returns them (with ``name``)."""
    z = np.load(path)
    return [unpack_design(z, i, {"name": str(name), "pass": {}, "contains": {}, "check_coverage": {}, "diag": {}})
            for i, name in enumerate(z["names"])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--censuses", type=int, default=300, help="censuses drawn per design")
    ap.add_argument("--reps", type=int, default=300, help="replicates of each census check")
    ap.add_argument("--alphas", type=float, nargs="+", default=[1.2, 1.5, 2.0, 3.0])
    ap.add_argument("--dominant", type=float, nargs="+", default=[0.0, 0.02, 0.05, 0.10, 0.25])
    ap.add_argument("--dominant-modes", nargs="+", default=["present", "drawn"], choices=["present", "drawn"])
    ap.add_argument("--gs", type=int, nargs="+", default=[20, 50, 150, 500])
    ap.add_argument("--slopes", type=float, nargs="+", default=[0.0, -0.5])
    ap.add_argument("--superpop", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=None, help="write every design's numbers and the rule scores as JSON")
    ap.add_argument("--raw", default=None, help="write every census's check, containment and diagnostics (.npz)")
    ap.add_argument("--rescore", default=None, help="score the rules on a --raw file instead of simulating")
    ap.add_argument("--aneel-draws", type=int, default=0,
                    help="also check the rule on that many superpopulation draws of the ANEEL acts (needs --data-dir)")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()
    print(f"$ {command_line()}", flush=True)
    t0 = time.perf_counter()
    results = load_raw(args.rescore) if args.rescore else []
    for alpha, slope in itertools.product(args.alphas, args.slopes) if not args.rescore else ():
        sp = superpopulation(alpha, slope, args.superpop, args.seed)
        for G, p, mode in itertools.product(args.gs, args.dominant, args.dominant_modes):
            if p == 0 and mode != args.dominant_modes[0]:
                continue  # no dominant cluster: one design
            t1 = time.perf_counter()
            r = run_design(sp, G, p, slope, args.censuses, args.reps, args.seed, drawn=mode == "drawn")
            r["name"] = f"a={alpha:g} slope={slope:g} G={G} dom={p:g}" + (f" {mode}" if p else "")
            r["params"] = {"alpha": alpha, "slope": slope, "G": G, "dominant": p, "mode": mode}
            results.append(r)
            print(f"  {r['name']}: {time.perf_counter() - t1:.1f} s", flush=True)
    if args.raw and not args.rescore:
        save_raw(args.raw, results)
    chosen = choose([r for r in results if not r["name"].endswith("drawn")])  # drawn: no size rule sees them
    print("\nrules chosen on the designs without a drawn dominant cluster:\n\n" + table(chosen) + "\n", flush=True)
    print(f"claimed rows under the module's rule (largest share * G^{C.CONCENTRATION_POWER:g} > "
          f"{C.CONCENTRATION_C:g}) and the CV rule:\n\n" + table(summary(results)) + "\n", flush=True)
    rows = design_rows(results)
    print("designs under the module's rule:\n\n" + table(rows) + "\n", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"command": command_line(), "chosen": chosen, "summary": summary(results),
                                              "designs": rows, "seconds": time.perf_counter() - t0}, indent=1,
                                             default=float))
    if args.aneel_draws:
        print("ANEEL superpopulation draws the rule leaves unconcentrated:", flush=True)
        print("\n" + table(aneel_superpop(args.data_dir or default_data_dir(), args.aneel_draws)) + "\n", flush=True)
    print(f"total {time.perf_counter() - t0:.0f} s; peak RSS {peak_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()
