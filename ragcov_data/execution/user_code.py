"""A team's pipeline named on the command line (``--pipeline my_rag:build``): imported, told apart from a
factory, and every way its import can go wrong said by its real cause.

``module:attr`` is imported with the current folder first on ``sys.path`` (as uvicorn and gunicorn do), so
``./my_rag.py`` is ``my_rag``. What can go wrong, and what is said:

- the module is not found: where to run from, or ``PYTHONPATH``;
- the module's own code fails (an import of a package not installed, a ``KeyError``, a syntax error): the
  exception, in the module's file at its line, not advice about finding the module;
- the module calls ``sys.exit()`` (a script run on import): the module and the line, and the
  ``if __name__ == "__main__":`` guard;
- a file of the current folder shadows the standard library (``./queue.py`` read by ``import queue``, or a
  pipeline module named like a standard module, which Python imports instead): that file's path.

A function is a **factory** exactly when its first parameter is named ``documents``: it is called once with the
task's documents and returns the pipeline. Any other callable is the pipeline, called with each question
(:data:`FACTORY_RULE`, said in every error where a factory may have been mistaken for a pipeline).
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from ragcov_data.errors import RagcovError

__all__ = ["import_object", "pipeline_or_factory", "factory_hint", "FACTORY_RULE"]

#: How a factory is recognised, as every message and the docs say it.
FACTORY_RULE = ("a function is taken as a factory (called once with the task's documents, returning the pipeline) "
                "only when its first parameter is named `documents`; any other callable is the pipeline, called "
                "with each question")
#: First-parameter names of a pipeline called with a question (no factory hint for these).
_QUESTION_NAMES = {"question", "questions", "q", "query", "queries", "text", "prompt", "input", "inputs", "query_str",
                   "question_text", "query_text", "self", "s", "x", "string", "msg", "message"}


def pipeline_or_factory(obj: Any) -> tuple[Any, Callable[[pd.DataFrame], Any] | None]:
    """``(pipeline, ingest)`` of an object named on the command line: a function whose first parameter is named
    ``documents`` is a factory (called with the task's documents, it returns the pipeline), anything else the
    pipeline itself (:data:`FACTORY_RULE`)."""
    if callable(obj) and not hasattr(obj, "invoke") and not hasattr(obj, "retrieve"):
        if _first_parameter(obj) == "documents":
            return None, obj
    return obj, None


def _first_parameter(obj: Any) -> str | None:
    try:
        params = list(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return None
    return params[0] if params else None


def factory_hint(pipeline: Any) -> str:
    """A sentence for the errors of a pipeline that may be a factory taken for a pipeline (``build(docs)``: its
    first parameter is not named ``documents``, so it was called with each question); empty otherwise."""
    if not callable(pipeline) or hasattr(pipeline, "invoke") or hasattr(pipeline, "retrieve"):
        return ""
    first = _first_parameter(pipeline)
    if first is None or first == "documents" or first.lower() in _QUESTION_NAMES:
        return ""
    name = getattr(pipeline, "__name__", type(pipeline).__name__)
    return (f" Note: {FACTORY_RULE}; `{name}({first})` was called with each question: if it builds the pipeline, "
            "name its first parameter `documents`.")


def _shadows(folder: Path) -> list[tuple[str, str]]:
    """Standard-library modules imported from files of ``folder`` (``./queue.py`` read as ``queue``)."""
    names = getattr(sys, "stdlib_module_names", ())
    out = []
    for name in sorted(names):
        file = getattr(sys.modules.get(name), "__file__", None)
        if file and Path(file).resolve().is_relative_to(folder):
            out.append((name, file))
    return out


def _shadow_message(what: str, spec: str, shadows: list[tuple[str, str]]) -> str:
    name, file = shadows[0]
    return (f"--{what} {spec}: {file} is imported in place of the standard library's module {name!r} (the current "
            "folder comes first on sys.path when ragcov imports your pipeline), so code that imports "
            f"{name!r} gets your file; rename it (e.g. my_{name}.py).")


def _where(exc: BaseException, module_file: str | None) -> str:
    """``file, line N: code`` of the module's own line the exception passed through (else where it was raised)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}, line {exc.lineno}: {(exc.text or '').strip()}"
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if module_file and os.path.abspath(f.filename) == os.path.abspath(module_file)]
    frame = own[-1] if own else (frames[-1] if frames else None)
    return f"{frame.filename}, line {frame.lineno}: {(frame.line or '').strip()}" if frame else "its import"


def _module_file(module: str) -> str | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin not in (None, "built-in", "frozen") else None


def _import(module: str, spec: str, what: str, cwd: Path) -> Any:
    file = _module_file(module)
    try:
        return importlib.import_module(module)
    except SystemExit as exc:
        call = "sys.exit()" if exc.code is None else f"sys.exit({exc.code!r})"
        raise RagcovError(f"--{what} {spec}: importing module {module!r} called {call} at "
                          f"{_where(exc, file)}: a pipeline module is imported, not run as a script; put its script "
                          "part under `if __name__ == \"__main__\":`.") from None
    except Exception as exc:  # noqa: BLE001 - the module's own code failed: said with its file and line
        shadows = _shadows(cwd)
        if shadows:
            raise RagcovError(_shadow_message(what, spec, shadows) + f" (Importing {module!r} failed: "
                              f"{type(exc).__name__}: {exc}.)") from None
        missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
        if missing is not None and (module == missing or module.startswith(missing + ".")):
            raise RagcovError(f"--{what} {spec}: cannot import module {module!r} ({exc}); run from the folder holding "
                              f"{module.replace('.', '/')}.py or put it on PYTHONPATH.") from None
        fix = (f"install {missing!r} (pip install ...) or fix the import" if missing else "fix the module")
        raise RagcovError(f"--{what} {spec}: module {module!r} ({file or 'its file'}) failed in its own code while "
                          f"being imported: {type(exc).__name__}: {exc} (at {_where(exc, file)}); {fix}.") from None


def import_object(spec: str, what: str = "pipeline") -> Any:
    """The object ``module:attr`` names, imported with the current directory on ``sys.path`` (as uvicorn and
    gunicorn do), so a pipeline defined in ``./my_rag.py`` is ``my_rag:retriever``.

    Raises
    ------
    RagcovError
        By the real cause (see the module docstring): not found, the module's own error with its file and line,
        ``sys.exit()`` at import, a file shadowing the standard library, no such attribute.
    """
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise RagcovError(f"--{what} takes module:attr (e.g. my_rag:retriever, from ./my_rag.py); got {spec!r}.")
    module, attr = spec.split(":")
    cwd = Path(os.getcwd()).resolve()
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    obj = _import(module, spec, what, cwd)
    top = module.split(".")[0]
    own = next((cwd / n for n in (f"{top}.py", f"{top}/__init__.py") if (cwd / n).is_file()), None)
    got = getattr(obj, "__file__", None) if top == module else getattr(sys.modules.get(top), "__file__", None)
    if own is not None and (got is None or Path(got).resolve() != own.resolve()):
        raise RagcovError(f"--{what} {spec}: {own} is named like the module {top!r} that Python imports instead "
                          f"({got or 'built in'}); rename your file (e.g. my_{top}.py) and pass the new name.")
    shadows = _shadows(cwd)
    if shadows:
        raise RagcovError(_shadow_message(what, spec, shadows))
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = sorted(n for n, v in vars(obj).items() if callable(v) and not n.startswith("_")
                           and getattr(v, "__module__", None) == obj.__name__)[:8]
            listed = f" (it defines: {', '.join(names)})" if names and obj is sys.modules.get(module) else ""
            raise RagcovError(f"--{what} {spec}: module {module!r} has no {attr!r}{listed}.")
        obj = getattr(obj, part)
    return obj
