"""A streamed reply, block by block, and the assistant message pi stores for it.

Every wire API (and litellm's route) feeds one :class:`ReplyBuilder` through the same few
calls (thinking, a signature, redacted thinking, text, a tool call's pieces, usage, the stop),
in the order the provider produced them, so the stored message keeps the provider's order:
each thinking block with its own signature (Anthropic), Gemini thought signatures, OpenAI
Responses reasoning items (their JSON as the block's signature), text and tool calls.
:meth:`ReplyBuilder.message` stores them exactly as pi 1.6 does, so either tool can send them
back unchanged on the next request.

The caller owns the builder, so when the call fails or is cancelled part-way it still has
everything received so far (stored as an ``error`` or ``aborted`` reply, with the usage the
provider had already reported). Each call that adds to the reply also hands a
:data:`StreamEvent` to ``emit`` (the screen's deltas).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pitui.llm.models import ModelInfo
from pitui.llm.routes import Route
from pitui.session.ids import now_ms

REDACTED_TEXT = "[Reasoning redacted]"


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    index: int
    name: str
    arguments: str  # accumulated so far


StreamEvent = TextDelta | ThinkingDelta | ToolCallDelta


def _ignore(event: StreamEvent) -> None:
    pass


@dataclass
class Block:
    """One block of the reply as it grows."""

    kind: str  # "thinking" | "redacted" | "text" | "tool"
    text: str = ""
    """Thinking or answer text; a tool call's argument JSON so far."""
    signature: str | None = None
    """A thinking block's signature (or the encrypted reasoning item); Gemini's text
    signature; redacted thinking's data."""
    key: Any = None
    """The provider's index of the block (to find it again when its pieces interleave)."""
    call_id: str = ""
    name: str = ""
    thought_signature: str | None = None


@dataclass
class Call:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class ReplyBuilder:
    """Accumulates a streamed reply; :meth:`message` gives the pi assistant message."""

    info: ModelInfo
    route: Route
    emit: Callable[[StreamEvent], None] = _ignore
    blocks: list[Block] = field(default_factory=list)
    stop_reason: str | None = None
    """pi's ``stopReason`` when the provider said how it stopped (else inferred)."""
    error_message: str | None = None
    """With ``stop_reason == "error"``: the sentence stored as ``errorMessage``."""
    usage: dict[str, int] | None = None
    reported_cost: float | None = None
    invalid_arguments: dict[str, str] = field(default_factory=dict)
    """Tool call id → raw argument text that was not a JSON object."""

    # -- what was received ---------------------------------------------------------------------

    @property
    def text(self) -> list[str]:
        return [b.text for b in self.blocks if b.kind == "text"]

    @property
    def thinking(self) -> list[str]:
        return [b.text for b in self.blocks if b.kind == "thinking"]

    @property
    def calls(self) -> dict[int, Call]:
        return {
            i: Call(b.call_id, b.name, b.text)
            for i, b in enumerate(b for b in self.blocks if b.kind == "tool")
        }

    @property
    def has_content(self) -> bool:
        return bool(self.blocks)

    # -- feeding ---------------------------------------------------------------------------------

    def _find(self, kind: str, key: Any) -> Block | None:
        for block in reversed(self.blocks):
            if block.kind == kind and block.key == key:
                return block
        return None

    def _current(self, kind: str, key: Any = None, *, new: bool = False) -> Block:
        """The block receiving ``kind`` pieces: the one with ``key``, else the last block when
        it is of that kind (and no new block is asked for), else a new one."""
        if key is not None:
            found = self._find(kind, key)
            if found is not None:
                return found
        last = self.blocks[-1] if self.blocks else None
        if not new and key is None and last is not None and last.kind == kind:
            return last
        block = Block(kind, key=key)
        self.blocks.append(block)
        return block

    def thinking_piece(self, text: str, key: Any = None, *, new: bool = False) -> Block:
        """A piece of thinking (``new``: it starts a block of its own)."""
        block = self._current("thinking", key, new=new)
        if text:
            block.text += text
            self.emit(ThinkingDelta(text))
        return block

    def thinking_signature(self, signature: str, key: Any = None) -> None:
        """The signature of the thinking block ``key`` (else the latest thinking block)."""
        block = self._find("thinking", key) if key is not None else None
        if block is None:
            block = next((b for b in reversed(self.blocks) if b.kind == "thinking"), None)
        if block is None:
            block = self._current("thinking", key)
        block.signature = signature

    def redacted_thinking(self, data: str, key: Any = None) -> None:
        self.blocks.append(Block("redacted", REDACTED_TEXT, data, key=key))

    def text_piece(self, text: str, key: Any = None) -> Block:
        block = self._current("text", key)
        if text:
            block.text += text
            self.emit(TextDelta(text))
        return block

    def text_signature(self, signature: str) -> None:
        """Gemini: a thought signature carried by the text (the latest text block)."""
        block = next((b for b in reversed(self.blocks) if b.kind == "text"), None)
        if block is not None:
            block.signature = signature

    def tool_call(
        self,
        key: Any,
        *,
        call_id: str | None = None,
        name: str | None = None,
        arguments: str = "",
        thought_signature: str | None = None,
    ) -> Block:
        """A tool call starts or grows (``arguments``: the next piece of its JSON)."""
        block = self._find("tool", key)
        if block is None:
            block = Block("tool", key=key)
            self.blocks.append(block)
        if call_id:
            block.call_id = call_id
        if name:
            block.name = name
        if arguments:
            block.text += arguments
        if thought_signature:
            block.thought_signature = thought_signature
        tools = [b for b in self.blocks if b.kind == "tool"]
        self.emit(ToolCallDelta(tools.index(block), block.name, block.text))
        return block

    def take_usage(
        self, input_tokens: int, output: int, cache_read: int = 0, cache_write: int = 0
    ) -> None:
        """Token counts in pi's convention: ``input_tokens`` without the cached part."""
        self.usage = {
            "input": max(0, input_tokens),
            "output": max(0, output),
            "cacheRead": max(0, cache_read),
            "cacheWrite": max(0, cache_write),
        }

    def finish(self, stop_reason: str, error: str | None = None) -> None:
        """How the provider said the reply ended (pi's ``stopReason``)."""
        self.stop_reason = stop_reason
        self.error_message = error

    # -- the stored message ------------------------------------------------------------------

    def stop(self) -> tuple[str, str | None]:
        """pi's ``stopReason`` for the finished reply, and its error message if any."""
        reason = self.stop_reason
        has_calls = any(b.kind == "tool" for b in self.blocks)
        if reason == "error":
            return "error", self.error_message or "The provider stopped the reply with an error."
        if reason == "length":
            return "length", None
        if has_calls or reason == "toolUse":
            return "toolUse", None
        return "stop", None

    def tool_call_block(self, block: Block, index: int) -> dict[str, Any]:
        call_id = block.call_id or f"call_{index}_{now_ms()}"
        try:
            arguments = json.loads(block.text) if block.text.strip() else {}
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            self.invalid_arguments[call_id] = block.text
            arguments = {}
        out: dict[str, Any] = {
            "type": "toolCall",
            "id": call_id,
            "name": block.name,
            "arguments": arguments,
        }
        if block.thought_signature:
            out["thoughtSignature"] = block.thought_signature
        return out

    def tool_calls(self) -> list[dict[str, Any]]:
        tools = [b for b in self.blocks if b.kind == "tool"]
        return [self.tool_call_block(b, i) for i, b in enumerate(tools)]

    def content(self) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        tool_index = 0
        for block in self.blocks:
            if block.kind == "text":
                text: dict[str, Any] = {"type": "text", "text": block.text}
                if block.signature:
                    text["textSignature"] = block.signature
                content.append(text)
            elif block.kind == "tool":
                content.append(self.tool_call_block(block, tool_index))
                tool_index += 1
            elif block.kind == "redacted":
                content.append(
                    {
                        "type": "thinking",
                        "thinking": REDACTED_TEXT,
                        "thinkingSignature": block.signature or "",
                        "redacted": True,
                    }
                )
            else:
                thinking: dict[str, Any] = {"type": "thinking", "thinking": block.text}
                if block.signature:
                    thinking["thinkingSignature"] = block.signature
                content.append(thinking)
        return content

    def message(self, stop_reason: str | None = None, error: str | None = None) -> dict[str, Any]:
        """The assistant message as pi stores it (``stop_reason``: ``aborted`` or ``error``
        for a reply that did not finish)."""
        if stop_reason is None:
            stop_reason, stop_error = self.stop()
            error = error or stop_error
        counts = self.usage or {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        usage: dict[str, Any] = dict(counts)
        usage["totalTokens"] = sum(counts.values())
        usage["cost"] = self.info.cost(counts)
        if self.reported_cost is not None:
            usage["cost"] = _scaled_cost(usage["cost"], self.reported_cost)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": self.content(),
            "api": self.route.api,
            "provider": self.route.provider,
            "model": self.route.model_id,
            "usage": usage,
            "stopReason": stop_reason,
        }
        if error:
            message["errorMessage"] = error
        message["timestamp"] = now_ms()
        return message


def _scaled_cost(parts: dict[str, float], total: float) -> dict[str, float]:
    """The provider's reported total, split across the parts in the table's proportions."""
    table_total = parts.get("total", 0.0)
    if table_total > 0:
        scaled = {k: v * total / table_total for k, v in parts.items() if k != "total"}
    else:
        scaled = {"input": total, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0}
    scaled["total"] = total
    return scaled


def merge_events(previous: StreamEvent, event: StreamEvent) -> StreamEvent | None:
    """One event for two adjacent ones, or None when both must be kept."""
    if isinstance(event, TextDelta) and isinstance(previous, TextDelta):
        return TextDelta(previous.text + event.text)
    if isinstance(event, ThinkingDelta) and isinstance(previous, ThinkingDelta):
        return ThinkingDelta(previous.text + event.text)
    if (
        isinstance(event, ToolCallDelta)
        and isinstance(previous, ToolCallDelta)
        and previous.index == event.index
    ):
        return event  # it carries the arguments accumulated so far
    return None
