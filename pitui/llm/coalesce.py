"""Adjacent text deltas of a streamed reply merged before they are parsed.

Parsing a server-sent event costs pitui's native APIs ~7 us (and litellm with the OpenAI SDK
under it about a millisecond): a reply of 20,000 one-token events read at full speed costs
0.15 s of CPU (20 s through litellm) on the provider thread, which shares the interpreter
with the screen. When events arrive faster than they are read, they wait in the socket's
buffer; here they are taken together and adjacent plain text deltas become one event with the
joined text, so one event is parsed where there were many (20,000 in ~25 ms, then ~60 left).
Nothing else changes: only events whose every field is known and equal apart from the text are
merged (OpenAI-style chat chunks with one choice and no finish reason, usage or logprobs;
Anthropic ``content_block_delta`` events of one block), everything else passes as it came, in
order.

Events that trickle in (a reply at reading speed) are held for at most ``WINDOW`` seconds so a
few of them can be taken together; the screen shows text once a frame anyway.

:func:`coalesce_stream` has a response's body coalesced when it is a ``text/event-stream``
without a content encoding (the native APIs' every stream); :class:`CoalescingTransport` does
it for every response of an httpx transport (litellm's client); other responses are untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec

WINDOW = 0.016
"""Seconds a trickling stream is held to let more events arrive: a third of the chat's frame
(50 ms), so at 500 tokens/s litellm parses about 60 events a second instead of 500."""

QUEUED = 1024
"""Network reads held for the reader at most (the pump waits beyond that)."""
_decode = msgspec.json.Decoder().decode
_EVENT_END = re.compile(rb"\r?\n\r?\n")  # the blank line that ends an event
_OPENAI_KEYS = frozenset(
    {"id", "object", "created", "model", "system_fingerprint", "service_tier", "obfuscation"}
)
_OPENAI_CHUNK_KEYS = _OPENAI_KEYS | {"choices", "usage"}
_OPENAI_CHOICE_KEYS = frozenset({"index", "delta", "logprobs", "finish_reason"})
_OPENAI_TEXT = ("content", "reasoning_content", "reasoning")
_ANTHROPIC_TEXT = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "input_json_delta": "partial_json",
}


# ---------------------------------------------------------------------------- events


class Event:
    """One server-sent event: its ``event:`` name (or None) and its JSON ``data`` (parsed), or
    ``raw`` bytes for anything else (kept as it came)."""

    __slots__ = ("data", "name", "raw")

    def __init__(self, raw: bytes, name: str | None = None, data: Any = None) -> None:
        self.raw = raw
        self.name = name
        self.data = data

    @classmethod
    def parse(cls, raw: bytes) -> Event:
        if raw.startswith(b"data: {") and raw.endswith(b"}\n\n") and raw.count(b"\n") == 2:
            return cls(raw, None, decode_json(raw[6:-2]))  # the common case: one line of JSON
        name: str | None = None
        data: list[bytes] = []
        for line in raw.splitlines():
            if line.startswith(b"data:"):
                data.append(line[5:].lstrip(b" "))
            elif line.startswith(b"event:"):
                name = line[6:].strip().decode("utf-8", "replace")
            elif line and not line.startswith(b":"):
                return cls(raw)  # id:, retry: or anything unknown: kept as it is
        if len(data) != 1 or not data[0].startswith(b"{"):
            return cls(raw)
        return cls(raw, name, decode_json(data[0]))

    def encode(self) -> bytes:
        head = f"event: {self.name}\n" if self.name is not None else ""
        text = json.dumps(self.data, ensure_ascii=False, separators=(",", ":"))
        try:
            return f"{head}data: {text}\n\n".encode()
        except UnicodeEncodeError:  # half of a surrogate pair (escaped, as it came)
            text = json.dumps(self.data, separators=(",", ":"))
            return f"{head}data: {text}\n\n".encode()


def decode_json(data: str | bytes) -> Any:
    """The JSON value of ``data`` (None when it is not JSON). msgspec decodes an event in a
    fraction of what json takes; json reads what msgspec refuses (NaN, huge numbers)."""
    try:
        return _decode(data)
    except (msgspec.DecodeError, ValueError):
        pass
    try:
        return json.loads(data)
    except ValueError:
        return None


def _openai_text(data: Any) -> tuple[str, str] | None:
    """(field, text) of a plain OpenAI-style chat chunk holding only text, else None."""
    if not isinstance(data, dict) or not data.keys() <= _OPENAI_CHUNK_KEYS:
        return None
    choices = data.get("choices")
    if data.get("usage") is not None or not isinstance(choices, list) or len(choices) != 1:
        return None
    choice = choices[0]
    if not isinstance(choice, dict) or not choice.keys() <= _OPENAI_CHOICE_KEYS:
        return None
    if choice.get("finish_reason") is not None or choice.get("logprobs") is not None:
        return None
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        return None
    found: tuple[str, str] | None = None
    for key, value in delta.items():
        if value is None:
            continue
        if key in _OPENAI_TEXT:  # exactly one text, a string
            if found is not None or not isinstance(value, str):
                return None
            found = (key, value)
        elif key != "role":
            return None
    return found


def _mergeable(event: Event) -> tuple[tuple[Any, ...], str, str, str | None] | None:
    """(what must be equal for events to merge, the text's field, the text, the role) of a
    plain text delta, or None for any other event."""
    data = event.data
    if data is None:
        return None
    if event.name is None:
        found = _openai_text(data)
        if found is None:
            return None
        field, text = found
        choice = data["choices"][0]
        return (
            (None, field, data.get("id"), choice.get("index")),
            field,
            text,
            choice["delta"].get("role"),
        )
    if event.name == "content_block_delta":
        if not isinstance(data, dict) or data.keys() != {"type", "index", "delta"}:
            return None
        delta = data["delta"]
        if data["type"] != "content_block_delta" or not isinstance(delta, dict):
            return None
        name = _ANTHROPIC_TEXT.get(str(delta.get("type")))
        if name is None or delta.keys() != {"type", name} or not isinstance(delta[name], str):
            return None
        return (event.name, data["index"], delta["type"]), name, delta[name], None
    return None


_encode = msgspec.json.Encoder().encode
# The body of a JSON string (between its quotes): what can stand between two event templates.
_STRING_BODY = re.compile(rb'(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*')
_field_patterns: dict[str, re.Pattern[bytes]] = {}


def _body(text: str) -> bytes:
    """``text`` as the body of a JSON string."""
    try:
        return _encode(text)[1:-1]
    except UnicodeEncodeError:  # half of a surrogate pair: escaped (joined, it may pair up)
        return json.dumps(text).encode()[1:-1]


def _template(raw: bytes, field: str, text: str) -> tuple[bytes, bytes] | None:
    """(the bytes before, the bytes after) the JSON string of ``field`` in the event ``raw``
    whose text it is; None unless that string is found exactly once and reads as ``text``.

    Any event that is those two around the body of a JSON string is the same event with
    another text: the string's body cannot end it or change how the rest reads."""
    pattern = _field_patterns.get(field)
    if pattern is None:
        pattern = _field_patterns[field] = re.compile(
            b'"' + re.escape(field.encode()) + rb'"\s*:\s*"'
        )
    found = list(pattern.finditer(raw))
    if len(found) != 1:
        return None
    start = found[0].end()
    body = _STRING_BODY.match(raw, start)
    if body is None or raw[body.end() : body.end() + 1] != b'"':
        return None
    try:
        if _decode(b'"' + body.group() + b'"') != text:
            return None
    except (msgspec.DecodeError, ValueError):
        return None
    return raw[:start], raw[body.end() :]


class _Run:
    """Adjacent events that merge: the first (whose fields the merged event keeps) and the
    texts of all as JSON string bodies, joined once at the end (a burst of thousands is one
    run).

    An event with the bytes of the last one parsed around another string body (a stream's
    events differ only in their text) is taken without parsing it (:meth:`take_raw`): a
    burst of 40,000 events cost ~5 us an event to parse and ~1 us so."""

    __slots__ = ("field", "first", "key", "match", "out", "role", "texts")

    def __init__(self, first: Event, parts: tuple[tuple[Any, ...], str, str, str | None]):
        self.first = first
        self.key, self.field, text, self.role = parts
        self.texts = [_body(text)]
        self.out = _template(first.raw, self.field, text) if first.raw else None
        self.match = self.out

    def take(self, parts: tuple[tuple[Any, ...], str, str, str | None] | None) -> bool:
        if parts is None or parts[0] != self.key:
            return False
        role = parts[3]
        if role is not None and role != self.role:
            return False
        self.texts.append(_body(parts[2]))
        return True

    def take_raw(self, raw: bytes) -> bool:
        """Take ``raw`` if it is the last parsed event with another text (else parse it)."""
        match = self.match
        if match is None:
            return False
        head, tail = match
        if len(raw) < len(head) + len(tail) or not raw.startswith(head) or not raw.endswith(tail):
            return False
        body = raw[len(head) : len(raw) - len(tail)]
        if _STRING_BODY.fullmatch(body) is None:
            return False
        self.texts.append(body)
        return True

    def taken(self, event: Event, parts: tuple[tuple[Any, ...], str, str, str | None]) -> None:
        """``event`` was taken after parsing: the next events are compared with it."""
        self.match = _template(event.raw, parts[1], parts[2])

    def _text(self) -> str:
        text = decode_json(b'"' + b"".join(self.texts) + b'"')
        assert isinstance(text, str)
        return text

    def event(self) -> Event:
        if len(self.texts) == 1:
            return self.first
        text = self._text()
        data, field = self.first.data, self.field
        if self.first.name is None:
            choice = dict(data["choices"][0])
            choice["delta"] = {**choice["delta"], field: text}
            return Event(b"", None, {**data, "choices": [choice]})
        return Event(b"", self.first.name, {**data, "delta": {**data["delta"], field: text}})

    def encode(self) -> bytes:
        if len(self.texts) == 1:
            return self.first.raw
        if self.out is not None:
            head, tail = self.out
            return b"".join((head, *self.texts, tail))
        return self.event().encode()


def merge(first: Event, second: Event) -> Event | None:
    """One event for two adjacent ones, or None when both must stay as they are."""
    parts = _mergeable(first)
    if parts is None:
        return None
    run = _Run(first, parts)
    return run.event() if run.take(_mergeable(second)) else None


def coalesce(raw_events: list[bytes]) -> bytes:
    """The bytes of ``raw_events`` (each one whole event with its blank line) with adjacent
    mergeable events merged."""
    out: list[bytes] = []
    run: _Run | None = None
    for raw in raw_events:
        if run is not None and run.take_raw(raw):
            continue
        event = Event.parse(raw)
        parts = _mergeable(event)
        if run is not None:
            if run.take(parts):
                assert parts is not None
                run.taken(event, parts)
                continue
            out.append(run.encode())
            run = None
        if parts is None:
            out.append(raw)
        else:
            run = _Run(event, parts)
    if run is not None:
        out.append(run.encode())
    return b"".join(out)


def split_events(buffer: bytes) -> tuple[list[bytes], bytes]:
    """(whole events, the incomplete rest) of ``buffer`` (one pass over it)."""
    if b"\r" not in buffer:  # the common case, split in C
        *whole, rest = buffer.split(b"\n\n")
        return [event + b"\n\n" for event in whole], rest
    events: list[bytes] = []
    start = 0
    for end in _EVENT_END.finditer(buffer):
        events.append(buffer[start : end.end()])
        start = end.end()
    return events, buffer[start:]


# ---------------------------------------------------------------------------- transport


class _CoalescingStream(httpx.AsyncByteStream):
    """A response body read by a pump task, handed to the reader with events coalesced.

    Iterating it again (the OpenAI SDK drains a stream after ``[DONE]``) goes on from where
    the last reader stopped; once the body has ended, it yields nothing."""

    def __init__(self, inner: httpx.AsyncByteStream, window: float) -> None:
        self._inner = inner
        self._window = window
        self._pump: asyncio.Task[None] | None = None
        # Bounded: a reader that stops reading stops the pump too (no reading ahead forever).
        self._queue: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue(maxsize=QUEUED)
        self._buffer = b""
        self._ended = False

    async def _run_pump(self) -> None:
        queue = self._queue
        try:
            async for chunk in self._inner:
                await queue.put(chunk)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # handed to the reader, raised there
            await queue.put(exc)
            return
        await queue.put(None)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._ended:
            return
        if self._pump is None:
            self._pump = asyncio.get_running_loop().create_task(self._run_pump())
        # A reader that leaves early (GeneratorExit here) may come back for the rest; the pump
        # stops when the body ends, fails or is closed (:meth:`aclose`).
        async for chunk in self._read():
            yield chunk

    async def _read(self) -> AsyncIterator[bytes]:
        queue = self._queue
        while not self._ended:
            items = [await queue.get()]
            if queue.empty() and self._window > 0 and items[0] is not None:
                await asyncio.sleep(self._window)  # a trickle: let a few more arrive
            while not queue.empty():
                items.append(queue.get_nowait())
            parts = [self._buffer]
            failure: BaseException | None = None
            for item in items:
                if item is None:
                    self._ended = True
                elif isinstance(item, BaseException):
                    self._ended, failure = True, item
                    break
                else:
                    parts.append(item)
            self._buffer = b"".join(parts)
            if failure is not None:
                rest, self._buffer = self._buffer, b""
                if rest:
                    yield rest
                raise failure
            events, self._buffer = split_events(self._buffer)
            if events:
                yield coalesce(events) if len(events) > 1 else events[0]
        rest, self._buffer = self._buffer, b""
        if rest:
            yield rest

    async def _stop_pump(self) -> None:
        pump, self._pump = self._pump, None
        if pump is not None and not pump.done():
            pump.cancel()
            with contextlib.suppress(BaseException):
                await pump

    async def aclose(self) -> None:
        await self._stop_pump()
        await self._inner.aclose()


def coalesce_stream(response: httpx.Response, window: float = WINDOW) -> None:
    """Have ``response``'s body coalesced when it is an event stream without a content
    encoding (before it is read; pitui's native APIs read every stream so)."""
    kind = response.headers.get("content-type", "")
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    stream = response.stream
    if (
        "text/event-stream" in kind
        and encoding in ("", "identity")
        and isinstance(stream, httpx.AsyncByteStream)
        and not isinstance(stream, _CoalescingStream)
    ):
        response.stream = _CoalescingStream(stream, window)


class CoalescingTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose event streams have adjacent text deltas merged (litellm's
    client: pitui cannot reach its responses before litellm reads them)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, window: float = WINDOW) -> None:
        self._inner = inner
        self._window = window

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        coalesce_stream(response, self._window)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


_anthropic: Any = None


def anthropic_handler() -> Any:
    """litellm's HTTP handler for Anthropic's Messages API, over a coalescing client (passed
    as ``client`` to the call; made once, on the provider loop that makes every call)."""
    global _anthropic
    if _anthropic is None:
        from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

        handler = AsyncHTTPHandler()
        handler.client = coalescing_client()
        _anthropic = handler
    return _anthropic


def coalescing_client() -> httpx.AsyncClient:
    """The HTTP client litellm's OpenAI-compatible calls use (``litellm.aclient_session``):
    litellm's own transport, SSL settings and environment proxies, as litellm builds its
    default client; event streams coalesced."""
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler, get_ssl_configuration

    ssl_config = get_ssl_configuration()
    # litellm's own transport (aiohttp, which parses HTTP in C; httpx's h11 when litellm is
    # told not to use it): h11 reads a fast stream several times slower (benchmarks/README.md).
    inner = AsyncHTTPHandler.create_async_transport(
        ssl_context=ssl_config if isinstance(ssl_config, ssl.SSLContext) else None,
        ssl_verify=ssl_config if isinstance(ssl_config, bool) else None,
    )
    if inner is None:
        inner = httpx.AsyncHTTPTransport(verify=ssl_config)
    mounts = AsyncHTTPHandler.create_httpx_proxy_mounts(inner, verify=ssl_config, cert=None)
    return httpx.AsyncClient(
        verify=ssl_config,
        transport=CoalescingTransport(inner),
        mounts={
            pattern: CoalescingTransport(transport) if transport is not None else None
            for pattern, transport in (mounts or {}).items()
        },
        follow_redirects=True,
    )
