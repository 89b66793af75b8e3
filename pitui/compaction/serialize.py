"""The conversation as the summarizer reads it: ``[User]:``, ``[Assistant]:``, tool calls and
tool results (cut at 2000 characters), thinking left out."""

from __future__ import annotations

from typing import Any

from pitui.compaction.tokens import js_len, js_stringify
from pitui.session.entries import bash_execution_text, summary_text

TOOL_RESULT_LIMIT = 2000


def _texts(content: Any, joiner: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return joiner.join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def js_truncate(text: str, units: int) -> str:
    """The first ``units`` UTF-16 code units of ``text``, never splitting a surrogate pair."""
    if text.isascii():
        return text[:units]
    out: list[str] = []
    used = 0
    for ch in text:
        size = 2 if ord(ch) > 0xFFFF else 1
        if used + size > units:
            break
        out.append(ch)
        used += size
    return "".join(out)


def _as_user_text(message: dict[str, Any]) -> str | None:
    """Non-LLM roles become user text before serialization (as the model would see them)."""
    role = message.get("role")
    if role in ("user", "custom"):
        return _texts(message.get("content"), "")
    if role == "bashExecution":
        return None if message.get("excludeFromContext") else bash_execution_text(message)
    if role in ("compactionSummary", "branchSummary"):
        return summary_text(message)
    return None


def serialize_conversation(messages: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            texts = [
                b["text"]
                for b in blocks
                if isinstance(b, dict)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            ]
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            calls = [b for b in blocks if isinstance(b, dict) and b.get("type") == "toolCall"]
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
            text = _texts(message.get("content"), "")
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
