"""``ApprovalPrompt``: approval mode ``ask`` asks before a write, an edit or a command.

Shows the command (bash) or the diff the call would make (write, edit), and dismisses with the
answer: ``y`` yes, ``n`` no (also Esc), ``Alt+P`` always for this command prefix (or this
file; for a destructive command, exactly this command), ``Alt+S`` always for this tool in this
session. An "always" answer takes a deliberate key: never a letter met in text, never a bare
Enter (Enter on an "always" row that the user moved to with the arrows chooses it). Keys typed
while the dialog opened never answer it (:mod:`pitui.ui.key_routing`). :func:`asker_for` turns
it into the workspace's asker (the agent awaits the answer; the app stays responsive
meanwhile).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from pitui.agent.approval import Answer, ApprovalRequest, Asker
from pitui.ui.key_routing import AnswersByKey
from pitui.ui.widgets.files_view import clean

if TYPE_CHECKING:
    from textual.app import App

MAX_PREVIEW_LINES = 400


def preview_content(request: ApprovalRequest) -> Content:
    parts: list[tuple[str, str] | str] = []
    lines = request.preview[:MAX_PREVIEW_LINES]
    for i, line in enumerate(lines):
        text = clean(line)
        if i:
            parts.append("\n")
        if request.tool == "bash":
            parts.append((("$ " if i == 0 else "  ") + text, "bold"))
        elif text.startswith("+"):
            parts.append((text, "$text-success"))
        elif text.startswith("-"):
            parts.append((text, "$text-error"))
        elif text.startswith("@@"):
            parts.append((text, "$text-accent"))
        else:
            parts.append(text)
    if len(request.preview) > MAX_PREVIEW_LINES:
        parts += ["\n", (f"… {len(request.preview) - MAX_PREVIEW_LINES} more lines", "$text-muted")]
    return Content.assemble(*parts) if parts else Content("(nothing to show)")


ALWAYS_KEYS = {"prefix": "alt+p", "session": "alt+s"}
"""The deliberate keys of the "always" answers."""


class ApprovalPrompt(AnswersByKey, ModalScreen[Answer]):
    """Allow this tool call?"""

    DEFAULT_CSS: ClassVar[str] = """
    ApprovalPrompt { align: center middle; }
    ApprovalPrompt > #approval-dialog {
        width: 90%;
        max-width: 120;
        height: auto;
        max-height: 85%;
        border: round $warning;
        background: $panel;
        padding: 0 1;
    }
    ApprovalPrompt .-title { text-style: bold; margin-bottom: 1; }
    ApprovalPrompt .-note { color: $text-muted; margin-top: 1; }
    ApprovalPrompt #approval-preview {
        height: auto;
        max-height: 24;
        border: round $border-blurred;
        padding: 0 1;
    }
    ApprovalPrompt OptionList, ApprovalPrompt OptionList:focus {
        height: auto; border: none; padding: 0; margin-top: 1; background: $panel;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('yes')", "Yes"),
        Binding("n", "answer('no')", "No"),
        Binding(ALWAYS_KEYS["prefix"], "answer('prefix')", "Always (prefix)"),
        Binding(ALWAYS_KEYS["session"], "answer('session')", "Always (session)"),
        Binding("escape", "answer('no')", "No"),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request

    def title_text(self) -> str:
        request = self.request
        if request.tool == "bash":
            return "Run this command?"
        if request.tool in ("write", "edit"):
            verb = "Write" if request.tool == "write" else "Edit"
            return f"{verb} {clean(request.subject)}?"
        return f"Run the {clean(request.tool)} tool ({clean(request.subject)[:80]})?"

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="approval-dialog"):
            yield Static(Content(self.title_text()), classes="-title")
            with VerticalScroll(id="approval-preview"):
                yield Static(preview_content(request), id="approval-preview-text", markup=False)
            options = [
                Option(Content("y      Yes"), id="yes"),
                Option(Content("n      No (the model is told you declined)"), id="no"),
            ]
            if request.prefix_rule:
                if request.exact:
                    rule = "exactly this command (it deletes, overwrites or runs others)"
                elif request.tool == "bash":
                    rule = f"commands matching {clean(request.prefix_rule)}"
                else:
                    rule = f"{request.tool} of {clean(request.prefix_rule)}"
                options.append(Option(Content(f"Alt+P  Always allow {rule}"), id="prefix"))
            scope = "file edits" if request.session_scope == "files" else request.tool
            options.append(
                Option(Content(f"Alt+S  Always allow {clean(scope)} in this session"), id="session")
            )
            yield OptionList(*options, id="approval-options")
            yield Static(
                Content("Approval mode: ask (--approve, or the approval setting)."),
                classes="-note",
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected, "#approval-options")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.action_answer(event.option.id)

    def action_answer(self, answer: str) -> None:
        if answer == "prefix" and not self.request.prefix_rule:
            return
        if answer in ("yes", "no", "prefix", "session"):
            self.dismiss(answer)  # type: ignore[arg-type]


def asker_for(app: App[Any]) -> Asker:
    """The workspace's asker for ``app``: push the prompt, wait for the answer."""

    async def ask(request: ApprovalRequest) -> Answer:
        answered: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()

        def done(answer: Answer | None) -> None:
            if not answered.done():
                answered.set_result(answer or "no")

        app.push_screen(ApprovalPrompt(request), done)
        try:
            return await answered
        except asyncio.CancelledError:
            # The run was aborted (Esc in the main screen) while the question was open.
            if isinstance(app.screen, ApprovalPrompt):
                app.screen.dismiss("no")
            raise

    return ask
