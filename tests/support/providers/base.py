"""What every scripted provider server shares: a FIFO script of steps (one per request), the
recorded requests, and the HTTP plumbing (bodies, JSON replies, chunked event streams, cut
connections). The OpenAI-chat server (``support.llm_server``) and the per-provider servers in
this package build on it, so all of them behave the same way towards a test:

* ``server.script(step, ...)`` queues replies; an entry may be a callable
  ``(RecordedRequest) -> step`` evaluated when the request arrives;
* ``server.requests`` / ``server.last`` are what arrived (headers lower-cased, JSON body
  parsed, the raw bytes too); ``wait_for_requests(n)`` blocks until ``n`` arrived;
* a request with no scripted step is answered by ``no_script_reply`` (the provider's own error
  shape) and counted in ``server.unscripted``.

Servers listen on ``127.0.0.1`` only (a random free port) and never block a test for long: every
wait is bounded and ends as soon as the server stops.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from pitui.llm.local_server import BackgroundHTTPServer

SOCKET_TIMEOUT = 10.0
MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_DELAY = 30.0


@dataclass
class RecordedRequest:
    """One request a server received. ``headers`` keys are lower-cased."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    received_at: float = field(default_factory=time.monotonic)
    #: True once the whole response was written (for streams: after the last event).
    completed: bool = False
    #: True if writing failed because the client went away (e.g. an aborted stream).
    disconnected: bool = False
    #: Number of stream events written so far.
    events_sent: int = 0
    step: Any = None
    #: The query string, parsed (last value wins).
    query: dict[str, str] = field(default_factory=dict)

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.lower(), default)

    def json(self, key: str, default: Any = None) -> Any:
        return self.body.get(key, default) if isinstance(self.body, dict) else default


class Abort(Exception):
    """The client went away or the server is stopping: stop writing this response."""


class ProviderHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 handler with the helpers every provider needs; requests go to the owner."""

    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT
    server: Any

    def log_message(self, format: str, *args: Any) -> None:  # no access log on stderr
        pass

    @property
    def owner(self) -> Any:
        return self.server.owner

    # -- reading -----------------------------------------------------------------------------

    def read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            out = bytearray()
            while len(out) <= MAX_BODY_BYTES:
                size = int(self.rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline(1024)
                    break
                out += self.rfile.read(size)
                self.rfile.readline(1024)
            return bytes(out)
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            raise ValueError("request body too large")
        return self.rfile.read(length) if length else b""

    # -- writing -----------------------------------------------------------------------------

    def send_bytes(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self.send_bytes(status, json.dumps(payload).encode(), headers=headers)

    def start_stream(self, content_type: str, headers: dict[str, str] | None = None) -> None:
        """Response headers of a chunked stream (SSE or NDJSON)."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.close_connection = True

    def write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_stream(self) -> None:
        self.write_chunk(b"")

    def drop(self) -> None:
        """Close the connection abruptly (no terminating chunk)."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def wait(self, seconds: float) -> None:
        if seconds > 0 and self.owner._stopping.wait(min(seconds, MAX_DELAY)):
            raise Abort

    # -- verbs -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        split = urllib.parse.urlsplit(self.path)
        raw = self.read_body() if method == "POST" else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
        try:
            self.owner.dispatch(self, method, split.path.rstrip("/") or "/", query, body, raw)
        except Abort:
            self.drop()
        except OSError:
            self.drop()


ScriptEntry = Any  # a step object, or a callable (RecordedRequest) -> step


class ScriptedServer(BackgroundHTTPServer):
    """A provider server driven by a script; subclasses implement :meth:`dispatch`."""

    handler_class: type[BaseHTTPRequestHandler] = ProviderHandler
    poll_interval = 0.05
    request_class: type[RecordedRequest] = RecordedRequest

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self._host = host
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._script: deque[ScriptEntry] = deque()
        self._requests: list[RecordedRequest] = []
        self._unscripted: list[RecordedRequest] = []
        #: Tests fail on "no scripted reply" answers unless this is set to False.
        self.fail_on_unscripted = True

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash)."""
        return f"http://{self._host}:{self.port}"

    # -- script ------------------------------------------------------------------------------

    def is_step(self, entry: Any) -> bool:
        return callable(entry) or not isinstance(entry, Iterable)

    def script(self, *steps: Any) -> Any:
        """Queue replies, consumed one per model request in order."""
        with self._changed:
            for step in steps:
                if self.is_step(step):
                    self._script.append(step)
                else:
                    self._script.extend(step)
            self._changed.notify_all()
        return self

    def reset(self) -> None:
        """Clear the script and the recordings."""
        with self._changed:
            self.fail_on_unscripted = True
            self._script.clear()
            self._requests.clear()
            self._unscripted.clear()
            self.on_reset()
            self._changed.notify_all()

    def on_reset(self) -> None:
        """Subclasses clear their own state here (called with the lock held)."""

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[Any]:
        with self._lock:
            return list(self._requests)

    @property
    def last(self) -> Any:
        with self._lock:
            if not self._requests:
                raise AssertionError("the test server received no model request")
            return self._requests[-1]

    @property
    def unscripted(self) -> list[Any]:
        with self._lock:
            return list(self._unscripted)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[Any]:
        deadline = time.monotonic() + min(timeout, MAX_DELAY)
        with self._changed:
            while len(self._requests) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        f"expected {count} model request(s), got {len(self._requests)}"
                    )
                self._changed.wait(remaining)
            return list(self._requests)

    # -- used by subclasses (handler threads) -------------------------------------------------

    def record(self, **fields: Any) -> Any:
        with self._changed:
            request = self.request_class(index=len(self._requests), **fields)
            self._requests.append(request)
            self._changed.notify_all()
            return request

    def next_step(self, request: RecordedRequest) -> Any:
        """The next scripted step for ``request`` (None when the script is empty)."""
        with self._changed:
            if not self._script:
                self._unscripted.append(request)
                return None
            entry = self._script.popleft()
        step = entry(request) if callable(entry) else entry
        request.step = step
        return step

    def dispatch(
        self,
        handler: ProviderHandler,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        raw: bytes,
    ) -> None:
        raise NotImplementedError


def sse(event: str | None, data: Any) -> bytes:
    """One server-sent event: ``event: <name>`` (when given) and a JSON ``data:`` line."""
    payload = data if isinstance(data, bytes) else json.dumps(data, separators=(",", ":")).encode()
    head = b"event: %s\n" % event.encode() if event else b""
    return head + b"data: " + payload + b"\n\n"


def split_text(text: str, n: int) -> list[str]:
    """``text`` in ``n`` nearly equal pieces (fewer when it is shorter)."""
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


def estimate_tokens(value: Any) -> int:
    """chars/4 of a string or of compact JSON (at least 1): the servers' token counts."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return max(1, len(text) // 4)


Responder = Callable[[ProviderHandler, RecordedRequest, Any], None]
