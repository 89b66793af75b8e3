"""The native APIs' HTTP: every failure is one sentence in the provider's own words or about
the connection, never a library's repr; refusals keep their status and wait (real sockets on
127.0.0.1, no network)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator

import pytest

from pitui.llm.errors import ProviderError, classify
from pitui.llm.transport import HttpRequest, open_stream, sse_events


def answering(response: bytes, hold: float = 0.0) -> Iterator[int]:
    """A server on a free port that answers every connection with ``response`` (then keeps
    the connection open ``hold`` seconds)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(response)
                threading.Event().wait(hold)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


@pytest.fixture
def plain_http_port() -> Iterator[int]:
    yield from answering(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def failure(url: str, idle: float = 5.0) -> ProviderError:
    async def run() -> None:
        async with open_stream(HttpRequest(url, {}, {}), idle_timeout=idle) as lines:
            async for _ in lines:
                pass

    with pytest.raises(ProviderError) as caught:
        asyncio.run(run())
    return caught.value


def test_tls_to_a_plain_port_is_one_sentence_without_library_details(plain_http_port: int) -> None:
    error = failure(f"https://127.0.0.1:{plain_http_port}/v1/messages")
    assert error.message == (
        f"Connection error: the TLS handshake with 127.0.0.1:{plain_http_port} failed "
        "(wrong version number)."
    )
    assert classify(error).kind == "other"  # retrying cannot fix it


def test_a_refused_connection_says_so_and_is_retried() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error = failure(f"http://127.0.0.1:{port}/v1/chat/completions")
    assert error.message == f"Connection error: 127.0.0.1:{port}: Connection refused."
    assert classify(error).kind == "retryable"


def test_a_bad_address_is_named() -> None:
    error = failure("ftp://models.example/v1")
    assert error.message == "The API address 'ftp://models.example/v1' is not a valid http(s) URL."


def test_a_refusal_keeps_the_providers_words_status_and_wait() -> None:
    body = json.dumps({"error": {"message": "Rate limit reached for gpt-4.1.", "code": "rl"}})
    response = (
        f"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
        f"Retry-After: 7\r\nContent-Length: {len(body)}\r\n\r\n{body}"
    ).encode()
    for port in answering(response):
        error = failure(f"http://127.0.0.1:{port}/v1/chat/completions")
    assert (error.message, error.status, error.retry_after) == (
        "Rate limit reached for gpt-4.1.",
        429,
        7.0,
    )
    info = classify(error)
    assert (info.kind, info.retry_after) == ("retryable", 7.0)


def test_an_html_error_page_becomes_its_status_line() -> None:
    page = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    response = (
        f"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n"
        f"Content-Length: {len(page)}\r\n\r\n{page}"
    ).encode()
    for port in answering(response):
        error = failure(f"http://127.0.0.1:{port}/v1/messages")
    assert (error.message, error.status) == ("502 Bad Gateway", 502)


def test_a_silent_stream_is_stalled() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {}\n\n"
    for port in answering(head, hold=3.0):  # then nothing, and the connection stays open
        error = failure(f"http://127.0.0.1:{port}/v1/messages", idle=0.2)
    assert error.message == (
        f"The stream stalled: 127.0.0.1:{port} sent nothing for 0.2 s (timed out)."
    )
    assert classify(error).kind == "retryable"


async def _events(raw: bytes) -> list[tuple[str | None, str]]:
    async def lines():  # type: ignore[no-untyped-def]
        for line in raw.splitlines(keepends=True):
            yield line

    return [(e.name, e.data) async for e in sse_events(lines())]


def test_server_sent_events_are_parsed_like_a_browser() -> None:
    raw = (
        b": a comment\n"
        b'event: message_start\ndata: {"a": 1}\n\n'
        b"data: line one\ndata: line two\r\n\r\n"
        b"data:no-space\n\n"
        b"id: 7\nretry: 10\ndata: [DONE]\n"
    )
    assert asyncio.run(_events(raw)) == [
        ("message_start", '{"a": 1}'),
        (None, "line one\nline two"),
        (None, "no-space"),
        (None, "[DONE]"),
    ]


def test_prepare_makes_the_one_client_and_warms_up_off_any_loop() -> None:
    import threading as _threading

    from pitui.llm import transport

    errors: list[BaseException] = []

    def run() -> None:
        try:
            transport.prepare()
            transport.prepare()  # twice is harmless
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = _threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert not errors and not thread.is_alive()
    assert transport.client() is transport.client()  # one client for the process
