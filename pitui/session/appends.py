"""The append methods of a session store, one per entry type, in pi 1.6's key order."""

from __future__ import annotations

import re
from typing import Any

from pitui.session.errors import SessionError
from pitui.session.ids import new_entry_id, now_iso, now_ms
from pitui.session.node import Node, depth_of
from pitui.session.projection import Projection
from pitui.session.system_prompt import replay_system_messages

EDIT_TARGET_ROLES = frozenset({"user", "assistant", "toolResult"})
_NEWLINES = re.compile(r"[\r\n]+")


class EntryAppends:
    """Builds entries and hands them to ``_append`` (implemented by the store)."""

    _by_id: dict[str, Node]
    leaf: Node | None

    @property
    def leaf_id(self) -> str | None:
        return self.leaf.id if self.leaf is not None else None

    def _append(self, entry: dict[str, Any]) -> str:
        raise NotImplementedError

    def node(self, entry_id: str) -> Node:
        raise NotImplementedError

    def project(self, leaf_id: Any = ...) -> Projection:
        raise NotImplementedError

    @staticmethod
    def is_on_path(node: Node, leaf: Node | None) -> bool:
        """True when ``node`` is ``leaf`` or one of its ancestors."""
        if leaf is None:
            return False
        target = depth_of(node)
        cur: Node | None = leaf
        depth = depth_of(leaf)
        while cur is not None and depth > target:
            cur = cur.parent
            depth -= 1
        return cur is node

    def _base(self, entry_type: str) -> dict[str, Any]:
        return {
            "type": entry_type,
            "id": new_entry_id(self._by_id),
            "parentId": self.leaf_id,
            "timestamp": now_iso(),
        }

    def append_message(self, message: dict[str, Any]) -> str:
        """Append a message entry (user, assistant, toolResult, bashExecution, custom, system)."""
        entry = self._base("message")
        entry["message"] = message
        return self._append(entry)

    def append_thinking_level_change(self, level: str) -> str:
        entry = self._base("thinking_level_change")
        entry["thinkingLevel"] = level
        return self._append(entry)

    def append_model_change(self, provider: str, model_id: str) -> str:
        entry = self._base("model_change")
        entry["provider"] = provider
        entry["modelId"] = model_id
        return self._append(entry)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any = None,
        from_hook: bool = False,
        usage: dict[str, Any] | None = None,
    ) -> str:
        """Append a compaction; ``first_kept_entry_id=None`` keeps nothing (retain-none).

        The replayed system state at this point is stored as ``systemMessage`` (checkpoint).
        """
        entry = self._base("compaction")
        entry["summary"] = summary
        entry["firstKeptEntryId"] = (
            first_kept_entry_id if first_kept_entry_id is not None else entry["id"]
        )
        entry["tokensBefore"] = tokens_before
        if details is not None:
            entry["details"] = details
        if usage is not None:
            entry["usage"] = usage
        entry["fromHook"] = from_hook
        checkpoint = replay_system_messages(self.project().messages)
        if checkpoint is not None:
            checkpoint["timestamp"] = now_ms()
            entry["systemMessage"] = checkpoint
        return self._append(entry)

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        entry = self._base("custom")
        entry["customType"] = custom_type
        if data is not None:
            entry["data"] = data
        return self._append(entry)

    def append_custom_message(
        self, custom_type: str, content: Any, display: bool = True, details: Any = None
    ) -> str:
        entry = self._base("custom_message")
        entry["customType"] = custom_type
        entry["content"] = content
        entry["display"] = display
        if details is not None:
            entry["details"] = details
        return self._append(entry)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with ``None``/``""`` clear) the label of ``target_id``; moves the leaf."""
        self.node(target_id)
        entry = self._base("label")
        entry["targetId"] = target_id
        if label is not None:
            entry["label"] = label
        return self._append(entry)

    def append_session_info(self, name: str) -> str:
        """Rename the session; an empty name clears it."""
        entry = self._base("session_info")
        entry["name"] = _NEWLINES.sub(" ", name).strip()
        return self._append(entry)

    def append_context_edit(self, target_id: str, replacement: dict[str, Any] | None) -> str:
        """Omit (``None``) or replace the content of a message on the active branch."""
        if replacement is not None and (
            not isinstance(replacement, dict)
            or not isinstance(replacement.get("content"), str | list)
        ):
            raise SessionError(
                "A context edit replacement must be null or {content: string|array}."
            )
        target = self.node(target_id)
        if not self.is_on_path(target, self.leaf):
            raise SessionError(f"Entry {target_id} is not on the active branch.")
        allowed = target.type == "custom_message" or (
            target.type == "message" and target.role in EDIT_TARGET_ROLES
        )
        if not allowed:
            raise SessionError(f"Entry {target_id} does not contribute editable model content.")
        if (
            replacement is not None
            and target.role in ("assistant", "toolResult")
            and isinstance(replacement["content"], str)
        ):
            replacement = {
                **replacement,
                "content": [{"type": "text", "text": replacement["content"]}],
            }
        entry = self._base("context_edit")
        entry["targetId"] = target_id
        entry["replacement"] = replacement
        return self._append(entry)

    def append_usage(
        self, kind: str, provider: str, model: str, usage: dict[str, Any], note: str | None = None
    ) -> str:
        entry = self._base("usage")
        entry.update(kind=kind, provider=provider, model=model, usage=usage)
        if note:
            entry["note"] = note
        return self._append(entry)

    def append_entry(self, entry: dict[str, Any]) -> str:
        """Append a pre-built entry (any type, unknown ones included) as a child of the leaf."""
        full = self._base(str(entry.get("type")))
        for key, value in entry.items():
            if key not in ("id", "parentId", "timestamp"):
                full[key] = value
        return self._append(full)

    def branch_with_summary(
        self,
        parent_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool = False,
        usage: dict[str, Any] | None = None,
    ) -> str:
        """Attach a branch summary under ``parent_id`` (None: a new root).

        ``fromId`` is the leaf before the call (the abandoned path), ``"root"`` when there was none.
        """
        if parent_id is not None:
            self.node(parent_id)
        from_id = self.leaf_id if self.leaf_id is not None else "root"
        entry: dict[str, Any] = {
            "type": "branch_summary",
            "id": new_entry_id(self._by_id),
            "parentId": parent_id,
            "timestamp": now_iso(),
            "fromId": from_id,
            "summary": summary,
        }
        if details is not None:
            entry["details"] = details
        if usage is not None:
            entry["usage"] = usage
        entry["fromHook"] = from_hook
        return self._append(entry)
