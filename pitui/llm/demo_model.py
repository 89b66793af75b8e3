"""The offline demo model: a tiny OpenAI-compatible chat-completions server on ``127.0.0.1``.

``pitui --demo`` points the agent at it (model ``openai/pitui-demo`` with an ``api_base``), so
every request goes through the ordinary agent path (litellm, streaming, tool calls, usage,
compaction summaries) without network access or an API key. Replies are deterministic:

* a chat request gets a short canned reply that says it comes from the demo model;
* a request asking to "list the files" (or ``ls``) gets a ``bash`` tool call, and the request
  carrying its result gets a one-line comment on it;
* a summarizer request (compaction, split turn, branch summary) gets a structured summary in
  the requested sections, built from the conversation's structure.

The server runs in a daemon thread (stdlib ``http.server``); ``stop()`` shuts it down.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from pitui.compaction import prompts
from pitui.llm.local_server import BackgroundHTTPServer

DEMO_MODEL = "openai/pitui-demo"
DEMO_MODEL_ID = "pitui-demo"
DEMO_CONTEXT_WINDOW = 32_000
DEMO_MAX_OUTPUT = 4_096
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODELS_PATHS = ("/v1/models", "/models")
MAX_BODY_BYTES = 64 * 1024 * 1024
SOCKET_TIMEOUT = 30.0
FIXED_CREATED = 1_767_225_600  # 2026-01-01T00:00:00Z: chunks carry no wall-clock time

_LIST_FILES = re.compile(r"\b(ls|list (?:the |all )?files)\b", re.IGNORECASE)
_TOOL_CALL = re.compile(r"(\w+)\((.*?)\)(?:; |$)")


def demo_settings() -> dict[str, Any]:
    """Settings that describe the demo model: a 32k window (the status gauge works) and a small
    kept tail, so that ``/compact`` has something to summarize in a short session."""
    return {
        "models": {
            DEMO_MODEL: {
                "contextWindow": DEMO_CONTEXT_WINDOW,
                "maxOutput": DEMO_MAX_OUTPUT,
                "inputCost": 0,
                "outputCost": 0,
            }
        },
        "compaction": {"modelOverrides": {DEMO_MODEL: {"keepRecentTokens": 300}}},
    }


# ------------------------------------------------------------------------------ replies


def estimate_tokens(text: str) -> int:
    """chars/4, rounded up: the demo's usage numbers."""
    return math.ceil(len(text) / 4)


def content_text(content: Any) -> str:
    """The text of an OpenAI message ``content`` (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _first_line(text: str, limit: int = 100) -> str:
    line = " ".join(text.strip().split("\n", 1)[0].split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _between(text: str, start: str, end: str) -> str | None:
    i = text.find(start)
    if i < 0:
        return None
    j = text.find(end, i + len(start))
    return text[i + len(start) : j if j >= 0 else len(text)]


def _conversation_facts(conversation: str) -> tuple[list[str], dict[str, int], list[str]]:
    """(user requests, tool call counts by name, file paths) from a serialized conversation."""
    requests: list[str] = []
    tools: dict[str, int] = {}
    files: list[str] = []
    for part in conversation.split("\n\n["):
        part = part if part.startswith("[") else "[" + part
        if part.startswith("[User]: "):
            text = part[len("[User]: ") :]
            if not text.startswith(("Summary of the conversation", "Summary of a branch")):
                requests.append(_first_line(text))
        elif part.startswith("[Assistant tool calls]: "):
            for name, args in _TOOL_CALL.findall(part[len("[Assistant tool calls]: ") :]):
                tools[name] = tools.get(name, 0) + 1
                match = re.search(r'path="([^"]+)"', args)
                if match and match.group(1) not in files:
                    files.append(match.group(1))
    return requests, tools, files


def _sections(conversation: str, previous: str | None, branch: bool) -> str:
    requests, tools, files = _conversation_facts(conversation)
    goals = [f"- {r}" for r in requests] or ["- (no user request in this part)"]
    if previous:
        earlier = _between(previous, "## Goal\n", "\n\n")
        if earlier:
            goals = [line for line in earlier.splitlines() if line.strip()] + goals
    calls = ", ".join(f"{name} ×{count}" for name, count in sorted(tools.items()))
    done = f"- [x] {len(requests)} request(s) handled" + (f"; tool calls: {calls}" if calls else "")
    next_step = f"1. Continue from: {requests[-1]}" if requests else "1. Wait for the next request"
    parts = [
        "## Goal\n" + "\n".join(dict.fromkeys(goals)),
        "## Constraints & Preferences\n- (none)",
        "## Progress\n### Done\n" + done + "\n\n### In Progress\n- [ ] (none)"
        "\n\n### Blocked\n- (none)",
        "## Key Decisions\n- **Demo summary**: written by pitui's offline demo model from the "
        "conversation's structure, not by a language model",
        "## Next Steps\n" + next_step,
    ]
    if not branch:
        touched = ", ".join(files) if files else "(none)"
        parts.append(f"## Critical Context\n- Files mentioned in tool calls: {touched}")
    return "\n\n".join(parts)


def summary_reply(request_text: str) -> str:
    """The demo model's answer to one of the summarizer's requests."""
    if "# Instructions\n" + prompts.TURN_PREFIX_PROMPT in request_text:
        conversation = _between(request_text, "# Conversation\n", "\n\n# Instructions") or ""
        requests, tools, files = _conversation_facts(conversation)
        calls = ", ".join(f"{name} ×{count}" for name, count in sorted(tools.items()))
        return (
            "## Original Request\n"
            + (requests[0] if requests else "(not in this part)")
            + "\n\n## Progress So Far\n- "
            + (f"Tool calls: {calls}" if calls else "(no tool calls)")
            + "\n\n## Context Needed to Continue\n- Files: "
            + (", ".join(files) if files else "(none)")
        )
    conversation = _between(request_text, "<conversation>\n", "\n</conversation>") or ""
    previous = _between(request_text, "<previous-summary>\n", "\n</previous-summary>")
    branch = prompts.BRANCH_PROMPT in request_text
    return _sections(conversation, previous, branch)


def chat_reply(messages: list[dict[str, Any]], tool_names: list[str]) -> tuple[str, Any]:
    """``("text", str)`` or ``("tool", (name, arguments))`` for an ordinary agent request."""
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        output = content_text(last.get("content"))
        lines = len(output.splitlines())
        return (
            "text",
            f"The tool returned {lines} line{'s' if lines != 1 else ''} of output. I am pitui's "
            "offline **demo model**, so I only show how tool calls and results look; start "
            "pitui with `--model provider/name` for real work.",
        )
    text = content_text(last.get("content")) if last.get("role") == "user" else ""
    if _LIST_FILES.search(text) and "bash" in tool_names:
        return ("tool", ("bash", {"command": "ls -1"}))
    words = len(text.split())
    quoted = _first_line(text, 60)
    return (
        "text",
        f"This is pitui's offline **demo model**: no language model read your message "
        f"({words} word{'s' if words != 1 else ''}: “{quoted}”).\n\n"
        "Things to try here: **Esc Esc** or `/tree` browses the branches and lets you edit "
        "and resubmit an earlier message, `/compact` summarizes older messages, `/resume` "
        "opens another session, and asking me to *list the files* shows a tool call.",
    )


def _split(text: str, pieces: int) -> list[str]:
    """``text`` in about ``pieces`` chunks, cut after spaces (joined, they give ``text``)."""
    words = re.findall(r"\S+\s*|\s+", text)
    size = max(1, math.ceil(len(words) / max(1, pieces)))
    return ["".join(words[i : i + size]) for i in range(0, len(words), size)] or [text]


# ------------------------------------------------------------------------------ the server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT
    server: Any

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the TUI owns the terminal

    def _send_json(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def _read_body(self) -> bytes:
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

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0].rstrip("/") in MODELS_PATHS:
            model = {"id": DEMO_MODEL_ID, "object": "model", "created": FIXED_CREATED}
            self._send_json(200, {"object": "list", "data": [{**model, "owned_by": "pitui"}]})
        else:
            self._send_json(404, _error(f"unknown path {self.path}", "not_found"))

    def do_POST(self) -> None:
        try:
            raw = self._read_body()
        except ValueError as exc:
            self._send_json(400, _error(str(exc), "invalid_request"))
            return
        if self.path.split("?", 1)[0].rstrip("/") not in CHAT_PATHS:
            self._send_json(404, _error(f"unknown path {self.path}", "not_found"))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._send_json(400, _error("expected a JSON body with messages", "invalid_request"))
            return
        owner = self.server.owner
        index = owner.count_request()
        try:
            self._answer(body, owner, index)
        except OSError:
            self.close_connection = True  # the client went away (Esc): nothing to do

    def _answer(self, body: dict[str, Any], owner: DemoModelServer, index: int) -> None:
        messages = [m for m in body["messages"] if isinstance(m, dict)]
        raw_tools = body.get("tools")
        tools: list[Any] = raw_tools if isinstance(raw_tools, list) else []
        tool_names = [
            str((t.get("function") or {}).get("name"))
            for t in tools
            if isinstance(t, dict) and isinstance(t.get("function"), dict)
        ]
        system = content_text(messages[0].get("content")) if messages else ""
        call: tuple[str, dict[str, Any]] | None = None
        if system == prompts.SYSTEM_PROMPT:
            text = summary_reply(content_text(messages[-1].get("content")))
        else:
            kind, value = chat_reply(messages, tool_names)
            if kind == "tool":
                call, text = value, ""
            else:
                text = value
        prompt_tokens = estimate_tokens(json.dumps(messages)) + estimate_tokens(json.dumps(tools))
        completion_tokens = estimate_tokens(text) + (
            estimate_tokens(json.dumps(call[1])) + 5 if call else 0
        )
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        reply_id = f"chatcmpl-demo{index}"
        finish = "tool_calls" if call else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if call:
                message["tool_calls"] = [_full_call(index, call)]
            self._send_json(
                200,
                {
                    "id": reply_id,
                    "object": "chat.completion",
                    "created": FIXED_CREATED,
                    "model": DEMO_MODEL_ID,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage,
                },
            )
            return
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        deltas += [{"content": piece} for piece in _split(text, 8)] if text else []
        if call:
            deltas.append({"tool_calls": [_full_call(index, call) | {"index": 0}]})
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for event in _events(reply_id, deltas, finish, usage if include_usage else None):
            if owner.wait(owner.chunk_delay):
                return
            self._write_chunk(b"data: " + event + b"\n\n")
        self._write_chunk(b"")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


def _full_call(index: int, call: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    name, arguments = call
    return {
        "id": f"call_demo_{index}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _events(
    reply_id: str, deltas: list[dict[str, Any]], finish: str, usage: dict[str, int] | None
) -> Iterator[bytes]:
    def chunk(delta: dict[str, Any], finish_reason: str | None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return json.dumps(
            {
                "id": reply_id,
                "object": "chat.completion.chunk",
                "created": FIXED_CREATED,
                "model": DEMO_MODEL_ID,
                "choices": [choice],
            }
        ).encode()

    for delta in deltas:
        yield chunk(delta, None)
    yield chunk({}, finish)
    if usage is not None:
        yield json.dumps(
            {
                "id": reply_id,
                "object": "chat.completion.chunk",
                "created": FIXED_CREATED,
                "model": DEMO_MODEL_ID,
                "choices": [],
                "usage": usage,
            }
        ).encode()
    yield b"[DONE]"


def _error(message: str, code: str) -> dict[str, Any]:
    return {
        "error": {
            "message": f"pitui demo model: {message}",
            "type": "invalid_request_error",
            "param": None,
            "code": code,
        }
    }


class DemoModelServer(BackgroundHTTPServer):
    """The demo model's server: ``start()`` (or ``with``), ``api_base``, ``stop()``.

    ``chunk_delay`` spaces the streamed chunks so that streaming is visible (0 in tests).
    """

    thread_name = "pitui-demo-model"
    handler_class = _Handler

    def __init__(self, chunk_delay: float = 0.03) -> None:
        super().__init__()
        self.chunk_delay = chunk_delay
        self.requests = 0
        self._lock = threading.Lock()

    @property
    def api_base(self) -> str:
        """``http://127.0.0.1:<port>/v1``: the agent's ``api_base``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def count_request(self) -> int:
        """Count one chat request; its number (from 1) names the reply and its tool call."""
        with self._lock:
            self.requests += 1
            return self.requests

    def wait(self, seconds: float) -> bool:
        """Sleep between chunks; True when the server is stopping."""
        if seconds <= 0:
            return self._stopping.is_set()
        return self._stopping.wait(seconds)
