"""The hostile corpus in the TUI: every file that opens shows the chat and the tree without an
exception, in bounded time, and nothing is written to it unless the user appends."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from corpus import CASES, write_corpus

from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.screens.tree_browser import TreeBrowserScreen

REFUSED = {"no_header", "garbage", "binary", "whitespace_only", "header_missing_id"}
SLOW = {"huge_single_line", "deep_chain_100k", "siblings_10k", "deeply_nested_json"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_corpus(tmp_path_factory.mktemp("corpus-tui"))


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", sorted(set(CASES) - REFUSED))
async def test_tui_opens_every_loadable_file(
    name: str, corpus: dict[str, Path], tmp_path: Path
) -> None:
    path = tmp_path / f"{name}.jsonl"
    shutil.copy(corpus[name], path)
    before = path.read_bytes()
    started = time.monotonic()
    store = SessionStore.open(path)
    app = PituiApp(store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), cwd=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+t")
        for _ in range(100):
            await pilot.pause(0.05)
            if isinstance(app.screen, TreeBrowserScreen):
                break
        assert isinstance(app.screen, TreeBrowserScreen)
        await pilot.press("down", "up", "end", "home")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
    limit = 120 if name in SLOW else 30
    assert time.monotonic() - started < limit
    # Closing without moving the leaf writes nothing (no marker, no repair).
    assert path.read_bytes() == before
