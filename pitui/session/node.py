"""The small skeleton kept in memory for every entry; the full object is parsed on demand."""

from __future__ import annotations

from typing import Any

UNSET: Any = object()
"""Marks a memoized field that has not been computed yet."""

LEAF_MARKER_TYPE = "pitui.leaf"
"""``customType`` of the custom entry that records where a closed session's leaf was."""


class Node:
    """One entry of the session tree: a parsed skeleton plus where its full line lives."""

    __slots__ = (
        "anchor",
        "children",
        "data",
        "depth",
        "hidden",
        "id",
        "length",
        "line",
        "model_src",
        "offset",
        "parent",
        "parent_id",
        "role",
        "seq",
        "think_src",
        "timestamp",
        "type",
    )

    def __init__(
        self,
        id: str,
        parent_id: str | None,
        type: str,
        role: str | None,
        timestamp: Any,
        line: int,
        offset: int,
        length: int,
        data: dict[str, Any] | None = None,
    ) -> None:
        self.id = id
        self.parent_id = parent_id
        self.type = type
        self.role = role
        self.timestamp = timestamp
        self.line = line
        self.offset = offset
        self.length = length
        self.data = data
        self.parent: Node | None = None
        self.children: list[Node] | None = None
        self.depth = 0
        self.seq = 0
        self.hidden = False
        # Memoized nearest ancestor-or-self of a kind (UNSET until computed, None if none).
        self.anchor: Any = UNSET  # latest compaction
        self.model_src: Any = UNSET  # latest model_change or assistant message
        self.think_src: Any = UNSET  # latest thinking_level_change

    def __repr__(self) -> str:
        return f"Node({self.id!r}, {self.type!r}, parent={self.parent_id!r}, line={self.line})"

    def add_child(self, child: Node) -> None:
        if self.children is None:
            self.children = [child]
        else:
            self.children.append(child)
