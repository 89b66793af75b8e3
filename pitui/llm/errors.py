"""Classifying provider errors: context overflow, retryable, authentication, unknown model.

The overflow and retry patterns follow pi 1.6 (``isContextOverflow`` and
``isRetryableAssistantError``), so a session behaves the same whichever tool wrote it.
"""

from __future__ import annotations

import email.utils
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

_OVERFLOW_EXCLUDED_PREFIX = re.compile(r"^(throttling error|service unavailable):", re.I)
_OVERFLOW_EXCLUDED = re.compile(r"rate limit|too many requests", re.I)
_OVERFLOW_PATTERNS = [
    r"prompt (is )?too long",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"model_context_window_exceeded",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"prompt exceeds max length",
    r"request_too_large",
    r"exceeds (the )?(model'?s )?maximum context length",
    r"context window exceeded",
    r"exceeds (the )?maximum allowed input length of \d+ tokens",
    r"input \(\d+ tokens\) is longer than the model'?s context length",
    r"prompt has \d+ tokens, but the configured context size is \d+ tokens",
    r"prompt too long; exceeded (max )?context length",
    r"range of input length should be",
    r"^\w[\w ]* api error \(413\):",
    r"^413\b",
]
_OVERFLOW = re.compile("|".join(f"(?:{p})" for p in _OVERFLOW_PATTERNS), re.I)

_QUOTA = re.compile(
    r"insufficient_quota|quota exceeded|exceeded your current quota|billing|out of budget|"
    r"available balance|credit balance|usage limit",
    re.I,
)
_RETRYABLE = re.compile(
    r"overloaded|rate.?limit|too many requests|(?<!\d)(?:429|500|502|503|504|520|524)(?!\d)|"
    r"service.?unavailable|server.?error|internal.?error|connection.?error|"
    r"connection.?refused|connection.?reset|econnreset|other side closed|fetch failed|"
    r"upstream.?connect|reset before headers|terminated|retry delay|timed? ?out|timeout|"
    r"socket hang up|network error|stream ended|incomplete chunked read|peer closed|"
    r"provider returned error|remote ?protocol ?error|server disconnected",
    re.I,
)


@dataclass(frozen=True)
class ErrorInfo:
    """What went wrong, in one sentence, and what the agent should do about it."""

    kind: str  # "overflow" | "retryable" | "auth" | "model" | "other"
    message: str
    retry_after: float | None = None
    status: int | None = None


def is_overflow_message(message: str) -> bool:
    text = message.strip()
    if _OVERFLOW_EXCLUDED_PREFIX.search(text) or _OVERFLOW_EXCLUDED.search(text):
        return False
    return bool(_OVERFLOW.search(text))


def is_retryable_message(message: str) -> bool:
    if _QUOTA.search(message) or is_overflow_message(message):
        return False
    return bool(_RETRYABLE.search(message))


def _status(exc: BaseException) -> int | None:
    for attr in ("status_code", "code"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
        if isinstance(value, str) and value.isdigit():
            return int(value)
    return None


def _retry_after(exc: BaseException) -> float | None:
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except AttributeError:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    # An HTTP date ("Wed, 21 Oct 2026 07:28:00 GMT"): wait until then.
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


_PREFIX = re.compile(r"^(?:litellm\.)?\w*(?:Error|Exception|Timeout)\s*(?:[:-]\s*)")


def _clean(message: str) -> str:
    """litellm wraps the provider's words in class names, twice; keep the words."""
    text = " ".join(str(message).split())
    text = re.sub(r"\s*Original exception:.*$", "", text)
    previous = None
    while previous != text:
        previous = text
        text = _PREFIX.sub("", text)
    return text[:500] or " ".join(str(message).split())[:500]


def classify(exc: BaseException) -> ErrorInfo:
    """Sort an exception raised by a litellm call (or a cut stream) into one of our kinds."""
    name = type(exc).__name__
    raw = _clean(str(exc)) or name
    status = _status(exc)
    if name == "ContextWindowExceededError" or is_overflow_message(raw):
        return ErrorInfo("overflow", raw, status=status)
    if name in ("AuthenticationError", "PermissionDeniedError") or status in (401, 403):
        return ErrorInfo(
            "auth",
            f"The provider refused the API key ({raw}). Check the key in your environment.",
            status=status,
        )
    if name == "NotFoundError" or status == 404 or "LLM Provider NOT provided" in raw:
        return ErrorInfo(
            "model",
            f"The model was not found ({raw}). Choose another with --model provider/name.",
            status=status,
        )
    if (
        name
        in (
            "RateLimitError",
            "InternalServerError",
            "ServiceUnavailableError",
            "APIConnectionError",
            "Timeout",
            "BadGatewayError",
            "MidStreamFallbackError",
        )
        or status in (429, 500, 502, 503, 504, 520, 524)
    ) and not _QUOTA.search(raw):
        return ErrorInfo("retryable", raw, _retry_after(exc), status)
    if is_retryable_message(raw):
        return ErrorInfo("retryable", raw, _retry_after(exc), status)
    return ErrorInfo("other", raw, status=status)


def assistant_error_kind(message: dict[str, Any], context_window: int | None) -> str | None:
    """For a stored assistant message: "overflow", "retryable" or None (pi's classifiers)."""
    stop = message.get("stopReason")
    text = str(message.get("errorMessage") or "")
    usage = message.get("usage") or {}
    if stop == "error":
        if is_overflow_message(text):
            return "overflow"
        if is_retryable_message(text):
            return "retryable"
        return None
    filled = usage.get("input", 0) + usage.get("cacheRead", 0)
    if stop == "length" and context_window and usage.get("output", 0) == 0:
        return "overflow" if filled >= 0.99 * context_window else None
    if stop == "stop" and context_window and filled > context_window:
        return "overflow"  # silent overflow: the provider answered past its window
    return None
