"""Errors a CLI command reports as one line on stderr with exit code 2."""

from __future__ import annotations

from pitui.errors import UserError


class CliError(UserError):
    """Bad usage: unknown id, ambiguous prefix, unreadable input."""
