"""/export with options, /session statistics, and "compare with…" from the tree browser."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest
from conftest import make_app
from support.screens import SIZE, command, messages_shown, screen_up, wait_for
from textual.widgets import Input, OptionList, Static

from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.export_command import ExportUsageError, parse_export_args
from pitui.ui.screens.context_compare import (
    CompareTargetScreen,
    ContextDiffScreen,
    compare_candidates,
)
from pitui.ui.screens.session_stats import SessionStatsScreen
from pitui.ui.screens.tree_browser import TreeBrowserScreen

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.sample_session import write_sample_session


@pytest.fixture
def app(tmp_path: Path) -> PituiApp:
    store = SessionStore.open(write_sample_session(tmp_path / "sessions" / "sample.jsonl"))
    return make_app(store, model=None, cwd=tmp_path)


def test_parse_export_args() -> None:
    request = parse_export_args("md --leaf e00000 'my file.md'")
    assert (request.fmt, request.leaf, request.path) == ("md", "e00000", "my file.md")
    assert parse_export_args("out.jsonl").fmt == "jsonl"
    assert parse_export_args("--branch-only").branch_only
    assert parse_export_args("").fmt == "html"
    for bad in ("--nope", "a b", "--leaf", "'open"):
        with pytest.raises(ExportUsageError):
            parse_export_args(bad)


async def test_export_with_options_runs_off_the_event_loop(app: PituiApp, tmp_path: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, "/export md --leaf e0000017 branch.md")
        target = tmp_path / "branch.md"
        await wait_for(pilot, target.exists)
        text = target.read_text()
        assert "Could it print JSON" in text and "Add a --top option" not in text
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        assert app.store.leaf_id == "e0000029"  # the live leaf did not move
        await command(pilot, "/export html --branch-only")
        await wait_for(pilot, (tmp_path / "sample.html").exists)
        await command(pilot, "/export --bogus")
        await wait_for(pilot, lambda: any("--bogus" in m for m in messages_shown(app)))
        messages = messages_shown(app)
        assert any("Unknown option --bogus" in m for m in messages)
        assert any(m.startswith("Exported md to") for m in messages)


async def test_session_statistics_screen(app: PituiApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, "/session")
        await wait_for(pilot, lambda: screen_up(app, SessionStatsScreen))
        text = app.screen.query_one("#stats-text", Static)
        await wait_for(pilot, lambda: "branches 3" in str(text.render()))
        shown = str(text.render())
        assert "usage, whole tree: 33,100 tokens" in shown and "$0.0957" in shown
        assert "• e0000029" in shown and "M wordfreq.py" in shown
        await pilot.press("escape")
        assert not isinstance(app.screen, SessionStatsScreen)


def test_compare_candidates(tmp_path: Path) -> None:
    with SessionStore.open(write_sample_session(tmp_path / "s.jsonl"), read_only=True) as store:
        ids = [entry_id for entry_id, _ in compare_candidates(store, "e0000013")]
    assert ids[0] == "e0000029"  # the leaf first, then the requests before the node
    assert ids[1:4] == ["e0000011", "e0000009", "e0000007"]
    assert "e0000023" in ids and "e0000017" in ids and "e0000005" in ids  # compaction, tips


async def test_compare_with_from_the_tree_browser(app: PituiApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(TreeBrowserScreen(initial_tab="context"))
        await wait_for(pilot, lambda: screen_up(app, TreeBrowserScreen))
        browser = app.screen
        assert isinstance(browser, TreeBrowserScreen)
        await wait_for(pilot, lambda: browser.session_tree.cursor_entry_id == "e0000029")
        await pilot.press("d")
        await wait_for(pilot, lambda: screen_up(app, CompareTargetScreen))
        app.screen.query_one(Input).value = "e0000013"
        await pilot.pause(0.1)
        assert app.screen.query_one(OptionList).option_count == 1  # an earlier request
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_up(app, ContextDiffScreen))
        text = str(app.screen.query_one("#diff-text", Static).render())
        assert text.startswith("context at e0000029 → at e0000013")
        assert "system prompt changed" in text and "tools +read" in text
        await pilot.press("s")
        swapped = str(app.screen.query_one("#diff-text", Static).render())
        assert swapped.startswith("context at e0000013 → at e0000029")
        assert "replaced by compaction e0000023" in swapped
        await pilot.press("escape")
        assert app.screen is browser
