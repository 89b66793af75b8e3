"""A local Ollama server, both of its chat APIs:

* ``POST /v1/chat/completions``, its OpenAI-compatible endpoint (what pi 1.6 and pitui use):
  server-sent ``chat.completion.chunk`` events, thinking in ``delta.reasoning``, tool calls
  whole in one chunk with an ``id``, ``finish_reason``, a last chunk with ``usage`` when
  ``stream_options.include_usage`` asks, ``data: [DONE]``. ``reasoning_effort`` turns thinking
  on (``"none"`` off); an assistant message's ``reasoning`` is its model's own thinking sent
  back. A mid-stream failure is a ``data: {"error": {"message", "type"}}`` event. The endpoint
  takes no context size: the server's default context applies.
* ``POST /api/chat``, Ollama's own API, streamed as NDJSON (``message.content`` /
  ``message.thinking`` / ``message.tool_calls``, a last line with ``done: true``,
  ``done_reason``, ``prompt_eval_count`` and ``eval_count``), which takes ``options.num_ctx``
  (pitui reaches it through litellm when a model's ``numCtx`` setting asks for a context size);
* ``POST /api/show`` (the model's ``<arch>.context_length`` and capabilities) and
  ``GET /api/tags``.

Like the real server it does not refuse a prompt longer than its context: with no
``options.num_ctx`` it uses its default context (4096 tokens) and silently keeps only the end of
the prompt (``request.truncated`` records it, the reported prompt tokens show it). It refuses
thinking for a model without the thinking capability, tools for one without tools, and
unknown models (404). ``error_after=N`` fails the stream after N events, as Ollama does when
the model runner fails mid-stream.

pitui facts (``ollama/NAME`` or ``ollama_chat/NAME``, api base the server's root or its
``/v1``): requests go to ``/v1/chat/completions`` with ``reasoning_effort`` for
``--thinking``, no ``options``; the reply's ``delta.reasoning`` is stored as thinking with
``thinkingSignature: "reasoning"`` and sent back in that field. Through litellm (``numCtx``):
``/api/chat`` with ``options.num_ctx``, ``think: true``; a mid-stream ``{"error": ...}`` line
raises ``BadRequestError`` quoting the line as a Python dict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from support.providers.base import (
    ProviderHandler,
    RecordedRequest,
    ScriptedServer,
    estimate_tokens,
    split_text,
    sse,
)

DEFAULT_NUM_CTX = 4096
CREATED_AT = "2026-01-15T09:40:00.000000Z"


@dataclass(frozen=True)
class LocalModel:
    name: str
    context_length: int = 40_960
    thinking: bool = True
    tools: bool = True
    architecture: str = "qwen3"


MODELS = (
    LocalModel("qwen3"),
    LocalModel("llama3", context_length=8192, thinking=False, architecture="llama"),
)


@dataclass
class Think:
    text: str


@dataclass
class Say:
    text: str


@dataclass
class Tool:
    name: str
    arguments: dict[str, Any]


@dataclass
class Reply:
    parts: list[Think | Say | Tool]
    done_reason: str = "stop"
    chunks: int = 3
    error_after: int | None = None
    error: str = "an error was encountered while running the model: unexpected EOF"


def reply(*parts: Think | Say | Tool, **options: Any) -> Reply:
    return Reply(list(parts), **options)


class OllamaServer(ScriptedServer):
    thread_name = "pitui-test-ollama"

    def __init__(self, models: tuple[LocalModel, ...] = MODELS) -> None:
        super().__init__()
        self.models = {m.name: m for m in models}

    @property
    def api_base(self) -> str:
        return self.url

    def _model(self, name: Any) -> LocalModel | None:
        name = str(name or "")
        return self.models.get(name) or self.models.get(name.removesuffix(":latest"))

    def dispatch(
        self,
        handler: ProviderHandler,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        raw: bytes,
    ) -> None:
        if method == "GET" and path == "/api/tags":
            handler.send_json(
                200,
                {"models": [{"name": f"{m}:latest", "model": f"{m}:latest"} for m in self.models]},
            )
            return
        if method == "POST" and path == "/api/show":
            model = self._model((body or {}).get("model"))
            if model is None:
                handler.send_json(404, {"error": f"model '{(body or {}).get('model')}' not found"})
                return
            capabilities = (
                ["completion"]
                + (["tools"] if model.tools else [])
                + (["thinking"] if model.thinking else [])
            )
            handler.send_json(
                200,
                {
                    "details": {"family": model.architecture, "format": "gguf"},
                    "model_info": {
                        "general.architecture": model.architecture,
                        f"{model.architecture}.context_length": model.context_length,
                    },
                    "capabilities": capabilities,
                },
            )
            return
        openai = path == "/v1/chat/completions"
        if method != "POST" or not (openai or path == "/api/chat"):
            handler.send_bytes(404, b"404 page not found", "text/plain")
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
            error: Any = problem[1]
            if openai:
                error = {"message": problem[1], "type": "api_error", "param": None, "code": None}
            handler.send_json(problem[0], {"error": error})
            request.completed = True
            return
        step = self.next_step(request)
        if step is None:
            handler.send_json(
                500, {"error": f"pitui test server: no scripted reply for #{request.index}"}
            )
            request.completed = True
            return
        if openai:
            self._stream_openai(handler, request, step)
        else:
            self._stream(handler, request, step)

    @staticmethod
    def thinks(body: dict[str, Any]) -> bool:
        """Whether the request turns thinking on (``think`` or ``reasoning_effort``)."""
        effort = body.get("reasoning_effort")
        if effort is None and isinstance(body.get("reasoning"), dict):
            effort = body["reasoning"].get("effort")
        return bool(body.get("think")) or (effort is not None and effort != "none")

    def check(self, request: RecordedRequest) -> tuple[int, str] | None:
        body = request.body
        if not isinstance(body, dict):
            return 400, "invalid request body"
        model = self._model(body.get("model"))
        if model is None:
            return 404, f'model "{body.get("model")}" not found, try pulling it first'
        if self.thinks(body) and not model.thinking:
            return 400, f'"{model.name}" does not support thinking'
        if body.get("tools") and not model.tools:
            return 400, f"registry.ollama.ai/library/{model.name}:latest does not support tools"
        return None

    def _stream(self, handler: ProviderHandler, request: RecordedRequest, step: Reply) -> None:
        body = request.body
        options = body.get("options") or {}
        num_ctx = int(options.get("num_ctx") or DEFAULT_NUM_CTX)
        prompt_tokens = estimate_tokens(body.get("messages")) + estimate_tokens(
            body.get("tools") or []
        )
        request.truncated = prompt_tokens > num_ctx  # type: ignore[attr-defined]
        model = str(body.get("model"))
        lines: list[dict[str, Any]] = []
        produced = ""

        def line(message: dict[str, Any]) -> None:
            lines.append(
                {
                    "model": model,
                    "created_at": CREATED_AT,
                    "message": {"role": "assistant", "content": "", **message},
                    "done": False,
                }
            )

        for part in step.parts:
            if isinstance(part, Think):
                if body.get("think"):
                    for piece in split_text(part.text, step.chunks):
                        line({"thinking": piece})
                    produced += part.text
            elif isinstance(part, Say):
                for piece in split_text(part.text, step.chunks):
                    line({"content": piece})
                produced += part.text
            else:
                line(
                    {"tool_calls": [{"function": {"name": part.name, "arguments": part.arguments}}]}
                )
                produced += json.dumps(part.arguments)
        lines.append(
            {
                "model": model,
                "created_at": CREATED_AT,
                "message": {"role": "assistant", "content": ""},
                "done": True,
                "done_reason": step.done_reason,
                "total_duration": 1_000_000,
                "load_duration": 100_000,
                "prompt_eval_count": min(prompt_tokens, num_ctx),
                "prompt_eval_duration": 200_000,
                "eval_count": estimate_tokens(produced),
                "eval_duration": 700_000,
            }
        )
        encoded = [json.dumps(item).encode() + b"\n" for item in lines]
        if step.error_after is not None:
            encoded = [
                *encoded[: step.error_after],
                json.dumps({"error": step.error}).encode() + b"\n",
            ]
        handler.start_stream("application/x-ndjson")
        for chunk in encoded:
            handler.write_chunk(chunk)
            request.events_sent += 1
        handler.end_stream()
        request.completed = True

    def _stream_openai(
        self, handler: ProviderHandler, request: RecordedRequest, step: Reply
    ) -> None:
        """The reply as Ollama's OpenAI-compatible endpoint streams it."""
        body = request.body
        prompt_tokens = estimate_tokens(body.get("messages")) + estimate_tokens(
            body.get("tools") or []
        )
        request.truncated = prompt_tokens > DEFAULT_NUM_CTX  # type: ignore[attr-defined]
        model = str(body.get("model"))
        events: list[bytes] = []
        produced = ""
        calls = 0

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return sse(
                None,
                {
                    "id": f"chatcmpl-{request.index}",
                    "object": "chat.completion.chunk",
                    "created": 1_768_470_000,
                    "model": model,
                    "system_fingerprint": "fp_ollama",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                },
            )

        for part in step.parts:
            if isinstance(part, Think):
                if self.thinks(body):
                    for piece in split_text(part.text, step.chunks):
                        events.append(
                            chunk({"role": "assistant", "content": "", "reasoning": piece})
                        )
                    produced += part.text
            elif isinstance(part, Say):
                for piece in split_text(part.text, step.chunks):
                    events.append(chunk({"role": "assistant", "content": piece}))
                produced += part.text
            else:
                calls += 1
                call = {
                    "id": f"call_{request.index}_{calls}",
                    "index": calls - 1,
                    "type": "function",
                    "function": {"name": part.name, "arguments": json.dumps(part.arguments)},
                }
                events.append(chunk({"role": "assistant", "content": "", "tool_calls": [call]}))
                produced += json.dumps(part.arguments)
        reason = "tool_calls" if calls else step.done_reason
        events.append(chunk({"role": "assistant", "content": ""}, reason))
        options = body.get("stream_options") or {}
        if options.get("include_usage"):
            completion = estimate_tokens(produced)
            usage = {
                "prompt_tokens": min(prompt_tokens, DEFAULT_NUM_CTX),
                "completion_tokens": completion,
                "total_tokens": min(prompt_tokens, DEFAULT_NUM_CTX) + completion,
            }
            events.append(
                sse(
                    None,
                    {
                        "id": f"chatcmpl-{request.index}",
                        "object": "chat.completion.chunk",
                        "model": model,
                        "choices": [],
                        "usage": usage,
                    },
                )
            )
        events.append(b"data: [DONE]\n\n")
        if step.error_after is not None:
            error = {
                "error": {"message": step.error, "type": "api_error", "param": None, "code": None}
            }
            events = [*events[: step.error_after], sse(None, error)]
        handler.start_stream("text/event-stream")
        for event in events:
            handler.write_chunk(event)
            request.events_sent += 1
        handler.end_stream()
        request.completed = True
