"""Small reaches into Textual's widgets where their public API has no way to do what pitui needs.

* :class:`AnchoredFromTheFirstLayout`: an anchored view (the chat) shows its end in its first
  frame.
* :func:`underline_active_tab`: a tab bar's underline put under its active tab again.
* :func:`title_click_keeps_focus`: a click on a ``Collapsible``'s title leaves the focus.
* :data:`FooterKey` and :func:`set_footer_key_enabled`: the footer's key widget, updated in
  place (:class:`pitui.ui.widgets.footer.KeyFooter`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Region
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.widget import Widget
    from textual.widgets import Collapsible, Tabs

    _Base = Widget
else:  # a mixin: Textual follows a class's first widget base for its CSS, so it is not one
    _Base = object

__all__ = [
    "AnchoredFromTheFirstLayout",
    "FooterKey",
    "set_footer_key_enabled",
    "title_click_keeps_focus",
    "underline_active_tab",
]


class AnchoredFromTheFirstLayout(_Base):
    """Mixed into an anchored scrollable widget (before its widget class): its first frame
    shows its end.

    Textual's first layout of an anchored view scrolls it by the height it had before (none,
    so by the whole content, from ``Widget._container_size``): the first frame showed an empty
    chat, and the end came a frame (~15-20 ms) later. The height it is laid out in is the
    region ``Widget._get_scrollable_region`` is given, taken as that height when none is known.
    """

    def _get_scrollable_region(self, region: Region) -> Region:
        if not self._container_size:
            self._container_size = region.size
        return super()._get_scrollable_region(region)


def underline_active_tab(tabs: Tabs) -> None:
    """Put ``tabs``' underline under its active tab now (``Tabs._highlight_active``, without
    the animation). Textual places it when the bar is resized, which can come before the tabs
    are laid out (a hidden pane shown again had no underline)."""
    tabs._highlight_active(animate=False)


def title_click_keeps_focus(collapsible: Collapsible) -> None:
    """Clicking ``collapsible``'s title toggles it without taking the focus (its title widget,
    ``Collapsible._title``, made in the constructor, is not focused on a click)."""
    collapsible._title.FOCUS_ON_CLICK = False  # type: ignore[misc]  # per widget, not class


def set_footer_key_enabled(key: FooterKey, enabled: bool) -> None:
    """Enable or disable a footer key in place: its look (the ``-disabled`` class) and what a
    click does (``FooterKey._disabled``: a disabled key rings the bell)."""
    key._disabled = not enabled
    key.set_class(not enabled, "-disabled")
