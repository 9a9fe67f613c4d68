"""``ragcov proxy``: does self-retrieval rank retrievers and cuts as real questions do?

    ragcov proxy --dataset irpf --data-dir ../shared/data --json proxy-irpf.json
    ragcov proxy --dataset lgpd --data-dir ../shared/data --retrievers bm25,tfidf --units artigo --cuts none

A verb of its own, not an option of ``ragcov chunking``: it compares two tasks (self-retrieval and cited
questions) over the same acts, for two families (retrievers at one cut, and cuts), and prints orders, an
interval for Kendall's tau and pairwise agreement; ``ragcov chunking`` compares cuts on one task. The work is
:func:`ragcov_data.jobs.proxy.proxy_study`.
"""
from __future__ import annotations

import argparse
import sys

from ragcov_data.cli._common import str_list
from ragcov_data.tasks.paths import check_writable

#: What each list option takes ``none`` to mean.
_NONE = ("none", "")


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "proxy",
        help="does self-retrieval rank retrievers and cuts as real cited questions do? (orders, tau, agreement)",
        description="Build the self-retrieval task on the acts of a cited-questions corpus with the same cut (acts, "
                    "or artigos, as documents), run every system on both tasks and compare the orders: each task's "
                    "estimates with intervals, Kendall's tau-b with an interval from both samples (documents; topics "
                    "or exams), each pair agreed, disagreed or left undetermined by the two tasks' family-wise "
                    "verdicts, and the two winners. Families: the retrievers at --cut, and --cut-retriever under "
                    "each of --cuts.",
        epilog="example: ragcov proxy --dataset irpf --data-dir ../shared/data --json proxy-irpf.json",
    )
    p.add_argument("--dataset", default="irpf", choices=("irpf", "lgpd"), help="cited-questions corpus (default: irpf)")
    p.add_argument("--data-dir", default=None, help="the shared data folder (default: $RAGCOV_DATA_DIR)")
    p.add_argument("--retrievers", type=str_list, default=None,
                   help="comma list of the retriever family (default: every installed baseline without a transformer "
                        "encoder: the lexical ones and wordllama); one or 'none' for no retriever family")
    p.add_argument("--cut", default="words-100", help="the retriever family's cut: words-N or dispositivo (default: "
                                                      "words-100)")
    p.add_argument("--cuts", default="words-50,words-100,words-200,dispositivo",
                   help="comma list of the cut family (default: words-50,words-100,words-200,dispositivo; 'none')")
    p.add_argument("--cut-retriever", default="bm25-pt", help="the cut family's retriever (default: bm25-pt)")
    p.add_argument("--units", type=str_list, default=["act", "artigo"],
                   help="what a self-retrieval document is: act, artigo, or both (default: act,artigo)")
    p.add_argument("--proxy-metrics", type=str_list, default=["hit@1", "span_recall@1000w"],
                   help="self-retrieval measures: hit@k, span_recall@Bw (default: hit@1,span_recall@1000w)")
    p.add_argument("--real-metrics", type=str_list, default=["span_recall@1000w", "recall@10"],
                   help="cited-questions measures (default: span_recall@1000w,recall@10); the first of each list "
                        "is the headline")
    p.add_argument("--level", type=float, default=0.95, help="level of the verdicts and of tau's interval (default: 0.95)")
    p.add_argument("--n-resamples", type=int, default=999, help="bootstrap replicates (default: 999)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument("--no-check", dest="check", action="store_false",
                   help="skip each leaderboard's family check at this design (every verdict then says unverifiable)")
    p.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="also write the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress messages")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    # local: keeps `ragcov --help` from importing datasets and scipy.stats (the study)
    from ragcov_data.jobs.proxy import proxy_study

    if args.json_out:
        check_writable(args.json_out)
    retrievers = None if args.retrievers is None else [r for r in args.retrievers if r.lower() not in _NONE]
    cuts = [c for c in str_list(args.cuts) if c.lower() not in _NONE]
    res = proxy_study(args.dataset, args.data_dir, retrievers=retrievers, cut=args.cut, cuts=cuts,
                      cut_retriever=args.cut_retriever, units=args.units, proxy_metrics=args.proxy_metrics,
                      real_metrics=args.real_metrics, level=args.level, n_resamples=args.n_resamples,
                      seed=args.seed, check=args.check,
                      log=(lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr)))
    print(res.summary())
    if args.json_out:
        res.to_json(args.json_out)
        print(f"wrote {args.json_out}")
    return 0
