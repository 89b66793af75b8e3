"""What the session tree shows: pi's filter modes, and the rows with their gutters.

The layout itself (order, nesting, folds, the active path) is :mod:`pitui.session.tree_layout`;
``pitui tree``, /export and the TUI's tree all use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

from pitui.session.errors import SessionChangedError
from pitui.session.line_reader import LineReader
from pitui.session.node import Node
from pitui.session.shapes import BOOKKEEPING_TYPES
from pitui.session.store import SessionStore
from pitui.session.tree_layout import Shown, Tick, TreeLayout

FILTER_MODES = ("default", "no-tools", "user-only", "labeled-only", "all")


class _TextBlock(msgspec.Struct, gc=False):
    type: Any = None
    text: Any = msgspec.UNSET


class _MessageProbe(msgspec.Struct, gc=False):
    content: str | list[_TextBlock] | None = None
    stopReason: Any = None


class _EntryProbe(msgspec.Struct, gc=False):
    message: _MessageProbe | None = None


class _StopProbe(msgspec.Struct, gc=False):
    stopReason: Any = None


class _EntryStopProbe(msgspec.Struct, gc=False):
    message: _StopProbe | None = None


_probe_decoder = msgspec.json.Decoder(_EntryProbe)
_stop_decoder = msgspec.json.Decoder(_EntryStopProbe)
_NORMAL_STOPS = (None, "stop", "toolUse")


def _text_block_has_text(block: _TextBlock) -> bool:
    if block.type != "text" or block.text is msgspec.UNSET:
        return False
    return bool(str(block.text).strip())


def _assistant_hidden(store: SessionStore, node: Node, read: Callable[[Node], bytes]) -> bool:
    """pi's always-on rule: an assistant message without text, stopped normally, is hidden.

    Reads only the fields it needs from the stored line when the entry is not parsed yet, so
    opening the tree does not keep every assistant message parsed in memory. A line without a
    ``"text"`` key nor a string ``content`` has no text (tool calls only): only its stop
    reason is decoded. An entry the file no longer holds (another program cut it short: the
    app offers to reopen it) is shown.
    """
    data = node.data
    if data is None:
        try:
            raw = read(node)
        except SessionChangedError:
            return False
        except OSError:
            raw = None
        if (
            raw is not None
            and b'"text"' not in raw
            and b'"content":"' not in raw
            and b'"content": "' not in raw
        ):
            try:
                stopped = _stop_decoder.decode(raw).message
            except msgspec.DecodeError:
                stopped = None
            else:
                return (stopped.stopReason if stopped is not None else None) in _NORMAL_STOPS
        try:
            probe = _probe_decoder.decode(raw) if raw is not None else None
        except msgspec.DecodeError:
            probe = None
        if probe is not None:
            message = probe.message
            content = message.content if message is not None else None
            has_text = False
            if isinstance(content, str):
                has_text = bool(content.strip())
            elif content:
                for block in content:
                    if block.type == "text" and _text_block_has_text(block):
                        has_text = True
                        break
            stop = message.stopReason if message is not None else None
            return not has_text and stop in _NORMAL_STOPS
    try:
        entry = store.data(node)
    except SessionChangedError:
        return False
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


def make_filter(store: SessionStore, mode: str, reader: LineReader | None = None) -> Shown:
    """``shown(node, leaf)`` for filter ``mode`` (pi's rules). Assistant messages are read
    (through ``reader`` when given) without keeping them parsed; a text-less one is shown only
    while it is the leaf."""
    read = reader.line if reader is not None else store.raw_line

    def base(node: Node, leaf: Node | None) -> bool:
        if node.type == "usage" or node.hidden:
            return False
        return not (
            node.type == "message"
            and node.role == "assistant"
            and node is not leaf
            and _assistant_hidden(store, node, read)
        )

    if mode == "all":
        return base
    if mode == "user-only":
        return lambda n, leaf: n.type == "message" and n.role == "user" and base(n, leaf)
    if mode == "labeled-only":
        return lambda n, leaf: store.label_of(n.id) is not None and base(n, leaf)
    if mode == "no-tools":
        return lambda n, leaf: (
            n.type not in BOOKKEEPING_TYPES and n.role != "toolResult" and base(n, leaf)
        )
    return lambda n, leaf: n.type not in BOOKKEEPING_TYPES and base(n, leaf)


@dataclass
class Row:
    node: Node
    gutter: str
    connector: str
    on_path: bool


def layout_tree(
    store: SessionStore, mode: str = "default", *, tick: Tick | None = None
) -> TreeLayout:
    """The tree's rows for filter ``mode``."""
    with LineReader(store) as reader:
        return TreeLayout.build(store, make_filter(store, mode, reader), tick=tick)


def iter_rows(tree: TreeLayout) -> Iterator[Row]:
    """Every row with its gutter and connector, top to bottom (folds ignored)."""
    for seg in tree.segments():
        connector = tree.connector(seg, 0)
        head_gutter = tree.gutter(seg)
        chain_gutter = tree.row_gutter(seg, 1)
        path = seg.path
        for k, node in enumerate(seg.nodes):
            if k:
                yield Row(node, chain_gutter, "", k < path)
            else:
                yield Row(node, head_gutter, connector, path > 0)


def flatten(store: SessionStore, mode: str = "default") -> list[Row]:
    """Rows with tree gutters: nesting only at branch points (``pitui tree``, /export)."""
    return list(iter_rows(layout_tree(store, mode)))
