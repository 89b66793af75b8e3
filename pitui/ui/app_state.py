"""The one way screens and widgets reach the session, the agent and the settings.

``PituiApp`` owns the store, the agent and the settings; a screen or widget that needs them
mixes in :class:`UsesApp` and reads ``self.pitui.store`` (never a copy, never ``getattr`` on the
app). Changes reach widgets as messages on the app's ``session_events`` signal (see
:mod:`pitui.ui.bridge`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from pitui.ui.app import PituiApp


class UsesApp:
    """Mixin for a Textual ``Widget`` or ``Screen`` that runs inside :class:`PituiApp`."""

    @property
    def pitui(self) -> PituiApp:
        return cast("PituiApp", self.app)  # type: ignore[attr-defined]
