"""``/fork``: pick a user message; a new session starts just before it, with its text ready."""

from __future__ import annotations

from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from pitui.session import SessionError, fork
from pitui.text import strip_escapes
from pitui.ui import restore_flow  # checkpoints wiring (issue 13)
from pitui.ui.app_state import UsesApp


class ForkPickerScreen(UsesApp, ModalScreen[None]):
    DEFAULT_CSS: ClassVar[str] = """
    ForkPickerScreen { align: center middle; }
    ForkPickerScreen > OptionList { width: 90%; max-height: 80%; border: round $primary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Cancel")]

    def compose(self) -> ComposeResult:
        messages = self.pitui.store.user_messages()
        if not messages:
            yield Label("No user messages to fork from yet. Esc closes.")
            return
        options = [
            Option(Content(" ".join(strip_escapes(text).split())[:120]), id=entry_id)
            for entry_id, text in messages
        ]
        yield OptionList(*options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        entry_id = event.option.id
        if entry_id is None:
            return
        self._fork(entry_id)

    @work(group="fork", exclusive=True, exit_on_error=False)
    async def _fork(self, entry_id: str) -> None:
        app = self.pitui
        # --- checkpoints wiring (issue 13): the new session may start from other files.
        pending = await restore_flow.offer_restore(app, entry_id, fork=True)
        if pending is restore_flow.Cancelled.CANCELLED:
            return
        await restore_flow.save_current_files(pending)
        # --- end of checkpoints wiring
        try:
            new, text = fork(app.store, entry_id)
        except SessionError as exc:
            app.notify(str(exc), severity="warning", markup=False)
            return
        await restore_flow.finish_restore(app, pending, moved=True)  # checkpoints wiring
        self.dismiss(None)
        app.switch_session(new)
        from pitui.ui.widgets.prompt import PromptEditor

        app.screen.query_one(PromptEditor).set_text(text)
        app.notify("Forked into a new session; edit and send the prompt.", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)
