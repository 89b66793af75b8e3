"""HTTP for the native APIs: one httpx client (HTTP/1.1 keep-alive) on the provider loop, a
streamed POST read as server-sent events, and every failure as a :class:`ProviderError` whose
message is the provider's own words or one plain sentence (never a library's hint or a repr).

Timeouts: connecting gives up after ``connect_timeout``; once connected, a stream that sends
nothing at all for ``idle_timeout`` seconds (keep-alive pings count as something) is a
retryable "the stream stalled". There is no limit on a reply's total length.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import ssl
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

from pitui.llm.call import CONNECT_TIMEOUT, IDLE_TIMEOUT
from pitui.llm.coalesce import coalesce_stream, decode_json
from pitui.llm.errors import ProviderError, body_message, parse_retry_after
from pitui.text import one_line

ERROR_BODY_LIMIT = 256 * 1024
"""Bytes of an error response read for its message."""
KEEPALIVE_SECONDS = 30.0

_client: httpx.AsyncClient | None = None
_tls_context: ssl.SSLContext | None = None
_client_lock = threading.RLock()


@dataclass(frozen=True)
class HttpRequest:
    url: str
    headers: dict[str, str]
    body: dict[str, Any]


def client() -> httpx.AsyncClient:
    """The shared client (use it on the provider loop only: its connections belong there).

    Making one takes ~0.1 s (its TLS context loads the CA bundle): :func:`prepare` does it in
    the preload thread, ahead of the first request. It binds to no event loop until used."""
    global _client
    with _client_lock:
        if _client is None or _client.is_closed:
            _client = _new_client()
        return _client


def prepare() -> None:
    """Make the shared client now and warm the request path up (any thread but an event
    loop's): one streamed request to a socket of this process on 127.0.0.1, so what httpx and
    httpcore import and build on their first request (~50 ms) is not on the first real one."""
    client()
    with contextlib.suppress(Exception):  # an optimization: the real request reports errors
        _warm_up()


def _tls() -> ssl.SSLContext:
    global _tls_context
    with _client_lock:
        if _tls_context is None:
            _tls_context = httpx.create_ssl_context()
        return _tls_context


def _new_client() -> httpx.AsyncClient:
    """httpx's own transport (the environment's proxies honoured), HTTP/1.1 keep-alive."""
    limits = httpx.Limits(
        max_connections=32, max_keepalive_connections=8, keepalive_expiry=KEEPALIVE_SECONDS
    )
    return httpx.AsyncClient(
        http1=True, http2=False, follow_redirects=False, limits=limits, verify=_tls()
    )


_WARM_ANSWER = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 14\r\n"
    b"connection: close\r\n\r\ndata: [DONE]\n\n"
)


def _warm_up() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(5)
        port = server.getsockname()[1]

        def answer() -> None:
            with contextlib.suppress(OSError):
                conn, _ = server.accept()
                with conn:
                    conn.settimeout(5)
                    conn.recv(65536)
                    conn.sendall(_WARM_ANSWER)

        threading.Thread(target=answer, name="pitui-http-warm-up", daemon=True).start()

        async def call() -> None:
            request = HttpRequest(f"http://127.0.0.1:{port}/warm-up", {}, {})
            async with (
                httpx.AsyncClient(verify=_tls()) as warm,  # bound to this loop only
                warm.stream("POST", request.url, content=encode_body({})) as reply,
            ):
                async for line in _lines(reply):
                    decode_json(line)

        asyncio.run(call())


def encode_body(body: dict[str, Any]) -> bytes:
    return msgspec.json.encode(body)


def _host(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc or url


_ERRNO = re.compile(r"^\[Errno -?\d+\]\s*")


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _reason(exc: BaseException) -> str:
    """What went wrong, in the operating system's or OpenSSL's words (``Connection refused``,
    ``certificate verify failed``), without ``[Errno N]``, source locations or reprs."""
    for cause in _causes(exc):
        if isinstance(cause, OSError) and not isinstance(cause, ssl.SSLError):
            if isinstance(cause.errno, int) and cause.errno > 0:
                return os.strerror(cause.errno)
            if cause.strerror:
                return cause.strerror
    text = next((str(c) for c in _causes(exc) if str(c)), type(exc).__name__)
    text = _ERRNO.sub("", text.splitlines()[0] if text else "")
    text = re.sub(r"<[^<>]*object at 0x[0-9a-f]+>", "", text)
    text = re.sub(r"\s*\(_ssl\.c:\d+\)", "", text)
    text = re.sub(r"^\[SSL: [A-Z0-9_]+\]\s*", "", text)
    text = re.sub(r"\s+", " ", text).strip(" :,")
    return text or "no answer"


def connection_error(exc: httpx.HTTPError, url: str, idle_timeout: float) -> ProviderError:
    """The sentence for an httpx failure (connecting, reading, a cut stream)."""
    host = _host(url)
    if isinstance(exc, httpx.ConnectTimeout):
        return ProviderError(
            f"Connection error: {host} did not answer (timed out).", retryable=True
        )
    if isinstance(exc, httpx.ReadTimeout | httpx.WriteTimeout | httpx.PoolTimeout):
        return ProviderError(
            f"The stream stalled: {host} sent nothing for {idle_timeout:g} s (timed out).",
            retryable=True,
        )
    if isinstance(exc, httpx.ConnectError):
        reason = _reason(exc)
        if any(isinstance(cause, ssl.SSLError) for cause in _causes(exc)):
            return ProviderError(
                f"Connection error: the TLS handshake with {host} failed ({reason}).",
                retryable=False,
            )
        return ProviderError(f"Connection error: {host}: {reason}.", retryable=True)
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return ProviderError(
            f"Connection error: {host} closed the connection before the reply was complete "
            f"({_reason(exc)}).",
            retryable=True,
        )
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return ProviderError(
            f"The API address {url!r} is not a valid http(s) URL.", retryable=False
        )
    return ProviderError(f"Connection error: {host}: {_reason(exc)}.", retryable=True)


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (for reading events)."""
    return value if isinstance(value, dict) else {}


def status_error(status: int, reason: str, raw: bytes, headers: httpx.Headers) -> ProviderError:
    """A refused request: the provider's words from its body, else the HTTP reason."""
    body = decode_json(raw) if raw else None
    spoken = body_message(body)
    if spoken is None:
        text = raw.decode("utf-8", "replace").strip()
        spoken = text if text and not text.startswith("<") else f"{status} {reason}".strip()
    error_type = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        kind = body["error"].get("type") or body["error"].get("status")
        error_type = kind if isinstance(kind, str) else None
    return ProviderError(
        one_line(spoken),
        status,
        retry_after=parse_retry_after(headers.get("retry-after")),
        body=body,
        error_type=error_type,
    )


@dataclass(frozen=True)
class SseEvent:
    name: str | None
    data: str


async def sse_events(lines: AsyncIterator[bytes]) -> AsyncIterator[SseEvent]:
    """Server-sent events from a byte stream (``event:`` and ``data:`` lines, comments
    skipped, multi-line data joined)."""
    name: str | None = None
    data: list[str] = []
    async for raw in lines:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                yield SseEvent(name, "\n".join(data))
            name, data = None, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
    if data:
        yield SseEvent(name, "\n".join(data))


async def _lines(response: httpx.Response) -> AsyncIterator[bytes]:
    """The response body split into lines (``\\n``-terminated, the last one maybe not)."""
    pending = b""
    async for chunk in response.aiter_bytes():
        pending += chunk
        if b"\n" not in chunk:
            continue
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line + b"\n"
    if pending:
        yield pending


@contextlib.asynccontextmanager
async def open_stream(
    request: HttpRequest,
    *,
    idle_timeout: float = IDLE_TIMEOUT,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> AsyncIterator[AsyncIterator[bytes]]:
    """POST ``request`` and yield its body as lines; a refusal raises :class:`ProviderError`
    with the provider's words, a connection problem with a plain sentence."""
    timeout = httpx.Timeout(
        connect=connect_timeout or None,
        read=idle_timeout or None,
        write=idle_timeout or None,
        pool=connect_timeout or None,
    )
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    headers.update(request.headers)
    try:
        async with client().stream(
            "POST",
            request.url,
            content=encode_body(request.body),
            headers=headers,
            timeout=timeout,
        ) as response:
            if response.status_code >= 400:
                raw = b""
                with contextlib.suppress(httpx.HTTPError):
                    async for chunk in response.aiter_bytes():
                        raw += chunk
                        if len(raw) > ERROR_BODY_LIMIT:
                            break
                raise status_error(
                    response.status_code, response.reason_phrase, raw, response.headers
                )
            coalesce_stream(response)
            yield _guarded(_lines(response), request.url, idle_timeout)
    except httpx.HTTPError as exc:
        raise connection_error(exc, request.url, idle_timeout) from None


async def _guarded(
    lines: AsyncIterator[bytes], url: str, idle_timeout: float
) -> AsyncIterator[bytes]:
    """``lines`` with httpx's failures while reading turned into :class:`ProviderError`."""
    try:
        async for line in lines:
            yield line
    except httpx.HTTPError as exc:
        raise connection_error(exc, url, idle_timeout) from None


def stream_ended_early(host_url: str) -> ProviderError:
    """The body ended without the API's closing event: the reply is incomplete."""
    return ProviderError(
        f"Connection error: the stream from {_host(host_url)} ended before the reply was complete.",
        retryable=True,
    )
