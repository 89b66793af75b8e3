"""Textual's hook for an exception nothing handled, made public for the app's error boundary.

Textual calls ``App._handle_exception`` with any exception a handler, a timer or a worker let
through, and the app exits. :class:`ErrorHookApp` asks :meth:`ErrorHookApp.unhandled_error`
first: the app decides which errors it reports and goes on with (a failed worker, whose work is
over and left nothing half-done), and which end it as Textual would.
"""

from __future__ import annotations

from textual.app import App, ReturnType


class ErrorHookApp(App[ReturnType]):
    """A Textual app that is asked about every unhandled exception before it exits."""

    def unhandled_error(self, error: Exception) -> bool:
        """``error`` reached Textual's unhandled-exception hook: True when it was dealt with
        (the app goes on), False to exit as Textual does (the default)."""
        return False

    def _handle_exception(self, error: Exception) -> None:
        if not self.unhandled_error(error):
            super()._handle_exception(error)
