"""Family-wise false-positive rate of the leaderboard's pair tests on null families built from real outcomes.

Run by hand:  OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_null_families.py --data-dir ../shared/data
              [--n-families 1000] [--n-resamples 999] [--systems 2 3 5 10] [--level 0.95] [--seed 0]
              [--families 'micro cr2' 'micro wild_cluster' 'macro t' 'macro guarded_hall'] [--nulls permutation superpopulation]
              [--shifts 0.02 0.05] [--shift-on every_query some_queries]
              [--candidates [--guards 20 25] [--shape-shift 0.02]]

Ten real retrievers (BM25 okapi, BM25 lucene, BM25+, TF-IDF sublinear, TF-IDF raw tf, and five BM25 / TF-IDF
parameter variants; top 10) are run on

- the ANEEL self-retrieval task (chunks-100, 2,312 queries in 147 documents, own chunk excluded; the
  unit is the document; one document holds 18% of the queries): hit@1, micro (mean over queries) and
  macro (mean of document means);
- JurisTCU (150 queries, 3,022-document subset; the unit is ``source_key``, 100 clusters): nDCG@10, micro
  and macro.

``--nulls superpopulation`` adds null families in which every system keeps its own values, shifted to equal
census means, and the clusters are redrawn with replacement (:func:`ragcov_data.eval.null_family_rates`);
``--shifts 0.02 0.05`` adds the power of each column on system 0's pairs when system 0 is shifted by that much;
``--shift-on`` says how: ``every_query`` (default) adds the shift to every one of its per-query values (a
difference of exactly that size, but one that varies no more than the null's, so absolute powers are
optimistic), ``some_queries`` makes it better on some queries, as a better retriever is (queries below 1 set
to 1 until its mean has risen by the shift: per-document differences skewed in the effect's direction). The
columns are compared on the same families. ``verdict in 3-6% (2 SE)`` says whether the verdict's rate +- 2 MC
SE reaches the 3-6% band. Columns: ``p_adj`` (the leaderboard's column: the verdict's own adjusted p-value),
``holm_cr2`` (Holm over the CR2/t tests: the column earlier versions printed beside the verdict).

For S = 2, 3, 5, 10 systems (the first S of the list), each null family permutes, independently in every
cluster, which system's per-query results the cluster receives (:func:`ragcov_data.eval.null_family_rates`):
the queries of a cluster keep their joint outcomes, but no system is better than another in expectation, so
any pair declared different is a false positive. For each setting the script prints the share of families
with at least one false positive for the Holm-adjusted p-values, the simultaneous intervals (the verdict),
the max-|t| adjusted p-values and the unadjusted per-pair tests, each +- 1.96 Monte-Carlo SE, for the micro
family with CR2 pair tests (``cr2``) and with the wild-cluster hull (``wild_cluster``), and for the macro
family with t pair tests (``macro t``) and with the guarded Hall cluster bootstrap (``macro guarded_hall``, the
leaderboard's; ``eval/comparisons/_hall.py``). ``--families`` runs a subset; ``'micro wild_cluster min_p'`` (named
only) runs the micro hull with both parts at the wild cluster family's single-step min-p level instead of
Bonferroni's (measured and not adopted: ``bench_coverage_sampled.py --parts min-p`` gives its coverage). ``--n-resamples`` is the B of the bootstraps inside each family.

``--candidates`` instead compares candidate critical values of the macro family on the same null families
(:func:`macro_crits`: t at Bonferroni's level, the studentized max-|t| cluster bootstrap alone, the restricted
sign-flip max-|t| with Rademacher or Webb weights, the earlier leaderboard's hull of the first two, and the
guarded Hall family that replaced it, among others); with ``--shifts`` it adds each one's power on system 0's
pairs; ``--guards 20 25`` adds the guarded Hall family at other guards (documents away from a pair's median
difference); ``--shape-shift 0.02`` builds null families of a skewed shape (system 0 of the population made better
on some queries, then the null imposed). ``bench_coverage_sampled.py --parts candidates`` gives their simultaneous
coverage on document samples.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, peak_rss_mb, table  # noqa: E402

import ragcov_data  # noqa: E402
from ragcov_data.baselines import BM25, TfIdf  # noqa: E402
from ragcov_data.execution.engine import run_task  # noqa: E402
from ragcov_data.eval import null_family_rates  # noqa: E402
from ragcov_data.eval.comparisons._family import draw_weights  # noqa: E402
from ragcov_data.eval.comparisons._hall import HALL_MIN_DOCUMENTS, hall_family, hall_stat, order_stat, spread  # noqa: E402
from ragcov_data.eval.comparisons._nullfamily import (_centered, _redraw, gain_on_queries,  # noqa: E402
                                                     permute_within_clusters, shifted)
from ragcov_data.eval.estimates._wild import wild_weights  # noqa: E402
from ragcov_data.eval.outcomes.metrics import per_query  # noqa: E402

RETRIEVERS = {
    "bm25": lambda: BM25(show_progress=False),
    "bm25-lucene": lambda: BM25(variant="lucene", show_progress=False),
    "bm25+": lambda: BM25(variant="bm25+", show_progress=False),
    "tfidf": lambda: TfIdf(show_progress=False),
    "tfidf-raw": lambda: TfIdf(sublinear_tf=False, show_progress=False),
}
#: Five more systems for the 10-system families (parameter variants of the same two families).
MORE_RETRIEVERS = {
    "bm25-k0.9-b0.4": lambda: BM25(k1=0.9, b=0.4, show_progress=False),
    "bm25-k2-b0.9": lambda: BM25(k1=2.0, b=0.9, show_progress=False),
    "bm25-lucene-b0.5": lambda: BM25(variant="lucene", b=0.5, show_progress=False),
    "tfidf-nosmooth": lambda: TfIdf(smooth_idf=False, show_progress=False),
    "tfidf-raw-nonorm": lambda: TfIdf(sublinear_tf=False, norm=None, show_progress=False),
}
RATES = ("p_adj", "holm_cr2", "simultaneous", "holm", "maxt", "unadjusted")
#: Families by name: (estimator, pair_test of ``family``). ``micro wild_cluster`` and ``macro guarded_hall`` are the
#: leaderboard's; ``micro cr2`` and ``macro t`` the analytic families they replaced.
FAMILIES = {"micro cr2": ("micro", "cr2"), "micro wild_cluster": ("micro", "wild_cluster"),
            "micro wild_cluster min_p": ("micro", "wild_cluster"),
            "macro t": ("macro", "cr2"), "macro guarded_hall": ("macro", "wild_cluster")}
#: The per-comparison level of the micro hull each family runs with (``_family.WILD_JOINT``): the leaderboard's
#: Bonferroni level, or the WCR family's single-step min-p (measured, not adopted: docs/results/validity.md).
JOINT = {"micro wild_cluster": "bonferroni", "micro wild_cluster min_p": "min_p"}
#: Families measured and not adopted (run when named in ``--families``).
ADOPTED_NOT = ("micro wild_cluster min_p",)


@contextmanager
def wild_joint(joint: str | None):
    """Run the families inside with the micro hull at level ``joint`` (``_family.WILD_JOINT``; None: unchanged)."""
    from ragcov_data.eval.comparisons import _family

    old = _family.WILD_JOINT
    _family.WILD_JOINT = joint or old
    try:
        yield
    finally:
        _family.WILD_JOINT = old


def outcomes(ds, metrics: tuple[str, ...], exclude_self: bool, retrievers: dict | None = None
             ) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
    """Per metric, the (S, N) matrix of per-query values of the retrievers (default: the five); and the queries."""
    queries, qrels = ds["queries"].to_pandas(), ds["qrels"].to_pandas()
    qids = queries["_id"].astype(str).to_numpy()
    runs = [run_task(make(), ds, k=10, exclude_self=exclude_self) for make in (retrievers or RETRIEVERS).values()]
    return {m: np.array([per_query(r, qrels, m, query_ids=qids).to_numpy(float) for r in runs])
            for m in metrics}, queries


def _fmt(r: dict, k: str) -> str:
    return "-" if r.get(k) is None else f"{r[k]:.3f} ± {1.96 * r[k + '_se']:.3f}"


def _null_row(label, V, clusters, S, family, null, args) -> dict:
    t0 = time.perf_counter()
    est, pt = FAMILIES[family]
    with wild_joint(JOINT.get(family)):
        r = null_family_rates(V[:S], clusters, n_families=args.n_families, level=args.level,
                              n_resamples=args.n_resamples, estimator=est, seed=args.seed, pair_test=pt, null=null)
    row = {"task": label, "null": null, "systems": S, "pairs": r["n_pairs"], "family": family, "K": r["n_clusters"]}
    row.update({k: _fmt(r, k) for k in RATES})
    lo, hi = r["simultaneous"] - 2 * r["simultaneous_se"], r["simultaneous"] + 2 * r["simultaneous_se"]
    row["verdict in 3-6% (2 SE)"] = "yes" if lo <= 0.06 and hi >= 0.03 else "NO"
    row["time"] = f"{time.perf_counter() - t0:.0f} s"
    return row


def _power_row(label, V, clusters, S, family, null, shift, shift_on, args) -> dict:
    est, pt = FAMILIES[family]
    with wild_joint(JOINT.get(family)):
        r = null_family_rates(V[:S], clusters, n_families=args.n_families, level=args.level,
                              n_resamples=args.n_resamples, estimator=est, seed=args.seed, pair_test=pt, null=null,
                              shift=shift, shift_on=shift_on)
    row = {"task": label, "null": null, "systems": S, "family": family, "shift": shift, "shift on": shift_on}
    row.update({f"power {k}": _fmt(r, "power_" + k) for k in ("p_adj", "holm_cr2", "unadjusted")})
    return row


#: Macro critical values compared by ``--candidates`` (every one is ``d_p +- c se_p`` with the t SE).
CANDIDATES = ("t Bonferroni", "studentized bootstrap", "sign-flip Rademacher", "sign-flip Webb", "t + studentized hull (earlier)",
              "Hall bootstrap", "bootstrap, observed SE", "studentized, SE floored", "guarded Hall (leaderboard)")
#: Candidates whose statistic is Hall's skewness-removing transform of t (:func:`hall_stat`) for pairs whose difference
#: departs from its median in at least this many documents (``|d - mu| / se`` for the others): Hall's alone is the
#: guarded family with no guard. ``--guards`` adds ``guarded Hall, G = g``.
HALL_GUARDS = {"Hall bootstrap": 0, "guarded Hall (leaderboard)": HALL_MIN_DOCUMENTS}


def _guard(name: str) -> int | None:
    """The guard of a Hall candidate ``name`` (None: not a Hall candidate)."""
    if name.startswith("guarded Hall, G = "):
        return int(name.rsplit(" ", 1)[1])
    return HALL_GUARDS.get(name)


def _order_stat(T: np.ndarray, level: float) -> float:
    """The ``level`` order statistic of ``max_p T[p, b]`` over replicates (as ``_studentized_hull``)."""
    return order_stat(np.sort(T.max(0)), level)[0]


def macro_crits(X: np.ndarray, level: float, B: int, rng: np.random.Generator,
                guards: tuple[int, ...] = ()) -> dict[str, Any]:
    """Candidate critical values ``c`` of a macro family from ``X`` (P pairs x K documents: per-document mean
    differences): t at Bonferroni's level; the studentized max-|t| cluster bootstrap (each replicate's own SE);
    the restricted sign-flip max-|t| (each document's differences times one weight, the observed t statistic
    recomputed: exact for symmetric differences), Rademacher or Webb weights; the hull of the first two; and the
    cluster bootstrap of Hall's transformed statistic (:func:`hall_stat`, the same resampling counts as the
    studentized bootstrap, so adding it changed no other candidate's draws); and the guarded Hall family
    (``eval/comparisons/_hall.py`` on the same counts: an array of one critical value per pair, each on its pair's
    statistic, :func:`candidate_stat`)."""
    from scipy import stats

    P, K = X.shape
    d = X.mean(1)
    T, O, F = np.zeros((P, B)), np.zeros((P, B)), np.zeros((P, B))
    se = X.std(1, ddof=1)[:, None] / np.sqrt(K)
    lo = 0
    blocks = list(draw_weights(K, B, rng))  # kept for the Hall families: the same counts
    for W in blocks:
        m = X @ W / K
        v = np.maximum((X * X) @ W / K - m * m, 0.0) / (K - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            T[:, lo:lo + W.shape[1]] = np.where(v > 0, np.abs(m - d[:, None]) / np.sqrt(v), 0.0)
            O[:, lo:lo + W.shape[1]] = np.where(se > 0, np.abs(m - d[:, None]) / se, 0.0)
            F[:, lo:lo + W.shape[1]] = np.where(se > 0, np.abs(m - d[:, None]) / np.maximum(np.sqrt(v), se), 0.0)
        lo += W.shape[1]
    out = {"t Bonferroni": float(stats.t.isf((1 - level) / P / 2, K - 1)),
           "studentized bootstrap": _order_stat(T, level)}
    for kind in ("rademacher", "webb"):
        w = wild_weights(K, B, rng, kind=kind)
        m = X @ w / K
        v = np.maximum((X * X) @ (w * w) / K - m * m, 0.0) / (K - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[f"sign-flip {kind.capitalize()}"] = _order_stat(np.where(v > 0, np.abs(m) / np.sqrt(v), 0.0), level)
    out["t + studentized hull (earlier)"] = max(out["t Bonferroni"], out["studentized bootstrap"])
    out["bootstrap, observed SE"] = _order_stat(O, level)
    out["studentized, SE floored"] = _order_stat(F, level)
    # one critical value per pair (0 for a pair without variation: candidate_stat declares it where its point is not mu)
    sd = X.std(1, ddof=1)
    live = sd > 1e-12 * np.maximum(1.0, np.abs(d))
    for name in [*HALL_GUARDS, *(f"guarded Hall, G = {g}" for g in guards)]:
        out[name] = np.zeros(P)
        if live.any():
            out[name][live] = hall_family(X[live], level, B, blocks, min_documents=_guard(name))["crit"]
    out["Hall bootstrap"] = float(out["Hall bootstrap"].max())  # no guard: one group, one critical value
    return out


def _macro_X(V: np.ndarray, codes: np.ndarray, K: int) -> np.ndarray:
    n = np.bincount(codes, minlength=K)
    m = np.array([np.bincount(codes, weights=v, minlength=K) / n for v in V])
    ia, ib = np.triu_indices(len(V), 1)
    return m[ia] - m[ib]


def candidate_stat(X: np.ndarray, mu: Any, name: str) -> np.ndarray:
    """Each pair's statistic at ``mu`` for candidate ``name``: ``|d - mu| / se`` (t SE), or ``|hall_stat|``. A pair
    without variation gets inf where its point is not ``mu`` (it is then declared different), else 0."""
    K = X.shape[1]
    d, sd = X.mean(1), X.std(1, ddof=1)
    live = sd > 1e-12 * np.maximum(1.0, np.abs(d))
    with np.errstate(divide="ignore", invalid="ignore"):
        st = np.abs(d - mu) / (sd / np.sqrt(K))
    g = _guard(name)
    if g is not None:
        h = np.abs(hall_stat(d, sd, ((X - d[:, None]) ** 3).mean(1), mu, K))
        st = np.where(spread(X) >= g, h, st)
    return np.where(live, st, np.where(np.abs(d - mu) > 1e-12, np.inf, 0.0))


def _rejects(X: np.ndarray, c: float, name: str = "t Bonferroni") -> np.ndarray:
    """Pairs that candidate ``name`` with critical value ``c`` declares different from 0."""
    return candidate_stat(X, 0.0, name) > c


def candidate_row(label, V, clusters, S, null, args, shift: float = 0.0, shift_on: str = "every_query") -> dict:
    """Family-wise error of each macro candidate on the same null families (``--candidates``); with ``shift``
    (added to system 0) the error counts the other pairs and ``power`` the share of system 0's pairs declared."""
    codes, labels = pd.factorize(pd.Series(clusters))
    K = len(labels)
    rng = np.random.default_rng([args.seed, S, len(null)])
    Vs = V[:S]
    if args.shape_shift:  # the population itself has system 0 better on some queries; the null is imposed after
        Vs = np.vstack([gain_on_queries(Vs[0], args.shape_shift, np.random.default_rng(99)), Vs[1:]])
    Vc, members = _centered(Vs, codes, K, "macro"), [np.flatnonzero(codes == c) for c in range(K)]
    true = np.triu_indices(S, 1)[0] == 0 if shift else np.zeros(S * (S - 1) // 2, bool)
    names = [*CANDIDATES, *(f"guarded Hall, G = {g}" for g in args.guards)]
    hits, found = dict.fromkeys(names, 0), dict.fromkeys(names, 0)
    for _ in range(args.n_families):
        Vp, cp = (permute_within_clusters(Vs, codes, K, rng), codes) if null == "permutation" else \
            _redraw(Vc, members, K, rng)
        if shift:
            Vp = np.vstack([shifted(Vp[0], shift, shift_on, rng), Vp[1:]])
        X = _macro_X(Vp, cp, K)
        for k, c in macro_crits(X, args.level, args.n_resamples, rng, tuple(args.guards)).items():
            r = _rejects(X, c, k)
            hits[k] += bool(r[~true].any())
            found[k] += int(r[true].sum())
    row = {"task": label, "null": null, "systems": S, "shift": shift, "shift on": shift_on if shift else "-"}
    if args.shape_shift:
        row["population: system 0 better by"] = args.shape_shift
    n, m = args.n_families, args.n_families * max(int(true.sum()), 1)
    for k in names:
        e, pw = hits[k] / n, found[k] / m
        row[k] = f"{e:.3f} ± {1.96 * np.sqrt(e * (1 - e) / n):.3f}" + (
            f"; power {pw:.3f} ± {1.96 * np.sqrt(pw * (1 - pw) / m):.3f}" if shift else "")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("RAGCOV_DATA_DIR", "../shared/data"))
    ap.add_argument("--n-families", type=int, default=1000)
    ap.add_argument("--n-resamples", type=int, default=999)
    ap.add_argument("--systems", type=int, nargs="+", default=[2, 3, 5, 10])
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=0)
    default = [f for f in FAMILIES if f not in ADOPTED_NOT]
    ap.add_argument("--families", nargs="+", default=default, choices=list(FAMILIES), metavar="FAMILY",
                    help=f"families to run (default: {', '.join(default)}; also: {', '.join(ADOPTED_NOT)})")
    ap.add_argument("--nulls", nargs="+", default=["permutation"], choices=["permutation", "superpopulation"],
                    help="null families: within-cluster permutation (default) and/or superpopulation redraws")
    ap.add_argument("--shifts", type=float, nargs="+", default=[],
                    help="also power: a known difference added to system 0 (e.g. 0.02 0.05)")
    ap.add_argument("--shift-on", nargs="+", default=["every_query"], choices=["every_query", "some_queries"],
                    help="how the shift is given to system 0: added to every query (default), and/or queries "
                         "below 1 set to 1 until the mean has risen by it (null_family_rates' shift_on)")
    ap.add_argument("--guards", type=int, nargs="+", default=[],
                    help="with --candidates: also the guarded Hall family at these guards (documents; the "
                         f"leaderboard's is {HALL_MIN_DOCUMENTS})")
    ap.add_argument("--shape-shift", type=float, default=0.0,
                    help="with --candidates: first make system 0 of the population better on some queries by this "
                         "much (gain_on_queries), then impose the null: null families of a skewed shape")
    ap.add_argument("--candidates", action="store_true",
                    help="instead: family-wise error of the candidate macro critical values (macro_crits)")
    ap.add_argument("--tasks", nargs="+", default=["aneel", "juristcu"], choices=["aneel", "juristcu"])
    args = ap.parse_args()
    print(f"$ {command_line()}")
    every = {**RETRIEVERS, **MORE_RETRIEVERS}

    tasks = []
    if "aneel" in args.tasks:
        aneel = ragcov_data.load_dataset("aneel_taesa", data_dir=args.data_dir, chunk_words=100, show_progress=False)
        vals, q = outcomes(aneel, ("hit@1",), exclude_self=True, retrievers=every)
        tasks.append(("ANEEL hit@1", vals["hit@1"], q["doc_id"].to_numpy()))
    jt_dir = Path(args.data_dir) / "juristcu"
    if "juristcu" not in args.tasks:
        pass
    elif jt_dir.is_dir():
        jt = ragcov_data.load_dataset("juristcu", data_dir=args.data_dir, show_progress=False)
        jvals, jq = outcomes(jt, ("ndcg@10",), exclude_self=False, retrievers=every)
        tasks.append(("JurisTCU ndcg@10", jvals["ndcg@10"], jq["source_key"].to_numpy()))
    else:
        print(f"no {jt_dir}: JurisTCU skipped")

    print(f"systems in order: {', '.join(every)}; {args.n_families} null families per setting, B = "
          f"{args.n_resamples} in each; level {args.level} (nominal FWER {1 - args.level:.2f}); margins are 1.96 "
          "Monte-Carlo SE")
    if args.candidates:
        shifts = [(0.0, "every_query")] + [(x, o) for o in args.shift_on for x in args.shifts]
        cand = [candidate_row(label, V, clusters, S, null, args, shift, on) for label, V, clusters in tasks
                for null in args.nulls for S in args.systems for shift, on in shifts]
        print("\nmacro candidates: family-wise error on the same null families\n" + table(cand))
        return
    rows, power = [], []
    for label, V, clusters in tasks:
        for null in args.nulls:
            for S in args.systems:
                for fam in args.families:
                    rows.append(_null_row(label, V, clusters, S, fam, null, args))
                    print("  " + ", ".join(f"{k}: {v}" for k, v in rows[-1].items()), flush=True)
                    for shift, on in [(x, o) for o in args.shift_on for x in args.shifts]:
                        power.append(_power_row(label, V, clusters, S, fam, null, shift, on, args))
                        print("  " + ", ".join(f"{k}: {v}" for k, v in power[-1].items()), flush=True)
    print("\nfamily-wise error (p_adj: the leaderboard's column, the hull's own adjusted p; holm_cr2: Holm over "
          "the CR2/t tests, the column earlier versions printed; simultaneous: the verdict)")
    print(table(rows))
    if power:
        print("\npower: share of system 0's pairs (shifted by `shift`) declared different, by the same columns")
        print(table(power))
    print(f"\npeak RSS {peak_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()
