"""The ``openai-completions`` API: OpenAI chat completions, and every server that speaks it
(OpenRouter, Ollama's ``/v1``, Groq, DeepSeek, vLLM, llama.cpp, any ``--api-base``).

``POST {base}/chat/completions`` streamed as ``data: {chunk}`` events ending with
``data: [DONE]``. Provider differences are the route's :class:`~pitui.llm.routes.Compat`
flags: the system prompt's role, the output limit's field name, how thinking is asked for
(``reasoning_effort`` or OpenRouter's ``reasoning``) and how a reply's reasoning goes back
(the field it streamed in, or OpenRouter's ``reasoning_details``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from pitui.llm.call import REASONING_EFFORT, Call, data_url
from pitui.llm.errors import ProviderError, body_message
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

MAX_CALL_ID = 40
"""OpenAI's limit on a tool call id (other servers take longer ones, and these fit them all)."""
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")

#: Delta fields that carry reasoning text, in the order servers use them.
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
FILTERED = "The provider's content filter stopped the reply: rephrase the request."
NO_OUTPUT = "(no output)"
TOOL_IMAGES = "Attached image(s) from tool result:"


# ------------------------------------------------------------------------------- request


def rename_call(call_id: str) -> str:
    """A tool call id as chat completions takes it: a Responses id (``call_…|fc_…``, hundreds
    of characters) becomes its two parts joined, and anything over 40 characters a prefix
    and a hash of the whole (calls that shared a ``call_id`` stay apart)."""
    if "|" in call_id:
        call, _, item = call_id.partition("|")
        joined = "_".join(
            p for p in (_BAD_ID_CHARS.sub("_", call), _BAD_ID_CHARS.sub("_", item)) if p
        )
    else:
        joined = call_id
    if len(joined) <= MAX_CALL_ID:
        return joined or "call"
    digest = hashlib.sha256(call_id.encode()).hexdigest()[:8]
    return f"{joined[: MAX_CALL_ID - len(digest) - 1]}_{digest}"


def user_content(content: Any) -> str | list[dict[str, Any]]:
    """A user message: a string stays a string; blocks become content parts (text only:
    joined into one string)."""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        elif block.get("type") == "image" and isinstance(block.get("data"), str):
            parts.append({"type": "image_url", "image_url": {"url": data_url(block)}})
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _assistant(message: dict[str, Any], call: Call) -> dict[str, Any]:
    compat = call.route.compat
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    thinking: list[dict[str, Any]] = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "text":
            texts.append(block["text"])
        elif kind == "toolCall":
            calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {
                        "name": block["name"],
                        "arguments": json.dumps(block["arguments"], ensure_ascii=False),
                    },
                }
            )
        elif kind == "thinking":
            thinking.append(block)
    out: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if calls:
        out["tool_calls"] = calls
    if thinking and compat.reasoning_replay == "details":
        details: list[Any] = []
        for block in thinking:
            value = decode_json(str(block.get("thinkingSignature") or ""))
            if isinstance(value, list):
                details.extend(value)
        if details:
            out["reasoning_details"] = details
    elif thinking and compat.reasoning_replay == "field":
        readable = [str(b.get("thinking") or "") for b in thinking if b.get("thinking")]
        signature = thinking[0].get("thinkingSignature")
        field = signature if signature in REASONING_FIELDS else "reasoning_content"
        if readable:
            out[field] = "\n".join(readable)
    return out


def _tool_result(message: dict[str, Any], call: Call) -> tuple[dict[str, Any], list[Any]]:
    text = content_text(message.get("content"), "\n") or NO_OUTPUT
    if message.get("isError") and not text.startswith("Error"):
        text = f"Error: {text}"
    out: dict[str, Any] = {"role": "tool", "tool_call_id": message["toolCallId"], "content": text}
    if call.route.compat.tool_result_name and message.get("toolName"):
        out["name"] = message["toolName"]
    images = [
        {"type": "image_url", "image_url": {"url": data_url(b)}}
        for b in message.get("content") or []
        if isinstance(b, dict) and b.get("type") == "image"
    ]
    return out, images


def messages(call: Call) -> list[dict[str, Any]]:
    """The chat messages for ``call``'s context (system prompt first)."""
    context = call.context
    out: list[dict[str, Any]] = []
    if context.system:
        role = "developer" if call.route.compat.developer_role else "system"
        out.append({"role": role, "content": context.system})
    images: list[Any] = []  # a batch of tool results' images, sent after the batch

    def flush_images() -> None:
        if images:
            out.append(
                {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES}, *images]}
            )
            images.clear()

    for message in context.messages:
        role = message["role"]
        if role == "toolResult":
            result, found = _tool_result(message, call)
            out.append(result)
            images.extend(found)
            continue
        flush_images()
        if role == "assistant":
            out.append(_assistant(message, call))
        else:
            out.append({"role": "user", "content": user_content(message.get("content"))})
    flush_images()
    return out


def tools(call: Call) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool["description"],
                "parameters": tool["parameters"],
            },
        }
        for tool in call.context.tools
    ]


def request(call: Call) -> HttpRequest:
    route, compat = call.route, call.route.compat
    body: dict[str, Any] = {"model": route.model_id, "messages": messages(call), "stream": True}
    if compat.usage_in_stream:
        body["stream_options"] = {"include_usage": True}
    declared = tools(call)
    if declared:
        body["tools"] = declared
    limit = call.output_limit()
    if limit:
        body[compat.max_tokens_field] = limit
    level = call.thinking
    if level is not None:
        effort = REASONING_EFFORT[level]
        if compat.reasoning_request == "effort":
            body["reasoning_effort"] = effort
        elif compat.reasoning_request == "openrouter":
            body["reasoning"] = {"effort": effort}
    if compat.reported_cost:
        body["usage"] = {"include": True}
    headers: dict[str, str] = {}
    if call.options.api_key:
        headers["authorization"] = f"Bearer {call.options.api_key}"
    base = route.base_url or ""
    return HttpRequest(f"{base}/chat/completions", headers, body)


# ------------------------------------------------------------------------------- stream


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def take_usage(usage: dict[str, Any], reply: ReplyBuilder) -> None:
    prompt = _int(usage.get("prompt_tokens"))
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    cache_read = (
        _int(details.get("cached_tokens"))
        or _int(usage.get("prompt_cache_hit_tokens"))
        or _int(usage.get("cached_tokens"))
    )
    cache_write = _int(details.get("cache_write_tokens"))
    reply.take_usage(
        prompt - cache_read - cache_write,
        _int(usage.get("completion_tokens")),
        cache_read,
        cache_write,
    )
    cost = usage.get("cost")
    if (
        reply.route.compat.reported_cost
        and isinstance(cost, int | float)
        and not isinstance(cost, bool)
        and cost > 0
    ):
        reply.reported_cost = float(cost)


class _Details:
    """OpenRouter's ``reasoning_details`` arrive in pieces: text pieces of one entry are
    joined, encrypted entries stay whole; they are the thinking block's signature."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, pieces: list[Any]) -> None:
        for detail in pieces:
            if not isinstance(detail, dict):
                continue
            previous = self.items[-1] if self.items else None
            kind = detail.get("type")
            if (
                previous is not None
                and kind in ("reasoning.text", "reasoning.summary")
                and previous.get("type") == kind
                and previous.get("index", 0) == detail.get("index", 0)
            ):
                key = "text" if kind == "reasoning.text" else "summary"
                previous[key] = str(previous.get(key) or "") + str(detail.get(key) or "")
                if detail.get("signature"):
                    previous["signature"] = detail["signature"]
            else:
                self.items.append(dict(detail))


def _finish(reason: str, reply: ReplyBuilder) -> None:
    if reason in ("stop", "end", "eos"):
        reply.finish("stop")
    elif reason == "length":
        reply.finish("length")
    elif reason in ("tool_calls", "function_call"):
        reply.finish("toolUse")
    elif reason == "content_filter":
        reply.finish("error", FILTERED)
    else:
        reply.finish("error", f"The provider stopped the reply ({reason}).")


def _stream_error(error: Any) -> ProviderError:
    """An ``{"error": ...}`` chunk in the middle of a stream (OpenRouter, vLLM)."""
    message = body_message({"error": error}) or "The provider reported an error mid-stream."
    code = error.get("code") if isinstance(error, dict) else None
    status = code if isinstance(code, int) and 100 <= code < 600 else None
    # The model failed while answering (Ollama's runner, an upstream provider): transient,
    # unless the error carries a status that says the request itself is wrong.
    transient = status is None or status >= 500 or status == 429
    return ProviderError(
        one_line(message), status, body={"error": error}, retryable=True if transient else None
    )


class _Stream:
    """One reply's chunks: text, reasoning (and the field it came in), OpenRouter's reasoning
    details, tool call pieces, usage and the finish."""

    def __init__(self, reply: ReplyBuilder) -> None:
        self.reply = reply
        self.details = _Details()
        self.finished = False
        self.thinking_field: str | None = None

    def chunk(self, chunk: dict[str, Any]) -> None:
        if chunk.get("error") is not None:
            raise _stream_error(chunk["error"])
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            take_usage(usage, self.reply)
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self.delta(delta)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            _finish(reason, self.reply)
            self.finished = True

    def delta(self, delta: dict[str, Any]) -> None:
        reply = self.reply
        for name in REASONING_FIELDS:
            piece = delta.get(name)
            if isinstance(piece, str) and piece:
                self.thinking_field = self.thinking_field or name
                reply.thinking_piece(piece)
                break
        pieces = delta.get("reasoning_details")
        if isinstance(pieces, list) and pieces:
            self.details.add(pieces)
            if not any(b.kind == "thinking" for b in reply.blocks):
                reply.thinking_piece("")
        content = delta.get("content")
        if isinstance(content, str) and content:
            reply.text_piece(content)
        for piece in delta.get("tool_calls") or []:
            if isinstance(piece, dict):
                self.tool_call(piece)

    def tool_call(self, piece: dict[str, Any]) -> None:
        index = piece.get("index")
        function = as_dict(piece.get("function"))
        arguments = function.get("arguments")
        self.reply.tool_call(
            index if isinstance(index, int) else len(self.reply.calls),
            call_id=str(piece.get("id") or "") or None,
            name=str(function.get("name") or "") or None,
            arguments=arguments if isinstance(arguments, str) else "",
        )

    def finish(self) -> None:
        """The reasoning's signature: OpenRouter's details, or the field it streamed in."""
        if self.details.items:
            items = json.dumps(self.details.items, separators=(",", ":"), ensure_ascii=False)
            self.reply.thinking_signature(items)
        elif self.thinking_field is not None:
            self.reply.thinking_signature(self.thinking_field)


async def read(lines: AsyncIterator[bytes], reply: ReplyBuilder, url: str) -> None:
    """Feed ``reply`` from the event stream until ``[DONE]`` (or the finish and the end)."""
    stream = _Stream(reply)
    done = False
    async for event in sse_events(lines):
        if event.data == "[DONE]":
            done = True
            break
        chunk = decode_json(event.data)
        if not isinstance(chunk, dict):
            raise ProviderError(
                f"The provider sent an unreadable event: {one_line(event.data, 120)!r}",
                retryable=True,
            )
        stream.chunk(chunk)
    if not (done or stream.finished):
        raise stream_ended_early(url)
    stream.finish()
