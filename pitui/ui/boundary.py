"""The error boundary: where an error raised by a slash command, a key, a palette entry or a
worker ends up, so that none of them takes the app down.

* A :class:`~pitui.errors.UserError` is shown as its one sentence; the app goes on.
* Anything else is an internal error: logged with its traceback (see
  :mod:`pitui.config.logs`), shown as one sentence naming the log; the app goes on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pitui.errors import UserError

if TYPE_CHECKING:
    from textual.app import App

log = logging.getLogger("pitui.ui")

T = TypeVar("T")


def internal_error_sentence(doing: str, error: BaseException, log_path: Path | None) -> str:
    where = f"the details are in {log_path}" if log_path else "the details are in the log"
    return f"Internal error while {doing} ({type(error).__name__}); {where}."


class ErrorBoundary:
    """Reports errors for ``app`` (a notice for the user, the log for the traceback)."""

    def __init__(self, app: App[Any], log_path: Path | None) -> None:
        self.app = app
        self.log_path = log_path

    def report(self, error: BaseException, doing: str) -> None:
        if isinstance(error, UserError):
            self._say(error.message, "warning")
            return
        log.error("internal error while %s", doing, exc_info=error)
        self._say(internal_error_sentence(doing, error, self.log_path), "error")

    def _say(self, text: str, severity: str) -> None:
        """In the transcript when the app has one (pitui's ``say``), else a toast."""
        say = getattr(self.app, "say", None)
        if callable(say):
            say(text, severity, timeout=10)
        else:
            self.app.notify(text, severity=severity, markup=False, timeout=10)  # type: ignore[arg-type]

    @contextmanager
    def guard(self, doing: str) -> Iterator[None]:
        """``with boundary.guard("doing x"):`` reports what the block raises (not cancellation)."""
        try:
            yield
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            raise
        except Exception as error:
            self.report(error, doing)

    async def run(self, work: Awaitable[T], doing: str) -> T | None:
        """Await ``work``; what it raises is reported and None returned."""
        with self.guard(doing):
            return await work
        return None

    def wrap(self, callback: Callable[[], Any], doing: str) -> Callable[[], Awaitable[None]]:
        """A palette callback that reports instead of raising (sync or async ``callback``)."""

        async def guarded() -> None:
            with self.guard(doing):
                result = callback()
                if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
                    await result

        return guarded
