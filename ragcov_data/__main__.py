"""``python -m ragcov_data`` runs the ``ragcov`` CLI."""
import sys

from ragcov_data.cli import main

sys.exit(main())
