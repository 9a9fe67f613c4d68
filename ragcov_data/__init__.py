"""ragcov: honest evaluation of retrieval over Brazilian-Portuguese regulatory and legal text.

Importing the package is cheap: the public functions below are loaded on first use (no ``datasets``,
``torch`` or ``ir_datasets`` import until needed).
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

from ragcov_data.errors import RagcovError  # noqa: E402
from ragcov_data.tasks.registry import list_datasets  # noqa: E402

#: Public name -> module that defines it (imported lazily).
_LAZY = {
    "load_dataset": "ragcov_data.tasks.load",
    "publish": "ragcov_data.tasks.publish",
    "register_ir_datasets": "ragcov_data.interop.irds",
    "build_task": "ragcov_data.loaders.build",
    "Task": "ragcov_data.tasks.record",
    "resolve_task": "ragcov_data.tasks.sources",
    "read_acervo": "ragcov_data.legal.acervo",
    "exclude_self": "ragcov_data.interop.outside",
    "task_documents": "ragcov_data.tasks.documents",
    "run_pipeline": "ragcov_data.execution.pipelines",
}

__all__ = ["__version__", "RagcovError", "list_datasets", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ragcov_data' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
