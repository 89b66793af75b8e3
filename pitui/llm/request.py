"""The arguments of one litellm call: output and thinking budgets like pi 1.6's, prompt-cache
breakpoints for Claude, and each provider's own switches (encrypted reasoning for OpenAI
Responses models, ``num_ctx`` for Ollama)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from pitui.llm import providers
from pitui.llm.caching import add_cache_breakpoints
from pitui.llm.models import ModelInfo
from pitui.llm.providers import Route, route

REASONING_EFFORT = {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high"}
#: pi 1.6's thinking budgets per level (tokens), for models that take a budget.
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
#: Tokens always left for the answer when thinking shares the output limit (pi's).
MIN_ANSWER_TOKENS = 1024
MIN_THINKING_BUDGET = 1024
#: Output limit for a Claude model whose own limit is unknown (every Claude 4 model allows it).
CLAUDE_FALLBACK_MAX_TOKENS = 32_000
# pi's clamp of the output limit to the context window.
CONTEXT_SAFETY_TOKENS = 4096
CONTEXT_SAFETY_RATIO = 0.15
MIN_OUTPUT_WITH_RATIO_MARGIN = 32_768


@dataclass(frozen=True)
class CallOptions:
    api_base: str | None = None
    api_key: str | None = None
    thinking: str = "off"
    max_tokens: int | None = None
    timeout: float = 600.0
    cache: bool = True
    """Prompt-cache breakpoints for Claude (pi sends none for summaries)."""
    num_ctx: int | None = None
    """Ollama: the context size the server must allocate (never its silent default)."""


def estimate_input_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """chars/4 of what is sent (pi's estimate for fitting the output limit)."""
    text = json.dumps(messages, ensure_ascii=False) + json.dumps(tools, ensure_ascii=False)
    return math.ceil(len(text) / 4)


def clamp_to_context(max_tokens: int, window: int | None, input_tokens: int) -> int:
    """pi 1.6's clamp: leave room for an input counted higher than estimated."""
    if not window or window <= 0:
        return max(1, max_tokens)
    margin = max(CONTEXT_SAFETY_TOKENS, math.ceil(input_tokens * CONTEXT_SAFETY_RATIO))
    room = window - input_tokens - margin
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN:
        room = min(MIN_OUTPUT_WITH_RATIO_MARGIN, window - input_tokens - CONTEXT_SAFETY_TOKENS)
    return min(max_tokens, max(1, room))


def output_limit(
    info: ModelInfo, target: Route, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> int | None:
    """``max_tokens`` to send: the model's maximum output, fitted into its window."""
    limit = info.max_output
    if limit is None and target.claude:
        limit = CLAUDE_FALLBACK_MAX_TOKENS
    if limit is None:
        return None
    return clamp_to_context(limit, info.context_window, estimate_input_tokens(messages, tools))


def thinking_budget(level: str, max_tokens: int) -> int | None:
    """pi's budget for ``level``, kept under ``max_tokens`` with room for the answer."""
    budget = THINKING_BUDGETS.get(level)
    if budget is None:
        return None
    budget = min(budget, max_tokens - MIN_ANSWER_TOKENS)
    return budget if budget >= MIN_THINKING_BUDGET else None


def request_kwargs(
    info: ModelInfo,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    options: CallOptions,
    target: Route | None = None,
) -> dict[str, Any]:
    """The litellm ``acompletion`` arguments (our retry logic is the only one: litellm's is off)."""
    target = target or route(info, options.api_base)
    kwargs: dict[str, Any] = {
        "model": target.litellm_model,
        "stream": True,
        "stream_options": {"include_usage": True},
        "timeout": options.timeout,
        "num_retries": 0,
        "max_retries": 0,
    }
    max_tokens = options.max_tokens or output_limit(info, target, messages, tools)
    if target.claude and options.cache:
        messages, tools = add_cache_breakpoints(messages, tools)
    kwargs["messages"] = messages
    if tools:
        kwargs["tools"] = tools
    if options.api_base:
        kwargs["api_base"] = options.api_base
    if options.api_key:
        kwargs["api_key"] = options.api_key
    if max_tokens:
        kwargs["max_tokens"] = max_tokens
    kwargs.update(_thinking(info, target, options.thinking, max_tokens))
    if target.family == providers.OPENAI_RESPONSES:
        # Stateless replay: the reasoning comes back encrypted and is sent again by us.
        kwargs["store"] = False
        kwargs["include"] = ["reasoning.encrypted_content"]
    if target.family == providers.OLLAMA and options.num_ctx:
        kwargs["num_ctx"] = options.num_ctx
    return kwargs


def _thinking(info: ModelInfo, target: Route, level: str, max_tokens: int | None) -> dict[str, Any]:
    effort = REASONING_EFFORT.get(level)
    if effort is None:
        return {}
    family = target.family
    if family == providers.OLLAMA:
        return {"reasoning_effort": effort}  # the user asked: local models are not in any table
    if not info.supports_reasoning:
        return {}
    if family == providers.ANTHROPIC:
        budget = thinking_budget(level, max_tokens or CLAUDE_FALLBACK_MAX_TOKENS)
        return {"thinking": {"type": "enabled", "budget_tokens": budget}} if budget else {}
    if family == providers.OPENAI_RESPONSES:
        return {"reasoning_effort": {"effort": effort, "summary": "auto"}}
    if family == providers.OPENROUTER:
        # OpenRouter's own switch: it maps the effort to each upstream model's budget.
        return {"extra_body": {"reasoning": {"effort": effort}}}
    return {"reasoning_effort": effort}
