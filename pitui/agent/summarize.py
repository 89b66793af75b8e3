"""Summaries through the model: compaction (history, split-turn prefix) and branch summaries.

Every call is a plain streamed request with no tools. A reply that errors, stops for length or
calls a tool fails the summary (pi 1.6). Transient errors are retried like ordinary replies.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pitui.compaction import prompts
from pitui.compaction.branch import BranchPreparation
from pitui.compaction.file_ops import format_file_operations
from pitui.compaction.prepare import CompactionPreparation
from pitui.compaction.serialize import serialize_conversation
from pitui.errors import UserError
from pitui.llm.errors import classify
from pitui.llm.models import ModelInfo
from pitui.llm.reply import ReplyBuilder
from pitui.llm.routes import Route, route
from pitui.llm.stream import CallOptions, stream_reply
from pitui.retry import RetryPolicy


class SummaryError(UserError):
    """The summary could not be made; the message is one sentence."""


@dataclass
class SummaryText:
    text: str
    usage: dict[str, Any] | None


def _add_usage(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any] | None:
    if a is None:
        return b
    if b is None:
        return a
    out: dict[str, Any] = {}
    for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
        out[key] = a.get(key, 0) + b.get(key, 0)
    cost_a, cost_b = a.get("cost") or {}, b.get("cost") or {}
    out["cost"] = {k: cost_a.get(k, 0) + cost_b.get(k, 0) for k in set(cost_a) | set(cost_b)}
    return out


@dataclass
class Summarizer:
    """Runs summary requests for one model with the agent's retry settings."""

    info: ModelInfo
    options: CallOptions
    target: Route | None = None
    key_variable: str | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    on_retry: Callable[[int, float, str], None] | None = None

    async def ask(self, user_text: str) -> SummaryText:
        messages = [
            {"role": "system", "content": prompts.SYSTEM_PROMPT},
            {"role": "user", "content": user_text},
        ]
        retries = self.retry.start()
        while True:
            target = self.target or route(self.info, self.options.api_base)
            builder = ReplyBuilder(self.info, target)
            try:
                await stream_reply(self.info, messages, [], self.options, builder, lambda e: None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                error = classify(exc, self.key_variable)
                wait = retries.next_delay(error.retry_after) if error.kind == "retryable" else None
                if wait is not None:
                    if self.on_retry is not None:
                        self.on_retry(retries.attempt, wait, error.message)
                    await asyncio.sleep(wait)
                    continue
                raise SummaryError(f"Summarization failed: {error.message}") from None
            message = builder.message()
            if message["stopReason"] == "length":
                raise SummaryError("Summarization failed: the summary was cut off (length).")
            if builder.calls:
                raise SummaryError("Summarization failed: the model called a tool.")
            text = "".join(builder.text).strip()
            if not text:
                raise SummaryError("Summarization failed: the model returned no text.")
            return SummaryText(text, message.get("usage"))

    async def compaction_summary(
        self, plan: CompactionPreparation, instructions: str | None
    ) -> SummaryText:
        """History summary (updated from the previous one), plus the split turn's prefix."""
        usage: dict[str, Any] | None = None
        if plan.is_split_turn and plan.turn_prefix_messages:
            if plan.messages_to_summarize:
                history = await self.ask(
                    prompts.summary_request(
                        plan.serialized_conversation, plan.previous_summary, instructions
                    )
                )
                history_text, usage = history.text, history.usage
            else:
                history_text = plan.previous_summary or prompts.NO_PRIOR_HISTORY
            prefix = await self.ask(
                prompts.turn_prefix_request(
                    serialize_conversation(plan.turn_prefix_messages), instructions
                )
            )
            usage = _add_usage(usage, prefix.usage)
            text = history_text + prompts.SPLIT_TURN_SEPARATOR + prefix.text
        else:
            history = await self.ask(
                prompts.summary_request(
                    plan.serialized_conversation, plan.previous_summary, instructions
                )
            )
            text, usage = history.text, history.usage
        read_files, modified_files = plan.file_ops.lists()
        return SummaryText(text + format_file_operations(read_files, modified_files), usage)

    async def branch_summary(
        self, prep: BranchPreparation, instructions: str | None, replace: bool
    ) -> SummaryText:
        read_files, modified_files = prep.file_ops.lists()
        if not prep.messages:
            return SummaryText(prompts.NO_BRANCH_CONTENT, None)
        reply = await self.ask(
            prompts.branch_request(serialize_conversation(prep.messages), instructions, replace)
        )
        text = (
            prompts.BRANCH_PREAMBLE
            + reply.text
            + format_file_operations(read_files, modified_files)
        )
        return SummaryText(text, reply.usage)
