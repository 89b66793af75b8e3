"""Slash commands (also offered in the command palette).

Every command runs behind the app's error boundary (:func:`run_command`): a
:class:`~pitui.errors.UserError` it raises is shown as its sentence, anything else is logged
and named; the app goes on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from pitui.session import SessionStore, clone
from pitui.session.shapes import is_conversation, message_text
from pitui.text import terminal_line
from pitui.ui.app_state import UsesApp

if TYPE_CHECKING:
    from pitui.ui.app import PituiApp
    from pitui.ui.screens.main import MainScreen
    from pitui.ui.widgets.notice import Severity


@dataclass
class CommandContext:
    app: PituiApp
    screen: MainScreen

    def say(self, text: str, severity: Severity = "information") -> None:
        """A command's answer: in the transcript (it stays to be read)."""
        self.app.say(text, severity)

    def toast(self, text: str, timeout: float = 4) -> None:
        """Transient news (progress, copied): a toast only."""
        self.app.notify(text, markup=False, timeout=timeout)


Handler = Callable[[CommandContext, str], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    handler: Handler
    usage: str = ""


async def cmd_tree(ctx: CommandContext, arg: str) -> None:
    ctx.screen.open_tree()


async def cmd_context(ctx: CommandContext, arg: str) -> None:
    ctx.screen.open_tree(initial_tab="context")


async def cmd_fork(ctx: CommandContext, arg: str) -> None:
    from pitui.ui.screens.fork_picker import ForkPickerScreen

    ctx.app.push_screen(ForkPickerScreen())


async def cmd_clone(ctx: CommandContext, arg: str) -> None:
    new = clone(ctx.app.store)
    ctx.app.switch_session(new)
    ctx.say(f"Cloned the active branch into {new.path.name if new.path else 'memory'}.")


async def cmd_compact(ctx: CommandContext, arg: str) -> None:
    if ctx.app.refuse_write():
        return
    agent = ctx.app.agent
    if agent is None:
        ctx.say("No model is configured to write the summary.", "warning")
        return
    from pitui.agent.compactor import CompactionFailed

    ctx.toast("Compacting… (Esc cancels)", timeout=3)
    try:
        result = await agent.compact(arg or None)
    except CompactionFailed as exc:
        # A trace in the transcript, not a toast: the request failed, was cancelled, or the
        # model returned no summary; the session is unchanged.
        severity: Severity = "warning" if exc.cancelled else "error"
        ctx.say(f"{exc.message.rstrip('.')}: not compacted, the session is unchanged.", severity)
        return
    ctx.toast(f"Compacted from {result.tokens_before:,} tokens.")


async def cmd_model(ctx: CommandContext, arg: str) -> None:
    agent = ctx.app.agent
    if agent is None:
        ctx.say("Start pitui with --model to use a model.", "warning")
        return
    if not arg:
        ctx.say(f"Model: {agent.model_name or 'none'}. Use /model provider/name to switch.")
        return
    if ctx.app.refuse_write():
        return
    agent.set_model(arg.strip())
    problem = agent.problem()
    ctx.say(problem or f"Model: {agent.model_name}.", "warning" if problem else "information")


async def cmd_thinking(ctx: CommandContext, arg: str) -> None:
    from pitui.agent.session import THINKING_LEVELS

    agent = ctx.app.agent
    if agent is None:
        ctx.say("No model is configured.", "warning")
        return
    if not arg:
        ctx.say(f"Thinking: {agent.thinking} (one of {', '.join(THINKING_LEVELS)}).")
        return
    if ctx.app.refuse_write():
        return
    agent.set_thinking(arg.strip())
    ctx.say(f"Thinking: {agent.thinking}.")


CLEAR_NAME = ('""', "''")
"""``/name ""`` clears the name (a bare ``/name`` shows it, as pi)."""


async def cmd_name(ctx: CommandContext, arg: str) -> None:
    store = ctx.app.store
    if not arg:
        name = store.session_name
        ctx.say(
            f"Session name: {terminal_line(name)}"
            if name
            else 'This session has no name: /name NAME sets one, /name "" clears it.'
        )
        return
    if ctx.app.refuse_write():
        return
    store.append_session_info("" if arg in CLEAR_NAME else arg)
    name = store.session_name
    ctx.say(f"Session name: {terminal_line(name)}" if name else "Session name cleared.")


async def cmd_label(ctx: CommandContext, arg: str) -> None:
    store = ctx.app.store
    if ctx.app.refuse_write():
        return
    # The newest entry of the conversation (names, labels and settings changes are bookkeeping).
    target = next(
        (n.id for n in reversed(store.path_to()) if is_conversation(n.type, n.role)), None
    )
    if target is None:
        ctx.say("Nothing to label yet.", "warning")
        return
    store.append_label(target, arg.strip() or None)
    ctx.say(f"Labelled {target}: {arg.strip()}." if arg.strip() else "Label cleared.")


async def cmd_resume(ctx: CommandContext, arg: str) -> None:
    ctx.app.open_session_picker()


async def cmd_new(ctx: CommandContext, arg: str) -> None:
    app = ctx.app
    folder = app.session_folder
    store = (
        SessionStore.create(folder, str(app.cwd))
        if folder
        else SessionStore.in_memory(str(app.cwd))
    )
    app.switch_session(store)
    ctx.say("New session.")


def last_assistant_text(store: SessionStore) -> str | None:
    for node in reversed(store.path_to()):
        if node.type == "message" and node.role == "assistant":
            text = message_text(store.data(node).get("message"), "\n")
            if text:
                return text
    return None


def copy_text(app: PituiApp, text: str) -> str:
    """Copy with pyperclip, falling back to OSC 52; returns which way worked (one sentence)."""
    try:
        import pyperclip

        pyperclip.copy(text)
        return "Copied to the clipboard."
    except Exception:
        app.copy_to_clipboard(text)
        return "Copied through the terminal (OSC 52); your terminal must allow clipboard access."


async def cmd_copy(ctx: CommandContext, arg: str) -> None:
    text = last_assistant_text(ctx.app.store)
    if text is None:
        ctx.say("No assistant message to copy yet.", "warning")
        return
    ctx.toast(copy_text(ctx.app, text))


async def cmd_export(ctx: CommandContext, arg: str) -> None:
    from pitui.ui.export_command import cmd_export as run_export  # issue-14 wiring

    await run_export(ctx, arg)


async def cmd_session(ctx: CommandContext, arg: str) -> None:
    from pitui.ui.screens.session_stats import cmd_session as run_session  # issue-14 wiring

    await run_session(ctx, arg)


async def cmd_help(ctx: CommandContext, arg: str) -> None:
    from pitui.ui.screens.help import HelpScreen

    ctx.app.push_screen(HelpScreen(COMMANDS))


async def cmd_takeover(ctx: CommandContext, arg: str) -> None:
    store = ctx.app.store
    if not store.read_only:
        ctx.say("This pitui already writes to the session.")
    elif not store.held_elsewhere:
        ctx.say(store.read_only_reason or "This session is open read-only.", "warning")
    elif not store.lock_is_free():
        ctx.say(
            f"The session is still open in another pitui ({store.holder}): quit it there "
            "first, or /fork or /clone it.",
            "warning",
        )
    else:
        ctx.app.take_over()


async def cmd_quit(ctx: CommandContext, arg: str) -> None:
    await ctx.app.action_quit()  # the same clean path as Ctrl+Q


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in [
        Command("tree", "Browse the session tree", cmd_tree),
        Command("fork", "New session from an earlier user message", cmd_fork),
        Command("clone", "Copy the active branch into a new session", cmd_clone),
        Command("compact", "Summarize older messages now", cmd_compact, "[instructions]"),
        Command("model", "Show or switch the model", cmd_model, "[provider/name]"),
        Command("thinking", "Show or set the thinking level", cmd_thinking, "[level]"),
        Command("name", 'Show or set the session name (/name "" clears it)', cmd_name, "[name]"),
        Command("label", "Label the current entry (empty clears)", cmd_label, "[text]"),
        Command("resume", "Open another session", cmd_resume),
        Command(
            "takeover", "Write to a session another pitui had open, once it closed", cmd_takeover
        ),
        Command("new", "Start a new session", cmd_new),
        Command("copy", "Copy the last assistant message", cmd_copy),
        Command(  # issue-14 wiring: options as `pitui export`
            "export",
            "Export as HTML (whole tree), Markdown or JSONL (branch)",
            cmd_export,
            "[html|md|jsonl] [--leaf ID] [--branch-only] [path]",
        ),
        Command("session", "Session statistics: tokens, cost, branches", cmd_session),
        Command("context", "Show what the model sees now", cmd_context),
        Command("help", "Keys and commands", cmd_help),
        Command("quit", "Quit pitui", cmd_quit),
    ]
}


async def run_command(ctx: CommandContext, line: str) -> None:
    """Run ``/name arg`` behind the error boundary (it never raises)."""
    name, _, arg = line[1:].partition(" ")
    command = COMMANDS.get(name.strip())
    if command is None:
        ctx.say(f"Unknown command /{name}. /help lists them.", "warning")
        return
    await ctx.app.errors.run(command.handler(ctx, arg.strip()), f"running /{command.name}")


class SlashCommands(UsesApp, Provider):
    """The slash commands in Textual's command palette."""

    def _context(self) -> CommandContext | None:
        main = self.pitui.main_screen
        return CommandContext(self.pitui, main) if main is not None else None

    async def discover(self) -> Hits:
        ctx = self._context()
        if ctx is None:
            return
        for command in COMMANDS.values():
            yield DiscoveryHit(
                f"/{command.name}", partial(run_command, ctx, f"/{command.name}"), help=command.help
            )

    async def search(self, query: str) -> Hits:
        ctx = self._context()
        if ctx is None:
            return
        matcher = self.matcher(query)
        for command in COMMANDS.values():
            score = matcher.match(f"/{command.name} {command.help}")
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(f"/{command.name}"),
                    partial(run_command, ctx, f"/{command.name}"),
                    help=command.help,
                )
