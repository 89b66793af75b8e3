"""One model call: what is sent (:class:`Call`), its options, and the output and thinking
budgets pi 1.6 asks for (the same for every wire API)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from pitui.llm.context import Context
from pitui.llm.models import ModelInfo
from pitui.llm.routes import Route

IDLE_TIMEOUT = 90.0
"""Seconds a stream may send nothing before it counts as stalled (keep-alive pings count)."""
CONNECT_TIMEOUT = 15.0

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high")
REASONING_EFFORT = {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high"}
#: pi 1.6's thinking budgets per level (tokens), for models that take a budget.
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
#: pi 1.6's efforts for adaptive thinking (Claude 4.6 and later): ``high`` is ``high``.
ADAPTIVE_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}
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
    idle_timeout: float = IDLE_TIMEOUT
    """Seconds a stream may stay silent before it counts as stalled (0: no limit)."""
    connect_timeout: float = CONNECT_TIMEOUT
    cache: bool = True
    """Prompt-cache breakpoints for Claude (pi sends none for summaries)."""
    num_ctx: int | None = None
    """Ollama: the context size the server must allocate (the ``numCtx`` setting; litellm's
    route, since Ollama's OpenAI endpoint takes none)."""


@dataclass(frozen=True)
class Call:
    """Everything one request is made of."""

    info: ModelInfo
    route: Route
    context: Context
    options: CallOptions

    @property
    def thinking(self) -> str | None:
        """The thinking level asked for, when the model can think (None: no thinking)."""
        level = self.options.thinking
        return level if level in REASONING_EFFORT and self.route.reasoning else None

    def output_limit(self) -> int | None:
        """``max_tokens`` to send: the option, else the model's output limit fitted into its
        window (Claude's fallback when unknown)."""
        if self.options.max_tokens:
            return self.options.max_tokens
        return output_limit(self.info, self.route, estimate_input_tokens(self.context))


def estimate_input_tokens(context: Context) -> int:
    """chars/4 of what is sent (pi's estimate for fitting the output limit)."""
    size = len(context.system)
    size += len(json.dumps(context.messages, ensure_ascii=False))
    size += len(json.dumps(context.tools, ensure_ascii=False))
    return math.ceil(size / 4)


def clamp_to_context(max_tokens: int, window: int | None, input_tokens: int) -> int:
    """pi 1.6's clamp: leave room for an input counted higher than estimated."""
    if not window or window <= 0:
        return max(1, max_tokens)
    margin = max(CONTEXT_SAFETY_TOKENS, math.ceil(input_tokens * CONTEXT_SAFETY_RATIO))
    room = window - input_tokens - margin
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN:
        room = min(MIN_OUTPUT_WITH_RATIO_MARGIN, window - input_tokens - CONTEXT_SAFETY_TOKENS)
    return min(max_tokens, max(1, room))


def output_limit(info: ModelInfo, target: Route, input_tokens: int) -> int | None:
    """The model's maximum output, fitted into its window."""
    limit = info.max_output
    if limit is None and target.claude:
        limit = CLAUDE_FALLBACK_MAX_TOKENS
    if limit is None:
        return None
    return clamp_to_context(limit, info.context_window, input_tokens)


def thinking_budget(level: str, max_tokens: int) -> int | None:
    """pi's budget for ``level``, kept under ``max_tokens`` with room for the answer."""
    budget = THINKING_BUDGETS.get(level)
    if budget is None:
        return None
    budget = min(budget, max_tokens - MIN_ANSWER_TOKENS)
    return budget if budget >= MIN_THINKING_BUDGET else None


def data_url(block: dict[str, Any]) -> str:
    """An image block as a ``data:`` URL."""
    mime = block.get("mimeType") or "image/png"
    return f"data:{mime};base64,{block.get('data', '')}"
