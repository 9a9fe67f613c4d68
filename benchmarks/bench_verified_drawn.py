"""The drawn designs of ``bench_verified_criterion.py``, quantified: what a rule on a census's sizes would cost.

Run by hand:  OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_verified_drawn.py --raw FILE.npz
              [--superpop 100000] [--seed 2026]

``FILE.npz`` is the ``--raw`` file of ``bench_verified_criterion.py`` (its saved draws; nothing is re-checked). With
the dominant cluster *drawn*, each of a census's G clusters is of the dominant type with probability 1 / G. This
script re-draws each drawn design's censuses from the same seeds (the random stream of
:func:`bench_verified_criterion.censuses`, cheap: no check is run) to know which censuses hold a dominant cluster,
and checks that the re-drawn sizes give the saved largest shares exactly. A census lacking it is G independent
draws of the superpopulation's other clusters, the distribution of a census of the matching design without a
dominant cluster (``dom=0``, same alpha, slope and G): its sizes, outcomes and check are those of a ``dom=0``
census, only its target differs (``p m_dom + (1 - p) micro``). Reported:

* per drawn design: the share of censuses lacking the dominant cluster, the coverage of claimed micro rows (the
  check passed, the module's rule silent) among censuses lacking it and holding it;
* the equivalence, measured: per drawn design, the lacking censuses' check pass rate and median largest share
  against the matching ``dom=0`` design's;
* per drawn design shown short, and over all drawn designs: the least strict threshold ``c`` of
  ``share * G^b > c`` (and ``share > 2 / G``) such that it and every stricter one leave the design's claimed rows
  not shown short of 0.93 (``bench_verified_criterion.score``), and what it marks of the check-passed rows of the
  matching ``dom=0`` design (the same census distribution) and of every benign design; and the least any rule
  on sizes must mark of the lacking censuses' check-passed rows (an oracle dropping only rows that miss).
"""
from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, table  # noqa: E402
import bench_verified_criterion as BC  # noqa: E402

from ragcov_data.eval.estimates import concentration as C  # noqa: E402

MICRO = BC.MICRO
POWERS = (0.2, 0.3, 0.4, 0.5)


def params(name: str) -> dict:
    """``a=3 slope=-0.5 G=500 dom=0.25 drawn`` -> its parameters."""
    m = re.match(r"a=(\S+) slope=(\S+) G=(\d+) dom=(\S+)(?: (\w+))?$", name)
    return {"alpha": float(m[1]), "slope": float(m[2]), "G": int(m[3]), "dominant": float(m[4]), "mode": m[5] or ""}


def drawn_where(sp: dict, G: int, p: float, slope: float, D: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Where a drawn design's censuses hold a dominant cluster, ``(D, G)``, and their sizes, from the random stream
    of :func:`BC.censuses` (``run_design``'s generator): the sizes come from the same call, the mask from a twin
    generator advanced exactly as ``censuses`` advances its own."""
    rng = np.random.default_rng([seed, G, int(p * 1000), 1])
    n, _, _ = BC.censuses(sp, G, p, slope, D, rng, drawn=True)
    twin = np.random.default_rng([seed, G, int(p * 1000), 1])
    twin.integers(0, len(sp["n"]), (D, G))
    typical = max(1.0, round(p / (1 - p) * (G - 1) * sp["n"].mean()))
    BC._rates(twin, np.array([typical]), slope, sp["center"])
    where = twin.random((D, G)) < 1.0 / G
    if not np.array_equal(n[where], np.full(int(where.sum()), typical)):
        raise AssertionError("the twin generator does not follow censuses(): the mask is not where the dominant is")
    return where, n


def _cov(hit: np.ndarray) -> str:
    c, se, k = BC._cov(hit)
    return "-" if not k else f"{c:.3f}±{se:.3f} ({k})"


def needed(r: dict, b: float) -> float:
    """The least strict ``c`` of ``share * G^b`` such that it and every stricter one leave design ``r``'s claimed
    rows (cr2 and cr1) not shown short (inf when even the strictest tried does not)."""
    best = math.inf
    for x in BC._LOG:  # strictest first
        fires = [BC.rule_fires(r["diag"], f"share*G^{b:g}", x)]
        if any(BC.score([r], fires, k)["short"] for k in MICRO):
            break
        best = x
    return best


def marked(r: dict, b: float, x: float, key: str = "micro/cr2") -> float:
    """Share of design ``r``'s check-passed rows (``key``) that ``share * G^b > x`` marks unverifiable."""
    ok = r["pass"][key]
    fire = BC.rule_fires(r["diag"], f"share*G^{b:g}", x)
    return float((ok & fire).sum() / max(ok.sum(), 1))


def oracle_floor(hits_hold: np.ndarray, hits_lack: np.ndarray) -> float:
    """The least share of the lacking censuses' check-passed rows any rule must mark for the check-passed rows
    left to cover 0.93 (point estimate), for an oracle that marks only rows that miss, those of censuses holding
    the dominant cluster (``hits_hold``) first and free of cost; a rule on sizes cannot pick misses, and marks of
    the lacking censuses what it marks of the matching dom=0 design."""
    hits = hits_hold.sum() + hits_lack.sum()
    drop = max(0.0, len(hits_hold) + len(hits_lack) - hits / BC.BAR)  # misses to mark: hits / (rest) >= BAR
    return min(1.0, max(0.0, drop - (~hits_hold).sum()) / max(len(hits_lack), 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", required=True, help="bench_verified_criterion.py's --raw file")
    ap.add_argument("--superpop", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    print(f"$ {command_line()}", flush=True)
    t0 = time.perf_counter()
    results = BC.load_raw(args.raw)
    for r in results:
        r["params"] = params(r["name"])
    base = {(r["params"]["alpha"], r["params"]["slope"], r["params"]["G"]): r for r in results
            if r["params"]["dominant"] == 0}
    sps: dict = {}
    drawn = [r for r in results if r["params"]["mode"] == "drawn"]
    for r in drawn:
        q = r["params"]
        key = (q["alpha"], q["slope"])
        if key not in sps:
            sps[key] = BC.superpopulation(q["alpha"], q["slope"], args.superpop, args.seed)
        D = len(r["diag"]["share"])
        where, n = drawn_where(sps[key], q["G"], q["dominant"], q["slope"], D, args.seed)
        share = np.array([C.largest_share(x) for x in n])
        if not np.allclose(share, r["diag"]["share"], rtol=0, atol=1e-12):
            raise AssertionError(f"{r['name']}: re-drawn sizes differ from the saved ones")
        r["holds"] = where.any(1)
    print(f"re-drawn: {len(drawn)} drawn designs, every census's largest share equal to the saved one", flush=True)

    fire = {r["name"]: BC.module_rule(r["diag"]) for r in results}
    rows, eq, pooled = [], [], {True: [], False: []}
    for r in drawn:
        q, z = r["params"], base[(r["params"]["alpha"], r["params"]["slope"], r["params"]["G"])]
        ok, hit, f = r["pass"]["micro/cr2"], r["contains"]["micro/cr2"], fire[r["name"]]
        claimed = ok & ~f
        for h in (True, False):
            pooled[h].append(hit[claimed & (r["holds"] == h)])
        c, se, k = BC._cov(hit[claimed])
        rows.append({"design": r["name"], "lacking": f"{(~r['holds']).mean():.2f}",
                     "cr2 claimed, lacking": _cov(hit[claimed & ~r["holds"]]),
                     "cr2 claimed, holding": _cov(hit[claimed & r["holds"]]),
                     "cr2 claimed, all": _cov(hit[claimed]),
                     "short": "yes" if k >= BC.MIN_CLAIMED and c + 2 * se < BC.BAR else ""})
        lack = ~r["holds"]
        eq.append({"design": r["name"], "lacking censuses": int(lack.sum()),
                   "cr2 pass, lacking": f"{r['pass']['micro/cr2'][lack].mean():.3f}",
                   "cr2 pass, dom=0": f"{z['pass']['micro/cr2'].mean():.3f}",
                   "median share, lacking": f"{np.median(r['diag']['share'][lack]):.4f}",
                   "median share, dom=0": f"{np.median(z['diag']['share']):.4f}",
                   "rule fires, lacking": f"{fire[r['name']][lack].mean():.3f}",
                   "rule fires, dom=0": f"{fire[z['name']].mean():.3f}"})
    print("\ndrawn designs under the module's rule (micro cr2; coverage ± MC SE (rows)):\n\n" + table(rows) + "\n")
    print("pooled over the drawn designs: claimed cr2 rows of censuses holding the dominant cluster "
          f"{_cov(np.concatenate(pooled[True]))}, lacking it {_cov(np.concatenate(pooled[False]))}; "
          f"censuses lacking it {np.mean([(~r['holds']).mean() for r in drawn]):.3f} "
          f"(expected (1 - 1/G)^G: 0.358 at G = 20 to 0.367 at G = 500)\n")
    lack_pass = np.concatenate([r["pass"]["micro/cr2"][~r["holds"]] for r in drawn])
    zero_pass = np.concatenate([base[(r["params"]["alpha"], r["params"]["slope"], r["params"]["G"])]["pass"]
                                ["micro/cr2"] for r in drawn])
    print("equivalence, pooled over the drawn designs: cr2 check pass rate of lacking censuses "
          f"{lack_pass.mean():.3f} ({len(lack_pass)}), of the matching dom=0 designs' censuses {zero_pass.mean():.3f} "
          f"({len(zero_pass)}, each counted once per drawn design)\n")
    z = []
    for r in drawn:
        a, b0 = r["pass"]["micro/cr2"][~r["holds"]], base[(r["params"]["alpha"], r["params"]["slope"],
                                                            r["params"]["G"])]["pass"]["micro/cr2"]
        p0 = (a.sum() + b0.sum()) / (len(a) + len(b0))
        z.append((a.mean() - b0.mean()) / math.sqrt(max(p0 * (1 - p0), 1e-12) * (1 / len(a) + 1 / len(b0))))
    z = np.array(z)
    print(f"cr2 pass rate, lacking censuses minus the dom=0 design's, per drawn design: |z| > 2 in "
          f"{int((np.abs(z) > 2).sum())} of {len(z)} (about {0.046 * len(z):.0f} expected by chance), "
          f"mean z {z.mean():.2f}\n")
    print("per drawn design, lacking censuses against the matching dom=0 design:\n\n" + table(eq) + "\n", flush=True)

    benign = [r for r in results if r["params"]["mode"] != "drawn"]
    need_rows, env = [], []
    for b in POWERS:
        per = {r["name"]: needed(r, b) for r in drawn}
        x = min(per.values())
        sc = {k: BC.score(benign, [BC.rule_fires(r["diag"], f"share*G^{b:g}", x) for r in benign], k) for k in MICRO}
        zero = [r for r in benign if r["params"]["dominant"] == 0]
        sz = BC.score(zero, [BC.rule_fires(r["diag"], f"share*G^{b:g}", x) for r in zero], "micro/cr2")
        env.append({"b": f"{b:g}", "threshold holding every drawn design": "none" if not math.isfinite(x) else
                    f"{x:g}", "cr2 benign unverifiable (160 designs)": f"{sc['micro/cr2']['benign unverifiable']:.3f}",
                    "cr1 benign unverifiable": f"{sc['micro/cr1']['benign unverifiable']:.3f}",
                    "cr2 benign unverifiable, dom=0 designs": f"{sz['benign unverifiable']:.3f}",
                    "cr2 claimed (160 designs)": f"{sc['micro/cr2']['claimed']} "
                    f"({sc['micro/cr2']['claimed coverage']:.3f})"})
        if b == C.CONCENTRATION_POWER:
            for r in drawn:
                q = r["params"]
                z = base[(q["alpha"], q["slope"], q["G"])]
                ok, hit = r["pass"]["micro/cr2"], r["contains"]["micro/cr2"]
                f = fire[r["name"]]
                short = rows[drawn.index(r)]["short"]
                if not short:
                    continue
                floor = oracle_floor(hit[ok & r["holds"]], hit[ok & ~r["holds"]])
                need = per[r["name"]]
                need_rows.append({
                    "design": r["name"], "least strict c": "none" if not math.isfinite(need) else f"{need:g}",
                    "marks of dom=0 check-passed": "-" if not math.isfinite(need) else
                    f"{marked(z, b, need):.3f}",
                    "module rule marks of dom=0": f"{marked(z, b, C.CONCENTRATION_C):.3f}",
                    "oracle floor (lacking rows)": f"{floor:.3f}"})
    print(f"drawn designs shown short under the module's rule: the least strict share*G^{C.CONCENTRATION_POWER:g} "
          "threshold holding each, what it marks of the matching dom=0 design's check-passed cr2 rows (the module's "
          "rule: beside it), and the least share of the lacking censuses' check-passed rows any rule must mark:\n\n"
          + table(need_rows) + "\n")
    print("one threshold holding every drawn design, per b, and its cost on the 160 designs without a drawn "
          "dominant cluster:\n\n" + table(env) + "\n")
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
