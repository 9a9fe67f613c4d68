"""The ``ragcov`` command line: one verb a module.

Each verb module in this package defines ``add_parser(subparsers)`` (registering its sub-command with
``set_defaults(func=run)``) and ``run(args) -> int``. Every error ends in one line on stderr and a
non-zero exit, never a traceback: ragcov's own errors (bad input) and OS errors exit 2, an interrupt
exits 130, anything else is reported as a bug (exit 1) with how to see its traceback (``RAGCOV_DEBUG=1``).
A warning raised while a verb runs (the cited questions' unresolved citations, say) is one line on stderr,
``ragcov <verb>: <message>``, not Python's warning with its source line; the library keeps its warnings.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from typing import Any, Callable

from ragcov_data import __version__
from ragcov_data.execution import engine
from ragcov_data.cli._common import check_args_outputs
from ragcov_data.errors import RagcovError

#: Verb modules, in the order ``ragcov --help`` lists them.
VERBS = ["build", "publish", "run", "eval", "compare", "leaderboard", "misses", "chunking", "proxy", "coverage", "plan", "report", "benchmark"]

#: Set to 1 to let unexpected exceptions propagate with their traceback.
DEBUG_ENV = "RAGCOV_DEBUG"


def build_parser() -> argparse.ArgumentParser:
    """Assemble the top-level parser from every verb module."""
    parser = argparse.ArgumentParser(
        prog="ragcov",
        description="Honest, document-clustered evaluation of retrieval over regulatory and legal text.",
    )
    parser.add_argument("--version", action="version", version=f"ragcov {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    for verb in VERBS:
        importlib.import_module(f"ragcov_data.cli.{verb}").add_parser(sub)
        sub.choices[verb].add_argument(
            "--force", action="store_true",
            help="replace an existing output file or folder that ragcov did not write (an input of the command is "
                 "never replaced)")
    return parser


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _os_message(exc: OSError) -> str:
    """``<reason>: '<file>'`` for an OS error (the parts the user can act on, without errno noise)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    names = [n for n in (exc.filename, exc.filename2) if n]
    return f"{reason}: {' -> '.join(repr(str(n)) for n in names)}" if names else reason


def _notice(verb: str) -> Callable[..., None]:
    """A ``warnings.showwarning`` printing ``<verb>: <message>`` (a :class:`UserWarning`, ragcov's notices) or
    ``<verb>: <Category>: <message>`` (any other) as one line on stderr, without the source line.

    A notice that carries its own one-line summary (the cited questions' unresolved citations, raised once per
    chunking a command builds) is printed as that summary, once per command for the same counts."""
    seen: set = set()

    def show(message: Any, category: type, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        if hasattr(message, "summary") and hasattr(message, "key"):
            if message.key() in seen:
                return
            seen.add(message.key())
            print(f"{verb}: {message.summary()}", file=sys.stderr)
            return
        ours = category is UserWarning or category.__module__.startswith("ragcov_data")
        kind = "" if ours else f"{category.__name__}: "
        print(f"{verb}: {kind}{message}", file=sys.stderr)
    return show


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ragcov`` console script: run one verb, turn every failure into one line."""
    verb = "ragcov"
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        verb = f"ragcov {args.verb}"
        check_args_outputs(args)  # every verb: outputs that overwrite an input or each other, before any work
        with warnings.catch_warnings():  # restores Python's own display on the way out
            warnings.showwarning = _notice(verb)
            return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"{verb}: interrupted", file=sys.stderr)
        return 130
    except RagcovError as exc:
        print(f"{verb}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:
        if os.environ.get(DEBUG_ENV):
            raise
        print(f"{verb}: error: {_one_line(_os_message(exc))}; check the path and its permissions", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        if os.environ.get(DEBUG_ENV):
            raise
        print(f"{verb}: internal error: {type(exc).__name__}: {_one_line(exc)} — this is a bug in ragcov; rerun "
              f"with {DEBUG_ENV}=1 for the traceback and report it", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def run() -> None:
    """The ``ragcov`` command (and ``python -m ragcov_data``): :func:`main`, then exit with its status.

    After a failure the message is already printed; the process then leaves without the interpreter's
    teardown, in which native thread pools of the libraries imported on the way (Arrow, BLAS) can abort the
    process ("terminate called without an active exception", status -6) and turn a clean one-line error into
    a crash. A Ray cluster this process started is shut down first. Success exits normally.
    """
    code = main()
    if code:
        if "ray" in sys.modules:
            engine.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)

