import subprocess
import sys

import ragcov_data


def test_version_and_registry():
    assert ragcov_data.__version__
    assert "aneel_taesa" in ragcov_data.list_datasets()


def test_cli_help_runs():
    out = subprocess.run([sys.executable, "-m", "ragcov_data", "--help"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "ragcov" in out.stdout


def test_every_verb_has_complete_help():
    from ragcov_data.cli import VERBS

    for verb in VERBS:
        out = subprocess.run([sys.executable, "-m", "ragcov_data", verb, "--help"], capture_output=True, text=True)
        assert out.returncode == 0, (verb, out.stderr)
        assert f"usage: ragcov {verb}" in out.stdout and "options:" in out.stdout, verb
