"""Classifying provider errors: context overflow, retryable, authentication, unknown model.

The overflow and retry patterns follow pi 1.6 (``isContextOverflow`` and
``isRetryableAssistantError``), so a session behaves the same whichever tool wrote it.
"""

from __future__ import annotations

import ast
import email.utils
import json
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


class ProviderError(Exception):
    """A request the provider refused, or that failed on the way (the native APIs).

    ``message`` is one line: the provider's own words (from its error body or error event),
    or a sentence saying what happened to the connection. ``status`` is the HTTP status (or
    the status the provider's error type stands for); ``retryable`` is set when the failure
    is known to be transient (a cut or stalled stream, a refused connection) or known not to
    be (a TLS failure)."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        *,
        retry_after: float | None = None,
        retryable: bool | None = None,
        body: Any = None,
        error_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.retryable = retryable
        self.body = body
        self.error_type = error_type

    def __str__(self) -> str:
        return self.message


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


def parse_retry_after(value: Any) -> float | None:
    """A ``retry-after`` header's wait in seconds (a number, or an HTTP date to wait until)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def retry_after_seconds(exc: BaseException) -> float | None:
    """The wait a refusal asks for, from the response headers litellm keeps; None when it
    says none."""
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
    return parse_retry_after(value)


_PREFIX = re.compile(
    r"^(?:litellm\.)?\w*(?:Error|Exception|Timeout)\s*(?:[:-]\s*)|^\w+(?:Error|Exception) - "
)
_BYTES = re.compile(r"b'((?:[^'\\]|\\.)*)'" + "|" + r'b"((?:[^"\\]|\\.)*)"')
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _decoded_bytes(match: re.Match[str]) -> str:
    """A ``b'...'`` repr in an error text, as the text it holds."""
    try:
        value = ast.literal_eval(match.group(0))
    except (ValueError, SyntaxError):
        return match.group(0)
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _json_in(text: str) -> Any:
    """The first JSON object embedded in ``text`` (a provider's error body), or None."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def error_body(text: str) -> dict[str, Any] | None:
    """The provider's JSON error body inside an exception text (bytes reprs decoded)."""
    value = _json_in(_BYTES.sub(_decoded_bytes, text))
    return value if isinstance(value, dict) else None


def body_message(body: Any) -> str | None:
    """The human sentence of a provider's error body (Anthropic, OpenAI, Gemini, Ollama, and
    OpenRouter's ``metadata.raw`` with the upstream provider's own words)."""
    if isinstance(body, list) and body:
        body = body[0]  # Gemini's streamed errors come as a one-element array
    if not isinstance(body, dict):
        return None
    error = body.get("error", body)
    if isinstance(error, str):
        return error
    if not isinstance(error, dict):
        return None
    message = error.get("message") or body.get("message") or body.get("detail")
    if not isinstance(message, str) or not message:
        return None
    metadata = error.get("metadata")
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    if isinstance(raw, str) and raw:
        inner = _json_in(raw)
        detail = body_message(inner) if isinstance(inner, dict) else raw
        if detail and detail != message:
            message = f"{message}: {detail}"
    return message


def _clean(message: str) -> str:
    """litellm wraps the provider's words in class names, twice, and sometimes a bytes repr of
    the whole JSON body; keep the provider's words."""
    text = " ".join(str(message).split())
    text = re.sub(r"\s*Original exception:.*$", "", text)
    text = re.sub(r"\s*Received Model Group=.*$", "", text)
    body = error_body(text)
    if body is not None:
        spoken = body_message(body)
        if spoken:
            text = " ".join(spoken.split())
    text = _BYTES.sub(_decoded_bytes, text)
    previous = None
    while previous != text:
        previous = text
        text = _PREFIX.sub("", text)
    return text[:500] or " ".join(str(message).split())[:500]


_OLLAMA_LINE = re.compile(r"Got unexpected response from Ollama: (\{.*\})", re.S)


def _ollama_stream_error(text: str) -> str | None:
    """The text of an ``{"error": ...}`` line Ollama sent in the middle of a stream."""
    match = _OLLAMA_LINE.search(text)
    if match is None:
        return None
    try:
        value = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError):
        return None
    error = value.get("error") if isinstance(value, dict) else None
    return f"Ollama: {error}" if isinstance(error, str) and error else None


def google_retry_delay(body: dict[str, Any] | None) -> float | None:
    """Gemini's ``RetryInfo.retryDelay`` ("7s", "7.5s") from a 429 body, in seconds."""
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def google_error_reason(body: dict[str, Any] | None) -> str | None:
    """The ``reason`` of Gemini's ``ErrorInfo`` detail (``API_KEY_INVALID``, ...)."""
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("ErrorInfo"):
            reason = detail.get("reason")
            return reason if isinstance(reason, str) else None
    return None


#: Client errors that mean "this request is wrong": retrying cannot help.
PERMANENT_STATUSES = frozenset({400, 401, 403, 404, 405, 413, 422})


def _status_in_body(body: dict[str, Any] | None) -> int | None:
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) and 100 <= code < 600 else None


@dataclass(frozen=True)
class _Failure:
    """What an exception says, whichever layer raised it."""

    name: str
    message: str
    body: dict[str, Any] | None
    status: int | None
    retry_after: float | None
    retryable: bool | None = None


_LITELLM_RETRYABLE = frozenset(
    {
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "APIConnectionError",
        "Timeout",
        "BadGatewayError",
        "MidStreamFallbackError",
    }
)
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 520, 524, 529})


def _failure(exc: BaseException) -> _Failure:
    if isinstance(exc, ProviderError):
        body = exc.body if isinstance(exc.body, dict) else None
        status = exc.status
        if status in (None, 500) and _status_in_body(body) is not None:
            status = _status_in_body(body)  # an OpenRouter body carries the upstream's code
        name = "NotFoundError" if status == 404 else type(exc).__name__
        return _Failure(name, exc.message, body, status, exc.retry_after, exc.retryable)
    # litellm's exceptions (its routes): the provider's words wrapped in class names.
    name = type(exc).__name__
    raw = _clean(str(exc)) or name
    body = error_body(str(exc))
    status = _status(exc)
    body_status = _status_in_body(body)
    if status in (None, 500) and body_status is not None:
        status = body_status  # a stream error line or an OpenRouter body carries the real code
    retryable = True if name in _LITELLM_RETRYABLE else None
    return _Failure(name, raw, body, status, retry_after_seconds(exc), retryable)


def classify(exc: BaseException, key_variable: str | None = None) -> ErrorInfo:
    """Sort a failed call (a :class:`ProviderError` from the native APIs, or an exception of
    litellm's) into one of our kinds, with a sentence for the user.

    ``key_variable`` (e.g. ``ANTHROPIC_API_KEY``) is named in the sentence of an auth error.
    """
    stream_error = _ollama_stream_error(str(exc))
    if stream_error is not None:
        # Ollama's model runner failed mid-stream ({"error": ...} line): transient.
        return ErrorInfo("retryable", stream_error)
    failure = _failure(exc)
    name, raw, status = failure.name, failure.message, failure.status
    if name == "ContextWindowExceededError" or is_overflow_message(raw):
        return ErrorInfo("overflow", raw, status=status)
    # Gemini refuses a bad key with a 400 whose ErrorInfo says API_KEY_INVALID.
    bad_key = google_error_reason(failure.body) == "API_KEY_INVALID"
    if name in ("AuthenticationError", "PermissionDeniedError") or status in (401, 403) or bad_key:
        where = f"check {key_variable}" if key_variable else "check the key in your environment"
        return ErrorInfo(
            "auth", f"The provider refused the API key ({raw}): {where}.", status=status
        )
    if name == "NotFoundError" or status == 404 or "LLM Provider NOT provided" in raw:
        return ErrorInfo(
            "model",
            f"The model was not found ({raw}). Choose another with --model provider/name.",
            status=status,
        )
    retry_delay = google_retry_delay(failure.body)
    if status == 429 and retry_delay is not None:
        # Gemini's per-minute quota: "exceeded your current quota ... retry in 7.5s".
        return ErrorInfo("retryable", raw, retry_delay, status)
    if status in PERMANENT_STATUSES or failure.retryable is False:
        return ErrorInfo("other", raw, status=status)
    if (failure.retryable or status in RETRYABLE_STATUSES) and not _QUOTA.search(raw):
        return ErrorInfo("retryable", raw, failure.retry_after, status)
    if is_retryable_message(raw):
        return ErrorInfo("retryable", raw, failure.retry_after, status)
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
