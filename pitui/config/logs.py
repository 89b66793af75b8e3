"""The log file: internal errors with their tracebacks, where the user can find them.

A full-screen app has no stderr to write to (Textual swallows it while the app runs), so the
TUI sends Python logging to ``<state dir>/pitui.log``: rotated at a bounded size, readable
only by its owner (it may quote session content).
"""

from __future__ import annotations

import io
import logging
import os
from logging.handlers import RotatingFileHandler
from pathlib import Path

MAX_BYTES = 1_000_000
BACKUPS = 2
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class PrivateRotatingFileHandler(RotatingFileHandler):
    """A rotating log whose files (the current one and each new one) are created 0600."""

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.chmod(self.baseFilename, 0o600)  # an older file created with another mode
        return open(fd, "a", encoding=self.encoding or "utf-8", errors=self.errors)


_handler: logging.Handler | None = None


def configure_logging(path: Path) -> Path:
    """Send warnings and errors of every logger (and pitui's info) to ``path``.

    Called again (a new app, a test), it replaces the handler it added before.
    """
    global _handler
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
        _handler.close()
    handler = PrivateRotatingFileHandler(
        path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True
    )
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(logging.INFO)
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)
    logging.getLogger("pitui").setLevel(logging.INFO)
    _handler = handler
    return path
