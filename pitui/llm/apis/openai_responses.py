"""The ``openai-responses`` API: OpenAI's Responses endpoint (the GPT-5 family and the other
reasoning models), or any server that speaks it.

``POST {base}/responses`` streamed as server-sent events: ``response.created``, each output
item's ``response.output_item.added`` … ``done`` (``reasoning``, ``message``,
``function_call``) with its deltas between (reasoning summary text, output text, function call
arguments), then ``response.completed``, ``response.incomplete`` or ``response.failed``, or an
``error`` event.

Reasoning is replayed statelessly (the route's ``compat.encrypted_reasoning``): the request says
``store: false`` and asks for ``reasoning.encrypted_content``; each reasoning item is stored as
its thinking block's ``thinkingSignature`` (the item's JSON: ``id``, ``type``,
``encrypted_content``, ``summary``) and sent back unchanged before the items that followed it.
A reply's items are stored as pi 1.6 stores them: a tool call's id is ``call_id|item_id``, a
text block's ``textSignature`` is ``{"v":1,"id":"msg_…"}``.

The API pairs items by id: a reasoning item sent with its id must be followed by the item that
followed it, and an item produced after a reasoning item, sent with its id, needs that
reasoning item before it. So a reply goes back with every id only when all of them are known
(its text and tool calls carry their item ids, each reasoning item its encrypted content and id,
and the reply is this model's own); otherwise it goes back with none, and the encrypted content
alone carries the reasoning. Replies stored before pitui kept item ids (a tool call id without
``|``, text without a signature) are sent that way.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from pitui.llm.call import REASONING_EFFORT, Call, data_url
from pitui.llm.errors import ProviderError
from pitui.llm.reply import Block, ReplyBuilder
from pitui.llm.transport import (
    HttpRequest,
    decode_json,
    sse_events,
    stream_ended_early,
)
from pitui.session.shapes import content_text
from pitui.text import one_line

ENCRYPTED_REASONING = "reasoning.encrypted_content"
#: The API refuses a smaller ``max_output_tokens``.
MIN_OUTPUT_TOKENS = 16
NO_OUTPUT = "(no output)"
FILTERED = "The provider's content filter stopped the reply: rephrase the request."
#: An ``error`` event's or a failed response's code, and the HTTP status it stands for.
ERROR_STATUS = {
    "invalid_request_error": 400,
    "invalid_prompt": 400,
    "context_length_exceeded": 400,
    "invalid_api_key": 401,
    "insufficient_quota": 429,
    "rate_limit_exceeded": 429,
    "server_error": 500,
    "server_is_overloaded": 503,
}
#: pi's limit for ids sent to OpenAI.
MAX_ID = 64
_BAD_ID = re.compile(r"[^a-zA-Z0-9_-]")


def rename_call(call_id: str) -> str:
    """Tool call ids as the Responses API takes them: ``[a-zA-Z0-9_-]``, 64 at most, for the
    call id and, after a ``|``, the item id (another provider's ids are made to fit; OpenAI's
    pass unchanged)."""
    call, bar, item = call_id.partition("|")
    clean = _BAD_ID.sub("_", call)[:MAX_ID] or "call"
    if not bar:
        return clean
    return f"{clean}|{_BAD_ID.sub('_', item)[:MAX_ID]}"


def split_call_id(call_id: str) -> tuple[str, str | None]:
    """A stored tool call id as (``call_id``, the ``function_call`` item's id when known)."""
    call, _, item = call_id.partition("|")
    return call, (item if item.startswith("fc_") else None)


def text_signature(item_id: str, phase: Any = None) -> str:
    """A message item's id as pi stores it on its text block."""
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    if isinstance(phase, str) and phase:
        payload["phase"] = phase
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)


def message_id(signature: Any) -> tuple[str | None, str | None]:
    """The message item id (and its phase) a text block's signature holds."""
    if not isinstance(signature, str) or not signature:
        return None, None
    if signature.startswith("{"):
        value = decode_json(signature)
        if isinstance(value, dict) and value.get("v") == 1 and isinstance(value.get("id"), str):
            phase = value.get("phase")
            return value["id"], phase if phase in ("commentary", "final_answer") else None
    return (signature, None) if signature.startswith("msg_") else (None, None)


def reasoning_signature(item: dict[str, Any]) -> str:
    """A reasoning item as its thinking block's signature (the shape pitui has always stored:
    ``id``, ``type``, ``encrypted_content``, ``summary``)."""
    summary = [
        {"type": str(part.get("type") or "summary_text"), "text": str(part.get("text") or "")}
        for part in item.get("summary") or []
        if isinstance(part, dict)
    ]
    stored = {
        "id": item.get("id"),
        "type": "reasoning",
        "encrypted_content": item.get("encrypted_content"),
        "summary": summary,
    }
    return json.dumps(stored, separators=(",", ":"), ensure_ascii=False)


# ------------------------------------------------------------------------------- request


def _user_content(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    parts: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append({"type": "input_text", "text": block["text"]})
        elif block.get("type") == "image" and isinstance(block.get("data"), str):
            parts.append({"type": "input_image", "detail": "auto", "image_url": data_url(block)})
    return parts


def _reasoning_item(block: dict[str, Any], stateless: bool) -> dict[str, Any] | None:
    """The reasoning item a thinking block carries (None: it cannot be sent back)."""
    value = decode_json(str(block.get("thinkingSignature") or ""))
    if not isinstance(value, dict) or value.get("type") != "reasoning":
        return None
    encrypted = value.get("encrypted_content")
    encrypted = encrypted if isinstance(encrypted, str) and encrypted else None
    item_id = value.get("id") if isinstance(value.get("id"), str) and value["id"] else None
    if encrypted is None and (stateless or item_id is None):
        return None  # with store: false an item without its content is not found (404)
    summary = value.get("summary")
    item: dict[str, Any] = {
        "type": "reasoning",
        "summary": summary if isinstance(summary, list) else [],
    }
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    if item_id is not None:
        item["id"] = item_id
    return item


def _assistant_items(message: dict[str, Any], call: Call) -> list[dict[str, Any]]:
    """A stored reply's items, with their ids when every id of the reply is known (see the
    module's docstring), else with none."""
    stateless = call.route.compat.encrypted_reasoning
    items: list[dict[str, Any]] = []
    ids: list[str | None] = []  # the id each item would carry
    complete = call.route.owns(message)
    for block in message["content"]:
        kind = block.get("type")
        if kind == "thinking":
            item = _reasoning_item(block, stateless)
            if item is None:
                complete = False  # the items it preceded cannot go back with their ids
                continue
            ids.append(item.pop("id", None))
        elif kind == "text":
            item_id, phase = message_id(block.get("textSignature"))
            if not block["text"] and item_id is None:
                continue  # (an empty message item with its id stays: it may be paired)
            item = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": block["text"], "annotations": []}],
            }
            if phase is not None:
                item["phase"] = phase
            ids.append(item_id)
        elif kind == "toolCall":
            call_id, item_id = split_call_id(str(block["id"]))
            item = {
                "type": "function_call",
                "call_id": call_id,
                "name": block["name"],
                "arguments": json.dumps(block["arguments"], ensure_ascii=False),
            }
            ids.append(item_id)
        else:
            continue
        items.append(item)
    if items and items[-1]["type"] == "reasoning":
        complete = False  # a reasoning item sent with its id needs its following item
    if complete and all(ids):
        for item, item_id in zip(items, ids, strict=True):
            item["id"] = item_id
            if item["type"] == "message":
                item["status"] = "completed"
    return items


def _tool_output(message: dict[str, Any]) -> str | list[dict[str, Any]]:
    content = message.get("content")
    text = content_text(content, "\n")
    if message.get("isError") and not text.startswith("Error"):
        text = f"Error: {text}" if text else "Error"
    images = [
        {"type": "input_image", "detail": "auto", "image_url": data_url(block)}
        for block in content or []
        if isinstance(block, dict) and block.get("type") == "image"
    ]
    if not images:
        return text or NO_OUTPUT
    return [{"type": "input_text", "text": text}, *images] if text else images


def input_items(call: Call) -> list[dict[str, Any]]:
    """The ``input`` for ``call``'s context (the system prompt first)."""
    context = call.context
    out: list[dict[str, Any]] = []
    if context.system:
        role = "developer" if call.route.reasoning else "system"
        out.append({"role": role, "content": context.system})
    for message in context.messages:
        role = message["role"]
        if role == "assistant":
            out.extend(_assistant_items(message, call))
        elif role == "toolResult":
            call_id, _ = split_call_id(str(message["toolCallId"]))
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": _tool_output(message),
                }
            )
        else:
            parts = _user_content(message.get("content"))
            if parts:
                out.append({"role": "user", "content": parts})
    return out


def tools(call: Call) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": tool["name"],
            "description": tool["description"],
            "parameters": tool["parameters"],
            "strict": False,
        }
        for tool in call.context.tools
    ]


def request(call: Call) -> HttpRequest:
    route, compat = call.route, call.route.compat
    body: dict[str, Any] = {"model": route.model_id, "input": input_items(call), "stream": True}
    if compat.encrypted_reasoning:
        body["store"] = False
        if route.reasoning:
            body["include"] = [ENCRYPTED_REASONING]
    declared = tools(call)
    if declared:
        body["tools"] = declared
    limit = call.output_limit()
    if limit:
        body["max_output_tokens"] = max(limit, MIN_OUTPUT_TOKENS)
    level = call.thinking
    if level is not None:
        body["reasoning"] = {"effort": REASONING_EFFORT[level], "summary": "auto"}
    headers: dict[str, str] = {}
    if call.options.api_key:
        headers["authorization"] = f"Bearer {call.options.api_key}"
    return HttpRequest(f"{route.base_url or ''}/responses", headers, body)


# ------------------------------------------------------------------------------- stream


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def take_usage(usage: Any, reply: ReplyBuilder) -> None:
    """``input_tokens`` counts the cached part too: pi's ``input`` is the rest."""
    if not isinstance(usage, dict):
        return
    details = _dict(usage.get("input_tokens_details"))
    cached = _int(details.get("cached_tokens"))
    written = _int(details.get("cache_write_tokens"))
    reply.take_usage(
        _int(usage.get("input_tokens")) - cached - written,
        _int(usage.get("output_tokens")),
        cached,
        written,
    )


def stream_error(code: Any, message: Any, body: Any) -> ProviderError:
    """An ``error`` event or a failed response: the provider's words, with the status its
    code stands for."""
    kind = code if isinstance(code, str) and code else None
    words = message if isinstance(message, str) and message.strip() else None
    text = words or (f"The provider stopped the reply ({kind})." if kind else None)
    status = ERROR_STATUS.get(kind or "")
    return ProviderError(
        one_line(text or "The provider reported an error mid-stream."),
        status,
        body=body,
        error_type=kind,
    )


def _finish(response: dict[str, Any], reply: ReplyBuilder) -> None:
    status = response.get("status")
    if status == "incomplete":
        reason = _dict(response.get("incomplete_details")).get("reason")
        if reason == "max_output_tokens":
            reply.finish("length")
        elif reason == "content_filter":
            reply.finish("error", FILTERED)
        else:
            reply.finish("error", f"The reply is incomplete ({reason or 'no reason given'}).")
    elif status in ("failed", "cancelled"):
        reply.finish("error", f"The provider stopped the reply ({status}).")
    else:
        reply.finish("stop")


class _Reader:
    """The blocks of one response, found by output index (every delta names its item's)."""

    def __init__(self, reply: ReplyBuilder) -> None:
        self.reply = reply
        self.reasoning: dict[str, Block] = {}
        """Reasoning item id -> its thinking block."""
        self.summary_part: dict[Any, int] = {}
        """Output index -> the summary part its deltas last belonged to."""

    def added(self, index: Any, item: dict[str, Any]) -> None:
        kind = item.get("type")
        reply = self.reply
        if kind == "reasoning":
            reply.thinking_piece("", index, new=True)  # a block even if no summary streams
        elif kind == "message":
            reply.text_piece("", index)
        elif kind == "function_call":
            call_id = str(item.get("call_id") or "")
            item_id = str(item.get("id") or "")
            reply.tool_call(
                index,
                call_id=f"{call_id}|{item_id}" if call_id and item_id else call_id or item_id,
                name=str(item.get("name") or ""),
                arguments=str(item.get("arguments") or ""),
            )

    def summary_delta(self, index: Any, part: Any, delta: str) -> None:
        block = self.reply.thinking_piece("", index)
        previous = self.summary_part.get(index)
        if isinstance(part, int):
            self.summary_part[index] = part
            if previous is not None and part != previous and block.text:
                self.reply.thinking_piece("\n\n", index)  # summary parts, as pi joins them
        self.reply.thinking_piece(delta, index)

    def done(self, index: Any, item: dict[str, Any]) -> None:
        kind = item.get("type")
        reply = self.reply
        if kind == "reasoning":
            block = reply.thinking_piece("", index)
            if not block.text:  # nothing streamed: the finished item's text, if any
                texts = [
                    str(part.get("text") or "")
                    for key in ("summary", "content")
                    for part in item.get(key) or []
                    if isinstance(part, dict)
                ]
                reply.thinking_piece("\n\n".join(t for t in texts if t), index)
            block.signature = reasoning_signature(item)
            if isinstance(item.get("id"), str):
                self.reasoning[item["id"]] = block
        elif kind == "message":
            block = reply.text_piece("", index)
            if not block.text:
                parts = [p for p in item.get("content") or [] if isinstance(p, dict)]
                text = "".join(str(p.get("text") or p.get("refusal") or "") for p in parts)
                reply.text_piece(text, index)
            if isinstance(item.get("id"), str) and item["id"]:
                block.signature = text_signature(item["id"], item.get("phase"))
        elif kind == "function_call":
            if self._call(index) is None:
                self.added(index, item)
            self.arguments(index, item.get("arguments"))

    def _call(self, index: Any) -> Block | None:
        return next((b for b in self.reply.blocks if b.kind == "tool" and b.key == index), None)

    def arguments(self, index: Any, final: Any) -> None:
        """A call's complete arguments: they replace what its deltas gave when different."""
        block = self._call(index)
        if block is None or not isinstance(final, str) or not final or block.text == final:
            return
        if final.startswith(block.text):
            self.reply.tool_call(index, arguments=final[len(block.text) :])
        else:
            block.text = ""
            self.reply.tool_call(index, arguments=final)

    def final_output(self, output: Any) -> None:
        """The final response's items: all of them when none was streamed, else the encrypted
        content that only they carry (Azure's)."""
        items = (
            [item for item in output if isinstance(item, dict)] if isinstance(output, list) else []
        )
        if not self.reply.blocks:
            for index, item in enumerate(items):
                self.done(index, item)
            return
        for item in items:
            if item.get("type") != "reasoning":
                continue
            block = self.reasoning.get(str(item.get("id")))
            if block is None or not item.get("encrypted_content"):
                continue
            stored = decode_json(block.signature or "")
            if isinstance(stored, dict) and not stored.get("encrypted_content"):
                block.signature = reasoning_signature({**stored, **item})


async def read(lines: AsyncIterator[bytes], reply: ReplyBuilder, url: str) -> None:
    """Feed ``reply`` from the event stream until the response completes, stops incomplete or
    fails (a failure or an ``error`` event raises :class:`ProviderError`)."""
    reader = _Reader(reply)
    async for event in sse_events(lines):
        data = decode_json(event.data)
        if not isinstance(data, dict):
            continue
        kind = data.get("type") or event.name
        index = data.get("output_index")
        if kind == "response.reasoning_summary_text.delta":
            reader.summary_delta(index, data.get("summary_index"), str(data.get("delta") or ""))
        elif kind == "response.reasoning_text.delta":
            reply.thinking_piece(str(data.get("delta") or ""), index)
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            reply.text_piece(str(data.get("delta") or ""), index)
        elif kind == "response.function_call_arguments.delta":
            reply.tool_call(index, arguments=str(data.get("delta") or ""))
        elif kind == "response.function_call_arguments.done":
            reader.arguments(index, data.get("arguments"))
        elif kind == "response.output_item.added":
            reader.added(index, _dict(data.get("item")))
        elif kind == "response.output_item.done":
            reader.done(index, _dict(data.get("item")))
        elif kind in ("response.completed", "response.incomplete"):
            response = _dict(data.get("response"))
            reader.final_output(response.get("output"))
            take_usage(response.get("usage"), reply)
            _finish(response, reply)
            return
        elif kind == "response.failed":
            response = _dict(data.get("response"))
            take_usage(response.get("usage"), reply)
            error = _dict(response.get("error"))
            reason = _dict(response.get("incomplete_details")).get("reason")
            message = error.get("message") or (
                f"The reply is incomplete ({reason})." if reason else None
            )
            raise stream_error(error.get("code"), message, data)
        elif kind == "error":
            error = _dict(data.get("error")) or data
            raise stream_error(error.get("code") or error.get("type"), error.get("message"), data)
    raise stream_ended_early(url)
