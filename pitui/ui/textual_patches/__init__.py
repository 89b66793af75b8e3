"""Every use of Textual's private API in pitui, in one package.

pitui reaches into Textual where its public API offers no way to do what pitui needs (most of
them for speed while a reply streams). Nothing outside this package uses a private Textual name:
ruff's SLF001 is on for all of pitui with this package as the one exception, and the rest of
pitui calls the small named functions and classes here. Textual is pinned (``textual==`` in
pyproject.toml); ``tests/ui/test_textual_patches.py`` records the signature and the source of
every Textual function a patch replaces, rewrites or reaches into, and fails, saying what to
re-check, when a new Textual changes one. docs/architecture.md ("Textual patches") says why
each exists, what breaks without it and which could go upstream.

Installed once for the process by :func:`install` (the app calls it; idempotent):

* :mod:`.compositor`: a frame paints only the widgets under what changed
  (``Compositor._get_renders`` replaced).
* :mod:`.keys`: Alt+Enter (ESC CR) in Textual's key table; a lone Esc reported at once (the
  Linux driver's input parser replaced).

Used by subclassing or mixing in, or by calling:

* :mod:`.kept_lines`: painted lines kept when only a widget's height changes
  (``Widget._size_updated`` and its line cache); the chat's scrollbar painted again only when
  its thumb moves (``Widget.vertical_scrollbar``, ``App._start_widget``).
* :mod:`.driver`: the Linux driver whose input thread stops at once (its input loop rewritten).
* :mod:`.app`: Textual's unhandled-exception hook (``App._handle_exception``) asks the app.
* :mod:`.widgets`: an anchored view's first layout (``Widget._get_scrollable_region``), a tab
  bar's underline (``Tabs._highlight_active``), a collapsible's title widget, the footer's key
  widget updated in place (``FooterKey._disabled``).
* :func:`.keys.forward_event`: a key handed to a widget (``Widget._forward_event``).
"""

from __future__ import annotations

from pitui.ui.textual_patches.compositor import paint_only_what_changed, paints_only_what_changed
from pitui.ui.textual_patches.keys import (
    answer_lone_escape,
    enter_keys_taught,
    lone_escape_answered,
    teach_textual_enter_keys,
)


def install() -> None:
    """Install the process-wide patches (idempotent: each is put in place when it is not).
    A lone Esc keeps Textual's wait when ``ESCDELAY`` is set."""
    teach_textual_enter_keys()  # Alt+Enter (ESC CR) is a newline, not Enter
    paint_only_what_changed()  # a frame paints only the widgets under what changed
    answer_lone_escape()  # Esc without Textual's 100 ms wait for a sequence


def installed() -> dict[str, bool]:
    """Each process-wide patch, by name: whether it is in place."""
    return {
        "compositor: paint only what changed": paints_only_what_changed(),
        "keys: Alt+Enter in the key table": enter_keys_taught(),
        "keys: a lone Esc at once": lone_escape_answered(),
    }
