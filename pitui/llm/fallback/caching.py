"""Prompt-cache breakpoints for Anthropic models, placed where pi 1.6 places them.

Three ``cache_control: {"type": "ephemeral"}`` markers: the last tool declaration, the system
prompt, and the last block of the last message when it is the user's (a prompt or the tool
results of a tool loop). The tools and system prompt are then read from the cache on every
request, and each request of a tool loop reads the whole conversation written by the previous
one. Works on litellm's (OpenAI-shaped) messages; litellm turns the markers into Anthropic's,
Bedrock's ``cachePoint`` or OpenRouter's content-block markers.
"""

from __future__ import annotations

from typing import Any

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}


def _marked_content(content: Any) -> Any:
    """``content`` with a breakpoint on its last block (a string becomes one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        return [*content[:-1], {**content[-1], "cache_control": dict(EPHEMERAL)}]
    return content


def add_cache_breakpoints(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Copies of ``messages`` and ``tools`` with pi's three breakpoints."""
    out = list(messages)
    marked_tools = list(tools)
    if marked_tools:
        marked_tools[-1] = {**marked_tools[-1], "cache_control": dict(EPHEMERAL)}
    if out and out[0].get("role") == "system" and out[0].get("content"):
        out[0] = {**out[0], "content": _marked_content(out[0]["content"])}
    last = out[-1] if out else {}
    if last.get("role") == "user":
        out[-1] = {**last, "content": _marked_content(last.get("content"))}
    elif last.get("role") == "tool":
        # litellm puts a tool message's marker on its ``tool_result`` block.
        out[-1] = {**last, "cache_control": dict(EPHEMERAL)}
    return out, marked_tools
