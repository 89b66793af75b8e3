"""One-line text for an entry, following pi's tree selector rules (`pitui tree`, the UI)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pitui.session.shapes import message_text, tool_calls
from pitui.text import js_stringify

MAX_TEXT = 200


def _flat(text: str, limit: int | None = MAX_TEXT) -> str:
    text = text.replace("\r", " ").replace("\n", " ").replace("\t", " ").strip()
    return text[:limit] if limit is not None else text


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    if home and home != "/" and path.startswith(home):
        return "~" + path[len(home) :]
    return path


def _token_count(tokens: object) -> str:
    """``180`` below a thousand, else ``round(tokens / 1000)`` and ``k`` (``12k``; pi 1.6 writes
    ``0k`` for 180), without overflowing on absurd values; ``?`` when not a number."""
    if isinstance(tokens, bool) or not isinstance(tokens, int | float):
        return "?"
    if isinstance(tokens, float) and tokens != tokens:  # NaN
        return "?"
    if abs(tokens) < 1000:
        return str(int(tokens))
    if isinstance(tokens, int):
        return f"{(tokens + 500) // 1000}k"
    try:
        return f"{round(tokens / 1000)}k"
    except (OverflowError, ValueError):
        return "?"


def tool_call_text(name: str, args: Any) -> str:
    """``[read: path:1-20]``, ``[bash: cmd...]`` etc. for a tool call."""
    a = args if isinstance(args, dict) else {}
    path = a.get("path") if isinstance(a.get("path"), str) else None
    if name == "read" and path is not None:
        shown = _home(path)
        offset, limit = a.get("offset"), a.get("limit")
        if isinstance(offset, int) or isinstance(limit, int):
            start = offset if isinstance(offset, int) else 1
            end = f"{start + limit - 1}" if isinstance(limit, int) else ""
            shown += f":{start}-{end}" if end else f":{start}"
        return f"[read: {shown}]"
    if name in ("write", "edit", "ls") and path is not None:
        return f"[{name}: {_home(path)}]"
    if name == "bash" and isinstance(a.get("command"), str):
        command = _flat(a["command"], None)
        return f"[bash: {command[:50]}{'...' if len(command) > 50 else ''}]"
    if name == "grep" and isinstance(a.get("pattern"), str):
        return f"[grep: /{a['pattern']}/ in {_home(path or '.')}]"
    if name == "find" and isinstance(a.get("pattern"), str):
        return f"[find: {a['pattern']} in {_home(path or '.')}]"
    raw = js_stringify(args)
    return f"[{name}: {raw[:40]}{'...' if len(raw) > 40 else ''}]"


def entry_text(
    entry: dict[str, Any], find_call: Callable[[str], dict[str, Any] | None] | None = None
) -> str:
    """One line describing ``entry``; ``find_call(toolCallId)`` resolves a tool result's call."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return "[message]"
        role = message.get("role")
        if role == "user":
            return f"user: {_flat(message_text(message, ' '))}"
        if role == "assistant":
            text = _flat(message_text(message, " "))
            if text:
                return f"assistant: {text}"
            stop = message.get("stopReason")
            if stop == "aborted":
                return "assistant: (aborted)"
            if stop == "error":
                error = message.get("errorMessage")
                return f"assistant: {_flat(str(error or 'error'), 80)}"
            calls = tool_calls(message)
            if calls:
                return "assistant: " + " ".join(
                    tool_call_text(str(c.get("name")), c.get("arguments")) for c in calls
                )
            return "assistant: (no content)"
        if role == "toolResult":
            call = find_call(str(message.get("toolCallId"))) if find_call else None
            if call is not None:
                return tool_call_text(str(call.get("name")), call.get("arguments"))
            return f"[{message.get('toolName') or 'tool'}]"
        if role == "bashExecution":
            return f"[bash]: {_flat(str(message.get('command') or ''))}"
        if role == "custom":
            return f"[{message.get('customType')}]: {_flat(message_text(message, ' '), None)}"
        if role == "system":
            return "[system]"
        return f"[{role}]"
    if kind == "custom_message":
        text = message_text({"content": entry.get("content")}, " ")
        return f"[{entry.get('customType')}]: {_flat(text, None)}"
    if kind == "compaction":
        tokens = entry.get("tokensBefore")
        return f"[compaction: {_token_count(tokens)} tokens]"
    if kind == "branch_summary":
        return f"[branch summary]: {_flat(str(entry.get('summary') or ''), None)}"
    if kind == "model_change":
        return f"[model: {entry.get('modelId')}]"
    if kind == "thinking_level_change":
        return f"[thinking: {entry.get('thinkingLevel')}]"
    if kind == "custom":
        return f"[custom: {entry.get('customType')}]"
    if kind == "label":
        label = entry.get("label")
        return f"[label: {label}]" if label else "[label: (cleared)]"
    if kind == "session_info":
        name = entry.get("name")
        return f"[title: {name}]" if isinstance(name, str) and name.strip() else "[title: empty]"
    if kind == "context_edit":
        verb = "omit" if entry.get("replacement") is None else "replace"
        return f"[context {verb}: {entry.get('targetId')}]"
    if kind == "usage":
        return f"[usage: {entry.get('kind')}]"
    return f"[{kind}]"
