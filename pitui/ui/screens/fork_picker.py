"""``/fork``: pick a user message; a new session starts just before it, with its text ready."""

from __future__ import annotations

from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from pitui.session import SessionError, SessionStore, fork
from pitui.session.ids import iso_to_ms
from pitui.session.node import Node
from pitui.session.shapes import message_text
from pitui.text import one_line
from pitui.ui import restore_flow  # checkpoints wiring (issue 13)
from pitui.ui.app_state import UsesApp
from pitui.ui.screens.session_picker import format_age

REPLY_CHARS = 100


def prompt_rows(store: SessionStore, now: float) -> list[Option]:
    """One option per user message (every branch, file order): when it was sent, whether it is
    on the branch shown, the prompt, and the start of the reply that followed."""
    on_path = {node.id for node in store.path_to()}
    rows = []
    for entry_id, text in store.user_messages():
        node = store.node(entry_id)
        ms = iso_to_ms(node.timestamp)
        when = format_age(ms / 1000, now) if ms is not None else "undated"
        where = "" if entry_id in on_path else " · other branch"
        parts: list[str | tuple[str, str]] = [
            (f"{when}{where}", "$text-muted"),
            "\n",
            (one_line(text, 160), "bold"),
        ]
        reply = _reply_after(store, node)
        if reply:
            parts += ["\n", (f"↳ {one_line(reply, REPLY_CHARS)}", "$text-muted")]
        rows.append(Option(Content.assemble(*parts), id=entry_id))
    return rows


def _reply_after(store: SessionStore, node: Node) -> str:
    """The text of the first assistant reply under ``node`` (on its first branch, past a
    model or thinking change or a label), or ""."""
    children = store.children(node.id)
    for _ in range(3):
        if not children:
            return ""
        child = children[0]
        if child.type == "message" and child.role == "assistant":
            return message_text(store.data(child).get("message"), " ")
        children = store.children(child.id)
    return ""


class ForkPickerScreen(UsesApp, ModalScreen[None]):
    DEFAULT_CSS: ClassVar[str] = """
    ForkPickerScreen { align: center middle; }
    ForkPickerScreen > Vertical {
        width: 90%; height: auto; max-height: 85%; border: round $primary;
        background: $surface; padding: 0 1;
    }
    ForkPickerScreen .-title { text-style: bold; }
    ForkPickerScreen .-note { color: $text-muted; }
    ForkPickerScreen OptionList, ForkPickerScreen OptionList:focus {
        height: auto; max-height: 1fr; border: none; padding: 0; background: $surface;
    }
    ForkPickerScreen OptionList > .option-list--separator { color: $panel; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Cancel")]

    def compose(self) -> ComposeResult:
        app = self.pitui
        rows = prompt_rows(app.store, app.clock())
        with Vertical():
            if not rows:
                yield Label("No user messages to fork from yet. Esc closes.")
                return
            yield Static(
                Content("Fork from which prompt? A new session starts just before it."),
                classes="-title",
            )
            yield Static(
                Content("The prompt comes back in the editor to change and send."),
                classes="-note",
            )
            options: list[Option | None] = []
            for row in rows:
                if options:
                    options.append(None)  # a separator between prompts
                options.append(row)
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
        app.say("Forked into a new session; edit and send the prompt.")

    def action_close(self) -> None:
        self.dismiss(None)
