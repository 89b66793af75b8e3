"""Events an agent run emits (the UI and print mode render them; nothing here is stored)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MessageStart:
    role: str


@dataclass(frozen=True)
class MessageDelta:
    kind: str  # "text" | "thinking" | "toolCall"
    text: str


@dataclass(frozen=True)
class MessageEnd:
    entry_id: str
    message: dict[str, Any]


@dataclass(frozen=True)
class ToolStart:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolOutput:
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


@dataclass(frozen=True)
class ToolEnd:
    call_id: str
    name: str
    entry_id: str
    is_error: bool
    message: dict[str, Any]


@dataclass(frozen=True)
class RetryScheduled:
    attempt: int
    max_attempts: int
    delay: float
    error: str


@dataclass(frozen=True)
class RunError:
    kind: str  # "overflow" | "retryable" | "auth" | "model" | "refused" | "other" | "config"
    message: str


@dataclass(frozen=True)
class ReplyTruncated:
    """The reply stopped at the model's output limit (``stopReason: "length"``)."""

    output_tokens: int


@dataclass(frozen=True)
class CompactionStart:
    reason: str  # "manual" | "threshold" | "overflow"


@dataclass(frozen=True)
class CompactionEnd:
    reason: str
    entry_id: str | None = None
    tokens_before: int | None = None
    error: str | None = None
    cancelled: bool = False
    will_retry: bool = False


@dataclass(frozen=True)
class ApprovalDecided:
    """A tool call was allowed or refused by the approval mode (``by``: who decided)."""

    tool: str
    subject: str
    allowed: bool
    by: str


@dataclass(frozen=True)
class CheckpointNote:
    """Something the user should know about file checkpoints (they are off, one failed)."""

    message: str


@dataclass(frozen=True)
class RunEnded:
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
    | RunEnded
)
