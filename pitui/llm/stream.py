"""One streamed model call through litellm, normalized into pi's assistant message shape.

The reply is kept block by block in the order the provider produced it: each thinking block
with its own signature (Anthropic), redacted thinking, Gemini thought signatures, OpenAI
Responses reasoning items (encrypted), OpenRouter ``reasoning_details``, text and tool calls.
:meth:`ReplyBuilder.message` stores them exactly as pi 1.6 does, so either tool can send them
back unchanged on the next request.

The caller owns the :class:`ReplyBuilder`, so when the call fails or is cancelled part-way it
still has everything received so far (stored as an ``error`` or ``aborted`` reply, with the
usage the provider had already reported).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pitui.llm import providers
from pitui.llm.lazy import litellm, litellm_ready
from pitui.llm.models import ModelInfo, in_litellm_table
from pitui.llm.provider_loop import Batcher, run_on_provider_loop
from pitui.llm.providers import PI_API, Route, route
from pitui.llm.request import REASONING_EFFORT, CallOptions, request_kwargs
from pitui.session.ids import now_ms

__all__ = [
    "REASONING_EFFORT",
    "CallOptions",
    "ReplyBuilder",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "request_kwargs",
    "stream_reply",
]

REDACTED_TEXT = "[Reasoning redacted]"
ANTHROPIC_API = PI_API[providers.ANTHROPIC]
ENCRYPTED_PREFIX = "litellm_encrypted_reasoning:"
REFUSED = "The model refused to complete the request."
GEMINI_EMPTY = (
    "Gemini stopped without a reply (for example a malformed function call): try again or "
    "rephrase the request."
)


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
class _Block:
    kind: str  # "thinking" | "redacted" | "text" | "tool"
    text: str = ""
    signature: str | None = None
    key: Any = None  # the provider's index of a thinking block or tool call
    call_id: str = ""
    name: str = ""
    thought_signature: str | None = None


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class ReplyBuilder:
    """Accumulates a streamed reply; :meth:`message` gives the pi assistant message."""

    info: ModelInfo
    target: Route | None = None
    blocks: list[_Block] = field(default_factory=list)
    finish_reason: str | None = None
    raw_stop_reason: str | None = None
    stop_details: Any = None
    usage: dict[str, int] | None = None
    reported_cost: float | None = None
    reasoning_items: list[dict[str, Any]] = field(default_factory=list)
    reasoning_details: list[dict[str, Any]] = field(default_factory=list)
    invalid_arguments: dict[str, str] = field(default_factory=dict)
    """Tool call id → raw argument text that was not a JSON object."""

    def __post_init__(self) -> None:
        if self.target is None:
            self.target = route(self.info)

    # -- what was received ---------------------------------------------------------------------

    @property
    def route(self) -> Route:
        assert self.target is not None
        return self.target

    @property
    def text(self) -> list[str]:
        return [b.text for b in self.blocks if b.kind == "text"]

    @property
    def thinking(self) -> list[str]:
        return [b.text for b in self.blocks if b.kind == "thinking"]

    @property
    def calls(self) -> dict[int, _Call]:
        return {
            i: _Call(b.call_id, b.name, b.text)
            for i, b in enumerate(b for b in self.blocks if b.kind == "tool")
        }

    @property
    def has_content(self) -> bool:
        return bool(self.blocks)

    # -- feeding ---------------------------------------------------------------------------------

    def feed(self, chunk: Any, emit: Callable[[StreamEvent], None]) -> None:
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.take_usage(usage)
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return
        choice = choices[0]
        delta = getattr(choice, "delta", None)
        if delta is not None:
            self._delta(delta, emit)
        reason = getattr(choice, "finish_reason", None)
        if reason:
            self.finish_reason = reason

    def _delta(self, delta: Any, emit: Callable[[StreamEvent], None]) -> None:
        fields = _get(delta, "provider_specific_fields") or {}
        if isinstance(fields, dict) and fields.get("stop_reason"):
            self.raw_stop_reason = str(fields["stop_reason"])
            self.stop_details = fields.get("stop_details")
        signatures = fields.get("thought_signatures") if isinstance(fields, dict) else None
        thinking_blocks = _get(delta, "thinking_blocks") or []
        if self.route.family == providers.OPENAI_RESPONSES:
            self._responses_reasoning(delta, thinking_blocks, emit)
        elif thinking_blocks:
            for block in thinking_blocks:
                self._thinking_block(block, emit)
        else:
            reasoning = _get(delta, "reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                self._append("thinking", reasoning)
                emit(ThinkingDelta(reasoning))
        details = _get(delta, "reasoning_details")
        if isinstance(details, list) and details:
            self._reasoning_details(details)
        content = _get(delta, "content")
        if isinstance(content, str) and content:
            self._append("text", content)
            emit(TextDelta(content))
        for call in _get(delta, "tool_calls") or []:
            self._tool_call(call, emit)
        if isinstance(signatures, list) and self.route.family == providers.GEMINI:
            self._text_signatures([str(s) for s in signatures if s])

    def _text_signatures(self, signatures: list[str]) -> None:
        """Gemini: a thought signature that no function call carries belongs to the text."""
        on_calls = {b.thought_signature for b in self.blocks if b.kind == "tool"}
        texts = [b for b in self.blocks if b.kind == "text"]
        for signature in signatures:
            if signature not in on_calls and texts:
                texts[-1].signature = signature

    def _current(self, kind: str, key: Any = None) -> _Block:
        last = self.blocks[-1] if self.blocks else None
        if last is not None and last.kind == kind and (key is None or last.key == key):
            return last
        block = _Block(kind, key=key)
        self.blocks.append(block)
        return block

    def _append(self, kind: str, text: str) -> None:
        self._current(kind).text += text

    def _thinking_block(self, block: Any, emit: Callable[[StreamEvent], None]) -> None:
        kind = _get(block, "type")
        if kind == "redacted_thinking":
            data = _get(block, "data")
            self.blocks.append(_Block("redacted", REDACTED_TEXT, str(data or "")))
            return
        key = _get(block, "index")
        target = self._current("thinking", key)
        piece = _get(block, "thinking")
        if isinstance(piece, str) and piece:
            target.text += piece
            emit(ThinkingDelta(piece))
        signature = _get(block, "signature")
        if isinstance(signature, str) and signature:
            target.signature = signature

    def _responses_reasoning(
        self, delta: Any, thinking_blocks: list[Any], emit: Callable[[StreamEvent], None]
    ) -> None:
        """Responses API: summary deltas stream as ``reasoning_content``; each finished
        reasoning item arrives as a thinking block whose signature carries its encrypted
        content; the items themselves (with ids) come with the final chunk."""
        reasoning = _get(delta, "reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            block = self._current("thinking")
            if block.signature is not None:  # a new reasoning item after a finished one
                block = _Block("thinking")
                self.blocks.append(block)
            block.text += reasoning
            emit(ThinkingDelta(reasoning))
        for item in thinking_blocks:
            signature = _get(item, "signature") or _get(item, "data")
            if not isinstance(signature, str):
                continue
            last = self.blocks[-1] if self.blocks else None
            if last is None or last.kind != "thinking" or last.signature is not None:
                last = _Block("thinking")
                self.blocks.append(last)
            text = _get(item, "thinking")
            if not last.text and isinstance(text, str):
                last.text = text
            last.signature = signature
        for item in _get(delta, "reasoning_items") or []:
            as_dict = item if isinstance(item, dict) else getattr(item, "model_dump", dict)()
            if isinstance(as_dict, dict):
                self.reasoning_items.append(dict(as_dict))

    def _reasoning_details(self, details: list[Any]) -> None:
        """OpenRouter streams ``reasoning_details`` in pieces: text pieces of one entry are
        joined; encrypted entries stay whole."""
        for raw in details:
            detail = raw if isinstance(raw, dict) else getattr(raw, "model_dump", dict)()
            if not isinstance(detail, dict):
                continue
            previous = self.reasoning_details[-1] if self.reasoning_details else None
            mergeable = detail.get("type") in ("reasoning.text", "reasoning.summary")
            if (
                previous is not None
                and mergeable
                and previous.get("type") == detail.get("type")
                and previous.get("index", 0) == detail.get("index", 0)
            ):
                key = "text" if detail.get("type") == "reasoning.text" else "summary"
                previous[key] = str(previous.get(key) or "") + str(detail.get(key) or "")
                if detail.get("signature"):
                    previous["signature"] = detail["signature"]
            else:
                self.reasoning_details.append(dict(detail))
        if not any(b.kind == "thinking" for b in self.blocks):
            self._current("thinking")

    def _tool_call(self, call: Any, emit: Callable[[StreamEvent], None]) -> None:
        index = _get(call, "index")
        tools = [b for b in self.blocks if b.kind == "tool"]
        key = index if isinstance(index, int) else len(tools)
        block = next((b for b in tools if b.key == key), None)
        if block is None:
            block = _Block("tool", key=key)
            self.blocks.append(block)
        call_id = _get(call, "id")
        if call_id:
            # litellm folds a Gemini thought signature into the id; it is kept on its own.
            block.call_id = str(call_id).split("__thought__", 1)[0]
        function = _get(call, "function")
        name = _get(function, "name") if function is not None else None
        if name:
            block.name = str(name)
        arguments = _get(function, "arguments") if function is not None else None
        if isinstance(arguments, str) and arguments:
            block.text += arguments
        for source in (call, function):
            extra = _get(source, "provider_specific_fields") if source is not None else None
            if isinstance(extra, dict) and extra.get("thought_signature"):
                block.thought_signature = str(extra["thought_signature"])
        emit(ToolCallDelta(key, block.name, block.text))

    def take_usage(self, usage: Any) -> None:
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
        cost = _get(usage, "cost")
        reported = isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0
        if reported and self.route.family == providers.OPENROUTER:
            self.reported_cost = float(cost)

    # -- the stored message ------------------------------------------------------------------

    def stop(self) -> tuple[str, str | None]:
        """pi's ``stopReason`` for the finished reply, and its error message if any."""
        raw = self.raw_stop_reason
        if raw == "refusal":
            details = self.stop_details if isinstance(self.stop_details, dict) else {}
            explanation = details.get("explanation")
            return "error", str(explanation) if explanation else REFUSED
        if raw == "pause_turn":
            return "stop", None
        reason = self.finish_reason
        if reason == "content_filter":
            return "error", _filtered_message(self.route, raw)
        if self.route.family == providers.GEMINI and not self.blocks and reason == "stop":
            # MALFORMED_FUNCTION_CALL and similar stops arrive with no content at all.
            return "error", GEMINI_EMPTY
        if reason == "length":
            return "length", None
        if any(b.kind == "tool" for b in self.blocks) or reason in ("tool_calls", "function_call"):
            return "toolUse", None
        return "stop", None

    def stop_reason(self) -> str:
        return self.stop()[0]

    def tool_call(self, block: _Block, index: int) -> dict[str, Any]:
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
        if block.thought_signature and self.route.family == providers.GEMINI:
            out["thoughtSignature"] = block.thought_signature
        return out

    def tool_calls(self) -> list[dict[str, Any]]:
        tools = [b for b in self.blocks if b.kind == "tool"]
        return [self.tool_call(b, i) for i, b in enumerate(tools)]

    def content(self) -> list[dict[str, Any]]:
        family = self.route.family
        items = iter(self.reasoning_items)
        content: list[dict[str, Any]] = []
        blocks = self.blocks
        if family == providers.OPENAI_RESPONSES:
            # A reasoning item with no summary streamed no text: it still needs its block.
            missing = len(self.reasoning_items) - sum(1 for b in blocks if b.kind == "thinking")
            blocks = [_Block("thinking") for _ in range(max(0, missing))] + blocks
        tool_index = 0
        details_as_blocks = family == providers.OPENROUTER and self.route.api == ANTHROPIC_API
        for block in blocks:
            if details_as_blocks and block.kind == "thinking":
                content.extend(_blocks_from_details(self.reasoning_details, block.text))
                details_as_blocks = False
                continue
            if block.kind == "thinking" and family == providers.OPENROUTER and self.route.claude:
                continue  # further thinking of the same reply: already in its details
            if block.kind == "text":
                text: dict[str, Any] = {"type": "text", "text": block.text}
                if block.signature and family == providers.GEMINI:
                    text["textSignature"] = block.signature
                content.append(text)
            elif block.kind == "tool":
                content.append(self.tool_call(block, tool_index))
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
                signature = self._thinking_signature(block, family, items)
                if signature:
                    thinking["thinkingSignature"] = signature
                content.append(thinking)
        return content

    def _thinking_signature(self, block: _Block, family: str, items: Any) -> str | None:
        if family == providers.OPENAI_RESPONSES:
            item = next(items, None)
            encrypted = (block.signature or "").removeprefix(ENCRYPTED_PREFIX) or None
            if item is None:
                if encrypted is None:
                    return None
                item = {"type": "reasoning", "summary": [], "encrypted_content": encrypted}
                if block.text:
                    item["summary"] = [{"type": "summary_text", "text": block.text}]
            return json.dumps(item, separators=(",", ":"), ensure_ascii=False)
        if family in (providers.OPENROUTER, providers.OPENAI_CHAT, providers.OLLAMA):
            if self.reasoning_details:
                return json.dumps(self.reasoning_details, separators=(",", ":"), ensure_ascii=False)
            return "reasoning_content" if block.text else None
        return block.signature

    def message(self, stop_reason: str | None = None, error: str | None = None) -> dict[str, Any]:
        """The assistant message as pi stores it."""
        if stop_reason is None:
            stop_reason, stop_error = self.stop()
            error = error or stop_error
        counts = self.usage or {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        usage: dict[str, Any] = dict(counts)
        usage["totalTokens"] = sum(counts.values())
        usage["cost"] = self.info.cost(counts)
        if self.reported_cost is not None:
            usage["cost"] = _scaled_cost(usage["cost"], self.reported_cost)
        target = self.route
        message: dict[str, Any] = {
            "role": "assistant",
            "content": self.content(),
            "api": target.api,
            "provider": target.provider,
            "model": target.model_id,
            "usage": usage,
            "stopReason": stop_reason,
        }
        if error:
            message["errorMessage"] = error
        message["timestamp"] = now_ms()
        return message


def _blocks_from_details(details: list[dict[str, Any]], streamed: str) -> list[dict[str, Any]]:
    """OpenRouter's ``reasoning_details`` of a Claude reply as pi's thinking blocks."""
    out: list[dict[str, Any]] = []
    for detail in details:
        kind = detail.get("type")
        if kind == "reasoning.text":
            block: dict[str, Any] = {"type": "thinking", "thinking": str(detail.get("text") or "")}
            if detail.get("signature"):
                block["thinkingSignature"] = str(detail["signature"])
            out.append(block)
        elif kind == "reasoning.encrypted" and detail.get("data"):
            out.append(
                {
                    "type": "thinking",
                    "thinking": REDACTED_TEXT,
                    "thinkingSignature": str(detail["data"]),
                    "redacted": True,
                }
            )
    return out or ([{"type": "thinking", "thinking": streamed}] if streamed else [])


def _filtered_message(target: Route, raw: str | None) -> str:
    if target.family == providers.GEMINI:
        return (
            "Gemini stopped the reply for safety or recitation reasons: rephrase the request "
            "or try another model."
        )
    return "The provider's content filter stopped the reply: rephrase the request."


def _scaled_cost(parts: dict[str, float], total: float) -> dict[str, float]:
    """The provider's reported total, split across the parts in the table's proportions."""
    table_total = parts.get("total", 0.0)
    if table_total > 0:
        scaled = {k: v * total / table_total for k, v in parts.items() if k != "total"}
    else:
        scaled = {"input": total, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0}
    scaled["total"] = total
    return scaled


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


_registered: set[str] = set()


def ensure_known(info: ModelInfo) -> None:
    """Tell litellm about a model missing from its price table (zero cost).

    Without this, litellm fails to price every streamed reply of such a model and formats a
    traceback in a background thread for each one.
    """
    ref = info.ref.for_litellm
    name = ref.litellm_name
    if in_litellm_table(ref) or name in _registered:
        return
    entry: dict[str, Any] = {
        "litellm_provider": ref.provider or "openai",
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
        litellm().register_model({name: entry, ref.model_id: dict(entry)})
    _registered.add(name)


def partial_usage(response: Any) -> Any:
    """The usage litellm recovered for a stream that failed part-way (None if it has none)."""
    with contextlib.suppress(Exception):
        details = response.logging_obj.model_call_details
        return details.get("combined_usage_object")
    return None


async def stream_reply(
    info: ModelInfo,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    options: CallOptions,
    builder: ReplyBuilder,
    emit: Callable[[StreamEvent], None],
) -> None:
    """Run one streamed call, feeding ``builder``. Provider errors propagate to the caller.

    The stream is consumed on the provider loop (:mod:`pitui.llm.provider_loop`): litellm's
    per-chunk work never holds up the caller's loop, and ``emit`` receives the deltas on the
    caller's loop, merged per hand-over (adjacent text or thinking joined, a tool call's
    latest arguments). ``builder`` is fed on the provider loop and read by the caller only
    after this returns or raises."""
    module = await litellm_ready()  # never imported on the event loop
    ensure_known(info)
    kwargs = request_kwargs(info, messages, tools, options, builder.route)
    batch: Batcher[StreamEvent] = Batcher(asyncio.get_running_loop(), emit, merge_events)

    async def consume() -> None:
        if str(kwargs["model"]).startswith("anthropic/"):
            # Here, not at the top: httpx (which imports its CLI: click, pygments) is not on
            # the path to the first frame; litellm has imported it by now.
            from pitui.llm.coalesce import anthropic_handler

            kwargs["client"] = anthropic_handler()  # its events coalesced (OpenAI's always are)
        response = await module.acompletion(**kwargs)
        try:
            async for chunk in response:
                builder.feed(chunk, batch.add)
        except Exception:
            if builder.usage is None:
                usage = partial_usage(response)
                if usage is not None:
                    builder.take_usage(usage)
            raise

    try:
        await run_on_provider_loop(consume())
    finally:
        batch.drain()


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
