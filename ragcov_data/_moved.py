"""Old module paths keep working after the stage-folder layout: ``import ragcov_data.eval.leaderboard`` gives the
very module object now at ``ragcov_data.eval.comparisons.leaderboard`` (so attributes, monkeypatching and pickles
agree), through a meta-path finder installed when :mod:`ragcov_data` is imported."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType

#: Module path before the stage layout -> where the module lives now.
MOVED = {
    "ragcov_data.acervo": "ragcov_data.legal.acervo",
    "ragcov_data.citations": "ragcov_data.legal.citations",
    "ragcov_data.eval._bounds": "ragcov_data.eval.estimates._bounds",
    "ragcov_data.eval._core": "ragcov_data.eval.estimates._core",
    "ragcov_data.eval._editions": "ragcov_data.eval.misses._editions",
    "ragcov_data.eval._family": "ragcov_data.eval.comparisons._family",
    "ragcov_data.eval._leaderboard_render": "ragcov_data.eval.comparisons.leaderboard_render",
    "ragcov_data.eval.comparisons._leaderboard_render": "ragcov_data.eval.comparisons.leaderboard_render",
    "ragcov_data.eval.comparisons._leaderboard_latex": "ragcov_data.eval.comparisons.leaderboard_latex",
    "ragcov_data.eval._ngrams": "ragcov_data.eval.misses._ngrams",
    "ragcov_data.eval._nullfamily": "ragcov_data.eval.comparisons._nullfamily",
    "ragcov_data.eval._wild": "ragcov_data.eval.estimates._wild",
    "ragcov_data.eval.chunkings": "ragcov_data.eval.comparisons.chunkings",
    "ragcov_data.eval.cited": "ragcov_data.eval.comparisons.cited",
    "ragcov_data.eval.compare": "ragcov_data.eval.comparisons.compare",
    "ragcov_data.eval.coverage": "ragcov_data.eval.planning.coverage",
    "ragcov_data.eval.design": "ragcov_data.eval.estimates.design",
    "ragcov_data.eval.evaluator": "ragcov_data.eval.estimates.evaluator",
    "ragcov_data.eval.juristcu": "ragcov_data.reporting.juristcu",  # the JurisTCU report section
    "ragcov_data.eval.interval": "ragcov_data.eval.estimates.interval",
    "ragcov_data.eval.leaderboard": "ragcov_data.eval.comparisons.leaderboard",
    "ragcov_data.eval.metrics": "ragcov_data.eval.outcomes.metrics",
    "ragcov_data.eval.metrics._expected": "ragcov_data.eval.outcomes.metrics._expected",
    "ragcov_data.eval.metrics._lists": "ragcov_data.eval.outcomes.metrics._lists",
    "ragcov_data.eval.metrics.hit": "ragcov_data.eval.outcomes.metrics.hit",
    "ragcov_data.eval.metrics.mrr": "ragcov_data.eval.outcomes.metrics.mrr",
    "ragcov_data.eval.metrics.ndcg": "ragcov_data.eval.outcomes.metrics.ndcg",
    "ragcov_data.eval.metrics.precision": "ragcov_data.eval.outcomes.metrics.precision",
    "ragcov_data.eval.metrics.recall": "ragcov_data.eval.outcomes.metrics.recall",
    "ragcov_data.eval.planner": "ragcov_data.eval.planning.planner",
    "ragcov_data.eval.pool": "ragcov_data.eval.comparisons.pool",
    "ragcov_data.eval.power": "ragcov_data.eval.planning.power",
    "ragcov_data.eval.results": "ragcov_data.eval.estimates.results",
    "ragcov_data.eval.twin": "ragcov_data.eval.planning.twin",
    "ragcov_data.eval.verify": "ragcov_data.eval.estimates.verify",
    "ragcov_data.eval.verify_family": "ragcov_data.eval.comparisons.verify_family",
    "ragcov_data.vigencia": "ragcov_data.legal.vigencia",
    # run reading became one package (ragcov_data/runs/)
    "ragcov_data._runs_normal": "ragcov_data.runs._normal",
    "ragcov_data._runs_read": "ragcov_data.runs._read",
    "ragcov_data._runs_stream": "ragcov_data.runs._stream",
    "ragcov_data.run_fingerprint": "ragcov_data.runs.fingerprint",
}


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module path and hands back the module at its new path."""

    def find_spec(self, name: str, path=None, target=None):  # noqa: ANN001
        if name in MOVED:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec) -> ModuleType:  # noqa: ANN001
        module = importlib.import_module(MOVED[spec.name])
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._spec  # importlib stamped the old name's spec on it; the module keeps its own


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())  # before the path finder: a stale folder never shadows an alias
