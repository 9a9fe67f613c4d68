"""``ragcov leaderboard``: rank many runs on one task with family-wise pair tests, tiers and judged@k."""
from __future__ import annotations

import argparse
from pathlib import Path

from ragcov_data.cli._common import add_run_options
from ragcov_data.cli._evalcommon import metric_depth, read_run_arg
from ragcov_data.cli._task_options import add_task_source, load_task_source
from ragcov_data.errors import RagcovError
from ragcov_data.runs._mteb import mteb_model_name
from ragcov_data.tasks.paths import check_writable
from ragcov_data.ties import DEFAULT_TIE_POLICY, TIE_POLICIES, TIE_POLICY_ALIASES

#: Compression suffixes dropped before the format suffix when a run is named by its file stem.
_COMPRESSED = (".gz", ".bz2", ".xz")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "leaderboard",
        help="rank many runs: intervals, family-wise pair tests (simultaneous intervals), tiers, judged@k",
        description="Rank RUN files on one task. Per system: the estimate (mean over queries) with the design's "
                    "recommended interval, a rank interval, a tier (systems sharing a letter are not separable) and "
                    "judged@k. Per pair: the paired difference with a simultaneous interval for the whole family, "
                    "the p-value of the test behind that interval and its family-adjusted value, wins/losses/ties. A run is named by its file stem "
                    "or NAME=PATH.",
        epilog="example: ragcov leaderboard bm25=bm25.trec tfidf.trec dense.parquet --dataset juristcu "
               "--data-dir data --metric ndcg@10 --by group --html board.html",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="run file (TREC, CSV/TSV, parquet, JSON) or NAME=PATH")
    add_task_source(p)
    p.add_argument("--metric", default=None,
                   help="hit@k, ndcg@k, p@k, r@k, mrr@k (default: the task's own: hit@1 for self-retrieval, "
                        "ndcg@10 for graded or pooled judgments; printed in the header)")
    p.add_argument("--estimator", default="auto", choices=("auto", "micro", "macro"),
                   help="micro = mean over queries, trec_eval's number; macro = mean of cluster means; auto "
                        "(default) = micro where its intervals are verified for every system, else macro with "
                        "micro on a second line saying why it is not verified here")
    p.add_argument("--tie-policy", default=DEFAULT_TIE_POLICY, choices=[*TIE_POLICIES, *TIE_POLICY_ALIASES],
                   help=f"order of candidates with equal scores, for every run (default: {DEFAULT_TIE_POLICY})")
    p.add_argument("--relevance-threshold", type=int, default=1, help="minimum relevant grade (default: 1)")
    p.add_argument("--cluster", default=None,
                   help="queries column of the sampled unit (default: the task's own, the first of source_key, "
                        "doc_id, exam, topic it has, else the query; another is said in the output)")
    p.add_argument("--by", default=None, help="queries column: one leaderboard (one family) per group plus overall")
    p.add_argument("--level", type=float, default=0.95, help="confidence and family-wise level (default: 0.95)")
    p.add_argument("--n-resamples", type=int, default=5000, help="cluster-bootstrap replicates (default: 5000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument("--on-missing", default="error", choices=("error", "zero", "intersect"),
                   help="task queries a run lacks: error (default), score 0, or keep the queries every run has")
    p.add_argument("--judged-k", type=int, default=None, help="cutoff of judged@k (default: the metric's k)")
    p.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="write the result as JSON")
    p.add_argument("--html", dest="html_out", default=None, metavar="OUT", help="write a self-contained HTML page")
    p.add_argument("--markdown", dest="md_out", default=None, metavar="OUT", help="write markdown tables")
    p.add_argument("--latex", dest="latex_out", default=None, metavar="OUT",
                   help="write LaTeX booktabs tables (systems and pairs per group; needs \\usepackage{booktabs})")
    add_run_options(p)
    p.set_defaults(func=run)


def run_name(path: str) -> str:
    """The file stem: ``runs/bm25.trec.gz`` -> ``bm25``; an MTEB prediction file's model name."""
    model = mteb_model_name(path)
    if model:
        return model
    p = Path(path)
    if p.suffix.lower() in _COMPRESSED:
        p = p.with_suffix("")
    return p.stem or p.name


def parse_runs(items: list[str]) -> dict[str, str]:
    """``{name: path}`` from RUN arguments: an existing file is a path; else ``NAME=PATH``. Names are unique."""
    out: dict[str, str] = {}
    for item in items:
        if "=" in item and not Path(item).exists():
            name, _, path = item.partition("=")
            name = name.strip()
            if not name or not path:
                raise RagcovError(f"run argument {item!r}: write NAME=PATH with both parts, or a file path.")
        else:
            name, path = run_name(item), item
        if not Path(path).is_file():
            raise RagcovError(f"run file {path!r} not found (argument {item!r}); give an existing file or NAME=PATH.")
        if name in out:
            raise RagcovError(f"two runs are named {name!r} ({out[name]!r} and {path!r}); name them apart with "
                              "NAME=PATH.")
        out[name] = path
    if len(out) < 2:
        raise RagcovError(f"a leaderboard needs at least 2 runs; got {len(out)}.")
    return out


def run(args: argparse.Namespace) -> int:
    # local: keeps `ragcov --help` from importing scipy.stats (the evaluator)
    from ragcov_data.eval import leaderboard

    paths = parse_runs(args.runs)
    for out in (args.json_out, args.html_out, args.md_out, args.latex_out):  # inputs: checked by the CLI's main
        if out:
            check_writable(out)
    task = load_task_source(args).task
    # self-retrieval judgments are complete: the metric's top k (+ the own chunk) is all a run needs; on pooled
    # judgments the condensed and pool readings look past unjudged rows, so those runs are read whole
    queries = task["queries"]
    cols = queries.column_names if hasattr(queries, "column_names") else list(queries.columns)
    depth = metric_depth(args.metric or "hit@1") if "chunk_id" in cols else None
    runs = {name: read_run_arg(path, args, depth) for name, path in paths.items()}
    res = leaderboard(runs, task, metric=args.metric, cluster=args.cluster, by=args.by, level=args.level,
                      n_resamples=args.n_resamples, seed=args.seed, on_missing=args.on_missing,
                      estimator=args.estimator, tie_policy=args.tie_policy,
                      relevance_threshold=args.relevance_threshold, judged_k=args.judged_k)
    print(res.summary())
    for out, write in ((args.json_out, res.to_json), (args.html_out, res.to_html), (args.md_out, res.to_markdown),
                       (getattr(args, "latex_out", None), res.to_latex)):
        if out:
            write(out)
            print(f"wrote {out}")
    return 0

