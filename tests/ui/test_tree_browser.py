"""Pilot tests for the tree browser: opening it, the virtualized session tree (keys, clicks,
filters, search, folds, active path), navigation with and without a summary (scripted LLM),
labels and copying."""

from __future__ import annotations

import gc
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import pytest
from support.llm_server import ScriptedLLMServer, slow, text
from support.screens import SIZE, screen_up, wait_for
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input, OptionList
from textual.worker import get_current_worker

from pitui.session import SessionStore
from pitui.session.flatten import layout_tree
from pitui.session.tree_search import Matcher, matches_exactly
from pitui.ui.app import PituiApp
from pitui.ui.screens import main as main_screen
from pitui.ui.screens.main import MainScreen
from pitui.ui.screens.summary_prompt import LabelPrompt, SummaryPrompt
from pitui.ui.screens.tree_browser import TreeBrowserScreen
from pitui.ui.widgets import session_tree
from pitui.ui.widgets.chat import ChatView
from pitui.ui.widgets.markdown_view import MarkdownView
from pitui.ui.widgets.prompt import PromptEditor
from pitui.ui.widgets.session_tree import SessionTree

# pi-v3-branches.jsonl (default filter), top to bottom; the leaf is a2d5fcdf.
SYSTEM = "3a8d066a"
ROOT_USER = "20dd2ed5"  # user: Let's design the tree widget.
ASK = "bdd167a9"  # assistant: Sure. Do you want lazy loading?
LAZY = "373f5ca9"  # user: Yes, lazy loading, and show labels.
READING = "0766354c"  # assistant: Reading the current widget.
READ_RESULT = "633e9e00"  # [read: src/pitui/widgets/tree_view.py]
EAGER = "81bc147d"  # assistant: The widget builds all nodes eagerly.
GO = "b500ed4c"  # user: Go ahead.
DONE = "bd49a39b"  # assistant: Done: nodes now load on expand.
TIE2 = "2f3b95c3"  # user: tie sibling 2
LEAF = "a2d5fcdf"  # assistant: Answering tie sibling 2.
TIE1 = "93e5c88c"  # user: tie sibling 1
ALTERNATIVE = "9c792374"  # assistant: Alternative: virtualize the list instead.
LATER = "2eb29f80"  # assistant: (written later, timestamped earlier)
SIMPLE = "cf32f812"  # user: No lazy loading; keep it simple.
OK_EAGER = "c34f19b4"  # assistant: OK, eager it is.
DATA_MODEL = "169c03ea"  # assistant: Before designing, what does the data model look like?

DEFAULT_ORDER = [
    SYSTEM,
    ROOT_USER,
    ASK,
    LAZY,
    READING,
    READ_RESULT,
    EAGER,
    GO,
    DONE,
    TIE2,
    LEAF,
    TIE1,
    ALTERNATIVE,
    LATER,
    SIMPLE,
    OK_EAGER,
    DATA_MODEL,
]


async def open_tree(pilot: Pilot[Any]) -> SessionTree:
    await pilot.press("ctrl+t")
    await wait_for(pilot, lambda: screen_up(pilot.app, TreeBrowserScreen))
    await pilot.pause()
    tree = pilot.app.screen.query_one(SessionTree)
    await settle(pilot, tree)
    return tree


async def settle(pilot: Pilot[Any], tree: SessionTree) -> None:
    """Wait for the tree's layout or search worker (they run off the UI thread)."""
    await wait_for(pilot, lambda: not tree.busy)
    await pilot.pause()


def record_notes(app: PituiApp) -> list[str]:
    notes: list[str] = []
    app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
    return notes


async def go_to(pilot: Pilot[Any], tree: SessionTree, entry_id: str) -> None:
    """Move the cursor with the keyboard (Home, then Down) onto ``entry_id``."""
    await pilot.press("home")
    line = tree.line_of(entry_id)
    assert line is not None, entry_id
    await pilot.press(*["down"] * line)
    assert tree.cursor_entry_id == entry_id


async def choose(pilot: Pilot[Any], option_id: str) -> None:
    """Pick an option of the summary prompt with the keyboard."""
    await wait_for(pilot, lambda: screen_up(pilot.app, SummaryPrompt))
    options = pilot.app.screen.query_one(OptionList)
    ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
    await pilot.press(*["down"] * ids.index(option_id), "enter")
    await pilot.pause()


# ---------------------------------------------------------------------------------- opening


async def test_double_escape_on_an_empty_editor_opens_the_tree(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pilot waits for the screen between the two keys: on a loaded machine that took longer
    # than a person's double press (0.5 s), which is not what this test is about.
    monkeypatch.setattr(main_screen, "DOUBLE_ESCAPE", 30.0)
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: screen_up(app, MainScreen))
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: screen_up(app, TreeBrowserScreen))
        await pilot.pause()
        tree = app.screen.query_one(SessionTree)
        assert app.focused is tree
        assert tree.cursor_entry_id == LEAF
        assert tree.visible_ids() == DEFAULT_ORDER
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen_up(app, MainScreen))
        assert isinstance(app.focused, PromptEditor)


async def test_ctrl_t_opens_the_tree_with_pi_rows(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        rows = [tree.row_text(i) for i in range(tree.row_count)]
        assert rows[0] == "  • [system]"
        assert rows[2] == "  ├⊟ • assistant: Sure. Do you want lazy loading?"
        assert rows[5] == "  │  │  │  • [read: src/pitui/widgets/tree_view.py]"
        assert rows[10] == "› │  │  │  │  │  • assistant: Answering tie sibling 2.  ← leaf"
        assert rows[11] == "  │  │  │  │  └─ user: tie sibling 1"
        assert rows[15] == "  │     assistant: OK, eager it is."
        assert rows[16] == "  └─ assistant: Before designing, what does the data model look like?"
        status = app.screen.query_one("#tree-status").render()
        assert str(status) == "(11/17)"


async def test_the_status_line_follows_the_cursor_in_the_same_frame(
    app_factory: Callable[..., PituiApp],
) -> None:
    """The ``(i/N)`` line is updated while the key is handled, before the frame that paints
    the moved cursor (it used to wait for a bubbling message and show a frame later)."""
    from pitui.ui.screens.tree_browser import TreeStatus

    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        status = app.screen.query_one(TreeStatus)
        assert status.text == "(11/17)"
        tree.action_cursor_down()  # no await: no message has been handled yet
        assert status.text == "(12/17)"
        tree.action_cursor_up()
        tree.action_cursor_up()
        assert status.text == "(10/17)"
        await pilot.press("slash", "t", "i", "e")
        await settle(pilot, tree)
        assert status.text == "(1/3) /tie▏"
        tree.action_clear_search()
        # the rows and the status back at once (the cursor stays on the entry it was on)
        assert status.text == tree.status_text()
        assert status.text.endswith("/17)")


async def test_after_a_burst_of_keys_the_details_show_the_last_entry(
    app_factory: Callable[..., PituiApp],
) -> None:
    from pitui.ui.widgets.inspectors import DetailsPane

    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        details = app.screen.query_one(DetailsPane)
        await wait_for(pilot, lambda: details.entry_id == LEAF)
        await pilot.press("home", *["down"] * 6)  # faster than the details' debounce
        assert tree.cursor_entry_id == EAGER
        await wait_for(pilot, lambda: details.entry_id == EAGER)
        await pilot.pause(details.debounce * 2)
        assert details.entry_id == EAGER
        meta = str(app.screen.query_one("#entry-meta").render())
        assert f"id {EAGER}" in " ".join(meta.split())
        body = str(app.screen.query_one("#entry-body").render())
        assert "The widget builds all nodes eagerly." in body


@pytest.mark.parametrize(
    ("asked", "opened"), [("context", "context"), ("files", "files"), ("nope", "entry")]
)
async def test_any_details_tab_can_be_the_initial_tab(
    app_factory: Callable[..., PituiApp], asked: str, opened: str
) -> None:
    from pitui.ui.widgets.inspectors import DetailsPane

    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(TreeBrowserScreen(initial_tab=asked))
        await wait_for(pilot, lambda: screen_up(app, TreeBrowserScreen))
        await pilot.pause()
        assert app.screen.query_one(DetailsPane).active_tab == opened


# ---------------------------------------------------------------------------------- keys


async def test_keyboard_moves_the_cursor_and_the_details_follow(
    app_factory: Callable[..., PituiApp],
) -> None:
    from pitui.ui.widgets.inspectors import DetailsPane

    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        details = app.screen.query_one(DetailsPane)
        await wait_for(pilot, lambda: details.entry_id == LEAF)
        await pilot.press("up")
        assert tree.cursor_entry_id == TIE2
        await wait_for(pilot, lambda: details.entry_id == TIE2)
        await pilot.press("down", "down")
        assert tree.cursor_entry_id == TIE1
        await pilot.press("home")
        assert tree.cursor_entry_id == SYSTEM
        await pilot.press("up")  # wraps around, as in pi
        assert tree.cursor_entry_id == DATA_MODEL
        await pilot.press("down")
        assert tree.cursor_entry_id == SYSTEM
        await pilot.press("end")
        assert tree.cursor_entry_id == DATA_MODEL
        await pilot.press("pageup")
        assert tree.cursor_entry_id == SYSTEM  # fewer rows than a page
        await pilot.press("pagedown")
        assert tree.cursor_entry_id == DATA_MODEL
        assert str(app.screen.query_one("#tree-status").render()) == "(17/17)"


async def test_a_click_highlights_and_enter_selects(
    app_factory: Callable[..., PituiApp],
) -> None:
    """A click never selects, also on the highlighted row (a mouse user taking the focus back
    from the details pane must not move the leaf); Enter or a double click does."""
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        selected: list[str] = []
        original = app.screen.select_entry  # type: ignore[attr-defined]

        def spy(entry_id: str) -> None:
            selected.append(entry_id)
            original(entry_id)

        app.screen.select_entry = spy  # type: ignore[attr-defined]
        line = tree.line_of(ALTERNATIVE)
        assert line is not None
        await pilot.click(SessionTree, offset=(30, line - tree.scroll_offset.y))
        await pilot.pause()
        assert tree.cursor_entry_id == ALTERNATIVE  # highlighted, not selected
        # The focus goes to the details pane (a click on a tab), and a click comes back to
        # the highlighted row, after the double-click time: it highlights, nothing more.
        await pilot.click("#tree-details Tab#--content-tab-tab-context")
        await pilot.pause(app.CLICK_CHAIN_TIME_THRESHOLD + 0.1)
        assert app.screen.focused is not tree
        footer = {b.description for (_n, b, _e, _t) in app.screen.active_bindings.values()}
        assert "Back to the tree" in footer  # and Esc does that
        await pilot.click(SessionTree, offset=(30, line - tree.scroll_offset.y))
        await pilot.pause()
        assert tree.has_focus and selected == [] and app.store.leaf_id == LEAF
        await pilot.press("enter")
        await wait_for(pilot, lambda: selected == [ALTERNATIVE])
        # Leaving the tie branch: the summary prompt offers "No summary" only (no model).
        await wait_for(pilot, lambda: screen_up(app, SummaryPrompt))
        options = app.screen.query_one(OptionList)
        assert options.option_count == 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.store.leaf_id == ALTERNATIVE)
        assert isinstance(app.screen, TreeBrowserScreen)
        assert tree.is_on_path(ALTERNATIVE)
        assert not tree.is_on_path(LEAF)


async def test_esc_in_the_details_pane_goes_back_to_the_tree(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await pilot.press("tab")
        assert not tree.has_focus
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, TreeBrowserScreen) and tree.has_focus
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen_up(app, MainScreen))


async def test_a_double_click_selects_at_once(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        line = tree.line_of(OK_EAGER)
        assert line is not None
        await pilot.click(SessionTree, offset=(30, line - tree.scroll_offset.y), times=2)
        await wait_for(pilot, lambda: screen_up(app, SummaryPrompt))
        assert tree.cursor_entry_id == OK_EAGER


async def test_clicking_a_fold_marker_folds(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        line = tree.line_of(SIMPLE)
        assert line is not None
        glyph = tree.row_text(line).index("⊟")
        await pilot.click(SessionTree, offset=(glyph, line - tree.scroll_offset.y))
        await pilot.pause()
        assert tree.is_folded(SIMPLE)
        assert OK_EAGER not in tree.visible_ids()
        assert app.store.leaf_id == LEAF  # a fold is not a selection


# ---------------------------------------------------------------------------------- filters


async def test_filters_cycle_and_toggle(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        status = app.screen.query_one("#tree-status")
        await pilot.press("f")
        assert tree.mode == "no-tools"
        assert READ_RESULT not in tree.visible_ids()
        assert str(status.render()).endswith("[no-tools]")
        await pilot.press("f")
        assert tree.mode == "user-only"
        assert tree.visible_ids() == [ROOT_USER, LAZY, GO, TIE2, TIE1, SIMPLE]
        # The cursor was on the leaf (an assistant): it moves to its nearest shown ancestor.
        assert tree.cursor_entry_id == TIE2
        # The leaf (an assistant) is filtered out: its row says where it is.
        assert tree.row_text(tree.line_of(TIE2) or 0) == (
            "› │  ├─ • user: tie sibling 2  ← leaf is just below (hidden)"
        )
        await pilot.press("f")
        assert tree.mode == "labeled-only"
        assert tree.row_count == 0
        await pilot.press("f")
        assert tree.mode == "all"
        assert tree.visible_ids()[:3] == ["2c47eac7", "baf4dacc", SYSTEM]  # model, thinking
        await pilot.press("f")
        assert tree.mode == "default"
        assert tree.cursor_entry_id == TIE2  # remembered through the empty filter
        await pilot.press("ctrl+u")
        assert tree.mode == "user-only"
        await pilot.press("ctrl+u")  # toggles back
        assert tree.mode == "default"
        await pilot.press("ctrl+a", "ctrl+d")
        assert tree.mode == "default"
        await pilot.press("F")
        assert tree.mode == "all"


async def test_empty_filter_keeps_the_selection_for_later(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await go_to(pilot, tree, ALTERNATIVE)
        await pilot.press("ctrl+l")
        assert tree.row_count == 0
        assert tree.cursor_entry_id is None
        await pilot.press("ctrl+d")
        assert tree.cursor_entry_id == ALTERNATIVE


async def test_search_filters_rows_and_escape_clears_it_first(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        status = app.screen.query_one("#tree-status")
        await pilot.press("slash", *"TIE")
        await settle(pilot, tree)
        assert tree.searching
        assert tree.visible_ids() == [TIE2, LEAF, TIE1]
        assert str(status.render()) == "(2/3) /TIE▏"
        await pilot.press("space", "1")
        await settle(pilot, tree)
        assert tree.visible_ids() == [TIE1]
        await pilot.press("backspace", "2")
        await settle(pilot, tree)
        assert tree.visible_ids() == [TIE2, LEAF]
        # TIE1 went away: no shown ancestor, so the first row.
        assert tree.cursor_entry_id == TIE2
        await pilot.press("enter")  # ends typing, keeps the search
        assert not tree.searching
        assert str(status.render()) == "(1/2) /TIE 2"
        await pilot.press("escape")  # clears the search, stays open
        assert isinstance(app.screen, TreeBrowserScreen)
        assert tree.search_query == ""
        assert tree.visible_ids() == DEFAULT_ORDER
        assert tree.cursor_entry_id == TIE2
        await pilot.press("slash", *"read tree_view")  # the tool call's arguments
        await settle(pilot, tree)
        assert tree.visible_ids() == [READ_RESULT]
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: screen_up(app, MainScreen))


async def test_search_matches_labels(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    app.store.append_label(SIMPLE, "plan-b")
    app.store.branch(LEAF)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await pilot.press("slash", *"plan-b")
        await settle(pilot, tree)
        assert tree.visible_ids() == [SIMPLE]
        assert tree.row_text(0) == "› [plan-b] user: No lazy loading; keep it simple."


async def test_search_runs_off_the_ui_thread_and_the_next_key_supersedes_it(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys are handled while a search is still running (it is held here until released);
    each key starts a new search, and only the results of the last query are shown."""
    gate = threading.Event()
    threads: set[str] = set()

    class HeldMatcher(Matcher):
        def __call__(self, node: Any) -> bool:
            threads.add(threading.current_thread().name)
            gate.wait(10)
            return super().__call__(node)

    monkeypatch.setattr(session_tree, "Matcher", HeldMatcher)
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        status = app.screen.query_one("#tree-status")
        await pilot.press("slash", "t")
        assert tree.busy
        await pilot.press("i", "e")  # handled at once, though no search has finished
        assert tree.search_query == "tie"
        assert str(status.render()).startswith(f"(11/{len(DEFAULT_ORDER)}) /tie▏ searching")
        assert tree.visible_ids() == DEFAULT_ORDER  # the rows stay until results come
        gate.set()
        await settle(pilot, tree)
        assert tree.visible_ids() == [TIE2, LEAF, TIE1]
        assert str(status.render()) == "(2/3) /tie▏"
        assert threading.main_thread().name not in threads
        # Typing on narrows the results; deleting widens them again.
        await pilot.press("space", "1")
        await settle(pilot, tree)
        assert tree.visible_ids() == [TIE1]
        await pilot.press("backspace", "backspace")
        await settle(pilot, tree)
        assert tree.visible_ids() == [TIE2, LEAF, TIE1]


async def test_no_garbage_collection_runs_while_a_search_runs(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search makes many objects and no cyclic garbage; a full collection it set off held
    the interpreter for the whole heap (170-270 ms at 1M entries, several per search). The
    collector is off while the worker matches entries and on again once it is done."""
    enabled_while_matching: set[bool] = set()

    class Watched(Matcher):
        def __call__(self, node: Any) -> bool:
            enabled_while_matching.add(gc.isenabled())
            return super().__call__(node)

    monkeypatch.setattr(session_tree, "SCAN_ROWS", 0)  # the file index and scan too
    monkeypatch.setattr(session_tree, "Matcher", Watched)
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        assert gc.isenabled()
        await pilot.press("slash", *"tie")
        await settle(pilot, tree)
        assert tree.visible_ids() == [TIE2, LEAF, TIE1]
        assert enabled_while_matching == {False}
        assert gc.isenabled()
        await pilot.press("escape", "escape")


async def test_clearing_a_search_restores_the_rows_without_a_rebuild(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        rows = tree.view
        builds = tree.build_seconds
        await pilot.press("slash", *"tie")
        await settle(pilot, tree)
        assert tree.view is not rows
        await pilot.press("escape")
        assert tree.view is rows  # the same layout, shown again at once
        assert tree.visible_ids() == DEFAULT_ORDER
        assert tree.build_seconds == builds


async def test_keys_typed_in_one_burst_start_one_search(
    app_factory: Callable[..., PituiApp],
) -> None:
    """What is typed shows at once; the search waits for the keys to stop (here: for Enter),
    so a burst of keys is one search, for the whole query."""
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        tree.search_delay = 60.0
        status = app.screen.query_one("#tree-status")
        await pilot.press("slash", *"tie")
        assert str(status.render()).startswith(f"(11/{len(DEFAULT_ORDER)}) /tie▏ searching")
        assert tree.searches_started == 0
        assert tree.visible_ids() == DEFAULT_ORDER  # the rows stay usable meanwhile
        await pilot.press("enter")  # ends typing: searched now
        await settle(pilot, tree)
        assert tree.searches_started == 1
        assert tree.visible_ids() == [TIE2, LEAF, TIE1]
        assert str(status.render()) == "(2/3) /tie"


async def test_escape_before_the_search_starts_runs_none(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        rows = tree.view
        tree.search_delay = 0.3
        await pilot.press("slash", *"tie", "escape")
        assert tree.search_query == ""
        assert not tree.busy
        await pilot.pause(0.5)  # past the delay: nothing starts
        assert tree.searches_started == 0
        assert tree.view is rows
        assert tree.visible_ids() == DEFAULT_ORDER


async def test_the_next_key_cancels_a_running_search(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search still running when the next key comes is stopped at once (it does not keep
    a core busy for a query nobody waits for)."""
    gate = threading.Event()
    workers: list[Any] = []

    class HeldMatcher(Matcher):
        def __call__(self, node: Any) -> bool:
            worker = get_current_worker()
            if worker not in workers:
                workers.append(worker)
            gate.wait(10)
            return super().__call__(node)

    monkeypatch.setattr(session_tree, "Matcher", HeldMatcher)
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        tree.search_delay = 0.001
        await pilot.press("slash", "t")
        await wait_for(pilot, lambda: bool(workers))
        assert not workers[0].is_cancelled
        await pilot.press("i")
        assert workers[0].is_cancelled
        gate.set()
        await settle(pilot, tree)
        assert tree.search_query == "ti"
        store = app.store
        assert tree.visible_ids() == [
            entry for entry in DEFAULT_ORDER if matches_exactly(store, store.node(entry), ["ti"])
        ]
        assert tree.searches_started == 2


async def test_a_search_cancelled_before_it_ran_does_not_hold_the_rows(
    app_factory: Callable[..., PituiApp],
) -> None:
    """Store events wait while a search reads the rows; one cancelled before its thread even
    started must not keep them waiting for ever."""
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        tree.set_search("tie")
        tree.workers.cancel_group(tree, "tree-search")  # before its thread could start
        tree.set_search("")
        await pilot.pause()
        new = app.store.append_message({"role": "user", "content": "after the search"})
        await wait_for(pilot, lambda: tree.line_of(new) is not None)
        assert tree.row_count == len(DEFAULT_ORDER) + 1


async def test_the_search_index_is_made_once_for_the_searches_that_follow(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[object] = []
    real_build = session_tree.FileIndex.build

    def counted(store: Any, tick: Any = None) -> Any:
        built.append(store)
        return real_build(store, tick)

    monkeypatch.setattr(session_tree, "SCAN_ROWS", 0)  # scanned as a large session is
    monkeypatch.setattr(session_tree.FileIndex, "build", staticmethod(counted))
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        for query in ("tie", "read tree_view"):
            await pilot.press("slash", *query, "enter")
            await settle(pilot, tree)
            await pilot.press("escape")
        await pilot.press("slash", *"TIE", "enter")
        await settle(pilot, tree)
        assert tree.visible_ids() == [TIE2, LEAF, TIE1]
        assert len(built) == 1


async def test_a_search_superseded_while_it_makes_the_index_finishes_it_for_the_next(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file index takes seconds on a huge session (5 s at 1M entries): a query typed
    key by key must not start it over at every key. The search the next key supersedes
    finishes the index, and the next search uses it."""
    started, gate = threading.Event(), threading.Event()
    built: list[object] = []
    real_build = session_tree.FileIndex.build

    def slow(store: Any, tick: Any = None) -> Any:
        started.set()
        gate.wait(10)
        built.append(store)
        return real_build(store, tick)

    monkeypatch.setattr(session_tree, "SCAN_ROWS", 0)  # scanned as a large session is
    monkeypatch.setattr(session_tree.FileIndex, "build", staticmethod(slow))
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        tree.search_delay = 0.001
        await pilot.press("slash", "t")
        await wait_for(pilot, started.is_set)
        await pilot.press("i", "e")  # supersedes the search that is making the index
        gate.set()
        await settle(pilot, tree)
        assert tree.search_query == "tie"
        assert tree.visible_ids() == [TIE2, LEAF, TIE1]
        assert len(built) == 1


async def test_details_pane_jump_shows_a_hidden_entry(
    app_factory: Callable[..., PituiApp],
) -> None:
    from pitui.ui.widgets.inspectors import DetailsPane

    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await pilot.press("slash", *"tie", "enter")
        await settle(pilot, tree)
        details = app.screen.query_one(DetailsPane)
        details.post_message(DetailsPane.JumpTo(details, READ_RESULT))
        await wait_for(pilot, lambda: tree.cursor_entry_id == READ_RESULT)
        assert tree.search_query == ""
        assert tree.mode == "default"
        assert app.focused is tree


# ---------------------------------------------------------------------------------- folding


async def test_folding_and_segment_jumps(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        assert tree.cursor_entry_id == LEAF
        await pilot.press("left")  # nothing to fold: previous segment start
        assert tree.cursor_entry_id == TIE2
        await pilot.press("left")  # a segment start with children: fold it
        assert tree.cursor_entry_id == TIE2
        assert tree.is_folded(TIE2)
        assert LEAF not in tree.visible_ids()
        line = tree.line_of(TIE2)
        assert line is not None
        assert tree.row_text(line).startswith("› │  │  │  │  ├⊞ • user: tie sibling 2")
        await pilot.press("down")
        assert tree.cursor_entry_id == TIE1
        await pilot.press("up", "right")  # unfold
        assert not tree.is_folded(TIE2)
        await pilot.press("down")
        assert tree.cursor_entry_id == LEAF
        await pilot.press("left")
        assert tree.cursor_entry_id == TIE2
        await pilot.press("right")  # follows the only child down to the branch end
        assert tree.cursor_entry_id == LEAF
        await go_to(pilot, tree, GO)
        await pilot.press("right")  # down the chain to the next fork: its first child
        assert tree.cursor_entry_id == TIE2
        await go_to(pilot, tree, GO)
        await pilot.press("left")  # up to the start of the segment
        assert tree.cursor_entry_id == EAGER
        await pilot.press("left")  # fold it
        assert tree.is_folded(EAGER)
        await pilot.press("left")  # folded: previous segment start
        assert tree.cursor_entry_id == READING
        await pilot.press("f")  # a filter change clears the folds
        assert not tree.is_folded(EAGER)
        await pilot.press("ctrl+d", "home")
        assert tree.cursor_entry_id == SYSTEM
        await pilot.press("left")  # a root with children folds
        assert tree.is_folded(SYSTEM)
        assert tree.row_count == 1
        assert tree.row_text(0) == "› ⊞ • [system]  ← leaf is inside (folded)"
        await pilot.press("down")  # wraps to the only row
        assert tree.cursor_entry_id == SYSTEM
        await pilot.press("left")  # a folded root stays
        assert tree.cursor_entry_id == SYSTEM
        await pilot.press("right", "right")
        assert tree.cursor_entry_id == ASK  # root → the chain → the first child of the fork


async def test_search_clears_folds(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await pilot.press("left", "left")
        assert tree.is_folded(TIE2)
        await pilot.press("slash", "t")
        await settle(pilot, tree)
        assert not tree.is_folded(TIE2)
        await pilot.press("escape")
        assert LEAF in tree.visible_ids()


# ---------------------------------------------------------------------------------- leaf moves


async def test_active_path_follows_leaf_moves_without_a_rebuild(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        rows_before = tree.view
        app.store.branch(OK_EAGER)  # from outside (an agent or a command)
        await wait_for(pilot, lambda: tree.is_on_path(OK_EAGER))
        assert tree.view is rows_before  # re-marked, not rebuilt
        assert tree.visible_ids() == DEFAULT_ORDER  # nothing moves under the user's eyes
        for entry_id in (SIMPLE, OK_EAGER, ASK, ROOT_USER):
            assert tree.is_on_path(entry_id)
        for entry_id in (LAZY, READING, TIE2, LEAF):
            assert not tree.is_on_path(entry_id)
        ok = tree.line_of(OK_EAGER)
        assert ok is not None
        assert tree.row_text(ok) == "  │     • assistant: OK, eager it is.  ← leaf"
        leaf = tree.line_of(LEAF)
        assert leaf is not None
        assert tree.row_text(leaf) == "› │  │  │  │  │  assistant: Answering tie sibling 2."


async def test_appends_join_the_rows_in_place(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        rows_before = tree.view
        new = app.store.append_message({"role": "user", "content": "one more"})
        await wait_for(pilot, lambda: tree.line_of(new) is not None)
        assert tree.view is rows_before
        ids = tree.visible_ids()
        assert ids[ids.index(LEAF) + 1] == new
        assert tree.row_text(ids.index(new)).endswith("• user: one more  ← leaf")
        assert tree.cursor_entry_id == LEAF  # the cursor stays where the user put it
        # Appended at an older entry: a new branch, shown first under its branch point.
        app.store.branch(ASK)
        fork = app.store.append_message({"role": "user", "content": "another way"})
        await wait_for(pilot, lambda: tree.line_of(fork) is not None)
        ids = tree.visible_ids()
        assert ids.index(fork) == ids.index(ASK) + 1
        assert tree.row_text(ids.index(fork)) == "  │  ├─ • user: another way  ← leaf"
        assert tree.view.leaf_shown()  # type: ignore[union-attr]
        fresh = layout_tree(app.store, "default")
        assert {n.id for n in fresh.iter_nodes()} == set(tree.visible_ids())


async def test_selecting_the_leaf_says_already_here(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        notes = record_notes(app)
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(notes))
        assert notes == ["Already here."]
        assert isinstance(app.screen, TreeBrowserScreen)
        assert tree.cursor_entry_id == LEAF


async def test_selecting_an_ancestor_needs_no_prompt_and_moves_the_leaf(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await go_to(pilot, tree, DONE)
        await pilot.press("enter")  # abandons TIE2 and LEAF: the prompt
        await choose(pilot, "none")
        assert app.store.leaf_id == DONE
        assert isinstance(app.screen, TreeBrowserScreen)
        await go_to(pilot, tree, TIE1)
        await pilot.press("enter")  # a descendant of the leaf: nothing is left behind
        await wait_for(pilot, lambda: screen_up(app, MainScreen))
        assert app.store.leaf_id == DONE  # a user message: the leaf goes to its parent
        assert app.screen.query_one(PromptEditor).text == "tie sibling 1"


# ---------------------------------------------------------------------------------- agent


async def test_edit_and_resubmit_a_past_prompt(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(text("Lazy loading it is, then."))
    app = app_factory("pi-v3-branches.jsonl", llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await go_to(pilot, tree, LAZY)
        await pilot.press("enter")
        await choose(pilot, "none")
        await wait_for(pilot, lambda: screen_up(app, MainScreen))
        editor = app.screen.query_one(PromptEditor)
        await wait_for(pilot, lambda: editor.text == "Yes, lazy loading, and show labels.")
        assert app.store.leaf_id == ASK
        await pilot.press("end", *" Please.", "enter")
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        await wait_for(pilot, lambda: len(llm.requests) == 1)
        await app.screen.query_one(ChatView).wait_idle()
        await pilot.pause()
        # The new prompt is a sibling of the old one; the old branch is still there.
        kids = [n.id for n in app.store.children(ASK)]
        assert kids[:2] == [LAZY, SIMPLE] and len(kids) == 3
        path = app.store.path_to()
        new_user = next(n for n in path[[n.id for n in path].index(ASK) :] if n.role == "user")
        assert app.store.get(new_user.id)["message"]["content"][0]["text"] == (
            "Yes, lazy loading, and show labels. Please."
        )
        chat_text = " ".join(
            w.text if isinstance(w, MarkdownView) else str(w.render())
            for w in app.screen.query_one(ChatView).query("*")
        )
        assert "Lazy loading it is, then." in chat_text
        assert "Answering tie sibling 2." not in chat_text
        tree = await open_tree(pilot)
        ids = tree.visible_ids()
        assert LAZY in ids and LEAF in ids and new_user.id in ids
        assert tree.is_on_path(new_user.id) and not tree.is_on_path(LAZY)
        # The active branch comes first under the fork.
        assert ids.index(new_user.id) < ids.index(LAZY)


async def test_summarize_appends_a_branch_summary(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(text("They explored tie siblings."))
    app = app_factory("pi-v3-branches.jsonl", llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        notes = record_notes(app)
        await go_to(pilot, tree, ALTERNATIVE)
        await pilot.press("enter")
        await choose(pilot, "summarize")
        await wait_for(
            pilot, lambda: app.store.leaf is not None and app.store.leaf.type == "branch_summary"
        )
        summary = app.store.get(app.store.leaf_id or "")
        assert summary["fromId"] == LEAF
        assert summary["parentId"] == ALTERNATIVE
        assert "They explored tie siblings." in summary["summary"]
        assert isinstance(app.screen, TreeBrowserScreen)
        await wait_for(pilot, lambda: summary["id"] in tree.visible_ids())
        assert tree.is_on_path(summary["id"]) and tree.is_on_path(ALTERNATIVE)
        assert "Summarizing the branch… Esc cancels." in notes
        assert "Navigated to the selected point." in notes
        assert not tree.loading


async def test_summarize_with_instructions(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(text("Focused summary."))
    app = app_factory("pi-v3-branches.jsonl", llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await go_to(pilot, tree, LAZY)
        await pilot.press("enter")
        await choose(pilot, "custom")
        assert isinstance(app.focused, Input)
        await pilot.press("escape")  # back to the choices, as pi's editor
        assert isinstance(app.screen, SummaryPrompt)
        assert isinstance(app.focused, OptionList)
        assert app.focused.highlighted == 2  # still on "Summarize with instructions…"
        await pilot.press("enter", *"the file names", "enter")
        await wait_for(pilot, lambda: screen_up(app, MainScreen))
        editor = app.screen.query_one(PromptEditor)
        await wait_for(pilot, lambda: editor.text == "Yes, lazy loading, and show labels.")
        leaf = app.store.leaf
        assert leaf is not None and leaf.type == "branch_summary"
        assert app.store.get(leaf.id)["parentId"] == ASK  # at the new position
        assert app.store.get(leaf.id)["fromId"] == LEAF
        prompt = llm.requests[0].messages[-1]["content"]
        prompt_text = prompt if isinstance(prompt, str) else str(prompt)
        assert "Additional focus: the file names" in prompt_text


async def test_escape_cancels_a_running_summary(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(slow("a b c d e f g h i j", 0.3))
    app = app_factory("pi-v3-branches.jsonl", llm_url=llm.url)
    before = app.store.leaf_id
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        notes = record_notes(app)
        await go_to(pilot, tree, ALTERNATIVE)
        await pilot.press("enter")
        await choose(pilot, "summarize")
        await wait_for(pilot, lambda: len(llm.requests) == 1)
        assert tree.loading
        await pilot.press("escape")
        await wait_for(pilot, lambda: "Branch summarization cancelled." in notes)
        assert isinstance(app.screen, TreeBrowserScreen)  # still open, same selection
        assert app.store.leaf_id == before
        assert tree.cursor_entry_id == ALTERNATIVE
        assert not tree.loading


async def test_escape_on_the_summary_prompt_changes_nothing(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    app = app_factory("pi-v3-branches.jsonl", llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await go_to(pilot, tree, ALTERNATIVE)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_up(app, SummaryPrompt))
        assert app.screen.query_one(OptionList).option_count == 3
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen_up(app, TreeBrowserScreen))
        assert app.store.leaf_id == LEAF
        assert app.focused is tree
    assert llm.requests == []


# ---------------------------------------------------------------------------------- L and c


async def test_label_edit_sets_and_clears(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await go_to(pilot, tree, SIMPLE)
        await pilot.press("L")
        await wait_for(pilot, lambda: screen_up(app, LabelPrompt))
        await pilot.press(*"plan [b]", "enter")
        await wait_for(pilot, lambda: screen_up(app, TreeBrowserScreen))
        assert app.store.label_of(SIMPLE) == "plan [b]"
        line = tree.line_of(SIMPLE)
        assert line is not None
        await wait_for(pilot, lambda: "[plan [b]] user:" in tree.row_text(line))
        await pilot.press("ctrl+l")  # labeled-only
        assert tree.visible_ids() == [SIMPLE]
        await pilot.press("L")
        await wait_for(pilot, lambda: screen_up(app, LabelPrompt))
        assert app.screen.query_one(Input).value == "plan [b]"
        await pilot.press("ctrl+u", "enter")  # empty clears
        await wait_for(pilot, lambda: app.store.label_of(SIMPLE) is None)
        await wait_for(pilot, lambda: tree.row_count == 0)


async def test_copy_falls_back_to_osc52(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_copy(text: str) -> None:
        raise RuntimeError("no clipboard mechanism")

    fake = types.ModuleType("pyperclip")
    fake.copy = broken_copy  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pyperclip", fake)
    copied: list[str] = []
    monkeypatch.setattr(App, "copy_to_clipboard", lambda self, text: copied.append(text))
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        notes = record_notes(app)
        await go_to(pilot, tree, SIMPLE)
        await pilot.press("c")
        await wait_for(pilot, lambda: bool(notes))
    assert copied == ["No lazy loading; keep it simple."]
    assert notes == [
        "Copied through the terminal (OSC 52); your terminal must allow clipboard access."
    ]


# ---------------------------------------------------------------------------------- scale


def deep_session(path: Any, forks: int, chain: int) -> SessionStore:
    """A chain of ``forks`` branch points, each followed by ``chain`` single-child entries."""
    store = SessionStore.create_at(path, "/tmp")
    for i in range(forks):
        store.append_message({"role": "user", "content": f"q{i}", "timestamp": 0})
        fork = store.leaf_id
        store.append_message(
            {"role": "assistant", "content": [{"type": "text", "text": f"side {i}"}]}
        )
        assert fork is not None
        store.branch(fork)
        for j in range(chain):
            store.append_message(
                {"role": "assistant", "content": [{"type": "text", "text": f"a{i}.{j}"}]}
            )
    return store


async def test_painted_rows_follow_labels_cursor_and_leaf(
    app_factory: Callable[..., PituiApp],
) -> None:
    """Rows are kept once painted; whatever a row shows changing paints it anew."""
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)

        def drawn(entry_id: str) -> str:
            line = tree.line_of(entry_id)
            assert line is not None
            strip = tree.render_line(line - tree.scroll_offset.y)
            return "".join(segment.text for segment in strip).rstrip()

        before = drawn(GO)
        assert before == drawn(GO) and "tagx" not in before
        app.store.append_label(GO, "tagx")
        await pilot.pause()
        assert "tagx" in drawn(GO)
        assert drawn(LEAF).startswith("›") and "← leaf" in drawn(LEAF)
        await pilot.press("up")
        assert not drawn(LEAF).startswith("›") and drawn(TIE2).startswith("›")
        app.store.branch(TIE1)  # the leaf moves: the marker and the path marks follow
        await pilot.pause()
        assert "← leaf" not in drawn(LEAF) and drawn(TIE1).endswith("← leaf")
        assert "• " not in drawn(LEAF)


async def test_clearing_a_long_search_restores_the_scroll_range(
    app_factory: Callable[..., PituiApp],
) -> None:
    """Rows come and go without a relayout while the scrollbar stays (the row count is only
    the scroll range): the range, the scrollbar and scrolling follow the rows shown."""
    app = app_factory(model=None)
    deep = deep_session(app.store.path, forks=80, chain=2)  # 320 rows, ".1" in 80 of them
    app.store = deep
    app.bridge.attach(deep, None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        total = tree.row_count
        assert total == 320 and tree.show_vertical_scrollbar
        await pilot.press("home")
        await pilot.press("slash", "full_stop", "1")
        await settle(pilot, tree)
        found = tree.row_count
        assert tree.size.height < found < total
        assert tree.show_vertical_scrollbar
        assert tree.virtual_size.height == found
        assert tree.vertical_scrollbar.window_virtual_size == found
        assert tree.max_scroll_y == found - tree.size.height
        tree.action_clear_search()  # what Esc does; checked before the next frame
        assert tree.row_count == total and not tree.search_query
        assert tree.virtual_size.height == total
        assert tree.vertical_scrollbar.window_virtual_size == total
        assert tree.max_scroll_y == total - tree.size.height
        await pilot.pause()
        await pilot.press("end")
        await pilot.pause()
        assert tree.cursor_line == total - 1
        assert tree.scroll_offset.y == total - tree.size.height  # the last row at the bottom
        bottom = tree.render_line(tree.size.height - 1)
        drawn = "".join(segment.text for segment in bottom).rstrip()
        assert drawn == tree.row_text(total - 1).rstrip()
        assert drawn.endswith("assistant: side 0")


async def test_deep_trees_render_and_navigate(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory(model=None)
    deep = deep_session(app.store.path, forks=1200, chain=2)
    app.store = deep
    app.bridge.attach(deep, None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        assert tree.row_count == 1200 * 4
        assert tree.cursor_entry_id == deep.leaf_id
        text = tree.row_text(tree.cursor_line)
        assert text.rstrip().endswith("assistant: a1199.1  ← leaf")
        assert tree.hscroll > 0  # the deep row's text is scrolled into view
        await pilot.press("home")
        assert tree.hscroll == 0
        await pilot.press("end", "left", "left")
        assert tree.cursor_entry_id is not None


# ---------------------------------------------------------------------------------- 80x24


def footer_text(app: PituiApp) -> str:
    from textual.widgets import Footer

    footer = app.screen.query_one(Footer)
    return " ".join(str(key.render()) for key in footer.query("FooterKey"))


async def test_at_80x24_the_details_start_hidden_and_d_toggles_them(
    app_factory: Callable[..., PituiApp],
) -> None:
    from pitui.ui.widgets.inspectors import DetailsPane

    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=(80, 24)) as pilot:
        tree = await open_tree(pilot)
        details = app.screen.query_one(DetailsPane)
        assert not details.display
        assert tree.size.width >= 74  # the tree has the width (was ~44 columns)
        await pilot.press("i")
        await pilot.pause()
        assert details.display
        await wait_for(pilot, lambda: details.entry_id == LEAF)
        await pilot.press("i")
        await pilot.pause()
        assert not details.display
        assert app.focused is tree
    async with app_factory("pi-v3-branches.jsonl", model=None).run_test(size=SIZE) as pilot:
        await open_tree(pilot)
        assert pilot.app.screen.query_one(DetailsPane).display  # wide: shown


async def test_details_shown_by_a_wider_terminal_show_the_highlighted_entry(
    app_factory: Callable[..., PituiApp],
) -> None:
    """They said "Nothing selected." on a selected row when a resize showed them."""
    from textual.widgets import Static

    from pitui.ui.widgets.inspectors import DetailsPane

    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_tree(pilot)
        details = app.screen.query_one(DetailsPane)
        assert not details.display
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: details.display and details.entry_id == LEAF)
        meta = str(details.query_one("#entry-meta", Static).render())
        assert "Nothing selected" not in meta and LEAF in meta


async def test_the_footer_always_says_how_to_close(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=(80, 24)) as pilot:
        tree = await open_tree(pilot)
        footer = app.screen.query_one("Footer")
        first = footer.query("FooterKey").first()
        assert "esc" in str(first.render()) and "Close" in str(first.render())
        assert first.region.right <= 80  # on screen
        keys = list(footer.query("FooterKey"))
        closed = footer_text(app)
        await pilot.press("slash", "t")
        await settle(pilot, tree)
        await pilot.pause()
        assert "Clear search" in str(footer.query("FooterKey").first().render())
        await pilot.press("escape")
        await pilot.pause()
        assert "Close" in str(footer.query("FooterKey").first().render())
        assert footer_text(app) == closed
        # Only the keys' texts changed: the same widgets show them (no rebuild).
        assert list(footer.query("FooterKey")) == keys
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen_up(app, MainScreen))


async def test_the_leaf_marker_is_never_cropped(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    long = "a long prompt " * 20
    app.store.append_message({"role": "user", "content": long})
    async with app.run_test(size=(80, 24)) as pilot:
        tree = await open_tree(pilot)
        line = tree.cursor_line
        assert tree.row_text(line).endswith("  ← leaf")
        width = tree.size.width
        strip = tree.render_line(line - tree.scroll_offset.y)
        drawn = "".join(segment.text for segment in strip)
        assert len(drawn) == width
        assert drawn.rstrip().endswith("← leaf")
        assert "a long prompt" in drawn  # the text is cut, not the marker


async def test_a_filtered_out_leaf_is_said_to_be_below_its_row(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    app.store.append_label(SIMPLE, "keep")  # a label entry: the new leaf, hidden by default
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        assert tree.cursor_entry_id == LEAF
        assert tree.row_text(tree.cursor_line).endswith("← leaf is just below (hidden)")
        await pilot.press("ctrl+a")  # all entries: the label entry itself is the leaf row
        await settle(pilot, tree)
        leaf = app.store.leaf_id
        assert leaf is not None
        line = tree.line_of(leaf)
        assert line is not None
        assert tree.row_text(line).endswith("[label: keep]  ← leaf")
        await pilot.press("ctrl+a", "slash", *"keep", "enter")  # back to default; a search
        await settle(pilot, tree)
        status = str(app.screen.query_one("#tree-status").render())
        assert tree.visible_ids() == [SIMPLE]  # the label matches; the leaf is elsewhere
        assert status == "(1/1) /keep · the leaf is hidden by the search"


async def test_reopening_starts_afresh_and_follows_what_happened_meanwhile(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        first_screen = app.screen
        await pilot.press("left", "left")  # a fold
        await pilot.press("slash", *"tie")
        await settle(pilot, tree)
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: screen_up(app, MainScreen))
        new = app.store.append_message({"role": "user", "content": "while closed"})
        tree = await open_tree(pilot)
        assert app.screen is first_screen  # the same browser, kept
        assert tree.search_query == "" and not tree.searching
        assert not tree.is_folded(TIE2)
        assert tree.cursor_entry_id == new  # the new leaf
        assert tree.row_text(tree.cursor_line).endswith("• user: while closed  ← leaf")
        assert str(app.screen.query_one("#tree-status").render()) == (
            f"({tree.cursor_line + 1}/{len(DEFAULT_ORDER) + 1})"
        )


async def test_a_leaf_on_bookkeeping_is_marked_on_the_row_above(
    app_factory: Callable[..., PituiApp],
) -> None:
    """Custom entries (pitui's checkpoint after every run, extensions' notes) under the last
    reply do not make the leaf "below": the reply's row is marked ``← leaf``."""
    app = app_factory("pi-v3-branches.jsonl", model=None)
    app.store.append_custom("pitui.checkpoint", {"note": "after the run"})
    app.store.append_custom("some.extension", {"n": 1})
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        assert tree.cursor_entry_id == LEAF
        row = tree.row_text(tree.cursor_line)
        assert row.endswith("← leaf") and "below" not in row
