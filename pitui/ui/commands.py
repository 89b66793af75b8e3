"""Slash commands (also offered in the command palette)."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from pitui.session import SessionError, SessionStore, clone
from pitui.session.shapes import is_conversation, message_text

if TYPE_CHECKING:
    from textual.screen import Screen

    from pitui.ui.app import PituiApp


@dataclass
class CommandContext:
    app: PituiApp
    screen: Screen[None]

    def say(self, text: str, severity: str = "information", timeout: float = 4) -> None:
        self.app.notify(text, severity=severity, markup=False, timeout=timeout)  # type: ignore[arg-type]


Handler = Callable[[CommandContext, str], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    handler: Handler
    usage: str = ""


async def cmd_tree(ctx: CommandContext, arg: str) -> None:
    ctx.screen.action_tree()  # type: ignore[attr-defined]


async def cmd_context(ctx: CommandContext, arg: str) -> None:
    from pitui.ui.screens.tree_browser import tree_browser

    after = getattr(ctx.screen, "_after_tree", None)  # puts a selected prompt in the editor
    ctx.app.push_screen(tree_browser(ctx.app, initial_tab="context"), after)


async def cmd_fork(ctx: CommandContext, arg: str) -> None:
    from pitui.ui.screens.fork_picker import ForkPickerScreen

    ctx.app.push_screen(ForkPickerScreen())


async def cmd_clone(ctx: CommandContext, arg: str) -> None:
    try:
        new = clone(ctx.app.store)
    except SessionError as exc:
        ctx.say(str(exc), "warning")
        return
    ctx.app.switch_session(new)
    ctx.say(f"Cloned the active branch into {new.path.name if new.path else 'memory'}.")


async def cmd_compact(ctx: CommandContext, arg: str) -> None:
    from pitui.agent.compactor import CompactionFailed

    agent = ctx.app.agent
    if agent is None:
        ctx.say("No model is configured to write the summary.", "warning")
        return
    ctx.say("Compacting… (Esc cancels)", timeout=3)
    try:
        result = await agent.compact(arg or None)
    except CompactionFailed as exc:
        ctx.say(str(exc), "warning")
        return
    except Exception as exc:
        ctx.say(f"Compaction failed: {exc}", "error")
        return
    ctx.say(f"Compacted from {result.tokens_before:,} tokens.")


async def cmd_model(ctx: CommandContext, arg: str) -> None:
    agent = ctx.app.agent
    if agent is None:
        ctx.say("Start pitui with --model to use a model.", "warning")
        return
    if not arg:
        ctx.say(f"Model: {agent.model_name or 'none'}. Use /model provider/name to switch.")
        return
    agent.set_model(arg.strip())
    problem = agent.problem()
    ctx.say(problem or f"Model: {agent.model_name}.", "warning" if problem else "information")


async def cmd_thinking(ctx: CommandContext, arg: str) -> None:
    from pitui.agent.session import THINKING_LEVELS, AgentError

    agent = ctx.app.agent
    if agent is None:
        ctx.say("No model is configured.", "warning")
        return
    if not arg:
        ctx.say(f"Thinking: {agent.thinking} (one of {', '.join(THINKING_LEVELS)}).")
        return
    try:
        agent.set_thinking(arg.strip())
    except AgentError as exc:
        ctx.say(str(exc), "warning")
        return
    ctx.say(f"Thinking: {agent.thinking}.")


async def cmd_name(ctx: CommandContext, arg: str) -> None:
    ctx.app.store.append_session_info(arg)
    name = ctx.app.store.session_name
    ctx.say(f"Session name: {name}." if name else "Session name cleared.")


async def cmd_label(ctx: CommandContext, arg: str) -> None:
    store = ctx.app.store
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
    from pitui.ui.screens.session_picker import SessionPickerScreen

    def opened(path: str | None) -> None:
        if not path:
            return
        try:
            store = SessionStore.open(path)
        except SessionError as exc:
            ctx.say(str(exc), "error")
            return
        ctx.app.switch_session(store)

    ctx.app.push_screen(SessionPickerScreen(), opened)


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
    ctx.say(copy_text(ctx.app, text))


async def cmd_export(ctx: CommandContext, arg: str) -> None:
    from pitui.export import export_html, export_jsonl

    parts = shlex.split(arg) if arg else []
    kind = parts[0] if parts and parts[0] in ("html", "jsonl") else "html"
    rest = parts[1:] if parts and parts[0] in ("html", "jsonl") else parts
    store = ctx.app.store
    stem = store.path.stem if store.path else f"session-{store.session_id[:8]}"
    target = Path(rest[0]) if rest else Path(ctx.app.cwd) / f"{stem}.{kind}"
    try:
        if kind == "html":
            export_html(store, target)
        else:
            export_jsonl(store, target)
    except OSError as exc:
        ctx.say(f"Could not export to {target}: {exc.strerror}.", "error")
        return
    ctx.say(f"Exported to {target}.")


async def cmd_help(ctx: CommandContext, arg: str) -> None:
    from pitui.ui.screens.help import HelpScreen

    ctx.app.push_screen(HelpScreen(COMMANDS))


async def cmd_quit(ctx: CommandContext, arg: str) -> None:
    ctx.app.exit()


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in [
        Command("tree", "Browse the session tree", cmd_tree),
        Command("fork", "New session from an earlier user message", cmd_fork),
        Command("clone", "Copy the active branch into a new session", cmd_clone),
        Command("compact", "Summarize older messages now", cmd_compact, "[instructions]"),
        Command("model", "Show or switch the model", cmd_model, "[provider/name]"),
        Command("thinking", "Show or set the thinking level", cmd_thinking, "[level]"),
        Command("name", "Name the session (empty clears)", cmd_name, "[name]"),
        Command("label", "Label the current entry (empty clears)", cmd_label, "[text]"),
        Command("resume", "Open another session", cmd_resume),
        Command("new", "Start a new session", cmd_new),
        Command("copy", "Copy the last assistant message", cmd_copy),
        Command(
            "export",
            "Export as HTML (whole tree) or JSONL (branch)",
            cmd_export,
            "[html|jsonl] [path]",
        ),
        Command("context", "Show what the model sees now", cmd_context),
        Command("help", "Keys and commands", cmd_help),
        Command("quit", "Quit pitui", cmd_quit),
    ]
}


async def run_command(ctx: CommandContext, line: str) -> None:
    name, _, arg = line[1:].partition(" ")
    command = COMMANDS.get(name.strip())
    if command is None:
        ctx.say(f"Unknown command /{name}. /help lists them.", "warning")
        return
    await command.handler(ctx, arg.strip())


class SlashCommands(Provider):
    """The slash commands in Textual's command palette."""

    def _context(self) -> CommandContext | None:
        from pitui.ui.screens.main import MainScreen

        with contextlib.suppress(Exception):
            for screen in self.app.screen_stack:
                if isinstance(screen, MainScreen):
                    return CommandContext(self.app, screen)  # type: ignore[arg-type]
        return None

    async def discover(self) -> Hits:
        ctx = self._context()
        if ctx is None:
            return
        for command in COMMANDS.values():
            yield DiscoveryHit(
                f"/{command.name}", partial(self._run, ctx, command), help=command.help
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
                    partial(self._run, ctx, command),
                    help=command.help,
                )

    async def _run(self, ctx: CommandContext, command: Command) -> None:
        await command.handler(ctx, "")
