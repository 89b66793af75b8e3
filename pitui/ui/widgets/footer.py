"""``KeyFooter``: Textual's ``Footer`` that rebuilds its keys only when they change.

Textual's footer removes and mounts all of its key widgets again whenever the screen's
bindings are refreshed (each focus change, each time a kept screen is shown again), although
what it shows is usually the same; on the tree browser that was a noticeable part of opening it.
This one compares what it would show with what it shows and rebuilds only on a difference.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """A ``Footer`` whose keys are rebuilt only when the bindings it shows change."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple[object, ...] | None = None

    def _wanted(self) -> tuple[object, ...]:
        """What :meth:`compose` would show (the shown bindings, their state, the palette key)."""
        app = self.app
        shown = tuple(
            (
                binding.key,
                app.get_key_display(binding),
                binding.description,
                binding.action,
                binding.group,
                enabled,
                tooltip,
            )
            for (_node, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        return (shown, self.show_command_palette, app.ENABLE_COMMAND_PALETTE, self.compact)

    def compose(self) -> ComposeResult:
        self._shown = self._wanted() if self._bindings_ready else None
        yield from super().compose()

    def bindings_changed(self, screen: Screen) -> None:
        if (
            self._shown is not None
            and self.is_attached
            and screen is self.screen
            and self._wanted() == self._shown
        ):
            return  # the same keys: nothing to rebuild
        super().bindings_changed(screen)
