"""Live tool output: what a running tool prints becomes :class:`ToolOutput` events.

Pieces are redacted as they arrive (a key value split across two pieces is still caught), then
coalesced: at most one event per ``OUTPUT_INTERVAL`` seconds, so a command that prints
thousands of lines a second costs the listeners a few events a second. What waits for the next
event is bounded too: when more than ``MAX_PENDING`` characters pile up, only the newest are
kept and the event says how many line breaks were left out.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from pitui.agent.events import AgentEvent, ToolOutput
from pitui.agent.tools.environment import Redactor

OUTPUT_INTERVAL = 1 / 30
"""Seconds between two events of one call (about a frame of the TUI)."""
MAX_PENDING = 64 * 1024
"""Characters held for the next event; older ones are dropped (the event counts their lines)."""


class ToolOutputStream:
    """Feeds one tool call's output to ``emit`` as throttled, redacted :class:`ToolOutput`."""

    def __init__(
        self,
        call_id: str,
        redactor: Redactor,
        emit: Callable[[AgentEvent], None],
        *,
        interval: float = OUTPUT_INTERVAL,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self.call_id = call_id
        self._redact = redactor.stream()
        self._emit = emit
        self._interval = interval
        self._max_pending = max_pending
        self._pending: list[str] = []
        self._size = 0
        self._omitted_lines = 0
        self._cut = False
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    def feed(self, text: str) -> None:
        """A piece of output as the tool read it (not yet redacted)."""
        if self._closed:
            return
        text = self._redact.feed(text)
        if not text:
            return
        self._pending.append(text)
        self._size += len(text)
        if self._size > self._max_pending:
            self._drop_oldest()
        self._schedule()

    def _drop_oldest(self) -> None:
        text = "".join(self._pending)
        start = len(text) - self._max_pending
        newline = text.find("\n", start)
        if newline != -1 and newline + 1 < len(text):
            start = newline + 1  # keep whole lines where there are any
        self._omitted_lines += text.count("\n", 0, start)
        self._cut = True
        kept = text[start:]
        self._pending = [kept]
        self._size = len(kept)

    def _schedule(self) -> None:
        if self._timer is not None:
            return
        delay = self._last + self._interval - time.monotonic()
        if delay <= 0:
            self.flush()
            return
        self._timer = asyncio.get_running_loop().call_later(delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self.flush()

    def flush(self) -> None:
        """Emit what is pending now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending:
            return
        text = "".join(self._pending)
        event = ToolOutput(self.call_id, text, self._omitted_lines, self._cut)
        self._pending.clear()
        self._size = 0
        self._omitted_lines = 0
        self._cut = False
        self._last = time.monotonic()
        self._emit(event)

    def close(self) -> None:
        """The tool ended: emit the rest (held back as a possible key start) and stop."""
        if self._closed:
            return
        rest = self._redact.flush()
        if rest:
            self._pending.append(rest)
        self.flush()
        self._closed = True
