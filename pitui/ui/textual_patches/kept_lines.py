"""Painted lines kept while what they show is unchanged: a widget that only grows in height
(:class:`KeptLines`), a scrollbar whose thumb has not moved (:class:`KeptScrollBar`, made by a
view that mixes in :class:`KeptVerticalScrollBar`).

Textual forgets every painted line of a widget whose size or scrollable size changes, and
paints them all again on the next frame. While a reply streams, the reply, its block and the
chat around them grow by a line every few frames, so each frame painted every line on screen
of all three from scratch (and everything after them in Textual's compositor missed its caches
too): most of the CPU a streamed reply cost. A line of these widgets does not depend on their
height (no border or padding below their content changes with it; the chat's own lines are
its background), so :class:`KeptLines` keeps what was painted when the width is unchanged:
only the lines whose content changed (the widget says which, with ``refresh(region)``) and
those that are new are painted again.

This reaches into Textual's per-widget line cache (``Widget._styles_cache``, its ``_cache`` of
painted lines and its ``_dirty_lines``) from ``Widget._size_updated``; Textual is pinned
(pyproject.toml), tests/ui/test_textual_patches.py fails when those change, and the tests that
compare a streamed reply with the same text shown whole fail if the cache is kept wrongly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from rich.color import Color
from rich.console import RenderableType
from rich.style import Style
from textual.geometry import Region, Size
from textual.scrollbar import ScrollBar, ScrollBarRender

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


class KeptScrollBar(ScrollBar):
    """A scrollbar painted again only when what it shows changes.

    Textual repaints a scrollbar whenever the scroll position or the scrollable height moves,
    which while a reply streams is every frame, for every line of the bar; its thumb moves by
    an eighth of a cell only now and then. The bar's drawing (Textual's own
    ``ScrollBarRender.render_bar``) is compared with the drawing of its last paint: unchanged,
    the painted lines stay."""

    _painted: tuple[object, ...] | None = None  # the drawing of the last paint

    def render(self) -> RenderableType:
        renderable = super().render()
        self._painted = self._drawing(renderable)
        return renderable

    def _drawing(self, renderable: RenderableType) -> tuple[object, ...] | None:
        if not isinstance(renderable, ScrollBarRender):
            return None
        style = renderable.style if isinstance(renderable.style, Style) else Style()
        width, height = self.size
        bar = ScrollBarRender.render_bar(
            size=height if self.vertical else width,
            virtual_size=renderable.virtual_size,
            window_size=renderable.window_size,
            position=renderable.position,
            thickness=width if self.vertical else height,
            vertical=self.vertical,
            back_color=style.bgcolor or Color.parse("#555555"),  # Textual's defaults
            bar_color=style.color or Color.parse("bright_magenta"),
        )
        return (width, height, *((segment.text, segment.style) for segment in bar.segments))

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        plain = repaint and not (regions or layout or recompose)
        if (
            plain
            and self._painted is not None
            and self.is_mounted
            and self.parent is not None
            and self._drawing(super().render()) == self._painted
        ):
            return self  # what would be painted is what was
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)


class KeptVerticalScrollBar(_Base):
    """Mixed into a scrollable widget (before its widget class): its vertical scrollbar is a
    :class:`KeptScrollBar`, made on first use as Textual makes its own (``Widget.
    vertical_scrollbar``, started with ``App._start_widget``)."""

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        if self._vertical_scrollbar is None:
            bar = KeptScrollBar(
                vertical=True, name="vertical", thickness=self.scrollbar_size_vertical
            )
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar
