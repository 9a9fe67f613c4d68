"""Does a proxy task rank systems as the real task does? Kendall's tau-b, pairwise agreement and winners.

Self-retrieval needs no questions, so a team without questions will pick a retriever or a cut with it. This
module asks, for one family of systems scored on two tasks over the same acts — the *proxy* (self-retrieval:
values per document) and the *real* task (cited questions: values per question, clustered by topic or exam) —
whether the proxy orders them as the real questions do, with the uncertainty of both samples stated.

Design
------
- **Each task's own leaderboard.** Every system is ranked on each task by the leaderboard's family machinery
  (:func:`ragcov_data.eval.comparisons.cited.leaderboard_from_values`: per-system intervals, simultaneous pair
  intervals, a pair *separable* when its interval excludes 0; the family's error checked at this design
  unless ``check=False``).
- **Orders.** Kendall's tau-b between the two tasks' estimates (ties as :func:`scipy.stats.kendalltau`), the
  two winners (and whether the proxy's winner could be the real task's best: its ``best_set``).
- **Pairs.** Every pair in the real task's order: *agree* (both tasks separate it, the same way), *disagree*
  (both separate it, opposite ways), or undetermined (*proxy_not_separable*, *real_not_separable*,
  *neither_separable*), read off each task's own verdicts at ``level``.
- **The interval for tau** (``method = "compatible_orders"``): both samples resampled independently — the
  proxy's documents, the real task's clusters — each task's family at ``sqrt(level)``, so that with
  probability at least ``level`` both families are right at once (independent samples); the interval is the
  range of tau-b over every pair of orders compatible with both families' verdicts (:func:`._orders.
  compatible_bounds`). It is conservative by construction and widest, ``[-1, 1]``, when either task
  separates nothing. Its coverage on simulated pairs of tasks is measured by
  :func:`ragcov_data.eval.planning.proxy_coverage.proxy_coverage`.
- **The joint bootstrap of tau** (``bootstrap``): the percentile interval of tau-b recomputed on ``B``
  joint resamples (documents and clusters drawn independently, every system sharing its task's draw). It
  describes how stable the *estimated* agreement is; as an interval for the true agreement it fails when the
  systems' true scores are close (tau-hat is pulled towards 0 by noise): the coverage study measures by how
  much, so it is reported with ``verified_status`` from that study, never as the headline.
- **What S systems can tell** (``limits``): pairs, tau's step, the compatible interval's widest range, how
  many pairs both tasks must separate the same way before its low end can pass 0, and the smallest tau an
  exact permutation test can call positive with S systems measured without error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd

from ragcov_data.errors import RagcovError
from ragcov_data.eval.comparisons import _orders
from ragcov_data.eval.comparisons._family import LEADERBOARD_PAIR_TEST, family
from ragcov_data.eval.comparisons.cited import leaderboard_from_values
from ragcov_data.eval.comparisons.leaderboard import (FAMILY, JUDGED_THRESHOLD, PAIR_COLUMNS, SYSTEM_COLUMNS,
                                                      LeaderboardResult, _one_group)
from ragcov_data.eval.estimates import marks
from ragcov_data.eval.estimates._kernels import check_level, check_resamples
from ragcov_data.eval.estimates.results import _JsonMixin

__all__ = ["Side", "proxy_agreement", "ProxyAgreement", "pair_agreement", "STATUSES", "TAU_METHOD",
           "BOOTSTRAP_STATUS"]

#: Pair statuses, in the order tables list them.
STATUSES = ("agree", "disagree", "proxy_not_separable", "real_not_separable", "neither_separable")
TAU_METHOD = "compatible_orders"
#: The joint bootstrap's percentile interval: what the coverage study found (docs/results/proxy.md).
_BOOT_REASON = ("as an interval for the true tau it covered far below level where the systems' true scores are close "
                "(the coverage study); it describes the estimate's stability")
BOOTSTRAP_STATUS = {"verified_status": "not_verified", "reason": _BOOT_REASON, "verified_reason": _BOOT_REASON,
                    "mark": marks.MARKS["not_verified"]}
_UNCHECKED = ("the families' error at this design was not checked in this run (the main job skips it for time; "
              "`ragcov proxy` checks it)")
#: A side with fewer clusters gives the interval no verdict: with two documents a sample of the design is one
#: document drawn twice half the time, and the compatible interval covered 47-98% on pairs drawn from the LGPD's
#: two acts (docs/results/proxy.md).
MIN_CLUSTERS = 3


@dataclass
class Side:
    """One task's per-query values of the family of systems.

    Attributes
    ----------
    values : DataFrame
        Rows = queries (or documents: a per-document rate a row), columns = systems; no missing value.
    clusters : array or None
        Cluster of each row (None: each row its own cluster).
    metric, task, cluster_name : str
        What the values are, of which task, and the unit of inference.
    estimator : {"micro", "macro"}
        Mean over rows, or mean of cluster means.
    """

    values: pd.DataFrame
    clusters: Any = None
    metric: str = ""
    task: str = ""
    cluster_name: str = "query"
    estimator: str = "micro"

    def codes(self) -> tuple[np.ndarray, int]:
        """Cluster code of every row and the number of clusters."""
        cl = np.asarray(self.values.index.astype(str)) if self.clusters is None else np.asarray(self.clusters)
        codes, uniq = pd.factorize(pd.Series(cl, dtype=object), sort=False)
        return codes.astype(np.int64), len(uniq)

    def matrix(self) -> np.ndarray:
        """``(S, N)`` values, systems in column order."""
        return self.values.to_numpy(dtype=float).T


def _check(proxy: Side, real: Side, level: float, n_resamples: int) -> list[str]:
    for side, what in ((proxy, "proxy"), (real, "real")):
        if not isinstance(side, Side):
            raise RagcovError(f"`{what}` must be a Side (values per query, clusters, metric); got "
                              f"{type(side).__name__}.")
        if side.estimator not in ("micro", "macro"):
            raise RagcovError(f"`{what}.estimator` must be 'micro' or 'macro'; got {side.estimator!r}.")
        if side.values.isna().any().any():
            bad = side.values.columns[side.values.isna().any()].tolist()
            raise RagcovError(f"the {what} values have missing values for {bad}; score every query of every system.")
    names = [str(c) for c in real.values.columns]
    if sorted(map(str, proxy.values.columns)) != sorted(names):
        raise RagcovError(f"the two tasks must score the same systems: proxy {list(proxy.values.columns)}, real "
                          f"{names}.")
    if len(names) < 2:
        raise RagcovError("an order needs at least 2 systems.")
    check_level(level)
    check_resamples(n_resamples, math.sqrt(level), ("cluster_bootstrap",))
    return names


def _board(side: Side, names: Sequence[str], *, level: float, n_resamples: int, seed: int | None,
           check: bool) -> LeaderboardResult:
    """The side's leaderboard (the leaderboard's family; its check at this design unless ``check`` is False,
    then every verdict says it was not checked)."""
    values = side.values[list(names)]
    codes, _ = side.codes()
    if check:
        return leaderboard_from_values(values, metric=side.metric, clusters=codes, cluster_name=side.cluster_name,
                                       level=level, n_resamples=n_resamples, seed=seed, estimator=side.estimator)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])  # leaderboard_from_values' draw
    srows, prows, info = _one_group("__all__", values.to_numpy(float).T, codes, list(names), side.estimator, level,
                                    int(n_resamples), rng, None, None, {})
    systems, pairs = pd.DataFrame(srows, columns=SYSTEM_COLUMNS), pd.DataFrame(prows, columns=PAIR_COLUMNS)
    for df in (systems, pairs):
        df["verified"], df["verified_status"] = False, "unverifiable"
    info["family_check"] = {"verified_status": "unverifiable", "reason": _UNCHECKED}
    return LeaderboardResult(
        systems=systems, pairs=pairs, metric=side.metric, level=level, cluster=side.cluster_name,
        n_clusters=info["n_clusters"], n_queries=int(len(values)), family=dict(FAMILY), estimator=side.estimator,
        tie_policy="trec_eval", relevance_threshold=1, by=None, judged_k=None, judged_threshold=JUDGED_THRESHOLD,
        groups={"__all__": info}, info={"n_resamples": int(n_resamples), "seed": seed, "notices": [_UNCHECKED]})


def _verdict_signs(board: LeaderboardResult, names: Sequence[str]) -> np.ndarray:
    """Sign vector (systems in ``names`` order) of the board's verdicts: +1 where i is separably above j."""
    pos = {n: k for k, n in enumerate(names)}
    ia, ib = _orders.pair_index(len(names))
    at = {(int(i), int(j)): p for p, (i, j) in enumerate(zip(ia, ib))}
    out = np.zeros(len(ia), dtype=np.int8)
    pr = board.pairs[board.pairs["group"] == "__all__"]
    for a, b, sep in zip(pr["a"], pr["b"], pr["significant"]):
        if not sep:
            continue
        i, j = pos[str(a)], pos[str(b)]  # a is ranked above b
        out[at[(min(i, j), max(i, j))]] = 1 if i < j else -1
    return out


def _forced_signs(side: Side, names: Sequence[str], level: float, n_resamples: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Sign vector of the side's family at ``level`` (the leaderboard's family machinery, decisions only); all 0
    (nothing forced) with fewer than :data:`MIN_CLUSTERS` clusters."""
    codes, K = side.codes()
    if K < MIN_CLUSTERS:
        return np.zeros(len(names) * (len(names) - 1) // 2, dtype=np.int8)
    V = side.values[list(names)].to_numpy(float).T
    f = family(V, codes, K, estimator=side.estimator, level=level, n_resamples=int(n_resamples), rng=rng,
               pair_test=LEADERBOARD_PAIR_TEST, intervals=False)
    pr = f["pairs"]
    sep = pr["p_hull"] < 1.0 - level
    sep = np.where(np.isnan(pr["p_hull"]), (pr["low"] > 0) | (pr["high"] < 0), sep)
    return np.where(sep, np.sign(pr["diff"]), 0).astype(np.int8)


def pair_agreement(proxy_signs: np.ndarray, real_signs: np.ndarray) -> np.ndarray:
    """Status of every pair (:data:`STATUSES`) from the two tasks' verdict sign vectors."""
    sp, sr = np.asarray(proxy_signs), np.asarray(real_signs)
    return np.select([(sp != 0) & (sr != 0) & (sp == sr), (sp != 0) & (sr != 0), sr != 0, sp != 0],
                     list(STATUSES[:4]), STATUSES[4]).astype(object)


def proxy_agreement(proxy: Side, real: Side, *, level: float = 0.95, n_resamples: int = 999, seed: int | None = 0,
                    check: bool = True, cache: dict | None = None) -> "ProxyAgreement":
    """How the proxy task's order of a family of systems agrees with the real task's (see the module docstring).

    Parameters
    ----------
    proxy, real : Side
        The same systems (columns) scored on each task.
    level : float
        Level of each task's verdicts and of the interval for tau (each family at ``sqrt(level)`` there).
    n_resamples, seed
        Bootstrap replicates of every family and of the joint bootstrap; the seed of all of them.
    check : bool
        Check each leaderboard's family-wise error at this design (cached on disk; cold it costs tens of
        seconds a board); False marks every verdict ``unverifiable``.
    cache : dict, optional
        Each side's leaderboard and family verdicts, kept by the side object: a study pairing one side with
        several others computes them once (every draw is seeded by the side's role, so the numbers are the same).

    Returns
    -------
    ProxyAgreement
    """
    names = _check(proxy, real, level, n_resamples)
    cache = {} if cache is None else cache
    side_level = math.sqrt(level)
    boards, forced, rngs = {}, {}, {}
    for role, side in (("proxy", proxy), ("real", real)):
        r_fam, rngs[role] = (np.random.default_rng(s) for s in np.random.SeedSequence(
            [0 if seed is None else int(seed), 7919, 0 if role == "proxy" else 1]).spawn(2))
        key = (role, id(side), tuple(names), level, int(n_resamples), seed, bool(check))
        if key not in cache:
            cache[key] = (side, _board(side, names, level=level, n_resamples=n_resamples, seed=seed, check=check),
                          _forced_signs(side, names, side_level, n_resamples, r_fam))
        _, boards[role], forced[role] = cache[key]
    est = {k: b.systems.set_index("name").loc[names, "estimate"].to_numpy(float) for k, b in boards.items()}
    tau = _orders.kendall_tau_b(est["proxy"], est["real"])
    fp, fr = forced["proxy"], forced["real"]
    lo, hi, exact = _orders.compatible_bounds(fp, fr, len(names))
    boot = _joint_bootstrap(proxy, real, names, level, n_resamples, rngs["proxy"], rngs["real"])
    sp, sr = _verdict_signs(boards["proxy"], names), _verdict_signs(boards["real"], names)
    status = _interval_status(boards, check)
    interval = {"estimate": tau, "low": lo, "high": hi, "method": TAU_METHOD, "exact": exact, "level": level,
                "side_level": side_level, **status, "verified_reason": status["reason"],
                "mark": marks.MARKS[status["verified_status"]],
                "forced_pairs": {"proxy": int((_orders.closure(fp, len(names)) != 0).sum()),
                                 "real": int((_orders.closure(fr, len(names)) != 0).sum())}}
    return ProxyAgreement(
        systems=_systems_table(boards, names), pairs=_pairs_table(boards, names, sp, sr), tau=interval,
        bootstrap={**boot, **BOOTSTRAP_STATUS}, agreement=_counts(pair_agreement(sp, sr)),
        winners=_winners(boards, names, est), limits=limits(len(names), level),
        sides={k: _side_info(s, boards[k]) for k, s in (("proxy", proxy), ("real", real))},
        boards={k: b.to_dict() for k, b in boards.items()},
        info={"level": level, "n_resamples": int(n_resamples), "seed": seed, "checked": bool(check)})


def _family_status(board: LeaderboardResult) -> str:
    """The family check's verdict on the board's pairs (every pair carries the family's): ``verified``,
    ``not_verified`` or ``unverifiable``."""
    st = set(board.pairs.loc[board.pairs["group"] == "__all__", "verified_status"].dropna().astype(str))
    if st == {"verified"}:
        return "verified"
    return "not_verified" if "not_verified" in st else "unverifiable"


def _interval_status(boards: Mapping[str, LeaderboardResult], check: bool) -> dict[str, Any]:
    """The compatible interval holds its level when both families hold theirs: its status is theirs."""
    few = [k for k, b in boards.items() if b.n_clusters < MIN_CLUSTERS]
    if few:
        return {"verified_status": "unverifiable", "reason": f"the {' and '.join(few)} task has fewer than "
                f"{MIN_CLUSTERS} clusters: its verdicts are left out of the interval (every order allowed)"}
    if not check:
        return {"verified_status": "unverifiable", "reason": _UNCHECKED}
    status = {k: _family_status(b) for k, b in boards.items()}
    if all(s == "verified" for s in status.values()):
        return {"verified_status": "verified", "reason": "both families' error checked at this design; the "
                                                         "range holds every order their verdicts allow"}
    bad = [k for k, s in status.items() if s != "verified"]
    if any(status[k] == "not_verified" for k in bad):
        return {"verified_status": "not_verified",
                "reason": f"the {' and '.join(bad)} family's error exceeds its level at this design"}
    return {"verified_status": "unverifiable", "reason": f"the {' and '.join(bad)} family could not be checked"}


def _joint_bootstrap(proxy: Side, real: Side, names: Sequence[str], level: float, B: int,
                     rng_p: np.random.Generator, rng_r: np.random.Generator) -> dict[str, Any]:
    """Percentile interval of tau-b over ``B`` joint resamples (independent draws of the two designs)."""
    reps = {}
    for key, side, rng in (("proxy", proxy, rng_p), ("real", real, rng_r)):
        codes, K = side.codes()
        reps[key] = _orders.resampled_estimates(side.values[list(names)].to_numpy(float).T, codes, K,
                                                side.estimator, int(B), rng)
    taus = _orders.tau_b_rows(reps["proxy"].T, reps["real"].T)
    ok = taus[np.isfinite(taus)]
    a = 1.0 - level
    lo, hi = (np.quantile(ok, [a / 2, 1 - a / 2]) if len(ok) else (np.nan, np.nan))
    return {"low": float(lo), "high": float(hi), "p_positive": float((ok > 0).mean()) if len(ok) else None,
            "n_resamples": int(B), "n_undefined": int(len(taus) - len(ok)), "method": "joint_cluster_bootstrap_percentile"}


def limits(S: int, level: float = 0.95) -> dict[str, Any]:
    """What ``S`` systems can tell about agreement (see the module docstring)."""
    P = S * (S - 1) // 2
    crit = _orders.permutation_critical_tau(S, 1.0 - level)
    return {"systems": S, "pairs": P, "tau_step": 2.0 / P if P else None, "widest": [-1.0, 1.0],
            "pairs_to_pass_0": P // 2 + 1,
            "permutation_critical_tau": crit,
            "sentence": (f"With {S} systems ({P} pairs) tau moves in steps of {2.0 / P:.3f}; the interval is [-1, 1] "
                         f"while either task separates no pair, and its low end passes 0 only once both tasks "
                         f"separate, the same way, more than half the pairs ({P // 2 + 1} of {P}) or transitivity "
                         "forces as much. Even measured without error, "
                         + (f"{S} systems show orders agreeing beyond chance (one-sided {1 - level:.0%}) only at "
                            f"tau >= {crit:.2f}." if crit is not None else
                            f"{S} systems cannot show orders agreeing beyond chance at {1 - level:.0%}."))}


def _systems_table(boards: Mapping[str, LeaderboardResult], names: Sequence[str]) -> pd.DataFrame:
    cols = {}
    for k, b in boards.items():
        s = b.systems.set_index("name").loc[list(names)]
        for c in ("estimate", "low", "high", "rank", "rank_low", "rank_high", "tier"):
            cols[f"{k}_{c}"] = s[c].to_numpy()
    out = pd.DataFrame({"name": list(names), **cols})
    return out.sort_values(["real_estimate", "name"], ascending=[False, True], kind="stable").reset_index(drop=True)


def _pairs_table(boards: Mapping[str, LeaderboardResult], names: Sequence[str], sp: np.ndarray,
                 sr: np.ndarray) -> pd.DataFrame:
    """Every pair, ``a`` ranked above ``b`` on the real task, with both tasks' difference, interval and verdict."""
    ia, ib = _orders.pair_index(len(names))
    status = pair_agreement(sp, sr)
    look = {k: {(str(r.a), str(r.b)): r for r in b.pairs[b.pairs["group"] == "__all__"].itertuples()}
            for k, b in boards.items()}
    real_est = boards["real"].systems.set_index("name")["estimate"]
    rows = []
    for p, (i, j) in enumerate(zip(ia, ib)):
        a, b = names[i], names[j]
        if real_est[b] > real_est[a]:
            a, b = b, a
        row = {"a": a, "b": b, "status": status[p]}
        for k in ("real", "proxy"):
            r = look[k].get((a, b))
            sign = 1.0
            if r is None:  # the other task ranks b above a: read its row from b's side
                r, sign = look[k][(b, a)], -1.0
            lo, hi = sorted((sign * float(r.low), sign * float(r.high)))
            row.update({f"{k}_diff": sign * float(r.diff), f"{k}_low": lo, f"{k}_high": hi,
                        f"{k}_separable": bool(r.significant), f"{k}_p_adj": float(r.p_adj)})
        rows.append(row)
    return pd.DataFrame(rows)


def _counts(status: np.ndarray) -> dict[str, Any]:
    P = len(status)
    out: dict[str, Any] = {s: int((status == s).sum()) for s in STATUSES}
    out["pairs"] = P
    out["undetermined"] = P - out["agree"] - out["disagree"]
    for k in ("agree", "disagree", "undetermined"):
        out[f"share_{k}"] = out[k] / P if P else None
    return out


def _winners(boards: Mapping[str, LeaderboardResult], names: Sequence[str],
             est: Mapping[str, np.ndarray]) -> dict[str, Any]:
    top = {k: [names[i] for i in np.flatnonzero(np.abs(v - v.max()) <= _orders.TIE_EPS)] for k, v in est.items()}
    best = {k: b.best_set() for k, b in boards.items()}
    return {"proxy": top["proxy"][0], "real": top["real"][0], "proxy_tied": top["proxy"], "real_tied": top["real"],
            "same": bool(set(top["proxy"]) & set(top["real"])),
            "proxy_in_real_best_set": top["proxy"][0] in best["real"],
            "proxy_best_set": best["proxy"], "real_best_set": best["real"]}


def _side_info(side: Side, board: LeaderboardResult) -> dict[str, Any]:
    codes, K = side.codes()
    return {"task": side.task, "metric": side.metric, "cluster": side.cluster_name, "estimator": side.estimator,
            "n_rows": int(len(side.values)), "n_clusters": int(K), "family_status": _family_status(board),
            "family_check": (board.groups.get("__all__") or {}).get("family_check")}


@dataclass
class ProxyAgreement(_JsonMixin):
    """The agreement of a proxy task's order with a real task's (:func:`proxy_agreement`).

    Attributes
    ----------
    systems : DataFrame
        ``name`` and, for ``proxy`` and ``real``, ``*_estimate, *_low, *_high, *_rank, *_rank_low, *_rank_high,
        *_tier``; best on the real task first.
    pairs : DataFrame
        ``a, b`` (a above b on the real task), ``status`` (:data:`STATUSES`), and for each task ``*_diff, *_low,
        *_high, *_separable, *_p_adj``.
    tau : dict
        ``estimate`` (tau-b of the estimates), ``low, high`` (the compatible-orders interval), ``method``,
        ``exact``, ``level``, ``side_level``, ``verified_status``, ``reason``, ``forced_pairs``.
    bootstrap : dict
        The joint bootstrap's percentile interval ``low, high``, ``p_positive``, ``verified_status``.
    agreement, winners, limits, sides, boards, info : dict
    """

    _json_indent: ClassVar[int] = 2

    systems: pd.DataFrame
    pairs: pd.DataFrame
    tau: dict[str, Any]
    bootstrap: dict[str, Any]
    agreement: dict[str, Any]
    winners: dict[str, Any]
    limits: dict[str, Any]
    sides: dict[str, Any] = field(default_factory=dict)
    boards: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"systems": self.systems, "pairs": self.pairs, "tau": self.tau, "bootstrap": self.bootstrap,
                "agreement": self.agreement, "winners": self.winners, "limits": self.limits, "sides": self.sides,
                "boards": self.boards, "info": self.info}

    def sentence(self) -> str:
        """One sentence: tau with its interval, the pairs' agreement and the winners."""
        from ragcov_data.eval.comparisons.proxy_render import sentence

        return sentence(self)

    def summary(self) -> str:
        """Terminal text: both orders, tau, the pairs and the winners."""
        from ragcov_data.eval.comparisons.proxy_render import text

        return text(self)
