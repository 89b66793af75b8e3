"""A local Gemini API (Google AI Studio): ``POST /v1beta/models/{model}:streamGenerateContent
?alt=sse`` streamed as server-sent events of ``GenerateContentResponse`` objects (candidates
with ``thought`` parts, ``functionCall`` parts carrying a ``thoughtSignature``, ``finishReason``,
``usageMetadata``), checking requests like the real API:

* an API key is required (``x-goog-api-key`` or ``?key=``; 400 ``API_KEY_INVALID`` otherwise);
* a ``functionCall`` part this server signed must come back with its ``thoughtSignature``
  unchanged ("Function call is missing a thought_signature", "Corrupted thought signature");
* a ``functionResponse`` turn must follow a function-call turn, with as many responses as calls;
* ``maxOutputTokens`` within the model's range.

Failures: ``quota_exceeded(retry_delay)`` is the per-minute 429 ``RESOURCE_EXHAUSTED`` with a
``RetryInfo`` detail; finish reasons ``SAFETY``, ``RECITATION``, ``MALFORMED_FUNCTION_CALL``
and ``MAX_TOKENS`` can be scripted.

litellm facts (``gemini/NAME`` with ``api_base``): requests go to
``{api_base}/models/NAME:streamGenerateContent?alt=sse`` with the key in ``x-goog-api-key`` and
snake_case fields (``function_call``, ``max_output_tokens``; the real API takes both spellings).
``reasoning_effort`` becomes ``thinkingConfig`` with ``includeThoughts``. Thought parts stream as
``reasoning_content``; a ``thoughtSignature`` arrives on the tool call
(``provider_specific_fields["thought_signature"]``, and folded into the id after
``__thought__``) and in ``delta.provider_specific_fields["thought_signatures"]``; tool calls
with that field are replayed with their ``thoughtSignature``. ``SAFETY``/``RECITATION`` map to
``content_filter``, ``MAX_TOKENS`` to ``length``, ``MALFORMED_FUNCTION_CALL`` (no content) to an
empty ``stop``: the raw reason is not exposed when streaming.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import os
from dataclasses import dataclass, field
from typing import Any

from support.providers.base import (
    ProviderHandler,
    RecordedRequest,
    ScriptedServer,
    estimate_tokens,
    split_text,
)

API_KEY = "gemini-test-key"
MAX_OUTPUT = 65_536


@dataclass
class Thought:
    text: str


@dataclass
class Text:
    text: str


@dataclass
class Call:
    name: str
    args: dict[str, Any]


Part = Thought | Text | Call


@dataclass
class Reply:
    parts: list[Part]
    finish_reason: str = "STOP"
    chunks: int = 3


@dataclass
class Failure:
    status: int
    message: str
    state: str
    details: list[dict[str, Any]] = field(default_factory=list)


def _field(obj: Any, camel: str) -> Any:
    """A request field under its proto JSON name or its snake_case twin (both are accepted)."""
    if not isinstance(obj, dict):
        return None
    if camel in obj:
        return obj[camel]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return obj.get(snake)


def reply(*parts: Part, **options: Any) -> Reply:
    return Reply(list(parts), **options)


def quota_exceeded(retry_delay: float = 7.5) -> Failure:
    """The ordinary per-minute quota 429, as Gemini words it."""
    return Failure(
        429,
        "You exceeded your current quota, please check your plan and billing details. For more "
        "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. "
        "\n* Quota exceeded for metric: generativelanguage.googleapis.com/"
        "generate_content_free_tier_requests, limit: 10\nPlease retry in "
        f"{retry_delay}s.",
        "RESOURCE_EXHAUSTED",
        [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": "generativelanguage.googleapis.com/"
                        "generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                    }
                ],
            },
            {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": f"{retry_delay:g}s",
            },
        ],
    )


class GeminiServer(ScriptedServer):
    thread_name = "pitui-test-gemini"

    def __init__(self, api_key: str | None = API_KEY) -> None:
        super().__init__()
        self.api_key = api_key
        self._key = os.urandom(32)
        self._ids = itertools.count(1)
        #: (function name, args JSON) of every call this server signed.
        self.signed_calls: set[tuple[str, str]] = set()

    @property
    def api_base(self) -> str:
        return self.url

    def on_reset(self) -> None:
        self.signed_calls.clear()

    def sign(self, name: str, args: dict[str, Any]) -> str:
        payload = name.encode() + b"\x00" + json.dumps(args, sort_keys=True).encode()
        mac = hmac.new(self._key, payload, hashlib.sha256).digest()
        return base64.b64encode(b"\x0a\x20" + mac).decode()

    def verify(self, name: str, args: Any, signature: str) -> bool:
        try:
            raw = base64.b64decode(signature, validate=True)
        except (ValueError, TypeError):
            return False
        payload = name.encode() + b"\x00" + json.dumps(args, sort_keys=True).encode()
        expected = hmac.new(self._key, payload, hashlib.sha256).digest()
        return raw[:2] == b"\x0a\x20" and hmac.compare_digest(raw[2:], expected)

    # -- HTTP ------------------------------------------------------------------------------------

    def dispatch(
        self,
        handler: ProviderHandler,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        raw: bytes,
    ) -> None:
        action = path.rsplit(":", 1)[-1] if ":" in path else ""
        if method != "POST" or action not in ("streamGenerateContent", "generateContent"):
            _fail(handler, Failure(404, f"Method not found: {path}", "NOT_FOUND"))
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
        step: Any = None
        if problem is None:
            step = self.next_step(request)
            if step is None:
                problem = Failure(
                    500, f"pitui test server: no scripted reply for #{request.index}", "INTERNAL"
                )
            elif isinstance(step, Failure):
                problem = step
        if problem is not None:
            _fail(handler, problem)
            request.completed = True
            return
        self._stream(handler, request, step, path.rsplit("/", 1)[-1].split(":")[0])

    def check(self, request: RecordedRequest) -> Failure | None:
        key = request.header("x-goog-api-key") or request.query.get("key")
        if self.api_key is not None and key != self.api_key:
            return Failure(
                400,
                "API key not valid. Please pass a valid API key.",
                "INVALID_ARGUMENT",
                [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "API_KEY_INVALID",
                        "domain": "googleapis.com",
                    }
                ],
            )
        body = request.body
        if not isinstance(body, dict) or not isinstance(body.get("contents"), list):
            return Failure(
                400,
                "* GenerateContentRequest.contents: contents is not specified",
                "INVALID_ARGUMENT",
            )
        limit = _field(_field(body, "generationConfig"), "maxOutputTokens")
        if isinstance(limit, int) and not 0 < limit <= MAX_OUTPUT:
            return Failure(
                400,
                f"Unable to submit request because it has a maxOutputTokens value of {limit} but "
                f"the supported range is from 1 (inclusive) to {MAX_OUTPUT + 1} (exclusive). "
                "Update the value and try again.",
                "INVALID_ARGUMENT",
            )
        calls_before = 0
        for index, content in enumerate(body["contents"]):
            parts = content.get("parts") or []
            calls = [p for p in parts if _field(p, "functionCall") is not None]
            responses = [p for p in parts if _field(p, "functionResponse") is not None]
            if responses:
                if calls_before == 0:
                    return Failure(
                        400,
                        "Please ensure that function response turn comes immediately after a "
                        "function call turn.",
                        "INVALID_ARGUMENT",
                    )
                if len(responses) != calls_before:
                    return Failure(
                        400,
                        "Please ensure that the number of function response parts is equal to "
                        "the number of function call parts of the function call turn.",
                        "INVALID_ARGUMENT",
                    )
            for position, part in enumerate(calls):
                call = _field(part, "functionCall")
                name, args = str(call.get("name")), call.get("args") or {}
                signature = _field(part, "thoughtSignature")
                issued = (name, json.dumps(args, sort_keys=True)) in self.signed_calls
                if signature is None and issued and position == 0:
                    return Failure(
                        400,
                        "Function call is missing a thought_signature in functionCall parts. "
                        "This is required for tools to work correctly, and missing "
                        "thought_signature may lead to degraded model performance. Additional "
                        f"data, function call `default_api:{name}` , position {index + 1}. "
                        "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures "
                        "for more details.",
                        "INVALID_ARGUMENT",
                    )
                if signature is not None and not self.verify(name, args, str(signature)):
                    return Failure(400, "Corrupted thought signature.", "INVALID_ARGUMENT")
            calls_before = len(calls)
        return None

    # -- the stream ------------------------------------------------------------------------------

    def _stream(
        self, handler: ProviderHandler, request: RecordedRequest, step: Reply, model: str
    ) -> None:
        body = request.body
        thinking = _field(_field(body, "generationConfig"), "thinkingConfig") or {}
        show_thoughts = bool(_field(thinking, "includeThoughts"))
        system = _field(body, "systemInstruction") or ""
        prompt_tokens = estimate_tokens(body.get("contents")) + estimate_tokens(system)
        chunks: list[dict[str, Any]] = []
        produced = ""
        thoughts = 0
        signed_first_call = False
        with self._lock:
            response_id = f"resp-test-{next(self._ids)}"
        for part in step.parts:
            if isinstance(part, Thought):
                thoughts += estimate_tokens(part.text)
                if show_thoughts:
                    for piece in split_text(part.text, step.chunks):
                        chunks.append({"text": piece, "thought": True})
            elif isinstance(part, Text):
                produced += part.text
                for piece in split_text(part.text, step.chunks):
                    chunks.append({"text": piece})
            else:
                produced += part.name + json.dumps(part.args)
                out: dict[str, Any] = {"functionCall": {"name": part.name, "args": part.args}}
                if thinking and not signed_first_call:
                    # Gemini signs the first function call of a turn when it thought.
                    out["thoughtSignature"] = self.sign(part.name, part.args)
                    with self._lock:
                        self.signed_calls.add((part.name, json.dumps(part.args, sort_keys=True)))
                    signed_first_call = True
                chunks.append(out)
        if thinking and not signed_first_call:
            texts = [c for c in chunks if "text" in c and not c.get("thought")]
            if texts:  # a reply without calls carries its signature on its last text part
                texts[-1]["thoughtSignature"] = self.sign("", {"text": produced})
        if step.finish_reason == "MALFORMED_FUNCTION_CALL":
            chunks = []  # Gemini sends no content, only the finish reason and a message
        candidates_tokens = estimate_tokens(produced) if produced else 0
        usage = {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": candidates_tokens,
            "totalTokenCount": prompt_tokens + candidates_tokens + thoughts,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt_tokens}],
        }
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        events = []
        for i, part in enumerate(chunks or [None]):
            candidate: dict[str, Any] = {"index": 0}
            if part is not None:
                candidate["content"] = {"parts": [part], "role": "model"}
            else:
                candidate["finishMessage"] = "Malformed function call: bash(command=ls"
            event: dict[str, Any] = {
                "candidates": [candidate],
                "modelVersion": model,
                "responseId": response_id,
            }
            if i == max(len(chunks), 1) - 1:
                candidate["finishReason"] = step.finish_reason
                if step.finish_reason == "SAFETY":
                    candidate["safetyRatings"] = [
                        {
                            "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                            "probability": "HIGH",
                            "blocked": True,
                        }
                    ]
                event["usageMetadata"] = usage
            else:
                event["usageMetadata"] = {
                    "promptTokenCount": prompt_tokens,
                    "totalTokenCount": prompt_tokens,
                }
            events.append(event)
        handler.start_stream("text/event-stream", {"x-goog-request-id": response_id})
        for event in events:
            handler.write_chunk(
                b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\r\n\r\n"
            )
            request.events_sent += 1
        handler.end_stream()
        request.completed = True


def _fail(handler: ProviderHandler, failure: Failure) -> None:
    error: dict[str, Any] = {
        "code": failure.status,
        "message": failure.message,
        "status": failure.state,
    }
    if failure.details:
        error["details"] = failure.details
    handler.send_json(failure.status, {"error": error})
