"""Fixtures for the tool tests: a working folder and a ToolContext rooted in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pitui.agent.tools import ToolContext


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(cwd=work, output_dir=tmp_path / "outputs")
