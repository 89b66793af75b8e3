"""A local Gemini API (Google AI Studio): ``POST /v1beta/models/{model}:streamGenerateContent
?alt=sse`` streamed as server-sent events of ``GenerateContentResponse`` objects (candidates
with ``thought`` parts, ``functionCall`` parts carrying a ``thoughtSignature``, ``finishReason``,
``usageMetadata``), checking requests like the real API:

* an API key is required (``x-goog-api-key`` or ``?key=``; 400 ``API_KEY_INVALID`` otherwise);
* a ``functionCall`` part this server signed must come back with its ``thoughtSignature``
  unchanged ("Function call is missing a thought_signature", "Corrupted thought signature");
* a ``functionResponse`` turn must follow a function-call turn, with as many responses as calls;
* every ``thoughtSignature`` is base64 (the field is bytes: "Invalid value at
  'contents[i].parts[j].thought_signature' (TYPE_BYTES), Base64 decoding failed");
* ``maxOutputTokens`` within the model's range;
* ``thinkingBudget: 0`` only where thinking can be turned off (not on Gemini 2.5 Pro).

Failures: ``quota_exceeded(retry_delay)`` is the per-minute 429 ``RESOURCE_EXHAUSTED`` with a
``RetryInfo`` detail; finish reasons ``SAFETY``, ``RECITATION``, ``MALFORMED_FUNCTION_CALL``
and ``MAX_TOKENS`` can be scripted, and so can a stream that ends before its finish reason
(``cut_after``: Gemini sends no closing event, the finish reason is the end) and an error
event in the middle of a stream (``error``, e.g. ``overloaded()``).

pitui's requests (``pitui/llm/apis/google_generative_ai.py``, the same shapes as pi 1.6's):
``{api_base}/models/NAME:streamGenerateContent?alt=sse`` with the key in ``x-goog-api-key`` and
camelCase fields (``functionCall``, ``generationConfig.maxOutputTokens``; the real API takes
snake_case too); the system prompt in ``systemInstruction``, tools as
``functionDeclarations`` with ``parametersJsonSchema``. Thinking is
``generationConfig.thinkingConfig`` with ``includeThoughts`` and a ``thinkingBudget`` (Gemini
2.5) or a ``thinkingLevel`` (Gemini 3 and later); thinking off is budget 0 or the lowest level
(128 on 2.5 Pro, which refuses 0). A reply's thought parts go back as ``thought`` parts, each
signature where it came from (a call's, a text's), only when it is base64. Thought parts are
stored as thinking, a ``thoughtSignature`` on a call as the tool call's ``thoughtSignature``, on
a text part as the text's ``textSignature``; ``STOP`` is ``stop`` (``toolUse`` with calls, an
error when nothing came, as after ``MALFORMED_FUNCTION_CALL``), ``MAX_TOKENS`` ``length``,
``SAFETY``/``RECITATION`` an error; a stream that ends before a finish reason is cut.
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
)

API_KEY = "gemini-test-key"
MAX_OUTPUT = 65_536
#: proto3 JSON bytes: standard or URL-safe base64, with or without padding.
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]*|[A-Za-z0-9_-]*)={0,2}$")
#: Models that cannot stop thinking (a zero budget is refused).
ALWAYS_THINKING = ("gemini-2.5-pro",)


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
class Failure:
    status: int
    message: str
    state: str
    details: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Reply:
    parts: list[Part]
    finish_reason: str = "STOP"
    chunks: int = 3
    cut_after: int | None = None
    """Send this many events, then end the stream without a finish reason."""
    error: Failure | None = None
    """An ``{"error": ...}`` event after the parts, in place of the finish reason."""


def _field(obj: Any, camel: str) -> Any:
    """A request field under its proto JSON name or its snake_case twin (both are accepted)."""
    if not isinstance(obj, dict):
        return None
    if camel in obj:
        return obj[camel]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return obj.get(snake)


def is_base64(value: Any) -> bool:
    """Whether a ``bytes`` field's JSON value decodes (proto3's rule)."""
    if not isinstance(value, str) or not _BASE64.match(value):
        return False
    return len(value.rstrip("=")) % 4 != 1


def model_of(path: str) -> str | None:
    """``gemini-2.5-pro`` for ``/models/gemini-2.5-pro:streamGenerateContent``."""
    if "/models/" not in path:
        return None
    return path.rsplit("/models/", 1)[-1].split(":", 1)[0] or None


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


def overloaded() -> Failure:
    """The 503 Gemini sends when the model is overloaded (also as an event mid-stream)."""
    return Failure(503, "The model is overloaded. Please try again later.", "UNAVAILABLE")


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
        for index, content in enumerate(body["contents"]):
            for position, part in enumerate(_field(content, "parts") or []):
                signature = _field(part, "thoughtSignature")
                if signature is not None and not is_base64(signature):
                    return Failure(
                        400,
                        f"Invalid value at 'contents[{index}].parts[{position}].thought_signature' "
                        f'(TYPE_BYTES), Base64 decoding failed for "{signature}"',
                        "INVALID_ARGUMENT",
                    )
        config = _field(body, "generationConfig")
        model = model_of(request.path)
        budget = _field(_field(config, "thinkingConfig"), "thinkingBudget")
        if budget == 0 and model is not None and model.startswith(ALWAYS_THINKING):
            return Failure(
                400,
                "Budget 0 is invalid. This model only works in thinking mode.",
                "INVALID_ARGUMENT",
            )
        limit = _field(config, "maxOutputTokens")
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
        if step.cut_after is not None or step.error is not None:
            for event in events:
                event["candidates"][0].pop("finishReason", None)
            if step.cut_after is not None:
                events = events[: step.cut_after]
            if step.error is not None:
                events.append({"error": _error_body(step.error)})
        handler.start_stream("text/event-stream", {"x-goog-request-id": response_id})
        for event in events:
            handler.write_chunk(
                b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\r\n\r\n"
            )
            request.events_sent += 1
        handler.end_stream()
        request.completed = True


def _error_body(failure: Failure) -> dict[str, Any]:
    error: dict[str, Any] = {
        "code": failure.status,
        "message": failure.message,
        "status": failure.state,
    }
    if failure.details:
        error["details"] = failure.details
    return error


def _fail(handler: ProviderHandler, failure: Failure) -> None:
    handler.send_json(failure.status, {"error": _error_body(failure)})
