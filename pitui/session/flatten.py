"""Flattening the session tree for display, as pi's tree selector does.

Pre-order; at each node the child holding the active leaf comes first, the others follow in
tree order (timestamp, ties in file order). Filtered-out entries are skipped and their children
re-attach to the nearest shown ancestor. Iterative throughout: chains can be 100k entries deep.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pitui.session.node import Node
from pitui.session.store import SessionStore

FILTER_MODES = ("default", "no-tools", "user-only", "labeled-only", "all")
BOOKKEEPING = frozenset(
    {"label", "custom", "model_change", "thinking_level_change", "context_edit", "session_info"}
)


def make_filter(store: SessionStore, mode: str) -> Callable[[Node], bool]:
    """A predicate: is this entry shown in filter ``mode``."""
    leaf = store.leaf

    def base(node: Node) -> bool:
        if node.type == "usage" or node.hidden:
            return False
        if node.type == "message" and node.role == "assistant" and node is not leaf:
            message = store.data(node).get("message") or {}
            content = message.get("content")
            has_text = (
                isinstance(content, list)
                and any(
                    isinstance(b, dict)
                    and b.get("type") == "text"
                    and str(b.get("text", "")).strip()
                    for b in content
                )
            ) or (isinstance(content, str) and content.strip())
            stop = message.get("stopReason")
            if not has_text and stop in (None, "stop", "toolUse"):
                return False
        return True

    if mode == "all":
        return base
    if mode == "user-only":
        return lambda n: n.type == "message" and n.role == "user" and base(n)
    if mode == "labeled-only":
        return lambda n: store.label_of(n.id) is not None and base(n)
    if mode == "no-tools":
        return lambda n: n.type not in BOOKKEEPING and n.role != "toolResult" and base(n)
    return lambda n: n.type not in BOOKKEEPING and base(n)


@dataclass
class Row:
    node: Node
    gutter: str
    connector: str
    on_path: bool


def visible_children(
    store: SessionStore, shown: Callable[[Node], bool]
) -> dict[str | None, list[Node]]:
    """Shown parent id (None: top level) → shown children in display order."""
    path_ids = {n.id for n in store.path_to()}
    out: dict[str | None, list[Node]] = {}

    def ordered(kids: list[Node]) -> list[Node]:
        first = [k for k in kids if k.id in path_ids]
        return first + [k for k in kids if k.id not in path_ids]

    stack: list[tuple[Node, str | None]] = [(r, None) for r in reversed(ordered(store.roots()))]
    while stack:
        node, anchor = stack.pop()
        if shown(node):
            out.setdefault(anchor, []).append(node)
            anchor = node.id
        kids = ordered(store.tree_children(node.id))
        stack.extend((k, anchor) for k in reversed(kids))
    return out


def flatten(store: SessionStore, mode: str = "default") -> list[Row]:
    """Rows with tree gutters: nesting only at branch points."""
    children = visible_children(store, make_filter(store, mode))
    path_ids = {n.id for n in store.path_to()}
    rows: list[Row] = []
    top = children.get(None, [])
    # (node, gutter, connector, gutter for its children when they do not branch)
    stack: list[tuple[Node, str, str, str]] = []
    multi_top = len(top) > 1
    for i, node in reversed(list(enumerate(top))):
        last = i == len(top) - 1
        if multi_top:
            stack.append((node, "", "└─ " if last else "├─ ", "   " if last else "│  "))
        else:
            stack.append((node, "", "", ""))
    while stack:
        node, gutter, connector, inner = stack.pop()
        rows.append(Row(node, gutter, connector, node.id in path_ids))
        kids = children.get(node.id, [])
        child_gutter = gutter + inner
        if len(kids) == 1:
            stack.append((kids[0], child_gutter, "", ""))
        else:
            for i, kid in reversed(list(enumerate(kids))):
                last = i == len(kids) - 1
                stack.append(
                    (kid, child_gutter, "└─ " if last else "├─ ", "   " if last else "│  ")
                )
    return rows
