"""Flattening the session tree for display, as pi's tree selector does.

Pre-order; at each node the child holding the active leaf comes first, the others follow in
tree order (timestamp, ties in file order). Filtered-out entries are skipped and their children
re-attach to the nearest shown ancestor. Iterative throughout: chains can be 100k entries deep.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from pitui.session.ids import iso_to_ms
from pitui.session.node import Node
from pitui.session.shapes import BOOKKEEPING_TYPES
from pitui.session.store import SessionStore

FILTER_MODES = ("default", "no-tools", "user-only", "labeled-only", "all")


class _TextBlock(msgspec.Struct, gc=False):
    type: Any = None
    text: Any = msgspec.UNSET


class _MessageProbe(msgspec.Struct, gc=False):
    content: str | list[_TextBlock] | None = None
    stopReason: Any = None


class _EntryProbe(msgspec.Struct, gc=False):
    message: _MessageProbe | None = None


_probe_decoder = msgspec.json.Decoder(_EntryProbe)


def _text_block_has_text(block: _TextBlock) -> bool:
    if block.type != "text" or block.text is msgspec.UNSET:
        return False
    return bool(str(block.text).strip())


def _assistant_hidden(store: SessionStore, node: Node) -> bool:
    """pi's always-on rule: an assistant message without text, stopped normally, is hidden.

    Reads only the fields it needs from the stored line when the entry is not parsed yet, so
    opening the tree does not keep every assistant message parsed in memory.
    """
    data = node.data
    if data is None:
        try:
            probe = _probe_decoder.decode(store.raw_line(node))
        except (msgspec.DecodeError, OSError):
            probe = None
        if probe is not None:
            message = probe.message
            content = message.content if message is not None else None
            if isinstance(content, str):
                has_text = bool(content.strip())
            elif isinstance(content, list):
                has_text = any(_text_block_has_text(b) for b in content)
            else:
                has_text = False
            stop = message.stopReason if message is not None else None
            return not has_text and stop in (None, "stop", "toolUse")
    entry = store.data(node)
    message_data = entry.get("message") or {}
    content_data = message_data.get("content")
    has_text = (
        isinstance(content_data, list)
        and any(
            isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", "")).strip()
            for b in content_data
        )
    ) or (isinstance(content_data, str) and bool(content_data.strip()))
    return not has_text and message_data.get("stopReason") in (None, "stop", "toolUse")


def make_filter(store: SessionStore, mode: str) -> Callable[[Node], bool]:
    """Is an entry shown in filter ``mode`` (pi's rules); assistant messages are read without
    keeping them parsed."""
    leaf = store.leaf

    def base(node: Node) -> bool:
        if node.type == "usage" or node.hidden:
            return False
        return not (
            node.type == "message"
            and node.role == "assistant"
            and node is not leaf
            and _assistant_hidden(store, node)
        )

    if mode == "all":
        return base
    if mode == "user-only":
        return lambda n: n.type == "message" and n.role == "user" and base(n)
    if mode == "labeled-only":
        return lambda n: store.label_of(n.id) is not None and base(n)
    if mode == "no-tools":
        return lambda n: n.type not in BOOKKEEPING_TYPES and n.role != "toolResult" and base(n)
    return lambda n: n.type not in BOOKKEEPING_TYPES and base(n)


def _timestamp_key(node: Node) -> float:
    ms = iso_to_ms(node.timestamp)
    return ms if ms is not None else math.inf


def shown_children(
    store: SessionStore, shown: Callable[[Node], bool], path_ids: set[str]
) -> dict[str | None, list[Node]]:
    """Shown parent id (None: top level) → shown children in display order.

    Children in tree order, the one holding the active leaf first; hidden entries' children
    re-attach to the nearest shown ancestor. One pass over the entries in file order.
    """
    kids: dict[str, list[Node]] = {}
    roots: list[Node] = []
    for node in store.nodes():
        parent = node.parent
        while parent is not None and parent.hidden:
            parent = parent.parent
        if parent is None:
            roots.append(node)
        else:
            siblings = kids.get(parent.id)
            if siblings is None:
                kids[parent.id] = [node]
            else:
                siblings.append(node)

    def ordered(nodes: list[Node], by_time: bool) -> list[Node]:
        if len(nodes) < 2:
            return nodes
        if by_time:
            nodes = sorted(nodes, key=_timestamp_key)
        first = [n for n in nodes if n.id in path_ids]
        if not first:
            return nodes
        return first + [n for n in nodes if n.id not in path_ids]

    out: dict[str | None, list[Node]] = {}
    stack: list[tuple[Node, str | None]] = [(r, None) for r in reversed(ordered(roots, False))]
    pop, extend = stack.pop, stack.extend
    while stack:
        node, anchor = pop()
        if shown(node):
            siblings = out.get(anchor)
            if siblings is None:
                out[anchor] = [node]
            else:
                siblings.append(node)
            anchor = node.id
        children = kids.get(node.id)
        if children:
            if len(children) == 1:
                stack.append((children[0], anchor))
            else:
                extend((c, anchor) for c in reversed(ordered(children, True)))
    return out


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
    return shown_children(store, shown, {n.id for n in store.path_to()})


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
