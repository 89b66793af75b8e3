"""The scripted model both pitui and pi talk to in the TUI benchmarks.

An OpenAI-compatible ``POST /v1/chat/completions`` server on 127.0.0.1 (HTTP/1.1, keep-alive,
chunked SSE) that streams whatever the harness scripted for the current scenario, at a
controlled rate, and timestamps (``time.monotonic()``, the same clock as the screen poller)
when each request arrived and when its first and last content chunk were written to the
socket. It never imports litellm; pitui and pi reach it through their own
``openai-completions`` clients.

A scenario is a callable ``(request body) -> Reply``; ``server.scenario`` is set by the
harness before each measured run (requests that arrive with none set get a one-line reply).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from pitui.llm.local_server import BackgroundHTTPServer

MODEL = "gpt-4.1-mini"  # litellm knows it (pitui prices it, knows its 1M window)


# ---------------------------------------------------------------------------------- tokens


def _tiktoken_encoding() -> Any:
    """o200k_base from litellm's bundled copy (offline), without importing litellm."""
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        spec = find_spec("litellm")
        if spec is not None and spec.origin:
            folder = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    import tiktoken

    return tiktoken.get_encoding("o200k_base")


_ENCODING: Any = None


def tokenize(text: str) -> list[str]:
    """Split ``text`` into real o200k tokens (the pieces a real server would stream)."""
    global _ENCODING
    if _ENCODING is None:
        _ENCODING = _tiktoken_encoding()
    ids = _ENCODING.encode(text)
    pieces = [_ENCODING.decode([i]) for i in ids]
    # A multi-byte character split across tokens decodes to U+FFFD; the text is ASCII, but be
    # safe: fall back to characters then.
    if "".join(pieces) != text:
        return list(text)
    return pieces


# ------------------------------------------------------------------------------ markdown

_WORD_TEXT = (
    "the session tree keeps every branch and the leaf moves when you go back while the "
    "projection rebuilds the context from the active path so that compaction summaries stay "
    "small and tool results are kept verbatim near the window with a budget of tokens per "
    "request render stream widget layout cursor buffer cache index parser module handler "
    "event loop worker thread latency frame paint scroll viewport editor prompt status line"
)
_WORDS = tuple(_WORD_TEXT.split())


def markdown_reply(
    target_tokens: int | None = None,
    target_bytes: int | None = None,
    seed: int = 7,
    begin: str = "",
    end: str = "",
) -> str:
    """A seeded, realistic Markdown reply (headings, prose, lists, code, tables) of about
    ``target_tokens`` o200k tokens or ``target_bytes`` bytes, starting with ``begin`` and
    ending with a paragraph ``end`` (markers the harness looks for on screen)."""
    rng = random.Random(seed)

    def sentence() -> str:
        words = rng.choices(_WORDS, k=rng.randint(8, 20))
        if rng.random() < 0.3:
            i = rng.randrange(len(words))
            words[i] = f"`{words[i]}()`"
        if rng.random() < 0.2:
            i = rng.randrange(len(words))
            words[i] = f"**{words[i]}**"
        return " ".join(words).capitalize() + "."

    def block(n: int) -> str:
        kind = rng.random()
        if kind < 0.12:
            return f"## Step {n}: {' '.join(rng.choices(_WORDS, k=3))}"
        if kind < 0.55:
            return " ".join(sentence() for _ in range(rng.randint(2, 5)))
        if kind < 0.72:
            return "\n".join(f"- {sentence()}" for _ in range(rng.randint(2, 5)))
        if kind < 0.90:
            lines = [f"def {rng.choice(_WORDS)}_{n}(value, limit=10):"]
            for i in range(rng.randint(3, 10)):
                a, b = rng.choice(_WORDS), rng.choice(_WORDS)
                lines.append(f"    {a}_{i} = value.{b}({i}) + limit  # {rng.choice(_WORDS)}")
            lines.append("    return value")
            return "```python\n" + "\n".join(lines) + "\n```"
        rows = ["| name | entries | time |", "|---|---|---|"]
        for _ in range(rng.randint(2, 5)):
            rows.append(
                f"| {rng.choice(_WORDS)} | {rng.randint(1, 99999)} | {rng.random() * 100:.1f} ms |"
            )
        return "\n".join(rows)

    blocks = [begin + " " + sentence()] if begin else []
    n = 0
    size = 0
    tokens = 0
    while True:
        if target_tokens is not None and tokens >= target_tokens:
            break
        if target_bytes is not None and size >= target_bytes:
            break
        b = block(n)
        blocks.append(b)
        n += 1
        size += len(b) + 2
        tokens += max(1, len(b) // 4)  # coarse; fixed up below
    text = "\n\n".join(blocks)
    if target_tokens is not None:  # trim or pad to the exact token count
        pieces = tokenize(text)
        while len(pieces) < target_tokens:
            text += "\n\n" + block(n)
            n += 1
            pieces = tokenize(text)
        text = "".join(pieces[:target_tokens])
        text = text.rstrip()
    if text.count("```") % 2:  # cut inside a code block: close it
        text += "\n```"
    if end:
        text += f"\n\nDone: {end}"
    return text


# -------------------------------------------------------------------------------- replies


@dataclass
class Reply:
    """What one request gets: text streamed as ``pieces`` and/or tool calls."""

    pieces: list[str] = field(default_factory=list)
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    rate: float | None = None  # content chunks per second; None = as fast as possible
    first_delay: float = 0.0  # seconds before the first chunk (the model "thinking")
    tag: str = ""  # what the scenario made of the request (kept in its RequestLog)

    @classmethod
    def text(cls, text: str, rate: float | None = None, first_delay: float = 0.0) -> Reply:
        return cls(pieces=tokenize(text), rate=rate, first_delay=first_delay)


@dataclass
class RequestLog:
    """Timestamps (time.monotonic) and a summary of one chat request."""

    arrived: float
    messages: int
    body_bytes: int
    last_role: str
    first_chunk: float | None = None
    last_chunk: float | None = None  # the last content/tool chunk written
    done: float | None = None  # [DONE] written
    chunks: int = 0
    tool_call: bool = False
    tag: str = ""
    error: str | None = None


Scenario = Callable[[dict[str, Any]], Reply]


def last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def tool_results_since_user(body: dict[str, Any]) -> int:
    count = 0
    for message in reversed(body.get("messages", [])):
        role = message.get("role")
        if role == "user":
            break
        if role == "tool":
            count += 1
    return count


def tool_loop(rounds: int, path: str, prompt: str, final: str = "All rounds done.") -> Scenario:
    """After the user message ``prompt``: ``rounds`` tool calls (``read`` of ``path``), one per
    request (tag ``tool``), then ``final`` (tag ``final``). Any other request (an agent's
    compaction or summary request) gets a short summary (tag ``other``)."""

    def scenario(body: dict[str, Any]) -> Reply:
        if last_user_text(body).strip() != prompt:
            return Reply(pieces=tokenize("## Summary\n\nThe user ran benchmarks."), tag="other")
        done = tool_results_since_user(body)
        if done < rounds:
            return Reply(tool_calls=[("read", {"path": path})], tag="tool")
        reply = Reply.text(final)
        reply.tag = "final"
        return reply

    return scenario


def fixed(reply_text: str, rate: float | None = None, first_delay: float = 0.0) -> Scenario:
    reply = Reply.text(reply_text, rate=rate, first_delay=first_delay)
    return lambda body: reply


# -------------------------------------------------------------------------------- server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked SSE, as real providers
    server_version = "pitui-bench"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        # a client that exits closes its keep-alive connection
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            super().handle()

    @property
    def owner(self) -> ScriptedModelServer:
        return self.server.owner  # type: ignore[attr-defined, no-any-return]

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        arrived = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"unknown path {self.path}"}})
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._json(400, {"error": {"message": "invalid JSON"}})
            return
        messages = body.get("messages", [])
        log = RequestLog(
            arrived=arrived,
            messages=len(messages),
            body_bytes=len(raw),
            last_role=str(messages[-1].get("role")) if messages else "",
        )
        self.owner._record(log, body)
        scenario = self.owner.scenario
        reply = scenario(body) if scenario else Reply.text("ok")
        log.tag = reply.tag
        try:
            self._stream(body, reply, log, raw)
        except (BrokenPipeError, ConnectionResetError) as exc:
            log.error = type(exc).__name__
            self.close_connection = True

    @staticmethod
    def _encode(payload: dict[str, Any] | str) -> bytes:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        line = f"data: {data}\n\n".encode()
        return b"%x\r\n%s\r\n" % (len(line), line)

    def _stream(self, body: dict[str, Any], reply: Reply, log: RequestLog, raw: bytes) -> None:
        ident = f"chatcmpl-{self.owner._next_id()}"
        created = int(time.time())
        model = body.get("model", MODEL)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return self._encode(
                {
                    "id": ident,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
            )

        # Every event is encoded before the first is sent: the loop below only writes, so
        # "as fast as possible" is the socket's speed, not this server's JSON encoding.
        content = [chunk({"content": piece}) for piece in reply.pieces]
        calls = []
        for index, (name, args) in enumerate(reply.tool_calls):
            call_id = f"call_{self.owner._next_id()}"
            calls.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args)},
                            }
                        ]
                    }
                )
            )
        completion = max(1, len(reply.pieces) + 20 * len(reply.tool_calls))
        prompt = max(1, len(raw) // 4)
        tail = (
            chunk({}, "tool_calls" if reply.tool_calls else "stop")
            + self._encode(
                {
                    "id": ident,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": completion,
                        "total_tokens": prompt + completion,
                    },
                }
            )
            + self._encode("[DONE]")
            + b"0\r\n\r\n"
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        if reply.first_delay:
            time.sleep(reply.first_delay)
        write = self.wfile.write
        write(chunk({"role": "assistant", "content": ""}))
        start = time.monotonic()
        log.first_chunk = start
        interval = 1.0 / reply.rate if reply.rate else 0.0
        for i, event in enumerate(content):
            if interval:
                wait = start + i * interval - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
            write(event)
        for event in calls:
            write(event)
        log.chunks = len(content) + len(calls)
        log.tool_call = bool(calls)
        log.last_chunk = time.monotonic()
        write(tail)
        self.wfile.flush()
        log.done = time.monotonic()


class ScriptedModelServer(BackgroundHTTPServer):
    handler_class = _Handler
    thread_name = "pitui-bench-model"
    poll_interval = 0.05

    def __init__(self) -> None:
        super().__init__()
        self.scenario: Scenario | None = None
        self.requests: list[RequestLog] = []
        self.bodies: list[dict[str, Any]] = []
        self.keep_bodies = False
        self._lock = threading.Lock()
        self._ids = 0
        self._arrival = threading.Condition(self._lock)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _record(self, log: RequestLog, body: dict[str, Any]) -> None:
        with self._arrival:
            self.requests.append(log)
            if self.keep_bodies:
                self.bodies.append(body)
            self._arrival.notify_all()

    def reset(self, scenario: Scenario | None = None) -> None:
        with self._lock:
            self.scenario = scenario
            self.requests = []
            self.bodies = []

    def wait_requests(self, count: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._arrival:
            while len(self.requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._arrival.wait(left)
        return True

    def wait_done(self, index: int, timeout: float) -> RequestLog | None:
        """The ``index``-th request once its reply has been fully written."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.requests) > index and self.requests[index].done is not None:
                    return self.requests[index]
            time.sleep(0.005)
        return None


# ------------------------------------------------------------------------------ raw client


def raw_stream_seconds(server: ScriptedModelServer, scenario: Scenario) -> dict[str, float]:
    """Stream one reply to a bare socket reader (no parsing while it reads, no agent): the
    time from the recv() that brought the first content chunk to the one that brought the
    last, i.e. how fast the bytes arrive when nothing renders them."""
    import socket

    server.reset(scenario)
    body = json.dumps(
        {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "raw"}]}
    ).encode()
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    marks: list[tuple[float, int]] = []
    chunks: list[bytes] = []
    size = 0
    with socket.create_connection(("127.0.0.1", server.port), timeout=120) as sock:
        sock.sendall(request)
        while True:
            data = sock.recv(1 << 20)
            if not data:
                break
            now = time.monotonic()
            chunks.append(data)
            size += len(data)
            marks.append((now, size))
    raw = b"".join(chunks)
    events = [m.start() for m in re.finditer(rb'"delta": \{"content": "(?!")', raw)]
    server.reset(None)
    if not events:
        raise RuntimeError("the raw stream had no content")

    def arrival(offset: int) -> float:
        return next(t for t, end in marks if end > offset)

    return {
        "received_s": arrival(events[-1]) - arrival(events[0]),
        "chunks": float(len(events)),
    }


CLIENT_READER = """
import asyncio, sys, time
import httpx
url = sys.argv[1] + "/chat/completions"
body = {"model": sys.argv[2], "stream": True, "messages": [{"role": "user", "content": "x"}]}
async def once():
    stamps = []
    async with httpx.AsyncClient(timeout=120) as client:
        async with client.stream("POST", url, json=body) as response:
            async for data in response.aiter_bytes():
                if b'"delta": {"content": "' in data:
                    stamps.append(time.monotonic())
    return stamps[-1] - stamps[0] if stamps else -1.0
print("ready", flush=True)
for line in sys.stdin:
    print(asyncio.run(once()), flush=True)
"""
"""Reads a reply as pitui's provider calls do, minus everything that parses it: httpx (what
pitui's native APIs read every stream with), in a process of its own."""


def client_stream_seconds(
    server: ScriptedModelServer, scenario: Scenario, runs: int
) -> list[float]:
    """The reply read ``runs`` times with httpx (what pitui streams every reply with) and
    nothing else: no SSE parsing, no agent; first -> last read that brought content. In its
    own process, as pitui is: a reader in this one would share the interpreter with the
    server's thread and slow both."""
    import subprocess
    import sys

    reader = subprocess.Popen(
        [sys.executable, "-c", CLIENT_READER, server.api_base, MODEL],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert reader.stdin is not None and reader.stdout is not None
    try:
        if reader.stdout.readline().strip() != "ready":
            raise RuntimeError("the HTTP reader did not start")
        took: list[float] = []
        for _ in range(runs):
            server.reset(scenario)
            reader.stdin.write("go\n")
            reader.stdin.flush()
            seconds = float(reader.stdout.readline())
            if seconds < 0:
                raise RuntimeError("the HTTP reader saw no content")
            took.append(seconds)
        return took
    finally:
        server.reset(None)
        with contextlib.suppress(OSError):
            reader.stdin.close()
        reader.wait(timeout=30)
