"""Error classification: pi 1.6's overflow and retry patterns, and litellm's exceptions."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

from pitui.llm.errors import (
    assistant_error_kind,
    classify,
    is_overflow_message,
    is_retryable_message,
)

# pi 1.6 isContextOverflow patterns (pi-reference §5.3 + pi-1.6-vs-reference item 19), each with
# one realistic provider message. The pattern is checked against the message here too, so every
# case really exercises the pattern it is named after.
PI_OVERFLOW_CASES: list[tuple[str, str]] = [
    (r"prompt (is )?too long", "prompt is too long: 213462 tokens > 200000 maximum"),
    (r"prompt (is )?too long", "Prompt too long for model claude-3-haiku"),
    (r"input is too long for requested model", "Input is too long for requested model."),
    (
        r"exceeds the context window",
        "Your input exceeds the context window of this model. Please adjust your input and try "
        "again.",
    ),
    (
        r"input token count.*exceeds the maximum",
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
    ),
    (
        r"maximum prompt length is \d+",
        "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
    ),
    (
        r"reduce the length of the messages",
        "Please reduce the length of the messages or completion.",
    ),
    (
        r"maximum context length is \d+ tokens",
        "This endpoint's maximum context length is 128000 tokens. However, you requested about "
        "152000 tokens.",
    ),
    (r"exceeds the limit of \d+", "prompt token count of 139404 exceeds the limit of 128000"),
    (
        r"exceeds the available context size",
        "the request exceeds the available context size, try increasing it",
    ),
    (
        r"greater than the context length",
        "The number of tokens to keep from the initial prompt is greater than the context length",
    ),
    (r"context window exceeds limit", "invalid params, context window exceeds limit (2013)"),
    (r"exceeded model token limit", "Exceeded model token limit: 262144 (requested: 290112)"),
    (
        r"too large for model with \d+ maximum context length",
        "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 "
        "maximum context length",
    ),
    (
        r"model_context_window_exceeded",
        '{"error":{"code":"model_context_window_exceeded","message":"Context too long"}}',
    ),
    (
        r"context[_ ]length[_ ]exceeded",
        "Error code: 400 - {'error': {'code': 'context_length_exceeded'}}",
    ),
    (r"context[_ ]length[_ ]exceeded", "Context length exceeded, please shorten the input"),
    (r"too many tokens", "Request has too many tokens for this model"),
    (r"token limit exceeded", "Token limit exceeded for this request"),
    (r"prompt exceeds max length", "prompt exceeds max length (200000)"),
    (
        r"request_too_large",
        '{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the '
        'maximum size"}}',
    ),
    (
        r"exceeds (the )?(model'?s )?maximum context length( of \d+ tokens| \(\d+\))",
        "The input exceeds the model's maximum context length of 32768 tokens",
    ),
    (
        r"exceeds (the )?(model'?s )?maximum context length( of \d+ tokens| \(\d+\))",
        "Requested tokens (40000) exceeds maximum context length (32768)",
    ),
    (r"context window exceeded", "Error: context window exceeded"),
    (
        r"exceeds (the )?maximum allowed input length of \d+ tokens",
        "Input validation error: the prompt exceeds the maximum allowed input length of 30720 "
        "tokens",
    ),
    (
        r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
        "Input (40000 tokens) is longer than the model's context length (32768 tokens).",
    ),
    (
        r"prompt has \d+ tokens, but the configured context size is \d+ tokens",
        "prompt has 40960 tokens, but the configured context size is 32768 tokens",
    ),
    (
        r"prompt too long; exceeded (max )?context length",
        "prompt too long; exceeded max context length by 1024 tokens",
    ),
    (r"range of input length should be", "Range of input length should be [1, 30720]"),
    (r"^\w[\w ]* api error \(413\):", "Anthropic API error (413): Request Entity Too Large"),
    (r"^413\b", "413 Request Entity Too Large"),
    (r"^413\b", "413 status code (no body)"),
]


@pytest.mark.parametrize(("pattern", "message"), PI_OVERFLOW_CASES)
def test_every_pi_overflow_pattern(pattern: str, message: str) -> None:
    assert re.search(pattern, message, re.I), "test case does not match pi's pattern"
    assert is_overflow_message(message)


@pytest.mark.parametrize(
    "message",
    [
        "Throttling error: Too many tokens, please wait before trying again.",
        "throttling error: token limit exceeded for this minute",
        "Service unavailable: prompt is too long for the current capacity",
        "Rate limit reached: too many tokens per minute (TPM)",
        "You hit the rate limit: maximum context length is 8192 tokens per request window",
        "Too many requests: token limit exceeded, retry in 20s",
        "429 Too Many Requests: too many tokens",
    ],
)
def test_overflow_exclusions(message: str) -> None:
    assert not is_overflow_message(message)


@pytest.mark.parametrize(
    "message",
    [
        "",
        "Incorrect API key provided",
        "Invalid request: unknown parameter 'foo'",
        "400 status code (no body)",  # only Cerebras' bodyless 400 counts in pi
        "The model `gpt-9` does not exist",
        "Overloaded",
    ],
)
def test_not_overflow(message: str) -> None:
    assert not is_overflow_message(message)


@pytest.mark.parametrize(
    "message",
    [
        "429 Too Many Requests",
        "Error code: 429 - rate limited",
        "Rate limit reached for gpt-4.1 in organization org-x on tokens per min (TPM)",
        "Error code: 500 - {'error': {'message': 'The server had an error'}}",
        "502 Bad Gateway",
        "503 Service Unavailable",
        "504 Gateway Timeout",
        "520 Unknown Error",
        "524 A timeout occurred",
        "Internal server error",
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        "Request timed out.",
        "Connection timed out after 600.0 seconds",
        "Timeout while waiting for response",
        "Connection error.",
        "dial tcp 127.0.0.1:11434: connect: connection refused",
        "read ECONNRESET",
        "Connection reset by peer",
        "socket hang up",
        "fetch failed",
        "other side closed",
        "upstream connect error or disconnect/reset before headers. reset reason: overflow",
        "terminated",
        "network error",
        "stream ended before the response was complete",
        "peer closed connection without sending complete message body (incomplete chunked read)",
        "Server disconnected without sending a response.",
        "Provider returned error",
    ],
)
def test_retryable(message: str) -> None:
    assert is_retryable_message(message)


@pytest.mark.parametrize(
    "message",
    [
        # quota and billing come first, even with a 429 in the text
        "Error code: 429 - {'error': {'message': 'You exceeded your current quota, please check "
        "your plan and billing details.', 'type': 'insufficient_quota'}}",
        "insufficient_quota",
        "Quota exceeded for quota metric 'Generate Content API requests per minute'",
        "Your credit balance is too low to access the Anthropic API.",
        "Rate limit: you are out of budget for this key",
        "429: usage limit reached for your plan",
        "Insufficient available balance in your account",
        # overflow is never retryable, even when it carries retryable words
        "prompt is too long: 213462 tokens > 200000 maximum",
        "500 Internal error: prompt is too long",
        "Request timed out: input token count (1200000) exceeds the maximum",
        # status codes must stand alone
        "Invalid value at index 4290",
        "expected 15003 items",
        "status 5000",
        # plainly not transient
        "Incorrect API key provided",
        "Invalid schema for function 'read'",
        "",
    ],
)
def test_not_retryable(message: str) -> None:
    assert not is_retryable_message(message)


# ---------------------------------------------------------------------------------------------
# classify() on real litellm exception objects


@pytest.fixture(scope="module")
def litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm as module

    return module


def _response(status: int, headers: dict[str, str] | None = None) -> Any:
    import httpx

    return httpx.Response(status, headers=headers or {}, request=httpx.Request("POST", "http://x"))


def test_classify_rate_limit(litellm: Any) -> None:
    exc = litellm.RateLimitError(
        message="RateLimitError: OpenAIException - Rate limit reached for gpt-4.1",
        llm_provider="openai",
        model="x",
    )
    info = classify(exc)
    assert info.kind == "retryable"
    assert info.status == 429
    assert info.retry_after is None
    assert info.message == "Rate limit reached for gpt-4.1"


def test_classify_rate_limit_reads_retry_after_from_response(litellm: Any) -> None:
    exc = litellm.RateLimitError(
        message="Rate limit reached",
        llm_provider="openai",
        model="x",
        response=_response(429, {"retry-after": "7"}),
    )
    info = classify(exc)
    assert info.kind == "retryable"
    assert info.retry_after == 7.0


def test_classify_reads_litellm_response_headers(litellm: Any) -> None:
    import httpx

    exc = litellm.InternalServerError(message="Overloaded", llm_provider="anthropic", model="x")
    exc.litellm_response_headers = httpx.Headers({"Retry-After": "2.5"})
    info = classify(exc)
    assert info.kind == "retryable"
    assert info.retry_after == 2.5


def test_classify_unparsable_retry_after_is_ignored(litellm: Any) -> None:
    exc = litellm.RateLimitError(
        message="Rate limit reached",
        llm_provider="openai",
        model="x",
        response=_response(429, {"retry-after": "soon"}),
    )
    assert classify(exc).retry_after is None


def test_classify_quota_rate_limit_is_not_retryable(litellm: Any) -> None:
    exc = litellm.RateLimitError(
        message="You exceeded your current quota, please check your plan and billing details.",
        llm_provider="openai",
        model="x",
    )
    assert classify(exc).kind == "other"


def test_classify_context_window_exceeded(litellm: Any) -> None:
    exc = litellm.ContextWindowExceededError(
        message="This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130000 tokens.",
        model="x",
        llm_provider="openai",
    )
    info = classify(exc)
    assert info.kind == "overflow"
    assert info.message.startswith("This model's maximum context length is 128000 tokens")


def test_classify_context_window_exceeded_by_class_alone(litellm: Any) -> None:
    exc = litellm.ContextWindowExceededError(message="boom", model="x", llm_provider="openai")
    assert classify(exc).kind == "overflow"


def test_classify_bad_request_with_overflow_text(litellm: Any) -> None:
    exc = litellm.BadRequestError(
        message="AnthropicException - prompt is too long: 213462 tokens > 200000 maximum",
        model="x",
        llm_provider="anthropic",
    )
    info = classify(exc)
    assert info.kind == "overflow"
    assert info.message == "prompt is too long: 213462 tokens > 200000 maximum"


def test_classify_authentication(litellm: Any) -> None:
    exc = litellm.AuthenticationError(
        message="AuthenticationError: OpenAIException - Incorrect API key provided: sk-abc.",
        llm_provider="openai",
        model="x",
    )
    info = classify(exc)
    assert info.kind == "auth"
    assert info.status == 401
    assert "Incorrect API key provided" in info.message


def test_classify_not_found(litellm: Any) -> None:
    exc = litellm.NotFoundError(
        message="OpenAIException - The model `gpt-9` does not exist or you do not have access.",
        model="gpt-9",
        llm_provider="openai",
    )
    info = classify(exc)
    assert info.kind == "model"
    assert info.status == 404
    assert "The model `gpt-9` does not exist" in info.message


def test_classify_provider_not_provided_is_a_model_problem(litellm: Any) -> None:
    exc = litellm.BadRequestError(
        message="LLM Provider NOT provided. Pass in the LLM provider you are trying to call.",
        model="my-model",
        llm_provider="",
    )
    assert classify(exc).kind == "model"


def test_classify_internal_server_error(litellm: Any) -> None:
    exc = litellm.InternalServerError(
        message='AnthropicException - {"type":"error","error":{"type":"overloaded_error"}}',
        llm_provider="anthropic",
        model="x",
    )
    info = classify(exc)
    assert info.kind == "retryable"
    assert info.status == 500


def test_classify_api_connection_error(litellm: Any) -> None:
    exc = litellm.APIConnectionError(
        message="APIConnectionError: OpenAIException - Connection error.",
        llm_provider="openai",
        model="x",
    )
    info = classify(exc)
    assert info.kind == "retryable"
    assert info.message == "Connection error."


def test_classify_service_unavailable(litellm: Any) -> None:
    exc = litellm.ServiceUnavailableError(
        message="Service Unavailable", llm_provider="openai", model="x"
    )
    assert classify(exc).kind == "retryable"


def test_classify_timeout(litellm: Any) -> None:
    exc = litellm.Timeout(message="Request timed out.", model="x", llm_provider="openai")
    assert classify(exc).kind == "retryable"


def test_classify_other_bad_request(litellm: Any) -> None:
    exc = litellm.BadRequestError(
        message="OpenAIException - Invalid schema for function 'read'",
        model="x",
        llm_provider="openai",
    )
    info = classify(exc)
    assert info.kind == "other"
    assert info.message == "Invalid schema for function 'read'"


def test_classify_plain_exceptions() -> None:
    assert classify(ConnectionResetError("Connection reset by peer")).kind == "retryable"
    assert classify(RuntimeError("prompt is too long")).kind == "overflow"
    assert classify(ValueError("something odd")).kind == "other"


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        ("RateLimitError", {"llm_provider": "openai", "model": "x"}),
        ("ContextWindowExceededError", {"llm_provider": "openai", "model": "x"}),
        ("AuthenticationError", {"llm_provider": "openai", "model": "x"}),
        ("NotFoundError", {"llm_provider": "openai", "model": "x"}),
        ("InternalServerError", {"llm_provider": "openai", "model": "x"}),
        ("APIConnectionError", {"llm_provider": "openai", "model": "x"}),
        ("BadRequestError", {"llm_provider": "openai", "model": "x"}),
    ],
)
def test_cleaned_message_has_no_litellm_class_prefix(
    litellm: Any, cls: str, kwargs: dict[str, Any]
) -> None:
    exc = getattr(litellm, cls)(message=f"{cls}: OpenAIException - something happened", **kwargs)
    assert str(exc).startswith("litellm.")
    message = classify(exc).message
    assert "litellm." not in message
    assert "OpenAIException" not in message
    assert "something happened" in message


def test_cleaned_timeout_message_has_no_litellm_prefix(litellm: Any) -> None:
    exc = litellm.Timeout(message="Request timed out.", model="x", llm_provider="openai")
    assert str(exc).startswith("litellm.Timeout")
    assert "litellm." not in classify(exc).message


# ---------------------------------------------------------------------------------------------
# assistant_error_kind on stored assistant messages


def _stored(stop: str, error: str | None = None, **usage: int) -> dict[str, Any]:
    counts = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    counts.update(usage)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [],
        "usage": counts,
        "stopReason": stop,
    }
    if error is not None:
        message["errorMessage"] = error
    return message


def test_assistant_error_overflow() -> None:
    message = _stored("error", "prompt is too long: 213462 tokens > 200000 maximum")
    assert assistant_error_kind(message, 200_000) == "overflow"
    assert assistant_error_kind(message, None) == "overflow"


def test_assistant_error_retryable() -> None:
    assert assistant_error_kind(_stored("error", "503 Service Unavailable"), 1000) == "retryable"
    assert assistant_error_kind(_stored("error", "Overloaded"), None) == "retryable"


def test_assistant_error_other() -> None:
    assert assistant_error_kind(_stored("error", "Incorrect API key provided"), 1000) is None
    assert assistant_error_kind(_stored("error", "insufficient_quota (429)"), 1000) is None
    assert assistant_error_kind(_stored("error"), 1000) is None


def test_assistant_length_with_no_output_and_full_window_is_overflow() -> None:
    assert assistant_error_kind(_stored("length", input=99_000), 100_000) == "overflow"
    assert assistant_error_kind(_stored("length", input=98_000, cacheRead=1_000), 100_000) == (
        "overflow"
    )
    assert assistant_error_kind(_stored("length", input=120_000), 100_000) == "overflow"


def test_assistant_length_not_overflow() -> None:
    # below 99 %
    assert assistant_error_kind(_stored("length", input=98_999), 100_000) is None
    # produced output: an ordinary output-limit stop
    assert assistant_error_kind(_stored("length", input=99_500, output=5), 100_000) is None
    # no known window
    assert assistant_error_kind(_stored("length", input=99_500), None) is None
    assert assistant_error_kind(_stored("length", input=99_500), 0) is None


@pytest.mark.parametrize("stop", ["stop", "toolUse", "aborted"])
def test_assistant_normal_stops(stop: str) -> None:
    assert assistant_error_kind(_stored(stop, input=10), 100_000) is None


def test_assistant_silent_overflow() -> None:
    message = _stored("stop", input=90_000, cacheRead=20_000, output=10)
    assert assistant_error_kind(message, 100_000) == "overflow"


def test_retry_after_as_an_http_date_is_honoured() -> None:
    import email.utils
    from datetime import UTC, datetime, timedelta

    from pitui.llm.errors import retry_after_seconds

    class Response:
        def __init__(self, value: str) -> None:
            self.headers = {"retry-after": value}

    class Failure(Exception):
        def __init__(self, value: str) -> None:
            super().__init__("429")
            self.response = Response(value)

    later = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    wait = retry_after_seconds(Failure(later))
    assert wait is not None and 25 <= wait <= 31
    past = email.utils.format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds(Failure(past)) == 0.0
    assert retry_after_seconds(Failure("not a date")) is None
