"""One streamed call through litellm, for the providers pitui does not speak itself (Bedrock,
Vertex, Azure, Mistral, ...): litellm's OpenAI-shaped chunks fed into the same
:class:`~pitui.llm.reply.ReplyBuilder` the native APIs feed.

litellm is imported on first use, in a thread (:mod:`pitui.llm.fallback.lazy`); nothing on
the path of the four native APIs imports it.
"""

from __future__ import annotations

import contextlib
from typing import Any

from pitui.llm.call import Call
from pitui.llm.fallback.convert import family
from pitui.llm.fallback.request import request_kwargs
from pitui.llm.lazy import litellm, litellm_ready
from pitui.llm.models import ModelInfo, in_litellm_table
from pitui.llm.reply import ReplyBuilder

REFUSED = "The model refused to complete the request."
FILTERED = "The provider's content filter stopped the reply: rephrase the request."
GEMINI_FILTERED = (
    "Gemini stopped the reply for safety or recitation reasons: rephrase the request or try "
    "another model."
)
GEMINI_EMPTY = (
    "Gemini stopped without a reply (for example a malformed function call): try again or "
    "rephrase the request."
)


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


class ChunkFeed:
    """Feeds litellm's chunks of one reply into ``reply``; :meth:`finish` sets how it ended."""

    def __init__(self, reply: ReplyBuilder) -> None:
        self.reply = reply
        self.kind = family(reply.route)
        self.finish_reason: str | None = None
        self.raw_stop_reason: str | None = None
        self.stop_details: Any = None
        self.reasoning_field = False

    def feed(self, chunk: Any) -> None:
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.take_usage(usage)
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return
        choice = choices[0]
        delta = getattr(choice, "delta", None)
        if delta is not None:
            self._delta(delta)
        reason = getattr(choice, "finish_reason", None)
        if reason:
            self.finish_reason = reason

    def _delta(self, delta: Any) -> None:
        reply = self.reply
        fields = _get(delta, "provider_specific_fields") or {}
        if isinstance(fields, dict) and fields.get("stop_reason"):
            self.raw_stop_reason = str(fields["stop_reason"])
            self.stop_details = fields.get("stop_details")
        thinking_blocks = _get(delta, "thinking_blocks") or []
        if thinking_blocks:
            for block in thinking_blocks:
                if _get(block, "type") == "redacted_thinking":
                    reply.redacted_thinking(str(_get(block, "data") or ""))
                    continue
                key = ("thinking", _get(block, "index"))
                piece = _get(block, "thinking")
                reply.thinking_piece(piece if isinstance(piece, str) else "", key)
                signature = _get(block, "signature")
                if isinstance(signature, str) and signature:
                    reply.thinking_signature(signature, key)
        else:
            reasoning = _get(delta, "reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                self.reasoning_field = True
                reply.thinking_piece(reasoning)
        content = _get(delta, "content")
        if isinstance(content, str) and content:
            reply.text_piece(content)
        for call in _get(delta, "tool_calls") or []:
            self._tool_call(call)
        signatures = fields.get("thought_signatures") if isinstance(fields, dict) else None
        if isinstance(signatures, list) and self.kind == "gemini":
            on_calls = {b.thought_signature for b in reply.blocks if b.kind == "tool"}
            for signature in signatures:
                if signature and signature not in on_calls:
                    reply.text_signature(str(signature))

    def _tool_call(self, call: Any) -> None:
        index = _get(call, "index")
        key = index if isinstance(index, int) else len(self.reply.calls)
        call_id = _get(call, "id")
        function = _get(call, "function")
        name = _get(function, "name") if function is not None else None
        arguments = _get(function, "arguments") if function is not None else None
        signature = None
        for source in (call, function):
            extra = _get(source, "provider_specific_fields") if source is not None else None
            if isinstance(extra, dict) and extra.get("thought_signature"):
                signature = str(extra["thought_signature"])
        self.reply.tool_call(
            key,
            # litellm folds a Gemini thought signature into the id; it is kept on its own.
            call_id=str(call_id).split("__thought__", 1)[0] if call_id else None,
            name=str(name) if name else None,
            arguments=arguments if isinstance(arguments, str) else "",
            thought_signature=signature if self.kind == "gemini" else None,
        )

    def take_usage(self, usage: Any) -> None:
        prompt = _int(_get(usage, "prompt_tokens"))
        details = _get(usage, "prompt_tokens_details")
        cached = _int(_get(details, "cached_tokens")) if details is not None else 0
        cache_read = _int(_get(usage, "cache_read_input_tokens")) or cached
        cache_write = _int(_get(usage, "cache_creation_input_tokens"))
        self.reply.take_usage(
            prompt - cache_read - cache_write if prompt else 0,
            _int(_get(usage, "completion_tokens")),
            cache_read,
            cache_write,
        )

    def finish(self) -> None:
        """pi's ``stopReason`` from what litellm reported (after the stream ended)."""
        reply = self.reply
        if self.reasoning_field and self.kind in ("chat", "ollama"):
            reply.thinking_signature("reasoning_content")
        raw = self.raw_stop_reason
        reason = self.finish_reason
        if raw == "refusal":
            details = self.stop_details if isinstance(self.stop_details, dict) else {}
            explanation = details.get("explanation")
            reply.finish("error", str(explanation) if explanation else REFUSED)
        elif raw == "pause_turn":
            reply.finish("stop")
        elif reason == "content_filter":
            reply.finish("error", GEMINI_FILTERED if self.kind == "gemini" else FILTERED)
        elif self.kind == "gemini" and not reply.blocks and reason == "stop":
            # MALFORMED_FUNCTION_CALL and similar stops arrive with no content at all.
            reply.finish("error", GEMINI_EMPTY)
        elif reason == "length":
            reply.finish("length")
        elif reason in ("tool_calls", "function_call"):
            reply.finish("toolUse")
        else:
            reply.finish("stop")


_registered: set[str] = set()


def ensure_known(info: ModelInfo) -> None:
    """Tell litellm about a model missing from its price table (zero cost): otherwise it
    fails to price every streamed reply of such a model, in a background thread."""
    ref = info.ref.for_litellm
    name = ref.litellm_name
    if in_litellm_table(ref) or name in _registered:
        return
    entry: dict[str, Any] = {
        "litellm_provider": ref.provider or "openai",
        "mode": "chat",
        "input_cost_per_token": info.input_cost,
        "output_cost_per_token": info.output_cost,
    }
    if info.context_window:
        entry["max_input_tokens"] = info.context_window
    if info.max_output:
        entry["max_output_tokens"] = entry["max_tokens"] = info.max_output
    with contextlib.suppress(Exception):  # an optimization: never fail a request over it
        litellm().register_model({name: entry, ref.model_id: dict(entry)})
    _registered.add(name)


def partial_usage(response: Any) -> Any:
    """The usage litellm recovered for a stream that failed part-way (None if it has none)."""
    with contextlib.suppress(Exception):
        details = response.logging_obj.model_call_details
        return details.get("combined_usage_object")
    return None


async def stream_litellm(call: Call, reply: ReplyBuilder) -> None:
    """Run ``call`` through litellm, feeding ``reply`` (on the provider loop)."""
    module = await litellm_ready()  # imported in a thread, never on an event loop
    ensure_known(call.info)
    kwargs = request_kwargs(call)
    if str(kwargs["model"]).startswith("anthropic/"):
        from pitui.llm.coalesce import anthropic_handler

        kwargs["client"] = anthropic_handler()  # its events coalesced (OpenAI's always are)
    feed = ChunkFeed(reply)
    response = await module.acompletion(**kwargs)
    try:
        async for chunk in response:
            feed.feed(chunk)
    except Exception:
        if reply.usage is None:
            usage = partial_usage(response)
            if usage is not None:
                feed.take_usage(usage)
        raise
    feed.finish()
