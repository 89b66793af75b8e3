"""The log file: internal errors with their tracebacks, where the user can find them.

A full-screen app has no stderr to write to (Textual swallows it while the app runs), so the
TUI sends Python logging to ``<state dir>/pitui.log``: rotated at a bounded size, readable
only by its owner (it may quote session content).
"""

from __future__ import annotations

import io
import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path

from pitui.private import ensure_private_folder, open_private_append

MAX_BYTES = 1_000_000
BACKUPS = 2
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class PrivateRotatingFileHandler(RotatingFileHandler):
    """A rotating log whose files (the current one and each new one) are created 0600."""

    def _open(self) -> io.TextIOWrapper:
        fd = open_private_append(Path(self.baseFilename))  # an older file is made 0600 too
        return open(fd, "a", encoding=self.encoding or "utf-8", errors=self.errors)


_handler: logging.Handler | None = None


def configure_logging(path: Path) -> Path:
    """Send warnings and errors of every logger (and pitui's info) to ``path``.

    Called again (a new app, a test), it replaces the handler it added before.
    """
    global _handler
    ensure_private_folder(path.parent)
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
