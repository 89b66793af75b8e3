"""Rows of the session tree as pi's selector lays them out (pure: no widgets).

Pre-order, the child holding the active leaf first, nesting only at branch points, filters that
re-attach the children of hidden entries to their nearest shown ancestor, and folding. Used by
the virtualized :class:`pitui.ui.widgets.session_tree.SessionTree`.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from pitui.session.flatten import shown_children
from pitui.session.node import Node
from pitui.session.store import SessionStore

_CALL_LOOKBACK = 64
"""How far up the tree a tool result looks for the assistant message holding its call."""


class TreeRow(msgspec.Struct, gc=False):
    """One entry as a row of the flattened tree.

    Not tracked by the garbage collector (no cycles: a node, strings and ints), so 20k rows
    do not lengthen every full collection while the browser is open.
    """

    node: Node
    gutter: str
    """``│  `` / ``   `` columns of the ancestors' branch points."""
    connector: str
    """``├─ `` or ``└─ `` for a child of a branch point, else empty."""
    on_path: bool
    """On the root → leaf path."""
    parent: int
    """Row index of the nearest shown ancestor, -1 at the top level."""
    kids: int
    """Number of shown children."""
    end: int = 0
    """Row index just after this row's subtree (its descendants are ``rows[i + 1:end]``)."""

    @property
    def indent(self) -> int:
        return len(self.gutter) + len(self.connector)


def build_rows(
    store: SessionStore, shown: Callable[[Node], bool]
) -> tuple[list[TreeRow], set[str]]:
    """Rows in display order and the ids on the active path.

    Like :func:`pitui.session.flatten.flatten`, plus the structure folding needs (shown parent,
    number of shown children, subtree end). Iterative: chains can be 100k entries deep.
    """
    path_ids = {n.id for n in store.path_to()}
    children = shown_children(store, shown, path_ids)
    rows: list[TreeRow] = []
    top = children.get(None, [])
    # (node, gutter, connector, gutter added for its children, parent row)
    stack: list[tuple[Node, str, str, str, int]] = []
    multi_top = len(top) > 1
    for i in range(len(top) - 1, -1, -1):
        last = i == len(top) - 1
        if multi_top:
            stack.append((top[i], "", "└─ " if last else "├─ ", "   " if last else "│  ", -1))
        else:
            stack.append((top[i], "", "", "", -1))
    append = rows.append
    while stack:
        node, gutter, connector, inner, parent = stack.pop()
        index = len(rows)
        kids = children.get(node.id, ())
        append(TreeRow(node, gutter, connector, node.id in path_ids, parent, len(kids)))
        if not kids:
            continue
        child_gutter = gutter + inner
        if len(kids) == 1:
            stack.append((kids[0], child_gutter, "", "", index))
            continue
        for i in range(len(kids) - 1, -1, -1):
            last = i == len(kids) - 1
            stack.append(
                (
                    kids[i],
                    child_gutter,
                    "└─ " if last else "├─ ",
                    "   " if last else "│  ",
                    index,
                )
            )
    sizes = [1] * len(rows)
    for i in range(len(rows) - 1, -1, -1):
        row = rows[i]
        row.end = i + sizes[i]
        if row.parent >= 0:
            sizes[row.parent] += sizes[i]
    return rows, path_ids
