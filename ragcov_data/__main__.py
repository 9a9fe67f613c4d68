"""``python -m ragcov_data`` runs the ``ragcov`` CLI."""
from ragcov_data.cli import run

run()
