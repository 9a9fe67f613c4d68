"""Task loading and options shared by ``ragcov eval`` and ``ragcov compare``."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ragcov_data.cli._common import add_run_options, read_population, run_options
from ragcov_data.cli._task_options import add_task_source, load_task_source
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.tasks.paths import check_writable
from ragcov_data.runs import load_run
from ragcov_data.ties import DEFAULT_TIE_POLICY, TIE_POLICIES, TIE_POLICY_ALIASES


def load_task(args: argparse.Namespace) -> Any:
    """The task the source options name (see :mod:`ragcov_data.cli._task_options`).

    The ``--json`` output path is checked first, so an unwritable path fails before any work.
    """
    if getattr(args, "json_out", None):
        check_writable(args.json_out)
    task = load_task_source(args).task
    if getattr(args, "population_size", None) is not None:
        _check_population_size(task, args)
    return task


def _check_population_size(task: Any, args: argparse.Namespace) -> None:
    """``--population-size`` below the number of sampled units is bad input, said before scoring."""
    # local: keeps `ragcov --help` from importing scipy.stats (the evaluator)
    from ragcov_data.eval.outcomes.table import default_cluster  # the one choice of the default unit

    queries = task["queries"]
    names = list(getattr(queries, "column_names", None) or queries.columns)
    col = args.cluster or default_cluster(names)
    if col not in names:
        return  # evaluate names the missing column
    values = queries[col]
    k = len(set(values.tolist() if hasattr(values, "tolist") else values))
    if args.population_size < k:
        raise RagcovError(f"--population-size {args.population_size:g} is smaller than the {k} units ({col}) the "
                          "task samples; give the number of documents in the whole population (at least the sample).")


def add_common(p: argparse.ArgumentParser) -> None:
    """Task source, metric, tie policy, clustering, interval and output options of eval and compare."""
    add_task_source(p)
    p.add_argument("--metric", default="hit@1",
                   help="hit@k, ndcg@k, p@k, r@k, mrr@k (default: hit@1); on a cited-questions task (irpf) "
                        "recall@k is the share of cited provisions and hit@k whether one is found (chunk_recall@k, "
                        "chunk_hit@k: trec_eval's chunk-level ones) and recall@Bw, span_recall@Bw, precision@Bw, "
                        "iou@Bw score a context of B words")
    p.add_argument("--tie-policy", default=DEFAULT_TIE_POLICY, choices=[*TIE_POLICIES, *TIE_POLICY_ALIASES],
                   help=f"order of candidates with equal scores (default: {DEFAULT_TIE_POLICY}; "
                        + ", ".join(f"{a} = {b}" for a, b in TIE_POLICY_ALIASES.items()) + ")")
    p.add_argument("--relevance-threshold", type=int, default=1, help="minimum relevant grade (default: 1)")
    p.add_argument("--cluster", default=None,
                   help="queries column of the sampled unit (default: the task's own, the first of source_key, "
                        "doc_id, exam, topic it has, else the query; another is said in the output)")
    p.add_argument("--by", default=None, help="queries column: estimates per group plus overall")
    p.add_argument("--methods", default=None,
                   help="comma-separated interval methods, or 'all' (default: compute all, print the recommended "
                        "one per estimator)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--n-resamples", type=int, default=5000, help="bootstrap replicates (default: 5000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="also write the result as JSON")
    add_run_options(p)


def read_run_arg(path: str, args: argparse.Namespace, depth: int | None = None) -> Any:
    """A run file named on the command line, read through the one run reader with --columns/--run-format/--order.

    ``depth`` keeps only the rows a metric can see (``k`` a query, plus one for the query's own chunk and every
    row tied at the boundary: :func:`ragcov_data.runs.load_run`), so memory follows the rows kept, not the file.
    """
    return load_run(path, **run_options(args), depth=depth)


def metric_depth(metric: str | None) -> int | None:
    """Rows a query that scoring ``metric`` needs: its cutoff k, plus one for a self-retrieval query's own chunk
    (removed before scoring). None when no metric is named (the verb then chooses the task's own), and for a
    metric no parser reads: which names are valid depends on the task, so the scoring, which knows it, says."""
    # local: keeps `ragcov --help` from importing scipy.stats (the evaluator)
    from ragcov_data.eval.outcomes.budget import parse_cited_metric
    from ragcov_data.eval.outcomes.metrics import parse_metric

    if metric is None:
        return None
    try:
        if parse_cited_metric(metric).budget:  # a context of B words: no fixed number of rows, read them all
            return None
    except RagcovError:
        pass
    try:
        return parse_metric(metric).k + 1
    except RagcovError:
        return None


def read_population_arg(path: str | None, twin: bool = False, seed: int = 0) -> Any:
    """The population of ``coverage`` / ``plan``: an ``eval --json`` file through the outcome stage's reader
    (its notices printed: zeroed queries, the sample scored), else any table or ``--twin``."""
    if not twin and path is not None and Path(path).suffix.lower() == ".json" and Path(path).is_file():
        # local: keeps `ragcov --help` from importing scipy.stats (the evaluator)
        from ragcov_data.eval.outcomes.table import outcomes_from_eval_json

        pop, notes = outcomes_from_eval_json(path)
        for n in notes:
            print(f"note: {n}")
        return pop
    return read_population(path, twin, seed)


def methods_arg(text: str | None) -> list[str] | None:
    """``--methods a,b`` as a list (None: every method, also for ``--methods all``)."""
    if text is None or text.strip() == "all":
        return None
    out = [m.strip() for m in text.split(",") if m.strip()]
    if not out:
        raise RagcovError("--methods is empty; give comma-separated names or omit it for all methods.")
    return out


# --------------------------------------------------------------------------- sampling design


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number; got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number; got {text!r}")
    return value


def add_design(p: argparse.ArgumentParser) -> None:
    """``--strata``, ``--population-size``, ``--stratum-sizes``, ``--population-strata``."""
    g = p.add_argument_group("sampling design (finite-population correction, two-stage)")
    g.add_argument("--strata", metavar="COL", default=None,
                   help="queries column of strata (e.g. doc_type), constant within a document: two-stage / "
                        "stratified design, method t only, target = mean over strata")
    g.add_argument("--population-size", type=_positive, default=None, metavar="N",
                   help="one-stage design: documents in the population the sample was drawn from (finite-"
                        "population correction)")
    g.add_argument("--stratum-sizes", default=None, metavar="SPEC",
                   help="with --strata: documents in the population of each stratum, as LABEL=N,LABEL=N or a "
                        ".json file {label: N} or a .csv/.tsv file with columns stratum,documents")
    g.add_argument("--population-strata", type=_positive, default=None, metavar="H",
                   help="with --strata: strata in the population, when the sampled strata were drawn from them")
    g.add_argument("--no-fpc", dest="fpc", action="store_false",
                   help="a run or task made with --sample-docs: score its sampled queries without the finite-"
                        "population correction it otherwise gets")


def design_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``strata=`` and ``population_sizes=`` for :func:`ragcov_data.eval.evaluate` from the design options."""
    strata = getattr(args, "strata", None)
    if not getattr(args, "fpc", True) and (args.population_size is not None or args.stratum_sizes is not None):
        raise RagcovError("--no-fpc turns the finite-population correction off, but --population-size/--stratum-sizes "
                          "ask for one; drop one of them.")
    fpc = {"fpc": getattr(args, "fpc", True)}
    if strata is None:
        for opt, value in (("--stratum-sizes", args.stratum_sizes), ("--population-strata", args.population_strata)):
            if value is not None:
                raise RagcovError(f"{opt} describes strata; give --strata COL too (the queries column of strata).")
        return {"strata": None, "population_sizes": args.population_size, **fpc}
    if args.population_size is not None:
        raise RagcovError("--population-size is for a one-stage design; with --strata give --stratum-sizes "
                          "(documents per stratum) and/or --population-strata (strata in the population).")
    sizes: dict[str, Any] = {}
    if args.stratum_sizes is not None:
        sizes["documents"] = stratum_sizes(args.stratum_sizes)
    if args.population_strata is not None:
        sizes["strata"] = args.population_strata
    return {"strata": strata, "population_sizes": sizes or None, **fpc}


def stratum_sizes(spec: str) -> dict[str, float]:
    """``{stratum: documents}`` from ``LABEL=N,...`` or a .json / .csv / .tsv file."""
    path = Path(spec)
    if path.suffix.lower() in (".json", ".csv", ".tsv"):
        if not path.is_file():
            raise InputFileError(f"--stratum-sizes file {spec!r} not found; pass LABEL=N,... or an existing file.")
        pairs = _sizes_file(path)
        where = f"--stratum-sizes file {spec!r}"
    else:
        pairs = []
        for item in (x.strip() for x in spec.split(",")):
            if not item:
                continue
            if "=" not in item:
                raise RagcovError(f"--stratum-sizes item {item!r} is not LABEL=N; write e.g. despacho=120,portaria=45.")
            label, _, n = item.rpartition("=")
            pairs.append((label.strip(), n.strip()))
        where = "--stratum-sizes"
    out: dict[str, float] = {}
    for label, n in pairs:
        try:
            value = float(n)
        except (TypeError, ValueError):
            value = float("nan")
        if not value > 0:
            raise RagcovError(f"{where}: stratum {label!r} has size {n!r}; sizes must be positive numbers.")
        if label in out:
            raise RagcovError(f"{where}: stratum {label!r} is given twice; give each stratum once.")
        out[label] = value
    if not out:
        raise RagcovError(f"{where} is empty; give the documents of each stratum, e.g. despacho=120,portaria=45.")
    return out


def _sizes_file(path: Path) -> list[tuple[str, Any]]:
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise InputFileError(f"--stratum-sizes file {str(path)!r} must hold a JSON object {{label: N}}.")
            return [(str(k), v) for k, v in data.items()]
        import pandas as pd

        df = pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",", dtype=str)
    except (OSError, ValueError) as exc:
        raise InputFileError(f"cannot read --stratum-sizes file {str(path)!r}: {exc}") from None
    if list(df.columns[:2]) != ["stratum", "documents"]:
        raise InputFileError(f"--stratum-sizes file {str(path)!r} needs columns stratum,documents; "
                             f"found {list(df.columns)}.")
    return list(zip(df["stratum"].astype(str), df["documents"]))
