"""A scripted, OpenAI-compatible chat-completions server for tests (no network, no API key).

The server listens on ``127.0.0.1`` (random free port) in a daemon thread and answers
``POST /v1/chat/completions`` (and ``POST /chat/completions``) from a FIFO *script* of steps,
one step per request.  ``GET /v1/models`` lists a few models.  Every chat request is recorded
(``server.requests``) so tests can assert exactly what the model was sent.  Drive it through
litellm's real code path::

    server.script(text("hello world", usage=(12, 3)))
    stream = await litellm.acompletion(
        model="openai/test-model", api_base=server.api_base, api_key="sk-test",
        messages=[...], stream=True, stream_options={"include_usage": True},
    )

Step builders (module functions, also reachable as ``server.text(...)`` etc.):

``text(content, chunks=3, usage=None, finish_reason="stop", cached=0, delay=0.0)``
``reasoning(thinking, then="", ...)``, ``tool_calls([(name, args), ...], text=None, ...)``,
``tool_call(name, args)``, ``error(status, message, headers=..., body=...)``, ``overflow()``,
``cut(text, after_chunks=2)``, ``malformed(text, after_chunks=1)``, ``empty()``,
``slow(text, delay_per_chunk)``, ``stream(deltas)``, ``raw(status, body)``.
``usage=None`` means "auto" (a small deterministic estimate); ``usage=False`` omits the usage
chunk entirely.  A script entry may also be a callable ``(RecordedRequest) -> Step`` evaluated
when the request arrives.
Tool-call ids are ``call_1``, ``call_2``, ... in serving order, restarting at every ``reset()``
(pass ``(name, args, id)`` to fix one).  An empty script answers HTTP 500 with
``{"error": {"message": "pitui test server: no scripted reply ...", "code": "no_scripted_reply"}}``
and counts the request in ``server.unscripted`` (the ``llm`` fixture fails the test then).

litellm facts (verified against litellm 1.110.2 with this server: openai provider, async,
aiohttp transport, ``stream=True``; pinned by ``tests/support/test_llm_server.py``):

* Set ``os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"`` before importing litellm (this
  module does ``setdefault`` on import), then ``litellm.suppress_debug_info = True``.
* Retries: by default litellm's openai provider retries 429/5xx/connection errors internally
  (the OpenAI SDK default ``max_retries=2``: 3 requests in all, honouring ``Retry-After``).
  Pass ``max_retries=0`` to ``acompletion`` (``num_retries=0`` works too) so that the agent's
  own retry logic is the only one.  ``completion_kwargs()`` below does that.
* HTTP errors are raised by ``await litellm.acompletion(...)`` itself (before any chunk):
  429 -> ``litellm.RateLimitError``; 400 ``context_length_exceeded`` ->
  ``litellm.ContextWindowExceededError`` (a subclass of ``litellm.BadRequestError``; the
  message keeps "maximum context length"); other 400 -> ``litellm.BadRequestError``;
  401 -> ``litellm.AuthenticationError``; 404 -> ``litellm.NotFoundError``;
  403 -> ``litellm.APIError`` (not PermissionDeniedError); 500 -> ``litellm.InternalServerError``;
  503 -> ``litellm.ServiceUnavailableError``; a client ``timeout=`` -> ``litellm.Timeout``.
  All have ``status_code`` and ``str(exc)`` contains the server's error message, e.g.
  ``"litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached"``.
* Retry-After: ``exc.response.headers["retry-after"]`` (an ``httpx.Headers``, case-insensitive)
  and ``exc.litellm_response_headers["retry-after"]`` (same headers) both carry it; the
  latter is set dynamically (not declared on the class): read it with ``getattr``.
  ``exc.body`` is the inner ``error`` dict (``{"message", "type", "param", "code"}``) for
  400/401/429/500, but ``None`` for 503/404/403.
* A stream cut mid-way (connection dropped before ``[DONE]``) raises, while iterating,
  ``MidStreamFallbackError`` (NOT exported at top level: ``from litellm.exceptions import
  MidStreamFallbackError``; subclass of ``litellm.ServiceUnavailableError``; ``status_code`` 500)
  with message ``"litellm.MidStreamFallbackError: litellm.APIConnectionError:
  APIConnectionError: OpenAIException - Connection error. ..."``;
  ``exc.original_exception`` is a ``litellm.APIConnectionError``, ``exc.generated_content``
  is the text streamed so far and ``exc.is_pre_first_chunk`` tells whether any chunk came.
  The deltas before the cut are delivered normally first.  litellm does not retry it.
* A malformed SSE ``data:`` line (invalid JSON) raises the same ``MidStreamFallbackError``
  (original ``APIConnectionError`` whose message is the ``json`` error, e.g. "Unterminated
  string starting at: ...") at that point of the stream; earlier deltas arrive first.
* Usage: with ``stream_options={"include_usage": True}`` the last chunk has ``choices == []``
  and ``chunk.usage`` set (``prompt_tokens``, ``completion_tokens``, ``total_tokens``,
  ``prompt_tokens_details.cached_tokens``, ``completion_tokens_details.reasoning_tokens``);
  other chunks have no ``usage`` attribute value (use ``getattr(chunk, "usage", None)``).
  If the server sends no usage chunk, litellm still yields one, synthesized from its own
  token count (``prompt_tokens_details`` is then ``None``).
* Deltas: ``chunk.choices[0].delta`` has ``content``, ``role`` (only on the first),
  ``tool_calls`` (list of objects with ``index``, ``id`` (only on a call's first fragment),
  ``type``, ``function.name``/``function.arguments``), and for reasoning streams
  ``delta.reasoning_content`` (a str; ``content`` is ``None`` on those chunks).  The finish
  chunk has an empty delta and ``choices[0].finish_reason`` (``stop``/``length``/``tool_calls``).
  Non-streaming replies expose ``message.reasoning_content`` likewise.
* Aborting: ``await stream.aclose()`` (``CustomStreamWrapper.aclose``) closes the connection;
  the server sees it on its next write (``request.disconnected``).
* Unknown model names make litellm's cost calculation fail in a worker thread on every
  streamed reply; call ``register_test_models()`` (the ``llm_server`` fixture does) or use a
  known model name.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from support.providers.base import Abort, ProviderHandler, ScriptedServer
from support.providers.base import RecordedRequest as BaseRecordedRequest

# Never let litellm fetch its cost map from the network (only effective before it is imported).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__all__ = [
    "MODELS",
    "RecordedRequest",
    "ScriptedLLMServer",
    "Step",
    "cut",
    "empty",
    "error",
    "malformed",
    "overflow",
    "raw",
    "reasoning",
    "register_test_models",
    "slow",
    "text",
    "tool_call",
    "tool_calls",
]

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODELS_PATHS = ("/v1/models", "/models")
MODELS = ("test-model", "test-model-large", "test-reasoner")

OVERFLOW_MESSAGE = (
    "This model's maximum context length is 8192 tokens. "
    "However, your messages resulted in 9000 tokens."
)

Usage = tuple[int, int] | None | Literal[False]
ToolCallSpec = tuple[str, Any] | tuple[str, Any, str]

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "permission_denied"),
    404: ("invalid_request_error", "model_not_found"),
    408: ("timeout", None),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    502: ("server_error", None),
    503: ("server_error", "overloaded"),
}


def register_test_models(names: Iterable[str] = MODELS) -> None:
    """Tell litellm the test models exist (zero cost, 8192-token context window).

    Without this litellm fails to price every streamed reply of an unknown model and formats
    the traceback in a worker thread; on CPython 3.11.7 that ``ast.parse`` races with the main
    thread's and can crash pytest with "SystemError: AST constructor recursion depth mismatch".
    """
    from pitui.llm.lazy import litellm as configured

    litellm = configured()  # suppress_debug_info and the offline cost map, as pitui runs it
    info = {
        "litellm_provider": "openai",
        "mode": "chat",
        "input_cost_per_token": 0.0,
        "output_cost_per_token": 0.0,
        "max_input_tokens": 8192,
        "max_output_tokens": 4096,
        "max_tokens": 4096,
    }
    litellm.register_model({key: dict(info) for n in names for key in (n, f"openai/{n}")})


# --------------------------------------------------------------------------------------------
# Steps


@dataclass
class Step:
    """One scripted reply.  Build it with the helper functions rather than by hand."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    #: For non-200 steps: the JSON (dict/list), text (str) or raw bytes body to send.
    body: Any = None
    content_type: str = "application/json"
    reasoning: str = ""
    reasoning_chunks: int = 2
    text: str = ""
    chunks: int = 3
    calls: list[ToolCallSpec] = field(default_factory=list)
    arg_chunks: int = 3
    finish_reason: str | None = "stop"
    usage: Usage = None
    cached: int = 0
    reasoning_tokens: int = 0
    #: Seconds to wait before sending the response headers.
    delay: float = 0.0
    #: Seconds to wait before each SSE event of a stream.
    chunk_delay: float = 0.0
    #: Close the connection abruptly after this many SSE events (no [DONE], no final chunk).
    cut_after: int | None = None
    #: Insert an invalid-JSON ``data:`` line after this many SSE events.
    malformed_after: int | None = None
    #: Explicit raw delta dicts (``stream``-style custom steps); overrides text/reasoning/calls.
    deltas: list[dict[str, Any]] | None = None


def _usage_param(usage: Usage) -> Usage:
    if usage is None or usage is False:
        return usage
    prompt, completion = usage
    return (int(prompt), int(completion))


def text(
    content: str = "hello world",
    chunks: int = 3,
    usage: Usage = None,
    finish_reason: str | None = "stop",
    cached: int = 0,
    delay: float = 0.0,
    *,
    chunk_delay: float = 0.0,
    headers: dict[str, str] | None = None,
) -> Step:
    """Assistant text streamed in ``chunks`` deltas (the first also carries ``role``)."""
    return Step(
        text=content,
        chunks=chunks,
        usage=_usage_param(usage),
        finish_reason=finish_reason,
        cached=cached,
        delay=delay,
        chunk_delay=chunk_delay,
        headers=dict(headers or {}),
    )


def reasoning(
    thinking: str = "Let me think.",
    then: str = "",
    chunks: int = 2,
    usage: Usage = None,
    finish_reason: str | None = "stop",
    *,
    then_chunks: int = 2,
    calls: Sequence[ToolCallSpec] | None = None,
    reasoning_tokens: int | None = None,
) -> Step:
    """``reasoning_content`` deltas (DeepSeek/vLLM style), then ``then`` as normal content.

    ``calls`` optionally appends tool calls after the text (finish reason ``tool_calls``).
    """
    calls_list = list(calls or [])
    return Step(
        reasoning=thinking,
        reasoning_chunks=chunks,
        text=then,
        chunks=then_chunks,
        calls=calls_list,
        usage=_usage_param(usage),
        finish_reason="tool_calls" if calls_list else finish_reason,
        reasoning_tokens=max(1, len(thinking) // 4)
        if reasoning_tokens is None
        else reasoning_tokens,
    )


def tool_calls(
    calls: Sequence[ToolCallSpec],
    text: str | None = None,
    usage: Usage = None,
    finish_reason: str | None = "tool_calls",
    *,
    arg_chunks: int = 3,
    chunks: int = 2,
    cached: int = 0,
) -> Step:
    """One or several (parallel) tool calls, streamed the OpenAI way.

    Each call is ``(name, args)`` or ``(name, args, id)``; ``args`` is a dict (sent as compact
    JSON) or a raw string sent verbatim (use it for invalid-JSON tests).  Any name is allowed,
    including ones the agent doesn't know.  Arguments are split over ``arg_chunks`` deltas.
    """
    return Step(
        text=text or "",
        chunks=chunks,
        calls=list(calls),
        arg_chunks=arg_chunks,
        usage=_usage_param(usage),
        finish_reason=finish_reason,
        cached=cached,
    )


def tool_call(name: str, args: Any, *, id: str | None = None, usage: Usage = None) -> Step:
    """A single tool call (shorthand for ``tool_calls([(name, args)])``)."""
    spec: ToolCallSpec = (name, args) if id is None else (name, args, id)
    return tool_calls([spec], usage=usage)


def error(
    status: int,
    message: str = "error",
    *,
    headers: dict[str, str] | None = None,
    body: Any = None,
    type: str | None = None,
    code: str | None = None,
    delay: float = 0.0,
) -> Step:
    """An HTTP error with an OpenAI-style body ``{"error": {"message", "type", "code"}}``.

    ``body`` (dict, str or bytes) replaces the whole body when given.
    """
    default_type, default_code = _ERROR_TYPES.get(
        status, ("invalid_request_error" if status < 500 else "server_error", None)
    )
    if body is None:
        body = {
            "error": {
                "message": message,
                "type": type or default_type,
                "param": None,
                "code": code if code is not None else default_code,
            }
        }
    return Step(status=status, headers=dict(headers or {}), body=body, delay=delay)


def overflow(message: str = OVERFLOW_MESSAGE) -> Step:
    """HTTP 400 ``context_length_exceeded`` exactly as OpenAI words it."""
    return error(400, message, type="invalid_request_error", code="context_length_exceeded")


def cut(text: str = "partial", after_chunks: int = 2, chunks: int = 3) -> Step:
    """Stream ``after_chunks`` SSE events of ``text`` then drop the connection (no [DONE])."""
    return Step(text=text, chunks=chunks, cut_after=after_chunks)


def malformed(text: str = "hello world", after_chunks: int = 1, chunks: int = 3) -> Step:
    """A stream with an invalid-JSON ``data:`` line after ``after_chunks`` good events."""
    return Step(text=text, chunks=chunks, malformed_after=after_chunks)


def empty(usage: Usage = None, finish_reason: str | None = "stop") -> Step:
    """A stream without any content (one empty role delta) and ``finish_reason`` stop."""
    return Step(text="", usage=_usage_param(usage), finish_reason=finish_reason)


def slow(
    text: str = "one two three four five six seven eight nine ten",
    delay_per_chunk: float = 0.2,
    chunks: int | None = None,
    usage: Usage = None,
) -> Step:
    """Text streamed with a pause before every event (for abort/cancel tests).

    ``chunks`` defaults to one chunk per word.  Pauses end early when the server stops, and
    the stream stops as soon as the client disconnects.
    """
    n = chunks if chunks is not None else max(1, len(text.split()))
    return Step(text=text, chunks=n, chunk_delay=delay_per_chunk, usage=_usage_param(usage))


def stream(
    deltas: Sequence[dict[str, Any]],
    finish_reason: str | None = "stop",
    usage: Usage = None,
) -> Step:
    """A stream of exactly these ``delta`` dicts (then the finish chunk and usage)."""
    return Step(deltas=[dict(d) for d in deltas], finish_reason=finish_reason, usage=usage)


def raw(
    status: int,
    body: bytes | str | Any,
    *,
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
) -> Step:
    """Any status with any body (dict/list are JSON-encoded, str/bytes sent as they are)."""
    return Step(status=status, body=body, headers=dict(headers or {}), content_type=content_type)


# --------------------------------------------------------------------------------------------
# Recording


@dataclass
class RecordedRequest(BaseRecordedRequest):
    """One chat request the server received.  ``headers`` keys are lower-cased."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self.body.get("tools") or []) if isinstance(self.body, dict) else []

    @property
    def tool_names(self) -> list[str]:
        return [t.get("function", {}).get("name", "") for t in self.tools]

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream")) if isinstance(self.body, dict) else False


# --------------------------------------------------------------------------------------------
# Rendering


def _split(text: str, n: int) -> list[str]:
    if not text:
        return []
    n = max(1, min(n, len(text)))
    size, extra = divmod(len(text), n)
    parts, pos = [], 0
    for i in range(n):
        end = pos + size + (1 if i < extra else 0)
        parts.append(text[pos:end])
        pos = end
    return parts


def _estimate(text: str) -> int:
    return max(1, len(text) // 4)


@dataclass
class _Rendered:
    deltas: list[dict[str, Any]]
    message: dict[str, Any]
    usage: dict[str, Any] | None


class _Renderer:
    def __init__(self, next_call_id: Callable[[], str]) -> None:
        self._next_call_id = next_call_id

    def render(self, step: Step, request: RecordedRequest) -> _Rendered:
        calls: list[dict[str, Any]] = []
        for spec in step.calls:
            name, args = spec[0], spec[1]
            call_id = spec[2] if len(spec) > 2 else self._next_call_id()
            arguments = args if isinstance(args, str) else json.dumps(args, separators=(",", ":"))
            calls.append({"id": call_id, "name": name, "arguments": arguments})

        if step.deltas is not None:
            deltas = [dict(d) for d in step.deltas]
        else:
            deltas = [
                {"reasoning_content": p} for p in _split(step.reasoning, step.reasoning_chunks)
            ]
            deltas += [{"content": p} for p in _split(step.text, step.chunks)]
            for i, call in enumerate(calls):
                deltas.append(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": call["id"],
                                "type": "function",
                                "function": {"name": call["name"], "arguments": ""},
                            }
                        ]
                    }
                )
                deltas += [
                    {"tool_calls": [{"index": i, "function": {"arguments": frag}}]}
                    for frag in _split(call["arguments"], step.arg_chunks)
                ]
            if not deltas:
                deltas.append({"content": ""})
            deltas[0] = {"role": "assistant", **deltas[0]}

        message: dict[str, Any] = {
            "role": "assistant",
            "content": step.text or None,
            "refusal": None,
        }
        if step.reasoning:
            message["reasoning_content"] = step.reasoning
        if calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in calls
            ]

        usage: dict[str, Any] | None = None
        if step.usage is not False:
            if step.usage is None:
                prompt = _estimate(json.dumps(request.messages))
                produced = step.reasoning + step.text + "".join(c["arguments"] for c in calls)
                completion = _estimate(produced) + len(calls)
            else:
                prompt, completion = step.usage
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": step.cached},
                "completion_tokens_details": {"reasoning_tokens": step.reasoning_tokens},
            }
        return _Rendered(deltas=deltas, message=message, usage=usage)


# --------------------------------------------------------------------------------------------
# HTTP


class _Handler(ProviderHandler):
    """The OpenAI chat routes (its own ``do_GET``/``do_POST``; the helpers come from the base)."""

    # -- verbs -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in MODELS_PATHS:
            data = [
                {"id": m, "object": "model", "created": 1700000000, "owned_by": "pitui-test"}
                for m in MODELS
            ]
            self.send_json(200, {"object": "list", "data": data})
        else:
            self.send_json(404, _not_found(self.path))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        raw_body = self.read_body()
        if path not in CHAT_PATHS:
            self.send_json(404, _not_found(self.path))
            return
        try:
            body: Any = json.loads(raw_body) if raw_body else None
        except ValueError:
            body = None
        request = self.owner.record(
            method="POST",
            path=path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw_body,
        )
        step = self.owner.next_step(request)
        if step is None:
            self.send_json(
                500,
                {
                    "error": {
                        "message": (
                            f"pitui test server: no scripted reply for request #{request.index} "
                            "(the script is empty; call server.script(...) first)"
                        ),
                        "type": "server_error",
                        "param": None,
                        "code": "no_scripted_reply",
                    }
                },
            )
            request.completed = True
            return
        request.step = step
        try:
            self._serve(step, request)
        except Abort:
            self.drop()
        except OSError:
            request.disconnected = True
            self.drop()

    # -- replies -----------------------------------------------------------------------------

    def _serve(self, step: Step, request: RecordedRequest) -> None:
        self.wait(step.delay)
        if step.status != 200 or (step.body is not None and step.deltas is None):
            body = step.body
            if isinstance(body, str):
                data = body.encode()
            elif isinstance(body, bytes):
                data = body
            else:
                data = json.dumps(body).encode()
            self.send_bytes(step.status, data, step.content_type, step.headers)
            request.completed = True
            return
        rendered = self.owner._renderer.render(step, request)
        if request.stream:
            self._serve_stream(step, request, rendered)
        else:
            self._serve_json(step, request, rendered)

    def _serve_json(self, step: Step, request: RecordedRequest, rendered: _Rendered) -> None:
        payload: dict[str, Any] = {
            "id": f"chatcmpl-test{request.index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model or "test-model",
            "system_fingerprint": "fp_test",
            "choices": [
                {
                    "index": 0,
                    "message": rendered.message,
                    "logprobs": None,
                    "finish_reason": step.finish_reason,
                }
            ],
        }
        if rendered.usage is not None:
            payload["usage"] = rendered.usage
        data = json.dumps(payload).encode()
        if step.malformed_after is not None:
            data = data[: len(data) // 2]
        if step.cut_after is not None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.drop()
            return
        self.send_bytes(200, data, headers=step.headers)
        request.completed = True

    def _serve_stream(self, step: Step, request: RecordedRequest, rendered: _Rendered) -> None:
        chunk_id = f"chatcmpl-test{request.index}"
        created = int(time.time())
        model = request.model or "test-model"

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
            return json.dumps(
                {
                    "id": chunk_id,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "system_fingerprint": "fp_test",
                    "choices": [
                        {
                            "index": 0,
                            "delta": delta,
                            "logprobs": None,
                            "finish_reason": finish_reason,
                        }
                    ],
                }
            ).encode()

        events = [chunk(d) for d in rendered.deltas]
        events.append(chunk({}, step.finish_reason))
        options = request.body.get("stream_options") if isinstance(request.body, dict) else None
        if (
            rendered.usage is not None
            and isinstance(options, dict)
            and options.get("include_usage")
        ):
            events.append(
                json.dumps(
                    {
                        "id": chunk_id,
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": model,
                        "system_fingerprint": "fp_test",
                        "choices": [],
                        "usage": rendered.usage,
                    }
                ).encode()
            )
        if step.malformed_after is not None:
            events.insert(step.malformed_after, b'{"id": "broken", "choices": [{"delta": {"con')
        events.append(b"[DONE]")

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        for key, value in step.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.close_connection = True

        for i, event in enumerate(events):
            if step.cut_after is not None and i >= step.cut_after:
                raise Abort
            self.wait(step.chunk_delay)
            self.write_chunk(b"data: " + event + b"\n\n")
            request.events_sent += 1
        self.write_chunk(b"")
        request.completed = True


def _not_found(path: str) -> dict[str, Any]:
    return {
        "error": {
            "message": f"pitui test server: unknown path {path}",
            "type": "invalid_request_error",
            "param": None,
            "code": "not_found",
        }
    }


# --------------------------------------------------------------------------------------------
# Server


ScriptEntry = Step | Callable[[RecordedRequest], Step]


class ScriptedLLMServer(ScriptedServer):
    """The scripted server.  ``start()``/``stop()`` or use it as a context manager."""

    # Step builders, reachable from the fixture object (``llm.text(...)``).
    text = staticmethod(text)
    reasoning = staticmethod(reasoning)
    tool_calls = staticmethod(tool_calls)
    tool_call = staticmethod(tool_call)
    error = staticmethod(error)
    overflow = staticmethod(overflow)
    cut = staticmethod(cut)
    malformed = staticmethod(malformed)
    empty = staticmethod(empty)
    slow = staticmethod(slow)
    stream = staticmethod(stream)
    raw = staticmethod(raw)

    thread_name = "pitui-test-llm-server"
    handler_class = _Handler
    request_class = RecordedRequest

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self._call_ids: Iterator[int] = itertools.count(1)
        self._renderer = _Renderer(self._next_call_id)

    # -- lifecycle, script and recordings come from ScriptedServer ---------------------------

    @property
    def api_base(self) -> str:
        """``<url>/v1``: pass as litellm's ``api_base``."""
        return f"{self.url}/v1"

    def completion_kwargs(self, model: str = "test-model", **extra: Any) -> dict[str, Any]:
        """Keyword arguments for ``litellm.acompletion`` pointing at this server (streaming)."""
        kwargs: dict[str, Any] = {
            "model": f"openai/{model}",
            "api_base": self.api_base,
            "api_key": "sk-test",
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_retries": 0,
        }
        kwargs.update(extra)
        return kwargs

    def on_reset(self) -> None:
        """``reset()`` also restarts the tool-call ids at ``call_1``."""
        self._call_ids = itertools.count(1)

    def _next_call_id(self) -> str:
        with self._lock:
            return f"call_{next(self._call_ids)}"
