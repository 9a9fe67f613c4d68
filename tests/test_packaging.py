"""The wheel installs ragcov_data with its three mapped subpackages and the dataset card."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _build_requires() -> list[str]:
    """``build-system.requires`` of the project's pyproject.toml."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    with open(REPO / "pyproject.toml", "rb") as fh:
        return list(tomllib.load(fh)["build-system"]["requires"])


def _backend_is_new_enough() -> bool:
    """Whether this environment's setuptools satisfies the project's ``build-system.requires``."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement

    for line in _build_requires():
        req = Requirement(line)
        try:
            if version(req.name) not in req.specifier:
                return False
        except PackageNotFoundError:
            return False
    return True


def test_build_system_asks_for_a_setuptools_that_reads_the_license():
    """The SPDX ``license`` string needs setuptools 77 (PEP 639): an older one refuses the pyproject.toml, so
    the build-system must not let it be used."""
    from packaging.requirements import Requirement

    req = next(Requirement(r) for r in _build_requires() if Requirement(r).name == "setuptools")
    assert "76.9" not in req.specifier and "77.0" in req.specifier


def test_wheel_imports_subpackages_outside_the_repo(tmp_path):
    # build from a clean copy of the sources, so stale build/ folders can neither help nor leak
    src = tmp_path / "src"
    anywhere = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", ".venv", "__pycache__", ".pytest_cache",
                                      ".hypothesis")

    def ignore(folder: str, names: list[str]) -> set[str]:  # outputs of the commands only at the top level:
        top = {"out", "runs", "reports"} if Path(folder) == REPO else set()  # ragcov_data/runs/ is the package
        return set(anywhere(folder, names)) | (top & set(names))

    shutil.copytree(REPO, src, symlinks=True, ignore=ignore)
    wheel_dir = tmp_path / "wheel"
    # the project's build backend at the version its build-system asks for: the environment's own setuptools
    # where it is new enough, else pip's isolated build (which installs what build-system.requires names); an
    # old setuptools bundled with the venv then cannot fail the build
    isolation = [] if _backend_is_new_enough() else ["--use-pep517"]
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *isolation,
                          *([] if isolation else ["--no-build-isolation"]), "-w", str(wheel_dir), str(src)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    wheel = next(wheel_dir.glob("ragcov_data-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for expected in ("ragcov_data/loaders/self_retrieval.py", "ragcov_data/baselines/base.py", "ragcov_data/runs/_read.py",
                     "ragcov_data/eval/__init__.py", "ragcov_data/eval/outcomes/metrics/__init__.py",
                     "ragcov_data/dataset_card.md"):
        assert expected in names, expected
    card = zipfile.ZipFile(wheel).read("ragcov_data/dataset_card.md").decode("utf-8")
    assert card == (REPO / "dataset_card.md").read_text(encoding="utf-8")  # content, not a dangling link

    target = tmp_path / "site"
    res = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                          str(wheel)], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    code = (
        "import json, ragcov_data, ragcov_data.loaders, ragcov_data.baselines, ragcov_data.eval\n"
        "from ragcov_data.tasks.publish import packaged_card\n"
        "print(json.dumps({'files': [m.__file__ for m in (ragcov_data, ragcov_data.loaders,"
        " ragcov_data.baselines, ragcov_data.eval)], 'card': packaged_card()[:3]}))\n"
    )
    # -I ignores PYTHONPATH, so put the install dir and the venv's site-packages (dependencies) on sys.path
    # explicitly; the repository is not on the path and the working directory is elsewhere.
    site = sysconfig.get_paths()["purelib"]
    boot = f"import sys; sys.path[:0] = [{str(target)!r}, {site!r}]\n"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, "-I", "-c", boot + code], capture_output=True, text=True, cwd=tmp_path,
                         env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout)
    for f in got["files"]:
        assert Path(f).resolve().is_relative_to(target.resolve()), f
    assert got["card"] == "---"


def test_publish_is_callable_whichever_import_came_first():
    """The function ``ragcov_data.publish`` and its module ``ragcov_data.tasks.publish`` have different paths, so
    importing the module first never shadows the function (checked in a fresh interpreter, where the order is
    known)."""
    import subprocess
    import sys

    code = ("import ragcov_data.tasks.publish, ragcov_data\n"
            "from ragcov_data.tasks.publish import publish as f\n"
            "assert ragcov_data.publish is f, type(ragcov_data.publish)\n"
            "try:\n"
            "    ragcov_data.publish()\n"
            "except TypeError as e:\n"
            "    assert 'publish()' in str(e), e\n"
            "else:\n"
            "    raise AssertionError('publish() without arguments must fail like the function')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
