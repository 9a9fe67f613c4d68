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


def test_every_verb_has_complete_help(capsys):
    """Every verb's --help, in process (the entry point itself is run as a subprocess above: one start-up is
    enough to show it works; a start-up a verb cost 1 s of CPU each)."""
    import pytest

    from ragcov_data.cli import VERBS, main

    for verb in VERBS:
        with pytest.raises(SystemExit) as exit_:
            main([verb, "--help"])
        out = capsys.readouterr().out
        assert exit_.value.code == 0, verb
        assert f"usage: ragcov {verb}" in out and "options:" in out, verb
