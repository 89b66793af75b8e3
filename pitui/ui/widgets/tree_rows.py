"""How one row of the session tree is drawn (Rich ``Text``, never markup; no widget state).

The layout (:class:`pitui.session.tree_layout.TreeLayout`) says where a row is and what hangs
above it; this module turns that into the characters pi's selector shows: ``› `` for the
cursor, the ``│`` gutters, the connector with its fold marker, ``• `` on the active path, the
``[label] ``, the one-line text with search matches, pitui's ``✎ N files`` when the entry's run
changed files (checkpoints), and the leaf marker; the two markers are kept in view at the
right edge when the row is longer than the pane (the text is cut instead).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.segment import Segment as RichSegment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from pitui.session.node import Node
from pitui.session.tree_layout import Segment, TreeLayout
from pitui.text import strip_escapes


@dataclass
class RowStyles:
    """Rich styles of the tree's component classes (computed once per paint)."""

    base: Style
    cursor: Style
    guides: Style
    fold: Style
    active: Style
    label: Style
    leaf: Style
    user: Style
    assistant: Style
    tool: Style
    meta: Style
    match: Style
    empty: Style

    @classmethod
    def plain(cls) -> RowStyles:
        null = Style.null()
        return cls(*([null] * 13))


def kind_style(node: Node, styles: RowStyles) -> Style:
    if node.type == "message":
        role = node.role
        if role == "user":
            return styles.user
        if role == "assistant":
            return styles.assistant
        if role in ("toolResult", "bashExecution"):
            return styles.tool
    return styles.meta


def label_text(label: str) -> str:
    """``[label] `` as shown before the entry text (untrusted: escapes removed, one line)."""
    return f"[{' '.join(strip_escapes(label).split())}] "


def leaf_marker(hidden_below: int) -> str:
    """The marker on the leaf's row; or, when the leaf is filtered out, on its nearest shown
    ancestor, saying how far below the leaf is."""
    if hidden_below <= 0:
        return "  ← leaf"
    if hidden_below == 1:
        return "  ← leaf is just below (hidden)"
    return f"  ← leaf is {hidden_below} below (hidden)"


def changed_marker(count: int) -> str:
    """The marker of a row whose run changed files (see :mod:`pitui.checkpoint.record`)."""
    return f"  ✎ {count} file{'s' if count != 1 else ''}"


def fold_glyph_column(layout: TreeLayout, seg: Segment, k: int) -> int | None:
    """Column (in row text, before horizontal scrolling) of the row's fold marker, if any."""
    if k or not (seg.folded or seg.foldable):
        return None
    if seg.branch:
        return 2 + len(layout.gutter(seg)) + 1
    return 2 if seg.folded else None


@dataclass
class RowContent:
    """What a row shows besides its place in the tree."""

    text: str
    label: str | None
    tokens: list[str]
    cursor: bool
    marker: str | None
    changed: int = 0
    """Files the entry's run changed (checkpoints): shown as ``✎ N files`` after the text."""


def row_text(
    layout: TreeLayout, seg: Segment, k: int, content: RowContent, styles: RowStyles, skip: int = 0
) -> Text:
    """The row as Rich text, without its leaf marker, the first ``skip`` cells of the
    cursor mark, gutter and connector left out (horizontal scrolling: long gutters are
    never built in full)."""
    node = seg.nodes[k]
    text = Text(style=styles.base, no_wrap=True, end="")
    append = text.append
    lead: list[tuple[str, Style]] = [("› " if content.cursor else "  ", styles.base)]
    gutter = layout.row_gutter(seg, k)
    if gutter:
        lead.append((gutter, styles.guides))
    connector = layout.connector(seg, k)
    folded = k == 0 and seg.folded
    if connector:
        if folded or seg.foldable:
            lead.append((connector[0], styles.guides))
            lead.append(("⊞" if folded else "⊟", styles.fold))
            lead.append((connector[2:], styles.guides))
        else:
            lead.append((connector, styles.guides))
    elif folded:
        lead.append(("⊞ ", styles.fold))
    for piece, style in lead:
        if skip >= len(piece):
            skip -= len(piece)
            continue
        append(piece[skip:], style)
        skip = 0
    if k < seg.path:
        append("• ", styles.active)
    if content.label:
        append(label_text(content.label), styles.label)
    body_start = len(text)
    append(content.text, kind_style(node, styles))
    if content.tokens:
        lowered = text.plain.lower()
        for token in content.tokens:
            start = lowered.find(token, body_start)
            while start >= 0:
                text.stylize(styles.match, start, start + len(token))
                start = lowered.find(token, start + len(token))
    if skip:
        text = text[skip:] if skip < len(text) else Text(style=styles.base, end="")
    if content.cursor:
        text.stylize(styles.cursor)
    return text


def row_markers(content: RowContent, styles: RowStyles) -> list[tuple[str, Style]]:
    """What follows the text and stays in view when the row is cut: ``✎ N files`` (the run
    changed files), then the leaf marker."""
    markers = []
    if content.changed:
        markers.append((changed_marker(content.changed), styles.label))
    if content.marker:
        markers.append((content.marker, styles.leaf))
    return markers


def row_strip(
    text: Text,
    markers: list[tuple[str, Style]],
    width: int,
    styles: RowStyles,
    cursor: bool,
    console: Console,
) -> Strip:
    """``text`` cut to ``width`` cells, with the markers (:func:`row_markers`) always whole at
    the end: the text is cut, never ``✎ 3 files`` or ``← leaf``."""
    pad = styles.base + styles.cursor if cursor else styles.base
    strip = Strip(list(text.render(console)))
    if not markers:
        return strip.crop_extend(0, width, pad)
    tail = "".join(marker for marker, _ in markers)
    room = max(0, width - len(tail))
    if strip.cell_length > room:
        strip = strip.crop(0, room)
    segments = list(strip)
    left = width - strip.cell_length
    for marker, style in markers:
        shown = marker[: max(0, left)]
        left -= len(shown)
        segments.append(RichSegment(shown, style + styles.cursor if cursor else style))
    return Strip(segments).crop_extend(0, width, pad)
