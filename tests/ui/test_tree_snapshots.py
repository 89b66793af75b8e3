"""Snapshots of the tree browser: three branches with the active path, a filter applied, and the
summary prompt. Deterministic: a fixed clock, a copied fixture, no cursor blink, and the details
pane's debounce waited for before the screenshot."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from support.screens import SIZE, screen_up, wait_for
from textual.pilot import Pilot

from pitui.ui.app import PituiApp
from pitui.ui.screens.summary_prompt import SummaryPrompt
from pitui.ui.screens.tree_browser import TreeBrowserScreen
from pitui.ui.widgets.inspectors import DetailsPane
from pitui.ui.widgets.session_tree import SessionTree

SnapCompare = Callable[..., bool]


def open_tree(
    *keys: str, screen: type = TreeBrowserScreen, details: bool = True
) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """``run_before``: Ctrl+T, then ``keys``; waits for the tree's workers and until the
    details show the cursor's entry (unless the pane is hidden)."""

    async def run(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: screen_up(app, TreeBrowserScreen))
        browser = app.screen
        tree = browser.query_one(SessionTree)
        pane = browser.query_one(DetailsPane)
        await wait_for(pilot, lambda: not tree.busy)
        if keys:
            await pilot.press(*keys)
        await wait_for(pilot, lambda: not tree.busy)
        if details:
            await wait_for(pilot, lambda: pane.entry_id == tree.cursor_entry_id)
        await wait_for(pilot, lambda: screen_up(app, screen))
        await pilot.pause()

    return run


def test_tree_browser_three_branches(
    snap_compare: SnapCompare, app_factory: Callable[..., PituiApp]
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    assert snap_compare(app, terminal_size=SIZE, run_before=open_tree())


def test_tree_browser_user_only_filter(
    snap_compare: SnapCompare, app_factory: Callable[..., PituiApp]
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    assert snap_compare(app, terminal_size=SIZE, run_before=open_tree("ctrl+u", "up", "up"))


def test_tree_browser_search_with_a_label(
    snap_compare: SnapCompare, app_factory: Callable[..., PituiApp]
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    app.store.append_label("cf32f812", "plan [B]")
    app.store.branch("a2d5fcdf")
    assert snap_compare(app, terminal_size=SIZE, run_before=open_tree("slash", *"lazy"))


def test_tree_browser_folded_segment(
    snap_compare: SnapCompare, app_factory: Callable[..., PituiApp]
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    assert snap_compare(app, terminal_size=SIZE, run_before=open_tree("left", "left", "down"))


def test_summary_prompt(snap_compare: SnapCompare, app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl")
    keys = ("end", "enter")
    assert snap_compare(app, terminal_size=SIZE, run_before=open_tree(*keys, screen=SummaryPrompt))


def test_tree_browser_at_80x24(
    snap_compare: SnapCompare, app_factory: Callable[..., PituiApp]
) -> None:
    """A narrow terminal: the details pane starts hidden, the footer starts with how to close,
    and the leaf marker of a long row stays whole at the right edge."""
    app = app_factory("pi-v3-branches.jsonl", model=None)
    app.store.append_message({"role": "user", "content": "a long prompt that does not fit " * 4})
    assert snap_compare(app, terminal_size=(80, 24), run_before=open_tree(details=False))


def test_tree_browser_at_80x24_with_details(
    snap_compare: SnapCompare, app_factory: Callable[..., PituiApp]
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    assert snap_compare(app, terminal_size=(80, 24), run_before=open_tree("i"))
