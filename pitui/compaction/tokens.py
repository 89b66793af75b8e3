"""pi 1.6's chars/4 token estimate (``estimateTokens``), with JavaScript string lengths.

JS counts UTF-16 code units, so a character outside the BMP (most emoji) counts twice.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

IMAGE_CHARS = 4800


def js_len(text: str) -> int:
    """Length of ``text`` as JavaScript counts it (UTF-16 code units)."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _js_value(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {k: _js_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_value(v) for v in value]
    return value


def js_stringify(value: Any) -> str:
    """``JSON.stringify`` for plain JSON data (compact, non-ASCII kept, integral floats as ints)."""
    if value is None:
        return "null"
    return json.dumps(_js_value(value), separators=(",", ":"), ensure_ascii=False)


def _content_chars(content: Any, image_chars: int) -> int:
    if isinstance(content, str):
        return js_len(content)
    chars = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                chars += js_len(block["text"])
            elif kind == "image":
                chars += image_chars
    return chars


def message_chars(message: dict[str, Any]) -> int:
    """The character count pi's estimate divides by four."""
    role = message.get("role")
    if role in ("user", "custom", "toolResult"):
        return _content_chars(message.get("content"), IMAGE_CHARS)
    if role == "assistant":
        chars = 0
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "text" and isinstance(block.get("text"), str):
                    chars += js_len(block["text"])
                elif kind == "thinking" and isinstance(block.get("thinking"), str):
                    chars += js_len(block["thinking"])
                elif kind == "toolCall":
                    name = block.get("name")
                    chars += js_len(name) if isinstance(name, str) else 0
                    chars += js_len(js_stringify(block.get("arguments")))
        return chars
    if role == "bashExecution":
        command, output = message.get("command"), message.get("output")
        return (js_len(command) if isinstance(command, str) else 0) + (
            js_len(output) if isinstance(output, str) else 0
        )
    if role in ("branchSummary", "compactionSummary"):
        summary = message.get("summary")
        return js_len(summary) if isinstance(summary, str) else 0
    if role == "system":
        chars = _content_chars(message.get("content"), IMAGE_CHARS)
        sections = message.get("sections")
        if isinstance(sections, dict):
            chars += sum(js_len(v) for v in sections.values() if isinstance(v, str) and v)
        tools = message.get("toolsAdded")
        if tools:
            chars += js_len(js_stringify(tools))
        return chars
    return 0


def estimate_tokens(message: dict[str, Any]) -> int:
    """``ceil(chars / 4)`` per pi 1.6's rules for each role."""
    return math.ceil(message_chars(message) / 4)


# ----------------------------------------------------------------------------- usage accounting


def calculate_context_tokens(usage: Any) -> int:
    """``totalTokens``, or (when it is 0 or missing) input + output + cacheRead + cacheWrite."""
    if not isinstance(usage, dict):
        return 0

    def number(key: str) -> int:
        value = usage.get(key)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    return number("totalTokens") or (
        number("input") + number("output") + number("cacheRead") + number("cacheWrite")
    )


def assistant_usage(message: dict[str, Any]) -> dict[str, Any] | None:
    """Usage of an assistant reply that can be trusted: not aborted, not an error, not zero."""
    if message.get("role") != "assistant" or message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message.get("usage")
    if not isinstance(usage, dict) or calculate_context_tokens(usage) <= 0:
        return None
    return usage


def context_estimate(
    messages: list[dict[str, Any]], count: Callable[[dict[str, Any]], int] = estimate_tokens
) -> dict[str, Any]:
    """pi's ``estimateContextTokens``: the last trusted usage plus an estimate of what follows."""
    for index in range(len(messages) - 1, -1, -1):
        usage = assistant_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = sum(count(m) for m in messages[index + 1 :])
            return {
                "tokens": usage_tokens + trailing,
                "usageTokens": usage_tokens,
                "trailingTokens": trailing,
                "lastUsageIndex": index,
            }
    total = sum(count(m) for m in messages)
    return {"tokens": total, "usageTokens": 0, "trailingTokens": total, "lastUsageIndex": None}


def last_assistant_usage_tokens(messages: list[dict[str, Any]]) -> int | None:
    for message in reversed(messages):
        usage = assistant_usage(message)
        if usage is not None:
            return calculate_context_tokens(usage)
    return None
