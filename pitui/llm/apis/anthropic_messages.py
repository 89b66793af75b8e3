"""The ``anthropic-messages`` API: Claude, from Anthropic or through OpenRouter's Messages
endpoint.

``POST {base}/v1/messages`` streamed as server-sent events (``message_start``,
``content_block_start/delta/stop``, ``message_delta``, ``message_stop``, ``ping``, ``error``).
Thinking as pi 1.6 asks for it: Claude 4.6 and later think adaptively (``thinking: {"type":
"adaptive"}`` with ``output_config.effort``, ``high`` is ``high``); earlier models take a
token budget and the ``interleaved-thinking`` beta, so they think between tool calls too.
Replies keep Claude's block order; each thinking block goes back with its signature, redacted
thinking as its data. Prompt-cache breakpoints where pi puts them: the last tool, the system
prompt, and the last block of the last user turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from pitui.llm.call import ADAPTIVE_EFFORT, CLAUDE_FALLBACK_MAX_TOKENS, Call, thinking_budget
from pitui.llm.errors import ProviderError
from pitui.llm.reply import ReplyBuilder
from pitui.llm.transport import (
    HttpRequest,
    as_dict,
    decode_json,
    sse_events,
    stream_ended_early,
)
from pitui.session.shapes import content_text
from pitui.text import one_line

VERSION = "2023-06-01"
INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
REFUSED = "The model refused to complete the request."
ERROR_IMAGES = "(image attached after the tool results)"
#: Anthropic's error types and the HTTP status each stands for (for errors mid-stream).
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
_BAD_ID = re.compile(r"[^a-zA-Z0-9_-]")


def rename_call(call_id: str) -> str:
    """Tool call ids as Anthropic takes them (``^[a-zA-Z0-9_-]{1,64}$``)."""
    clean = _BAD_ID.sub("_", call_id)[:64]
    return clean or "call"


# ------------------------------------------------------------------------------- request


def _image(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": block.get("mimeType") or "image/png",
            "data": str(block.get("data") or ""),
        },
    }


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    out: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"]:
            out.append({"type": "text", "text": block["text"]})
        elif block.get("type") == "image" and isinstance(block.get("data"), str):
            out.append(_image(block))
    return out


def _assistant_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "thinking":
            signature = block.get("thinkingSignature")
            if not isinstance(signature, str) or not signature:
                continue  # unsigned thinking cannot be verified: the API refuses it
            if block.get("redacted"):
                out.append({"type": "redacted_thinking", "data": signature})
            else:
                out.append(
                    {
                        "type": "thinking",
                        "thinking": str(block.get("thinking") or ""),
                        "signature": signature,
                    }
                )
        elif kind == "text" and block["text"]:
            out.append({"type": "text", "text": block["text"]})
        elif kind == "toolCall":
            out.append(
                {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": block["name"],
                    "input": block["arguments"],
                }
            )
    return out


def _tool_result(message: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A tool result block, and the images that must follow the batch (an error result
    cannot carry images)."""
    content = message.get("content")
    images = [_image(b) for b in content or [] if isinstance(b, dict) and b.get("type") == "image"]
    text = content_text(content, "\n")
    error = bool(message.get("isError"))
    later: list[dict[str, Any]] = []
    if error and images:
        later = [
            {
                "type": "text",
                "text": f"Images from the error result of tool call {message['toolCallId']}:",
            },
            *images,
        ]
        text = f"{text}\n{ERROR_IMAGES}" if text else ERROR_IMAGES
        images = []
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts.extend(images)
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message["toolCallId"]}
    result["content"] = parts or [{"type": "text", "text": "(no output)"}]
    if error:
        result["is_error"] = True
    return result, later


def messages(call: Call) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    later: list[dict[str, Any]] = []

    def flush_results() -> None:
        if results:
            out.append({"role": "user", "content": [*results, *later]})
            results.clear()
            later.clear()

    for message in call.context.messages:
        role = message["role"]
        if role == "toolResult":
            result, images = _tool_result(message)
            results.append(result)
            later.extend(images)
            continue
        flush_results()
        blocks = (
            _assistant_blocks(message) if role == "assistant" else _user_blocks(message["content"])
        )
        if not blocks:
            continue
        turn = "assistant" if role == "assistant" else "user"
        if out and out[-1]["role"] == turn:
            out[-1]["content"].extend(blocks)  # consecutive turns are one turn
        else:
            out.append({"role": turn, "content": blocks})
    flush_results()
    return out


def _cache(messages: list[dict[str, Any]], system: list[dict[str, Any]], tools: list[Any]) -> None:
    """pi's three breakpoints: the last tool, the system prompt, the last user turn's last
    block (its tool results in a tool loop)."""
    if tools:
        tools[-1]["cache_control"] = dict(EPHEMERAL)
    if system:
        system[-1]["cache_control"] = dict(EPHEMERAL)
    if messages and messages[-1]["role"] == "user" and messages[-1]["content"]:
        last = messages[-1]["content"]
        last[-1] = {**last[-1], "cache_control": dict(EPHEMERAL)}


def request(call: Call) -> HttpRequest:
    route, compat = call.route, call.route.compat
    max_tokens = call.output_limit() or CLAUDE_FALLBACK_MAX_TOKENS
    body: dict[str, Any] = {
        "model": route.model_id,
        "max_tokens": max_tokens,
        "stream": True,
        "messages": messages(call),
    }
    system = [{"type": "text", "text": call.context.system}] if call.context.system else []
    tools = [
        {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
        for t in call.context.tools
    ]
    if call.options.cache:
        _cache(body["messages"], system, tools)
    if system:
        body["system"] = system
    if tools:
        body["tools"] = tools
    betas: list[str] = []
    level = call.thinking
    if level is not None and compat.adaptive_thinking:
        body["thinking"] = {"type": "adaptive", "display": "summarized"}
        body["output_config"] = {"effort": ADAPTIVE_EFFORT[level]}
    elif level is not None:
        budget = thinking_budget(level, max_tokens)
        if budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            if compat.interleaved_thinking:
                betas.append(INTERLEAVED_THINKING)
    headers = {"anthropic-version": VERSION}
    key = call.options.api_key
    if key and compat.bearer_auth:
        headers["authorization"] = f"Bearer {key}"
    elif key:
        headers["x-api-key"] = key
    if betas:
        headers["anthropic-beta"] = ",".join(betas)
    return HttpRequest(f"{route.base_url}/v1/messages", headers, body)


# ------------------------------------------------------------------------------- stream


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class _Usage:
    def __init__(self) -> None:
        self.counts = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}

    def update(self, usage: Any, reply: ReplyBuilder) -> None:
        if not isinstance(usage, dict):
            return
        for field, key in (
            ("input_tokens", "input"),
            ("output_tokens", "output"),
            ("cache_read_input_tokens", "cacheRead"),
            ("cache_creation_input_tokens", "cacheWrite"),
        ):
            value = _int(usage.get(field))
            if value is not None:
                self.counts[key] = value
        c = self.counts
        reply.take_usage(c["input"], c["output"], c["cacheRead"], c["cacheWrite"])
        cost = usage.get("cost")
        if reply.route.compat.reported_cost and isinstance(cost, int | float) and cost > 0:
            reply.reported_cost = float(cost)


def _stop(delta: dict[str, Any], reply: ReplyBuilder) -> None:
    reason = delta.get("stop_reason")
    if not isinstance(reason, str):
        return
    if reason in ("end_turn", "stop_sequence", "pause_turn"):
        reply.finish("stop")
    elif reason in ("max_tokens", "model_context_window_exceeded"):
        reply.finish("length")
    elif reason == "tool_use":
        reply.finish("toolUse")
    elif reason == "refusal":
        details = delta.get("stop_details")
        explanation = details.get("explanation") if isinstance(details, dict) else None
        reply.finish("error", str(explanation) if explanation else REFUSED)
    else:
        reply.finish("error", f"The model stopped for a reason pitui does not know ({reason}).")


def stream_error(data: Any) -> ProviderError:
    """An ``error`` event: the provider's words, with the status its type stands for."""
    error = data.get("error") if isinstance(data, dict) else None
    error = error if isinstance(error, dict) else {}
    kind = str(error.get("type") or "api_error")
    message = error.get("message") if isinstance(error.get("message"), str) else None
    return ProviderError(
        one_line(message or kind), ERROR_STATUS.get(kind), body=data, error_type=kind
    )


class _Stream:
    """One reply's events, each kind handled by its own method (``on_<type>``)."""

    def __init__(self, reply: ReplyBuilder) -> None:
        self.reply = reply
        self.usage = _Usage()
        self.tool_inputs: dict[int, Any] = {}  # a tool_use's input when no JSON pieces follow
        self.stopped = False

    def on_content_block_start(self, data: dict[str, Any]) -> None:
        reply, index = self.reply, data.get("index")
        block = as_dict(data.get("content_block"))
        what = block.get("type")
        if what == "text":
            reply.text_piece(str(block.get("text") or ""), index)
        elif what == "thinking":
            started = reply.thinking_piece(str(block.get("thinking") or ""), index)
            if block.get("signature"):
                started.signature = str(block["signature"])
        elif what == "redacted_thinking":
            reply.redacted_thinking(str(block.get("data") or ""), index)
        elif what == "tool_use":
            reply.tool_call(
                index, call_id=str(block.get("id") or ""), name=str(block.get("name") or "")
            )
            if isinstance(index, int) and block.get("input"):
                self.tool_inputs[index] = block["input"]

    def on_content_block_delta(self, data: dict[str, Any]) -> None:
        reply, index = self.reply, data.get("index")
        delta = as_dict(data.get("delta"))
        piece = delta.get("type")
        if piece == "text_delta":
            reply.text_piece(str(delta.get("text") or ""), index)
        elif piece == "thinking_delta":
            reply.thinking_piece(str(delta.get("thinking") or ""), index)
        elif piece == "signature_delta":
            signed = reply.thinking_piece("", index)
            signed.signature = (signed.signature or "") + str(delta.get("signature") or "")
        elif piece == "input_json_delta":
            if isinstance(index, int):
                self.tool_inputs.pop(index, None)
            reply.tool_call(index, arguments=str(delta.get("partial_json") or ""))

    def on_message_start(self, data: dict[str, Any]) -> None:
        self.usage.update(as_dict(data.get("message")).get("usage"), self.reply)

    def on_message_delta(self, data: dict[str, Any]) -> None:
        _stop(as_dict(data.get("delta")), self.reply)
        self.usage.update(data.get("usage"), self.reply)

    def on_message_stop(self, data: dict[str, Any]) -> None:
        self.stopped = True

    def on_error(self, data: dict[str, Any]) -> None:
        raise stream_error(data)

    def finish(self) -> None:
        for index, value in self.tool_inputs.items():
            self.reply.tool_call(index, arguments=json.dumps(value, ensure_ascii=False))


_HANDLERS = {
    name: getattr(_Stream, f"on_{name}")
    for name in (
        "content_block_start",
        "content_block_delta",
        "message_start",
        "message_delta",
        "message_stop",
        "error",
    )
}


async def read(lines: AsyncIterator[bytes], reply: ReplyBuilder, url: str) -> None:
    stream = _Stream(reply)
    async for event in sse_events(lines):
        data = decode_json(event.data)
        if not isinstance(data, dict):
            continue
        handler = _HANDLERS.get(str(data.get("type") or event.name))
        if handler is not None:
            handler(stream, data)
            if stream.stopped:
                break
    stream.finish()
    if not stream.stopped:
        raise stream_ended_early(url)
