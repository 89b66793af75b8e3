"""Projected messages (pi's shapes) → the OpenAI-style messages litellm takes, and back.

One leading system message carries the replayed system prompt; later system patches are not
sent mid-conversation. Non-LLM roles become user text (pi's conversion rules). Assistant
replies that ended in error or were aborted are not sent, and a tool call without a result
gets a synthetic error result so providers accept the request.
"""

from __future__ import annotations

import json
from typing import Any

from pitui.session.shapes import as_user_text, content_text
from pitui.session.system_prompt import replay_system_messages, system_message_text

NO_RESULT = "No result provided"


def _user_parts(content: Any) -> str | list[dict[str, Any]]:
    """User content: a string stays a string; blocks become OpenAI content parts."""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append({"type": "text", "text": block["text"]})
            elif block.get("type") == "image" and isinstance(block.get("data"), str):
                mime = block.get("mimeType") or "image/png"
                url = f"data:{mime};base64,{block['data']}"
                parts.append({"type": "image_url", "image_url": {"url": url}})
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _assistant(message: dict[str, Any], provider: str) -> dict[str, Any] | None:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    thinking: list[dict[str, Any]] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "toolCall":
            calls.append(
                {
                    "id": str(block.get("id")),
                    "type": "function",
                    "function": {
                        "name": str(block.get("name")),
                        "arguments": json.dumps(block.get("arguments") or {}, ensure_ascii=False),
                    },
                }
            )
        elif kind == "thinking" and block.get("thinkingSignature"):
            if block.get("redacted"):
                # Redacted thinking carries its opaque payload in ``data``.
                thinking.append(
                    {"type": "redacted_thinking", "data": block.get("thinkingSignature")}
                )
            else:
                thinking.append(
                    {
                        "type": "thinking",
                        "thinking": block.get("thinking", ""),
                        "signature": block.get("thinkingSignature"),
                    }
                )
    if isinstance(content, str):
        texts.append(content)
    if not texts and not calls:
        return None
    out: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if calls:
        out["tool_calls"] = calls
    # Signed thinking only goes back to the provider that signed it.
    if thinking and provider == "anthropic" and message.get("provider") == "anthropic":
        out["thinking_blocks"] = thinking
    return out


def to_litellm_messages(messages: list[dict[str, Any]], provider: str = "") -> list[dict[str, Any]]:
    """The request messages for a projected context (system prompt first)."""
    out: list[dict[str, Any]] = []
    system_text = system_message_text(replay_system_messages(messages))
    if system_text:
        out.append({"role": "system", "content": system_text})
    open_calls: list[str] = []  # tool call ids of the last assistant still waiting for results
    pending_images: list[dict[str, Any]] = []

    def close_calls() -> None:
        for call_id in open_calls:
            out.append({"role": "tool", "tool_call_id": call_id, "content": NO_RESULT})
        open_calls.clear()
        if pending_images:
            out.append({"role": "user", "content": list(pending_images)})
            pending_images.clear()

    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            call_id = str(message.get("toolCallId"))
            if call_id not in open_calls:
                continue  # its call was not sent (omitted or failed): drop the orphan
            open_calls.remove(call_id)
            text = content_text(message.get("content"), "\n") or "(no output)"
            if message.get("isError"):
                text = f"Error: {text}" if not text.startswith("Error") else text
            out.append({"role": "tool", "tool_call_id": call_id, "content": text})
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "image":
                    mime = block.get("mimeType") or "image/png"
                    pending_images.append(
                        {
                            "type": "image_url",
                            "image_url": {"url": f"data:{mime};base64,{block.get('data', '')}"},
                        }
                    )
            if not open_calls and pending_images:
                close_calls()
            continue
        close_calls()
        if role == "system":
            continue  # folded into the leading system message
        if role == "assistant":
            if message.get("stopReason") in ("error", "aborted"):
                continue
            converted = _assistant(message, provider)
            if converted is not None:
                out.append(converted)
                open_calls.extend(c["id"] for c in converted.get("tool_calls", []))
        elif role == "user" or role == "custom":
            out.append({"role": "user", "content": _user_parts(message.get("content"))})
        else:
            user_text = as_user_text(message)
            if user_text is not None:
                out.append({"role": "user", "content": user_text})
    close_calls()
    return out


def to_litellm_tools(declarations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": d.get("name"),
                "description": d.get("description", ""),
                "parameters": d.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for d in declarations
        if isinstance(d, dict) and d.get("name")
    ]
