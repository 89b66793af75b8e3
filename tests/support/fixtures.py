"""Where the suite's session fixtures live: ``tests/fixtures/`` inside the repo.

Every test that needs a pi-written session or one of pi 1.6's expected answers goes through
this module, so the suite reads nothing outside the repo. A missing file is an error, never a
skip: a clone without its fixtures must fail loudly.
"""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURES_DIR = Path(__file__).resolve().parents[1] / "fixtures"
EXPECTED_DIR = FIXTURES_DIR / "expected"


def fixture_path(name: str) -> Path:
    """The path of fixture ``name`` (e.g. ``"pi-v3-branches.jsonl"``); raises if it is missing."""
    path = FIXTURES_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"session fixture {path} is missing (see tests/fixtures/README.md)")
    return path


def expected_files(pattern: str) -> list[Path]:
    """pi 1.6's answers matching ``pattern`` in ``expected/``, sorted; raises if there are none.

    Used to build parameter lists at collection time, where an empty list would silently turn
    the tests into one skip.
    """
    files = sorted(EXPECTED_DIR.glob(pattern))
    if not files:
        raise FileNotFoundError(f"no expected files matching {pattern!r} in {EXPECTED_DIR}")
    return files


def copy_fixture(name: str, folder: Path) -> Path:
    """A private copy of fixture ``name`` in ``folder`` (for tests that append or lock)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    shutil.copy(fixture_path(name), target)
    return target
