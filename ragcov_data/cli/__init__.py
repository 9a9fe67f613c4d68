"""The ``ragcov`` command line: one verb a module.

Each verb module in this package defines ``add_parser(subparsers)`` (registering its sub-command with
``set_defaults(func=run)``) and ``run(args) -> int``. Errors from ragcov become one clear line on stderr
and a non-zero exit.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from ragcov_data.errors import RagcovError

#: Verb modules, in the order ``ragcov --help`` lists them.
VERBS = ["build", "publish", "run", "eval", "compare", "coverage", "plan", "report", "benchmark"]


def build_parser() -> argparse.ArgumentParser:
    """Assemble the top-level parser from every verb module."""
    from ragcov_data import __version__

    parser = argparse.ArgumentParser(
        prog="ragcov",
        description="Honest, document-clustered evaluation of retrieval over regulatory and legal text.",
    )
    parser.add_argument("--version", action="version", version=f"ragcov {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    for verb in VERBS:
        importlib.import_module(f"ragcov_data.cli.{verb}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ragcov`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (RagcovError, FileNotFoundError) as exc:
        print(f"ragcov {args.verb}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
