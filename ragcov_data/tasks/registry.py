"""Registry of benchmark builders, by name.

Each entry maps a public dataset name to the import path of its ``datasets.GeneratorBasedBuilder``
subclass (imported lazily, so listing names costs nothing). ``load_dataset`` and the ``ir_datasets``
bridge both read this table, so a benchmark is added in one place.
"""
from __future__ import annotations

import importlib

from ragcov_data.errors import RagcovError

_BUILDERS: dict[str, str] = {
    "aneel_taesa": "ragcov_data.loaders.self_retrieval:SelfRetrievalBuilder",
    "juristcu": "ragcov_data.loaders.juristcu:JurisTCUBuilder",
    # cited questions: any questions whose gold is citations, the shared IRPF set and the LGPD exam questions
    "cited_questions": "ragcov_data.loaders.cited_questions:CitedQuestionsBuilder",
    "irpf": "ragcov_data.loaders.cited_questions:IRPFBuilder",
    "lgpd": "ragcov_data.loaders.lgpd:LGPDBuilder",
}


def list_datasets() -> list[str]:
    """Names accepted by :func:`ragcov_data.load_dataset`."""
    return sorted(_BUILDERS)


def register(name: str, target: str) -> None:
    """Register ``target`` (``"module:Class"``) under ``name``; duplicate names are refused."""
    if name in _BUILDERS:
        raise RagcovError(f"dataset {name!r} is already registered (to {_BUILDERS[name]!r}); pick another name.")
    if ":" not in target:
        raise RagcovError(f"`target` must look like 'package.module:Class'; got {target!r}.")
    _BUILDERS[name] = target


def builder_class(name: str) -> type:
    """Import and return the builder class registered under ``name``."""
    if name not in _BUILDERS:
        import difflib

        close = difflib.get_close_matches(name, _BUILDERS, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise RagcovError(f"unknown dataset {name!r}; known: {list_datasets()}.{hint}")
    module, cls = _BUILDERS[name].split(":")
    return getattr(importlib.import_module(module), cls)
