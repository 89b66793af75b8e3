"""Events an agent run emits (the UI and print mode render them; nothing here is stored).

Frozen ``msgspec`` structs rather than dataclasses: the same fields, equality and repr, but a
class costs microseconds to define instead of a millisecond (this module is on the path to
the TUI's first frame)."""

from __future__ import annotations

from typing import Any

import msgspec


class MessageStart(msgspec.Struct, frozen=True):
    role: str


class MessageDelta(msgspec.Struct, frozen=True):
    kind: str  # "text" | "thinking" | "toolCall"
    text: str


class MessageEnd(msgspec.Struct, frozen=True):
    entry_id: str
    message: dict[str, Any]


class ToolStart(msgspec.Struct, frozen=True):
    call_id: str
    name: str
    arguments: dict[str, Any]


class ToolOutput(msgspec.Struct, frozen=True):
    """Output a running tool produced since its last ``ToolOutput`` (the bash tool's output as
    it is read; credential values already redacted; not sanitized: renderers do that).

    Emitted at most every ``OUTPUT_INTERVAL`` seconds per call. When the command printed faster
    than that, only the newest part is sent: ``omitted_lines`` line breaks were left out
    before ``text``, and ``cut`` says ``text`` does not continue the previous event's text.
    """

    call_id: str
    text: str
    omitted_lines: int = 0
    cut: bool = False


class ToolEnd(msgspec.Struct, frozen=True):
    call_id: str
    name: str
    entry_id: str
    is_error: bool
    message: dict[str, Any]


class RetryScheduled(msgspec.Struct, frozen=True):
    attempt: int
    max_attempts: int
    delay: float
    error: str


class RunError(msgspec.Struct, frozen=True):
    kind: str  # "overflow" | "retryable" | "auth" | "model" | "refused" | "other" | "config"
    message: str


class ReplyTruncated(msgspec.Struct, frozen=True):
    """The reply stopped at the model's output limit (``stopReason: "length"``)."""

    output_tokens: int


class CompactionStart(msgspec.Struct, frozen=True):
    reason: str  # "manual" | "threshold" | "overflow"


class CompactionEnd(msgspec.Struct, frozen=True):
    reason: str
    entry_id: str | None = None
    tokens_before: int | None = None
    error: str | None = None
    cancelled: bool = False
    will_retry: bool = False


class ApprovalDecided(msgspec.Struct, frozen=True):
    """A tool call was allowed or refused by the approval mode (``by``: who decided)."""

    tool: str
    subject: str
    allowed: bool
    by: str


class CheckpointNote(msgspec.Struct, frozen=True):
    """Something the user should know about file checkpoints (they are off, one failed);
    ``progress``: only what is being done (a wait for the first capture), not a problem."""

    message: str
    progress: bool = False


class UserCommandStart(msgspec.Struct, frozen=True):
    """The user's ``!command`` (``excluded``: ``!!command``) started; its output comes as
    :class:`ToolOutput` events with the same ``call_id``."""

    call_id: str
    command: str
    excluded: bool


class UserCommandEnd(msgspec.Struct, frozen=True):
    """The user's command ended. ``message`` is its ``bashExecution`` message; ``entry_id``
    the entry it was stored as, or None while a run keeps it waiting (it is stored when the
    run ends) or when it did not run (``error`` says why)."""

    call_id: str
    message: dict[str, Any] | None
    entry_id: str | None = None
    error: str | None = None


class RunEnded(msgspec.Struct, frozen=True):
    reason: str  # "done" | "error" | "aborted"


AgentEvent = (
    MessageStart
    | MessageDelta
    | MessageEnd
    | ToolStart
    | ToolOutput
    | ToolEnd
    | RetryScheduled
    | RunError
    | ReplyTruncated
    | CompactionStart
    | CompactionEnd
    | ApprovalDecided
    | CheckpointNote
    | UserCommandStart
    | UserCommandEnd
    | RunEnded
)
