"""Linking skeleton nodes into a tree: duplicates, orphans, self-parents and cycles.

Most files are written append-only, so a parent comes before its children: one forward pass
links those. Entries whose parent is missing or comes later take the careful walk, where the
rule for cycles applies: walking up from an entry stops before revisiting one; the last entry
reached is treated as a root and a warning names it. Walks start from the last entry in file
order (the default leaf), so its path is exactly what that rule gives.
"""

from __future__ import annotations

from collections import deque
from itertools import repeat
from operator import attrgetter, lt

from pitui.session.loader import LoadWarning
from pitui.session.node import Node

_parent_id_of = attrgetter("parent_id")
_id_of = attrgetter("id")
_line_of = attrgetter("line")


def _drop_duplicates(nodes: list[Node], warnings: list[LoadWarning]) -> list[Node]:
    """The later line wins (as in pi); earlier entries with the same id leave the tree."""
    seen: dict[str, Node] = {}
    dropped: set[int] = set()
    for node in nodes:
        previous = seen.get(node.id)
        if previous is not None:
            dropped.add(id(previous))
            warnings.append(
                LoadWarning(
                    node.line,
                    f"duplicate entry id {node.id} (also on line {previous.line}); "
                    "the later line wins",
                )
            )
        seen[node.id] = node
    return [n for n in nodes if id(n) not in dropped]


def link_nodes(
    nodes: list[Node], warnings: list[LoadWarning]
) -> tuple[dict[str, Node], list[Node]]:
    """Index ``nodes`` by id, set ``parent``/``children``/``depth``; return (by_id, kept nodes)."""
    by_id = dict(zip(map(_id_of, nodes), nodes, strict=True))
    if len(by_id) != len(nodes):
        nodes = _drop_duplicates(nodes, warnings)
    elif _link_clean(nodes, by_id):
        return by_id, nodes
    get = by_id.get
    deferred: list[Node] = []
    for node in nodes:
        pid = node.parent_id
        if pid is None:
            node.parent = None
            node.depth = 0
            continue
        parent = get(pid)
        if parent is not None and parent.depth >= 0:
            node.parent = parent
            node.depth = parent.depth + 1
        else:
            node.depth = -1
            deferred.append(node)
    if deferred:
        _link_careful(deferred, by_id, warnings)
    return by_id, nodes


def build_children(nodes: list[Node]) -> None:
    """Fill ``children`` (file order) from the parent links."""
    for node in nodes:
        node.children = None
    for node in nodes:
        parent = node.parent
        if parent is not None:
            children = parent.children
            if children is None:
                parent.children = [node]
            else:
                children.append(node)


def _link_clean(nodes: list[Node], by_id: dict[str, Node]) -> bool:
    """The common case, all in C: every parent exists and comes earlier in the file.

    Then there can be no cycle and no orphan; depths are left to be computed when needed.
    Returns False (changing nothing) when the careful path is required.
    """
    parent_ids = list(map(_parent_id_of, nodes))
    parents = list(map(by_id.get, parent_ids))
    if parents.count(None) != parent_ids.count(None):
        return False  # a parent id that does not exist
    parent_lines = map(getattr, parents, repeat("line"), repeat(-1))  # None → -1
    if not all(map(lt, parent_lines, map(_line_of, nodes))):
        return False  # a parent after its child (possible cycle)
    deque(map(setattr, nodes, repeat("parent"), parents), maxlen=0)
    return True


def _link_careful(
    deferred: list[Node], by_id: dict[str, Node], warnings: list[LoadWarning]
) -> None:
    on_walk: set[int] = set()
    for start in reversed(deferred):
        if start.depth >= 0:
            continue
        stack: list[Node] = []
        on_walk.clear()
        cur: Node | None = start
        base_depth = -1
        while cur is not None:
            on_walk.add(id(cur))
            stack.append(cur)
            pid = cur.parent_id
            if pid is None:
                cur.parent = None
                break
            parent = by_id.get(pid)
            if parent is None:
                cur.parent = None
                warnings.append(
                    LoadWarning(
                        cur.line, f"entry {cur.id} has a missing parent {pid}; shown as a root"
                    )
                )
                break
            if id(parent) in on_walk:
                cur.parent = None
                if parent is cur:
                    msg = f"entry {cur.id} is its own parent; treated as a root"
                else:
                    msg = f"parent cycle through entry {pid}; entry {cur.id} is treated as a root"
                warnings.append(LoadWarning(cur.line, msg))
                break
            cur.parent = parent
            if parent.depth >= 0:
                base_depth = parent.depth
                break
            cur = parent
        depth = base_depth
        for node in reversed(stack):
            depth += 1
            node.depth = depth
