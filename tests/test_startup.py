"""Start-up cost: ``import ragcov_data`` and ``ragcov --help`` load none of the heavy libraries.

The package loads its public functions lazily, and the few imports of its own modules that stay inside functions
(``benchmarks/local_imports.py`` lists them, each with its reason) are there for this. Checked in a fresh
interpreter, where nothing else has imported them.
"""
from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("datasets", "torch", "matplotlib", "scipy.stats", "sentence_transformers", "ir_datasets", "ray")

_PROBE = """
import json, runpy, sys
if sys.argv[1] == "help":
    sys.argv = ["ragcov", "--help"]
    try:
        runpy.run_module("ragcov_data", run_name="__main__")
    except SystemExit:
        pass
else:
    import ragcov_data
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


def _loaded(what: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", _PROBE.format(heavy=HEAVY), what], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stderr.strip().splitlines()[-1])


def test_import_ragcov_data_loads_no_heavy_library():
    assert _loaded("import") == []


def test_ragcov_help_loads_no_heavy_library():
    assert _loaded("help") == []
