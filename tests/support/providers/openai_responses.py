"""A local OpenAI Responses API: ``POST /v1/responses`` streamed as server-sent events
(``response.created``, ``response.output_item.added/done``, reasoning summary parts and deltas,
``response.output_text.delta``, ``response.function_call_arguments.delta/done``,
``response.completed`` / ``response.incomplete``, ``error``), checking requests like the real
API:

* a bearer key is required (401 ``invalid_api_key``);
* with ``store: false`` a ``reasoning`` input item must carry its ``encrypted_content`` (an id
  alone is a 404: items are not persisted), and that content must be this server's, unchanged
  (an HMAC it checks);
* items are paired by id, as the real API pairs them: a ``reasoning`` item sent with its id must
  be followed at once by the item (with its id) that followed it in the output (400 "Item
  'rs_…' of type 'reasoning' was provided without its required following item."), and an item
  that was produced after a reasoning item, sent with its id, needs that reasoning item earlier
  in the input (400 "Item 'fc_…' of type 'function_call' was provided without its required
  'reasoning' item: 'rs_…'."). Items sent without ids are not paired: the encrypted content
  carries the reasoning (OpenAI's Codex sends every item so);
* every ``function_call_output`` needs its ``function_call`` in the input, and every
  ``function_call`` its output.

Reasoning items get ``encrypted_content`` only when the request asks for it with
``include: ["reasoning.encrypted_content"]``. Usage: ``input_tokens`` (chars/4 of the input),
``output_tokens``, ``output_tokens_details.reasoning_tokens``.

pitui's requests (:mod:`pitui.llm.apis.openai_responses`: OpenAI's reasoning models, a model
whose mode is ``responses``, ``openai/responses/NAME``, a model whose settings name this API):
``POST {api_base}/responses`` with ``stream: true``, ``store: false``, ``include:
["reasoning.encrypted_content"]`` (for a model that reasons), ``reasoning: {"effort", "summary":
"auto"}`` when thinking, ``max_output_tokens``, the system prompt as a ``developer`` input item
(``system`` for a model that does not reason) and function tools with ``strict: false``. Summary
deltas become the thinking text; each finished reasoning item is stored as its thinking block's
signature (JSON: ``id``, ``type``, ``encrypted_content``, ``summary``), a tool call's id as
``call_id|fc_id`` and a message's id as its text block's ``textSignature``
(``{"v":1,"id":"msg_…"}``), as pi 1.6 stores them. A reply goes back as its items in their
order, every one with its id when all of them are known, else none with an id (replies stored
by pitui before it kept item ids: a bare ``call_id``, text without a signature).
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

from support.providers.base import (
    ProviderHandler,
    RecordedRequest,
    ScriptedServer,
    estimate_tokens,
    split_text,
    sse,
)

API_KEY = "sk-openai-test-key"


@dataclass
class Reasoning:
    summary: str


@dataclass
class Message:
    text: str


@dataclass
class FunctionCall:
    name: str
    arguments: dict[str, Any]


Item = Reasoning | Message | FunctionCall


@dataclass
class Reply:
    items: list[Item]
    #: ``max_output_tokens`` or ``content_filter`` ends the reply as ``response.incomplete``.
    incomplete: str | None = None
    chunks: int = 3


@dataclass
class Failure:
    status: int
    message: str
    type: str = "invalid_request_error"
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def reply(*items: Item, **options: Any) -> Reply:
    return Reply(list(items), **options)


def rate_limited(retry_after: float = 1) -> Failure:
    return Failure(
        429,
        "Rate limit reached for gpt-5-codex on tokens per min (TPM): Limit 30000, Used 29000. "
        "Please try again in 1.2s.",
        "tokens",
        "rate_limit_exceeded",
        {"retry-after": f"{retry_after:g}"},
    )


class ResponsesServer(ScriptedServer):
    thread_name = "pitui-test-openai-responses"

    def __init__(self, api_key: str | None = API_KEY) -> None:
        super().__init__()
        self.api_key = api_key
        self._key = os.urandom(32)
        self._ids = itertools.count(1)
        #: What each produced item was paired with: a reasoning item's id -> the id of the item
        #: that followed it (None: it was the last); any other item's id -> the reasoning item
        #: it followed, if any.
        self.following: dict[str, str | None] = {}
        self.reasoning_of: dict[str, str] = {}
        #: The output items of each response, in order.
        self.outputs: list[list[dict[str, Any]]] = []

    @property
    def api_base(self) -> str:
        return f"{self.url}/v1"

    def on_reset(self) -> None:
        self._ids = itertools.count(1)
        self.following.clear()
        self.reasoning_of.clear()
        self.outputs.clear()

    def produced(self, output: list[dict[str, Any]]) -> None:
        """Remember how a response's output items were paired (by id)."""
        reasoning: str | None = None
        with self._lock:
            self.outputs.append(output)
            for position, item in enumerate(output):
                item_id = str(item["id"])
                if item["type"] == "reasoning":
                    after = output[position + 1] if position + 1 < len(output) else None
                    self.following[item_id] = str(after["id"]) if after else None
                    reasoning = item_id
                elif reasoning is not None:
                    self.reasoning_of[item_id] = reasoning

    # -- encrypted reasoning ---------------------------------------------------------------------

    def encrypt(self, item_id: str, summary: str) -> str:
        payload = json.dumps({"id": item_id, "summary": summary}).encode()
        mac = hmac.new(self._key, payload, hashlib.sha256).digest()
        return "gAAAAA" + base64.urlsafe_b64encode(mac + payload).decode()

    def decrypt(self, content: str) -> dict[str, Any] | None:
        if not content.startswith("gAAAAA"):
            return None
        try:
            raw = base64.urlsafe_b64decode(content[6:])
        except (ValueError, TypeError):
            return None
        mac, payload = raw[:32], raw[32:]
        if not hmac.compare_digest(mac, hmac.new(self._key, payload, hashlib.sha256).digest()):
            return None
        try:
            value = json.loads(payload)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

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
        if method != "POST" or not path.endswith("/responses"):
            handler.send_json(404, _error(f"Invalid URL ({method} {path})", code="not_found"))
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
        if problem is None:
            step = self.next_step(request)
            if step is None:
                problem = Failure(
                    500,
                    f"pitui test server: no scripted reply for #{request.index}",
                    "server_error",
                )
            elif isinstance(step, Failure):
                problem = step
        if problem is not None:
            handler.send_json(
                problem.status, _error(problem.message, problem.type, problem.code), problem.headers
            )
            request.completed = True
            return
        self._stream(handler, request, step)

    def check(self, request: RecordedRequest) -> Failure | None:
        auth = request.header("authorization") or ""
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            shown = auth.removeprefix("Bearer ")[:8]
            return Failure(
                401,
                f"Incorrect API key provided: {shown}****. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                code="invalid_api_key",
            )
        body = request.body
        if not isinstance(body, dict) or "model" not in body:
            return Failure(
                400, "Missing required parameter: 'model'.", code="missing_required_parameter"
            )
        items = body.get("input")
        if isinstance(items, str):
            return None
        if not isinstance(items, list):
            return Failure(
                400, "Missing required parameter: 'input'.", code="missing_required_parameter"
            )
        store = body.get("store", True) is not False
        calls: list[str] = []
        outputs: set[str] = set()
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "reasoning":
                content = item.get("encrypted_content")
                if not content:
                    if not store:
                        return Failure(
                            404,
                            f"Item with id '{item.get('id')}' not found. Items are not persisted "
                            "when `store` is set to false. Try again with `store` set to true, "
                            "or remove this item from your input.",
                        )
                elif self.decrypt(str(content)) is None:
                    return Failure(
                        400,
                        f"The encrypted content for item input[{index}] could not be verified. "
                        "Reason: Encrypted content could not be decrypted or parsed.",
                        code="invalid_encrypted_content",
                    )
            elif kind == "function_call":
                calls.append(str(item.get("call_id")))
            elif kind == "function_call_output":
                call_id = str(item.get("call_id"))
                if call_id not in calls:
                    return Failure(
                        400, f"No tool call found for function call output with call_id {call_id}."
                    )
                outputs.add(call_id)
        for call_id in calls:
            if call_id not in outputs:
                return Failure(400, f"No tool output found for function call {call_id}.")
        sent_reasoning: set[str] = set()
        for index, item in enumerate(items):
            paired = self.pairing(items, index, sent_reasoning) if isinstance(item, dict) else None
            if paired is not None:
                return paired
        return None

    def pairing(self, items: list[Any], index: int, sent: set[str]) -> Failure | None:
        """The real API's pairing of input items by id (see the module's docstring)."""
        item = items[index]
        item_id = item.get("id")
        if not isinstance(item_id, str):
            return None
        kind = item.get("type") or "message"
        with self._lock:
            follower = self.following.get(item_id)
            reasoning = self.reasoning_of.get(item_id)
        if kind == "reasoning":
            sent.add(item_id)
            after = items[index + 1] if index + 1 < len(items) else None
            if follower is not None and _id_of(after) != follower:
                return Failure(
                    400,
                    f"Item '{item_id}' of type 'reasoning' was provided without its required "
                    "following item.",
                )
        elif reasoning is not None and reasoning not in sent:
            return Failure(
                400,
                f"Item '{item_id}' of type '{kind}' was provided without its required "
                f"'reasoning' item: '{reasoning}'.",
            )
        return None

    # -- the stream ------------------------------------------------------------------------------

    def _stream(self, handler: ProviderHandler, request: RecordedRequest, step: Reply) -> None:
        body = request.body
        include = body.get("include") or []
        encrypted = "reasoning.encrypted_content" in include
        with self._lock:
            number = next(self._ids)
        response_id = f"resp_test{number:04d}"
        sequence = itertools.count()
        events: list[bytes] = []
        base = {
            "id": response_id,
            "object": "response",
            "created_at": int(time.time()),
            "model": body.get("model"),
            "output": [],
            "parallel_tool_calls": True,
            "reasoning": body.get("reasoning") or {},
            "store": body.get("store", True),
            "tools": body.get("tools") or [],
            "usage": None,
        }

        def event(kind: str, **fields: Any) -> None:
            events.append(sse(kind, {"type": kind, "sequence_number": next(sequence), **fields}))

        event("response.created", response={**base, "status": "in_progress"})
        event("response.in_progress", response={**base, "status": "in_progress"})
        output: list[dict[str, Any]] = []
        produced = ""
        reasoning_tokens = 0
        for index, item in enumerate(step.items):
            if isinstance(item, Reasoning):
                item_id = f"rs_test{number:04d}{index}"
                event(
                    "response.output_item.added",
                    output_index=index,
                    item={"id": item_id, "type": "reasoning", "summary": []},
                )
                part = {"item_id": item_id, "output_index": index, "summary_index": 0}
                event(
                    "response.reasoning_summary_part.added",
                    **part,
                    part={"type": "summary_text", "text": ""},
                )
                for piece in split_text(item.summary, step.chunks):
                    event("response.reasoning_summary_text.delta", **part, delta=piece)
                event("response.reasoning_summary_text.done", **part, text=item.summary)
                event(
                    "response.reasoning_summary_part.done",
                    **part,
                    part={"type": "summary_text", "text": item.summary},
                )
                done: dict[str, Any] = {
                    "id": item_id,
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": item.summary}],
                }
                if encrypted:
                    done["encrypted_content"] = self.encrypt(item_id, item.summary)
                event("response.output_item.done", output_index=index, item=done)
                output.append(done)
                reasoning_tokens += estimate_tokens(item.summary) * 3
            elif isinstance(item, Message):
                item_id = f"msg_test{number:04d}{index}"
                event(
                    "response.output_item.added",
                    output_index=index,
                    item={
                        "id": item_id,
                        "type": "message",
                        "status": "in_progress",
                        "content": [],
                        "role": "assistant",
                    },
                )
                part = {"item_id": item_id, "output_index": index, "content_index": 0}
                event(
                    "response.content_part.added",
                    **part,
                    part={"type": "output_text", "annotations": [], "text": ""},
                )
                for piece in split_text(item.text, step.chunks):
                    event("response.output_text.delta", **part, delta=piece, logprobs=[])
                event("response.output_text.done", **part, text=item.text, logprobs=[])
                text_part = {"type": "output_text", "annotations": [], "text": item.text}
                event("response.content_part.done", **part, part=text_part)
                done = {
                    "id": item_id,
                    "type": "message",
                    "status": "completed",
                    "content": [text_part],
                    "role": "assistant",
                }
                event("response.output_item.done", output_index=index, item=done)
                output.append(done)
                produced += item.text
            else:
                item_id = f"fc_test{number:04d}{index}"
                call_id = f"call_test{number:04d}{index}"
                arguments = json.dumps(item.arguments, separators=(",", ":"))
                started = {
                    "id": item_id,
                    "type": "function_call",
                    "status": "in_progress",
                    "arguments": "",
                    "call_id": call_id,
                    "name": item.name,
                }
                event("response.output_item.added", output_index=index, item=started)
                for piece in split_text(arguments, step.chunks):
                    event(
                        "response.function_call_arguments.delta",
                        item_id=item_id,
                        output_index=index,
                        delta=piece,
                    )
                event(
                    "response.function_call_arguments.done",
                    item_id=item_id,
                    output_index=index,
                    arguments=arguments,
                )
                done = {**started, "status": "completed", "arguments": arguments}
                event("response.output_item.done", output_index=index, item=done)
                output.append(done)
                produced += item.name + arguments
        input_tokens = estimate_tokens(body.get("input")) + estimate_tokens(
            body.get("instructions") or ""
        )
        output_tokens = estimate_tokens(produced) + reasoning_tokens
        usage = {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": input_tokens + output_tokens,
        }
        self.produced(output)
        final = {**base, "output": output, "usage": usage}
        if step.incomplete:
            event(
                "response.incomplete",
                response={
                    **final,
                    "status": "incomplete",
                    "incomplete_details": {"reason": step.incomplete},
                },
            )
        else:
            event("response.completed", response={**final, "status": "completed"})
        handler.start_stream("text/event-stream; charset=utf-8", {"x-request-id": f"req_{number}"})
        for chunk in events:
            handler.write_chunk(chunk)
            request.events_sent += 1
        handler.end_stream()
        request.completed = True


def _id_of(item: Any) -> str | None:
    value = item.get("id") if isinstance(item, dict) else None
    return value if isinstance(value, str) else None


def _error(
    message: str, kind: str = "invalid_request_error", code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
