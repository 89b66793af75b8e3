"""Fixtures for checkpoint tests: a project folder and stores under the test's own state dir."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.folders import OpenStore

from pitui.checkpoint.settings import CheckpointSettings
from pitui.checkpoint.store import CheckpointStore


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def state_root(tmp_path: Path) -> Path:
    return tmp_path / "state" / "checkpoints"


@pytest.fixture
def open_store(project: Path, state_root: Path) -> OpenStore:
    def open_(folder: Path | None = None, **settings: Any) -> CheckpointStore:
        return CheckpointStore.open(folder or project, CheckpointSettings(**settings), state_root)

    return open_
