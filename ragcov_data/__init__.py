"""ragcov: honest evaluation of retrieval over Brazilian-Portuguese regulatory and legal text."""
from __future__ import annotations

__version__ = "0.1.0"

from ragcov_data.errors import RagcovError  # noqa: E402
from ragcov_data.registry import list_datasets  # noqa: E402

__all__ = ["__version__", "RagcovError", "list_datasets"]
