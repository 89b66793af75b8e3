"""The small skeleton kept in memory for every entry; the full object is parsed on demand.

A node is a msgspec Struct decoded straight from the entry's JSON line: only ``type``, ``id``,
``parentId``, ``timestamp`` and the message ``role`` are read, the rest of the line is skipped.
Nodes are not tracked by the garbage collector (``gc=False``), which keeps collections cheap
with 200k entries in memory; the store breaks the parent/children references when it goes.
"""

from __future__ import annotations

from collections import deque
from itertools import repeat
from typing import Any

import msgspec

UNSET: Any = object()
"""Marks a memoized field that has not been computed yet."""

LEAF_MARKER_TYPE = "pitui.leaf"
"""``customType`` of the custom entry that records where a closed session's leaf was."""

_JSON_FIELDS = frozenset({"type", "id", "timestamp", "message"})


def _rename(name: str) -> str:
    """JSON keys: the entry's own for skeleton fields; unreachable ones for bookkeeping fields."""
    if name == "parent_id":
        return "parentId"
    return name if name in _JSON_FIELDS else "~pitui~" + name


class MessageSkeleton(msgspec.Struct, gc=False):
    role: Any = None


class Node(msgspec.Struct, gc=False, rename=_rename):
    """One entry of the session tree: skeleton fields plus where its full line lives."""

    type: str
    id: str
    parent_id: str | None = None
    timestamp: Any = None
    message: MessageSkeleton | None = None
    line: int = 0
    offset: int = -1
    length: int = 0
    data: Any = None
    """The full entry object once parsed (``dict``), else None."""
    parent: Any = None
    """The effective parent ``Node`` (None for roots, orphans and cycle breaks)."""
    children: Any = None
    """Child ``Node``s in file order (``list``), or None."""
    depth: int = -1
    hidden: bool = False
    # Memoized nearest ancestor-or-self of a kind (UNSET until computed, None if none).
    anchor: Any = UNSET  # latest compaction
    model_src: Any = UNSET  # latest model_change or assistant message
    think_src: Any = UNSET  # latest thinking_level_change

    @property
    def role(self) -> str | None:
        message = self.message
        if message is None:
            return None
        role = message.role
        return role if isinstance(role, str) else None

    def add_child(self, child: Node) -> None:
        if self.children is None:
            self.children = [child]
        else:
            self.children.append(child)


def make_node(
    entry_id: str,
    parent_id: str | None,
    entry_type: str,
    role: str | None,
    timestamp: Any,
    *,
    line: int = -1,
    offset: int = -1,
    length: int = 0,
    data: dict[str, Any] | None = None,
) -> Node:
    return Node(
        type=entry_type,
        id=entry_id,
        parent_id=parent_id,
        timestamp=timestamp,
        message=MessageSkeleton(role) if role is not None else None,
        line=line,
        offset=offset,
        length=length,
        data=data,
    )


def depth_of(node: Node) -> int:
    """Distance from the root (computed on first use, then remembered along the way)."""
    if node.depth >= 0:
        return node.depth
    stack: list[Node] = []
    cur: Node | None = node
    while cur is not None and cur.depth < 0:
        stack.append(cur)
        cur = cur.parent
    depth = cur.depth if cur is not None else -1
    for n in reversed(stack):
        depth += 1
        n.depth = depth
    return node.depth


def unlink_parents(nodes: list[Node]) -> None:
    """Drop every node's parent link, in one C-level pass (~15 ms for 200k nodes).

    The parent links of a branch form a chain as long as the branch. When the last reference
    into it goes, each node frees its parent from inside its own deallocation: one C stack
    frame per entry, which overflows the stack (a segfault) on a long branch. Nothing else is
    that deep: ``children`` lists are freed with CPython's trashcan, which bounds the nesting.
    """
    deque(map(setattr, nodes, repeat("parent"), repeat(None)), maxlen=0)


def release(nodes: list[Node]) -> None:
    """Drop the parent/children references so the (untracked) nodes can be freed."""
    for node in nodes:
        node.parent = None
        node.children = None
        node.anchor = node.model_src = node.think_src = UNSET
