"""``PituiApp``: the Textual application. It holds the session store and the agent; screens and
widgets render store state and post actions back, they never keep a copy of the conversation."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.bridge import StoreBridge
from pitui.ui.commands import SlashCommands
from pitui.ui.messages import SessionSwitched
from pitui.ui.workspace_bridge import attach_workspace

if TYPE_CHECKING:
    from pitui.agent.session import AgentSession


class PituiApp(App[int]):
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
    ) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.cwd = Path(cwd or store.cwd or ".")
        self.clock = clock
        self.session_folder = session_folder or store.folder
        self.demo = demo
        self.status_note = status_note
        self.startup_warnings = startup_warnings or []
        self.open_picker = open_picker
        self.agent_factory = agent_factory
        self.store = store
        self.agent: AgentSession | None = agent_factory(store) if agent_factory else None
        self.bridge = StoreBridge(self)
        self.bridge.attach(store, self.agent)
        self._detach_workspace = attach_workspace(self, self.agent)  # checkpoints (issue 13)

    # ------------------------------------------------------------------ sessions

    def switch_session(self, store: SessionStore) -> None:
        """Close the current session (recording its leaf) and show ``store``."""
        old = self.store
        if self.agent is not None and self.agent.running:
            self.agent.abort()
        self.bridge.detach()
        self._detach_workspace()  # checkpoints wiring (issue 13)
        old.close()
        self.store = store
        self.agent = self.agent_factory(store) if self.agent_factory else None
        self.bridge.attach(store, self.agent)
        self._detach_workspace = attach_workspace(self, self.agent)  # checkpoints (issue 13)
        self.bridge.publish(SessionSwitched(str(store.path) if store.path else None))

    def on_mount(self) -> None:
        for warning in self.startup_warnings[:5]:
            self.notify(warning, severity="warning", markup=False, timeout=6)
        if self.store.read_only and self.store.read_only_reason:
            self.notify(self.store.read_only_reason, severity="warning", markup=False, timeout=8)
        if self.open_picker:
            self.call_after_refresh(self._open_picker)

    def _open_picker(self) -> None:
        from pitui.ui.commands import CommandContext, cmd_resume

        self.run_worker(cmd_resume(CommandContext(self, self.screen), ""))  # type: ignore[arg-type]

    def on_unmount(self) -> None:
        self.bridge.detach()
        self.store.close()

    def get_default_screen(self) -> Any:
        from pitui.ui.screens.main import MainScreen

        return MainScreen()
