"""``ragcov misses``: where a run's hit@1 misses go, with document-clustered shares.

    ragcov misses bm25.trec --data-dir ../shared/data
    ragcov misses bm25.parquet --data-dir ../shared/data --json misses.json --csv misses.csv
"""
from __future__ import annotations

import argparse

from ragcov_data._atomic import atomic_write
from ragcov_data.cli._common import add_run_options
from ragcov_data.cli._evalcommon import load_task, read_run_arg
from ragcov_data.cli._task_options import add_task_source
from ragcov_data.tasks.paths import check_writable
from ragcov_data.ties import DEFAULT_TIE_POLICY, TIE_POLICIES, TIE_POLICY_ALIASES


def add_parser(sub) -> None:
    p = sub.add_parser(
        "misses",
        help="flag every hit@1 miss (same type, same issuer, near duplicate, boilerplate, other edition, contains "
             "the query, not in force, cites)",
        description="For every query RUN misses at hit@1 (as `ragcov eval` scores it: same tie policy, own chunk "
                    "excluded), compare the retrieved top-1 chunk with the query's own chunk and document and "
                    "flag it: same_type, same_issuer, near_duplicate (word 5-gram Jaccard >= 0.5), boilerplate "
                    "(mostly 5-grams common across documents), other_edition (another act of the same series whose "
                    "text overlaps the query document's), contains_query (the query's words in order in the "
                    "retrieved chunk), retrieved_not_in_force (superseded wording or a revoked/suspended act; the "
                    "table names the retrieved chunk's out-of-force units and their share of its words), "
                    "cites (one document cites the other's act). "
                    "Prints the share of misses under each flag with CR2 intervals clustered by the query's "
                    "document, and a table by doc_type.",
        epilog="example: ragcov misses bm25.trec --data-dir ../shared/data --json misses.json --csv misses.csv",
    )
    p.add_argument("run", help="run file: TREC, CSV/TSV with a header, parquet or JSON; .gz/.bz2/.xz too")
    add_task_source(p)
    p.add_argument("--tie-policy", default=DEFAULT_TIE_POLICY, choices=[*TIE_POLICIES, *TIE_POLICY_ALIASES],
                   help=f"order of candidates with equal scores (default: {DEFAULT_TIE_POLICY})")
    p.add_argument("--cluster", default=None, help="queries column of the unit (default: doc_id)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--on-missing", default="error", choices=["error", "zero"],
                   help="task queries absent from the run: error (default) or misses with nothing retrieved")
    p.add_argument("--near-duplicate", type=float, default=None, metavar="J",
                   help="Jaccard threshold of near_duplicate (default: 0.5)")
    p.add_argument("--boilerplate-doc-share", type=float, default=None, metavar="X",
                   help="a 5-gram is common when in this share of documents or more (default: 0.03)")
    p.add_argument("--boilerplate-min-docs", type=int, default=None, metavar="N",
                   help="... and in at least N documents (default: 5)")
    p.add_argument("--boilerplate-share", type=float, default=None, metavar="S",
                   help="boilerplate: this share of the chunk's 5-grams or more are common (default: 0.5)")
    p.add_argument("--edition-overlap", type=float, default=None, metavar="J",
                   help="other_edition: Jaccard of the two documents' 5-gram sets from which a same-series "
                        "document is another edition (default: 0.5)")
    add_run_options(p)
    p.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="also write the result as JSON")
    p.add_argument("--csv", dest="csv_out", default=None, metavar="OUT", help="also write the misses table as CSV")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # local: keeps `ragcov --help` from importing scipy.stats (the evaluator)
    from ragcov_data.eval.misses.analysis import misses

    if args.csv_out:
        check_writable(args.csv_out)
    task = load_task(args)  # checks --json first
    thresholds = {k: getattr(args, k) for k in ("near_duplicate", "boilerplate_doc_share", "boilerplate_min_docs",
                                                  "boilerplate_share", "edition_overlap")
                  if getattr(args, k, None) is not None}
    res = misses(read_run_arg(args.run, args, 2),  # hit@1: the top row after the query's own chunk
                 task, tie_policy=args.tie_policy, cluster=args.cluster,
                 level=args.level, on_missing=args.on_missing, **thresholds)  # unset: the documented defaults
    print(res.summary())
    if args.json_out:
        res.to_json(args.json_out)
        print(f"wrote {args.json_out}")
    if args.csv_out:
        atomic_write(args.csv_out, res.to_frame().to_csv(index=False))
        print(f"wrote {args.csv_out}")
    return 0
