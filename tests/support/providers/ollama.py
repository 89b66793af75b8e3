"""A local Ollama server: ``POST /api/chat`` streamed as NDJSON (one JSON object per line,
``message.content`` / ``message.thinking`` / ``message.tool_calls``, a last line with
``done: true``, ``done_reason``, ``prompt_eval_count`` and ``eval_count``), ``POST /api/show``
(the model's ``<arch>.context_length`` and capabilities) and ``GET /api/tags``.

Like the real server it does not refuse a prompt longer than its context: without
``options.num_ctx`` it uses a small default context (4096) and silently keeps only the end of
the prompt (``request.truncated`` records it, ``prompt_eval_count`` shows it). It refuses
``think`` for a model without the thinking capability, tools for one without tools, and
unknown models (404). ``error_after=N`` sends an ``{"error": ...}`` line after N lines, as
Ollama does when the model runner fails mid-stream.

litellm facts (``ollama_chat/NAME``): ``POST {api_base}/api/chat``; ``num_ctx`` and
``max_tokens`` (as ``num_predict``) go into ``options``, ``reasoning_effort`` becomes
``think: true``; ``message.thinking`` streams as ``reasoning_content`` and an assistant message's
``reasoning_content`` is sent back as ``thinking``. A mid-stream ``{"error": ...}`` line raises
``BadRequestError`` (status 400) whose text quotes the line as a Python dict
("Got unexpected response from Ollama: {'error': ...}").
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
        if method != "POST" or path != "/api/chat":
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
            handler.send_json(problem[0], {"error": problem[1]})
            request.completed = True
            return
        step = self.next_step(request)
        if step is None:
            handler.send_json(
                500, {"error": f"pitui test server: no scripted reply for #{request.index}"}
            )
            request.completed = True
            return
        self._stream(handler, request, step)

    def check(self, request: RecordedRequest) -> tuple[int, str] | None:
        body = request.body
        if not isinstance(body, dict):
            return 400, "invalid request body"
        model = self._model(body.get("model"))
        if model is None:
            return 404, f'model "{body.get("model")}" not found, try pulling it first'
        if body.get("think") and not model.thinking:
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
