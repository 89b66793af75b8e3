"""One streamed model call through litellm, normalized into pi's assistant message shape.

The caller owns the :class:`ReplyBuilder`, so when the call fails or is cancelled part-way it
still has everything received so far (stored as an ``error`` or ``aborted`` reply).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pitui.llm.lazy import litellm, litellm_ready
from pitui.llm.models import ModelInfo
from pitui.session.ids import now_ms

REASONING_EFFORT = {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high"}


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


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class ReplyBuilder:
    """Accumulates a streamed reply; :meth:`message` gives the pi assistant message."""

    info: ModelInfo
    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    thinking_signature: str | None = None
    calls: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, int] | None = None
    invalid_arguments: dict[str, str] = field(default_factory=dict)
    """Tool call id → raw argument text that was not a JSON object."""

    @property
    def has_content(self) -> bool:
        return bool(self.text or self.thinking or self.calls)

    def feed(self, chunk: Any, emit: Callable[[StreamEvent], None]) -> None:
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self._usage(usage)
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return
        choice = choices[0]
        delta = getattr(choice, "delta", None)
        if delta is not None:
            reasoning = getattr(delta, "reasoning_content", None)
            if isinstance(reasoning, str) and reasoning:
                self.thinking.append(reasoning)
                emit(ThinkingDelta(reasoning))
            for block in getattr(delta, "thinking_blocks", None) or []:
                signature = _get(block, "signature")
                if signature:
                    self.thinking_signature = signature
            content = getattr(delta, "content", None)
            if isinstance(content, str) and content:
                self.text.append(content)
                emit(TextDelta(content))
            for call in getattr(delta, "tool_calls", None) or []:
                index = _get(call, "index")
                index = index if isinstance(index, int) else len(self.calls)
                state = self.calls.setdefault(index, _Call())
                call_id = _get(call, "id")
                if call_id:
                    state.id = call_id
                function = _get(call, "function")
                name = _get(function, "name") if function is not None else None
                if name:
                    state.name = name
                arguments = _get(function, "arguments") if function is not None else None
                if arguments:
                    state.arguments += arguments
                emit(ToolCallDelta(index, state.name, state.arguments))
        reason = getattr(choice, "finish_reason", None)
        if reason:
            self.finish_reason = reason

    def _usage(self, usage: Any) -> None:
        prompt = _int(_get(usage, "prompt_tokens"))
        output = _int(_get(usage, "completion_tokens"))
        details = _get(usage, "prompt_tokens_details")
        cached = _int(_get(details, "cached_tokens")) if details is not None else 0
        cache_read = _int(_get(usage, "cache_read_input_tokens")) or cached
        cache_write = _int(_get(usage, "cache_creation_input_tokens"))
        # pi counts input without the cached part (Anthropic's convention).
        plain_input = max(0, prompt - cache_read - cache_write) if prompt else 0
        self.usage = {
            "input": plain_input,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
        }

    def stop_reason(self) -> str:
        reason = self.finish_reason
        if reason == "length":
            return "length"
        if self.calls or reason in ("tool_calls", "function_call"):
            return "toolUse"
        return "stop"

    def tool_calls(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        for index in sorted(self.calls):
            call = self.calls[index]
            call_id = call.id or f"call_{index}_{now_ms()}"
            try:
                arguments = json.loads(call.arguments) if call.arguments.strip() else {}
            except ValueError:
                arguments = None
            if not isinstance(arguments, dict):
                self.invalid_arguments[call_id] = call.arguments
                arguments = {}
            blocks.append(
                {"type": "toolCall", "id": call_id, "name": call.name, "arguments": arguments}
            )
        return blocks

    def message(self, stop_reason: str | None = None, error: str | None = None) -> dict[str, Any]:
        """The assistant message as pi stores it."""
        content: list[dict[str, Any]] = []
        if self.thinking:
            block: dict[str, Any] = {"type": "thinking", "thinking": "".join(self.thinking)}
            if self.thinking_signature:
                block["thinkingSignature"] = self.thinking_signature
            content.append(block)
        if self.text:
            content.append({"type": "text", "text": "".join(self.text)})
        content.extend(self.tool_calls())
        counts = self.usage or {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        usage: dict[str, Any] = dict(counts)
        usage["totalTokens"] = sum(counts.values())
        usage["cost"] = self.info.cost(counts)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "litellm",
            "provider": self.info.ref.provider,
            "model": self.info.ref.model_id,
            "usage": usage,
            "stopReason": stop_reason or self.stop_reason(),
        }
        if error:
            message["errorMessage"] = error
        message["timestamp"] = now_ms()
        return message


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class CallOptions:
    api_base: str | None = None
    api_key: str | None = None
    thinking: str = "off"
    max_tokens: int | None = None
    timeout: float = 600.0


def request_kwargs(
    info: ModelInfo,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    options: CallOptions,
) -> dict[str, Any]:
    """The litellm ``acompletion`` arguments (our retry logic is the only one: litellm's is off)."""
    kwargs: dict[str, Any] = {
        "model": info.ref.litellm_name,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "timeout": options.timeout,
        "num_retries": 0,
        "max_retries": 0,
    }
    if tools:
        kwargs["tools"] = tools
    if options.api_base:
        kwargs["api_base"] = options.api_base
    if options.api_key:
        kwargs["api_key"] = options.api_key
    if options.max_tokens:
        kwargs["max_tokens"] = options.max_tokens
    effort = REASONING_EFFORT.get(options.thinking)
    if effort and info.supports_reasoning:
        kwargs["reasoning_effort"] = effort
    return kwargs


_registered: set[str] = set()


def ensure_known(info: ModelInfo) -> None:
    """Tell litellm about a model missing from its price table (zero cost).

    Without this, litellm fails to price every streamed reply of such a model and formats a
    traceback in a background thread for each one.
    """
    name = info.ref.litellm_name
    if info.known or name in _registered:
        return
    entry: dict[str, Any] = {
        "litellm_provider": info.ref.provider or "openai",
        "mode": "chat",
        "input_cost_per_token": info.input_cost,
        "output_cost_per_token": info.output_cost,
    }
    if info.context_window:
        entry["max_input_tokens"] = info.context_window
    if info.max_output:
        entry["max_output_tokens"] = entry["max_tokens"] = info.max_output
    # Registration is an optimization: never fail a request over it.
    with contextlib.suppress(Exception):
        litellm().register_model({name: entry, info.ref.model_id: dict(entry)})
    _registered.add(name)


async def stream_reply(
    info: ModelInfo,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    options: CallOptions,
    builder: ReplyBuilder,
    emit: Callable[[StreamEvent], None],
) -> None:
    """Run one streamed call, feeding ``builder``. Provider errors propagate to the caller."""
    module = await litellm_ready()  # never imported on the event loop
    ensure_known(info)
    response = await module.acompletion(**request_kwargs(info, messages, tools, options))
    async for chunk in response:
        builder.feed(chunk, emit)
