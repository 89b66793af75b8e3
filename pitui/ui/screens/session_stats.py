"""``/session``: statistics of the session (entries, branches, messages per role, tokens and
cost over the tree and per branch, compactions, files touched), computed in a thread from a
snapshot; the same report as ``pitui stats``."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from pitui.text import strip_escapes
from pitui.ui.app_state import UsesApp
from pitui.ui.snapshot import take_snapshot

if TYPE_CHECKING:
    from pitui.compaction.session_stats import SessionStats
    from pitui.ui.commands import CommandContext


def stats_text(stats: SessionStats) -> str:
    from pitui.compaction.session_stats import describe_stats

    return strip_escapes("\n".join(describe_stats(stats, max_branches=50)))


class SessionStatsScreen(UsesApp, ModalScreen[None]):
    DEFAULT_CSS: ClassVar[str] = """
    SessionStatsScreen { align: center middle; }
    SessionStatsScreen > VerticalScroll {
        width: 90%; height: 85%; border: round $primary; padding: 0 1; background: $surface;
    }
    SessionStatsScreen #stats-text { width: auto; text-wrap: nowrap; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll(id="stats-scroll")
        scroll.border_title = "Session statistics (Esc closes)"
        with scroll:
            yield Static(Content("Computing statistics…"), id="stats-text", markup=False)

    def on_mount(self) -> None:
        self._compute()

    @work(exclusive=True, group="session-stats", exit_on_error=False)
    async def _compute(self) -> None:
        from pitui.compaction.session_stats import session_stats

        snapshot = take_snapshot(self.pitui.store)

        def run() -> str:
            store = snapshot.open()
            try:
                return stats_text(session_stats(store))
            finally:
                store.close()

        try:
            text = await asyncio.to_thread(run)
        except Exception as exc:  # a broken file: say so, never a traceback
            text = f"Could not compute the statistics: {exc}"
        finally:
            snapshot.discard()
        self.query_one("#stats-text", Static).update(Content(text))

    def action_close(self) -> None:
        self.dismiss(None)


async def cmd_session(ctx: CommandContext, arg: str) -> None:
    ctx.app.push_screen(SessionStatsScreen())
