"""What the model sees at a leaf: pi 1.6's ``buildContextEntries`` + ``buildSessionProjection``.

Selection (which entries): the latest compaction on the path, then the kept range from its
``firstKeptEntryId`` up to it (system messages there dropped), then everything after it.
Projection (which messages): each entry's model-visible messages with ``context_edit``s applied
(latest wins, only edits among the selected entries count).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pitui.session.ids import iso_to_ms
from pitui.session.node import Node
from pitui.session.system_prompt import replay_system_messages, system_message_text, tool_names

EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})
BLOCK_ROLES = frozenset({"assistant", "toolResult"})


@dataclass
class Projection:
    """The model-visible context at ``leaf_id`` and where each message came from."""

    leaf_id: str | None
    messages: list[dict[str, Any]] = field(default_factory=list)
    source_entry_ids: list[str] = field(default_factory=list)
    context_entry_ids: list[str] = field(default_factory=list)
    model: dict[str, Any] | None = None
    thinking_level: str = "off"
    compaction_id: str | None = None
    # target entry id -> id of the context_edit applied to it
    edits: dict[str, str] = field(default_factory=dict)
    _system: Any = field(default=None, repr=False)

    @property
    def system_message(self) -> dict[str, Any] | None:
        """The replayed system message (all system messages in the projection folded)."""
        if self._system is None:
            self._system = (replay_system_messages(self.messages),)
        value: dict[str, Any] | None = self._system[0]
        return value

    @property
    def system_prompt_text(self) -> str:
        return system_message_text(self.system_message)

    @property
    def tool_names(self) -> list[str]:
        return tool_names(self.system_message)

    @property
    def tools(self) -> list[dict[str, Any]]:
        message = self.system_message
        tools = message.get("toolsAdded") if message else None
        return list(tools) if isinstance(tools, list) else []

    def extended(self) -> Projection:
        """A copy whose lists can be appended to (for incremental updates)."""
        return Projection(
            self.leaf_id,
            list(self.messages),
            list(self.source_entry_ids),
            list(self.context_entry_ids),
            self.model,
            self.thinking_level,
            self.compaction_id,
            dict(self.edits),
        )


def entry_ms(entry: dict[str, Any]) -> int | float | None:
    ms = iso_to_ms(entry.get("timestamp"))
    if ms is None:
        return None
    return int(ms) if ms == int(ms) else ms


def _repair_message(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("content") is None and "role" in message:
        role = message.get("role")
        if role == "system":
            return {**message, "content": ""}
        if role in ("user", "assistant", "toolResult"):
            return {**message, "content": []}
    return message


def apply_replacement(message: dict[str, Any], replacement: Any) -> dict[str, Any]:
    """Replace all content of an editable message (a string becomes one text block for
    assistant and toolResult messages)."""
    role = message.get("role")
    if role not in EDITABLE_ROLES or not isinstance(replacement, dict):
        return message
    content = replacement.get("content")
    if not isinstance(content, str | list):
        return message
    if role in BLOCK_ROLES and isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return {**message, "content": content}


def entry_messages(entry: dict[str, Any], is_head_compaction: bool) -> list[dict[str, Any]]:
    """The messages one context entry contributes, before edits."""
    entry_type = entry.get("type")
    if entry_type == "message":
        message = entry.get("message")
        return [_repair_message(message)] if isinstance(message, dict) else []
    if entry_type == "custom_message":
        msg: dict[str, Any] = {
            "role": "custom",
            "customType": entry.get("customType"),
            "content": entry.get("content") if entry.get("content") is not None else [],
            "display": entry.get("display"),
        }
        if "details" in entry:
            msg["details"] = entry["details"]
        msg["timestamp"] = entry_ms(entry)
        return [msg]
    if entry_type == "branch_summary":
        summary = entry.get("summary")
        if not summary:
            return []
        return [
            {
                "role": "branchSummary",
                "summary": summary,
                "fromId": entry.get("fromId"),
                "timestamp": entry_ms(entry),
            }
        ]
    if entry_type == "compaction" and is_head_compaction:
        out: list[dict[str, Any]] = []
        checkpoint = entry.get("systemMessage")
        if isinstance(checkpoint, dict):
            out.append(_repair_message(checkpoint))
        out.append(
            {
                "role": "compactionSummary",
                "summary": entry.get("summary"),
                "tokensBefore": entry.get("tokensBefore"),
                "timestamp": entry_ms(entry),
            }
        )
        return out
    return []


def build_projection(
    leaf_id: str | None,
    context: Sequence[Node],
    data_of: Callable[[Node], dict[str, Any]],
    has_head_compaction: bool,
    model: dict[str, Any] | None,
    thinking_level: str,
) -> Projection:
    """Project selected context entries (head compaction first when ``has_head_compaction``)."""
    edits: dict[str, Node] = {}
    for node in context:
        if node.type == "context_edit":
            target = data_of(node).get("targetId")
            if isinstance(target, str):
                edits[target] = node
    proj = Projection(leaf_id, model=model, thinking_level=thinking_level)
    if has_head_compaction and context:
        proj.compaction_id = context[0].id
    for index, node in enumerate(context):
        proj.context_entry_ids.append(node.id)
        if node.type == "context_edit":
            continue
        messages = entry_messages(data_of(node), has_head_compaction and index == 0)
        if not messages:
            continue
        edit = edits.get(node.id)
        if edit is not None:
            proj.edits[node.id] = edit.id
            replacement = data_of(edit).get("replacement")
            if replacement is None:
                continue
            messages = [apply_replacement(m, replacement) for m in messages]
        for message in messages:
            proj.messages.append(message)
            proj.source_entry_ids.append(node.id)
    return proj


def extends_parent_projection(node: Node) -> bool:
    """Is the projection at ``node`` its parent's plus ``entry_messages(node)``? Not for a
    compaction (a new head), a ``context_edit`` (changes earlier messages) or a hidden marker.
    (An entry that some ``context_edit`` targets is the caller's to check.)"""
    return node.type not in ("compaction", "context_edit") and not node.hidden


def model_from_entry(entry: dict[str, Any]) -> dict[str, Any] | None:
    """``{provider, modelId}`` from a model_change entry or an assistant message entry."""
    if entry.get("type") == "model_change":
        return {"provider": entry.get("provider"), "modelId": entry.get("modelId")}
    message = entry.get("message")
    if isinstance(message, dict) and message.get("role") == "assistant":
        return {"provider": message.get("provider"), "modelId": message.get("model")}
    return None
