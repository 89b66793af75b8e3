"""Provider routes and pi's names, request arguments (budgets, caching, thinking, per-provider
flags) for the native APIs and litellm's routes, and the readable error sentences (no
network)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pitui.llm.apis import anthropic_messages, openai_completions
from pitui.llm.call import CallOptions, clamp_to_context, thinking_budget
from pitui.llm.context import Context
from pitui.llm.errors import ProviderError, classify, google_retry_delay
from pitui.llm.fallback.caching import add_cache_breakpoints
from pitui.llm.fallback.request import request_kwargs
from pitui.llm.local_models import context_length
from pitui.llm.models import ModelRef, model_info
from pitui.llm.routes import route, route_for
from pitui.llm.stream import Call


@pytest.mark.parametrize(
    ("model", "api_base", "expected"),
    [
        (
            "anthropic/claude-sonnet-4-5",
            None,
            ("anthropic-messages", "anthropic", "claude-sonnet-4-5", "https://api.anthropic.com"),
        ),
        (
            "anthropic/claude-sonnet-4-5",
            "http://127.0.0.1:9/v1",
            ("anthropic-messages", "anthropic", "claude-sonnet-4-5", "http://127.0.0.1:9"),
        ),
        (
            "gemini/gemini-2.5-pro",
            None,
            (
                "google-generative-ai",
                "google",
                "gemini-2.5-pro",
                "https://generativelanguage.googleapis.com/v1beta",
            ),
        ),
        (
            "google/gemini-2.5-pro",
            None,
            (
                "google-generative-ai",
                "google",
                "gemini-2.5-pro",
                "https://generativelanguage.googleapis.com/v1beta",
            ),
        ),
        (
            "openai/gpt-5-codex",
            None,
            ("openai-responses", "openai", "gpt-5-codex", "https://api.openai.com/v1"),
        ),
        (
            "openai/gpt-5",
            None,
            ("openai-responses", "openai", "gpt-5", "https://api.openai.com/v1"),
        ),
        (
            "openai/gpt-5",
            "http://127.0.0.1:8000/v1",
            ("openai-completions", "openai", "gpt-5", "http://127.0.0.1:8000/v1"),
        ),
        (
            "openai/gpt-4.1",
            None,
            ("openai-completions", "openai", "gpt-4.1", "https://api.openai.com/v1"),
        ),
        (
            "ollama/qwen3",
            None,
            ("openai-completions", "ollama", "qwen3", "http://localhost:11434/v1"),
        ),
        (
            "ollama_chat/qwen3",
            "http://gpu:11434/",
            ("openai-completions", "ollama", "qwen3", "http://gpu:11434/v1"),
        ),
        (
            "openrouter/anthropic/claude-sonnet-4.5",
            None,
            (
                "anthropic-messages",
                "openrouter",
                "anthropic/claude-sonnet-4.5",
                "https://openrouter.ai/api",
            ),
        ),
        (
            "openrouter/openai/gpt-5",
            None,
            ("openai-completions", "openrouter", "openai/gpt-5", "https://openrouter.ai/api/v1"),
        ),
        (
            "groq/llama-3.3-70b-versatile",
            None,
            (
                "openai-completions",
                "groq",
                "llama-3.3-70b-versatile",
                "https://api.groq.com/openai/v1",
            ),
        ),
        (
            "custom/my-model",
            "http://127.0.0.1:8080/v1",
            ("openai-completions", "custom", "my-model", "http://127.0.0.1:8080/v1"),
        ),
    ],
)
def test_native_routes_use_pis_names(
    model: str, api_base: str | None, expected: tuple[str, ...]
) -> None:
    target = route_for(model, api_base)
    assert target.native
    assert (target.api, target.provider, target.model_id, target.base_url) == expected


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (
            "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0",
            (
                "bedrock-converse-stream",
                "amazon-bedrock",
                "anthropic.claude-sonnet-4-5-20250929-v1:0",
                "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0",
            ),
        ),
        (
            "vertex_ai/claude-sonnet-4-5",
            (
                "anthropic-messages",
                "google-vertex",
                "claude-sonnet-4-5",
                "vertex_ai/claude-sonnet-4-5",
            ),
        ),
        (
            "vertex_ai/gemini-2.5-pro",
            ("google-vertex", "google-vertex", "gemini-2.5-pro", "vertex_ai/gemini-2.5-pro"),
        ),
        (
            "mistral/mistral-large-latest",
            (
                "openai-completions",
                "mistral",
                "mistral-large-latest",
                "mistral/mistral-large-latest",
            ),
        ),
        (
            "azure/my-deployment",
            ("openai-completions", "azure", "my-deployment", "azure/my-deployment"),
        ),
    ],
)
def test_other_providers_go_through_litellm(model: str, expected: tuple[str, ...]) -> None:
    target = route_for(model)
    assert not target.native
    assert (target.api, target.provider, target.model_id, target.litellm_model) == expected


def test_an_api_setting_picks_the_route() -> None:
    info = model_info(ModelRef.parse("ollama/qwen3"))
    assert not route(info, None, "litellm").native
    assert route(info, None, "litellm").litellm_model == "ollama_chat/qwen3"
    proxy = route(
        model_info(ModelRef.parse("corp/claude-x")), "https://llm.corp/v1", "anthropic-messages"
    )
    assert (proxy.api, proxy.base_url, proxy.claude) == (
        "anthropic-messages",
        "https://llm.corp",
        True,
    )


@pytest.mark.parametrize(
    ("model", "adaptive"),
    [
        ("claude-sonnet-4-5", False),
        ("claude-opus-4-5-20251101", False),
        ("claude-3-7-sonnet-20250219", False),
        ("claude-haiku-4-5", False),
        ("claude-sonnet-4-6", True),
        ("claude-opus-4-7", True),
        ("claude-opus-5", True),
        ("claude-sonnet-5-5", True),
        ("anthropic/claude-opus-4.7", True),
        ("claude-fable-5", True),
    ],
)
def test_claude_models_from_4_6_think_adaptively(model: str, adaptive: bool) -> None:
    target = route_for(f"anthropic/{model}")
    assert target.compat.adaptive_thinking is adaptive
    assert target.compat.interleaved_thinking is not adaptive


def test_claude_is_cached_wherever_it_is_served() -> None:
    for model in (
        "anthropic/claude-sonnet-4-5",
        "openrouter/anthropic/claude-sonnet-4.5",
        "vertex_ai/claude-sonnet-4-5",
    ):
        assert route_for(model).claude
    assert not route_for("openrouter/openai/gpt-5").claude


def test_openrouter_models_take_the_underlying_entry() -> None:
    info = model_info(ModelRef.parse("openrouter/anthropic/claude-sonnet-4.5"))
    claude = model_info(ModelRef.parse("anthropic/claude-sonnet-4-5"))
    assert info.context_window == claude.context_window == 200_000
    assert info.max_output == claude.max_output and info.supports_reasoning
    gemini = model_info(ModelRef.parse("openrouter/google/gemini-2.5-pro"))
    assert gemini.context_window and gemini.context_window > 1_000_000
    assert not model_info(ModelRef.parse("openrouter/nobody/nothing")).known


def test_pi_provider_names_map_back_to_litellm() -> None:
    assert (
        ModelRef.parse("google/gemini-2.5-pro").for_litellm.litellm_name == "gemini/gemini-2.5-pro"
    )
    assert ModelRef.parse("gemini/gemini-2.5-pro").pi_provider == "google"
    assert model_info(ModelRef.parse("google/gemini-2.5-pro")).known
    assert "ollama/qwen3" in ModelRef.parse("ollama_chat/qwen3").names


def test_budgets_like_pi() -> None:
    assert [thinking_budget(level, 64_000) for level in ("minimal", "low", "medium", "high")] == [
        1024,
        2048,
        8192,
        16384,
    ]
    assert thinking_budget("high", 8_000) == 8_000 - 1024  # always max_tokens > budget
    assert thinking_budget("high", 1_500) is None  # no room for thinking and an answer
    assert clamp_to_context(64_000, 200_000, 10_000) == 64_000
    assert clamp_to_context(64_000, 200_000, 190_000) == 200_000 - 190_000 - 4096
    assert clamp_to_context(64_000, None, 10**6) == 64_000


CONTEXT = Context(
    "S",
    [{"role": "user", "content": "hi"}],
    [{"name": "read", "description": "Read", "parameters": {"type": "object"}}],
)


def call_for(
    model: str, thinking: str = "high", api_base: str | None = None, **options: Any
) -> Call:
    info = model_info(ModelRef.parse(model))
    return Call(
        info,
        route(info, api_base),
        CONTEXT,
        CallOptions(api_base=api_base, thinking=thinking, **options),
    )


def test_claude_request() -> None:
    request = anthropic_messages.request(call_for("anthropic/claude-sonnet-4-5"))
    body = request.body
    assert request.url == "https://api.anthropic.com/v1/messages"
    assert body["max_tokens"] == 64_000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert request.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}]
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    uncached = anthropic_messages.request(call_for("anthropic/claude-sonnet-4-5", cache=False))
    assert '"cache_control"' not in json.dumps(uncached.body)
    off = anthropic_messages.request(call_for("anthropic/claude-sonnet-4-5", thinking="off"))
    assert "thinking" not in off.body and "anthropic-beta" not in off.headers


@pytest.mark.parametrize(
    ("level", "effort"),
    [("minimal", "low"), ("low", "low"), ("medium", "medium"), ("high", "high")],
)
def test_adaptive_claude_gets_pis_effort_never_a_budget(level: str, effort: str) -> None:
    request = anthropic_messages.request(call_for("anthropic/claude-opus-4-7", thinking=level))
    assert request.body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert request.body["output_config"] == {"effort": effort}  # high is high, never xhigh
    assert "anthropic-beta" not in request.headers


def test_chat_requests_per_provider() -> None:
    openai = openai_completions.request(call_for("openai/gpt-4.1")).body
    assert "reasoning_effort" not in openai  # gpt-4.1 does not think
    assert openai["messages"][0] == {"role": "system", "content": "S"}
    assert openai["stream_options"] == {"include_usage": True}
    assert openai["tools"][0]["function"]["name"] == "read"
    assert openai["max_completion_tokens"] == 32_768 and "max_tokens" not in openai
    local = openai_completions.request(call_for("openai/gpt-5", api_base="http://h:1/v1"))
    assert local.url == "http://h:1/v1/chat/completions"
    assert local.body["reasoning_effort"] == "high" and "max_tokens" in local.body
    router = openai_completions.request(call_for("openrouter/openai/gpt-5")).body
    assert router["reasoning"] == {"effort": "high"} and router["usage"] == {"include": True}
    assert "reasoning_effort" not in router
    ollama = openai_completions.request(call_for("ollama_chat/qwen3")).body
    assert ollama["reasoning_effort"] == "high" and "options" not in ollama
    assert (
        "reasoning_effort"
        not in openai_completions.request(call_for("ollama_chat/qwen3", thinking="off")).body
    )


def test_litellm_routes_keep_their_arguments() -> None:
    bedrock = request_kwargs(call_for("bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0"))
    assert bedrock["model"] == "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert bedrock["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert bedrock["num_retries"] == 0 and bedrock["max_retries"] == 0
    assert bedrock["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    info = model_info(ModelRef.parse("ollama_chat/qwen3"))
    ollama = Call(
        info, route(info, None, "litellm"), CONTEXT, CallOptions(thinking="high", num_ctx=32768)
    )
    kwargs = request_kwargs(ollama)
    assert kwargs["num_ctx"] == 32768 and kwargs["reasoning_effort"] == "high"
    assert kwargs["model"] == "ollama_chat/qwen3"


def test_cache_breakpoints_on_a_tool_result_and_a_string_prompt() -> None:
    messages, tools = add_cache_breakpoints(
        [{"role": "system", "content": "S"}, {"role": "tool", "tool_call_id": "t", "content": "x"}],
        [],
    )
    assert messages[-1]["cache_control"] == {"type": "ephemeral"} and tools == []
    messages, _ = add_cache_breakpoints([{"role": "user", "content": "q"}], [])
    assert messages == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "q", "cache_control": {"type": "ephemeral"}}],
        }
    ]


def test_provider_errors_keep_the_providers_words() -> None:
    overloaded = classify(ProviderError("Overloaded", 529))
    assert (overloaded.kind, overloaded.message, overloaded.status) == (
        "retryable",
        "Overloaded",
        529,
    )
    refused = classify(ProviderError("invalid x-api-key", 401), "ANTHROPIC_API_KEY")
    assert refused.kind == "auth" and refused.message == (
        "The provider refused the API key (invalid x-api-key): check ANTHROPIC_API_KEY."
    )
    assert classify(ProviderError("prompt is too long: 9 tokens > 8 maximum", 400)).kind == (
        "overflow"
    )
    assert classify(ProviderError("Bad.", 400)).kind == "other"
    stalled = classify(ProviderError("The stream stalled.", retryable=True))
    assert stalled.kind == "retryable"
    tls = classify(ProviderError("Connection error: the TLS handshake failed.", retryable=False))
    assert tls.kind == "other"
    waited = classify(ProviderError("Slow down", 429, retry_after=7.0))
    assert (waited.kind, waited.retry_after) == ("retryable", 7.0)


class FakeError(Exception):
    def __init__(self, text: str, status: int | None = None) -> None:
        super().__init__(text)
        self.status_code = status


def test_bytes_reprs_become_the_providers_words() -> None:
    body = b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    raw = f"litellm.InternalServerError: AnthropicError - {body!r}"
    info = classify(FakeError(raw, 500))
    assert (info.kind, info.message) == ("retryable", "Overloaded")


def test_auth_names_the_variable() -> None:
    info = classify(FakeError("AuthenticationError: invalid x-api-key", 401), "ANTHROPIC_API_KEY")
    assert (
        info.message
        == "The provider refused the API key (invalid x-api-key): check ANTHROPIC_API_KEY."
    )


def test_gemini_retry_info_and_ollama_stream_errors() -> None:
    body = {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7.5s"}
            ],
        }
    }
    assert google_retry_delay(body) == 7.5
    info = classify(FakeError("RateLimitError: b'" + json.dumps(body) + "'", 429))
    assert (info.kind, info.retry_after) == ("retryable", 7.5)
    ollama = classify(
        FakeError(
            "BadRequestError: KeyError: 'message', Got unexpected response from Ollama: "
            "{'error': 'runner died'}",
            400,
        )
    )
    assert (ollama.kind, ollama.message) == ("retryable", "Ollama: runner died")


def test_permanent_400s_are_not_retried() -> None:
    raw = json.dumps(
        {
            "error": {
                "message": "Provider returned error",
                "code": 400,
                "metadata": {"raw": json.dumps({"error": {"message": "Bad."}})},
            }
        }
    )
    info = classify(FakeError(f"BadRequestError: OpenrouterException - {raw}", 400))
    assert (info.kind, info.message) == ("other", "Provider returned error: Bad.")


def test_context_length_from_api_show() -> None:
    assert (
        context_length(
            {"model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960}}
        )
        == 40960
    )
    assert context_length({"model_info": {}}) is None
