"""Waiting for a Textual screen in tests: pushed is not yet shown."""

from __future__ import annotations

from typing import Any


def screen_up(app: Any, kind: type) -> bool:
    """``app``'s current screen is a ``kind`` and it is mounted (its children are composed).

    ``app.screen`` changes the moment a screen is pushed, before it is composed: a check that
    queries the screen's widgets must wait for this, not for the type alone (on a loaded
    machine the gap is long enough to see).
    """
    screen = app.screen
    return isinstance(screen, kind) and screen.is_mounted
