"""Snapshots of the details pane's tabs (``DetailsPane``) on the session fixtures.

tiktoken counts are real: ``run_before`` waits for the counting worker, so they are
deterministic. Snapshots live in ``snapshots/test_inspector_snapshots/``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from support.fixtures import copy_fixture
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from pitui.session import SessionStore
from pitui.ui.widgets.inspectors import DetailsPane

COMPACTION = "pi-v3-compaction-and-system-prompt.jsonl"
CONTEXT_EDIT = "pi-v3-context-edit.jsonl"
SIZE = (100, 34)


class PaneApp(App[None]):
    """The pane alone on a screen, over ``store``."""

    def __init__(self, store: SessionStore) -> None:
        super().__init__()
        self.store = store
        self.agent = None

    def compose(self) -> ComposeResult:
        yield DetailsPane(id="details", debounce=0)


def open_fixture(name: str, tmp_path: Path) -> SessionStore:
    return SessionStore.open(copy_fixture(name, tmp_path / "fixtures"), read_only=True)


def showing(
    entry_id: str, tab: str, expand_system: bool = False
) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        pane = pilot.app.query_one(DetailsPane)
        pane.set_tab(tab)
        await pilot.pause()
        pane.show(entry_id)
        await pilot.pause()
        workers = [w for w in pilot.app.workers if w.group == "details-tiktoken"]
        if workers:
            await pilot.app.workers.wait_for_complete(workers)
        if expand_system:
            pane.query_one("#context-system").collapsed = False  # type: ignore[attr-defined]
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    return run_before


def test_entry_tab(snap_compare: Any, tmp_path: Path) -> None:
    """An assistant message: metadata, thinking, text, three tool calls with JSON arguments."""
    app = PaneApp(open_fixture(COMPACTION, tmp_path))
    assert snap_compare(app, terminal_size=SIZE, run_before=showing("37fbaff7", "entry"))


def test_context_tab_after_compaction(snap_compare: Any, tmp_path: Path) -> None:
    """Context below the first compaction: checkpoint, summary row, kept range, token counts."""
    app = PaneApp(open_fixture(COMPACTION, tmp_path))
    assert snap_compare(app, terminal_size=SIZE, run_before=showing("8beea7e2", "context"))


def test_context_tab_system_prompt_expanded(snap_compare: Any, tmp_path: Path) -> None:
    """The system prompt collapsible open: its sections (collapsed) and the tool list."""
    app = PaneApp(open_fixture(COMPACTION, tmp_path))
    run_before = showing("0b455017", "context", expand_system=True)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_compaction_tab(snap_compare: Any, tmp_path: Path) -> None:
    """The second compaction seen from the leaf: numbers, jump button, files, summary."""
    app = PaneApp(open_fixture(COMPACTION, tmp_path))
    assert snap_compare(app, terminal_size=SIZE, run_before=showing("6612458f", "compaction"))


def test_context_tab_with_context_edits(snap_compare: Any, tmp_path: Path) -> None:
    """Edited and omitted rows (pi-v3-context-edit.jsonl before its compaction)."""
    app = PaneApp(open_fixture(CONTEXT_EDIT, tmp_path))
    assert snap_compare(app, terminal_size=SIZE, run_before=showing("bbdd7c2f", "context"))
