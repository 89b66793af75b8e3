"""A local OpenRouter, both of the APIs pi 1.6 uses there:

* ``POST /api/v1/messages``, OpenRouter's Anthropic-compatible endpoint, where pi (and pitui)
  send Claude: Anthropic's protocol and checks (signed thinking, tool_use/tool_result pairing,
  the interleaved-thinking rules; :class:`support.providers.anthropic.AnthropicServer` speaks
  it), with OpenRouter's bearer key and the cost it billed in ``message_delta``'s usage. A
  scripted :class:`Reply` becomes Claude's blocks (thinking, text, tool calls); an Anthropic
  ``Reply`` is streamed as it is (any block order);
* ``POST /api/v1/chat/completions`` for the other models, streamed as OpenAI chat chunks with
  OpenRouter's additions, checking requests like the real service:

* deltas carry ``reasoning`` text and ``reasoning_details`` (``reasoning.text`` pieces, the
  last with a ``signature``; ``reasoning.encrypted`` for redacted thinking);
* the final chunk carries ``usage`` with ``cost`` (dollars, what OpenRouter bills) and
  ``prompt_tokens_details.cached_tokens``;
* for an Anthropic model with reasoning on, an assistant tool-call turn answered by the last
  tool messages must carry its ``reasoning_details``, and every signed detail must verify:
  otherwise the upstream refusal comes back the OpenRouter way, HTTP 400
  ``{"error": {"message": "Provider returned error", "code": 400, "metadata": {"raw": ...}}}``;
* a ``tool`` message must answer a tool call of the assistant message before it.

pitui facts (``openrouter/VENDOR/NAME``, api base ``{url}/api/v1``): Claude goes to
``{url}/api/v1/messages`` with ``Authorization: Bearer``; other models to
``/chat/completions`` with ``reasoning: {"effort"}``, ``usage: {"include": true}`` and
``max_tokens``; their ``delta.reasoning_details`` are stored (joined) as the thinking block's
signature and sent back as the assistant message's ``reasoning_details``; ``usage.cost`` is
stored as the reply's cost.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from support.providers import anthropic
from support.providers.anthropic import AnthropicServer
from support.providers.base import (
    ProviderHandler,
    RecordedRequest,
    ScriptedServer,
    estimate_tokens,
    split_text,
    sse,
)

API_KEY = "sk-or-v1-test-key"
#: $ per token OpenRouter bills for anthropic/claude-sonnet-4.5 (input, output).
PRICES = (3e-6, 15e-6)


@dataclass
class Reply:
    reasoning: str = ""
    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    finish_reason: str | None = None
    chunks: int = 3


@dataclass
class Failure:
    status: int
    message: str
    metadata: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def reply(
    text: str = "",
    reasoning: str = "",
    calls: list[tuple[str, dict[str, Any]]] | None = None,
    **options: Any,
) -> Reply:
    return Reply(reasoning, text, list(calls or []), **options)


def rate_limited(retry_after: float = 1) -> Failure:
    return Failure(
        429,
        "Rate limit exceeded: limit_rpm/anthropic/claude-sonnet-4.5",
        {"headers": {"X-RateLimit-Limit": "20"}},
        {"retry-after": f"{retry_after:g}"},
    )


class OpenRouterMessages(AnthropicServer):
    """Claude behind OpenRouter's Messages endpoint (never started: OpenRouterServer hands it
    the requests to check and answer)."""

    def extra_usage(self, body: dict[str, Any], usage: dict[str, int]) -> dict[str, Any]:
        prompt = (
            usage["input_tokens"]
            + usage["cache_creation_input_tokens"]
            + usage["cache_read_input_tokens"]
        )
        return {"cost": round(prompt * PRICES[0] + usage["output_tokens"] * PRICES[1], 9)}


def as_claude(step: Reply) -> anthropic.Reply:
    """An OpenRouter script step as Claude's blocks: thinking, text, then the tool calls."""
    blocks: list[anthropic.Block] = []
    if step.reasoning:
        blocks.append(anthropic.Thinking(step.reasoning))
    if step.text:
        blocks.append(anthropic.Text(step.text))
    blocks.extend(anthropic.ToolUse(name, arguments) for name, arguments in step.calls)
    stop = {"length": "max_tokens"}.get(step.finish_reason or "")
    return anthropic.Reply(blocks, stop_reason=stop, chunks=step.chunks)


class OpenRouterServer(ScriptedServer):
    thread_name = "pitui-test-openrouter"

    def __init__(self, api_key: str | None = API_KEY) -> None:
        super().__init__()
        self.api_key = api_key
        self._key = os.urandom(32)
        self._ids = itertools.count(1)
        #: The Anthropic protocol of ``/api/v1/messages`` (its signatures, cache, checks).
        self.messages = OpenRouterMessages(api_key=None)

    def on_reset(self) -> None:
        self.messages.on_reset()

    @property
    def api_base(self) -> str:
        return f"{self.url}/api/v1"

    def sign(self, text: str) -> str:
        return base64.b64encode(
            hmac.new(self._key, text.encode(), hashlib.sha256).digest()
        ).decode()

    def dispatch(
        self,
        handler: ProviderHandler,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        raw: bytes,
    ) -> None:
        messages_api = path.endswith("/v1/messages")
        if method != "POST" or not (messages_api or path.endswith("/chat/completions")):
            handler.send_json(404, {"error": {"message": "Not Found", "code": 404}})
            return
        request = self.record(
            method=method,
            path=path,
            headers={k.lower(): v for k, v in handler.headers.items()},
            body=body,
            raw=raw,
            query=query,
        )
        problem = self.check_auth(request)
        if problem is None and messages_api:
            refusal = self.messages.check(request)
            if refusal is not None:
                handler.send_json(
                    refusal.status,
                    {"type": "error", "error": {"type": refusal.type, "message": refusal.message}},
                )
                request.completed = True
                return
        elif problem is None:
            problem = self.check(request)
        step: Any = None
        if problem is None:
            step = self.next_step(request)
            if step is None:
                problem = Failure(500, f"pitui test server: no scripted reply for #{request.index}")
            elif isinstance(step, Failure):
                problem = step
        if problem is not None:
            error: dict[str, Any] = {"message": problem.message, "code": problem.status}
            if problem.metadata is not None:
                error["metadata"] = problem.metadata
            handler.send_json(problem.status, {"error": error}, problem.headers)
            request.completed = True
            return
        if messages_api:
            claude = step if isinstance(step, anthropic.Reply) else as_claude(step)
            self.messages.stream(handler, request, claude)
            return
        self._stream(handler, request, step)

    def check_auth(self, request: RecordedRequest) -> Failure | None:
        if self.api_key is not None and request.header("authorization") != f"Bearer {self.api_key}":
            return Failure(401, "No auth credentials found")
        return None

    def check(self, request: RecordedRequest) -> Failure | None:
        body = request.body
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return Failure(400, 'Input required: specify "prompt" or "messages"')
        model = str(body.get("model", ""))
        reasoning = body.get("reasoning") or {}
        thinking_on = bool(reasoning) and reasoning.get("enabled", True) is not False
        messages = body["messages"]
        open_calls: list[str] = []
        for i, message in enumerate(messages):
            role = message.get("role")
            if role == "assistant":
                open_calls = [str(c.get("id")) for c in message.get("tool_calls") or []]
                for detail in message.get("reasoning_details") or []:
                    signed = detail.get("type") == "reasoning.text" and detail.get("signature")
                    if signed and detail["signature"] != self.sign(str(detail.get("text", ""))):
                        return _upstream(
                            f"messages.{i}.content.0: Invalid `signature` in `thinking` block"
                        )
            elif role == "tool" and str(message.get("tool_call_id")) not in open_calls:
                return _upstream(
                    f"messages.{i}.content.0: unexpected `tool_use_id` found in `tool_result` "
                    "blocks"
                )
        last_assistant = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
        if (
            thinking_on
            and model.startswith("anthropic/")
            and messages[-1].get("role") == "tool"
            and last_assistant is not None
            and not last_assistant.get("reasoning_details")
        ):
            index = messages.index(last_assistant)
            return _upstream(
                f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
                "found `tool_use`. When `thinking` is enabled, a final `assistant` message must "
                "start with a thinking block."
            )
        return None

    def _stream(self, handler: ProviderHandler, request: RecordedRequest, step: Reply) -> None:
        body = request.body
        with self._lock:
            number = next(self._ids)
        chunk_id = f"gen-test-{number}"
        model = body.get("model")

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
            return sse(
                None,
                {
                    "id": chunk_id,
                    "provider": "Anthropic",
                    "model": model,
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "choices": [
                        {
                            "index": 0,
                            "delta": delta,
                            "finish_reason": finish,
                            "native_finish_reason": finish,
                        }
                    ],
                    **extra,
                },
            )

        events = [b": OPENROUTER PROCESSING\n\n"]
        pieces = split_text(step.reasoning, step.chunks)
        for k, piece in enumerate(pieces):
            detail: dict[str, Any] = {
                "type": "reasoning.text",
                "text": piece,
                "format": "anthropic-claude-v1",
                "index": 0,
            }
            if k == len(pieces) - 1:
                detail["signature"] = self.sign(step.reasoning)
            events.append(
                chunk(
                    {
                        "role": "assistant",
                        "content": "",
                        "reasoning": piece,
                        "reasoning_details": [detail],
                    }
                )
            )
        for piece in split_text(step.text, step.chunks):
            events.append(chunk({"role": "assistant", "content": piece}))
        for index, (name, arguments) in enumerate(step.calls):
            call_id = f"toolu_or{number:03d}{index}"
            text = json.dumps(arguments, separators=(",", ":"))
            events.append(
                chunk(
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": ""},
                            }
                        ],
                    }
                )
            )
            for piece in split_text(text, step.chunks):
                events.append(
                    chunk(
                        {
                            "role": "assistant",
                            "content": "",
                            "tool_calls": [{"index": index, "function": {"arguments": piece}}],
                        }
                    )
                )
        finish = step.finish_reason or ("tool_calls" if step.calls else "stop")
        prompt = estimate_tokens(body.get("messages")) + estimate_tokens(body.get("tools") or [])
        completion = estimate_tokens(step.reasoning + step.text + json.dumps(step.calls))
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "cost": round(prompt * PRICES[0] + completion * PRICES[1], 9),
            "is_byok": False,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": estimate_tokens(step.reasoning) if step.reasoning else 0
            },
        }
        events.append(chunk({"role": "assistant", "content": ""}, finish))
        events.append(chunk({"role": "assistant", "content": ""}, None, usage=usage))
        events.append(b"data: [DONE]\n\n")
        handler.start_stream("text/event-stream")
        for event in events:
            handler.write_chunk(event)
            request.events_sent += 1
        handler.end_stream()
        request.completed = True


def _upstream(message: str) -> Failure:
    raw = json.dumps(
        {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    )
    return Failure(400, "Provider returned error", {"raw": raw, "provider_name": "Anthropic"})
