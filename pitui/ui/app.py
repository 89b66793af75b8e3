"""``PituiApp``: the Textual application. It holds the session store and the agent; screens and
widgets render store state and post actions back, they never keep a copy of the conversation.

It is also the error boundary (:mod:`pitui.ui.boundary`): no key binding, command-palette
entry, slash command or worker can take it down.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.actions import ActionParseResult
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.driver import Driver
from textual.screen import Screen
from textual.worker import WorkerFailed

from pitui import collector
from pitui.config.paths import log_file
from pitui.config.settings import Settings
from pitui.errors import UserError
from pitui.session import SessionStore
from pitui.text import strip_escapes
from pitui.ui import textual_patches
from pitui.ui.boundary import ErrorBoundary
from pitui.ui.bridge import StoreBridge
from pitui.ui.commands import SlashCommands
from pitui.ui.key_routing import KeyRouter
from pitui.ui.messages import FileChanged, SessionSwitched
from pitui.ui.textual_patches.app import ErrorHookApp
from pitui.ui.workspace_bridge import attach_workspace

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from pitui.agent.session import AgentSession
    from pitui.ui.screens.main import MainScreen
    from pitui.ui.widgets.notice import Severity

log = logging.getLogger("pitui.ui")


class PituiApp(ErrorHookApp[int]):
    """The full-screen app. ``clock`` is injectable so snapshots are deterministic."""

    CSS_PATH: ClassVar[str] = "app.tcss"
    TITLE = "pitui"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]
    COMMANDS = App.COMMANDS | {SlashCommands}

    def __init__(
        self,
        store: SessionStore,
        *,
        agent_factory: Callable[[SessionStore], AgentSession] | None = None,
        settings: Settings | None = None,
        cwd: str | Path | None = None,
        clock: Callable[[], float] = time.time,
        session_folder: Path | None = None,
        demo: bool = False,
        status_note: str | None = None,
        startup_warnings: list[str] | None = None,
        open_picker: bool = False,
        log_path: Path | None = None,
        ask_missing_cwd: bool = False,
    ) -> None:
        super().__init__()
        textual_patches.install()  # Alt+Enter, a lone Esc at once, frames paint what changed
        self.settings = settings or Settings()
        self.cwd = Path(cwd or store.cwd or ".")
        self.clock = clock
        self.session_folder = session_folder or store.folder
        self.demo = demo
        self.status_note = status_note
        self.startup_warnings = startup_warnings or []
        self.open_picker = open_picker
        self.agent_factory = agent_factory
        self.errors = ErrorBoundary(self, log_path or log_file())
        self.key_router = KeyRouter(self)
        """Keys in the order they came, type-ahead kept out of dialogs (issue 30, 29)."""
        self.ask_missing_cwd = ask_missing_cwd
        """Ask where to work when a session's own directory is gone (``pitui`` does, unless
        the user said where with ``--cwd``; tests over fixtures from elsewhere do not)."""
        self._working_here: set[str] = set()
        """Stored directories that no longer exist and whose sessions work in :attr:`cwd`
        for this run (the user chose "continue here"; asked again next time)."""
        self._offered_take_over = False
        self.store = store
        self.agent: AgentSession | None = self._new_agent(store)
        self.bridge = StoreBridge(self)
        self.bridge.attach(store, self.agent)
        self._detach_workspace = attach_workspace(self, self.agent)  # checkpoints (issue 13)
        self._signals: list[int] = []
        self._quitting = False
        self._watchdog: threading.Timer | None = None
        self.after_first_frame: list[Callable[[], None]] = []
        """Called once, on the event loop, when the main screen's first frame is shown."""
        self.after_first_frame.append(self._start_checkpoints)
        self.exit_deadline: float | None = None
        """Set by ``pitui`` itself (never in tests): after a SIGTERM or SIGHUP, the process is
        ended this many seconds later whatever still runs."""
        self.leave_at_once = False
        """Set by ``pitui`` itself (never in tests): after a clean quit the process ends the
        moment the terminal is restored, once the session is closed (:meth:`terminal_restored`),
        without taking down the widgets, the threads and a large heap one by one."""
        self._session_closed = False
        self._leaving = False

    # ------------------------------------------------------------------ sessions

    def switch_session(self, store: SessionStore) -> None:
        """Close the current session (recording its leaf) and show ``store``."""
        old = self.store
        if self.agent is not None and self.agent.running:
            self.agent.abort()
        self.bridge.detach()
        self._detach_workspace()  # checkpoints wiring (issue 13)
        old.close()
        collector.thaw()  # frozen at start-up (pitui.cli.tui): the old session can be collected
        self.store = store
        self._offered_take_over = False
        self.agent = self._new_agent(store)
        self.bridge.attach(store, self.agent)
        self._detach_workspace = attach_workspace(self, self.agent)  # checkpoints (issue 13)
        self.bridge.publish(SessionSwitched(str(store.path) if store.path else None))
        self._start_checkpoints()

    def _start_checkpoints(self) -> None:
        """Capture the folder once, in a thread, as a session opens: the agent's first change
        then waits for no first capture of a big folder (issue 29)."""
        workspace = self.agent.workspace if self.agent is not None else None
        store = self.store
        if workspace is not None and not store.read_only and not store.stored_cwd_missing:
            workspace.start_warm_up()

    def _new_agent(self, store: SessionStore) -> AgentSession | None:
        agent = self.agent_factory(store) if self.agent_factory else None
        if agent is not None and store.cwd in self._working_here and store.stored_cwd_missing:
            agent.work_in(self.cwd)
        return agent

    # ------------------------------------------------------------------ a missing directory

    def ask_where_to_work(self, store: SessionStore, then: Callable[[str | None], None]) -> None:
        """``store``'s working directory is gone: ask (continue here / fork here / cancel)
        unless the user said where to work; ``then`` gets "continue", "fork" or None."""
        if not self.ask_missing_cwd or not store.stored_cwd_missing:
            then("continue")
            return
        if store.cwd in self._working_here:
            then("continue")
            return
        from pitui.ui.screens.read_only import MissingCwdScreen

        cancel = "quit" if store is self.store else "cancel"
        self.push_screen(MissingCwdScreen(store.cwd, str(self.cwd), cancel), then)

    def _work_here(self, store: SessionStore) -> None:
        self._working_here.add(store.cwd)
        if store is self.store and self.agent is not None:
            self.agent.work_in(self.cwd)
        self.say(f"Working in {self.cwd} (the session keeps its own directory).")

    def _fork_here(self, store: SessionStore) -> SessionStore:
        from pitui.session import fork_from

        folder = self.session_folder or store.folder
        if folder is None:
            raise UserError("This session has no folder to fork into.")
        return fork_from(store, str(self.cwd), folder)

    def _at_start_where_to_work(self, choice: str | None) -> None:
        with self.errors.guard("choosing where to work"):
            if choice is None:
                self.exit(return_code=0)
            elif choice == "fork":
                new = self._fork_here(self.store)
                self.switch_session(new)
                self.say(f"Forked into {new.path}.")
            else:
                self._work_here(self.store)

    # ------------------------------------------------------------------ notices

    def say(self, text: str, severity: Severity = "information", *, timeout: float = 6) -> None:
        """A notice: in the transcript, where it stays to be read; also a toast while the main
        screen is not on top (the tree, a dialog) or not shown yet. Transient news (copied,
        label set) is a toast only (``notify``)."""
        main = self.main_screen
        chat = None
        if main is not None and main.is_mounted:
            from pitui.ui.widgets.chat import ChatView

            with contextlib.suppress(Exception):
                chat = main.query_one(ChatView)
        if chat is not None:
            chat.add_notice(text, severity)
        if chat is None or self.screen is not main:
            self.notify(text, severity=severity, markup=False, timeout=timeout)

    @property
    def main_screen(self) -> MainScreen | None:
        """The main screen (chat, editor, status), wherever it is in the screen stack."""
        from pitui.ui.screens.main import MainScreen

        return next((s for s in self.screen_stack if isinstance(s, MainScreen)), None)

    def open_session_picker(self) -> None:
        """Choose another session (``/resume``, ``pitui --resume``) and switch to it."""
        from pitui.ui.screens.session_picker import SessionPickerScreen

        self.push_screen(SessionPickerScreen(), self._open_picked)

    def _open_picked(self, path: str | None) -> None:
        if not path:
            return
        with self.errors.guard("opening the session"):
            store = SessionStore.open(path)
            self.ask_where_to_work(store, lambda choice: self._resume_where(store, choice))

    def _resume_where(self, store: SessionStore, choice: str | None) -> None:
        with self.errors.guard("opening the session"):
            if choice is None:
                store.close()
                self.notify("Resume cancelled.", markup=False, timeout=3)
                return
            if choice == "fork":
                try:
                    new = self._fork_here(store)
                finally:
                    store.close()
                self.switch_session(new)
                self.say(f"Forked into {new.path}.")
                return
            missing = store.stored_cwd_missing and self.ask_missing_cwd
            if missing:
                self._working_here.add(store.cwd)
            self.switch_session(store)
            if missing:
                self._work_here(store)
            if store.read_only and store.read_only_reason:
                self.say(store.read_only_reason, "warning")

    # ------------------------------------------------------------------ read-only

    def run_slash(self, line: str) -> None:
        """Run a slash command as if typed in the editor."""
        main = self.main_screen
        if main is not None:
            main.run_command(line)

    def refuse_write(self) -> bool:
        """True, after saying so (one sentence, fork / clone offered), when the session cannot
        be written here; False when it can."""
        store = self.store
        if not store.read_only:
            return False
        from pitui.ui.screens.read_only import ReadOnlyScreen, refusal_sentence

        if not isinstance(self.screen, ReadOnlyScreen):
            self.push_screen(ReadOnlyScreen(refusal_sentence(store), store.lock_is_free()))
        return True

    def take_over(self) -> None:
        """Become the writer of the session another pitui had open (it has closed it)."""
        store = self.store
        if store.take_over():
            self.say("This pitui writes to the session now.")
        else:
            reason = store.read_only_reason or "The session is still open elsewhere."
            self.say(reason, "warning")
        self._refresh_status()

    def _refresh_status(self) -> None:
        from pitui.ui.widgets.status import StatusLine

        main = self.main_screen
        if main is not None:
            with contextlib.suppress(Exception):
                main.query_one(StatusLine).refresh_status()

    def _offer_take_over(self) -> None:
        """Once a second while another pitui holds the session: has it let go?"""
        store = self.store
        if self._offered_take_over or not store.held_elsewhere or not store.lock_is_free():
            return
        from pitui.ui.screens.read_only import ReadOnlyScreen, freed_sentence

        self._offered_take_over = True
        self._refresh_status()
        if isinstance(self.screen, ReadOnlyScreen):
            self.screen.dismiss(None)
        self.push_screen(ReadOnlyScreen(freed_sentence(), can_take_over=True))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast, whoever raises it: no escape sequence or control character from a
        message (load warnings name a session's entry ids, notes name files) reaches the
        terminal: a window title, an OSC 52 clipboard write, a cursor move (issue 29)."""
        super().notify(
            strip_escapes(message),
            title=strip_escapes(title),
            severity=severity,
            timeout=timeout,
            markup=markup,
        )

    def on_mount(self) -> None:
        self.key_router.start()
        self._handle_termination_signals()
        # Another program may append to, replace or delete the file: look once a second.
        self.set_interval(1.0, self._look_at_the_file)
        self.call_after_refresh(self._startup_notices)
        if self.store.stored_cwd_missing and self.ask_missing_cwd:
            self.call_after_refresh(
                self.ask_where_to_work, self.store, self._at_start_where_to_work
            )
        elif self.open_picker:
            self.call_after_refresh(self.open_session_picker)

    def _startup_notices(self) -> None:
        """Load warnings and the read-only reason, in the transcript once it is shown."""
        for warning in self.startup_warnings[:5]:
            self.say(warning, "warning")
        if self.store.read_only and self.store.read_only_reason:
            self.say(self.store.read_only_reason, "warning")

    @property
    def take_over_offered(self) -> bool:
        """The other pitui closed the session and this one offered to take over."""
        return self._offered_take_over and self.store.held_elsewhere

    def _look_at_the_file(self) -> None:
        with contextlib.suppress(UserError, OSError):
            self.store.refresh()
            self._offer_take_over()

    def on_file_changed(self, message: FileChanged) -> None:
        """Say it once, and offer to reopen the file or save a copy."""
        from pitui.ui.screens.file_changed import FileChangedScreen

        if isinstance(self.screen, FileChangedScreen):
            return
        self.push_screen(FileChangedScreen(message.message, message.can_reopen))

    def on_unmount(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in self._signals:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signum)
        self._close_session()

    def _close_session(self) -> None:
        if self._session_closed:
            return
        self._session_closed = True
        self.bridge.detach()
        self.store.close()

    # ------------------------------------------------------------------ leaving

    def _handle_termination_signals(self) -> None:
        """SIGTERM and SIGHUP (the terminal window was closed) quit like Ctrl+Q."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, self._on_termination_signal, signum)
                self._signals.append(signum)

    def _on_termination_signal(self, signum: int) -> None:
        code = 128 + signum  # the shell's convention: 143 for SIGTERM, 129 for SIGHUP
        if self._quitting:  # a second signal: stop waiting for anything
            from pitui.agent.tools import kill_running_commands

            kill_running_commands()
            self.exit(return_code=code)
            return
        if self.exit_deadline is not None:
            self._watchdog = threading.Timer(self.exit_deadline, _end_process, (code,))
            self._watchdog.daemon = True
            self._watchdog.start()
        self.run_worker(self.quit_cleanly(code), group="quit", exit_on_error=False)

    async def action_quit(self) -> None:
        """Ctrl+Q and /quit."""
        await self.quit_cleanly(0)

    async def quit_cleanly(self, return_code: int = 0) -> None:
        """The one way out (Ctrl+Q, /quit, SIGTERM, SIGHUP, a closed terminal), within a
        second: abort the run (the partial reply is stored as aborted, tool commands are
        stopped), then exit; ``on_unmount`` closes the session (leaf marker, lock)."""
        self._quitting = True
        agent = self.agent
        if agent is not None and agent.running:
            await agent.stop()
        if _terminal_gone():
            # The window was closed: there is no terminal to restore, and Textual's shutdown
            # would block writing to it. Close the session here and leave.
            self._close_session()
            _end_process(return_code)
        self._leaving = self.leave_at_once  # the process ends once the terminal is back
        self.exit(return_code=return_code)

    def terminal_restored(self) -> None:
        """The driver handed the terminal back. After a clean quit (see :attr:`leave_at_once`)
        the process ends here, once the session is closed (flushed, leaf marker written, lock
        released) and the logs are flushed: what is skipped is Textual taking down each widget
        and the interpreter its heap (0.1 s and more after a long conversation, on a terminal
        already handed back)."""
        if not self._leaving:
            return
        code = self.return_code or 0
        try:
            self._close_session()
        except Exception:
            log.exception("closing the session on quit failed")
            code = code or 1
        logging.shutdown()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        _end_process(code)

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, except in a Linux or macOS terminal: there, :class:`PituiDriver`
        (its input thread stops at once, so quitting hands the terminal back without a wait).
        ``TEXTUAL_DRIVER`` still chooses, as in any Textual app."""
        default = super().get_driver_class()
        from textual.drivers.linux_driver import LinuxDriver

        if default is LinuxDriver:
            from pitui.ui.textual_patches.driver import PituiDriver

            return PituiDriver
        return default

    def get_default_screen(self) -> Any:
        from pitui.ui.screens.main import MainScreen

        return MainScreen()

    # ------------------------------------------------------------------ keys

    async def on_event(self, event: events.Event) -> None:
        if (
            isinstance(event, events.Key)
            and not event.is_forwarded
            and await self.key_router.route(event)
        ):
            return
        await super().on_event(event)

    # ------------------------------------------------------------------ the error boundary

    async def run_action(
        self,
        action: str | ActionParseResult,
        default_namespace: DOMNode | None = None,
        namespaces: Mapping[str, DOMNode] | None = None,
    ) -> bool:
        """Every key binding runs through here: what an action raises is reported."""
        try:
            return await super().run_action(action, default_namespace, namespaces)
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            raise
        except Exception as error:
            name = action if isinstance(action, str) else action[1]
            self.errors.report(error, f"running the action {name!r}")
            return True

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's own palette entries, each behind the boundary too."""
        for command in super().get_system_commands(screen):
            yield SystemCommand(
                command.title,
                command.help,
                self.errors.wrap(command.callback, f"running {command.title!r}"),
                command.discover,
            )

    def unhandled_error(self, error: Exception) -> bool:
        """Anything unhandled (Textual's hook; by default the app exits). A worker that failed
        is over and left nothing half-done in the UI: reported, and the app goes on."""
        if isinstance(error, WorkerFailed) and isinstance(error.error, Exception):
            self.errors.report(error.error, "running a background task")
            return True
        log.critical("unhandled error: pitui exits", exc_info=error)
        return False


def _terminal_gone() -> bool:
    """True when the controlling terminal hung up (its window was closed): EIO on it."""
    for stream in (sys.__stdout__, sys.__stdin__):
        try:
            fd = stream.fileno() if stream is not None else -1
            if fd >= 0:
                termios.tcgetattr(fd)
        except termios.error as exc:
            if exc.args and exc.args[0] == errno.EIO:
                return True
        except (OSError, ValueError):
            continue
    return False


def _end_process(code: int) -> None:
    """The last resort: stop the tools' commands and end the process now."""
    from pitui.agent.tools import kill_running_commands, remove_empty_output_dirs

    kill_running_commands()
    remove_empty_output_dirs()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(code)
