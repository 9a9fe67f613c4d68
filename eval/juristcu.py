"""Kept so ``from ragcov_data.eval.juristcu import juristcu_section`` works as documented: the JurisTCU
report section lives in :mod:`ragcov_data.reporting.juristcu`."""
from ragcov_data.reporting.juristcu import DEFAULT_METRICS, GROUP_ORDER, SUBSET_NOTE, juristcu_section  # noqa: F401

__all__ = ["juristcu_section", "SUBSET_NOTE", "GROUP_ORDER", "DEFAULT_METRICS"]
