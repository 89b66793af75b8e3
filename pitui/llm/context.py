"""What one request sends, independent of the wire API: the system prompt, the conversation in
pi's shapes made ready for a model, and the tool declarations.

:func:`build_context` applies pi 1.6's rules for any provider:

* the replayed system prompt becomes one leading system text; later ``system`` messages are
  not sent mid-conversation;
* non-LLM roles (summaries, ``!cmd`` runs, custom messages) become user messages;
* assistant replies that ended in error or were aborted are not sent;
* thinking from another model is dropped (signatures and encrypted reasoning only verify for
  the model that made them, and readable thinking sent as text would read as a reply); so are
  another model's Gemini signatures; empty unsigned thinking is dropped;
* a tool call without a result gets a synthetic error result ("No result provided"), and a
  result whose call was not sent is dropped, so providers accept the request;
* tool call ids can be rewritten for an API's rules (Anthropic's ``^[a-zA-Z0-9_-]{1,64}$``),
  results following their calls.

Each API module then only translates these messages into its own wire shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pitui.llm.routes import Route
from pitui.session.shapes import as_user_text
from pitui.session.system_prompt import replay_system_messages, system_message_text

NO_RESULT = "No result provided"


@dataclass
class Context:
    """One request's content: ``messages`` hold only ``user``, ``assistant`` (this model's
    thinking kept, another's dropped) and ``toolResult`` messages, in pi's shapes."""

    system: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    """Tool declarations as pi stores them: ``{name, description, parameters}``."""

    @classmethod
    def prompt(cls, system: str, user_text: str) -> Context:
        """A plain request: one system prompt and one user message, no tools."""
        return cls(system, [{"role": "user", "content": user_text}], [])


def declarations(tools: list[Any]) -> list[dict[str, Any]]:
    """The well-formed tool declarations (a name, a description, a parameters schema)."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"]:
            parameters = tool.get("parameters")
            if not isinstance(parameters, dict):
                parameters = {"type": "object", "properties": {}}
            out.append(
                {
                    "name": tool["name"],
                    "description": str(tool.get("description") or ""),
                    "parameters": parameters,
                }
            )
    return out


def _block_for(
    block: dict[str, Any], own: bool, rename: Callable[[str], str] | None
) -> dict[str, Any] | None:
    """One block of a stored reply as this model may receive it (None: left out)."""
    kind = block.get("type")
    if kind == "thinking":
        signed = bool(block.get("redacted") or block.get("thinkingSignature"))
        if not own or (not signed and not str(block.get("thinking") or "").strip()):
            return None
        return block
    if kind == "text":
        if not isinstance(block.get("text"), str):
            return None
        return block if own else {"type": "text", "text": block["text"]}
    if kind != "toolCall":
        return None
    call = dict(block)
    call["id"] = str(call.get("id") or "")
    call["name"] = str(call.get("name") or "")
    if not isinstance(call.get("arguments"), dict):
        call["arguments"] = {}
    if not own:
        call.pop("thoughtSignature", None)
    if rename is not None:
        call["id"] = rename(call["id"])
    return call


def _assistant_for(
    message: dict[str, Any], target: Route, rename: Callable[[str], str] | None
) -> dict[str, Any] | None:
    """A stored reply as this model may receive it (None: nothing of it can be sent)."""
    own = target.owns(message)
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        return None
    kept = [
        sent
        for block in content
        if isinstance(block, dict) and (sent := _block_for(block, own, rename)) is not None
    ]
    if not any(b.get("type") in ("text", "toolCall") for b in kept):
        return None
    return {**message, "content": kept}


def build_context(
    messages: list[dict[str, Any]],
    tools: list[Any],
    target: Route,
    rename_call: Callable[[str], str] | None = None,
) -> Context:
    """The request content for a projected context (``messages`` in pi's stored shapes)."""
    system = system_message_text(replay_system_messages(messages))
    out: list[dict[str, Any]] = []
    open_calls: list[dict[str, Any]] = []  # the calls of the last reply still without a result
    renamed: dict[str, str] = {}

    def close_calls() -> None:
        for call in open_calls:
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": call["id"],
                    "toolName": call["name"],
                    "content": [{"type": "text", "text": NO_RESULT}],
                    "isError": True,
                }
            )
        open_calls.clear()

    def rename(call_id: str) -> str:
        if rename_call is None:
            return call_id
        new = renamed.get(call_id)
        if new is None:
            new = renamed[call_id] = rename_call(call_id)
        return new

    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            call_id = rename(str(message.get("toolCallId")))
            call = next((c for c in open_calls if c["id"] == call_id), None)
            if call is None:
                continue  # its call was not sent (omitted or failed): drop the orphan
            open_calls.remove(call)
            out.append({**message, "toolCallId": call_id})
            continue
        if role == "system":
            continue  # folded into the leading system text
        close_calls()
        if role == "assistant":
            if message.get("stopReason") in ("error", "aborted"):
                continue
            reply = _assistant_for(message, target, rename if rename_call else None)
            if reply is not None:
                out.append(reply)
                open_calls.extend(b for b in reply["content"] if b.get("type") == "toolCall")
        elif role in ("user", "custom"):
            content = message.get("content")
            if isinstance(content, str | list):
                out.append({"role": "user", "content": content})
        else:
            text = as_user_text(message)
            if text is not None:
                out.append({"role": "user", "content": text})
    close_calls()
    return Context(system, out, declarations(tools))
