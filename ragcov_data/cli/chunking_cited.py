"""``ragcov chunking --dataset irpf``: chunkings x retrievers on real cited questions, one family.

    ragcov chunking --dataset irpf --data-dir ../shared/data --retriever bm25,tfidf --json irpf-chunking.json
    ragcov chunking --dataset irpf --data-dir ../shared/data --chunking words-100,article --retriever bm25
    ragcov chunking --dataset cited_questions --data-files acts.jsonl --questions questions.jsonl
    ragcov chunking --dataset irpf --chunker words-50 --chunker dispositivo --chunker recursive-800
    ragcov chunking --dataset lgpd --data-dir ../shared/data --questions heldout.jsonl --retriever bm25

The same questions are asked under every chunking (default: words-50, words-100, words-200, dispositivo,
article), each retriever runs on each, every (chunking, retriever) is scored per question against its
own chunking's qrels, and the systems are ranked as one family (:func:`ragcov_data.eval.comparisons.cited.
cited_chunking_study`) at each context budget of ``--budgets`` (500, 1,000, 2,000 words: every chunking given
the same number of words) by the share of the cited provisions' text inside the context (``span_recall@Bw``, the
headline) and by the touch reading (``recall@Bw``: some character of the provision in the context), then on
recall@10 and nDCG@10 (k chunks of unequal size: labelled as comparing unequal contexts). The console prints the
answer by text share, the touch reading beside it, one sentence where the two disagree, the winning cut at each
budget and the text share curve. The JSON holds per budget the text-share family (``budgets[B]``: systems, pairs,
family check, ``answer``), the touch family (``budgets[B].touched``), the curve (``text_share_curve``) and the
``disagreement``; the headline's answer (``headline``), ``touched_headline`` and ``winners``.
"""
from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from ragcov_data.cli.run import RETRIEVERS, make_retriever
from ragcov_data.errors import RagcovError
from ragcov_data.loaders.chunkers import resolve
from ragcov_data.tasks.paths import check_writable

#: Datasets this branch of ``ragcov chunking`` serves.
DATASETS = ("irpf", "lgpd", "cited_questions")
DEFAULT_CHUNKINGS = ("words-50", "words-100", "words-200", "dispositivo", "article")
#: Context budgets (words) ranked by default, one family each.
DEFAULT_BUDGETS = (500, 1000, 2000)
_CHUNKING = re.compile(r"^(?:words-(\d+)|dispositivo(?:-(\d+))?|article)$")


def extend_parser(p: argparse.ArgumentParser) -> None:
    """Let ``--retriever`` and ``--chunking`` take comma lists and add the cited-questions options."""
    for action in p._actions:  # the shared options keep their names; lists are checked in `dispatch`
        if action.dest in ("retriever", "chunking"):
            action.choices = None
    g = p.add_argument_group("cited questions (--dataset irpf / lgpd / cited_questions)")
    g.add_argument("--questions", metavar="FILE", help="cited_questions: the questions JSONL (acts in --data-files); "
                                                        "lgpd: another questions file of its layout (the held-out "
                                                        "half; unit tables in --data-files, default the shared ones)")
    g.add_argument("--chunker", action="append", metavar="NAME",
                   help="a chunker to compare (repeatable, beside --chunking): words-N, dispositivo[-N], article, "
                        "recursive-N (LangChain, N characters), chonkie-sentence-N, semchunk-N (N words; these need "
                        "pip install 'ragcov-data[chunkers]'), or module:attr of a chunker callable")
    g.add_argument("--passages", action="append", metavar="FILE",
                   help="a passage run (your pipeline's returned text: JSON Lines, CSV or parquet with query-id, rank, "
                        "text; repeatable) ranked in the same families, named after its file; see docs/pipelines.md")
    g.add_argument("--pipeline", action="append", metavar="MODULE:ATTR",
                   help="your pipeline (repeatable), imported from the current folder and asked every question, ranked "
                        "in the same families: a callable question -> passages, a LangChain or LlamaIndex retriever, "
                        "or a function build(documents) returning one; see docs/pipelines.md")
    g.add_argument("--on-missing", default=None, choices=["error", "zero"],
                   help="questions a --passages / --pipeline run has no answer for: error (default, as in ragcov "
                        "eval) or score 0 (said in the output)")
    g.add_argument("--granularity", choices=("dispositivo", "article"), default="dispositivo",
                   help="relevance of the cited dispositivo itself (graded) or of its whole artigo (default: "
                        "dispositivo)")
    g.add_argument("--where", choices=("all", "full"), default="all",
                   help="'full': only questions whose cited acts are all in the corpus (default: all)")
    g.add_argument("--budgets", default=None,
                   help="comma list of context budgets in words, every chunking given the same number of words: one "
                        "family each on span_recall@Bw (the headline: share of the cited text in the context) and on "
                        "recall@Bw (touched) (default: 500,1000,2000; 'none' for none)")
    g.add_argument("--metrics", default="recall@10,ndcg@10",
                   help="comma list of recall@k, ndcg@k, hit@k (k chunks: unequal contexts across chunkings) or "
                        "recall@Bw ...: one family-wise table each (default: recall@10,ndcg@10)")
    g.add_argument("--cluster", choices=("auto", "query", "topic", "exam", "article"), default=None,
                   help="unit of inference (default: the task's own, as ragcov eval reads it: irpf the topic, lgpd "
                        "the exam; auto says the same): the question, its topic, its exam, or its first cited "
                        "artigo (said in the output)")


def _split(value: str | None) -> list[str]:
    return [x.strip() for x in (value or "").split(",") if x.strip()]


def dispatch(args: argparse.Namespace) -> int | None:
    """Run the cited-questions comparison when ``--dataset`` is one of :data:`DATASETS` (returns the exit
    code); else check that the acervo branch got one retriever and return None."""
    if args.retriever is None:  # the Portuguese BM25 on real questions (the README's answer), else BM25
        args.retriever = "bm25-pt" if args.dataset in DATASETS else "bm25"
    retrievers = _split(args.retriever)
    bad = [r for r in retrievers if r not in RETRIEVERS]
    if bad or not retrievers:
        raise RagcovError(f"--retriever must be one of {list(RETRIEVERS)} (a comma list with --dataset irpf); "
                          f"got {args.retriever!r}.")
    if args.dataset not in DATASETS:
        if getattr(args, "questions", None):
            raise RagcovError("--questions applies to --dataset cited_questions (questions whose gold is cited "
                              "provisions, acts in --data-files); drop it, or add --dataset cited_questions.")
        if len(retrievers) > 1:
            raise RagcovError("a list of retrievers applies to --dataset irpf / cited_questions; the acervo "
                              "comparison runs one --retriever.")
        if getattr(args, "chunker", None):
            raise RagcovError("--chunker applies to --dataset irpf / cited_questions; the acervo comparison builds "
                              "word windows and dispositivos.")
        if args.chunking not in (None, "words", "dispositivo"):
            raise RagcovError(f"--chunking must be 'words' or 'dispositivo' here; got {args.chunking!r}.")
        if getattr(args, "budgets", None) is not None:
            raise RagcovError("--budgets applies to --dataset irpf / cited_questions (context budgets of cited "
                              "questions); drop it here.")
        if getattr(args, "passages", None) or getattr(args, "pipeline", None) or getattr(args, "on_missing", None):
            raise RagcovError("--passages, --pipeline and --on-missing apply to --dataset irpf / cited_questions; here "
                              "write a passage run with ragcov run --pipeline and score it with ragcov eval / "
                              "compare / leaderboard.")
        return None
    return run_cited(args, retrievers)


def _chunkings(value: str | None, chunker_names: list[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(name, build_cited_task keywords)`` of every chunking asked for: the ``--chunking`` list (default:
    :data:`DEFAULT_CHUNKINGS` when no ``--chunker`` is given), then each ``--chunker``."""
    names = _split(value) or ([] if chunker_names else list(DEFAULT_CHUNKINGS))
    out = []
    for n in names:
        m = _CHUNKING.match(n)
        if m is None:
            raise RagcovError(f"--chunking entries must be words-N, dispositivo[-N] or article; got {n!r}.")
        if n.startswith("words"):
            out.append((n, {"chunking": "words", "chunk_words": int(m.group(1))}))
        elif n.startswith("dispositivo"):
            out.append((n, {"chunking": "dispositivo", "max_words": int(m.group(2)) if m.group(2) else None}))
        else:
            out.append((n, {"chunking": "article"}))
    for n in chunker_names or []:
        spec = resolve(n)
        out.append((spec.name, {k: v for k, v in spec.builtin.items()} if spec.builtin else {"chunker": spec}))
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise RagcovError(f"--chunking/--chunker list a chunking twice: {names}.")
    return out


def _budgets(value: str | None) -> list[int]:
    """``--budgets 500,1000,2000`` as whole numbers of words (``none``: no budgeted family)."""
    if value is None or value.strip().lower() == "none":
        return []
    out = []
    for x in _split(value):
        if not x.isdigit() or int(x) < 1:
            raise RagcovError(f"--budgets entries must be positive whole numbers of words (e.g. 500,1000,2000); "
                              f"got {x!r}.")
        out.append(int(x))
    return out


def _passage_files(files: list[str] | None) -> dict[str, str]:
    """``--passages`` files by system name (the file's name without its suffixes)."""
    from pathlib import Path

    out: dict[str, str] = {}
    for f in files or []:
        name = Path(f).name.split(".")[0] or Path(f).name
        if name in out:
            raise RagcovError(f"two --passages files are named {name!r} ({out[name]} and {f}); rename one.")
        out[name] = f
    return out


def _pipeline_runs(specs: list[str] | None, tasks: dict[str, Any], quiet: bool) -> dict[str, Any]:
    """Each ``--pipeline``'s passage run on the questions (asked on the first chunking's task: a pipeline reads
    the acts, not ragcov's chunks), named by its ``module:attr``."""
    from ragcov_data.execution.pipelines import import_object, pipeline_or_factory, run_pipeline

    out: dict[str, Any] = {}
    for spec in specs or []:
        pipe, ingest = pipeline_or_factory(import_object(spec, "pipeline"))
        out[spec] = run_pipeline(pipe, next(iter(tasks.values())), ingest=ingest, name=spec,
                                 show_progress=False if quiet else None)
    return out


def _sources(args: argparse.Namespace) -> tuple[Any, Any]:
    from pathlib import Path

    if args.dataset == "irpf":
        # local: keeps `ragcov --help` from importing datasets (the cited-questions loader)
        from ragcov_data.loaders.cited_questions import IRPF_FILES, irpf_dir

        given = [opt for opt, v in (("--data-files", args.data_files), ("--questions", args.questions)) if v]
        if given:  # never run on the shared acts while the user named others
            raise RagcovError(f"--dataset irpf reads its own {IRPF_FILES['acts']} and {IRPF_FILES['questions']} from "
                              f"--data-dir, so {' and '.join(given)} would be ignored; for your own acts and "
                              "questions use --dataset cited_questions --data-files ACTS --questions FILE.")

        folder = irpf_dir(args.data_dir)
        return folder / IRPF_FILES["acts"], folder / IRPF_FILES["questions"]
    if args.dataset == "lgpd":
        from ragcov_data.loaders.lgpd import lgpd_sources

        return lgpd_sources(args.data_dir, args.data_files, args.questions)
    if not args.data_files or not args.questions:
        raise RagcovError("--dataset cited_questions needs the acts (--data-files) and --questions FILE.")
    return [Path(f) for f in args.data_files], Path(args.questions)


def run_cited(args: argparse.Namespace, retrievers: list[str]) -> int:
    """Build every chunking, run every retriever, print the family-wise table; write JSON if asked."""
    import copy

    # local: keeps `ragcov --help` from importing datasets and scipy.stats (the studies)
    from ragcov_data.jobs.studies import cited_study, cited_tasks

    if args.json_out:
        check_writable(args.json_out)
    metrics = _split(args.metrics)
    if getattr(args, "metric", "hit@1") != "hit@1":  # the acervo branch's --metric, given here: honoured
        if args.metrics != "recall@10,ndcg@10":
            raise RagcovError("give the metrics once: --metrics (a comma list) or --metric, not both.")
        metrics = _split(args.metric)
    budgets = _budgets(getattr(args, "budgets", None) or ",".join(map(str, DEFAULT_BUDGETS)))
    acts, questions = _sources(args)
    chunkings = _chunkings(args.chunking, getattr(args, "chunker", None))
    for _, kw in chunkings:
        if kw.get("chunking") == "dispositivo" and args.min_words is not None:
            kw["min_words"] = args.min_words
        if kw.get("chunking") == "dispositivo" and kw.get("max_words") is None and args.max_words is not None:
            kw["max_words"] = args.max_words
    build = None
    if args.dataset == "lgpd":  # unit tables and exam questions (local: keeps `ragcov --help` light)
        from ragcov_data.loaders.lgpd import build_lgpd_task as build
    tasks = cited_tasks(acts, questions, chunkings, dataset=args.dataset, build=build,
                        query_words=args.query_words or 20,
                        granularity=args.granularity,
                        note=lambda _, m: print(f"ragcov chunking: {m}", file=sys.stderr))  # unresolved citations

    def factory(name: str):
        def make():
            a = copy.copy(args)
            a.retriever = name
            return make_retriever(a)
        return make

    res = cited_study(tasks, {r: factory(r) for r in retrievers}, metrics=metrics, budgets=budgets,
                      granularity=args.granularity, where=args.where, cluster=args.cluster,
                      level=args.level, n_resamples=args.n_resamples, seed=args.seed,
                      passages={**_passage_files(getattr(args, "passages", None)),
                                **_pipeline_runs(getattr(args, "pipeline", None), tasks, args.quiet)},
                      on_missing=getattr(args, "on_missing", None) or "error")
    print(res.summary())
    if args.json_out:
        res.to_json(args.json_out)
        print(f"wrote {args.json_out}")
    return 0
