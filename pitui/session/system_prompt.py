"""Replaying ``system`` messages into the system prompt and tool loadout in effect (pi 1.6)."""

from __future__ import annotations

from typing import Any

from pitui.session.shapes import content_texts


def _content_texts(content: Any) -> list[str]:
    """The non-empty texts of a system message's content."""
    return [text for text in content_texts(content) if text]


def replay_system_messages(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Fold every ``system`` message in order: texts joined, sections patched, tools merged.

    A patched section or tool keeps its position; a removed then re-added one moves to the
    end. Within one message ``toolsRemoved`` applies before ``toolsAdded``.
    """
    texts: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[str, Any] = {}
    timestamp: Any = None
    seen = False
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "system":
            continue
        if not seen:
            timestamp = message.get("timestamp")
            seen = True
        texts.extend(_content_texts(message.get("content")))
        patch = message.get("sections")
        if isinstance(patch, dict):
            for name, value in patch.items():
                if value is None:
                    sections.pop(name, None)
                else:
                    sections[name] = value
        removed = message.get("toolsRemoved")
        if isinstance(removed, list):
            for tool in removed:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    tools.pop(tool["name"], None)
        added = message.get("toolsAdded")
        if isinstance(added, list):
            for tool in added:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    # Like a JS Map.set: an existing tool keeps its place; one removed above
                    # in this same message comes back at the end.
                    tools[tool["name"]] = tool
    if not seen and not tools:
        return None
    return {
        "role": "system",
        "content": "\n\n".join(texts),
        "sections": sections,
        "toolsAdded": list(tools.values()),
        "timestamp": timestamp,
    }


def system_message_text(message: dict[str, Any] | None) -> str:
    """The provider system prompt: content, then each section value, empty parts skipped."""
    if not message:
        return ""
    parts = _content_texts(message.get("content"))
    sections = message.get("sections")
    if isinstance(sections, dict):
        parts.extend(v for v in sections.values() if isinstance(v, str) and v)
    return "\n\n".join(parts)


def tool_names(message: dict[str, Any] | None) -> list[str]:
    if not message:
        return []
    tools = message.get("toolsAdded")
    if not isinstance(tools, list):
        return []
    return [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
