"""The conversation as the summarizer reads it: ``[User]:``, ``[Assistant]:``, tool calls and
tool results (cut at 2000 characters), thinking left out."""

from __future__ import annotations

from typing import Any

from pitui.session.shapes import as_user_text, blocks, content_text, content_texts, tool_calls
from pitui.text import js_len, js_stringify, js_truncate

TOOL_RESULT_LIMIT = 2000


def _as_user_text(message: dict[str, Any]) -> str | None:
    """Non-LLM roles become user text before serialization (as the model would see them)."""
    if message.get("role") in ("user", "custom"):
        return content_text(message.get("content"))
    return as_user_text(message)


def serialize_conversation(messages: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            texts = content_texts(blocks(message.get("content")))
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            calls = tool_calls(message)
            if calls:
                rendered = []
                for call in calls:
                    args = call.get("arguments")
                    pairs = (
                        ", ".join(f"{k}={js_stringify(v)}" for k, v in args.items())
                        if isinstance(args, dict)
                        else ""
                    )
                    rendered.append(f"{call.get('name')}({pairs})")
                parts.append("[Assistant tool calls]: " + "; ".join(rendered))
        elif role == "toolResult":
            text = content_text(message.get("content"))
            if not text:
                continue
            length = js_len(text)
            if length > TOOL_RESULT_LIMIT:
                text = (
                    js_truncate(text, TOOL_RESULT_LIMIT)
                    + f"\n\n[... {length - TOOL_RESULT_LIMIT} more characters truncated]"
                )
            parts.append("[Tool result]: " + text)
        else:
            user_text = _as_user_text(message)
            if user_text:
                parts.append("[User]: " + user_text)
    return "\n\n".join(parts)
