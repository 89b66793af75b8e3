"""Linking skeleton nodes into a tree: duplicates, orphans, self-parents and cycles.

The rule for cycles: walking up from an entry stops before revisiting one; the last entry
reached is treated as a root and a warning names it. Walks start from the last entry in file
order (the default leaf), so its path is exactly what that rule gives.
"""

from __future__ import annotations

from pitui.session.loader import LoadWarning
from pitui.session.node import Node


def link_nodes(
    nodes: list[Node], warnings: list[LoadWarning]
) -> tuple[dict[str, Node], list[Node]]:
    """Index ``nodes`` by id, set ``parent``/``children``/``depth``; return (by_id, kept nodes).

    Duplicate ids: the later line wins (as in pi); the earlier entry leaves the tree.
    """
    by_id: dict[str, Node] = {}
    duplicates: list[Node] = []
    for node in nodes:
        previous = by_id.get(node.id)
        if previous is not None:
            duplicates.append(previous)
            warnings.append(
                LoadWarning(
                    node.line,
                    f"duplicate entry id {node.id} (also on line {previous.line}); "
                    "the later line wins",
                )
            )
        by_id[node.id] = node
    if duplicates:
        dropped = {id(n) for n in duplicates}
        nodes = [n for n in nodes if id(n) not in dropped]

    # state: 0 = unvisited, 1 = on the current walk, 2 = resolved (depth known)
    state: dict[int, int] = {}
    for start in reversed(nodes):
        if state.get(id(start)):
            continue
        stack: list[Node] = []
        cur: Node | None = start
        base_depth = -1
        while cur is not None:
            state[id(cur)] = 1
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
            pstate = state.get(id(parent), 0)
            if pstate == 1:
                cur.parent = None
                if parent is cur:
                    msg = f"entry {cur.id} is its own parent; treated as a root"
                else:
                    msg = f"parent cycle through entry {pid}; entry {cur.id} is treated as a root"
                warnings.append(LoadWarning(cur.line, msg))
                break
            cur.parent = parent
            if pstate == 2:
                base_depth = parent.depth
                break
            cur = parent
        depth = base_depth
        for node in reversed(stack):
            depth += 1
            node.depth = depth
            state[id(node)] = 2

    for node in nodes:
        node.children = None
    for node in nodes:
        if node.parent is not None:
            node.parent.add_child(node)
    return by_id, nodes
