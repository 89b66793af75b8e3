"""The main screen: chat pane, prompt editor, status line; slash commands and keys.

Keys go to the prompt editor, always: a click or a mouse selection in the chat never takes the
focus, and PgUp/PgDn/Ctrl+Home/Ctrl+End scroll the chat from the editor. Ctrl+C aborts a run;
when idle it copies the mouse selection (or the editor's), else it does what Textual does."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path
from typing import ClassVar

from textual import events, on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from pitui.agent.mentions import Prompt, expand_mentions, might_mention
from pitui.agent.project_files import ProjectFiles
from pitui.agent.user_command import parse_user_command
from pitui.config.history import PromptHistory, merge_history
from pitui.ui.app_state import UsesApp
from pitui.ui.commands import COMMANDS, CommandContext, run_command
from pitui.ui.widgets.chat import ChatView
from pitui.ui.widgets.file_picker import FileMenu
from pitui.ui.widgets.prompt import CommandMenu, PromptEditor
from pitui.ui.widgets.status import StatusLine

DOUBLE_ESCAPE = 0.5
log = logging.getLogger("pitui.ui")


class MainScreen(UsesApp, Screen[None]):
    AUTO_FOCUS: ClassVar[str | None] = "#prompt"
    """The editor, never the chat: focusing the chat first (Textual's default, the first
    focusable widget) restyles every block in it, twice, before the first frame."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "escape", "Abort / tree (twice)", show=True),
        Binding("ctrl+c", "interrupt", "Abort / copy", show=False, priority=True),
        Binding("ctrl+t", "tree", "Tree"),
        Binding("ctrl+o", "toggle_tools", "Expand/collapse tools"),
        Binding("f1", "help", "Help"),
        Binding("pageup", "chat_page(-1)", "Scroll up", show=False, priority=True),
        Binding("pagedown", "chat_page(1)", "Scroll down", show=False, priority=True),
        Binding("ctrl+home", "chat_home", "Oldest", show=False, priority=True),
        Binding("ctrl+end", "chat_end", "Latest", show=False, priority=True),
    ]
    DEFAULT_CSS: ClassVar[str] = """
    MainScreen > #new-below {
        display: none; width: 100%; height: 1; padding: 0 2;
        content-align: center middle; color: $text-accent; background: $boost;
    }
    MainScreen > #new-below.-shown { display: block; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._last_escape = 0.0
        self._saved_prompts: list[str] | None = None  # the project's history file, once read
        self._files: ProjectFiles | None = None  # the @ picker's list of the project's files
        self._expanding = asyncio.Lock()  # prompts with @files keep their order

    def compose(self) -> ComposeResult:
        app = self.pitui
        yield ChatView(id="chat")
        yield NewBelowMarker(Content(NEW_BELOW), id="new-below")
        editor = PromptEditor(
            commands=sorted(COMMANDS),
            history=self._prompt_history,
            files=self.project_files,
            id="prompt",
        )
        if not app.settings.ui.cursor_blink:
            editor.cursor_blink = False
        yield CommandMenu(editor.command_help, id="command-menu")
        yield FileMenu(id="file-menu")
        yield editor
        yield StatusLine(id="status")

    def on_mount(self) -> None:
        self.query_one(PromptEditor).focus()
        self.watch(self.query_one(ChatView), "new_below", self._show_new_below)
        if self.pitui.agent is not None:
            # The provider code (the model's wire API and httpx; litellm for the providers
            # pitui does not speak itself) is imported off the event loop, after the first
            # frame, so the first request does not freeze the screen.
            self.call_after_refresh(self._preload_provider)
        self.call_after_refresh(self._warm_up)
        self.call_after_refresh(self._read_saved_prompts)

    def _show_new_below(self, shown: bool) -> None:
        self.query_one(NewBelowMarker).set_class(shown, "-shown")

    def _warm_up(self) -> None:
        hooks = list(self.pitui.after_first_frame)
        self.pitui.after_first_frame.clear()
        for hook in hooks:
            hook()
        from pitui.ui.after_first_frame import warm_up

        # In a thread, after the first frame: the first reply (and the first summary) shows
        # without waiting for what it imports and builds on first use.
        threading.Thread(target=warm_up, name="pitui-warm-up", daemon=True).start()

    def _preload_provider(self) -> None:
        from pitui.llm.preload import preload

        # The loop's thread pool, with one idle thread, before the import starts: the first
        # ``asyncio.to_thread`` (the checkpoint store, opened as a prompt is sent) would
        # otherwise import and spawn it while the import holds the interpreter (70 ms).
        asyncio.get_running_loop().run_in_executor(None, int)
        agent = self.pitui.agent
        preload(agent.route if agent is not None else None)

    # ------------------------------------------------------------------ prompts

    @property
    def prompt_history_file(self) -> PromptHistory:
        """This project's prompt history (kept across sessions, see pitui.config.history)."""
        return PromptHistory.for_project(self.pitui.cwd)

    @work(thread=True, group="prompt-history", exit_on_error=False)
    def _read_saved_prompts(self) -> None:
        saved = self.prompt_history_file.load()
        self.app.call_from_thread(setattr, self, "_saved_prompts", saved)

    def _prompt_history(self, limit: int) -> list[str]:
        """The editor's history, asked at its first Up: the project's saved prompts (read now
        if the thread started after the first frame has not yet), after the session's own."""
        saved = self._saved_prompts
        if saved is None:
            saved = self._saved_prompts = self.prompt_history_file.load()
        return merge_history(saved, self.pitui.store.recent_user_texts(limit))[-limit:]

    @work(thread=True, group="prompt-history", exit_on_error=False)
    def _save_prompt(self, text: str) -> None:
        try:
            self.prompt_history_file.add(text)
        except OSError as exc:
            log.warning("could not save the prompt history: %s", exc)

    @on(PromptEditor.MenuChanged)
    def on_menu_changed(self, event: PromptEditor.MenuChanged) -> None:
        event.stop()
        self.query_one(CommandMenu).show(event.editor, event.matches, event.index)

    @on(PromptEditor.FilesChanged)
    def on_files_changed(self, event: PromptEditor.FilesChanged) -> None:
        event.stop()
        self.query_one(FileMenu).show(
            event.editor, event.query, event.matches, event.index, truncated=event.truncated
        )

    @property
    def project_root(self) -> Path:
        """Where ``@path`` is looked up: the folder the agent works in."""
        agent = self.pitui.agent
        return agent.cwd if agent is not None else Path(self.pitui.cwd).resolve()

    def project_files(self) -> ProjectFiles:
        """The project's files for the ``@`` picker (listed in a thread when first searched)."""
        root = self.project_root
        if self._files is None or self._files.root != root:
            self._files = ProjectFiles(root)
        return self._files

    async def _with_files(self, text: str) -> str | Prompt:
        """``text`` with the files its ``@`` mentions name (read in a thread), in the order
        the prompts were sent."""
        async with self._expanding:
            if not might_mention(text):
                return text
            prompt = await asyncio.to_thread(expand_mentions, text, self.project_root)
            return prompt if prompt.files else text

    @on(PromptEditor.Submitted)
    def on_submit(self, event: PromptEditor.Submitted) -> None:
        event.stop()
        text = event.text
        self._save_prompt(text)
        if text.startswith("/"):
            self.run_command(text)
            return
        shell = parse_user_command(text)
        if shell is not None:
            with self.pitui.errors.guard("running the command"):
                self.run_user_command(text, *shell)
            return
        self.query_one(ChatView).jump_to_end()  # what is sent, and the reply, are in view
        with self.pitui.errors.guard("sending the prompt"):
            self.send_prompt(text)

    def run_command(self, line: str) -> None:
        """Run a slash command (in a worker, behind the error boundary)."""
        self.run_worker(run_command(CommandContext(self.pitui, self), line), group="command")

    def _keep_in_editor(self, text: str) -> None:
        """A refused prompt or command goes back into the editor (nothing typed is lost),
        unless something new was typed there meanwhile."""
        editor = self.query_one(PromptEditor)
        if not editor.text:
            editor.set_text(text)

    def send_prompt(self, text: str) -> None:
        """Send ``text``; a refused prompt stays in the editor (nothing typed is lost) and the
        transcript says why and what to do."""
        app = self.pitui
        editor = self.query_one(PromptEditor)
        if app.refuse_write():
            self._keep_in_editor(text)  # kept for a fork or a clone
            return
        agent = app.agent
        if agent is None:
            self._keep_in_editor(text)
            app.say(no_model_sentence(app.status_note), "warning")
            return
        if agent.running:
            editor.hint_newline()
            self._steer(text)
            app.say("Queued: delivered after the current tool batch.")
            return
        problem = agent.problem()
        if problem:
            self._keep_in_editor(text)
            app.say(no_model_sentence(None) if agent.model_ref is None else problem, "warning")
            return
        editor.hint_newline()
        self.query_one(StatusLine).mark_busy()
        self._run_agent(text)

    def run_user_command(self, text: str, command: str, excluded: bool) -> None:
        """``!command`` (``excluded``: ``!!command``): run it, its output in the chat (see
        :mod:`pitui.agent.user_command`); refused, it stays in the editor with the reason."""
        app = self.pitui
        if app.refuse_write():
            self._keep_in_editor(text)
            return
        agent = app.agent
        if agent is None:
            self._keep_in_editor(text)
            app.say("Commands run in a session with an agent; this one has none.", "warning")
            return
        problem = agent.user_commands.refusal(command)
        if problem is not None:
            self._keep_in_editor(text)
            app.say(problem, "warning")
            return
        self.query_one(ChatView).jump_to_end()
        self._run_user_command(command, excluded)

    @work(group="user-command")
    async def _run_user_command(self, command: str, excluded: bool) -> None:
        agent = self.pitui.agent
        assert agent is not None
        # A refusal (UserCommandRefused) is said as its sentence by the error boundary.
        await self.pitui.errors.run(
            agent.user_commands.run(command, excluded=excluded), "running the command"
        )

    @work(group="steer")
    async def _steer(self, text: str) -> None:
        agent = self.pitui.agent
        assert agent is not None
        prompt = await self._with_files(text)
        if agent.running:
            agent.steer(prompt)
        else:  # the run ended while the files were read
            self._run_agent(prompt)

    @work(group="agent")
    async def _run_agent(self, text: str | Prompt) -> None:
        agent = self.pitui.agent
        assert agent is not None
        prompt = await self._with_files(text) if isinstance(text, str) else text
        result = await self.pitui.errors.run(agent.prompt(prompt), "running the agent")
        if result is not None and result.error is not None:
            self.pitui.say(result.error.message, "error")

    # ------------------------------------------------------------------ keys

    def action_escape(self) -> None:
        agent = self.pitui.agent
        if agent is not None and agent.user_commands.stop():
            self.notify("Command stopped.", timeout=2)
            return
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

    def action_interrupt(self) -> None:
        """Ctrl+C: abort the run; when idle, copy the selection (the mouse selection in the
        chat, else the editor's); with nothing selected, Textual's own Ctrl+C (a note that
        Ctrl+Q quits)."""
        agent = self.pitui.agent
        if agent is not None and agent.user_commands.stop():
            self.notify("Command stopped.", timeout=2)
            return
        if agent is not None and agent.running:
            agent.abort()
            self.notify("Aborted.", timeout=2)
            return
        text = self.get_selected_text() or self.query_one(PromptEditor).selected_text
        if not text:
            raise SkipAction()
        from pitui.ui.commands import copy_text

        self.notify(copy_text(self.pitui, text), markup=False, timeout=4)

    # ------------------------------------------------------------------ the chat from the editor

    def action_chat_page(self, step: int) -> None:
        self.query_one(ChatView).page(step)

    def action_chat_home(self) -> None:
        self.query_one(ChatView).scroll_home(animate=False)

    def action_chat_end(self) -> None:
        self.query_one(ChatView).jump_to_end()

    def on_key(self, event: events.Key) -> None:
        """Typing that reached the screen goes into the editor: the focus is elsewhere (after
        Tab), or was nowhere when the key was read (just after start: the editor may have the
        focus by now, but this key went past it)."""
        if not event.is_printable or event.character is None:
            return
        editor = self.query_one(PromptEditor)
        focused = self.focused
        in_chat = focused is not None and self.query_one(ChatView) in focused.ancestors_with_self
        if focused is None or focused is editor or (in_chat and event.character != " "):
            event.stop()
            if not editor.has_focus:
                editor.focus()
            editor.insert(event.character)

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
            if self.focused is not editor:
                editor.focus()  # (focusing again would lay the whole chat out once more)

    def action_toggle_tools(self) -> None:
        self.query_one(ChatView).toggle_tools()

    def action_help(self) -> None:
        self.run_command("/help")


NEW_BELOW = "↓ new messages below · Ctrl+End"


def no_model_sentence(note: str | None) -> str:
    """Why a prompt was not sent without a model, and how to set one (the settings file's
    path), or try the offline demo."""
    from pitui.config.settings import user_settings_path
    from pitui.text import tilde_path

    why = (note or "No model is configured").rstrip(".")
    settings = tilde_path(str(user_settings_path()))
    return (
        f"{why}: the prompt was not sent (it is still in the editor). Start pitui with "
        "--model provider/name (its API key in the provider's variable, e.g. "
        f"ANTHROPIC_API_KEY), or set defaultModel in {settings}; pitui --demo tries an "
        "offline demo model."
    )


class NewBelowMarker(Static):
    """Shown while the reader is scrolled up and something new arrived; a click jumps there."""

    def on_click(self, event: events.Click) -> None:
        event.stop()
        chat = self.screen.query_one(ChatView)
        chat.jump_to_end()
