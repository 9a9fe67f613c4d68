"""Every docstring example in the package runs and prints what it shows (a doctest that drifts, e.g. a NumPy
scalar repr, is a wrong example a user copies)."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ragcov_data


def _modules() -> list[str]:
    """Every module of the package and of its three stages (installed from their own folders, so each is walked
    from its own path)."""
    names = set()
    for pkg in ("ragcov_data", "ragcov_data.loaders", "ragcov_data.baselines", "ragcov_data.eval"):
        mod = importlib.import_module(pkg)
        names.add(pkg)
        names.update(info.name for info in pkgutil.walk_packages(mod.__path__, pkg + "."))
    return sorted(n for n in names if not n.endswith("__main__"))


MODULES = _modules()


def test_walk_finds_the_stages():
    for stage in ("ragcov_data.loaders", "ragcov_data.baselines", "ragcov_data.eval"):
        assert any(m.startswith(stage + ".") for m in MODULES), stage


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} fail"
