"""A request's :class:`~pitui.llm.context.Context` as the OpenAI-style messages litellm takes.

The context is already normalized (pi's rules, :func:`pitui.llm.context.build_context`): only
this model's thinking is left in it. Here it goes back in the shape litellm turns into the
provider's own: Claude's signed and redacted blocks in their original order (Bedrock, Vertex),
Gemini's thought signatures (Vertex), ``reasoning_content`` for Ollama.
"""

from __future__ import annotations

import json
from typing import Any

from pitui.llm.apis.openai_completions import user_content
from pitui.llm.call import data_url
from pitui.llm.context import Context
from pitui.llm.routes import Route
from pitui.session.shapes import content_text

NO_OUTPUT = "(no output)"


def family(target: Route) -> str:
    """How litellm carries this route's thinking: ``claude`` (signed blocks), ``gemini``
    (thought signatures), ``ollama`` (``reasoning_content``), or ``chat`` (not at all)."""
    if target.claude:
        return "claude"
    if target.provider in ("google", "google-vertex"):
        return "gemini"
    if target.provider == "ollama":
        return "ollama"
    return "chat"


def _signed_block(block: dict[str, Any]) -> dict[str, Any] | None:
    signature = block.get("thinkingSignature")
    if not isinstance(signature, str) or not signature:
        return None  # unsigned thinking cannot be verified: the API refuses it
    if block.get("redacted"):
        return {"type": "redacted_thinking", "data": signature}
    return {
        "type": "thinking",
        "thinking": str(block.get("thinking") or ""),
        "signature": signature,
    }


def _assistant(message: dict[str, Any], kind: str) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    ordered: list[dict[str, Any]] = []  # Claude: thinking and text in the reply's own order
    thinking: list[str] = []
    text_signatures: list[str] = []
    for block in message["content"]:
        what = block.get("type")
        if what == "text":
            texts.append(block["text"])
            if block["text"]:
                ordered.append({"type": "text", "text": block["text"]})
            if isinstance(block.get("textSignature"), str):
                text_signatures.append(block["textSignature"])
        elif what == "toolCall":
            call: dict[str, Any] = {
                "id": block["id"],
                "type": "function",
                "function": {
                    "name": block["name"],
                    "arguments": json.dumps(block["arguments"], ensure_ascii=False),
                },
            }
            if kind == "gemini" and block.get("thoughtSignature"):
                call["provider_specific_fields"] = {"thought_signature": block["thoughtSignature"]}
            calls.append(call)
        elif what == "thinking":
            if kind == "claude":
                signed = _signed_block(block)
                if signed is not None:
                    ordered.append(signed)
            elif block.get("thinking"):
                thinking.append(str(block["thinking"]))
    out: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if any(b["type"] != "text" for b in ordered):
        out["content"] = ordered  # litellm keeps this order; tool_use blocks follow
    if calls:
        out["tool_calls"] = calls
    if thinking and kind == "ollama":
        out["reasoning_content"] = "\n".join(thinking)
    if text_signatures and kind == "gemini":
        out["provider_specific_fields"] = {"thought_signatures": text_signatures}
    return out


def to_litellm_messages(context: Context, target: Route) -> list[dict[str, Any]]:
    """The request messages (system prompt first)."""
    kind = family(target)
    out: list[dict[str, Any]] = []
    if context.system:
        out.append({"role": "system", "content": context.system})
    images: list[dict[str, Any]] = []

    def flush_images() -> None:
        if images:
            out.append({"role": "user", "content": list(images)})
            images.clear()

    for message in context.messages:
        role = message["role"]
        if role == "toolResult":
            text = content_text(message.get("content"), "\n") or NO_OUTPUT
            if message.get("isError") and not text.startswith("Error"):
                text = f"Error: {text}"
            out.append({"role": "tool", "tool_call_id": message["toolCallId"], "content": text})
            images.extend(
                {"type": "image_url", "image_url": {"url": data_url(block)}}
                for block in message.get("content") or []
                if isinstance(block, dict) and block.get("type") == "image"
            )
            continue
        flush_images()
        if role == "assistant":
            out.append(_assistant(message, kind))
        else:
            out.append({"role": "user", "content": user_content(message.get("content"))})
    flush_images()
    return out


def to_litellm_tools(declarations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": d["name"],
                "description": d["description"],
                "parameters": d["parameters"],
            },
        }
        for d in declarations
    ]
