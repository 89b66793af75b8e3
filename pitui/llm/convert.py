"""Projected messages (pi's shapes) → the OpenAI-style messages litellm takes, and back.

One leading system message carries the replayed system prompt; later system patches are not
sent mid-conversation. A reply's thinking goes back to the model that wrote it in its
provider's format: Claude's signed and redacted blocks in their original order, OpenAI
Responses reasoning items, OpenRouter ``reasoning_details``, Gemini thought signatures,
Ollama's ``thinking``. Non-LLM roles become user text (pi's conversion rules). Assistant
replies that ended in error or were aborted are not sent, and a tool call without a result
gets a synthetic error result so providers accept the request.
"""

from __future__ import annotations

import json
from typing import Any

from pitui.llm import providers
from pitui.llm.models import ModelRef
from pitui.llm.providers import Route, route_for
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


def _call(block: dict[str, Any], target: Route, own: bool) -> dict[str, Any]:
    call: dict[str, Any] = {
        "id": str(block.get("id")),
        "type": "function",
        "function": {
            "name": str(block.get("name")),
            "arguments": json.dumps(block.get("arguments") or {}, ensure_ascii=False),
        },
    }
    if own and target.family == providers.GEMINI and block.get("thoughtSignature"):
        call["provider_specific_fields"] = {"thought_signature": block["thoughtSignature"]}
    return call


def _signed_block(block: dict[str, Any]) -> dict[str, Any] | None:
    """A stored thinking block as Anthropic wants it back (None: nothing to send)."""
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


def _detail_of(block: dict[str, Any], index: int) -> dict[str, Any] | None:
    """A stored Claude thinking block as the OpenRouter ``reasoning_details`` entry it was."""
    signature = block.get("thinkingSignature")
    if not isinstance(signature, str) or not signature:
        return None
    if block.get("redacted"):
        return {
            "type": "reasoning.encrypted",
            "data": signature,
            "format": "anthropic-claude-v1",
            "index": index,
        }
    return {
        "type": "reasoning.text",
        "text": str(block.get("thinking") or ""),
        "signature": signature,
        "format": "anthropic-claude-v1",
        "index": index,
    }


def _json(value: Any) -> Any:
    if not isinstance(value, str):
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _assistant(message: dict[str, Any], target: Route) -> dict[str, Any] | None:
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    own = target.owns(message)
    family = target.family
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    ordered: list[dict[str, Any]] = []  # Claude: thinking and text in the reply's own order
    thinking_texts: list[str] = []
    reasoning_items: list[dict[str, Any]] = []
    reasoning_details: list[Any] = []
    text_signatures: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
            if block["text"]:
                ordered.append({"type": "text", "text": block["text"]})
            if isinstance(block.get("textSignature"), str):
                text_signatures.append(block["textSignature"])
        elif kind == "toolCall":
            calls.append(_call(block, target, own))
        elif kind == "thinking" and own:
            if family == providers.ANTHROPIC:
                signed = _signed_block(block)
                if signed is not None:
                    ordered.append(signed)
            elif family == providers.OPENAI_RESPONSES:
                item = _json(block.get("thinkingSignature"))
                if isinstance(item, dict) and item.get("type") == "reasoning":
                    reasoning_items.append(item)
            elif family == providers.OPENROUTER and target.claude:
                detail = _detail_of(block, len(reasoning_details))
                if detail is not None:
                    reasoning_details.append(detail)
            elif family == providers.OPENROUTER:
                details = _json(block.get("thinkingSignature"))
                if isinstance(details, list):
                    reasoning_details.extend(details)
            elif family in (providers.OLLAMA, providers.GEMINI) and block.get("thinking"):
                thinking_texts.append(str(block["thinking"]))
    if isinstance(content, str):
        texts.append(content)
    if not texts and not calls:
        return None
    out: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if any(b["type"] != "text" for b in ordered):
        out["content"] = ordered  # litellm keeps this order; tool_use blocks follow
    if calls:
        out["tool_calls"] = calls
    if reasoning_items:
        out["reasoning_items"] = reasoning_items
    if reasoning_details:
        out["reasoning_details"] = reasoning_details
    if thinking_texts and family == providers.OLLAMA:
        out["reasoning_content"] = "\n".join(thinking_texts)
    if text_signatures and family == providers.GEMINI and own:
        out["provider_specific_fields"] = {"thought_signatures": text_signatures}
    return out


def to_litellm_messages(
    messages: list[dict[str, Any]], target: Route | str = ""
) -> list[dict[str, Any]]:
    """The request messages for a projected context (system prompt first).

    ``target`` is how the model is served (a :class:`Route`, or a bare provider name): a
    reply's thinking, signatures and encrypted reasoning go back only to the model that
    produced them (pi's rule), in that provider's own format.
    """
    if isinstance(target, str):
        target = route_for(ModelRef(target, ""))
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
            converted = _assistant(message, target)
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
