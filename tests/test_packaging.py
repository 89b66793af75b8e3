"""What `pip install .` installs: the wheel holds the whole package with its data files and
honest metadata, building it leaves the source tree clean, and Python 3.10 is refused."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(300)


def pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    before = sorted(p.name for p in ROOT.iterdir())
    built = pip(
        "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(out), str(ROOT)
    )
    assert built.returncode == 0, built.stderr
    # hatchling builds elsewhere: no build/, dist/ or *.egg-info appear in the source tree.
    assert sorted(p.name for p in ROOT.iterdir()) == before
    [path] = out.glob("pitui-*.whl")
    return path


def package_files() -> set[str]:
    """Every file of the package as it is in the tree (what the wheel must hold)."""
    return {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "pitui").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(".pyc")
    }


def test_the_wheel_holds_every_package_file_and_its_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    files = package_files()
    assert files <= names, sorted(files - names)
    for data in (
        "pitui/py.typed",
        "pitui/ui/app.tcss",
        "pitui/export/assets/page.js",
        "pitui/export/assets/page.css",
        "pitui/llm/own_models.json",
    ):
        assert data in names
    assert {n for n in names if not n.startswith("pitui-")} == files  # nothing else
    assert "pitui-0.1.0.dist-info/licenses/LICENSE" in names


def test_the_metadata_says_what_is_true(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    meta = Parser().parsestr(archive.read("pitui-0.1.0.dist-info/METADATA").decode())
    assert meta["License-Expression"] == "MIT"
    assert meta["Requires-Python"] == ">=3.11"
    assert meta["Author"] == "pitui contributors"
    classifiers = meta.get_all("Classifier") or []
    versions = [
        c.rsplit(" :: ", 1)[1] for c in classifiers if c.count("::") == 2 and "Python :: 3." in c
    ]
    assert versions == ["3.11", "3.12", "3.13"]
    license_text = archive.read("pitui-0.1.0.dist-info/licenses/LICENSE").decode()
    assert license_text.startswith("MIT License") and "pitui contributors" in license_text
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    required = meta.get_all("Requires-Dist") or []
    for dep in declared:  # every runtime dependency has a floor (.ci/floors installs it)
        assert ">=" in dep or "==" in dep, dep
        assert dep.replace(" ", "") in [r.replace(" ", "") for r in required]
    entry_points = archive.read("pitui-0.1.0.dist-info/entry_points.txt").decode()
    assert "pitui = pitui.cli:main" in entry_points


def test_python_3_10_is_refused_with_pips_own_sentence(wheel: Path, tmp_path: Path) -> None:
    asked = pip(
        "download",
        "pitui",
        "--no-deps",
        "--no-index",
        "--find-links",
        str(wheel.parent),
        "--only-binary=:all:",
        "--python-version",
        "3.10",
        "-d",
        str(tmp_path),
    )
    assert asked.returncode != 0
    assert "ERROR: Package 'pitui' requires a different Python: 3.10.0 not in '>=3.11'" in (
        asked.stderr
    )
    for version in ("3.11", "3.13"):
        fine = pip(
            "download",
            "pitui",
            "--no-deps",
            "--no-index",
            "--find-links",
            str(wheel.parent),
            "--only-binary=:all:",
            "--python-version",
            version,
            "-d",
            str(tmp_path / version),
        )
        assert fine.returncode == 0, fine.stderr
