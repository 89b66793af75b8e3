"""The fast lane guards itself: a test that starts a process without the ``slow`` mark fails,
naming itself and the process; a marked one passes, and ``-m "not slow"`` leaves it out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

INNER_TESTS = """
import asyncio
import subprocess

import pytest


@pytest.fixture
def a_child():
    subprocess.run(["true"], check=True)


def test_in_process():
    assert sum([1, 2]) == 3


def test_runs_a_command():
    subprocess.run(["true"], check=True)


def test_awaits_a_command():
    async def main():
        process = await asyncio.create_subprocess_exec("true")
        await process.wait()

    asyncio.run(main())


def test_fixture_starts_a_child(a_child):
    pass


@pytest.mark.slow
def test_marked_runs_a_command():
    subprocess.run(["true"], check=True)
"""

INNER_CONFTEST = """
from support.slow_lane import (  # noqa: F401
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_runtest_call,
    pytest_runtest_protocol,
    pytest_runtest_setup,
    pytest_runtest_teardown,
)
"""


def run_inner(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (folder / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: starts a process\n")
    (folder / "conftest.py").write_text(INNER_CONFTEST)
    (folder / "test_inner.py").write_text(INNER_TESTS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = str(TESTS)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_an_unmarked_test_that_starts_a_process_fails_naming_itself(tmp_path: Path) -> None:
    result = run_inner(tmp_path, "-q", "-rfE")
    out = result.stdout
    assert result.returncode == 1, out
    assert "2 failed, 2 passed, 1 error" in out, out
    for name in ("test_runs_a_command", "test_awaits_a_command"):
        assert f"FAILED test_inner.py::{name}" in out
        assert f"test_inner.py::{name} started 1 process(es) but is not marked slow" in out
    # A fixture's process is the test's too: it fails in its setup.
    assert "ERROR test_inner.py::test_fixture_starts_a_child" in out
    assert "subprocess.Popen: true" in out
    for name in ("test_in_process", "test_marked_runs_a_command"):
        assert name not in out


@pytest.mark.slow
def test_the_fast_lane_leaves_the_marked_tests_out(tmp_path: Path) -> None:
    result = run_inner(tmp_path, "-q", "-m", "not slow", "-k", "in_process or marked")
    assert result.returncode == 0, result.stdout
    assert "1 passed, 4 deselected" in result.stdout
