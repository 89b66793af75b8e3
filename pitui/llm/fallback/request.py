"""The arguments of one litellm call: pi 1.6's output and thinking budgets, prompt-cache
breakpoints for Claude, ``num_ctx`` for Ollama, and litellm's own retries off (the agent's
retry loop is the only one)."""

from __future__ import annotations

from typing import Any

from pitui.llm.call import (
    ADAPTIVE_EFFORT,
    CLAUDE_FALLBACK_MAX_TOKENS,
    REASONING_EFFORT,
    Call,
    thinking_budget,
)
from pitui.llm.fallback.caching import add_cache_breakpoints
from pitui.llm.fallback.convert import family, to_litellm_messages, to_litellm_tools
from pitui.llm.routes import claude_is_adaptive


def request_kwargs(call: Call) -> dict[str, Any]:
    """The litellm ``acompletion`` arguments for ``call``."""
    target, options = call.route, call.options
    kwargs: dict[str, Any] = {
        "model": target.litellm_model,
        "stream": True,
        "stream_options": {"include_usage": True},
        "timeout": options.idle_timeout or None,
        "num_retries": 0,
        "max_retries": 0,
    }
    messages = to_litellm_messages(call.context, target)
    tools = to_litellm_tools(call.context.tools)
    max_tokens = call.output_limit()
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
    kwargs.update(_thinking(call, max_tokens))
    if family(target) == "ollama" and options.num_ctx:
        kwargs["num_ctx"] = options.num_ctx
    return kwargs


def _thinking(call: Call, max_tokens: int | None) -> dict[str, Any]:
    level = call.thinking
    if level is None:
        return {}
    target = call.route
    if target.claude and claude_is_adaptive(target.model_id):
        effort = ADAPTIVE_EFFORT[level]
        return {"thinking": {"type": "adaptive"}, "output_config": {"effort": effort}}
    if target.claude:
        budget = thinking_budget(level, max_tokens or CLAUDE_FALLBACK_MAX_TOKENS)
        return {"thinking": {"type": "enabled", "budget_tokens": budget}} if budget else {}
    return {"reasoning_effort": REASONING_EFFORT[level]}
