"""Only the widgets under the changed part of the screen are painted for a frame.

For a frame that updates part of the screen, Textual's compositor asks every widget whose clip
(the area of its container) overlaps the changed part for its lines, and then uses only the
lines inside the changed part. The clip of a top-level widget is the whole screen, so each
frame painted the status line, the editor, the chat's background and the screen again, also
when only a few lines of a streamed reply had changed (about a fifth of what a frame cost
while a reply streamed). Here a widget is asked only when what it shows of itself (its region
within its clip) overlaps the changed part: a widget outside it contributes no line that is
written to the terminal, so the frames are the same.

:func:`paint_only_what_changed` replaces ``Compositor._get_renders`` (Textual is pinned in
pyproject.toml); the tests compare what reaches the terminal while a reply streams with a full
repaint of the same screen.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual._compositor import Compositor
from textual.geometry import Region
from textual.strip import Strip

_ORIGINAL = Compositor._get_renders


def _visible_renders(
    self: Compositor, crop: Region | None = None
) -> Iterable[tuple[Region, Region, list[Strip]]]:
    """(region, clip, lines) of each widget, front to back: the lines of the part of it that is
    visible, for the widgets whose visible part overlaps ``crop`` (all without a crop)."""
    _rich_traceback_guard = True  # Rich shows no traceback above a render error
    for widget, (region, clip) in self.visible_widgets.items():
        shown = region.intersection(clip)
        if not shown or (crop and not crop.overlaps(shown)):
            continue
        yield region, clip, widget.render_lines(shown.translate((-region.x, -region.y)))


def paint_only_what_changed() -> None:
    """Install :func:`_visible_renders` (idempotent)."""
    compositor: Any = Compositor
    compositor._get_renders = _visible_renders


def paints_only_what_changed() -> bool:
    """:func:`paint_only_what_changed` is in place."""
    return Compositor._get_renders is _visible_renders


def paint_everything_under_the_clip() -> None:
    """Textual's own behaviour back (the tests compare both)."""
    compositor: Any = Compositor
    compositor._get_renders = _ORIGINAL
