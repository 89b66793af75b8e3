"""Keep a widget's painted lines when only its height changes.

Textual forgets every painted line of a widget whose size or scrollable size changes, and
paints them all again on the next frame. While a reply streams, the reply, its block and the
chat around them grow by a line every few frames, so each frame painted every line on screen
of all three from scratch (and everything after them in Textual's compositor missed its caches
too): most of the CPU a streamed reply cost. A line of these widgets does not depend on their
height (no border or padding below their content changes with it; the chat's own lines are
its background), so :class:`KeptLines` keeps what was painted when the width is unchanged:
only the lines whose content changed (the widget says which, with ``refresh(region)``) and
those that are new are painted again.

This reaches into Textual's per-widget line cache (``Widget._styles_cache``); Textual is pinned
(pyproject.toml) and the tests that compare a streamed reply with the same text shown whole
fail if the cache is kept wrongly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Size

if TYPE_CHECKING:
    from textual.widget import Widget

    _Base = Widget
else:  # a mixin: Textual follows a class's first widget base for its CSS, so it is not one
    _Base = object


class KeptLines(_Base):
    """Mixed into a widget (before its widget class): its painted lines survive a change of
    its height (see the module)."""

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        cache = self._styles_cache
        old = self._size
        if size.width != old.width or not cache._cache:
            return super()._size_updated(size, virtual_size, container_size, layout)
        painted = cache._cache.copy()
        dirty = set(cache._dirty_lines)
        resized = super()._size_updated(size, virtual_size, container_size, layout)
        # Lines at and below the bottom gutter may have moved into or out of it.
        bottom = min(old.height, size.height) - self.styles.gutter.bottom
        cache._cache.update((y, strip) for y, strip in painted.items() if y < bottom)
        cache._dirty_lines.clear()
        cache._dirty_lines.update(dirty)
        cache._dirty_lines.update(range(max(bottom, 0), size.height))
        return resized
