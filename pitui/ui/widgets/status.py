"""The status line: model, thinking level, context gauge, session name, branch position, and
a spinner with elapsed time (or a retry countdown) while the agent works."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.content import Content
from textual.widgets import Static

from pitui.agent.events import CompactionEnd, MessageEnd, RetryScheduled, RunEnded
from pitui.ui.messages import AgentUpdate, EntryAppended, LeafMoved, SessionSwitched

if TYPE_CHECKING:
    from pitui.ui.app import PituiApp

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def short_tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1000:
        return f"{round(n / 1000)}k"
    return str(n)


class StatusLine(Static):
    """One line under the editor. It reads the store and the agent; it owns nothing."""

    DEFAULT_CSS: ClassVar[str] = """
    StatusLine { height: 1; padding: 0 1; color: $text-muted; background: $panel; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", markup=False, **kwargs)  # type: ignore[arg-type]
        self._busy_since: float | None = None
        self._retry_until: float | None = None
        self._frame = 0
        self._after_compaction = False

    @property
    def pitui(self) -> PituiApp:
        return self.app  # type: ignore[return-value]

    def on_mount(self) -> None:
        self.pitui.bridge.signal.subscribe(self, self._on_session_event)
        self.set_interval(0.1, self._tick, pause=False)
        self.refresh_status()

    def _on_session_event(self, message: object) -> None:
        if isinstance(message, AgentUpdate):
            event = message.event
            if isinstance(event, RetryScheduled):
                self._retry_until = self.pitui.clock() + event.delay
            elif isinstance(event, CompactionEnd) and event.entry_id:
                self._after_compaction = True
            elif isinstance(event, MessageEnd) and event.message.get("role") == "assistant":
                self._retry_until = None
                if event.message.get("stopReason") not in ("error", "aborted"):
                    self._after_compaction = False
            elif isinstance(event, RunEnded):
                self._busy_since = None
                self._retry_until = None
        if isinstance(message, EntryAppended | LeafMoved | SessionSwitched | AgentUpdate):
            self.refresh_status()

    def mark_busy(self) -> None:
        self._busy_since = self.pitui.clock()
        self.refresh_status()

    def _tick(self) -> None:
        if self._busy_since is not None:
            self._frame = (self._frame + 1) % len(SPINNER)
            self.refresh_status()

    def gauge(self) -> str:
        agent = self.pitui.agent
        if agent is None or agent.model_info is None:
            return ""
        window = agent.model_info.context_window
        used = "?" if self._after_compaction else short_tokens(agent.compactor.context_tokens())
        return f"{used}/{short_tokens(window)}" if window else f"{used}/? (auto-compaction off)"

    def branch_position(self) -> str:
        store = self.pitui.store
        path = store.path_to()
        for node in reversed(path):
            parent = node.parent
            siblings = store.tree_children(parent.id if parent else None)
            if len(siblings) > 1:
                index = next((i for i, s in enumerate(siblings) if s.id == node.id), 0)
                return f"branch {index + 1} of {len(siblings)}"
        return ""

    def render_text(self) -> str:
        app = self.pitui
        agent = app.agent
        parts: list[str] = []
        if agent is None or agent.model_name is None:
            parts.append(app.status_note or "No model: start with --model provider/name.")
        else:
            problem = agent.problem()
            parts.append(f"{agent.model_name}" + (" (demo)" if app.demo else ""))
            parts.append(f"thinking {agent.thinking}")
            gauge = self.gauge()
            if gauge:
                parts.append(gauge)
            if problem:
                parts.append(problem)
        if app.store.session_name:
            parts.append(app.store.session_name)
        position = self.branch_position()
        if position:
            parts.append(position)
        if self._busy_since is not None:
            now = app.clock()
            if self._retry_until is not None and self._retry_until > now:
                parts.append(f"{SPINNER[self._frame]} retrying in {self._retry_until - now:.0f}s")
            else:
                parts.append(f"{SPINNER[self._frame]} {now - self._busy_since:.0f}s")
        return "  ·  ".join(parts)

    def refresh_status(self) -> None:
        self.update(Content(self.render_text()))
