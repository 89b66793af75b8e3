"""Provider routes and pi's names, request arguments (budgets, caching, per-provider switches),
and the readable error sentences (no network)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pitui.llm.caching import add_cache_breakpoints
from pitui.llm.errors import classify, google_retry_delay
from pitui.llm.local_models import context_length
from pitui.llm.models import ModelRef, model_info
from pitui.llm.providers import route, route_for
from pitui.llm.request import CallOptions, clamp_to_context, request_kwargs, thinking_budget


@pytest.mark.parametrize(
    ("model", "api_base", "expected"),
    [
        (
            "anthropic/claude-sonnet-4-5",
            None,
            (
                "anthropic",
                "anthropic-messages",
                "anthropic",
                "claude-sonnet-4-5",
                "anthropic/claude-sonnet-4-5",
            ),
        ),
        (
            "gemini/gemini-2.5-pro",
            None,
            ("gemini", "google-generative-ai", "google", "gemini-2.5-pro", "gemini/gemini-2.5-pro"),
        ),
        (
            "google/gemini-2.5-pro",
            None,
            ("gemini", "google-generative-ai", "google", "gemini-2.5-pro", "gemini/gemini-2.5-pro"),
        ),
        (
            "openai/gpt-5-codex",
            None,
            (
                "openai-responses",
                "openai-responses",
                "openai",
                "gpt-5-codex",
                "openai/responses/gpt-5-codex",
            ),
        ),
        (
            "openai/gpt-5",
            None,
            ("openai-responses", "openai-responses", "openai", "gpt-5", "openai/responses/gpt-5"),
        ),
        (
            "openai/gpt-5",
            "http://127.0.0.1:8000/v1",
            ("openai-chat", "openai-completions", "openai", "gpt-5", "openai/gpt-5"),
        ),
        (
            "openai/gpt-4.1",
            None,
            ("openai-chat", "openai-completions", "openai", "gpt-4.1", "openai/gpt-4.1"),
        ),
        (
            "ollama/qwen3",
            None,
            ("ollama", "openai-completions", "ollama", "qwen3", "ollama_chat/qwen3"),
        ),
        (
            "ollama_chat/qwen3",
            None,
            ("ollama", "openai-completions", "ollama", "qwen3", "ollama_chat/qwen3"),
        ),
        (
            "openrouter/anthropic/claude-sonnet-4.5",
            None,
            (
                "openrouter",
                "anthropic-messages",
                "openrouter",
                "anthropic/claude-sonnet-4.5",
                "openrouter/anthropic/claude-sonnet-4.5",
            ),
        ),
        (
            "openrouter/openai/gpt-5",
            None,
            (
                "openrouter",
                "openai-completions",
                "openrouter",
                "openai/gpt-5",
                "openrouter/openai/gpt-5",
            ),
        ),
        (
            "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0",
            None,
            (
                "anthropic",
                "bedrock-converse-stream",
                "amazon-bedrock",
                "anthropic.claude-sonnet-4-5-20250929-v1:0",
                "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0",
            ),
        ),
    ],
)
def test_routes_use_pis_names(model: str, api_base: str | None, expected: tuple[str, ...]) -> None:
    target = route_for(model, api_base)
    assert (
        target.family,
        target.api,
        target.provider,
        target.model_id,
        target.litellm_model,
    ) == expected


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


def kwargs_for(
    model: str, thinking: str = "high", api_base: str | None = None, **options: Any
) -> dict[str, Any]:
    info = model_info(ModelRef.parse(model))
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}]
    tools = [{"type": "function", "function": {"name": "read", "parameters": {}}}]
    call = CallOptions(api_base=api_base, thinking=thinking, **options)
    return request_kwargs(info, messages, tools, call, route(info, api_base))


def test_claude_request() -> None:
    kwargs = kwargs_for("anthropic/claude-sonnet-4-5")
    assert kwargs["max_tokens"] == 64_000
    assert kwargs["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert kwargs["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert kwargs["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert kwargs["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    uncached = kwargs_for("anthropic/claude-sonnet-4-5", cache=False)
    assert '"cache_control"' not in json.dumps(uncached)


def test_per_provider_switches() -> None:
    responses = kwargs_for("openai/gpt-5-codex")
    assert responses["store"] is False and responses["include"] == ["reasoning.encrypted_content"]
    assert responses["reasoning_effort"] == {"effort": "high", "summary": "auto"}
    assert kwargs_for("openrouter/anthropic/claude-sonnet-4.5")["extra_body"] == {
        "reasoning": {"effort": "high"}
    }
    ollama = kwargs_for("ollama_chat/qwen3", num_ctx=32768)
    assert ollama["num_ctx"] == 32768 and ollama["reasoning_effort"] == "high"
    assert "reasoning_effort" not in kwargs_for("ollama_chat/qwen3", thinking="off")
    assert kwargs_for("gemini/gemini-2.5-pro")["reasoning_effort"] == "high"


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
