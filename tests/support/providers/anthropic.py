"""A local Anthropic Messages API: ``POST /v1/messages`` streamed as server-sent events, byte for
byte as the documented protocol (``message_start``, ``content_block_start/delta/stop`` with
``thinking_delta``, ``signature_delta``, ``text_delta``, ``input_json_delta``, ``ping``,
``message_delta``, ``message_stop``, ``error``), and checking requests the way the real API does.

Refused like the real API (status, ``{"type": "error", "error": {"type", "message"}}`` body):

* no ``x-api-key`` (401 ``authentication_error``), no ``anthropic-version``, no ``max_tokens``;
* ``thinking.budget_tokens`` under 1024, ``max_tokens <= budget_tokens``, ``max_tokens`` above the
  model's output limit, more than 4 ``cache_control`` breakpoints;
* budget thinking (``{"type": "enabled"}``) on the models that only think adaptively (Claude
  Opus 4.7 and later, every 5.x model), and ``{"type": "adaptive"}`` on models before 4.6;
  an ``output_config.effort`` that is not ``low``, ``medium``, ``high``, ``xhigh`` or ``max``;
  an unknown ``anthropic-beta`` feature;
* a ``thinking`` block whose text or ``signature`` was changed, or whose signature is missing;
  a ``redacted_thinking`` block whose ``data`` was changed (signatures are HMACs of the thinking
  text under a key only this server knows);
* with thinking on, a tool-use continuation whose final assistant message does not start with
  its thinking, or whose thinking blocks are not exactly the ones the reply carried;
* a ``tool_use`` without a ``tool_result`` in the next message, a ``tool_result`` without its
  ``tool_use`` in the previous message;
* a prompt larger than the context window ("prompt is too long: N tokens > M maximum").

Like the real API, budget thinking without the ``interleaved-thinking-2025-05-14`` beta
thinks only at the start of a turn: a reply to tool results then carries no thinking (the
scripted thinking blocks are left out and ``request.thinking_dropped`` is set). Adaptive
thinking interleaves by itself.

Scripted failures: ``overloaded()`` (529), ``rate_limited(retry_after)`` (429 with
``retry-after``), ``too_long()``, and a reply with ``error_after=N`` (an ``error`` event after N
events, once ``message_start`` reported the input tokens).

Prompt caching is accounted like the real API: the request is linearized as tools, system, then
message content blocks; a ``cache_control`` breakpoint writes the prefix up to its block, and a
later request reads the longest cached prefix found at or up to 20 blocks before one of its
breakpoints (prefixes under ``min_cache_tokens`` are not cached). ``message_start`` reports
``input_tokens`` (after the last breakpoint), ``cache_creation_input_tokens`` and
``cache_read_input_tokens``. Tokens are chars/4 of each block's JSON.

pitui facts (``anthropic/NAME`` with the api base of this server; pinned by
``test_anthropic_server.py`` and the agent tests): requests go to ``{api_base}/v1/messages``
with ``x-api-key`` and ``anthropic-version``; the system prompt is one text block; tools carry
``input_schema``; pi's three breakpoints (the last tool, the system block, the last block of
the last user turn). Thinking is ``{"type": "enabled", "budget_tokens": N}`` with the
interleaved beta for models before 4.6 and ``{"type": "adaptive"}`` with
``output_config.effort`` from 4.6 on. A stored reply goes back block for block in its own
order (thinking with its signature, redacted thinking as its data, text, tool_use); tool
results of one turn are one user message. The reply is read event by event, so its blocks are
stored in stream order and the usage of ``message_start`` survives a failure part-way.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from support.providers.base import (
    ProviderHandler,
    RecordedRequest,
    ScriptedServer,
    estimate_tokens,
    split_text,
    sse,
)

API_KEY = "sk-ant-test-key"
DEFAULT_MODEL = "claude-sonnet-4-5"
EXTENDED_THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
CACHE_LOOKBACK = 20
PING_EVERY = 0.05

# --------------------------------------------------------------------------------------------
# Scripted replies


@dataclass
class Thinking:
    text: str
    #: A signature to send instead of the server's own (e.g. one that does not verify).
    signature: str | None = None


@dataclass
class Redacted:
    pass


@dataclass
class Text:
    text: str


@dataclass
class ToolUse:
    name: str
    input: dict[str, Any]
    id: str | None = None


Block = Thinking | Redacted | Text | ToolUse


@dataclass
class Reply:
    blocks: list[Block]
    #: ``end_turn``/``tool_use`` by default; ``max_tokens``, ``refusal``, ``pause_turn`` ...
    stop_reason: str | None = None
    stop_details: dict[str, Any] | None = None
    chunks: int = 3
    #: Output tokens reported (default chars/4 of what was produced; ``max_tokens`` stops report
    #: the request's ``max_tokens``).
    output_tokens: int | None = None
    #: Send an ``error`` event after this many events (``message_start`` is event 0).
    error_after: int | None = None
    error_type: str = "overloaded_error"
    error_message: str = "Overloaded"
    headers: dict[str, str] = field(default_factory=dict)
    #: After this many events the stream pauses for ``stall_seconds``: silent, or sending a
    #: ``ping`` every ``PING_EVERY`` seconds (``stall_pings``) as the real API does.
    stall_after: int | None = None
    stall_seconds: float = 0.0
    stall_pings: bool = False


@dataclass
class Failure:
    status: int
    type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


Step = Reply | Failure


def reply(*blocks: Block, **options: Any) -> Reply:
    return Reply(list(blocks), **options)


def text(value: str = "Hello from Claude.", **options: Any) -> Reply:
    return Reply([Text(value)], **options)


def overloaded() -> Failure:
    return Failure(529, "overloaded_error", "Overloaded")


def rate_limited(retry_after: float = 1) -> Failure:
    message = (
        "This request would exceed the rate limit for your organization of 30,000 input tokens "
        "per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can "
        "see the response headers for current usage. Please reduce the prompt length or the "
        "maximum tokens requested, or try again later."
    )
    return Failure(429, "rate_limit_error", message, {"retry-after": f"{retry_after:g}"})


def too_long(tokens: int = 210_000, window: int = 200_000) -> Failure:
    return Failure(
        400, "invalid_request_error", f"prompt is too long: {tokens} tokens > {window} maximum"
    )


# --------------------------------------------------------------------------------------------
# The server


class AnthropicServer(ScriptedServer):
    """``base_url`` is the api base to give litellm (``http://127.0.0.1:<port>``)."""

    thread_name = "pitui-test-anthropic"

    def __init__(
        self,
        *,
        context_window: int = 200_000,
        max_output: int = 64_000,
        min_cache_tokens: int = 1024,
        api_key: str | None = API_KEY,
        signing_key: bytes | None = None,
    ) -> None:
        super().__init__()
        self.context_window = context_window
        self.max_output = max_output
        self.min_cache_tokens = min_cache_tokens
        self.api_key = api_key
        self._key = signing_key or os.urandom(32)
        self._ids = itertools.count(1)
        #: prefix hash -> tokens of that prefix (what the prompt cache holds).
        self.cache: dict[str, int] = {}
        #: first thinking signature of a reply -> every thinking block signature/data of it.
        self._replies: dict[str, list[str]] = {}

    @property
    def signing_key(self) -> bytes:
        """The HMAC key of this server's signatures (a second server can share it)."""
        return self._key

    @property
    def base_url(self) -> str:
        return self.url

    def on_reset(self) -> None:
        self.cache.clear()
        self._replies.clear()
        self._ids = itertools.count(1)

    # -- signatures ----------------------------------------------------------------------------

    def sign(self, thinking: str) -> str:
        salt = os.urandom(12)
        mac = hmac.new(self._key, salt + thinking.encode(), hashlib.sha256).digest()
        return base64.b64encode(b"\x12\x0c" + salt + b"\x1a\x20" + mac).decode()

    def verify(self, thinking: str, signature: str) -> bool:
        try:
            raw = base64.b64decode(signature, validate=True)
        except (ValueError, TypeError):
            return False
        if len(raw) != 48 or raw[:2] != b"\x12\x0c" or raw[14:16] != b"\x1a\x20":
            return False
        salt, mac = raw[2:14], raw[16:]
        expected = hmac.new(self._key, salt + thinking.encode(), hashlib.sha256).digest()
        return hmac.compare_digest(mac, expected)

    def redacted_data(self) -> str:
        return self.sign("\x00redacted")

    def verify_redacted(self, data: str) -> bool:
        return self.verify("\x00redacted", data)

    # -- HTTP ----------------------------------------------------------------------------------

    def dispatch(
        self,
        handler: ProviderHandler,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        raw: bytes,
    ) -> None:
        if method != "POST" or not path.endswith("/messages"):
            handler.send_json(404, _error("not_found_error", f"Not found: {method} {path}"))
            return
        request = self.record(
            method=method,
            path=path,
            headers={k.lower(): v for k, v in handler.headers.items()},
            body=body,
            raw=raw,
            query=query,
        )
        problem = self.check(request)
        if problem is not None:
            handler.send_json(
                problem.status, _error(problem.type, problem.message), problem.headers
            )
            request.completed = True
            return
        step = self.next_step(request)
        if step is None:
            handler.send_json(
                500,
                _error("api_error", f"pitui test server: no scripted reply for #{request.index}"),
            )
            request.completed = True
            return
        if isinstance(step, Failure):
            handler.send_json(step.status, _error(step.type, step.message), step.headers)
            request.completed = True
            return
        self.stream(handler, request, step)

    # -- checks (what the real API refuses) -----------------------------------------------------

    def check(self, request: RecordedRequest) -> Failure | None:
        headers = request.headers
        key = headers.get("x-api-key")
        if not key and not headers.get("authorization"):
            return Failure(401, "authentication_error", "x-api-key header is required")
        if self.api_key is not None and key is not None and key != self.api_key:
            return Failure(401, "authentication_error", "invalid x-api-key")
        if not headers.get("anthropic-version"):
            return _invalid("anthropic-version: header is required")
        for feature in filter(None, (headers.get("anthropic-beta") or "").split(",")):
            if feature.strip() not in KNOWN_BETAS:
                return _invalid(
                    f"Unexpected value(s) `{feature.strip()}` for the `anthropic-beta` header."
                )
        body = request.body
        if not isinstance(body, dict):
            return _invalid("The request body is not valid JSON.")
        for name in ("model", "max_tokens", "messages"):
            if name not in body:
                return _invalid(f"{name}: Field required")
        max_tokens = body["max_tokens"]
        if not isinstance(max_tokens, int) or max_tokens < 1:
            return _invalid("max_tokens: Input should be a valid integer greater than 0")
        if max_tokens > self.max_output:
            return _invalid(
                f"max_tokens: {max_tokens} > {self.max_output}, which is the maximum allowed "
                f"number of output tokens for {body['model']}"
            )
        thinking = body.get("thinking")
        thinking_on = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
        model = str(body["model"])
        kind = thinking.get("type") if isinstance(thinking, dict) else None
        if kind == "enabled" and adaptive_only(model):
            return _invalid(
                f"thinking.type.enabled is not supported for this model ({model}). Use "
                "thinking.type.adaptive and output_config.effort to control thinking behavior."
            )
        if kind == "adaptive" and not adaptive_capable(model):
            return _invalid(f"thinking.type.adaptive is not supported for this model ({model}).")
        effort = (body.get("output_config") or {}).get("effort")
        if effort is not None and effort not in ("low", "medium", "high", "xhigh", "max"):
            return _invalid(
                "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
            )
        if kind == "enabled":
            budget = thinking.get("budget_tokens")
            if not isinstance(budget, int):
                return _invalid("thinking.enabled.budget_tokens: Field required")
            if budget < 1024:
                return _invalid(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
                )
            if max_tokens <= budget:
                return _invalid(
                    "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult "
                    f"our documentation at {EXTENDED_THINKING_DOCS}"
                    "#max-tokens-and-context-window-size"
                )
        breakpoints = sum(1 for block in linear_blocks(body) if "cache_control" in block)
        if breakpoints > 4:
            return _invalid(
                f"A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
            )
        messages = body["messages"]
        if not isinstance(messages, list) or not messages:
            return _invalid("messages: at least one message is required")
        problem = self._check_messages(messages, thinking_on)
        if problem is not None:
            return problem
        tokens = self.prompt_tokens(body)
        if tokens > self.context_window:
            return _invalid(f"prompt is too long: {tokens} tokens > {self.context_window} maximum")
        return None

    def _check_messages(self, messages: list[Any], thinking_on: bool) -> Failure | None:
        previous_uses: list[str] = []
        for i, message in enumerate(messages):
            role = message.get("role") if isinstance(message, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if not isinstance(blocks, list):
                return _invalid(f"messages.{i}.content: Input should be a valid list")
            if role == "assistant":
                if previous_uses:
                    return _tool_use_without_result(i - 1, previous_uses)
                for j, block in enumerate(blocks):
                    problem = self._check_thinking_block(i, j, block)
                    if problem is not None:
                        return problem
                previous_uses = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
            elif role == "user":
                results = [b for b in blocks if b.get("type") == "tool_result"]
                answered = {str(b.get("tool_use_id")) for b in results}
                for j, block in enumerate(blocks):
                    if block.get("type") == "tool_result" and (
                        str(block.get("tool_use_id")) not in previous_uses
                    ):
                        return _invalid(
                            f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                            f"`tool_result` blocks: {block.get('tool_use_id')}. Each "
                            "`tool_result` block must have a corresponding `tool_use` block in "
                            "the previous message."
                        )
                missing = [u for u in previous_uses if u not in answered]
                if missing:
                    return _tool_use_without_result(i - 1, missing)
                previous_uses = []
            else:
                return _invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if previous_uses:
            return _tool_use_without_result(len(messages) - 1, previous_uses)
        if thinking_on:
            return self._check_final_assistant(messages)
        return None

    def _check_thinking_block(self, i: int, j: int, block: dict[str, Any]) -> Failure | None:
        kind = block.get("type")
        if kind == "thinking":
            signature = block.get("signature")
            if not isinstance(signature, str) or not signature:
                return _invalid(f"messages.{i}.content.{j}.thinking.signature: Field required")
            if not self.verify(str(block.get("thinking", "")), signature):
                return _invalid(
                    f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
                )
        elif kind == "redacted_thinking":
            data = block.get("data")
            if not isinstance(data, str) or not self.verify_redacted(data):
                return _invalid(
                    f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block"
                )
        return None

    def _check_final_assistant(self, messages: list[Any]) -> Failure | None:
        """Thinking on: the assistant message before the last tool results starts with its
        thinking, and its thinking blocks are the reply's own, unmodified and in order."""
        last = messages[-1]
        content = last.get("content")
        if not (isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)):
            return None
        i = len(messages) - 2
        assistant = messages[i].get("content")
        blocks = [{"type": "text", "text": assistant}] if isinstance(assistant, str) else assistant
        first = blocks[0].get("type") if blocks else "nothing"
        if first not in ("thinking", "redacted_thinking"):
            return _invalid(
                f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
                f"found `{first}`. When `thinking` is enabled, a final `assistant` message must "
                "start with a thinking block (preceeding the lastmost set of `tool_use` and "
                "`tool_result` blocks). We recommend you include thinking blocks from previous "
                "turns. To avoid this requirement, disable `thinking`. Please consult our "
                f"documentation at {EXTENDED_THINKING_DOCS}"
            )
        sent = [
            str(b.get("signature") if b.get("type") == "thinking" else b.get("data"))
            for b in blocks
            if b.get("type") in ("thinking", "redacted_thinking")
        ]
        original = self._replies.get(sent[0])
        if original is not None and sent != original:
            position = next(
                (k for k, (a, b) in enumerate(zip(sent, original, strict=False)) if a != b), 0
            )
            return _invalid(
                f"messages.{i}.content.{position}: `thinking` or `redacted_thinking` blocks in "
                "the latest assistant message cannot be modified. These blocks must remain as "
                "they were in the original response."
            )
        return None

    # -- tokens and the prompt cache -------------------------------------------------------------

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        return sum(_block_tokens(b) for b in linear_blocks(body))

    def cache_usage(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """(input, cache_creation, cache_read) for ``body``, updating the cache."""
        blocks = linear_blocks(body)
        prefix_tokens: list[int] = []
        prefix_hashes: list[str] = []
        digest = hashlib.sha256(str(body.get("model")).encode())
        running = 0
        for block in blocks:
            clean = {k: v for k, v in block.items() if k != "cache_control"}
            digest.update(json.dumps(clean, sort_keys=True).encode())
            running += _block_tokens(block)
            prefix_tokens.append(running)
            prefix_hashes.append(digest.copy().hexdigest())
        breakpoints = [i for i, block in enumerate(blocks) if "cache_control" in block]
        read_at = -1
        for b in breakpoints:
            for p in range(b, max(-1, b - CACHE_LOOKBACK - 1), -1):
                if prefix_hashes[p] in self.cache:
                    read_at = max(read_at, p)
                    break
        cache_read = prefix_tokens[read_at] if read_at >= 0 else 0
        cache_creation = 0
        if breakpoints:
            last = breakpoints[-1]
            if prefix_tokens[last] >= self.min_cache_tokens and last > read_at:
                cache_creation = prefix_tokens[last] - cache_read
            for b in breakpoints:
                if prefix_tokens[b] >= self.min_cache_tokens:
                    self.cache[prefix_hashes[b]] = prefix_tokens[b]
        total = running
        return total - cache_read - cache_creation, cache_creation, cache_read

    # -- the stream ------------------------------------------------------------------------------

    def extra_usage(self, body: dict[str, Any], usage: dict[str, int]) -> dict[str, Any]:
        """Fields a host adds to ``message_delta``'s usage (OpenRouter: what it billed)."""
        return {}

    def stream(self, handler: ProviderHandler, request: RecordedRequest, step: Reply) -> None:
        body = request.body
        thinking = body.get("thinking") if isinstance(body.get("thinking"), dict) else {}
        interleaved = thinking.get("type") == "adaptive" or INTERLEAVED in str(
            request.header("anthropic-beta") or ""
        )
        blocks = step.blocks
        request.thinking_dropped = False  # type: ignore[attr-defined]
        if not interleaved and _answers_tool_results(body):
            # Budget thinking without the beta thinks only where a turn starts.
            kept = [b for b in blocks if not isinstance(b, Thinking | Redacted)]
            request.thinking_dropped = len(kept) != len(blocks)  # type: ignore[attr-defined]
            blocks = kept
        with self._lock:
            input_tokens, creation, read = self.cache_usage(body)
            message_id = f"msg_01Test{next(self._ids):06d}"
        usage = {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": read,
            "output_tokens": 1,
        }
        request.usage = dict(usage)  # type: ignore[attr-defined]  # the benchmark reads it
        events: list[bytes] = [
            sse(
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": body.get("model"),
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": usage,
                    },
                },
            ),
            sse("ping", {"type": "ping"}),
        ]
        produced = ""
        signatures: list[str] = []
        tool_ids = itertools.count(1)
        for index, block in enumerate(blocks):
            if isinstance(block, Thinking):
                signature = block.signature or self.sign(block.text)
                signatures.append(signature)
                produced += block.text
                events.append(_start(index, {"type": "thinking", "thinking": "", "signature": ""}))
                for part in split_text(block.text, step.chunks):
                    events.append(_delta(index, {"type": "thinking_delta", "thinking": part}))
                events.append(_delta(index, {"type": "signature_delta", "signature": signature}))
            elif isinstance(block, Redacted):
                data = self.redacted_data()
                signatures.append(data)
                events.append(_start(index, {"type": "redacted_thinking", "data": data}))
            elif isinstance(block, Text):
                produced += block.text
                events.append(_start(index, {"type": "text", "text": ""}))
                for part in split_text(block.text, step.chunks):
                    events.append(_delta(index, {"type": "text_delta", "text": part}))
            else:
                tool_id = block.id or f"toolu_01{request.index:04d}{next(tool_ids):04d}Test"
                arguments = json.dumps(block.input, separators=(",", ":"))
                produced += block.name + arguments
                events.append(
                    _start(
                        index, {"type": "tool_use", "id": tool_id, "name": block.name, "input": {}}
                    )
                )
                events.append(_delta(index, {"type": "input_json_delta", "partial_json": ""}))
                for part in split_text(arguments, step.chunks):
                    events.append(_delta(index, {"type": "input_json_delta", "partial_json": part}))
            events.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        if signatures:
            with self._lock:
                self._replies[signatures[0]] = signatures
        stop_reason = step.stop_reason or (
            "tool_use" if any(isinstance(b, ToolUse) for b in blocks) else "end_turn"
        )
        output_tokens = step.output_tokens
        if output_tokens is None:
            output_tokens = (
                int(body["max_tokens"])
                if stop_reason == "max_tokens"
                else estimate_tokens(produced)
            )
        delta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": None}
        if step.stop_details is not None:
            delta["stop_details"] = step.stop_details
        events.append(
            sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": delta,
                    "usage": {
                        "input_tokens": input_tokens,
                        "cache_creation_input_tokens": creation,
                        "cache_read_input_tokens": read,
                        "output_tokens": output_tokens,
                        **self.extra_usage(body, {**usage, "output_tokens": output_tokens}),
                    },
                },
            )
        )
        events.append(sse("message_stop", {"type": "message_stop"}))
        request.usage["output_tokens"] = output_tokens  # type: ignore[attr-defined]
        if step.error_after is not None:
            events = events[: step.error_after]
            events.append(
                sse(
                    "error",
                    {
                        "type": "error",
                        "error": {"type": step.error_type, "message": step.error_message},
                    },
                )
            )
        headers = {"request-id": f"req_01Test{request.index:06d}", **step.headers}
        handler.start_stream("text/event-stream; charset=utf-8", headers)
        for number, event in enumerate(events):
            if number == step.stall_after:
                self._stall(handler, step)
            handler.write_chunk(event)
            request.events_sent += 1
        handler.end_stream()
        request.completed = True

    def _stall(self, handler: ProviderHandler, step: Reply) -> None:
        if not step.stall_pings:
            handler.wait(step.stall_seconds)
            return
        left = step.stall_seconds
        while left > 0:
            handler.wait(min(PING_EVERY, left))
            left -= PING_EVERY
            handler.write_chunk(sse("ping", {"type": "ping"}))


# --------------------------------------------------------------------------------------------
# Helpers

INTERLEAVED = "interleaved-thinking-2025-05-14"
KNOWN_BETAS = frozenset(
    {
        INTERLEAVED,
        "fine-grained-tool-streaming-2025-05-14",
        "context-1m-2025-08-07",
        "prompt-caching-2024-07-31",
        "token-efficient-tools-2025-02-19",
        "output-128k-2025-02-19",
    }
)
_VERSION = re.compile(r"claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d))?(?:-|$)")


def _claude_version(model: str) -> tuple[int, int] | None:
    match = _VERSION.search(model.lower())
    return (int(match.group(1)), int(match.group(2) or 0)) if match else None


def adaptive_only(model: str) -> bool:
    """Claude Opus 4.7 and later, and every 5.x model, refuse budget thinking."""
    version = _claude_version(model)
    return "fable" in model.lower() or (version is not None and version >= (4, 7))


def adaptive_capable(model: str) -> bool:
    """Adaptive thinking exists from Claude 4.6 on."""
    version = _claude_version(model)
    return "fable" in model.lower() or (version is not None and version >= (4, 6))


def _answers_tool_results(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    content = last.get("content") if isinstance(last, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _error(kind: str, message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": "req_01TestError",
    }


def _invalid(message: str) -> Failure:
    return Failure(400, "invalid_request_error", message)


def _tool_use_without_result(i: int, ids: list[str]) -> Failure:
    return _invalid(
        f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {', '.join(ids)}. Each `tool_use` block must have a corresponding "
        "`tool_result` block in the next message."
    )


def _start(index: int, block: dict[str, Any]) -> bytes:
    return sse(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return sse(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def linear_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The prompt in cache order: each tool, each system block, each message content block."""
    out: list[dict[str, Any]] = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            out.append(tool)
    system = body.get("system")
    if isinstance(system, str):
        out.append({"type": "text", "text": system})
    elif isinstance(system, list):
        out.extend(b for b in system if isinstance(b, dict))
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str):
            out.append({"type": "text", "text": content})
        elif isinstance(content, list):
            out.extend(b for b in content if isinstance(b, dict))
    return out


def _block_tokens(block: dict[str, Any]) -> int:
    return estimate_tokens({k: v for k, v in block.items() if k != "cache_control"})


#: Claude Sonnet 4.5's prices in $ per token (input, cache write, cache read, output).
SONNET_45_PRICES = (3e-6, 3.75e-6, 0.3e-6, 15e-6)


def cost(
    usage: dict[str, int], prices: tuple[float, float, float, float] = SONNET_45_PRICES
) -> float:
    """The price of one reply from its Anthropic ``usage`` numbers."""
    return (
        usage.get("input_tokens", 0) * prices[0]
        + usage.get("cache_creation_input_tokens", 0) * prices[1]
        + usage.get("cache_read_input_tokens", 0) * prices[2]
        + usage.get("output_tokens", 0) * prices[3]
    )
