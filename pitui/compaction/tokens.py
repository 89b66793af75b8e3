"""pi 1.6's chars/4 token estimate (``estimateTokens``), with JavaScript string lengths.

JS counts UTF-16 code units, so a character outside the BMP (most emoji) counts twice.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pitui.session.shapes import IMAGE_CHARS, counted_parts
from pitui.text import js_len


def message_chars(message: dict[str, Any]) -> int:
    """The character count pi's estimate divides by four (JavaScript string lengths)."""
    texts, images = counted_parts(message)
    return sum(js_len(text) for text in texts) + images * IMAGE_CHARS


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


def cache_hit_ratio(usage: Any) -> float | None:
    """The share of a reply's prompt read from the provider's cache (None: no caching
    reported)."""
    if not isinstance(usage, dict):
        return None

    def number(key: str) -> float:
        value = usage.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            return 0.0
        return float(value)

    read, write = number("cacheRead"), number("cacheWrite")
    prompt = number("input") + read + write
    if read + write <= 0 or prompt <= 0:
        return None
    return read / prompt


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
