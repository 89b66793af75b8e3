"""The ``google-generative-ai`` API: Gemini from Google AI Studio.

``POST {base}/models/{model}:streamGenerateContent?alt=sse`` with the key in
``x-goog-api-key``, streamed as server-sent events, each a ``GenerateContentResponse``
(candidates' parts, a ``finishReason`` on the last, ``usageMetadata``). Gemini sends no closing
event: a stream that ended after a finish reason is complete, one that ended before it is not.

Thinking as pi 1.6 asks for it: Gemini 3 and later (and Gemma 4) take a ``thinkingLevel``, kept
to the levels the model takes (the model table's ``thinking_levels``); Gemini 2.5 takes a token
budget per level (pi's figures per family). Both with ``includeThoughts``, so thoughts stream as
``thought`` parts. Thinking off sends the least the model takes: budget 0, or its lowest level;
Gemini 2.5 Pro cannot stop thinking and refuses budget 0, so it gets its minimum (128), where
pi 1.6 sends 0 and is refused.

Thought signatures go back where they came from, as pi stores them: on function calls
(``thoughtSignature`` of a tool call), on text (a text block's ``textSignature``) and on thought
parts (a thinking block's ``thinkingSignature``), and only when they are base64 (the API
refuses anything else). Gemini gives tool calls no ids: pitui makes them as pi does
(``name_<ms>_<n>``); Gemini 3 and later get them back in ``functionCall.id`` and
``functionResponse.id``.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from pitui.llm.call import Call
from pitui.llm.errors import ProviderError
from pitui.llm.reply import ReplyBuilder
from pitui.llm.transport import (
    HttpRequest,
    body_message,
    decode_json,
    sse_events,
    stream_ended_early,
)
from pitui.session.ids import now_ms
from pitui.session.shapes import content_text
from pitui.text import one_line

GEMINI_EMPTY = (
    "Gemini stopped without a reply (for example a malformed function call): try again or "
    "rephrase the request."
)
FILTERED = (
    "Gemini stopped the reply for safety or recitation reasons: rephrase the request or try "
    "another model."
)
#: Finish reasons that mean a content filter stopped the reply.
FILTER_REASONS = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)
LENGTH_REASONS = frozenset({"MAX_TOKENS", "CONTINUATION"})
EMPTY_REASONS = frozenset({"MALFORMED_FUNCTION_CALL"})
TOOL_IMAGES = "Tool result image:"
IMAGE_ONLY_RESULT = "(see attached image)"
LEVELS = ("minimal", "low", "medium", "high")
#: pi 1.6's thinking budgets for Gemini 2.5 (tokens), by the family's name in the model id;
#: any other budget model thinks dynamically (-1).
BUDGETS = (
    ("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
    ("2.5-flash-lite", {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}),
    ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}),
)
DYNAMIC_BUDGET = -1
#: The least thinking Gemini 2.5 Pro takes (it refuses 0: it cannot stop thinking).
PRO_25_MIN_BUDGET = 128

_BAD_ID = re.compile(r"[^a-zA-Z0-9_-]")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_MAJOR = re.compile(r"^gemini(?:-live)?-(\d+)")
_LEVEL_MODELS = re.compile(
    r"gemini-3(?:\.\d+)?-(?:pro|flash)|gemini-(?:[4-9]|[1-9]\d)|^gemini-flash(?:-lite)?-latest$"
    r"|gemma-?4"
)
_call_numbers = itertools.count(1)


def rename_call(call_id: str) -> str:
    """Tool call ids as Gemini 3 takes them back (``[a-zA-Z0-9_-]``, at most 64)."""
    clean = _BAD_ID.sub("_", call_id)[:64]
    return clean or "call"


def major_version(model_id: str) -> int | None:
    match = _MAJOR.match(model_id.lower())
    return int(match.group(1)) if match else None


def sends_call_ids(model_id: str) -> bool:
    """Gemini 3 and later match function responses to calls by id."""
    major = major_version(model_id)
    return major is not None and major >= 3


def takes_thinking_level(model_id: str) -> bool:
    """Gemini 3 and later (and Gemma 4) take ``thinkingLevel``; Gemini 2.5 a token budget."""
    return bool(_LEVEL_MODELS.search(model_id.lower()))


def valid_signature(signature: Any) -> bool:
    """Whether a stored thought signature is base64, as the API's bytes field needs."""
    return (
        isinstance(signature, str)
        and len(signature) % 4 == 0
        and _BASE64.match(signature) is not None
    )


# ------------------------------------------------------------------------------- request


def _inline(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "inlineData": {
            "mimeType": block.get("mimeType") or "image/png",
            "data": str(block.get("data") or ""),
        }
    }


def _user_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"]:
            parts.append({"text": block["text"]})
        elif block.get("type") == "image" and isinstance(block.get("data"), str):
            parts.append(_inline(block))
    return parts


def _signed(part: dict[str, Any], signature: Any) -> dict[str, Any]:
    if valid_signature(signature):
        part["thoughtSignature"] = signature
    return part


def _model_parts(message: dict[str, Any], with_ids: bool) -> list[dict[str, Any]]:
    """A stored reply's blocks as parts (its thinking is this model's: the context kept it)."""
    parts: list[dict[str, Any]] = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "text":
            text, signature = str(block.get("text") or ""), block.get("textSignature")
            if text.strip() or valid_signature(signature):
                parts.append(_signed({"text": text}, signature))
        elif kind == "thinking" and not block.get("redacted"):
            text, signature = str(block.get("thinking") or ""), block.get("thinkingSignature")
            if text.strip() or valid_signature(signature):
                parts.append(_signed({"thought": True, "text": text}, signature))
        elif kind == "toolCall":
            function: dict[str, Any] = {"name": block["name"], "args": block["arguments"]}
            if with_ids:
                function["id"] = block["id"]
            parts.append(_signed({"functionCall": function}, block.get("thoughtSignature")))
    return parts


def _function_response(
    message: dict[str, Any], name: str, with_ids: bool, nested_images: bool
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A tool result as a ``functionResponse`` part, and the images that must follow the
    batch in a turn of their own (Gemini before 3 takes no images in a response)."""
    content = message.get("content")
    text = content_text(content, "\n")
    blocks = content if isinstance(content, list) else []
    images = [
        _inline(b)
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "image" and isinstance(b.get("data"), str)
    ]
    value = text if text.strip() else IMAGE_ONLY_RESULT if images else ""
    response: dict[str, Any] = {
        "name": name,
        "response": {"error": value} if message.get("isError") else {"output": value},
    }
    if images and nested_images:
        response["parts"] = images
        images = []
    if with_ids:
        response["id"] = message["toolCallId"]
    return {"functionResponse": response}, images


def contents(call: Call) -> list[dict[str, Any]]:
    """``call``'s conversation as Gemini ``contents`` (``user`` and ``model`` turns; a batch
    of tool results is one user turn)."""
    model_id = call.route.model_id
    with_ids = sends_call_ids(model_id)
    nested_images = major_version(model_id) is None or with_ids
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # tool call id -> the function it called
    images: list[dict[str, Any]] = []  # a batch's images (Gemini before 3)

    def flush_images() -> None:
        if images:
            out.append({"role": "user", "parts": [{"text": TOOL_IMAGES}, *images]})
            images.clear()

    for message in call.context.messages:
        role = message["role"]
        if role == "toolResult":
            call_id = str(message.get("toolCallId") or "")
            name = str(message.get("toolName") or "") or names.get(call_id, "")
            part, later = _function_response(message, name, with_ids, nested_images)
            last = out[-1] if out else None
            if (
                last is not None
                and last["role"] == "user"
                and any("functionResponse" in p for p in last["parts"])
            ):
                last["parts"].append(part)
            else:
                out.append({"role": "user", "parts": [part]})
            images.extend(later)
            continue
        flush_images()
        if role == "assistant":
            for block in message["content"]:
                if block.get("type") == "toolCall":
                    names[block["id"]] = block["name"]
            parts = _model_parts(message, with_ids)
            turn = "model"
        else:
            parts = _user_parts(message.get("content"))
            turn = "user"
        if parts:
            out.append({"role": turn, "parts": parts})
    flush_images()
    return out


#: Schema keywords whose values name subschemas (their keys are names, not keywords).
_NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
#: Schema keywords holding a subschema or a list of them.
_SUBSCHEMAS = frozenset(
    {
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "items",
        "prefixItems",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)


def gemini_schema(schema: Any, names: bool = False) -> Any:
    """A tool's JSON Schema as ``parametersJsonSchema`` takes it (pi's conversion): Gemini
    ignores ``const`` there, so a string or number ``const`` becomes a one-value ``enum``;
    everything else is sent unchanged."""
    if isinstance(schema, list):
        return [gemini_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if names or key in _SUBSCHEMAS:
            out[key] = gemini_schema(value)
        elif key in _NAME_MAPS:
            out[key] = gemini_schema(value, names=True)
        else:
            out[key] = value
    if not names and "const" in out and "enum" not in out:
        value = out["const"]
        if isinstance(value, str) or (
            isinstance(value, int | float) and not isinstance(value, bool)
        ):
            del out["const"]
            out["enum"] = [value]
    return out


def tools(call: Call) -> list[dict[str, Any]]:
    declarations = [
        {
            "name": tool["name"],
            "description": tool["description"],
            "parametersJsonSchema": gemini_schema(tool["parameters"]),
        }
        for tool in call.context.tools
    ]
    return [{"functionDeclarations": declarations}] if declarations else []


def _level(levels: tuple[str, ...], level: str) -> str:
    """pi's clamp: the level asked for, else the next one up the model takes, else down."""
    known = [lv for lv in levels if lv in LEVELS]
    if not known or level in known:
        return level
    index = LEVELS.index(level)
    for candidate in (*LEVELS[index + 1 :], *reversed(LEVELS[:index])):
        if candidate in known:
            return candidate
    return level


def _budget(model_id: str, level: str) -> int:
    lowered = model_id.lower()
    for family, budgets in BUDGETS:
        if family in lowered:
            return budgets[level]
    return DYNAMIC_BUDGET


def thinking_config(call: Call) -> dict[str, Any] | None:
    """``generationConfig.thinkingConfig`` (None for a model that does not think)."""
    route = call.route
    if not route.reasoning:
        return None
    model_id = route.model_id
    level = call.thinking
    levels = call.info.thinking_levels
    if takes_thinking_level(model_id):
        if level is None:
            lowest = next((lv for lv in LEVELS if lv in levels), "low")
            return {"thinkingLevel": lowest.upper()}
        return {"includeThoughts": True, "thinkingLevel": _level(levels, level).upper()}
    if level is None:
        return {"thinkingBudget": PRO_25_MIN_BUDGET if "2.5-pro" in model_id.lower() else 0}
    return {"includeThoughts": True, "thinkingBudget": _budget(model_id, level)}


def request(call: Call) -> HttpRequest:
    route = call.route
    body: dict[str, Any] = {"contents": contents(call)}
    if call.context.system:
        body["systemInstruction"] = {"parts": [{"text": call.context.system}]}
    declared = tools(call)
    if declared:
        body["tools"] = declared
    config: dict[str, Any] = {}
    limit = call.output_limit()
    if limit:
        config["maxOutputTokens"] = limit
    thinking = thinking_config(call)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    if config:
        body["generationConfig"] = config
    headers: dict[str, str] = {}
    if call.options.api_key:
        headers["x-goog-api-key"] = call.options.api_key
    base = route.base_url or ""
    return HttpRequest(
        f"{base}/models/{route.model_id}:streamGenerateContent?alt=sse", headers, body
    )


# ------------------------------------------------------------------------------- stream


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def take_usage(usage: dict[str, Any], reply: ReplyBuilder) -> None:
    """``usageMetadata`` in pi's counts: input without the cached part, thoughts in output."""
    cached = _int(usage.get("cachedContentTokenCount"))
    reply.take_usage(
        _int(usage.get("promptTokenCount")) - cached,
        _int(usage.get("candidatesTokenCount")) + _int(usage.get("thoughtsTokenCount")),
        cached,
        0,
    )


def stream_error(data: dict[str, Any]) -> ProviderError:
    """An ``{"error": {code, message, status, details}}`` event in the middle of a stream."""
    error = data.get("error")
    message = body_message(data) or "Gemini reported an error mid-stream."
    code = error.get("code") if isinstance(error, dict) else None
    status = code if isinstance(code, int) and 100 <= code < 600 else None
    state = error.get("status") if isinstance(error, dict) else None
    return ProviderError(
        one_line(message),
        status,
        body=data,
        error_type=state if isinstance(state, str) else None,
    )


def _call_id(given: Any, name: str, reply: ReplyBuilder) -> str:
    """Gemini's id for a call when it gave a new one, else one made as pi makes them."""
    if isinstance(given, str) and given and all(c.id != given for c in reply.calls.values()):
        return given
    return f"{name}_{now_ms()}_{next(_call_numbers)}"


def _feed_part(part: dict[str, Any], reply: ReplyBuilder) -> None:
    signature = part.get("thoughtSignature")
    signature = signature if isinstance(signature, str) and signature else None
    text = part.get("text")
    if isinstance(text, str) and (text or signature):
        if part.get("thought") is True:
            reply.thinking_piece(text)
            if signature:
                reply.thinking_signature(signature)
        else:
            reply.text_piece(text)
            if signature:
                reply.text_signature(signature)
    function = part.get("functionCall")
    if isinstance(function, dict):
        name = str(function.get("name") or "")
        args = function.get("args")
        reply.tool_call(
            len(reply.calls),
            call_id=_call_id(function.get("id"), name, reply),
            name=name,
            arguments=json.dumps(args if isinstance(args, dict) else {}, ensure_ascii=False),
            thought_signature=signature,
        )


def _finish(reason: str, reply: ReplyBuilder) -> None:
    if reason == "STOP":
        if not reply.blocks:
            reply.finish("error", GEMINI_EMPTY)
        else:
            reply.finish("toolUse" if reply.calls else "stop")
    elif reason in LENGTH_REASONS:
        reply.finish("length")
    elif reason in FILTER_REASONS:
        reply.finish("error", FILTERED)
    elif reason in EMPTY_REASONS:
        reply.finish("error", GEMINI_EMPTY)
    else:
        reply.finish("error", f"Gemini stopped the reply ({reason}).")


class _Stream:
    """One reply's responses: parts, usage, the finish reason and a blocked prompt."""

    def __init__(self, reply: ReplyBuilder) -> None:
        self.reply = reply
        self.reason: str | None = None
        self.blocked: str | None = None

    def response(self, data: dict[str, Any]) -> None:
        if data.get("error") is not None:
            raise stream_error(data)
        usage = data.get("usageMetadata")
        if isinstance(usage, dict):
            take_usage(usage, self.reply)
        feedback = data.get("promptFeedback")
        if isinstance(feedback, dict) and isinstance(feedback.get("blockReason"), str):
            self.blocked = feedback["blockReason"]
        candidates = data.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        if not isinstance(candidate, dict):
            return
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict):
                _feed_part(part, self.reply)
        if isinstance(candidate.get("finishReason"), str) and candidate["finishReason"]:
            self.reason = candidate["finishReason"]

    def finish(self, url: str) -> None:
        if self.reason is not None:
            _finish(self.reason, self.reply)
        elif self.blocked is not None:
            self.reply.finish(
                "error",
                f"Gemini blocked the prompt ({self.blocked}): rephrase the request or try "
                "another model.",
            )
        else:
            raise stream_ended_early(url)


async def read(lines: AsyncIterator[bytes], reply: ReplyBuilder, url: str) -> None:
    """Feed ``reply`` from the event stream; complete once a finish reason came."""
    stream = _Stream(reply)
    async for event in sse_events(lines):
        data = decode_json(event.data)
        if isinstance(data, list) and len(data) == 1:
            data = data[0]  # the array form of a response
        if not isinstance(data, dict):
            raise ProviderError(
                f"Gemini sent an unreadable event: {one_line(event.data, 120)!r}",
                retryable=True,
            )
        stream.response(data)
    stream.finish(url)
