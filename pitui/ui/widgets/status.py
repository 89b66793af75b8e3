"""The status line: model, thinking level, context gauge, session name, branch position, and
a spinner with elapsed time (or a retry countdown) while the agent works.

Cheap by construction: everything done per store event is O(change). The parts that need the
store (gauge, branch position, session name) are cached and recomputed once per burst of
events; an append at the leaf updates the branch position from what is cached (a new branch
only when the leaf already had children); a moved leaf recomputes it in a worker thread
(without the whole-tree children index). The spinner tick only re-renders the cached parts.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, ClassVar

from textual import work
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget

from pitui.agent.events import (
    CompactionEnd,
    CompactionStart,
    MessageEnd,
    MessageStart,
    RetryScheduled,
    RunEnded,
    RunError,
)
from pitui.compaction.tokens import cache_hit_ratio
from pitui.session.node import Node
from pitui.session.store import BranchPosition
from pitui.text import terminal_line, tilde_path
from pitui.ui.app_state import UsesApp
from pitui.ui.messages import (
    AgentUpdate,
    EntryAppended,
    FileChanged,
    LeafMoved,
    SessionSwitched,
    WriterChanged,
)

SYNC_POSITION_ENTRIES = 50_000
"""Up to this many entries the branch position is computed at once; above, in a thread."""
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SEPARATOR = "  ·  "
NO_MODEL = "No model: start pitui with --model provider/name or set defaultModel in settings."


DROP_FIRST = ("cache", "thinking", "position", "session")
"""Parts left out, in this order, when the line is too narrow; then the directory is cut to
its last part, then the line to the width, with an ellipsis."""


def _joined(parts: list[tuple[str, Content]]) -> Content:
    return Content(SEPARATOR).join(content for _, content in parts)


def _fit(parts: list[tuple[str, Content]], room: int) -> Content:
    """The parts joined, within ``room`` cells (see :data:`DROP_FIRST`)."""
    line = _joined(parts)
    for name in DROP_FIRST:
        if line.cell_length <= room:
            return line
        parts = [part for part in parts if part[0] != name]
        line = _joined(parts)
    if line.cell_length > room and parts and parts[-1][0] == "cwd":
        tail = parts[-1][1].plain.rstrip(os.sep).rsplit(os.sep, 1)[-1]
        parts = [*parts[:-1], ("cwd", Content(f"…{os.sep}{tail}"))]
        line = _joined(parts)
    if line.cell_length > room:
        line = line.truncate(max(0, room), ellipsis=True) if room > 0 else Content("")
    return line


def short_tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1000:
        return f"{round(n / 1000)}k"
    return str(n)


def elapsed_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


class StatusLine(UsesApp, Widget):
    """One line under the editor. It reads the store and the agent; it owns nothing."""

    DEFAULT_CSS: ClassVar[str] = """
    StatusLine { height: 1; padding: 0 1; color: $text-muted; background: $panel; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._busy_since: float | None = None
        self._agent_busy = False
        self._compacting = False
        self._retry: tuple[float, int, int] | None = None  # (until, attempt, max attempts)
        self._frame = 0
        self._timer: Timer | None = None
        self._dirty = True
        self._refresh_scheduled = False
        # Cached store-derived parts (see _recompute).
        self._gauge: Content = Content("")
        self._cache = ""
        self._session_name = ""
        self._position = ""
        # What the branch position reflects: the leaf and how many children it has.
        self._position_leaf: str | None = None
        self._leaf_children = 0
        self._position_stale = True
        self._shown = False  # the first frame has been asked for (positions may be computed)

    def on_mount(self) -> None:
        self.pitui.bridge.signal.subscribe(self, self._on_session_event)
        self._timer = self.set_interval(0.1, self._tick, pause=True)
        self._recompute()
        self._shown = True
        # "branch i of n" is not needed for the first frame (a walk of the path)
        self.call_after_refresh(self._update_position)

    # ------------------------------------------------------------------ events

    def _on_session_event(self, message: object) -> None:
        if isinstance(message, AgentUpdate):
            self._on_agent_event(message.event)
        elif isinstance(message, EntryAppended):
            self._on_append(message)
            self._invalidate()
        elif isinstance(message, LeafMoved):
            if message.new_leaf_id != self._position_leaf:
                self._position_stale = True
            self._invalidate()
        elif isinstance(message, WriterChanged | FileChanged):
            self.refresh()  # the read-only banner comes or goes
        elif isinstance(message, SessionSwitched):
            self._agent_busy = self._compacting = False
            self._retry = None
            self._update_busy()
            self._position_stale = True
            self._invalidate()

    def _on_append(self, message: EntryAppended) -> None:
        """An entry appended at the leaf the position reflects: follow it without a walk."""
        if self._position_stale or message.parent_id != self._position_leaf:
            self._position_stale = True
            return
        store = self.pitui.store
        if message.entry_id in store and store.node(message.entry_id).hidden:
            return
        if self._leaf_children:
            # The leaf had children: this append starts a new branch there, the newest one.
            count = self._leaf_children + 1
            self._position = f"branch {count} of {count}"
        self._position_leaf = message.entry_id
        self._leaf_children = 0

    def _on_agent_event(self, event: object) -> None:
        if isinstance(event, MessageStart):
            self._agent_busy = True
            self._retry = None
            self._update_busy()
        elif isinstance(event, RetryScheduled):
            until = self.pitui.clock() + event.delay
            self._retry = (until, event.attempt, event.max_attempts)
            self.refresh()
        elif isinstance(event, CompactionStart):
            self._compacting = True
            self._update_busy()
        elif isinstance(event, CompactionEnd):
            self._compacting = False
            self._update_busy()
            self._invalidate()
        elif isinstance(event, RunEnded):
            self._agent_busy = self._compacting = False
            self._retry = None
            self._update_busy()
            self._invalidate()
        elif isinstance(event, MessageEnd):
            self._invalidate()
        elif isinstance(event, RunError) and event.kind == "config":
            # The run never started (no RunEnded follows).
            self._agent_busy = False
            self._update_busy()

    def mark_busy(self) -> None:
        """The app started a run (shown at once, before the first agent event)."""
        self._agent_busy = True
        self._update_busy()

    @property
    def busy(self) -> bool:
        return self._busy_since is not None

    def _update_busy(self) -> None:
        busy = self._agent_busy or self._compacting
        if busy and self._busy_since is None:
            self._busy_since = self.pitui.clock()
            self._frame = 0
            if self._timer is not None:
                self._timer.resume()
        elif not busy and self._busy_since is not None:
            self._busy_since = None
            if self._timer is not None:
                self._timer.pause()
        self.refresh()

    def _tick(self) -> None:
        if self._busy_since is not None:
            self._frame = (self._frame + 1) % len(SPINNER)
            self.refresh()

    # ------------------------------------------------------------------ cached parts

    def _invalidate(self) -> None:
        """Recompute the store-derived parts once, after the current burst of events."""
        self._dirty = True
        if not self._refresh_scheduled:
            self._refresh_scheduled = True
            self.call_later(self._recompute)

    def _recompute(self) -> None:
        self._refresh_scheduled = False
        if not self._dirty:
            return
        self._dirty = False
        store = self.pitui.store
        compacted, reply = self._last_answer()
        self._gauge = self.gauge(compacted)
        ratio = cache_hit_ratio(reply.get("usage")) if reply is not None else None
        self._cache = f"cache {ratio:.0%}" if ratio is not None else ""
        self._session_name = terminal_line(store.session_name or "")
        if self._shown:  # the first position is found after the first frame
            self._update_position()
        self.refresh()

    def _update_position(self) -> None:
        store = self.pitui.store
        if self._position_stale:
            self._position_stale = False
            if store.entry_count <= SYNC_POSITION_ENTRIES:
                self._set_position(store.leaf_id, store.branch_position(store.leaf_id))
            else:
                self._locate(store.leaf_id)
            self.refresh()

    def _set_position(self, leaf_id: str | None, position: BranchPosition) -> None:
        self._position_leaf = leaf_id
        self._leaf_children = position.leaf_children
        self._position = position.text()

    @work(group="status-branch-position", exclusive=True, exit_on_error=False)
    async def _locate(self, leaf_id: str | None) -> None:
        """The branch position of ``leaf_id``, computed off the event loop."""
        store = self.pitui.store
        position = await asyncio.to_thread(store.branch_position, leaf_id)
        if self.pitui.store is not store or store.leaf_id != leaf_id or self._position_stale:
            return  # the leaf moved again meanwhile: that move computes its own
        self._set_position(leaf_id, position)
        self.refresh()

    def gauge(self, compacted_since_reply: bool | None = None) -> Content:
        """``84k/200k``; ``?`` for the used part after a compaction, until the next reply."""
        agent = self.pitui.agent
        if agent is None or agent.model_name is None:
            return Content("")
        window = agent.compactor.context_window
        unknown = self._last_answer()[0] if compacted_since_reply is None else compacted_since_reply
        used_tokens: int | None = None
        if not unknown:
            try:
                used_tokens = agent.compactor.context_tokens()
            except Exception:
                used_tokens = None
        used = "?" if used_tokens is None else short_tokens(used_tokens)
        text = f"{used}/{short_tokens(window)}" if window else f"{used}/?"
        style = ""
        if window and used_tokens is not None:
            ratio = used_tokens / window
            style = "$error" if ratio >= 0.9 else "$warning" if ratio >= 0.75 else ""
        return Content.styled(text, style) if style else Content(text)

    def _last_answer(self) -> tuple[bool, dict[str, Any] | None]:
        """(a compaction is newer than the last answered reply, that reply): a walk up from
        the leaf that stops at the first answered reply or compaction (short, never the path)."""
        store = self.pitui.store
        node: Node | None = store.leaf
        while node is not None:
            if node.type == "compaction":
                return True, None
            if node.type == "message" and node.role == "assistant":
                message = store.data(node).get("message") or {}
                if message.get("stopReason") not in ("error", "aborted"):
                    return False, message
            node = node.parent
        return False, None

    # ------------------------------------------------------------------ rendering

    def read_only_banner(self) -> Content:
        """``read-only · open in pid N`` while this pitui cannot write the session."""
        app = self.pitui
        store = app.store
        if not store.read_only:
            return Content("")
        if app.take_over_offered:
            text = "read-only · closed elsewhere: /takeover"
        elif store.held_elsewhere:
            text = f"read-only · open in {terminal_line(store.holder or 'another pitui')}"
        else:
            text = "read-only"
        return Content.styled(text, "bold $warning")

    def left_parts(self) -> list[tuple[str, Content]]:
        """The left side's parts, named (see :data:`DROP_FIRST`), in display order."""
        app = self.pitui
        agent = app.agent
        parts: list[tuple[str, Content]] = []
        banner = self.read_only_banner()
        if banner:
            parts.append(("banner", banner))
        if agent is None or agent.model_name is None:
            note = app.status_note or NO_MODEL
            parts.append(("model", Content.styled(note, "$warning")))
        else:
            name = terminal_line(agent.model_name) + (" (demo)" if app.demo else "")
            parts.append(("model", Content.styled(name, "bold")))
            parts.append(("thinking", Content(f"thinking {agent.thinking}")))
            if self._gauge:
                parts.append(("gauge", self._gauge))
            if self._cache:
                parts.append(("cache", Content(self._cache)))
            problem = agent.problem() or agent.model_warning()
            if problem:
                parts.append(("problem", Content.styled(terminal_line(problem), "$warning")))
        mode = self.approval_mode()
        if mode:
            parts.append(("mode", mode))
        if self._session_name:
            parts.append(("session", Content(self._session_name)))
        if self._position:
            parts.append(("position", Content(self._position)))
        parts.append(("cwd", Content(tilde_path(self.working_directory()))))
        return parts

    def approval_mode(self) -> Content:
        """``approve: ask`` or ``approve: read-only``; nothing for ``auto`` (pi's way)."""
        agent = self.pitui.agent
        workspace = agent.workspace if agent is not None else None
        mode = workspace.approvals.mode if workspace is not None else "auto"
        if mode == "auto":
            return Content("")
        return Content.styled(
            f"approve: {mode}", "$text-warning" if mode == "ask" else "bold $warning"
        )

    def working_directory(self) -> str:
        """Where the tools run (the agent's directory, else the app's)."""
        agent = self.pitui.agent
        return str(agent.cwd if agent is not None else self.pitui.cwd)

    def activity(self) -> Content:
        if self._busy_since is None:
            return Content("")
        now = self.pitui.clock()
        spinner = SPINNER[self._frame]
        if self._retry is not None and self._retry[0] > now:
            until, attempt, total = self._retry
            return Content.styled(
                f"{spinner} retrying in {until - now:.0f}s ({attempt}/{total})", "$warning"
            )
        label = "compacting" if self._compacting else "working"
        return Content.styled(
            f"{spinner} {label} {elapsed_text(now - self._busy_since)}", "$accent"
        )

    def render_text(self) -> str:
        """The whole line as plain text (tests, and the source of :meth:`render`)."""
        return str(self._assemble(None))

    def _assemble(self, width: int | None) -> Content:
        right = self.activity()
        parts = self.left_parts()
        if width is None:
            left = _joined(parts)
            return Content.assemble(left, SEPARATOR, right) if right else left
        room = width - (right.cell_length + 2 if right else 0)
        left = _fit(parts, room)
        if not right:
            return left
        gap = max(2, width - left.cell_length - right.cell_length)
        return Content.assemble(left, " " * gap, right)

    def render(self) -> Content:
        return self._assemble(self.content_region.width or None)

    def refresh_status(self) -> None:
        """Recompute everything now (after a change the bridge does not announce)."""
        self._dirty = True
        self._position_stale = True
        self._recompute()
