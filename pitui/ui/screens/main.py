"""The main screen: chat pane, prompt editor, status line; slash commands and keys."""

from __future__ import annotations

import time
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen

from pitui.ui.app_state import UsesApp
from pitui.ui.commands import COMMANDS, CommandContext, run_command
from pitui.ui.widgets.chat import ChatView
from pitui.ui.widgets.prompt import PromptEditor
from pitui.ui.widgets.status import StatusLine

DOUBLE_ESCAPE = 0.5


class MainScreen(UsesApp, Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "escape", "Abort / tree (twice)", show=True),
        Binding("ctrl+c", "interrupt", "Abort / copy", show=False, priority=True),
        Binding("ctrl+t", "tree", "Tree"),
        Binding("f1", "help", "Help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._last_escape = 0.0

    def compose(self) -> ComposeResult:
        app = self.pitui
        yield ChatView(id="chat")
        editor = PromptEditor(
            commands=sorted(COMMANDS),
            history=lambda limit: app.store.recent_user_texts(limit),
            id="prompt",
        )
        if not app.settings.ui.cursor_blink:
            editor.cursor_blink = False
        yield editor
        yield StatusLine(id="status")

    def on_mount(self) -> None:
        self.query_one(PromptEditor).focus()
        if self.pitui.agent is not None:
            # The provider layer takes seconds to import: do it off the event loop, after the
            # first frame, so the first request does not freeze the screen.
            self.call_after_refresh(self._preload_provider)

    def _preload_provider(self) -> None:
        from pitui.llm.lazy import preload

        preload()

    # ------------------------------------------------------------------ prompts

    @on(PromptEditor.Submitted)
    def on_submit(self, event: PromptEditor.Submitted) -> None:
        event.stop()
        text = event.text
        if text.startswith("/"):
            self.run_command(text)
            return
        with self.pitui.errors.guard("sending the prompt"):
            self.send_prompt(text)

    def run_command(self, line: str) -> None:
        """Run a slash command (in a worker, behind the error boundary)."""
        self.run_worker(run_command(CommandContext(self.pitui, self), line), group="command")

    def send_prompt(self, text: str) -> None:
        app = self.pitui
        agent = app.agent
        if agent is None:
            self.notify(app.status_note or "No model is configured.", severity="warning")
            return
        if agent.running:
            agent.steer(text)
            self.notify("Queued: delivered after the current tool batch.", timeout=3)
            return
        problem = agent.problem()
        if problem:
            self.notify(problem, severity="error", markup=False)
            return
        self.query_one(StatusLine).mark_busy()
        self._run_agent(text)

    @work(group="agent")
    async def _run_agent(self, text: str) -> None:
        agent = self.pitui.agent
        assert agent is not None
        result = await self.pitui.errors.run(agent.prompt(text), "running the agent")
        if result is not None and result.error is not None:
            self.notify(result.error.message, severity="error", markup=False, timeout=8)

    # ------------------------------------------------------------------ keys

    def action_escape(self) -> None:
        agent = self.pitui.agent
        if agent is not None and agent.running:
            agent.abort()
            self.notify("Aborted.", timeout=2)
            return
        editor = self.query_one(PromptEditor)
        now = time.monotonic()
        if editor.text == "" and now - self._last_escape <= DOUBLE_ESCAPE:
            self._last_escape = 0.0
            self.action_tree()
            return
        self._last_escape = now

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "interrupt":
            # Only while the agent works; otherwise Ctrl+C copies the selection (Textual).
            agent = self.pitui.agent
            return agent is not None and agent.running
        return True

    def action_interrupt(self) -> None:
        agent = self.pitui.agent
        if agent is not None and agent.running:
            agent.abort()
            self.notify("Aborted.", timeout=2)

    def action_tree(self) -> None:
        self.open_tree()

    def open_tree(self, initial_tab: str = "entry") -> None:
        """The tree browser; a user message selected there comes back into the editor."""
        from pitui.ui.screens.tree_browser import tree_browser

        self.app.push_screen(tree_browser(self.pitui, initial_tab), self._after_tree)

    def _after_tree(self, editor_text: str | None) -> None:
        """The tree browser returns the text of a selected user message (edit and resubmit)."""
        with self.pitui.errors.guard("returning from the tree"):
            editor = self.query_one(PromptEditor)
            if editor_text and not editor.text:
                editor.set_text(editor_text)
            editor.focus()

    def action_help(self) -> None:
        self.run_command("/help")
